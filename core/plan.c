/*
 * plan.c: the diff between a spec and the instances the cloud reports, and what it costs.
 * Showing it is cmd/plan-render.c's.
 *
 * Every decision is made from one snapshot, with no local state, so the same spec and the
 * same cloud always give the same plan: instances are taken in id order whatever order
 * discover returned them in, and every choice between equals (which surplus node goes)
 * ends in a tie-break on the id. That determinism is what lets the executor's client
 * tokens name the same slots on a re-run. The rules and their reasons are in
 * docs/internals/plan.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/money.h"
#include "core/plan.h"
#include "core/str.h"
#include "core/suggest.h"

/* Rounding slack when comparing a sum of prices with the limit (far below a cent). */
#define PLAN_COST_EPSILON 1e-9

const char *gc_plan_action_name(enum gc_plan_action a)
{
	switch (a) {
	case GC_PLAN_KEEP: return "keep";
	case GC_PLAN_TERMINATE: return "terminate";
	case GC_PLAN_REPLACE: return "replace";
	case GC_PLAN_IGNORE: return "ignore";
	}
	return "unknown";
}

void gc_plan_init(struct gc_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
}

void gc_plan_release(struct gc_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_groups; i++)
		free(plan->groups[i].nodes);
	free(plan->groups);
	free(plan->skips);
	gc_strv_free(plan->preflight, plan->n_preflight);
	gc_plan_init(plan);
}

bool gc_plan_has_changes(const struct gc_plan *plan)
{
	return plan->n_create > 0 || plan->n_terminate > 0 || plan->n_replace > 0 ||
		plan->n_expiry > 0 || plan->n_idle > 0;
}

bool gc_plan_needs_action(const struct gc_plan *plan)
{
	return gc_plan_has_changes(plan) || plan->over_cap;
}

static const char *str_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/* ---- the spec hash -------------------------------------------------------------- */

/* A netstring, "LEN:BYTES,": self-delimiting, so no two field lists encode alike. */
static void hash_field(struct gc_buf *b, const char *s)
{
	gc_buf_addf(b, "%zu:", strlen(s));
	gc_buf_addstr(b, s);
	gc_buf_addch(b, ',');
}

void gc_spec_group_hash(const struct gc_spec_group *g, char out[GC_SPEC_HASH_LEN + 1])
{
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	char num[32], hex[GC_SHA256_HEX_LEN];

	/* only what an instance cannot show about itself (docs/internals/plan.md) */
	hash_field(&b, "gpucluster-spec-hash-2");
	hash_field(&b, str_or(g->image, ""));
	snprintf(num, sizeof(num), "%u", g->disk_gb);
	hash_field(&b, num);

	gc_sha256_hex(b.data, b.len, hex);
	memcpy(out, hex, GC_SPEC_HASH_LEN);
	out[GC_SPEC_HASH_LEN] = '\0';
	gc_buf_release(&b);
}

/* Whether an instance's own type and market still fit its group. */
static bool instance_fits(const struct gc_instance *inst, const struct gc_spec_group *g)
{
	if (g->market == GC_MARKET_ON_DEMAND && inst->spot)
		return false;
	if (g->market == GC_MARKET_SPOT && !inst->spot)
		return false;
	for (size_t i = 0; inst->type && i < g->n_instance_types; i++)
		if (strcmp(inst->type, g->instance_types[i]) == 0)
			return true;
	return false;
}

/* ---- prices --------------------------------------------------------------------- */

static const struct gc_plan_price *price_find(const struct gc_plan_inputs *in, const char *type,
					      bool spot)
{
	if (!type)
		return NULL;
	for (size_t i = 0; i < in->n_prices; i++)
		if (in->prices[i].spot == spot && in->prices[i].type &&
		    strcmp(in->prices[i].type, type) == 0)
			return &in->prices[i];
	return NULL;
}

/* Whether a price is known; *out is it, or 0. */
static bool price_lookup(const struct gc_plan_inputs *in, const char *type, bool spot, double *out)
{
	const struct gc_plan_price *p = price_find(in, type, spot);

	if (!p || !(p->usd_per_hour >= 0)) {
		*out = 0;
		return false;
	}
	*out = p->usd_per_hour;
	return true;
}

/* New instances are budgeted at on-demand unless they can only be spot: a spot-then-on-
 * demand group may land on on-demand, and the limit must hold there too. */
static bool create_is_spot(const struct gc_spec_group *g)
{
	return g->market == GC_MARKET_SPOT;
}

static void price_need(struct gc_plan_price **v, size_t *n, size_t *alloc, const char *type,
		       bool spot)
{
	if (!type)
		return;
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].spot == spot && strcmp((*v)[i].type, type) == 0)
			return;
	GC_ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[*n].type = type;
	(*v)[*n].spot = spot;
	(*v)[*n].usd_per_hour = -1;
	(*n)++;
}

void gc_plan_price_needs(const struct gc_spec *spec, const struct gc_instance_list *live,
			 struct gc_plan_price **out, size_t *n_out)
{
	struct gc_plan_price *v = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];

		/* every candidate apply may fall back to; on-demand also bounds spot */
		for (size_t t = 0; t < g->n_instance_types; t++) {
			if (g->market != GC_MARKET_ON_DEMAND)
				price_need(&v, &n, &alloc, g->instance_types[t], true);
			price_need(&v, &n, &alloc, g->instance_types[t], false);
		}
	}
	for (size_t i = 0; live && i < live->n; i++)
		if (live->items[i].state != GC_STATE_TERMINATED)
			price_need(&v, &n, &alloc, live->items[i].type, live->items[i].spot);
	*out = v;
	*n_out = n;
}

/* The most a new instance of the group may cost: each candidate at its bound (spot: the
 * on-demand price, or max_spot_price when lower, since the spot price may rise to it). */
static void worst_price(const struct gc_plan_inputs *in, struct gc_plan_group *g)
{
	const struct gc_spec_group *sg = g->spec;

	g->worst_price_known = true;
	for (size_t m = 0; m < 2; m++) {
		bool spot = m == 1; /* on-demand first: it names a tie */

		if ((spot && sg->market == GC_MARKET_ON_DEMAND) ||
		    (!spot && sg->market == GC_MARKET_SPOT))
			continue;
		for (size_t t = 0; t < sg->n_instance_types; t++) {
			double od, bound, bid = sg->max_spot_price;
			bool known = price_lookup(in, sg->instance_types[t], false, &od);

			/* the bid as the prices are: in the account's currency */
			if (bid > 0 && in->currency &&
			    gc_money_convert(in->spec, bid, gc_money_spec_currency(in->spec),
					     in->currency, &bid) < 0)
				bid = sg->max_spot_price;
			bound = od;
			if (spot && bid > 0 && (!known || bid < od)) {
				bound = bid;
				known = true;
			}
			if (!known) {
				g->worst_price_known = false;
				continue;
			}
			if (!g->worst_type || bound > g->worst_price) {
				g->worst_price = bound;
				g->worst_type = sg->instance_types[t];
				g->worst_spot = spot;
			}
		}
	}
	/* never below the likely case (a spot bid under today's spot price, say) */
	if (g->create_price_known && (!g->worst_type || g->create_price > g->worst_price)) {
		g->worst_price = g->create_price;
		g->worst_type = sg->instance_types[0];
		g->worst_spot = create_is_spot(sg);
	}
}

/* ---- building ------------------------------------------------------------------- */

static bool is_counted_state(enum gc_instance_state s)
{
	return s == GC_STATE_PENDING || s == GC_STATE_RUNNING;
}

static bool is_unhealthy(const struct gc_instance *inst)
{
	return inst->health && strcmp(inst->health, "failed") == 0;
}

static int id_cmp(const struct gc_instance *a, const struct gc_instance *b)
{
	return strcmp(str_or(a->id, ""), str_or(b->id, ""));
}

/* Instances by id, then by position in the list, so the first of duplicates comes first. */
static int inst_order_cmp(const void *pa, const void *pb)
{
	const struct gc_instance *a = *(const struct gc_instance *const *)pa;
	const struct gc_instance *b = *(const struct gc_instance *const *)pb;
	int c = id_cmp(a, b);

	if (c)
		return c;
	return a < b ? -1 : a > b;
}

/* Which of two counted instances goes first when a group has too many: unhealthy ones
 * (they serve nobody), then pending ones (nobody uses them yet), then the newest (the
 * oldest have been bootstrapped longest and may hold work), then the higher id. */
static int surplus_cmp(const void *pa, const void *pb)
{
	const struct gc_plan_node *a = *(const struct gc_plan_node *const *)pa;
	const struct gc_plan_node *b = *(const struct gc_plan_node *const *)pb;
	bool ua = is_unhealthy(a->inst), ub = is_unhealthy(b->inst);
	bool pa_ = a->inst->state == GC_STATE_PENDING, pb_ = b->inst->state == GC_STATE_PENDING;

	if (ua != ub)
		return ua ? -1 : 1;
	if (pa_ != pb_)
		return pa_ ? -1 : 1;
	if (a->inst->launch_time != b->inst->launch_time)
		return a->inst->launch_time > b->inst->launch_time ? -1 : 1;
	return -id_cmp(a->inst, b->inst);
}

static int action_rank(enum gc_plan_action a)
{
	switch (a) {
	case GC_PLAN_TERMINATE: return 0;
	case GC_PLAN_REPLACE: return 1;
	case GC_PLAN_IGNORE: return 2;
	case GC_PLAN_KEEP: return 3;
	}
	return 4;
}

static int node_display_cmp(const void *pa, const void *pb)
{
	const struct gc_plan_node *a = pa, *b = pb;
	int ra = action_rank(a->action), rb = action_rank(b->action);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return id_cmp(a->inst, b->inst);
}

/* Orphan groups by their tag: no tag first, then by name. */
static int orphan_cmp(const void *pa, const void *pb)
{
	const struct gc_plan_group *a = pa, *b = pb;
	const char *na = a->n_nodes ? a->nodes[0].inst->group : NULL;
	const char *nb = b->n_nodes ? b->nodes[0].inst->group : NULL;

	if (!na || !nb)
		return (na != NULL) - (nb != NULL);
	return strcmp(na, nb);
}

static void node_set(struct gc_plan_node *n, enum gc_plan_action action, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void node_set(struct gc_plan_node *n, enum gc_plan_action action, const char *fmt, ...)
{
	va_list ap;

	n->action = action;
	va_start(ap, fmt);
	vsnprintf(n->reason, sizeof(n->reason), fmt, ap);
	va_end(ap);
}

/* What differs between a counted instance and its group, as far as the instance shows
 * it; the spec hash says the rest. */
static void change_reason(char *out, size_t size, const struct gc_instance *inst,
			  const struct gc_spec_group *g, const char *hash)
{
	bool type_listed = false;

	if (!inst->spec_hash) {
		snprintf(out, size, "no spec-hash tag (the group's is %s)", hash);
		return;
	}
	for (size_t i = 0; inst->type && i < g->n_instance_types; i++)
		if (strcmp(inst->type, g->instance_types[i]) == 0)
			type_listed = true;
	if (inst->type && !type_listed)
		snprintf(out, size, "instance type %.64s is no longer in instance_types",
			 inst->type);
	else if (g->market == GC_MARKET_ON_DEMAND && inst->spot)
		snprintf(out, size, "market changed to on-demand (this is a spot instance)");
	else if (g->market == GC_MARKET_SPOT && !inst->spot)
		snprintf(out, size, "market changed to spot (this is an on-demand instance)");
	else if (!g->image_is_alias && g->image && inst->image && strcmp(g->image, inst->image))
		snprintf(out, size, "image changed: %.40s -> %.40s", inst->image, g->image);
	else
		snprintf(out, size, "image or disk_gb changed (spec-hash %.12s -> %s)",
			 inst->spec_hash, hash);
}

struct plan_build {
	const struct gc_plan_inputs *in;
	struct gc_plan plan;
	size_t n_spec; /* groups[0..n_spec) follow the spec; the rest left it */
	size_t groups_alloc;
	size_t *node_alloc; /* per group */
};

static size_t group_index(struct plan_build *b, const struct gc_instance *inst)
{
	const struct gc_spec *spec = b->in->spec;
	struct gc_plan_group *g;

	if (inst->group)
		for (size_t i = 0; i < spec->n_groups; i++)
			if (strcmp(spec->groups[i].name, inst->group) == 0)
				return i;
	for (size_t i = b->n_spec; i < b->plan.n_groups; i++) {
		const char *name = b->plan.groups[i].nodes[0].inst->group;

		if (name == inst->group || (name && inst->group && strcmp(name, inst->group) == 0))
			return i;
	}
	GC_ALLOC_GROW(b->plan.groups, b->plan.n_groups + 1, b->groups_alloc);
	b->node_alloc = gc_xreallocarray(b->node_alloc, b->groups_alloc, sizeof(*b->node_alloc));
	g = &b->plan.groups[b->plan.n_groups];
	memset(g, 0, sizeof(*g));
	b->node_alloc[b->plan.n_groups] = 0;
	snprintf(g->name, sizeof(g->name), "%s", str_or(inst->group, ""));
	return b->plan.n_groups++;
}

static void group_add(struct plan_build *b, size_t gi, const struct gc_instance *inst)
{
	struct gc_plan_group *g = &b->plan.groups[gi];
	struct gc_plan_node *n;

	GC_ALLOC_GROW(g->nodes, g->n_nodes + 1, b->node_alloc[gi]);
	n = &g->nodes[g->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->inst = inst;
	n->price_known = price_lookup(b->in, inst->type, inst->spot, &n->price);
}

/* Decides a spec group: ignore, expire, then keep / replace / terminate by count. */
static void decide_spec_group(struct plan_build *b, struct gc_plan_group *g)
{
	const struct gc_spec_group *sg = g->spec;
	struct gc_plan_node **keep = gc_xcalloc(g->n_nodes + 1, sizeof(*keep));
	struct gc_plan_node **old = gc_xcalloc(g->n_nodes + 1, sizeof(*old));
	size_t n_keep = 0, n_old = 0, surplus, excess;
	unsigned counted, need;
	char why[160];

	for (size_t i = 0; i < g->n_nodes; i++) {
		struct gc_plan_node *n = &g->nodes[i];
		const struct gc_instance *inst = n->inst;

		if (inst->state == GC_STATE_TERMINATING) {
			node_set(n, GC_PLAN_IGNORE,
				 "terminating: already being released; not counted");
		} else if (!is_counted_state(inst->state)) {
			node_set(n, GC_PLAN_IGNORE,
				 "%s: not counted as capacity; destroy removes it",
				 gc_instance_state_name(inst->state));
		} else if (inst->expires_at != 0 && inst->expires_at <= b->in->now) {
			char when[21];

			gc_format_rfc3339(inst->expires_at, when);
			node_set(n, GC_PLAN_TERMINATE, "expired at %s", when);
		} else if (inst->spec_hash && strcmp(inst->spec_hash, g->spec_hash) == 0 &&
			   instance_fits(inst, g->spec)) {
			keep[n_keep++] = n;
		} else {
			old[n_old++] = n;
		}
	}
	counted = (unsigned)(n_keep + n_old);

	/* The current ones are worth more than the old ones, so the old ones go first. */
	qsort(keep, n_keep, sizeof(*keep), surplus_cmp);
	qsort(old, n_old, sizeof(*old), surplus_cmp);
	surplus = n_keep > g->want ? n_keep - g->want : 0;
	for (size_t i = 0; i < surplus; i++) {
		const struct gc_instance *inst = keep[i]->inst;
		const char *which = is_unhealthy(inst)	  ? "unhealthy"
			: inst->state == GC_STATE_PENDING ? "still pending"
							  : "newest first";

		node_set(keep[i], GC_PLAN_TERMINATE, "surplus: count %u -> %u (%s)", counted,
			 g->want, which);
	}
	for (size_t i = surplus; i < n_keep; i++)
		node_set(keep[i], GC_PLAN_KEEP, "%s",
			 is_unhealthy(keep[i]->inst) ? "kept: health check failed" : "");
	g->keep = (unsigned)(n_keep - surplus);
	need = g->want - g->keep;

	/* Old instances beyond what the count needs are not replaced, only removed. */
	excess = n_old > need ? n_old - need : 0;
	for (size_t i = 0; i < n_old; i++) {
		change_reason(why, sizeof(why), old[i]->inst, sg, g->spec_hash);
		if (i < excess)
			node_set(old[i], GC_PLAN_TERMINATE, "surplus: count %u -> %u; %s", counted,
				 g->want, why);
		else
			node_set(old[i], GC_PLAN_REPLACE, "%s", why);
	}
	g->replace = (unsigned)(n_old - excess);
	g->create = need;
	g->first_slot = g->keep;
	free(keep);
	free(old);
}

static void decide_orphan_group(struct gc_plan_group *g)
{
	const char *name = g->nodes[0].inst->group;

	for (size_t i = 0; i < g->n_nodes; i++) {
		struct gc_plan_node *n = &g->nodes[i];

		if (n->inst->state == GC_STATE_TERMINATING)
			node_set(n, GC_PLAN_IGNORE, "terminating: already being released");
		else if (name)
			node_set(n, GC_PLAN_TERMINATE, "group '%.64s' is no longer in the spec",
				 name);
		else
			node_set(n, GC_PLAN_TERMINATE, "no " GC_TAG_GROUP " tag");
	}
}

static int check_overrides(const struct gc_plan_inputs *in, struct gc_error *err)
{
	const struct gc_spec *spec = in->spec;

	for (size_t i = 0; i < in->n_overrides; i++) {
		const char *name = in->override_names[i];
		bool found = false;

		for (size_t j = 0; name && j < spec->n_groups; j++)
			found = found || strcmp(spec->groups[j].name, name) == 0;
		if (!found) {
			const char **names = gc_xcalloc(spec->n_groups + 1, sizeof(*names));
			const char *s;

			for (size_t j = 0; j < spec->n_groups; j++)
				names[j] = spec->groups[j].name;
			s = name ? gc_suggest(name, names, spec->n_groups) : NULL;
			gc_error_set(err, GC_EINVALID,
				     "no node group '%.64s' in cluster '%s'%s%s%s",
				     str_or(name, ""), spec->name, s ? "; did you mean '" : "",
				     s ? s : "", s ? "'?" : "");
			free(names);
			return -1;
		}
		if (in->override_counts[i] > GC_SPEC_MAX_GROUP_COUNT)
			return gc_error_set(err, GC_EINVALID,
					    "node group '%s': count %u is out of range 0..%u", name,
					    in->override_counts[i], GC_SPEC_MAX_GROUP_COUNT);
	}
	return 0;
}

static unsigned group_want(const struct gc_plan_inputs *in, const struct gc_spec_group *g)
{
	unsigned want = g->count;

	/* the last override of a name wins, as with repeated options */
	for (size_t i = 0; i < in->n_overrides; i++)
		if (strcmp(in->override_names[i], g->name) == 0)
			want = in->override_counts[i];
	return want;
}

/* Sorts the live instances into groups: by id, without duplicates and terminated ones. */
static int collect(struct plan_build *b, struct gc_error *err)
{
	const struct gc_instance_list *live = b->in->live;
	const struct gc_instance **order;
	size_t n = live ? live->n : 0;
	int r = 0;

	order = gc_xcalloc(n + 1, sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = &live->items[i];
	qsort(order, n, sizeof(*order), inst_order_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct gc_instance *inst = order[i];

		if (i > 0 && id_cmp(order[i - 1], inst) == 0)
			continue;
		if (inst->state == GC_STATE_TERMINATED)
			continue;
		if (!inst->cluster || strcmp(inst->cluster, b->in->spec->name) != 0) {
			r = gc_error_set(
				err, GC_EINVALID,
				"instance '%.64s' is tagged for cluster '%.64s', not '%s'; "
				"refusing to plan with it",
				str_or(inst->id, ""), str_or(inst->cluster, ""), b->in->spec->name);
			break;
		}
		group_add(b, group_index(b, inst), inst);
	}
	free(order);
	return r;
}

static void missing_price(char *out, size_t size, const char *type, bool spot)
{
	if (!out[0])
		snprintf(out, size, "%.64s (%s)", str_or(type, "unknown type"),
			 spot ? "spot" : "on-demand");
}

static void totals(struct plan_build *b)
{
	struct gc_plan *p = &b->plan;
	char miss_now[sizeof(p->unknown_price)] = "", miss_after[sizeof(p->unknown_price)] = "";

	p->cost_now_known = p->cost_after_known = p->cost_worst_known = true;
	for (size_t i = 0; i < p->n_groups; i++) {
		struct gc_plan_group *g = &p->groups[i];

		for (size_t j = 0; j < g->n_nodes; j++) {
			const struct gc_plan_node *n = &g->nodes[j];

			if (is_counted_state(n->inst->state)) {
				p->cost_now += n->price;
				if (!n->price_known) {
					p->cost_now_known = false;
					missing_price(miss_now, sizeof(miss_now), n->inst->type,
						      n->inst->spot);
				}
			}
			switch (n->action) {
			case GC_PLAN_KEEP:
				p->n_keep++;
				p->cost_after += n->price;
				p->cost_worst += n->price;
				if (!n->price_known) {
					p->cost_after_known = false;
					missing_price(miss_after, sizeof(miss_after), n->inst->type,
						      n->inst->spot);
				}
				break;
			case GC_PLAN_TERMINATE: p->n_terminate++; break;
			case GC_PLAN_REPLACE: break;
			case GC_PLAN_IGNORE: p->n_ignore++; break;
			}
		}
		p->n_create += g->create;
		p->n_replace += g->replace;
		if (g->create > 0) {
			p->cost_after += g->create * g->create_price;
			if (!g->create_price_known) {
				p->cost_after_known = false;
				missing_price(miss_after, sizeof(miss_after),
					      g->spec->instance_types[0], create_is_spot(g->spec));
			}
			p->cost_worst += g->create * g->worst_price;
			p->cost_worst_known = p->cost_worst_known && g->worst_price_known;
		}
	}
	p->cost_worst_known = p->cost_worst_known && p->cost_after_known;
	p->cost_known = p->cost_now_known && p->cost_after_known;
	snprintf(p->unknown_price, sizeof(p->unknown_price), "%s",
		 miss_after[0] ? miss_after : miss_now);
}

/* What the cap means for this plan: whether the cluster is over it whatever apply does,
 * and which fallback candidates apply would skip because they would take it over. */
static void cap_review(struct plan_build *b)
{
	const struct gc_plan_inputs *in = b->in;
	struct gc_plan *p = &b->plan;
	double max = p->max_hourly_cost;
	size_t alloc = 0;

	if (!(max > 0) || !p->cost_after_known)
		return;
	p->over_cap = p->cost_after > max + PLAN_COST_EPSILON;
	for (size_t i = 0; i < b->n_spec; i++) {
		const struct gc_plan_group *g = &p->groups[i];
		const struct gc_spec_group *sg = g->spec;
		double others = p->cost_after - g->create * g->create_price;

		for (size_t m = 0; g->create && m < 2; m++) {
			bool spot = m == 0;

			if ((spot && sg->market == GC_MARKET_ON_DEMAND) ||
			    (!spot && sg->market == GC_MARKET_SPOT))
				continue;
			for (size_t t = 0; t < sg->n_instance_types; t++) {
				double price, total;

				if (!price_lookup(in, sg->instance_types[t], spot, &price))
					continue;
				total = others + g->create * price;
				if (total <= max + PLAN_COST_EPSILON)
					continue;
				GC_ALLOC_GROW(p->skips, p->n_skips + 1, alloc);
				p->skips[p->n_skips++] = (struct gc_plan_skip){
					.group = sg->name,
					.type = sg->instance_types[t],
					.spot = spot,
					.count = g->create,
					.price = price,
					.total = total,
				};
			}
		}
	}
}

/* The figures' currency and the cap in it (the engine converted it, core/money.h). */
static void plan_currency(struct gc_plan *p, const struct gc_plan_inputs *in)
{
	snprintf(p->currency, sizeof(p->currency), "%s", in->currency ? in->currency : "USD");
	p->max_hourly_cost =
		in->max_hourly_cost > 0 ? in->max_hourly_cost : in->spec->lifecycle.max_hourly_cost;
}

static int check_budget(const struct gc_plan *p, const struct gc_spec *spec, struct gc_error *err)
{
	double max = p->max_hourly_cost;
	const struct gc_spec_pos *pos = &spec->lifecycle.max_hourly_cost_pos;
	char where[300] = "";

	if (!(max > 0) || p->n_create == 0)
		return 0;
	if (!p->cost_after_known)
		return gc_error_set(err, GC_EINVALID,
				    "cannot check max_hourly_cost: no price for %s",
				    p->unknown_price);
	if (p->cost_after <= max + PLAN_COST_EPSILON)
		return 0;
	if (pos->line > 0)
		snprintf(where, sizeof(where), "%.256s:%u:%u: ", str_or(spec->file, "spec"),
			 pos->line, pos->col);
	return gc_error_set(err, GC_EQUOTA,
			    "%smax_hourly_cost %.2f %s/h exceeded: the plan costs %.2f %s/h", where,
			    max, p->currency, p->cost_after, p->currency);
}

size_t gc_plan_group_types(const struct gc_plan_group *g, const char **out)
{
	const struct gc_spec_group *sg = g->spec;
	size_t live = sg->n_instance_types, most = 0, n = 0;

	for (size_t t = 0; t < sg->n_instance_types; t++) {
		size_t c = 0;

		for (size_t i = 0; i < g->n_nodes; i++)
			c += g->nodes[i].action == GC_PLAN_KEEP && g->nodes[i].inst->type &&
				strcmp(g->nodes[i].inst->type, sg->instance_types[t]) == 0;
		if (c > most) {
			most = c;
			live = t;
		}
	}
	if (live < sg->n_instance_types) {
		out[n++] = sg->instance_types[live];
		if (!sg->mixed_types)
			return n;
	}
	for (size_t t = 0; t < sg->n_instance_types; t++)
		if (t != live)
			out[n++] = sg->instance_types[t];
	return n;
}

/*
 * The deadline lifecycle.ttl gives a kept instance: its launch time + ttl (0 without a
 * TTL), never sooner than the floor (the cloud timer's min_ttl_s and GC_PLAN_TTL_SLACK_S
 * from now: timers need notice); a node already due about that soon keeps its own, so
 * plans do not chase a floor that moves with the clock. Returns whether it moves (more
 * than GC_PLAN_TTL_SLACK_S from the one it has).
 */
static bool ttl_deadline(const struct plan_build *b, const struct gc_instance *inst, int64_t *out)
{
	const struct gc_spec *spec = b->in->spec;
	const struct gc_provider_ops *ops = spec->provider.ops;
	int64_t now = b->in->now, have = inst->expires_at, want, floor;

	if (spec->lifecycle.ttl_s == 0) {
		*out = 0;
		return have != 0;
	}
	floor = now + (ops ? (int64_t)ops->min_ttl_s : 0) + GC_PLAN_TTL_SLACK_S;
	want = inst->launch_time > 0 ? inst->launch_time + (int64_t)spec->lifecycle.ttl_s
		: have		     ? have
				     : now + (int64_t)spec->lifecycle.ttl_s;
	if (want < floor) {
		if (have > now && have <= floor + GC_PLAN_TTL_SLACK_S)
			return false;
		want = floor;
	}
	*out = want;
	return have == 0 || llabs(want - have) > GC_PLAN_TTL_SLACK_S;
}

/* Kept instances of spec groups whose expiry the spec's TTL moves (in place). */
static void plan_expiry(struct plan_build *b)
{
	for (size_t i = 0; i < b->n_spec; i++) {
		struct gc_plan_group *g = &b->plan.groups[i];

		for (size_t j = 0; j < g->n_nodes; j++) {
			struct gc_plan_node *n = &g->nodes[j];

			if (n->action == GC_PLAN_KEEP &&
			    ttl_deadline(b, n->inst, &n->new_expires_at)) {
				n->expiry_moves = true;
				b->plan.n_expiry++;
			}
		}
	}
}

/* Kept instances of spec groups whose gpucluster:idle tag is not lifecycle.idle's (in place):
 * the tag as written, so that one that does not parse is replaced too. */
static void plan_idle(struct plan_build *b)
{
	uint64_t idle_s = b->in->spec->lifecycle.idle_s;

	if (idle_s)
		snprintf(b->plan.idle_tag, sizeof(b->plan.idle_tag), "%llu",
			 (unsigned long long)idle_s);
	for (size_t i = 0; i < b->n_spec; i++) {
		struct gc_plan_group *g = &b->plan.groups[i];

		for (size_t j = 0; j < g->n_nodes; j++) {
			struct gc_plan_node *n = &g->nodes[j];
			const char *have = gc_instance_tag(n->inst, GC_TAG_IDLE);

			if (n->action == GC_PLAN_KEEP &&
			    (have ? strcmp(have, b->plan.idle_tag) != 0 : idle_s != 0)) {
				n->idle_moves = true;
				b->plan.n_idle++;
			}
		}
	}
}

int gc_plan_build(struct gc_plan *out, const struct gc_plan_inputs *in, struct gc_error *err)
{
	const struct gc_spec *spec = in->spec;
	struct plan_build b;
	int r = -1;

	gc_plan_release(out);
	memset(&b, 0, sizeof(b));
	b.in = in;
	if (check_overrides(in, err))
		return -1;

	b.n_spec = spec->n_groups;
	b.groups_alloc = spec->n_groups;
	b.plan.n_groups = spec->n_groups;
	b.plan.groups = gc_xcalloc(spec->n_groups + 1, sizeof(*b.plan.groups));
	b.node_alloc = gc_xcalloc(spec->n_groups + 1, sizeof(*b.node_alloc));
	for (size_t i = 0; i < spec->n_groups; i++) {
		struct gc_plan_group *g = &b.plan.groups[i];
		const struct gc_spec_group *sg = &spec->groups[i];

		g->spec = sg;
		snprintf(g->name, sizeof(g->name), "%s", sg->name);
		gc_spec_group_hash(sg, g->spec_hash);
		g->want = group_want(in, sg);
		g->create_price_known = price_lookup(in, sg->instance_types[0], create_is_spot(sg),
						     &g->create_price);
		worst_price(in, g);
	}
	if (collect(&b, err))
		goto out;
	qsort(b.plan.groups + b.n_spec, b.plan.n_groups - b.n_spec, sizeof(*b.plan.groups),
	      orphan_cmp);
	for (size_t i = 0; i < b.plan.n_groups; i++) {
		struct gc_plan_group *g = &b.plan.groups[i];

		if (g->spec)
			decide_spec_group(&b, g);
		else
			decide_orphan_group(g);
		if (g->n_nodes > 1)
			qsort(g->nodes, g->n_nodes, sizeof(*g->nodes), node_display_cmp);
	}
	totals(&b);
	plan_currency(&b.plan, in);
	cap_review(&b);
	if (spec->lifecycle.ttl_s > 0)
		b.plan.expires_at = in->now + (int64_t)spec->lifecycle.ttl_s;
	plan_expiry(&b);
	plan_idle(&b);

	/* Over budget or unpriced, the plan is still handed over so it can be shown. */
	r = check_budget(&b.plan, spec, err);
	*out = b.plan;
	gc_plan_init(&b.plan);
out:
	gc_plan_release(&b.plan);
	free(b.node_alloc);
	return r;
}
