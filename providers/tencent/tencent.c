/*
 * tencent.c: the Tencent Cloud CVM driver's ops table, and opening and closing a session.
 *
 * Open resolves the endpoints and credentials (creds.h), sets up one HTTP client, one
 * retry quota and the per-action token buckets (made on first use, cvm.c), and leaves the
 * caches empty; nothing is sent to Tencent Cloud until the first operation. Close frees
 * all of it.
 *
 * Endpoints: the spec's provider.endpoint serves both products (that is how the emulator
 * and proxies are used: it routes by X-TC-Action), else the regional public hosts
 * https://cvm.REGION.tencentcloudapi.com and https://vpc.REGION.tencentcloudapi.com. A
 * regional host rather than the nearest-region one: Tencent counts rate limits per API and
 * access region, and a pinned region keeps the count in one place.
 *
 * Figures in the table:
 *   max_create_batch 100: RunInstances takes InstanceCount 1..100 for pay-as-you-go
 *     (the SDK model's limit; WIRE.md's 500 is the prepaid one), all or nothing with
 *     MinCount = InstanceCount;
 *   max_terminate_batch 100: TerminateInstances takes at most 100 InstanceIds;
 *   client_token_max 64: ClientToken is at most 64 ASCII bytes (InvalidClientToken.TooLong).
 * Capabilities: spot with a bid (SPOTPAID, MaxPrice), the cloud's own TTL (ActionTimer
 * TerminateInstances), client tokens, prices (InquiryPriceRunInstances). No console
 * output: CVM has no API for it, so host keys travel the other way, in the user-data
 * (cvm-ops.c, tc_user_data).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/oidc.h"
#include "core/str.h"
#include "providers/tencent/cvm.h"
#include "providers/tencent/tencent.h"

#define TC_MAX_ATTEMPTS 5 /* bursts of an apply meet throttling; the quota bounds a storm */

static void driver_free(struct tc_driver *d)
{
	if (!d)
		return;
	gc_http_free(d->http);
	tc_creds_release(&d->creds);
	free(d->profile);
	free(d->endpoint);
	gc_spec_oidc_release(&d->oidc);
	free(d->cvm_url);
	free(d->cvm_host);
	free(d->vpc_url);
	free(d->vpc_host);
	gc_retry_quota_release(&d->quota);
	for (size_t i = 0; i < d->n_buckets; i++) {
		gc_ratelimit_release(&d->buckets[i]->rl);
		free(d->buckets[i]);
	}
	free(d->buckets);
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
	free(d);
}

static void creds_input(struct gc_provider *p, struct tc_driver *d, struct tc_creds_input *in)
{
	memset(in, 0, sizeof(*in));
	in->profile = d->profile;
	in->env = p->env;
	in->http = d->http;
	in->log = p->log;
	in->clock = p->clock;
	in->region = p->region;
	in->endpoint = d->endpoint;
	in->oidc = &d->oidc;
}

/* The chain again; the fresh keys replace the old ones. */
static int renew_creds(struct gc_provider *p, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct tc_creds_input in;
	struct tc_creds fresh;

	creds_input(p, d, &in);
	tc_creds_init(&fresh);
	if (tc_creds_resolve(&fresh, &in, err) != 0) {
		tc_creds_release(&fresh);
		return -1;
	}
	tc_creds_release(&d->creds);
	d->creds = fresh;
	return 0;
}

int tc_refresh_creds(struct gc_provider *p, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);

	return gc_driver_refresh_creds(p, d->creds.expiration, d->creds.source, "Tencent Cloud",
				       renew_creds, err);
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

static int tc_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		   struct gc_error *err)
{
	struct tc_driver *d = gc_xcalloc(1, sizeof(*d));
	struct tc_creds_input in;

	tc_creds_init(&d->creds);
	gc_retry_quota_init(&d->quota, 0);
	d->profile = cfg->profile ? gc_xstrdup(cfg->profile) : NULL;
	if (strspn(p->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(p->region)) {
		gc_error_set(err, GC_EINVALID, "'%s' is not a Tencent Cloud region name",
			     p->region);
		goto fail;
	}
	gc_spec_oidc_copy(&d->oidc, cfg->oidc);
	if (cfg->endpoint) {
		if (endpoint_url(&d->cvm_url, cfg->endpoint, err) != 0)
			goto fail;
		d->vpc_url = gc_xstrdup(d->cvm_url);
		d->endpoint = gc_xstrdup(d->cvm_url);
	} else {
		d->cvm_url = gc_xasprintf("https://cvm.%s.tencentcloudapi.com", p->region);
		d->vpc_url = gc_xasprintf("https://vpc.%s.tencentcloudapi.com", p->region);
	}
	d->cvm_host = tc_url_host(d->cvm_url);
	d->vpc_host = tc_url_host(d->vpc_url);
	if (!d->cvm_host || !d->vpc_host) {
		gc_error_set(err, GC_EINVALID, "endpoint '%s' has no host", d->cvm_url);
		goto fail;
	}
	d->http = gc_http_new(p->log, err);
	if (!d->http)
		goto fail;
	creds_input(p, d, &in);
	if (tc_creds_resolve(&d->creds, &in, err) != 0)
		goto fail;
	d->policy.max_attempts = TC_MAX_ATTEMPTS;
	d->policy.quota = &d->quota;
	d->policy.clock = p->clock;
	d->rate_limit = !cfg->no_rate_limit;
	gc_log_debug(p->log, "tencent: %s via '%s' and '%s', credentials from %s", p->region,
		     d->cvm_host, d->vpc_host, d->creds.source ? d->creds.source : "?");
	p->impl = d;
	return 0;
fail:
	driver_free(d);
	return gc_error_prefix(err, "cannot open Tencent Cloud in '%s'", p->region);
}

static void tc_close(struct gc_provider *p)
{
	driver_free(tc_driver(p));
	p->impl = NULL;
}

const struct gc_provider_ops gc_provider_tencent = {
	.name = "tencent",
	.facts = &tc_facts,
	.caps = GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE | GC_CAP_CLOUD_TTL | GC_CAP_CLIENT_TOKEN |
		GC_CAP_PRICE,
	.max_create_batch = TC_CREATE_BATCH,
	.max_terminate_batch = TC_TERMINATE_BATCH,
	.client_token_max = TC_CLIENT_TOKEN_MAX,
	.max_disk_gb = TC_SYSTEM_DISK_MAX,
	.open = tc_open,
	.close = tc_close,
	.discover = tc_discover,
	.create = tc_create,
	.terminate = tc_terminate,
	.list_resources = tc_list_resources,
	.import_keypair = tc_import_keypair,
	.delete_keypair = tc_delete_keypair,
	.create_secgroup = tc_create_secgroup,
	.delete_secgroup = tc_delete_secgroup,
	.resolve_image = tc_resolve_image,
	.instance_type = tc_instance_type,
	.price = tc_price,
	.zones = tc_zones,
	.regions = tc_regions,
	/* NULL: CVM has no console-output API (only a VNC URL); host keys go in the
	 * user-data instead, and the engine pins them from the request */
	.console_output = NULL,
	/* NULL: no "what is my address" call; core asks GPUCLUSTER_CHECKIP_URL */
	.caller_address = NULL,
};
