/*
 * regions.c: a cloud and its regions, for the commands that read many (see regions.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cluster.h"
#include "cmd/regions.h"
#include "core/alloc.h"
#include "core/str.h"

void gc_cmd_cloud_release(struct gc_cmd_cloud *c)
{
	gc_strv_free(c->regions, c->n_regions);
	c->regions = NULL;
	c->n_regions = 0;
}

void gc_cmd_cloud_add_region(struct gc_cmd_cloud *c, const char *region)
{
	for (size_t i = 0; i < c->n_regions; i++)
		if (strcmp(c->regions[i], region) == 0)
			return;
	c->regions = gc_xreallocarray(c->regions, c->n_regions + 1, sizeof(*c->regions));
	c->regions[c->n_regions++] = gc_xstrdup(region);
}

int gc_cmd_cloud_open(struct gc_cmd_ctx *ctx, const struct gc_cmd_cloud *c, const char *region,
		      struct gc_provider **out, struct gc_error *err)
{
	struct gc_provider_config cfg = {
		.region = region, .profile = c->profile, .endpoint = c->endpoint, .oidc = c->oidc
	};

	return gc_cmd_open_cloud(ctx, c->ops, &cfg, out, err);
}

int gc_cmd_cloud_all_regions(struct gc_cmd_ctx *ctx, struct gc_cmd_cloud *c, struct gc_error *err)
{
	const char *home = c->n_regions ? c->regions[0]
		: c->home		? c->home
					: c->ops->facts->home_region;
	struct gc_provider *p = NULL;
	char **regions = NULL;
	size_t n = 0;
	int rc = -1;

	if (gc_cmd_cloud_open(ctx, c, home, &p, err) < 0 ||
	    gc_provider_regions(p, &regions, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		gc_cmd_cloud_add_region(c, regions[i]);
	rc = 0;
out:
	gc_strv_free(regions, n);
	gc_provider_close(p);
	return rc;
}

void gc_cmd_age_text(char *out, size_t size, int64_t now, int64_t t)
{
	int64_t s = now - t;

	if (!t || s < 0)
		snprintf(out, size, "-");
	else if (s < 60)
		snprintf(out, size, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(out, size, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(out, size, "%lldh%02lldm", (long long)(s / 3600),
			 (long long)(s / 60 % 60));
	else
		snprintf(out, size, "%lldd%02lldh", (long long)(s / 86400),
			 (long long)(s / 3600 % 24));
}

void gc_cmd_idle_text(char *out, size_t size, int64_t idle_s, size_t stopped)
{
	char after[32] = "-";

	if (idle_s > 0)
		gc_format_duration((uint64_t)idle_s, after, sizeof(after));
	if (stopped)
		snprintf(out, size, "%s, %zu stopped", after, stopped);
	else
		snprintf(out, size, "%s", after);
}

const char *gc_cmd_reserved_term(const struct gc_provider_ops *ops)
{
	return ops->facts->reserved_prepaid ? "subscription, paid upfront"
					    : "reservation, no upfront";
}
