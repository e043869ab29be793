/*
 * alibaba.c: the Alibaba Cloud ECS driver's ops table (its figures and capabilities are
 * explained in docs/internals/alibaba.md, "The ops table"), and opening and closing a
 * session. Open resolves the endpoints and credentials, sets up the launch bucket and
 * sends nothing; close frees all of it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/alibaba/alibaba.h"
#include "providers/alibaba/ecs.h"

void ali_driver_close(struct gc_provider *p)
{
	struct ali_driver *d = ali_driver(p);

	free(d->ecs_url);
	free(d->ecs_host);
	free(d->vpc_url);
	free(d->vpc_host);
	if (d->launch_bucket_set)
		gc_ratelimit_release(&d->launch_bucket);
	free(d->vpc_id);
	for (size_t i = 0; i < d->n_vswitches; i++) {
		free(d->vswitches[i].want);
		free(d->vswitches[i].zone);
		free(d->vswitches[i].id);
	}
	free(d->vswitches);
	gc_params_release(&d->aliases);
	free(d->types);
	gc_price_cache_release(&d->prices);
}

/* The endpoints: the spec's for every product, else the public ones (WIRE.md 2.2; VPC's
 * from the VPC API reference's endpoint table). */
static int endpoints(struct gc_provider *p, struct ali_driver *d, struct gc_error *err)
{
	const char *endpoint = d->base.endpoint;

	if (endpoint) {
		size_t n = strlen(endpoint);

		while (n > 0 && endpoint[n - 1] == '/')
			n--;
		d->ecs_url = gc_xstrndup(endpoint, n);
		d->vpc_url = gc_xstrndup(endpoint, n);
	} else {
		d->ecs_url = gc_xasprintf("https://ecs.%s.aliyuncs.com", p->region);
		d->vpc_url = gc_xasprintf("https://vpc.%s.aliyuncs.com", p->region);
	}
	d->ecs_host = ali_url_host(d->ecs_url);
	d->vpc_host = ali_url_host(d->vpc_url);
	if (!d->ecs_host || !d->vpc_host || strpbrk(d->ecs_url, " \t\r\n?#"))
		return gc_error_set(
			err, GC_EINVALID,
			"endpoint '%s' (the spec's provider.endpoint) is not an http:// "
			"or https:// URL",
			endpoint ? endpoint : d->ecs_url);
	return 0;
}

int ali_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		    struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);

	d->base.endpoint = cfg->endpoint && *cfg->endpoint ? gc_xstrdup(cfg->endpoint) : NULL;
	if (!gc_creds_region_ok(p->region))
		return gc_error_set(err, GC_EINVALID, "'%s' is not an Alibaba Cloud region name",
				    p->region);
	if (endpoints(p, d, err) != 0 || gc_driver_resolve_creds(p, err) != 0)
		return -1;
	if (d->base.rate_limit) {
		if (gc_ratelimit_init(&d->launch_bucket, ALI_LAUNCH_PER_MINUTE,
				      ALI_LAUNCH_PER_MINUTE, 60000, p->clock, err) != 0)
			return -1;
		d->launch_bucket_set = true;
	}
	gc_log_debug(p->log, "alibaba: %s via '%s', credentials from %s", p->region, d->ecs_host,
		     d->creds.source ? d->creds.source : "?");
	return 0;
}

const struct gc_provider_ops gc_provider_alibaba = {
	.name = "alibaba",
	.facts = &ali_facts,
	.caps = GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE | GC_CAP_CLOUD_TTL | GC_CAP_TTL_MOVES |
		GC_CAP_CONSOLE_OUTPUT | GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE,
	.max_create_batch = ALI_CREATE_BATCH,
	.max_terminate_batch = ALI_TERMINATE_BATCH,
	.client_token_max = ALI_CLIENT_TOKEN_MAX,
	.min_ttl_s = ALI_RELEASE_MIN_S,
	.max_disk_gb = ALI_MAX_DISK_GB,
	.driver = &ali_hooks,
	.discover = ali_discover,
	.create = ali_create,
	.terminate = ali_terminate,
	.set_expiry = ali_set_expiry,
	.set_tag = ali_set_tag,
	.list_resources = ali_list_resources,
	.import_keypair = ali_import_keypair,
	.delete_keypair = ali_delete_keypair,
	.create_secgroup = ali_create_secgroup,
	.delete_secgroup = ali_delete_secgroup,
	.create_placement = ali_create_placement, /* deployment sets (fabric.md) */
	.delete_placement = ali_delete_placement,
	.resolve_image = ali_resolve_image,
	.instance_type = ali_instance_type,
	.price = ali_price,
	.reserved_price = ali_reserved_price, /* subscriptions (gpus.md) */
	.zones = ali_zones,
	.network = ali_network,
	.type_zones = ali_type_zones,
	.regions = ali_regions,
	.console_output = ali_console_output,
	/* NULL: ECS has no "what is my address" call; core asks GPUCLUSTER_CHECKIP_URL */
	.caller_address = NULL,
	.quota = ali_quota,
	.gpu_types = ali_gpu_types,
};
