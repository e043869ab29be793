/*
 * regions.h: one cloud and the regions a command reads in it (gc, list): the regions
 * given, or every region the account can use, and opening the cloud in each.
 */
#ifndef GC_CMD_REGIONS_H
#define GC_CMD_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "core/provider.h"
#include "core/spec.h"

struct gc_cmd_cloud {
	const struct gc_provider_ops *ops;
	const char *profile;		 /* NULL: the cloud's default chain */
	const char *endpoint;		 /* NULL: the environment's override, else public */
	const struct gc_spec_oidc *oidc; /* a spec's provider.oidc, or NULL */
	const char *home;		 /* where the region list is asked; NULL: the cloud's */
	char **regions;
	size_t n_regions;
};

void gc_cmd_cloud_release(struct gc_cmd_cloud *c);
/* Adds region unless c has it already. */
void gc_cmd_cloud_add_region(struct gc_cmd_cloud *c, const char *region);
/* Opens c's cloud in region (gc_cmd_open_cloud). */
int gc_cmd_cloud_open(struct gc_cmd_ctx *ctx, const struct gc_cmd_cloud *c, const char *region,
		      struct gc_provider **out, struct gc_error *err);
/* Adds every region the account can use, asked in the first region given, else c->home,
 * else the cloud's home region. */
int gc_cmd_cloud_all_regions(struct gc_cmd_ctx *ctx, struct gc_cmd_cloud *c, struct gc_error *err);

/* "45s", "12m", "3h12m", "2d04h": how long before now t was; "-" when t is 0 or later. */
void gc_cmd_age_text(char *out, size_t size, int64_t now, int64_t t);
/* list's IDLE column (docs/cli.md "list"): "-" without idle autostop, else idle_s as the spec
 * writes it ("30m"); ", N stopped" when stopped is not 0 ("30m, 1 stopped", "-, 2 stopped"). */
void gc_cmd_idle_text(char *out, size_t size, int64_t idle_s, size_t stopped);
/* What a cloud's reserved prices are, in plan's and show-gpus' JSON (docs/cli.md):
 * "subscription, paid upfront" (facts->reserved_prepaid) or "reservation, no upfront". */
const char *gc_cmd_reserved_term(const struct gc_provider_ops *ops);

#endif
