/*
 * quotacheck.c: plan's quota preflight (quotacheck.h; docs/internals/quota.md).
 */
#include "core/quotacheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

bool gc_quota_fits(const struct gc_quota *q, unsigned n, int64_t planned, char *why, size_t len)
{
	int64_t need = (int64_t)n * q->per_node;
	int64_t short_by = q->used + planned + need - q->limit;

	if (short_by <= 0)
		return true;
	snprintf(why, len,
		 "quota '%s' allows %" PRId64 " %s, %" PRId64 " are in use%s and %u new "
		 "node%s need %" PRId64 " more: %" PRId64 " short; raise it at %s",
		 q->name, q->limit, q->unit, q->used,
		 planned ? " or taken by earlier groups of this plan" : "", n, n == 1 ? "" : "s",
		 need, short_by, q->where[0] ? q->where : "the cloud's quota console");
	return false;
}

static void say(struct gc_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct gc_plan *plan, const char *fmt, ...)
{
	char line[GC_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	plan->preflight =
		gc_xreallocarray(plan->preflight, plan->n_preflight + 1, sizeof(*plan->preflight));
	plan->preflight[plan->n_preflight++] = gc_xstrdup(line);
}

/* What earlier groups of this plan take of each quota, by name. */
struct taken {
	struct {
		char name[128];
		int64_t amount;
	} * items;
	size_t n, alloc;
};

static int64_t *taken_of(struct taken *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->items[i].name, name))
			return &t->items[i].amount;
	GC_ALLOC_GROW(t->items, t->n + 1, t->alloc);
	snprintf(t->items[t->n].name, sizeof(t->items[t->n].name), "%s", name);
	t->items[t->n].amount = 0;
	return &t->items[t->n++].amount;
}

static const char *market_word(bool spot)
{
	return spot ? "spot" : "on-demand";
}

/* V_UNCHECKED: this group's first candidate draws on a quota the driver does not read
 * (GC_EUNSUPPORTED: say, a family with quotas of its own); the other groups still are. */
enum verdict { V_FITS, V_REFUSED, V_UNREAD, V_UNCHECKED, V_CANCELLED };

/*
 * One group: per market in apply's order, the first (type, zone) not sold out (types, then
 * zones, as apply walks them). A spot shortfall with on-demand after it is a fallback apply
 * makes too; any other shortfall refuses, as apply stops at a quota.
 */
static enum verdict check_group(struct gc_provider *p, struct gc_plan *plan,
				const struct gc_plan_group *g, struct taken *taken,
				struct gc_error *err)
{
	const struct gc_spec_group *sg = g->spec;
	const char *types[GC_SPEC_MAX_INSTANCE_TYPES];
	size_t n_types = gc_plan_group_types(g, types);
	size_t n_zones = sg->n_zones ? sg->n_zones : 1;
	bool markets[2];
	size_t n_markets = 0;

	if (sg->market != GC_MARKET_ON_DEMAND)
		markets[n_markets++] = true;
	if (sg->market != GC_MARKET_SPOT)
		markets[n_markets++] = false;

	for (size_t m = 0; m < n_markets; m++) {
		bool next_market = false;

		for (size_t c = 0; c < n_types * n_zones && !next_market; c++) {
			const char *type = types[c / n_zones];
			const char *zone = sg->n_zones ? sg->zones[c % n_zones] : NULL;
			struct gc_quota q;
			struct gc_error lerr;
			char why[GC_ERROR_MSG_MAX - 200];
			int64_t *took;

			memset(&q, 0, sizeof(q));
			gc_error_init(&lerr);
			if (gc_provider_quota(p, type, zone, markets[m], &q, &lerr) < 0) {
				if (lerr.code == GC_ECANCELLED) {
					if (err)
						*err = lerr;
					return V_CANCELLED;
				}
				if (lerr.code == GC_EUNSUPPORTED)
					return V_UNCHECKED;
				say(plan,
				    "quota not checked: cannot read the quota for %s (%s): %s",
				    type, market_word(markets[m]), lerr.message);
				return V_UNREAD;
			}
			if (q.sold_out) {
				say(plan, "group '%s': %s (%s) is sold out in %s: skipped", g->name,
				    type, market_word(markets[m]), zone ? zone : "the region");
				continue;
			}
			took = taken_of(taken, q.name);
			if (gc_quota_fits(&q, g->create, *took, why, sizeof(why))) {
				*took += (int64_t)g->create * q.per_node;
				say(plan,
				    "group '%s': %u new %s (%s) fit quota '%s': %" PRId64
				    " of %" PRId64 " %s in use, the plan takes %" PRId64,
				    g->name, g->create, type, market_word(markets[m]), q.name,
				    q.used, q.limit, q.unit, *took);
				return V_FITS;
			}
			if (markets[m] && m + 1 < n_markets) {
				say(plan,
				    "group '%s': the spot %s; apply launches on-demand instead",
				    g->name, why);
				next_market = true;
				continue;
			}
			gc_error_set(err, GC_EQUOTA,
				     "group '%s' does not fit the account's quota: %s", g->name,
				     why);
			return V_REFUSED;
		}
	}
	say(plan, "group '%s': every candidate is sold out; apply tries them anyway", g->name);
	return V_FITS;
}

int gc_quotacheck_plan(struct gc_provider *p, const struct gc_spec *spec, struct gc_plan *plan,
		       struct gc_error *err)
{
	struct taken taken = { NULL, 0, 0 };
	int ret = 0;

	(void)spec;
	if (!p->ops->quota)
		return 0;
	for (size_t i = 0; i < plan->n_groups; i++) {
		const struct gc_plan_group *g = &plan->groups[i];
		enum verdict v;

		if (!g->spec || !g->create)
			continue;
		v = check_group(p, plan, g, &taken, err);
		if (v == V_REFUSED || v == V_CANCELLED) {
			ret = -1;
			break;
		}
		if (v == V_UNREAD)
			break; /* said once; never guessed */
	}
	free(taken.items);
	return ret;
}
