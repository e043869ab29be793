/*
 * gpupick.c: a group's gpus resolved to instance types (gpupick.h).
 */
#include "core/gpupick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/gpuspec.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/spec.h"

#define MAX_REGIONS_ASKED 32 /* where a GPU is sold, for an error message */

struct cand {
	const struct gc_gpu_offer *offer;
	double price; /* live for the market, else -1 */
	double order; /* price, or the catalogue's list price */
};

static void offer_facts(const struct gc_gpu_offer *o, struct gc_type_facts *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", o->type);
	snprintf(f->gpu_model, sizeof(f->gpu_model), "%s", o->model);
	f->vcpus = o->vcpus;
	f->memory_mib = o->memory_gib * 1024;
	f->gpus = o->gpus;
	f->gpu_memory_mib = o->gpu_memory_gib * 1024;
}

static void where(char *out, size_t size, const struct gc_spec *spec, const struct gc_spec_group *g)
{
	const struct gc_spec_pos *at = g->gpus_pos.line ? &g->gpus_pos : &g->pos;

	snprintf(out, size, "%.256s:%u:%u: ", spec->file ? spec->file : "spec", at->line, at->col);
}

static bool has_zone(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* 1: the cloud offers o in every zone g names (any, naming none); 0: not; -1: cancelled or refused (err). */
static int offered(struct gc_provider *p, const struct gc_spec_group *g,
		   const struct gc_gpu_offer *o, struct gc_buf *elsewhere, struct gc_error *err)
{
	struct gc_type_facts f;
	struct gc_gpu_request r = g->gpus;
	struct gc_error lerr;
	char **zones = NULL;
	size_t n = 0;
	int ok = 0;

	gc_error_init(&lerr);
	if (gc_provider_instance_type(p, o->type, &f, &lerr) == 0) {
		if (!gc_gpu_request_matches(&r, &f))
			return 0; /* the cloud's facts win over the catalogue's */
	} else if (lerr.code == GC_ENOTFOUND) {
		return 0;
	} else if (lerr.code == GC_ECANCELLED || lerr.code == GC_EAUTH) {
		*err = lerr;
		return -1;
	}
	gc_error_init(&lerr);
	if (gc_provider_type_zones(p, o->type, &zones, &n, &lerr) < 0) {
		if (lerr.code == GC_ECANCELLED || lerr.code == GC_EAUTH) {
			*err = lerr;
			return -1;
		}
		gc_log_warn(p->log, "%s; instance type '%s' not checked", lerr.message, o->type);
		return 1; /* the launch decides, as plan's type check does */
	}
	/* every zone the group names, as plan's check of instance_types wants */
	ok = n > 0;
	for (size_t z = 0; z < g->n_zones; z++)
		ok &= has_zone(zones, n, g->zones[z]);
	for (size_t z = 0; !ok && z < n; z++) /* the region's other zones that offer it */
		gc_buf_addf(elsewhere, "%s%s %s", elsewhere->len ? ", " : "", o->type, zones[z]);
	gc_strv_free(zones, n);
	return ok;
}

static int by_price(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->offer < y->offer ? -1 : x->offer > y->offer;
}

/* ", sold in: us-east-1, us-west-2" from the cloud's other regions that offer one of the
 * candidates (at most MAX_REGIONS_ASKED asked); nothing when none or unknown. */
static void sold_in(struct gc_provider *p, const struct gc_spec *spec, struct cand *c, size_t n,
		    struct gc_buf *out)
{
	char **regions = NULL;
	size_t n_regions = 0, found = 0;
	struct gc_error lerr;

	gc_error_init(&lerr);
	if (gc_provider_regions(p, &regions, &n_regions, &lerr) < 0)
		return;
	for (size_t i = 0; i < n_regions && i < MAX_REGIONS_ASKED; i++) {
		struct gc_provider *h = NULL;
		bool sold = false;

		if (strcmp(regions[i], p->region) == 0 || gc_provider_cancelled(p))
			continue;
		gc_error_init(&lerr);
		if (gc_provider_open_region(&h, p, spec, regions[i], &lerr) < 0)
			continue;
		for (size_t k = 0; k < n && !sold; k++) {
			char **zones = NULL;
			size_t nz = 0;

			gc_error_init(&lerr);
			if (gc_provider_type_zones(h, c[k].offer->type, &zones, &nz, &lerr) == 0)
				sold = nz > 0;
			gc_strv_free(zones, nz);
		}
		gc_provider_close(h);
		if (sold)
			gc_buf_addf(out, "%s%s",
				    found++ ? ", " : "; in other regions: ", regions[i]);
	}
	gc_strv_free(regions, n_regions);
}

/* "T4:1 (g4dn.xlarge), ..." : what the cloud's catalogue sells. */
static void catalogue_words(const struct gc_provider *p, struct gc_buf *out)
{
	const struct gc_gpu_offer *o = p->ops->facts ? p->ops->facts->gpu_offers : NULL;

	for (size_t i = 0; o && o[i].type; i++)
		gc_buf_addf(out, "%s%s:%u (%s)", i ? ", " : "", o[i].model, o[i].gpus, o[i].type);
}

static int resolve_group(struct gc_provider *p, struct gc_spec *spec, struct gc_spec_group *g,
			 bool ask_cloud, struct gc_error *err)
{
	const struct gc_gpu_offer *o = p->ops->facts ? p->ops->facts->gpu_offers : NULL;
	bool spot = g->market != GC_MARKET_ON_DEMAND;
	struct cand *c = NULL, *keep = NULL;
	size_t n = 0, alloc = 0, n_keep = 0;
	char at[300], want[64], currency[GC_CURRENCY_SIZE] = "";
	struct gc_buf msg = GC_BUF_INIT(600), zones = GC_BUF_INIT(400);
	int ret = -1;

	where(at, sizeof(at), spec, g);
	gc_gpu_request_format(&g->gpus, want, sizeof(want));
	for (size_t i = 0; o && o[i].type; i++) {
		struct gc_type_facts f;

		offer_facts(&o[i], &f);
		if (!gc_gpu_request_matches(&g->gpus, &f))
			continue;
		GC_ALLOC_GROW(c, n + 1, alloc);
		c[n++] = (struct cand){ .offer = &o[i], .price = -1, .order = o[i].price };
	}
	if (n == 0) {
		catalogue_words(p, &msg);
		ret = gc_error_set(err, GC_EINVALID,
				   "%sgpus: %s sells no instance type with %s (it sells %s)", at,
				   spec->provider.name, want, msg.len ? msg.data : "none");
		goto out;
	}
	keep = gc_xcalloc(n, sizeof(*keep));
	for (size_t i = 0; i < n; i++) {
		int rc = ask_cloud ? offered(p, g, c[i].offer, &zones, err) : 1;
		char cur[GC_CURRENCY_SIZE] = "";
		struct gc_error lerr;
		double price;

		if (rc < 0)
			goto out;
		if (rc == 0)
			continue;
		gc_error_init(&lerr);
		if (ask_cloud &&
		    gc_provider_price(p, c[i].offer->type, NULL, spot, &price, cur, &lerr) == 0 &&
		    (!currency[0] || strcmp(currency, cur) == 0)) {
			c[i].price = c[i].order = price;
			memcpy(currency, cur, sizeof(currency));
		}
		keep[n_keep++] = c[i];
	}
	if (n_keep == 0) {
		for (size_t i = 0; i < n; i++)
			gc_buf_addf(&msg, "%s%s", i ? ", " : "", c[i].offer->type);
		if (zones.len)
			gc_buf_addf(&msg, "; in %s: %s", p->region, zones.data);
		sold_in(p, spec, c, n, &msg);
		ret = gc_error_set(err, GC_EINVALID,
				   "%sgpus: %s is not offered in region '%s'%s (%s sells it as %s)",
				   at, want, p->region, g->n_zones ? " in the group's zones" : "",
				   spec->provider.name, msg.data);
		goto out;
	}
	qsort(keep, n_keep, sizeof(*keep), by_price);
	if (!g->gpu_types_given) {
		gc_strv_free(g->instance_types, g->n_instance_types);
		g->instance_types = NULL;
		g->n_instance_types = 0;
	}
	free(g->gpus_prices);
	g->gpus_prices = gc_xcalloc(n_keep, sizeof(double));
	g->gpus_first = g->n_instance_types;
	snprintf(g->gpus_currency, sizeof(g->gpus_currency), "%s", currency);
	g->instance_types =
		gc_xreallocarray(g->instance_types, g->n_instance_types + n_keep, sizeof(char *));
	for (size_t i = 0; i < n_keep; i++) {
		bool dup = false;

		for (size_t k = 0; k < g->n_instance_types; k++)
			dup |= strcmp(g->instance_types[k], keep[i].offer->type) == 0;
		if (dup || g->n_instance_types >= GC_SPEC_MAX_INSTANCE_TYPES)
			continue;
		g->gpus_prices[g->n_instance_types - g->gpus_first] = keep[i].price;
		g->instance_types_pos[g->n_instance_types] = g->gpus_pos;
		g->instance_types[g->n_instance_types++] = gc_xstrdup(keep[i].offer->type);
	}
	ret = 0;
out:
	gc_buf_release(&msg);
	gc_buf_release(&zones);
	free(c);
	free(keep);
	return ret;
}

int gc_gpupick_resolve(struct gc_provider *p, struct gc_spec *spec, bool ask_cloud,
		       struct gc_error *err)
{
	for (size_t i = 0; i < spec->n_groups; i++) {
		struct gc_spec_group *g = &spec->groups[i];

		if (!g->has_gpus)
			continue;
		/* the types the spec wrote stay first: drop what an earlier call added */
		if (g->gpus_prices) {
			for (size_t k = g->gpus_first; k < g->n_instance_types; k++)
				free(g->instance_types[k]);
			g->n_instance_types = g->gpus_first;
		}
		if (resolve_group(p, spec, g, ask_cloud, err) < 0)
			return -1;
	}
	return 0;
}
