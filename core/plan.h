/*
 * plan.h: the diff between a spec and what the cloud reports.
 *
 * gc_plan_build is pure (no I/O: the caller discovers and looks the prices up), its
 * result does not depend on discover's order, it refuses a plan over max_hourly_cost and
 * an instance of another cluster outright. docs/internals/plan.md says how each decision
 * is made and why; showing a plan is cmd/'s (cmd/plan-render.h).
 *
 * Life cycle: gc_plan_init -> gc_plan_build -> show / execute -> gc_plan_release. The
 * plan points into the spec and the live list it was built from (both must outlive it).
 */
#ifndef GC_PLAN_H
#define GC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/provider.h"
#include "core/spec.h"

/* Length of the spec-hash tag value: 12 hex digits of a SHA-256. */
#define GC_SPEC_HASH_LEN 12

enum gc_plan_action {
	GC_PLAN_KEEP = 0,
	GC_PLAN_TERMINATE, /* surplus, expired, or its group left the spec */
	GC_PLAN_REPLACE,   /* terminated once its replacement is running */
	GC_PLAN_IGNORE,	   /* stopped / stopping / terminating: reported, not counted */
};

/* "keep", "terminate", "replace", "ignore" */
const char *gc_plan_action_name(enum gc_plan_action a);

/* One existing instance and what happens to it. */
struct gc_plan_node {
	const struct gc_instance *inst; /* into the live list */
	enum gc_plan_action action;
	char reason[160]; /* "surplus: count 4 -> 2 (newest first)", ...; "" when kept as is */
	double price;	  /* USD per hour, 0 when unknown */
	bool price_known; /* the lookup table had a price for (type, spot) */
	/* A kept instance whose deadline moves with lifecycle.ttl: inst->expires_at (0: none)
	 * -> new_expires_at (0: the TTL is cleared). Applied in place, never a replacement. */
	bool expiry_moves;
	int64_t new_expires_at;
	/* A kept instance whose gpucluster:idle tag differs from lifecycle.idle: retagged in
	 * place to gc_plan.idle_tag (removed where that is ""). */
	bool idle_moves;
};

struct gc_plan_group {
	const struct gc_spec_group *spec; /* NULL for a group that left the spec */
	/* A group that left the spec is named by its instances' group tag, cut to fit, or ""
	 * for instances without one. Its spec_hash is "" and want 0. */
	char name[GC_SPEC_GROUP_NAME_MAX + 1];
	char spec_hash[GC_SPEC_HASH_LEN + 1];
	unsigned want;	     /* the spec's count (after scale overrides) */
	unsigned keep;	     /* instances counted as capacity and kept */
	unsigned create;     /* new instances, replacements included */
	unsigned replace;    /* of create, how many replace an existing instance */
	unsigned first_slot; /* slot index of the first new instance (see engine.h tokens) */
	double create_price; /* USD per hour for one new instance (first choice) */
	bool create_price_known;
	/* The dearest fallback candidate at its bound (on-demand: its price; spot: the
	 * on-demand price, or max_spot_price when lower): what a new instance may cost at
	 * worst. worst_type/worst_spot name it. */
	double worst_price;
	bool worst_price_known;
	const char *worst_type;
	bool worst_spot;
	/* Every existing instance of the group: terminate, replace, ignore, then keep, each in
	 * id order. */
	struct gc_plan_node *nodes;
	size_t n_nodes;
};

/* Facts the caller looked up before building: prices by (type, spot), the region's price
 * (no zone). gc_plan_price_needs lists the pairs the build will look up. */
struct gc_plan_price {
	const char *type;
	bool spot;
	double usd_per_hour; /* < 0: unknown; per hour in gc_plan_inputs.currency */
};

/* A fallback candidate apply would skip: its creates at its price (spot: today's) would
 * take cost_after over max_hourly_cost. */
struct gc_plan_skip {
	const char *group; /* into the spec */
	const char *type;
	bool spot;
	unsigned count;
	double price; /* USD per hour for one */
	double total; /* the cluster's cost with the group's creates at this price */
};

struct gc_plan_inputs {
	const struct gc_spec *spec;
	const struct gc_instance_list *live; /* discover's answer for this cluster */
	const struct gc_plan_price *prices;
	size_t n_prices;
	/* Count overrides from `scale GROUP=N` (name, count); NULL-able. */
	const char *const *override_names;
	const unsigned *override_counts;
	size_t n_overrides;
	int64_t now; /* unix seconds, for expires-at */
	/* The prices' currency (NULL: "USD") and max_hourly_cost in it (0: the spec's as
	 * written); gc_engine_plan converts (core/money.h). */
	const char *currency;
	double max_hourly_cost;
};

struct gc_plan {
	struct gc_plan_group *groups; /* spec groups in order, then groups left behind */
	size_t n_groups;
	unsigned n_create, n_terminate, n_replace, n_keep, n_ignore;
	double cost_now;   /* USD/h of live running and pending instances */
	double cost_after; /* USD/h once the plan is applied */
	bool cost_known;   /* false when a price was missing: both of the next two */
	bool cost_now_known, cost_after_known;
	/* The first missing price, "g5.xlarge (spot)", preferring one cost_after needs; "" when
	 * cost_known. */
	char unknown_price[96];
	int64_t expires_at; /* new instances' expires-at (now + ttl), 0 without a TTL */
	/* The worst case: kept instances plus every group's creates at worst_price. */
	double cost_worst;
	bool cost_worst_known;
	/* cost_now is known and above max_hourly_cost: apply creates nothing more. */
	bool over_cap;
	/* Candidates apply would skip for the cap (docs/internals/plan.md "Cost"). */
	struct gc_plan_skip *skips;
	size_t n_skips;
	char currency[GC_CURRENCY_SIZE]; /* of every figure above */
	double max_hourly_cost;		 /* the spec's cap in currency, 0 without one */
	unsigned n_expiry; /* kept instances whose expiry moves (gc_plan_node.expiry_moves) */
	/* What the quota preflight (core/quotacheck.h) said: one line each, owned. */
	char **preflight;
	size_t n_preflight;
	unsigned n_idle; /* kept instances whose idle tag moves (gc_plan_node.idle_moves) */
	/* The gpucluster:idle value every instance should carry: lifecycle.idle in seconds
	 * ("1800"), "" without it. */
	char idle_tag[24];
};

void gc_plan_init(struct gc_plan *plan);
void gc_plan_release(struct gc_plan *plan);

/*
 * Builds the plan into out (initialised with gc_plan_init; what it held is released).
 * Fails with GC_EINVALID when an override names no group or a count out of range, or when
 * live holds an instance of another cluster (out is left empty); and, when the plan
 * creates instances and the spec sets lifecycle.max_hourly_cost, with GC_EINVALID when a
 * price cost_after needs is unknown and GC_EQUOTA when cost_after exceeds the limit (in
 * those two cases the plan is still filled in, so it can be shown with the error). A plan
 * that creates nothing cannot raise the cost and is never refused for it.
 */
int gc_plan_build(struct gc_plan *out, const struct gc_plan_inputs *in, struct gc_error *err);

/*
 * The (type, spot) prices gc_plan_build will look up for spec and live, once each: every
 * candidate of every group (each type on-demand, the bound of spot; spot too unless the
 * market is on-demand) and every live instance's own.
 * *out is allocated (free() it); its type strings point into spec and live, and
 * usd_per_hour is -1 for the caller to fill in. live may be NULL.
 */
void gc_plan_price_needs(const struct gc_spec *spec, const struct gc_instance_list *live,
			 struct gc_plan_price **out, size_t *n_out);

/* A kept node's expiry within this many seconds of its TTL deadline (launch time + ttl) is
 * left alone: new nodes are tagged at plan time, a little before they launch. */
#define GC_PLAN_TTL_SLACK_S 600

/*
 * The instance types a spec group's new nodes may take, in the order to try them, into out
 * (room for g->spec->n_instance_types); returns how many. The type most of its kept nodes
 * run (ties: the earlier in instance_types) comes first, and without mixed_types it is the
 * only one; a group with no kept node takes instance_types in the spec's order.
 */
size_t gc_plan_group_types(const struct gc_plan_group *g, const char **out);

/* Whether the plan changes anything (an expiry or idle tag that moves included). */
bool gc_plan_has_changes(const struct gc_plan *plan);

/* Whether the plan needs the user's attention: changes, or a cluster over its cap
 * (`plan --detailed-exitcode` exits 2). */
bool gc_plan_needs_action(const struct gc_plan *plan);

/* The group's spec hash: over what an instance cannot show about itself, the image as
 * written and the disk size (docs/internals/plan.md). The encoding is fixed forever: a
 * change would replace every node of every cluster. */
void gc_spec_group_hash(const struct gc_spec_group *g, char out[GC_SPEC_HASH_LEN + 1]);

#endif
