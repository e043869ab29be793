/*
 * tencent.c: the Tencent Cloud CVM driver's ops table (its figures and capabilities are
 * explained in docs/internals/tencent.md, "The ops table"), and opening and closing a
 * session. Open resolves the endpoints and credentials and sends nothing; close frees
 * all of it.
 *
 * Endpoints: the spec's provider.endpoint serves both products (the emulator routes by
 * X-TC-Action), else the regional public hosts. A regional host rather than the
 * nearest-region one: Tencent counts rate limits per API and access region, and a pinned
 * region keeps the count in one place.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/tencent/cvm.h"
#include "providers/tencent/tencent.h"

void tc_driver_close(struct gc_provider *p)
{
	struct tc_driver *d = tc_driver(p);

	free(d->cvm_url);
	free(d->cvm_host);
	free(d->vpc_url);
	free(d->vpc_host);
	free(d->tag_url);
	free(d->tag_host);
	for (size_t i = 0; i < d->n_images; i++) {
		free(d->images[i].id);
		free(d->images[i].name);
		free(d->images[i].arch);
	}
	free(d->images);
	gc_params_release(&d->aliases);
	free(d->types);
	gc_price_cache_release(&d->prices);
	gc_strv_free(d->zones, d->n_zones);
	free(d->vpc_id);
	for (size_t i = 0; i < d->n_subnets; i++) {
		free(d->subnets[i].zone);
		free(d->subnets[i].id);
	}
	free(d->subnets);
}

/* An endpoint as given: http(s)://, no blanks, no trailing '/'. */
static int endpoint_url(char **out, const char *url, struct gc_error *err)
{
	size_t n = strlen(url);

	if (!gc_starts_with(url, "http://") && !gc_starts_with(url, "https://"))
		return gc_error_set(err, GC_EINVALID, "endpoint '%s' is not an http(s) URL", url);
	for (const char *s = url; *s; s++)
		if ((unsigned char)*s <= ' ')
			return gc_error_set(err, GC_EINVALID, "endpoint '%s' holds a blank", url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	*out = gc_xstrndup(url, n);
	return 0;
}

/*
 * The currency of the account's prices. InquiryPriceRunInstances answers a bare number in
 * the currency of the site the account belongs to: the China site (cloud.tencent.com,
 * whose API pages name cvm.tencentcloudapi.com) bills in CNY, the international site
 * (tencentcloud.com, whose pages name cvm.intl.tencentcloudapi.com) in USD. The site is
 * GPUCLUSTER_TENCENT_SITE (china, intl) when set, else the endpoint's domain
 * (docs/internals/tencent.md, "Prices and their currency").
 */
static int site_currency(struct gc_provider *p, struct tc_driver *d, struct gc_error *err)
{
	const char *site = gc_spec_env_get(p->env, "GPUCLUSTER_TENCENT_SITE");
	bool intl = strstr(d->cvm_host, ".intl.tencentcloudapi.com") != NULL;

	if (site && *site) {
		if (strcmp(site, "china") && strcmp(site, "intl"))
			return gc_error_set(err, GC_EINVALID,
					    "GPUCLUSTER_TENCENT_SITE '%s' is not china or intl",
					    site);
		intl = strcmp(site, "intl") == 0;
	}
	snprintf(d->currency, sizeof(d->currency), "%s", intl ? "USD" : "CNY");
	return 0;
}

int tc_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		   struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);

	if (strspn(p->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(p->region))
		return gc_error_set(err, GC_EINVALID, "'%s' is not a Tencent Cloud region name",
				    p->region);
	if (cfg->endpoint) {
		if (endpoint_url(&d->cvm_url, cfg->endpoint, err) != 0)
			return -1;
		d->vpc_url = gc_xstrdup(d->cvm_url);
		d->tag_url = gc_xstrdup(d->cvm_url);
		d->base.endpoint = gc_xstrdup(d->cvm_url);
	} else {
		d->cvm_url = gc_xasprintf("https://cvm.%s.tencentcloudapi.com", p->region);
		d->vpc_url = gc_xasprintf("https://vpc.%s.tencentcloudapi.com", p->region);
		d->tag_url =
			gc_xstrdup("https://tag.tencentcloudapi.com"); /* one for all regions */
	}
	d->cvm_host = gc_driver_url_host(d->cvm_url);
	d->vpc_host = gc_driver_url_host(d->vpc_url);
	d->tag_host = gc_driver_url_host(d->tag_url);
	if (!d->cvm_host || !d->vpc_host || !d->tag_host)
		return gc_error_set(err, GC_EINVALID, "endpoint '%s' has no host", d->cvm_url);
	if (site_currency(p, d, err) != 0 || gc_driver_resolve_creds(p, err) != 0)
		return -1;
	gc_log_debug(p->log, "tencent: %s via '%s' and '%s', credentials from %s, prices in %s",
		     p->region, d->cvm_host, d->vpc_host, d->creds.source ? d->creds.source : "?",
		     d->currency);
	return 0;
}

const struct gc_provider_ops gc_provider_tencent = {
	.name = "tencent",
	.facts = &tc_facts,
	.caps = GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE | GC_CAP_CLOUD_TTL | GC_CAP_TTL_MOVES |
		GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE,
	.max_create_batch = TC_CREATE_BATCH,
	.max_terminate_batch = TC_TERMINATE_BATCH,
	.client_token_max = TC_CLIENT_TOKEN_MAX,
	.max_disk_gb = TC_SYSTEM_DISK_MAX,
	.driver = &tc_hooks,
	.discover = tc_discover,
	.create = tc_create,
	.terminate = tc_terminate,
	.set_expiry = tc_set_expiry,
	.set_tag = tc_set_tag,
	.list_resources = tc_list_resources,
	.import_keypair = tc_import_keypair,
	.delete_keypair = tc_delete_keypair,
	.create_secgroup = tc_create_secgroup,
	.delete_secgroup = tc_delete_secgroup,
	.create_placement = tc_create_placement, /* HPC clusters (fabric.md) */
	.delete_placement = tc_delete_placement,
	.resolve_image = tc_resolve_image,
	.instance_type = tc_instance_type,
	.price = tc_price,
	.reserved_price = tc_reserved_price, /* subscriptions (gpus.md) */
	.zones = tc_zones,
	.network = tc_network,
	.type_zones = tc_type_zones,
	.regions = tc_regions,
	/* NULL: CVM has no console-output API (only a VNC URL); host keys go in the
	 * user-data instead, and the engine pins them from the request */
	.console_output = NULL,
	/* NULL: no "what is my address" call; core asks GPUCLUSTER_CHECKIP_URL */
	.caller_address = NULL,
	.quota = tc_quota,
	.gpu_types = tc_gpu_types,
};
