/*
 * aws.c: the AWS EC2 driver's ops table (its figures are explained in
 * docs/internals/providers.md, "The ops table"), and opening and closing a session. Open
 * resolves region, endpoints and credentials, sets up EC2's resource buckets and sends
 * nothing; close frees all of it.
 */
#include <stdlib.h>

#include "core/alloc.h"
#include "providers/aws/aws.h"
#include "providers/aws/ec2.h"

void aws_driver_close(struct gc_provider *p)
{
	struct aws_driver *d = aws_driver(p);

	aws_config_release(&d->cfg);
	free(d->ec2_host);
	free(d->pricing_host);
	free(d->quotas_host);
	if (d->resource_buckets) {
		gc_ratelimit_release(&d->run_resource);
		gc_ratelimit_release(&d->terminate_resource);
	}
	for (size_t i = 0; i < d->n_images; i++)
		aws_image_release(&d->images[i]);
	free(d->images);
	gc_params_release(&d->aliases);
	free(d->types);
	gc_price_cache_release(&d->prices);
}

int aws_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		    struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	struct aws_creds_input in;

	aws_config_init(&d->cfg);
	d->base.endpoint = cfg->endpoint ? gc_xstrdup(cfg->endpoint) : NULL;
	aws_creds_input(p, &in);
	if (aws_config_resolve(&d->cfg, &in, err) != 0 || gc_driver_resolve_creds(p, err) != 0)
		return -1;
	d->ec2_host = gc_driver_url_host(d->cfg.ec2_endpoint);
	d->pricing_host =
		d->cfg.pricing_endpoint ? gc_driver_url_host(d->cfg.pricing_endpoint) : NULL;
	if (!d->ec2_host || !d->pricing_host)
		return gc_error_set(err, GC_EINVALID, "aws: endpoint '%s' is not a URL",
				    !d->ec2_host ? d->cfg.ec2_endpoint : d->cfg.pricing_endpoint);
	d->quotas_host = gc_driver_url_host(d->cfg.quotas_endpoint);
	if (!d->quotas_host)
		return gc_error_set(err, GC_EINVALID, "aws: endpoint '%s' is not a URL",
				    d->cfg.quotas_endpoint);
	/* the devguide's resource buckets, counted in instances */
	if (d->base.rate_limit) {
		if (gc_ratelimit_init(&d->run_resource, 1000, 2, 1000, p->clock, err) != 0)
			return -1;
		if (gc_ratelimit_init(&d->terminate_resource, 1000, 20, 1000, p->clock, err) != 0) {
			gc_ratelimit_release(&d->run_resource);
			return -1;
		}
		d->resource_buckets = true;
	}
	gc_log_debug(p->log, "aws: %s via '%s', credentials from %s", d->cfg.region, d->ec2_host,
		     d->creds.source ? d->creds.source : "?");
	return 0;
}

const struct gc_provider_ops gc_provider_aws = {
	.name = "aws",
	.facts = &aws_facts,
	.caps = GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE | GC_CAP_CLOUD_TTL | GC_CAP_CONSOLE_OUTPUT |
		GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE | GC_CAP_ED25519_KEYPAIR,
	.max_create_batch = AWS_CREATE_BATCH,
	.max_terminate_batch = AWS_TERMINATE_BATCH,
	.client_token_max = AWS_CLIENT_TOKEN_MAX,
	.driver = &aws_hooks,
	.discover = aws_discover,
	.create = aws_create,
	.terminate = aws_terminate,
	.set_expiry = aws_set_expiry,
	.set_tag = aws_set_tag,
	.list_resources = aws_list_resources,
	.import_keypair = aws_import_keypair,
	.delete_keypair = aws_delete_keypair,
	.create_secgroup = aws_create_secgroup,
	.delete_secgroup = aws_delete_secgroup,
	.resolve_image = aws_resolve_image,
	.instance_type = aws_instance_type,
	.price = aws_price,
	.zones = aws_zones,
	.network = aws_network,
	.type_zones = aws_type_zones,
	.regions = aws_regions,
	.console_output = aws_console_output,
	.quota = aws_quota,
	/* NULL: EC2 has no "what is my address" call; core asks GPUCLUSTER_CHECKIP_URL */
	.caller_address = NULL,
	.create_placement = aws_create_placement,
	.delete_placement = aws_delete_placement,
	.gpu_types = aws_gpu_types,
	.reserved_price = aws_reserved_price,
	.create_address = aws_create_address,
	.attach_address = aws_attach_address,
	.delete_address = aws_delete_address,
};
