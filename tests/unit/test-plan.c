/*
 * test-plan.c: the plan (core/plan.c) from hand-built instance lists, against the rules of
 * plan.h and docs/internals/plan.md.
 *
 * The spec hash first (stable, documented encoding; which fields change it), then each
 * decision: an empty cluster, an exact match, scale down (unhealthy, pending, newest, id
 * tie-break) and up (first slot), spec changes (replace, with the count lowered too),
 * stopped and terminating instances, expiry, groups that left the spec, scale overrides,
 * the hourly cost and its limit, unknown prices, instances of another cluster, duplicates
 * and independence from discover's order; then the text and JSON renderings
 * (cmd/plan-render.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "cmd/plan-render.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/plan.h"
#include "core/provider.h"
#include "core/spec.h"

#define NOW 1800000000 /* 2027-01-15T08:00:00Z */

/* Two groups, a TTL and a cost limit; %u is the workers' count, %s the limit. Line 16
 * holds max_hourly_cost, its value at column 20. */
static const char spec_fmt[] = "name: llm-train\n"
			       "provider:\n"
			       "  name: aws\n"
			       "  region: us-east-1\n"
			       "node_groups:\n"
			       "  - name: workers\n"
			       "    count: %u\n"
			       "    instance_types: [g5.xlarge, g5.2xlarge]\n"
			       "    zones: [us-east-1a, us-east-1b]\n"
			       "    market: spot-then-on-demand\n"
			       "  - name: head\n"
			       "    count: 1\n"
			       "    instance_types: [m5.large]\n"
			       "lifecycle:\n"
			       "  ttl: 12h\n"
			       "  max_hourly_cost: %s\n";

static const struct gc_plan_price prices[] = {
	{ "g5.xlarge", false, 1.006 },	{ "g5.xlarge", true, 0.45 },
	{ "g5.2xlarge", false, 1.212 }, { "g5.2xlarge", true, 0.5 },
	{ "m5.large", false, 0.096 },	{ "g4dn.xlarge", false, 0.526 },
};

#define assert_money(a, b)                                                 \
	do {                                                               \
		double a_ = (a), b_ = (b);                                 \
		if (fabs(a_ - b_) > 1e-9)                                  \
			fail_msg("%s is %.6f, expected %.6f", #a, a_, b_); \
	} while (0)

#define assert_contains(hay, needle)                                                  \
	do {                                                                          \
		if (!strstr((hay), (needle)))                                         \
			fail_msg("expected to find \"%s\" in:\n%s", (needle), (hay)); \
	} while (0)

static struct gc_spec *spec_load(const char *text)
{
	struct gc_spec *spec = NULL;
	struct gc_diags diags;
	struct gc_error err;

	gc_diags_init(&diags, "t.yaml");
	gc_error_init(&err);
	if (gc_spec_load_buffer(&spec, "t.yaml", text, strlen(text), NULL, &diags, &err)) {
		for (size_t i = 0; i < diags.nr; i++)
			print_message("%u:%u: %s\n", diags.items[i].line, diags.items[i].col,
				      diags.items[i].message);
		fail_msg("spec does not load: %s", err.message);
	}
	gc_diags_release(&diags);
	return spec;
}

struct fx {
	struct gc_spec *spec;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_error err;
	struct gc_plan_inputs in;
	char workers[GC_SPEC_HASH_LEN + 1], head[GC_SPEC_HASH_LEN + 1];
};

static void fx_init_text(struct fx *f, const char *text)
{
	memset(f, 0, sizeof(*f));
	f->spec = spec_load(text);
	gc_instance_list_init(&f->live);
	gc_plan_init(&f->plan);
	gc_error_init(&f->err);
	gc_spec_group_hash(&f->spec->groups[0], f->workers);
	if (f->spec->n_groups > 1)
		gc_spec_group_hash(&f->spec->groups[1], f->head);
	f->in.spec = f->spec;
	f->in.live = &f->live;
	f->in.prices = prices;
	f->in.n_prices = sizeof(prices) / sizeof(prices[0]);
	f->in.now = NOW;
}

static void fx_init(struct fx *f, unsigned workers, const char *max_cost)
{
	char text[1024];

	snprintf(text, sizeof(text), spec_fmt, workers, max_cost);
	fx_init_text(f, text);
}

static void fx_release(struct fx *f)
{
	gc_plan_release(&f->plan);
	gc_instance_list_release(&f->live);
	gc_spec_free(f->spec);
}

/* A live instance of cluster llm-train; group and hash NULL leave the tag out. */
static struct gc_instance *add(struct fx *f, const char *id, const char *group, const char *hash,
			       enum gc_instance_state state, const char *type, int64_t launch)
{
	struct gc_instance *inst = gc_instance_list_push(&f->live);

	inst->id = gc_xstrdup(id);
	inst->type = gc_xstrdup(type);
	inst->zone = gc_xstrdup("us-east-1a");
	inst->state = state;
	inst->state_name = gc_xstrdup(gc_instance_state_name(state));
	inst->launch_time = launch;
	gc_instance_set_tag(inst, GC_TAG_CLUSTER, "llm-train");
	if (group)
		gc_instance_set_tag(inst, GC_TAG_GROUP, group);
	if (hash)
		gc_instance_set_tag(inst, GC_TAG_SPEC_HASH, hash);
	return inst;
}

/* A current node as an apply under the spec's TTL leaves it: launched within the TTL
 * (launch is then seconds after NOW - 1h, so the order of launches stays) and tagged with
 * launch time + ttl. */
static struct gc_instance *current(struct fx *f, struct gc_instance *inst)
{
	char when[21];

	if (!f->spec->lifecycle.ttl_s || !inst->launch_time)
		return inst;
	inst->launch_time += NOW - 3600;
	gc_format_rfc3339(inst->launch_time + (int64_t)f->spec->lifecycle.ttl_s, when);
	gc_instance_set_tag(inst, GC_TAG_EXPIRES_AT, when);
	return inst;
}

/* A running, current worker. */
static struct gc_instance *worker(struct fx *f, const char *id, int64_t launch)
{
	return current(f, add(f, id, "workers", f->workers, GC_STATE_RUNNING, "g5.xlarge", launch));
}

static struct gc_instance *head(struct fx *f, const char *id)
{
	return current(f, add(f, id, "head", f->head, GC_STATE_RUNNING, "m5.large", 1000));
}

static int build(struct fx *f)
{
	gc_error_init(&f->err);
	return gc_plan_build(&f->plan, &f->in, &f->err);
}

static void build_ok(struct fx *f)
{
	if (build(f))
		fail_msg("gc_plan_build failed: %s", f->err.message);
}

static const struct gc_plan_group *group(const struct gc_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_groups; i++)
		if (strcmp(p->groups[i].name, name) == 0)
			return &p->groups[i];
	fail_msg("no plan group '%s'", name);
	abort(); /* not reached: fail_msg does not return */
}

static const struct gc_plan_node *node(const struct gc_plan *p, const char *id)
{
	for (size_t i = 0; i < p->n_groups; i++)
		for (size_t j = 0; j < p->groups[i].n_nodes; j++)
			if (strcmp(p->groups[i].nodes[j].inst->id, id) == 0)
				return &p->groups[i].nodes[j];
	fail_msg("no plan node '%s'", id);
	abort(); /* not reached: fail_msg does not return */
}

static void assert_action(const struct gc_plan *p, const char *id, enum gc_plan_action a,
			  const char *reason)
{
	const struct gc_plan_node *n = node(p, id);

	if (n->action != a)
		fail_msg("%s: action %s, expected %s (%s)", id, gc_plan_action_name(n->action),
			 gc_plan_action_name(a), n->reason);
	if (reason)
		assert_string_equal(n->reason, reason);
}

/* ---- the spec hash --------------------------------------------------------------- */

static void group_hash_of(const char *group_yaml, char out[GC_SPEC_HASH_LEN + 1])
{
	char text[1024];
	struct gc_spec *spec;

	snprintf(text, sizeof(text),
		 "name: c\nprovider: {name: aws, region: us-east-1}\nnode_groups:\n%s", group_yaml);
	spec = spec_load(text);
	gc_spec_group_hash(&spec->groups[0], out);
	gc_spec_free(spec);
}

#define BASE_GROUP                                                                \
	"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n" \
	"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"   \
	"    disk_gb: 200\n"

static void test_hash(void **state)
{
	char base[GC_SPEC_HASH_LEN + 1], h[GC_SPEC_HASH_LEN + 1];
	char want_hex[GC_SHA256_HEX_LEN];
	/* the documented encoding: netstrings of a version, the image as written, the disk */
	static const char enc[] = "22:gpucluster-spec-hash-2,12:ubuntu-22.04,3:200,";
	static const char *const changed[] = {
		/* image, as an alias and as an id */
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-24.04\n"
		"    disk_gb: 200\n",
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ami-0123456789abcdef0\n"
		"    disk_gb: 200\n",
		/* disk */
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 201\n",
	};
	static const char *const same[] = {
		/* types, market and spot price are judged from the instance itself (see
		 * instance_fits in plan.c), so they stay out of the hash */
		"  - name: w\n    count: 2\n    instance_types: [g6.xlarge, g5.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge, g4dn.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.2xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		/* market */
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot-then-on-demand\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		/* spot price, also dropped to the default */
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.76\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot\n    image: ubuntu-22.04\n    disk_gb: 200\n",
		/* count, zones, placement and the group's name do not replace nodes */
		"  - name: w\n    count: 7\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		"  - name: w\n    count: 2\n    instance_types: [g5.xlarge, g6.xlarge]\n"
		"    zones: [us-east-1a, us-east-1c]\n    placement: same-zone\n"
		"    market: spot\n    max_spot_price: 0.75\n    image: ubuntu-22.04\n"
		"    disk_gb: 200\n",
		"  - name: other\n    disk_gb: 200\n    image: ubuntu-22.04\n    count: 0\n"
		"    max_spot_price: 0.75\n    market: spot\n"
		"    instance_types: [g5.xlarge, g6.xlarge]\n",
	};

	(void)state;
	group_hash_of(BASE_GROUP, base);
	assert_int_equal(strlen(base), GC_SPEC_HASH_LEN);
	assert_int_equal(strspn(base, "0123456789abcdef"), GC_SPEC_HASH_LEN);
	gc_sha256_hex(enc, strlen(enc), want_hex);
	assert_memory_equal(base, want_hex, GC_SPEC_HASH_LEN);
	group_hash_of(BASE_GROUP, h);
	assert_string_equal(base, h);

	for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++) {
		group_hash_of(changed[i], h);
		if (strcmp(base, h) == 0)
			fail_msg("variant %zu did not change the hash", i);
	}
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		group_hash_of(same[i], h);
		if (strcmp(base, h) != 0)
			fail_msg("variant %zu changed the hash", i);
	}
}

/* ---- decisions ------------------------------------------------------------------- */

static void test_empty_cluster(void **state)
{
	struct fx f;
	const struct gc_plan_group *w, *h;

	(void)state;
	fx_init(&f, 4, "100");
	build_ok(&f);
	assert_int_equal(f.plan.n_groups, 2);
	w = group(&f.plan, "workers");
	h = group(&f.plan, "head");
	assert_ptr_equal(w->spec, &f.spec->groups[0]);
	assert_string_equal(w->spec_hash, f.workers);
	assert_int_equal(w->want, 4);
	assert_int_equal(w->create, 4);
	assert_int_equal(w->first_slot, 0);
	assert_int_equal(w->replace, 0);
	assert_int_equal(w->n_nodes, 0);
	assert_int_equal(h->create, 1);
	assert_int_equal(f.plan.n_create, 5);
	assert_int_equal(f.plan.n_terminate + f.plan.n_replace + f.plan.n_keep, 0);
	assert_true(gc_plan_has_changes(&f.plan));
	assert_int_equal(f.plan.expires_at, NOW + 12 * 3600);
	fx_release(&f);
}

static void test_exact_match(void **state)
{
	struct fx f;
	const struct gc_plan_group *w;

	(void)state;
	fx_init(&f, 3, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 200);
	worker(&f, "i-03", 300);
	head(&f, "i-10");
	build_ok(&f);
	assert_false(gc_plan_has_changes(&f.plan));
	assert_int_equal(f.plan.n_groups, 2);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 3);
	assert_int_equal(w->create, 0);
	assert_int_equal(w->first_slot, 3);
	assert_int_equal(f.plan.n_keep, 4);
	assert_action(&f.plan, "i-02", GC_PLAN_KEEP, "");
	fx_release(&f);
}

static void test_scale_down(void **state)
{
	struct fx f;
	struct gc_instance *sick;

	(void)state;
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-05", 500);       /* newest */
	sick = worker(&f, "i-02", 50); /* oldest, but unhealthy */
	gc_instance_set_tag(sick, GC_TAG_HEALTH, "failed");
	worker(&f, "i-03", 300);
	worker(&f, "i-04", 400);
	head(&f, "i-10");
	build_ok(&f);

	assert_action(&f.plan, "i-02", GC_PLAN_TERMINATE, "surplus: count 5 -> 2 (unhealthy)");
	assert_action(&f.plan, "i-05", GC_PLAN_TERMINATE, "surplus: count 5 -> 2 (newest first)");
	assert_action(&f.plan, "i-04", GC_PLAN_TERMINATE, "surplus: count 5 -> 2 (newest first)");
	assert_action(&f.plan, "i-01", GC_PLAN_KEEP, NULL);
	assert_action(&f.plan, "i-03", GC_PLAN_KEEP, NULL);
	assert_int_equal(group(&f.plan, "workers")->keep, 2);
	assert_int_equal(group(&f.plan, "workers")->create, 0);
	assert_int_equal(f.plan.n_terminate, 3);
	assert_int_equal(f.plan.n_create, 0);
	/* listed terminate first, then keep, each by id */
	assert_string_equal(group(&f.plan, "workers")->nodes[0].inst->id, "i-02");
	assert_string_equal(group(&f.plan, "workers")->nodes[1].inst->id, "i-04");
	assert_string_equal(group(&f.plan, "workers")->nodes[2].inst->id, "i-05");
	assert_string_equal(group(&f.plan, "workers")->nodes[3].inst->id, "i-01");
	fx_release(&f);
}

static void test_scale_down_ties(void **state)
{
	struct fx f;

	(void)state;
	/* pending goes before running, whatever its age; equal launch times go by id,
	 * highest first */
	fx_init(&f, 2, "100");
	worker(&f, "i-0a", 100);
	worker(&f, "i-0c", 100);
	worker(&f, "i-0b", 100);
	add(&f, "i-00", "workers", f.workers, GC_STATE_PENDING, "g5.xlarge", 10);
	head(&f, "i-10");
	build_ok(&f);
	assert_action(&f.plan, "i-00", GC_PLAN_TERMINATE, "surplus: count 4 -> 2 (still pending)");
	assert_action(&f.plan, "i-0c", GC_PLAN_TERMINATE, "surplus: count 4 -> 2 (newest first)");
	assert_action(&f.plan, "i-0a", GC_PLAN_KEEP, NULL);
	assert_action(&f.plan, "i-0b", GC_PLAN_KEEP, NULL);
	fx_release(&f);

	/* scaled to zero */
	fx_init(&f, 0, "100");
	worker(&f, "i-0a", 100);
	head(&f, "i-10");
	build_ok(&f);
	assert_action(&f.plan, "i-0a", GC_PLAN_TERMINATE, "surplus: count 1 -> 0 (newest first)");
	assert_int_equal(group(&f.plan, "workers")->keep, 0);
	fx_release(&f);
}

static void test_scale_up(void **state)
{
	struct fx f;
	const struct gc_plan_group *w;

	(void)state;
	fx_init(&f, 4, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 200);
	head(&f, "i-10");
	build_ok(&f);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 2);
	assert_int_equal(w->create, 2);
	assert_int_equal(w->replace, 0);
	assert_int_equal(w->first_slot, 2);
	assert_int_equal(group(&f.plan, "head")->create, 0);
	assert_int_equal(group(&f.plan, "head")->first_slot, 1);
	assert_int_equal(f.plan.n_create, 2);
	fx_release(&f);
}

static void test_replace(void **state)
{
	struct fx f;
	const struct gc_plan_group *w;
	char reason[160];

	(void)state;
	fx_init(&f, 4, "100");
	worker(&f, "i-01", 100);
	add(&f, "i-02", "workers", "0123456789ab", GC_STATE_RUNNING, "g4dn.xlarge", 200);
	add(&f, "i-03", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.2xlarge", 300);
	add(&f, "i-04", "workers", NULL, GC_STATE_RUNNING, "g5.xlarge", 400);
	head(&f, "i-10");
	build_ok(&f);

	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 1);
	assert_int_equal(w->replace, 3);
	assert_int_equal(w->create, 3);
	assert_int_equal(w->first_slot, 1);
	assert_action(&f.plan, "i-02", GC_PLAN_REPLACE,
		      "instance type g4dn.xlarge is no longer in instance_types");
	snprintf(reason, sizeof(reason), "image or disk_gb changed (spec-hash 0123456789ab -> %s)",
		 f.workers);
	assert_action(&f.plan, "i-03", GC_PLAN_REPLACE, reason);
	snprintf(reason, sizeof(reason), "no spec-hash tag (the group's is %s)", f.workers);
	assert_action(&f.plan, "i-04", GC_PLAN_REPLACE, reason);
	assert_int_equal(f.plan.n_replace, 3);
	assert_int_equal(f.plan.n_create, 3);
	assert_int_equal(f.plan.n_terminate, 0);
	fx_release(&f);
}

static void test_replace_reasons(void **state)
{
	struct fx f;

	(void)state;
	/* on-demand group: a spot instance of a listed type is out of date */
	fx_init_text(&f,
		     "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
		     "node_groups:\n"
		     "  - {name: a, count: 1, instance_types: [g5.xlarge]}\n"
		     "  - {name: b, count: 1, instance_types: [g5.xlarge], market: spot}\n"
		     "  - {name: c, count: 1, instance_types: [g5.xlarge],"
		     " image: ami-0123456789abcdef0}\n");
	add(&f, "i-a", "a", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 1)->spot = true;
	add(&f, "i-b", "b", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 1);
	add(&f, "i-c", "c", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 1)->image =
		gc_xstrdup("ami-00000000000000000");
	build_ok(&f);
	assert_action(&f.plan, "i-a", GC_PLAN_REPLACE,
		      "market changed to on-demand (this is a spot instance)");
	assert_action(&f.plan, "i-b", GC_PLAN_REPLACE,
		      "market changed to spot (this is an on-demand instance)");
	assert_action(&f.plan, "i-c", GC_PLAN_REPLACE,
		      "image changed: ami-00000000000000000 -> ami-0123456789abcdef0");
	fx_release(&f);
}

/* Adding a fallback type or widening the market replaces nothing that still fits. */
static void test_fits_without_replace(void **state)
{
	struct fx f;
	const struct gc_plan_group *w;

	(void)state;
	fx_init_text(&f,
		     "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
		     "node_groups:\n"
		     "  - {name: workers, count: 2, instance_types: [g6.xlarge, g5.xlarge],"
		     " market: spot-then-on-demand}\n");
	add(&f, "i-01", "workers", f.workers, GC_STATE_RUNNING, "g5.xlarge", 100)->spot = true;
	add(&f, "i-02", "workers", f.workers, GC_STATE_RUNNING, "g6.xlarge", 200);
	build_ok(&f);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 2);
	assert_int_equal(w->create, 0);
	assert_int_equal(w->replace, 0);
	assert_false(gc_plan_has_changes(&f.plan));
	fx_release(&f);
}

static void test_count_lowered_and_changed(void **state)
{
	struct fx f;
	const struct gc_plan_group *w;
	char reason[160];

	(void)state;
	/* four out of date, count 2: two are replaced, two only go */
	fx_init(&f, 2, "100");
	for (int i = 1; i <= 4; i++) {
		char id[16];

		snprintf(id, sizeof(id), "i-0%d", i);
		add(&f, id, "workers", "0123456789ab", GC_STATE_RUNNING, "g4dn.xlarge", i * 100);
	}
	head(&f, "i-10");
	build_ok(&f);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 0);
	assert_int_equal(w->create, 2);
	assert_int_equal(w->replace, 2);
	assert_int_equal(w->first_slot, 0);
	/* the newest go, the oldest are replaced (they serve until their successors run) */
	snprintf(reason, sizeof(reason),
		 "surplus: count 4 -> 2; instance type g4dn.xlarge is no longer in instance_types");
	assert_action(&f.plan, "i-04", GC_PLAN_TERMINATE, reason);
	assert_action(&f.plan, "i-03", GC_PLAN_TERMINATE, reason);
	assert_action(&f.plan, "i-02", GC_PLAN_REPLACE, NULL);
	assert_action(&f.plan, "i-01", GC_PLAN_REPLACE, NULL);
	assert_int_equal(f.plan.n_terminate, 2);
	assert_int_equal(f.plan.n_replace, 2);
	assert_int_equal(f.plan.n_create, 2);
	fx_release(&f);

	/* one current, three old, count 2: keep the current one, replace one old */
	fx_init(&f, 2, "100");
	worker(&f, "i-05", 50);
	add(&f, "i-01", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 100);
	add(&f, "i-02", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 200);
	add(&f, "i-03", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 300);
	head(&f, "i-10");
	build_ok(&f);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 1);
	assert_int_equal(w->replace, 1);
	assert_int_equal(w->create, 1);
	assert_int_equal(w->first_slot, 1);
	assert_action(&f.plan, "i-05", GC_PLAN_KEEP, NULL);
	assert_action(&f.plan, "i-01", GC_PLAN_REPLACE, NULL);
	assert_action(&f.plan, "i-02", GC_PLAN_TERMINATE, NULL);
	assert_action(&f.plan, "i-03", GC_PLAN_TERMINATE, NULL);
	fx_release(&f);

	/* too many current ones and an old one: the old one goes, not replaced */
	fx_init(&f, 1, "100");
	worker(&f, "i-05", 50);
	worker(&f, "i-06", 60);
	add(&f, "i-01", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 10);
	head(&f, "i-10");
	build_ok(&f);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 1);
	assert_int_equal(w->create, 0);
	assert_int_equal(w->replace, 0);
	assert_action(&f.plan, "i-05", GC_PLAN_KEEP, NULL);
	assert_action(&f.plan, "i-06", GC_PLAN_TERMINATE, "surplus: count 3 -> 1 (newest first)");
	assert_action(&f.plan, "i-01", GC_PLAN_TERMINATE, NULL);
	assert_true(strncmp(node(&f.plan, "i-01")->reason, "surplus: count 3 -> 1; ", 23) == 0);
	fx_release(&f);
}

static void test_not_counted(void **state)
{
	struct fx f;
	const struct gc_plan_group *w;

	(void)state;
	fx_init(&f, 3, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 200);
	add(&f, "i-03", "workers", f.workers, GC_STATE_STOPPED, "g5.xlarge", 300);
	add(&f, "i-04", "workers", f.workers, GC_STATE_STOPPING, "g5.xlarge", 300);
	add(&f, "i-05", "workers", f.workers, GC_STATE_TERMINATING, "g5.xlarge", 300);
	add(&f, "i-06", "workers", f.workers, GC_STATE_UNKNOWN, "g5.xlarge", 300);
	add(&f, "i-07", "workers", f.workers, GC_STATE_TERMINATED, "g5.xlarge", 300);
	head(&f, "i-10");
	build_ok(&f);
	w = group(&f.plan, "workers");
	assert_int_equal(w->keep, 2);
	assert_int_equal(w->create, 1);
	assert_int_equal(w->first_slot, 2);
	assert_int_equal(w->n_nodes, 6); /* the terminated one is not listed */
	assert_action(&f.plan, "i-03", GC_PLAN_IGNORE,
		      "stopped: not counted as capacity; destroy removes it");
	assert_action(&f.plan, "i-04", GC_PLAN_IGNORE,
		      "stopping: not counted as capacity; destroy removes it");
	assert_action(&f.plan, "i-05", GC_PLAN_IGNORE,
		      "terminating: already being released; not counted");
	assert_action(&f.plan, "i-06", GC_PLAN_IGNORE,
		      "unknown: not counted as capacity; destroy removes it");
	assert_int_equal(f.plan.n_ignore, 4);
	assert_int_equal(f.plan.n_terminate, 0);
	/* a stopped instance costs nothing per hour here */
	assert_money(f.plan.cost_now, 2 * 1.006 + 0.096);
	fx_release(&f);
}

static void test_expired(void **state)
{
	struct fx f;
	struct gc_instance *old;

	(void)state;
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100)->expires_at = NOW + 1;
	old = worker(&f, "i-02", 200);
	gc_instance_set_tag(old, GC_TAG_EXPIRES_AT, "2027-01-15T08:00:00Z"); /* == NOW */
	assert_int_equal(old->expires_at, NOW);
	head(&f, "i-10");
	build_ok(&f);
	assert_action(&f.plan, "i-02", GC_PLAN_TERMINATE, "expired at 2027-01-15T08:00:00Z");
	assert_action(&f.plan, "i-01", GC_PLAN_KEEP, NULL);
	assert_int_equal(group(&f.plan, "workers")->create, 1);
	assert_int_equal(group(&f.plan, "workers")->replace, 0);
	assert_int_equal(group(&f.plan, "workers")->first_slot, 1);
	fx_release(&f);
}

static void test_orphans(void **state)
{
	struct fx f;
	const struct gc_plan_group *g;

	(void)state;
	fx_init(&f, 1, "100");
	worker(&f, "i-01", 100);
	head(&f, "i-10");
	add(&f, "i-21", "old", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 1);
	add(&f, "i-20", "old", "0123456789ab", GC_STATE_STOPPED, "g5.xlarge", 1);
	add(&f, "i-22", "old", "0123456789ab", GC_STATE_TERMINATING, "g5.xlarge", 1);
	add(&f, "i-30", "older", NULL, GC_STATE_RUNNING, "g5.xlarge", 1);
	add(&f, "i-40", NULL, NULL, GC_STATE_PENDING, "g5.xlarge", 1);
	build_ok(&f);
	assert_int_equal(f.plan.n_groups, 5);
	/* spec groups first, then no tag, then by name */
	g = &f.plan.groups[2];
	assert_null(g->spec);
	assert_string_equal(g->name, "");
	assert_int_equal(g->n_nodes, 1);
	assert_action(&f.plan, "i-40", GC_PLAN_TERMINATE, "no gpucluster:group tag");
	g = &f.plan.groups[3];
	assert_string_equal(g->name, "old");
	assert_string_equal(g->spec_hash, "");
	assert_int_equal(g->want, 0);
	assert_int_equal(g->create, 0);
	assert_int_equal(g->n_nodes, 3);
	assert_action(&f.plan, "i-20", GC_PLAN_TERMINATE, "group 'old' is no longer in the spec");
	assert_action(&f.plan, "i-21", GC_PLAN_TERMINATE, "group 'old' is no longer in the spec");
	assert_action(&f.plan, "i-22", GC_PLAN_IGNORE, "terminating: already being released");
	assert_string_equal(f.plan.groups[4].name, "older");
	assert_int_equal(f.plan.n_terminate, 4);
	assert_int_equal(f.plan.n_ignore, 1);
	assert_int_equal(f.plan.n_create, 0);
	assert_true(gc_plan_has_changes(&f.plan));
	fx_release(&f);
}

static void test_overrides(void **state)
{
	struct fx f;
	const char *names[] = { "workers", "head", "workers" };
	unsigned counts[] = { 1, 3, 2 };
	const char *bad[] = { "wrokers" };
	const char *far[] = { "gpu" };
	unsigned big[] = { GC_SPEC_MAX_GROUP_COUNT + 1 };
	unsigned max[] = { GC_SPEC_MAX_GROUP_COUNT };

	(void)state;
	fx_init(&f, 4, "1000000");
	f.in.override_names = names;
	f.in.override_counts = counts;
	f.in.n_overrides = 3;
	build_ok(&f);
	assert_int_equal(group(&f.plan, "workers")->want, 2); /* the last one wins */
	assert_int_equal(group(&f.plan, "workers")->create, 2);
	assert_int_equal(group(&f.plan, "head")->want, 3);

	f.in.override_names = bad;
	f.in.n_overrides = 1;
	assert_int_equal(build(&f), -1);
	assert_int_equal(f.err.code, GC_EINVALID);
	assert_string_equal(
		f.err.message,
		"no node group 'wrokers' in cluster 'llm-train'; did you mean 'workers'?");
	assert_int_equal(f.plan.n_groups, 0);

	f.in.override_names = far;
	assert_int_equal(build(&f), -1);
	assert_string_equal(f.err.message, "no node group 'gpu' in cluster 'llm-train'");

	f.in.override_names = names;
	f.in.override_counts = big;
	assert_int_equal(build(&f), -1);
	assert_int_equal(f.err.code, GC_EINVALID);
	assert_string_equal(f.err.message,
			    "node group 'workers': count 1001 is out of range 0..1000");

	f.in.override_counts = max;
	build_ok(&f);
	assert_int_equal(group(&f.plan, "workers")->create, GC_SPEC_MAX_GROUP_COUNT);
	fx_release(&f);
}

static void test_cost(void **state)
{
	struct fx f;
	struct gc_instance *spot;

	(void)state;
	fx_init(&f, 4, "10");
	spot = worker(&f, "i-01", 100);
	spot->spot = true;
	worker(&f, "i-02", 200);
	worker(&f, "i-03", 300)->state = GC_STATE_PENDING;
	add(&f, "i-04", "workers", "0123456789ab", GC_STATE_RUNNING, "g4dn.xlarge", 400);
	add(&f, "i-05", "workers", f.workers, GC_STATE_STOPPED, "g5.2xlarge", 500);
	head(&f, "i-10");
	build_ok(&f);
	assert_money(node(&f.plan, "i-01")->price, 0.45);
	assert_true(node(&f.plan, "i-01")->price_known);
	assert_money(node(&f.plan, "i-05")->price, 1.212);
	/* spot-then-on-demand is budgeted at on-demand */
	assert_money(group(&f.plan, "workers")->create_price, 1.006);
	assert_true(group(&f.plan, "workers")->create_price_known);
	assert_money(f.plan.cost_now, 0.45 + 1.006 + 1.006 + 0.526 + 0.096);
	/* kept: 0.45 + 1.006 + 1.006 + head; created: one replacement */
	assert_money(f.plan.cost_after, 0.45 + 1.006 + 1.006 + 0.096 + 1.006);
	assert_true(f.plan.cost_known);
	assert_string_equal(f.plan.unknown_price, "");
	fx_release(&f);

	/* over the limit: GC_EQUOTA naming both figures and where the limit is set */
	fx_init(&f, 12, "12");
	head(&f, "i-10");
	assert_int_equal(build(&f), -1);
	assert_int_equal(f.err.code, GC_EQUOTA);
	assert_string_equal(f.err.message,
			    "t.yaml:16:20: max_hourly_cost 12.00 USD/h exceeded: "
			    "the plan costs 12.17 USD/h");
	/* still filled in, to be shown with the error */
	assert_int_equal(f.plan.n_create, 12);
	assert_money(f.plan.cost_after, 12 * 1.006 + 0.096);
	fx_release(&f);

	/* a market spot group is budgeted at spot; exactly at the limit passes */
	fx_init_text(&f,
		     "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
		     "node_groups:\n"
		     "  - {name: s, count: 4, instance_types: [g5.xlarge], market: spot}\n"
		     "lifecycle: {max_hourly_cost: 1.8}\n");
	build_ok(&f);
	assert_money(f.plan.groups[0].create_price, 0.45);
	assert_money(f.plan.cost_after, 1.8);
	assert_int_equal(f.plan.expires_at, 0);
	fx_release(&f);

	/* a plan that creates nothing is never refused, even over the limit */
	fx_init(&f, 2, "1");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 200);
	worker(&f, "i-03", 300);
	head(&f, "i-10");
	build_ok(&f);
	assert_int_equal(f.plan.n_terminate, 1);
	assert_money(f.plan.cost_after, 2 * 1.006 + 0.096);
	/* but the cluster is over its cap, and that needs the user's attention */
	assert_true(f.plan.over_cap);
	assert_true(gc_plan_needs_action(&f.plan));
	fx_release(&f);

	/* matching the spec's counts while over the cap: no change, still a problem */
	fx_init(&f, 2, "1");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 200);
	head(&f, "i-10");
	build_ok(&f);
	assert_false(gc_plan_has_changes(&f.plan));
	assert_true(f.plan.over_cap);
	assert_true(gc_plan_needs_action(&f.plan));
	fx_release(&f);

	/* within the cap, nothing to do */
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 200);
	head(&f, "i-10");
	build_ok(&f);
	assert_false(f.plan.over_cap);
	assert_false(gc_plan_needs_action(&f.plan));
	fx_release(&f);
}

/* The case: a cap between 2 x p4d and 2 x p5, p5 a fallback. */
static const char p4d_p5[] = "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
			     "node_groups:\n"
			     "  - {name: w, count: 2, instance_types: [p4d.24xlarge, p5.48xlarge],"
			     " market: %s%s}\n"
			     "lifecycle: {max_hourly_cost: 80}\n";

static const struct gc_plan_price gpu_prices[] = {
	{ "p4d.24xlarge", false, 32.7726 },
	{ "p4d.24xlarge", true, 11.47 },
	{ "p5.48xlarge", false, 98.32 },
	{ "p5.48xlarge", true, 34.41 },
};

static void fx_gpu(struct fx *f, const char *market, const char *extra)
{
	char text[512];

	snprintf(text, sizeof(text), p4d_p5, market, extra);
	fx_init_text(f, text);
	f->in.prices = gpu_prices;
	f->in.n_prices = sizeof(gpu_prices) / sizeof(gpu_prices[0]);
}

static void test_worst_case(void **state)
{
	struct fx f;
	const struct gc_plan_group *g;

	(void)state;
	/* on-demand: likely 2 x p4d, worst 2 x p5; the plan builds (the likely case fits)
	 * and names p5 as the candidate apply skips */
	fx_gpu(&f, "on-demand", "");
	build_ok(&f);
	g = &f.plan.groups[0];
	assert_money(g->create_price, 32.7726);
	assert_money(g->worst_price, 98.32);
	assert_string_equal(g->worst_type, "p5.48xlarge");
	assert_false(g->worst_spot);
	assert_money(f.plan.cost_after, 2 * 32.7726);
	assert_money(f.plan.cost_worst, 2 * 98.32);
	assert_true(f.plan.cost_worst_known);
	assert_false(f.plan.over_cap);
	assert_int_equal(f.plan.n_skips, 1);
	assert_string_equal(f.plan.skips[0].type, "p5.48xlarge");
	assert_false(f.plan.skips[0].spot);
	assert_int_equal(f.plan.skips[0].count, 2);
	assert_money(f.plan.skips[0].total, 196.64);
	fx_release(&f);

	/* spot-then-on-demand: spot candidates at today's price fit (2 x 34.41), the
	 * on-demand p5 does not; the worst case bounds spot at on-demand */
	fx_gpu(&f, "spot-then-on-demand", "");
	build_ok(&f);
	assert_money(f.plan.cost_worst, 2 * 98.32);
	assert_int_equal(f.plan.n_skips, 1);
	assert_string_equal(f.plan.skips[0].type, "p5.48xlarge");
	assert_false(f.plan.skips[0].spot);
	fx_release(&f);

	/* spot with max_spot_price: the bid bounds the worst case, below on-demand */
	fx_gpu(&f, "spot", ", max_spot_price: 40");
	build_ok(&f);
	g = &f.plan.groups[0];
	assert_money(g->create_price, 11.47);
	assert_money(g->worst_price, 40);
	assert_true(g->worst_spot);
	assert_money(f.plan.cost_worst, 80);
	assert_int_equal(f.plan.n_skips, 0);
	fx_release(&f);

	/* spot without a bid: bounded by the on-demand price */
	fx_gpu(&f, "spot", "");
	build_ok(&f);
	assert_money(f.plan.groups[0].worst_price, 98.32);
	assert_int_equal(f.plan.n_skips, 0); /* today's spot prices fit */
	fx_release(&f);
}

static void test_worst_case_unknown(void **state)
{
	struct fx f;
	const struct gc_plan_price no_p5[] = { { "p4d.24xlarge", false, 32.7726 } };
	struct gc_buf b;

	(void)state;
	/* the fallback's price is unknown: the worst case is unknown, never 0 */
	fx_gpu(&f, "on-demand", "");
	f.in.prices = no_p5;
	f.in.n_prices = 1;
	build_ok(&f);
	assert_money(f.plan.cost_after, 2 * 32.7726);
	assert_true(f.plan.cost_after_known);
	assert_false(f.plan.cost_worst_known);
	assert_false(f.plan.groups[0].worst_price_known);
	assert_int_equal(f.plan.n_skips, 0);
	gc_buf_init(&b, GC_BUF_DEFAULT_MAX);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data,
			"p4d.24xlarge at 32.77 USD/h each; at worst unknown (a fallback "
			"has no price)\n");
	assert_contains(b.data, "Worst case after: unknown (");
	gc_buf_release(&b);
	fx_release(&f);
}

static void test_unknown_price(void **state)
{
	struct fx f;
	const struct gc_plan_price few[] = { { "g5.xlarge", false, 1.006 },
					     { "m5.large", false, -1 } };

	(void)state;
	fx_init(&f, 2, "100");
	f.in.prices = few;
	f.in.n_prices = 2;
	worker(&f, "i-01", 100)->spot = true; /* no spot price in the table */
	head(&f, "i-10");
	assert_int_equal(build(&f), -1);
	assert_int_equal(f.err.code, GC_EINVALID);
	/* the price cost_after needs is named first */
	assert_string_equal(f.err.message,
			    "cannot check max_hourly_cost: no price for g5.xlarge (spot)");
	assert_false(f.plan.cost_known);
	assert_false(f.plan.cost_now_known);
	assert_false(f.plan.cost_after_known);
	assert_false(node(&f.plan, "i-01")->price_known);
	assert_money(node(&f.plan, "i-01")->price, 0);
	assert_int_equal(f.plan.n_create, 1);
	fx_release(&f);

	/* no limit: the plan builds, cost unknown */
	fx_init_text(&f,
		     "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
		     "node_groups:\n  - {name: w, count: 2, instance_types: [p5.48xlarge]}\n");
	build_ok(&f);
	assert_false(f.plan.cost_known);
	assert_true(f.plan.cost_now_known); /* nothing runs yet */
	assert_false(f.plan.cost_after_known);
	assert_false(f.plan.groups[0].create_price_known);
	assert_string_equal(f.plan.unknown_price, "p5.48xlarge (on-demand)");
	fx_release(&f);

	/* a limit, but nothing to create: not checked */
	fx_init(&f, 1, "100");
	f.in.n_prices = 0;
	worker(&f, "i-01", 100);
	head(&f, "i-10");
	build_ok(&f);
	assert_false(f.plan.cost_known);
	fx_release(&f);
}

static void test_foreign_and_duplicates(void **state)
{
	struct fx f;
	struct gc_instance *x;

	(void)state;
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100);
	x = worker(&f, "i-99", 100);
	gc_instance_set_tag(x, GC_TAG_CLUSTER, "llm-train-2");
	assert_int_equal(build(&f), -1);
	assert_int_equal(f.err.code, GC_EINVALID);
	assert_string_equal(f.err.message,
			    "instance 'i-99' is tagged for cluster 'llm-train-2', "
			    "not 'llm-train'; refusing to plan with it");
	assert_int_equal(f.plan.n_groups, 0);
	/* terminated ones are never looked at, whoever they belong to */
	x->state = GC_STATE_TERMINATED;
	build_ok(&f);
	fx_release(&f);

	/* the same instance twice (a repeated page) counts once */
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-01", 100);
	head(&f, "i-10");
	build_ok(&f);
	assert_int_equal(group(&f.plan, "workers")->n_nodes, 1);
	assert_int_equal(group(&f.plan, "workers")->keep, 1);
	assert_int_equal(group(&f.plan, "workers")->create, 1);
	fx_release(&f);
}

/* The plan is the same whatever order discover listed the instances in. */
static void test_order_independent(void **state)
{
	static const char *const ids[] = { "i-07", "i-03", "i-01", "i-05", "i-02", "i-06" };
	static const int64_t launch[] = { 300, 300, 100, 500, 200, 100 };
	struct gc_buf first = GC_BUF_INIT(GC_BUF_DEFAULT_MAX), b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	(void)state;
	for (size_t rot = 0; rot < 6; rot++) {
		struct fx f;

		fx_init(&f, 4, "100");
		for (size_t i = 0; i < 6; i++) {
			size_t k = (i + rot) % 6;

			if (rot % 2)
				k = 5 - k;
			worker(&f, ids[k], launch[k]);
		}
		head(&f, "i-10");
		build_ok(&f);
		/* the newest, then of two at 300 the higher id */
		assert_action(&f.plan, "i-05", GC_PLAN_TERMINATE, NULL);
		assert_action(&f.plan, "i-07", GC_PLAN_TERMINATE, NULL);
		assert_action(&f.plan, "i-03", GC_PLAN_KEEP, NULL);
		gc_buf_reset(&b);
		assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, NULL), 0);
		if (rot == 0)
			assert_int_equal(gc_buf_add(&first, b.data, b.len), 0);
		else
			assert_string_equal(b.data, first.data);
		fx_release(&f);
	}
	gc_buf_release(&first);
	gc_buf_release(&b);
}

static void test_price_needs(void **state)
{
	struct fx f;
	struct gc_plan_price *v = NULL;
	size_t n = 0;

	(void)state;
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100)->spot = true;
	worker(&f, "i-02", 100)->spot = true;
	add(&f, "i-03", "workers", f.workers, GC_STATE_STOPPED, "g5.2xlarge", 1);
	add(&f, "i-04", "workers", f.workers, GC_STATE_TERMINATED, "p5.48xlarge", 1);
	head(&f, "i-10");
	gc_plan_price_needs(f.spec, &f.live, &v, &n);
	/* every candidate apply may fall back to, spot and its on-demand bound, then the
	 * head's; the live instances' own are among them already */
	assert_int_equal(n, 5);
	assert_string_equal(v[0].type, "g5.xlarge");
	assert_true(v[0].spot);
	assert_string_equal(v[1].type, "g5.xlarge");
	assert_false(v[1].spot);
	assert_string_equal(v[2].type, "g5.2xlarge");
	assert_true(v[2].spot);
	assert_string_equal(v[3].type, "g5.2xlarge");
	assert_false(v[3].spot);
	assert_string_equal(v[4].type, "m5.large");
	assert_false(v[4].spot);
	for (size_t i = 0; i < n; i++)
		assert_true(v[i].usd_per_hour < 0);
	free(v);
	fx_release(&f);
}

/* spec_fmt (2 workers, no limit) with "ttl: 12h" replaced by ttl ("" leaves it out) and
 * extra lines appended to the workers' group. */
static void fx_init_ttl(struct fx *f, const char *ttl, const char *workers_extra)
{
	char text[1024], *at;

	snprintf(text, sizeof(text), spec_fmt, 2u, "100");
	at = strstr(text, "  ttl: 12h\n");
	memmove(at, at + strlen("  ttl: 12h\n"), strlen(at + strlen("  ttl: 12h\n")) + 1);
	if (*ttl) {
		char tail[512];

		snprintf(tail, sizeof(tail), "%s", at);
		snprintf(at, sizeof(text) - (size_t)(at - text), "  ttl: %s\n%s", ttl, tail);
	}
	if (*workers_extra) {
		char tail[768];

		at = strstr(text, "  - name: head");
		snprintf(tail, sizeof(tail), "%s", at);
		snprintf(at, sizeof(text) - (size_t)(at - text), "%s%s", workers_extra, tail);
	}
	fx_init_text(f, text);
}

/* A running worker launched at NOW - age with the deadline of a ttl of ttl_s (0: none). */
static struct gc_instance *aged(struct fx *f, const char *id, int64_t age, int64_t ttl_s)
{
	struct gc_instance *inst =
		add(f, id, "workers", f->workers, GC_STATE_RUNNING, "g5.xlarge", NOW - age);
	char when[21];

	if (ttl_s) {
		gc_format_rfc3339(NOW - age + ttl_s, when);
		gc_instance_set_tag(inst, GC_TAG_EXPIRES_AT, when);
	}
	return inst;
}

static void test_ttl_change(void **state)
{
	struct fx f;
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	(void)state;
	/* the ttl the nodes were launched with: no change */
	fx_init_ttl(&f, "2h", "");
	head(&f, "i-10");
	aged(&f, "i-01", 600, 7200);
	aged(&f, "i-02", 900, 7200 + GC_PLAN_TTL_SLACK_S); /* within the slack */
	build_ok(&f);
	assert_false(gc_plan_has_changes(&f.plan));
	assert_int_equal(f.plan.n_expiry, 0);
	fx_release(&f);

	/* 2h -> 4h: each kept node's deadline moves to its launch + 4h, in place */
	fx_init_ttl(&f, "4h", "");
	head(&f, "i-10");
	aged(&f, "i-01", 600, 7200);
	aged(&f, "i-02", 900, 7200);
	build_ok(&f);
	assert_true(gc_plan_has_changes(&f.plan));
	assert_int_equal(f.plan.n_expiry, 2);
	assert_int_equal(f.plan.n_create + f.plan.n_terminate + f.plan.n_replace, 0);
	assert_action(&f.plan, "i-01", GC_PLAN_KEEP, NULL);
	assert_true(node(&f.plan, "i-01")->expiry_moves);
	assert_int_equal(node(&f.plan, "i-01")->new_expires_at, NOW - 600 + 4 * 3600);
	assert_int_equal(node(&f.plan, "i-02")->new_expires_at, NOW - 900 + 4 * 3600);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data,
			"  ~ i-01  running  g5.xlarge  us-east-1a  expiry "
			"2027-01-15T09:50:00Z -> 2027-01-15T11:50:00Z (lifecycle.ttl, "
			"in place)\n");
	assert_contains(b.data, ", 2 nodes' expiry moved.\n");
	gc_buf_release(&b);
	fx_release(&f);

	/* shortened below a node's age: as soon as the cloud's timer allows, not the past */
	fx_init_ttl(&f, "1h", "");
	head(&f, "i-10");
	aged(&f, "i-01", 2 * 3600, 4 * 3600);
	build_ok(&f);
	assert_true(node(&f.plan, "i-01")->expiry_moves);
	assert_int_equal(node(&f.plan, "i-01")->new_expires_at, NOW + GC_PLAN_TTL_SLACK_S);
	fx_release(&f);
	/* ... and a node already due that soon is left as it is */
	fx_init_ttl(&f, "1h", "");
	head(&f, "i-10");
	aged(&f, "i-01", 2 * 3600, 2 * 3600 + 300);
	aged(&f, "i-02", 600, 3600);
	build_ok(&f);
	assert_false(gc_plan_has_changes(&f.plan));
	fx_release(&f);

	/* a ttl added to nodes launched without one: from now */
	fx_init_ttl(&f, "3h", "");
	head(&f, "i-10");
	aged(&f, "i-01", 600, 0);
	build_ok(&f);
	assert_int_equal(node(&f.plan, "i-01")->new_expires_at, NOW - 600 + 3 * 3600);
	fx_release(&f);

	/* the ttl removed: cleared, still in place */
	fx_init_ttl(&f, "", "");
	head(&f, "i-10");
	aged(&f, "i-01", 600, 7200);
	aged(&f, "i-02", 900, 0);
	build_ok(&f);
	assert_int_equal(f.plan.n_expiry, 1);
	assert_true(node(&f.plan, "i-01")->expiry_moves);
	assert_int_equal(node(&f.plan, "i-01")->new_expires_at, 0);
	assert_false(node(&f.plan, "i-02")->expiry_moves);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data, "expiry 2027-01-15T09:50:00Z -> none (lifecycle.ttl, in place)");
	gc_buf_release(&b);
	fx_release(&f);
}

static void assert_types(const struct gc_plan_group *g, const char *want)
{
	const char *types[8];
	size_t n = gc_plan_group_types(g, types);
	char got[256] = "";

	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "",
			 types[i]);
	assert_string_equal(got, want);
}

static void test_group_types(void **state)
{
	struct fx f;

	(void)state;
	/* no live node: the spec's order */
	fx_init_ttl(&f, "", "");
	build_ok(&f);
	assert_types(group(&f.plan, "workers"), "g5.xlarge,g5.2xlarge");
	fx_release(&f);

	/* a node of the second type: only that type */
	fx_init_ttl(&f, "", "");
	add(&f, "i-01", "workers", f.workers, GC_STATE_RUNNING, "g5.2xlarge", NOW - 60);
	build_ok(&f);
	assert_types(group(&f.plan, "workers"), "g5.2xlarge");
	fx_release(&f);

	/* mixed_types: that type first, then the others in the spec's order */
	fx_init_ttl(&f, "", "    mixed_types: true\n");
	add(&f, "i-01", "workers", f.workers, GC_STATE_RUNNING, "g5.2xlarge", NOW - 60);
	build_ok(&f);
	assert_types(group(&f.plan, "workers"), "g5.2xlarge,g5.xlarge");
	fx_release(&f);

	/* already mixed: the type most nodes run (ties: the earlier in the list); nodes
	 * that are replaced or stopped do not count */
	fx_init_ttl(&f, "", "");
	add(&f, "i-01", "workers", f.workers, GC_STATE_RUNNING, "g5.2xlarge", NOW - 60);
	add(&f, "i-02", "workers", f.workers, GC_STATE_RUNNING, "g5.xlarge", NOW - 60);
	add(&f, "i-03", "workers", f.workers, GC_STATE_STOPPED, "g5.2xlarge", NOW - 60);
	add(&f, "i-04", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.2xlarge", NOW - 60);
	build_ok(&f);
	assert_types(group(&f.plan, "workers"), "g5.xlarge");
	fx_release(&f);
}

/* ---- rendering ------------------------------------------------------------------- */

/* The fixture most rendering tests share: every kind of line. */
static void mixed(struct fx *f)
{
	struct gc_instance *x;

	fx_init(f, 5, "10");
	worker(f, "i-01", 100);
	worker(f, "i-02", 200);
	worker(f, "i-03", 300);
	add(f, "i-04", "workers", "0123456789ab", GC_STATE_RUNNING, "g4dn.xlarge", 400);
	add(f, "i-05", "workers", f->workers, GC_STATE_STOPPED, "g5.xlarge", 500);
	head(f, "i-10");
	head(f, "i-11");
	x = add(f, "i-20", "old", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 1);
	x->spot = true;
	x = add(f, "i-\x1b[2J", "old", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 1);
	x->spot = true;
	build_ok(f);
}

static void test_render_text(void **state)
{
	struct fx f;
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	(void)state;
	mixed(&f);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(
		b.data,
		"gpucluster will perform these actions on cluster 'llm-train' (aws us-east-1):\n\n");
	assert_contains(b.data,
			"  group workers: 5 \xc3\x97 g5.xlarge (fallback g5.2xlarge), "
			"spot-then-on-demand\n");
	assert_contains(b.data,
			"      + 2 new instances (1 replacing; count 4 -> 5), g5.xlarge "
			"at 1.01 USD/h each; at worst g5.2xlarge (on-demand) at 1.21 USD/h "
			"each\n");
	assert_contains(b.data,
			"    -/+ i-04       running  g4dn.xlarge  us-east-1a  instance "
			"type g4dn.xlarge is no longer in instance_types\n");
	assert_contains(b.data,
			"      ~ i-05       stopped  g5.xlarge    us-east-1a  stopped: "
			"not counted as capacity; destroy removes it\n");
	assert_contains(b.data, "        3 kept\n");
	assert_contains(b.data, "  group head: 1 \xc3\x97 m5.large, on-demand\n");
	assert_contains(b.data,
			"      - i-11       running  m5.large     us-east-1a  surplus: "
			"count 2 -> 1 (newest first)\n");
	assert_contains(b.data, "  group old: no longer in the spec\n");
	assert_contains(b.data,
			"      - i-20       running  g5.xlarge    us-east-1a  group 'old' "
			"is no longer in the spec\n");
	/* a control character in cloud text is shown, not sent to the terminal */
	assert_contains(b.data, "      - i-\\x1b[2J  running");
	assert_null(strchr(b.data, '\x1b'));
	assert_contains(b.data,
			"\nPlan: 2 to create (1 replacing), 3 to terminate, 4 kept, "
			"1 ignored.\n");
	/* now: 3 + 1 workers, 2 heads, 2 spot olds; after: 3 workers, 1 head, 2 new */
	assert_contains(b.data,
			"Hourly cost: 4.64 USD/h now -> 5.13 USD/h after (+0.49), "
			"limit 10.00 USD/h.\n");
	assert_contains(b.data, "New instances expire at 2027-01-15T20:00:00Z (ttl 12h).\n");
	/* the order of the blocks: spec groups, then those that left it */
	assert_true(strstr(b.data, "group workers") < strstr(b.data, "group head"));
	assert_true(strstr(b.data, "group head") < strstr(b.data, "group old"));
	/* replace is listed after terminate within a group: none here; keep lines are not */
	assert_null(strstr(b.data, "i-01"));

	/* colour: + green, - red, -/+ yellow, reset after each */
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, true), 0);
	assert_contains(b.data, "\033[32m  + 2 new instances");
	assert_contains(b.data, "\033[31m  - i-11");
	assert_contains(b.data, "\033[33m-/+ i-04");
	assert_contains(b.data, "\033[1mPlan:\033[0m 2 to create");
	fx_release(&f);

	/* a group with nothing to do is one line */
	fx_init(&f, 3, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 100);
	head(&f, "i-10");
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data,
			"  group head: 1 \xc3\x97 m5.large, on-demand: no changes (1 kept)\n");
	assert_contains(b.data,
			"      + 1 new instance (count 2 -> 3), g5.xlarge at 1.01 USD/h "
			"each; at worst g5.2xlarge (on-demand) at 1.21 USD/h each\n");
	assert_contains(b.data, "\nPlan: 1 to create, 0 to terminate, 3 kept.\n");
	/* the worst case next to the likely one: kept 2 x 1.006 + 0.096, one g5.2xlarge */
	assert_contains(b.data,
			"Hourly cost: 2.11 USD/h now -> 3.11 USD/h after (+1.01), "
			"limit 100.00 USD/h.\nWorst case after: 3.32 USD/h");
	fx_release(&f);

	/* over the cap with nothing to change: said, not "No changes" */
	fx_init(&f, 2, "1");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 100);
	head(&f, "i-10");
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_null(strstr(b.data, "No changes"));
	assert_contains(b.data,
			"Over the cost limit. Cluster 'llm-train' (aws us-east-1) "
			"matches the spec's counts (3 instances).\n");
	assert_contains(b.data,
			"Over the limit: the cluster costs 2.11 USD/h, above "
			"max_hourly_cost 1.00 USD/h; apply creates nothing more.");
	fx_release(&f);

	/* only replacements */
	fx_init(&f, 1, "100");
	add(&f, "i-01", "workers", "0123456789ab", GC_STATE_RUNNING, "g5.xlarge", 100);
	head(&f, "i-10");
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data, "      + 1 new instance (replacing 1), g5.xlarge");
	assert_contains(b.data, "Hourly cost: 1.10 USD/h now -> 1.10 USD/h after (no change)");
	fx_release(&f);
	gc_buf_release(&b);
}

static void test_render_text_no_changes(void **state)
{
	struct fx f;
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	(void)state;
	fx_init(&f, 2, "100");
	worker(&f, "i-01", 100);
	worker(&f, "i-02", 100);
	head(&f, "i-10");
	build_ok(&f);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_string_equal(b.data,
			    "No changes. Cluster 'llm-train' (aws us-east-1) matches the "
			    "spec (3 instances).\n\n"
			    "Hourly cost: 2.11 USD/h, limit 100.00 USD/h.\n");
	fx_release(&f);

	/* ignored instances are still shown, with a note */
	fx_init(&f, 1, "100");
	worker(&f, "i-01", 100);
	add(&f, "i-02", "workers", f.workers, GC_STATE_STOPPED, "g5.xlarge", 100);
	head(&f, "i-10");
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data,
			"No changes. Cluster 'llm-train' (aws us-east-1) matches the "
			"spec (2 instances).\n");
	assert_contains(b.data,
			"      ~ i-02  stopped  g5.xlarge  us-east-1a  stopped: not "
			"counted as capacity; destroy removes it\n");
	assert_contains(b.data, "\n1 instance is not counted (~); destroy removes it.\n");
	assert_null(strstr(b.data, "group head"));
	fx_release(&f);

	/* unknown cost */
	fx_init_text(&f,
		     "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
		     "node_groups:\n  - {name: w, count: 1, instance_types: [p5.48xlarge]}\n");
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data,
			"      + 1 new instance (count 0 -> 1), p5.48xlarge at an unknown price\n");
	assert_contains(b.data, "Worst case after: unknown (");
	assert_null(strstr(b.data, "0.00 USD/h after"));
	assert_contains(b.data,
			"Hourly cost: 0.00 USD/h now -> unknown after (no price for "
			"p5.48xlarge (on-demand)).\n");
	fx_release(&f);

	/* the cap is honoured */
	fx_init(&f, 2, "100");
	build_ok(&f);
	gc_buf_release(&b);
	gc_buf_init(&b, 20);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), -1);
	assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, NULL), -1);
	fx_release(&f);
	gc_buf_release(&b);
}

static json_t *get(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		fail_msg("no key '%s' in the JSON document", key);
	return v;
}

static void assert_json_int(json_t *o, const char *key, long long want)
{
	json_t *v = get(o, key);

	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), want);
}

static void assert_json_str(json_t *o, const char *key, const char *want)
{
	json_t *v = get(o, key);

	if (!want) {
		assert_true(json_is_null(v));
		return;
	}
	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
}

static void assert_json_money(json_t *o, const char *key, double want)
{
	json_t *v = get(o, key);

	assert_true(json_is_real(v));
	assert_money(json_real_value(v), want);
}

static void test_render_json(void **state)
{
	struct fx f;
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	json_error_t jerr;
	json_t *doc, *s, *groups, *g, *nodes, *n, *cost;

	(void)state;
	mixed(&f);
	assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, NULL), 0);
	doc = json_loads(b.data, 0, &jerr);
	if (!doc)
		fail_msg("bad JSON at %d: %s\n%s", jerr.line, jerr.text, b.data);
	assert_json_str(doc, "cluster", "llm-train");
	assert_json_str(doc, "cloud", "aws");
	assert_json_str(doc, "region", "us-east-1");
	assert_true(json_is_true(get(doc, "changes")));
	assert_json_str(doc, "expires_at", "2027-01-15T20:00:00Z");

	s = get(doc, "summary");
	assert_json_int(s, "create", 2);
	assert_json_int(s, "terminate", 3);
	assert_json_int(s, "replace", 1);
	assert_json_int(s, "keep", 4);
	assert_json_int(s, "ignore", 1);

	groups = get(doc, "groups");
	assert_int_equal(json_array_size(groups), 3);
	g = json_array_get(groups, 0);
	assert_json_str(g, "name", "workers");
	assert_true(json_is_true(get(g, "in_spec")));
	assert_json_int(g, "want", 5);
	assert_json_int(g, "keep", 3);
	assert_json_int(g, "create", 2);
	assert_json_int(g, "replace", 1);
	assert_json_int(g, "terminate", 0);
	assert_json_int(g, "ignore", 1);
	assert_json_int(g, "first_slot", 3);
	assert_json_str(g, "spec_hash", f.workers);
	assert_json_str(g, "market", "spot-then-on-demand");
	assert_json_str(g, "create_type", "g5.xlarge");
	assert_json_money(g, "create_price", 1.006);
	assert_json_str(g, "worst_type", "g5.2xlarge");
	assert_true(json_is_false(get(g, "worst_spot")));
	assert_json_money(g, "worst_price", 1.212);
	nodes = get(g, "nodes");
	assert_int_equal(json_array_size(nodes), 5);
	/* replace, ignore, then keep by id */
	n = json_array_get(nodes, 0);
	assert_json_str(n, "id", "i-04");
	assert_json_str(n, "action", "replace");
	assert_json_str(n, "reason", "instance type g4dn.xlarge is no longer in instance_types");
	assert_json_str(n, "state", "running");
	assert_json_str(n, "cloud_state", "running");
	assert_json_str(n, "type", "g4dn.xlarge");
	assert_json_str(n, "zone", "us-east-1a");
	assert_true(json_is_false(get(n, "spot")));
	assert_json_money(n, "price", 0.526);
	assert_json_str(n, "health", NULL);
	assert_json_str(n, "spec_hash", "0123456789ab");
	assert_json_str(n, "launch_time", "1970-01-01T00:06:40Z");
	assert_json_str(n, "expires_at", NULL);
	n = json_array_get(nodes, 1);
	assert_json_str(n, "id", "i-05");
	assert_json_str(n, "action", "ignore");
	assert_json_str(n, "state", "stopped");
	n = json_array_get(nodes, 2);
	assert_json_str(n, "id", "i-01");
	assert_json_str(n, "action", "keep");
	assert_json_str(n, "reason", "");

	g = json_array_get(groups, 2);
	assert_json_str(g, "name", "old");
	assert_true(json_is_false(get(g, "in_spec")));
	assert_json_int(g, "want", 0);
	assert_json_int(g, "terminate", 2);
	assert_json_str(g, "spec_hash", NULL);
	assert_json_str(g, "market", NULL);
	assert_json_str(g, "create_type", NULL);
	assert_true(json_is_null(get(g, "create_price")));
	n = json_array_get(get(g, "nodes"), 0);
	assert_json_str(n, "id", "i-\x1b[2J"); /* JSON escapes it itself */
	assert_true(json_is_true(get(n, "spot")));
	assert_json_money(n, "price", 0.45);

	cost = get(doc, "cost");
	assert_json_money(cost, "now", 4 * 1.006 + 0.526 + 2 * 0.096 + 2 * 0.45 - 1.006);
	assert_json_money(cost, "after", 3 * 1.006 + 0.096 + 2 * 1.006);
	assert_true(json_is_true(get(cost, "known")));
	assert_json_str(cost, "currency", "USD");
	assert_json_money(cost, "max_hourly_cost", 10);
	assert_json_str(cost, "unknown_price", NULL);
	assert_json_money(cost, "worst_after", 3 * 1.006 + 0.096 + 2 * 1.212);
	assert_true(json_is_false(get(cost, "over_cap")));
	assert_int_equal(json_array_size(get(cost, "skipped_candidates")), 0);
	/* money is printed short: no 5.1259999999999994 */
	assert_contains(b.data, "\"after\": 5.126,");
	json_decref(doc);
	fx_release(&f);

	/* unknown prices are null, not 0; no TTL, no limit, no changes */
	fx_init_text(&f,
		     "name: llm-train\nprovider: {name: aws, region: us-east-1}\n"
		     "node_groups:\n  - {name: w, count: 1, instance_types: [p5.48xlarge]}\n");
	add(&f, "i-01", "w", f.workers, GC_STATE_RUNNING, "p5.48xlarge", 1);
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, NULL), 0);
	doc = json_loads(b.data, 0, &jerr);
	assert_non_null(doc);
	assert_true(json_is_false(get(doc, "changes")));
	assert_json_str(doc, "expires_at", NULL);
	cost = get(doc, "cost");
	assert_true(json_is_null(get(cost, "now")));
	assert_true(json_is_null(get(cost, "after")));
	assert_true(json_is_null(get(cost, "worst_after")));
	assert_true(json_is_false(get(cost, "known")));
	assert_true(json_is_null(get(cost, "max_hourly_cost")));
	assert_json_str(cost, "unknown_price", "p5.48xlarge (on-demand)");
	g = json_array_get(get(doc, "groups"), 0);
	assert_true(json_is_null(get(g, "create_price")));
	assert_true(json_is_null(get(g, "worst_price")));
	assert_true(json_is_null(get(json_array_get(get(g, "nodes"), 0), "price")));
	assert_true(json_is_null(get(doc, "hours"))); /* no --hours */
	json_decref(doc);
	fx_release(&f);

	/* the candidates apply would skip for the cap; plan --hours' object goes in as given */
	fx_gpu(&f, "on-demand", "");
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, json_pack("{s:i}", "hours", 10)),
			 0);
	doc = json_loads(b.data, 0, &jerr);
	assert_non_null(doc);
	assert_json_int(get(doc, "hours"), "hours", 10);
	cost = get(doc, "cost");
	assert_json_money(cost, "after", 2 * 32.7726);
	assert_json_money(cost, "worst_after", 196.64);
	n = json_array_get(get(cost, "skipped_candidates"), 0);
	assert_json_str(n, "group", "w");
	assert_json_str(n, "type", "p5.48xlarge");
	assert_json_str(n, "market", "on-demand");
	assert_json_int(n, "count", 2);
	assert_json_money(n, "price", 98.32);
	assert_json_money(n, "cost_after", 196.64);
	json_decref(doc);
	fx_release(&f);

	/* text that is not UTF-8 still makes valid JSON */
	fx_init(&f, 1, "100");
	add(&f, "i-01", "gr\xff", NULL, GC_STATE_RUNNING, "g5.xlarge", 1);
	build_ok(&f);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, NULL), 0);
	doc = json_loads(b.data, 0, &jerr);
	assert_non_null(doc);
	assert_json_str(json_array_get(get(doc, "groups"), 2), "name", "gr\\xff");
	json_decref(doc);
	fx_release(&f);
	gc_buf_release(&b);
}

/* spec_fmt (2 workers, no ttl, no limit) with "  idle: IDLE" in lifecycle ("": none). */
static void fx_init_idle(struct fx *f, const char *idle)
{
	char text[1024], line[64] = "", *at;

	snprintf(text, sizeof(text), spec_fmt, 2u, "100");
	if (*idle)
		snprintf(line, sizeof(line), "  idle: %s\n", idle);
	at = strstr(text, "  ttl: 12h\n");
	memmove(at + strlen(line), at + strlen("  ttl: 12h\n"),
		strlen(at + strlen("  ttl: 12h\n")) + 1);
	memcpy(at, line, strlen(line));
	fx_init_text(f, text);
}

/* A kept node whose gpucluster:idle tag is not lifecycle.idle's is retagged in place; only
 * kept nodes, only those that differ (a tag that is not seconds included). */
static void test_idle_change(void **state)
{
	struct fx f;
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	json_error_t jerr;
	json_t *doc, *nodes;

	(void)state;
	/* the idle stop the nodes were launched with: no change */
	fx_init_idle(&f, "30m");
	gc_instance_set_tag(head(&f, "i-10"), GC_TAG_IDLE, "1800");
	gc_instance_set_tag(worker(&f, "i-01", 1), GC_TAG_IDLE, "1800");
	gc_instance_set_tag(worker(&f, "i-02", 2), GC_TAG_IDLE, "1800");
	build_ok(&f);
	assert_false(gc_plan_has_changes(&f.plan));
	assert_int_equal(f.plan.n_idle, 0);
	assert_string_equal(f.plan.idle_tag, "1800");
	fx_release(&f);

	/* 30m -> 45m: the nodes that differ, and only the kept ones */
	fx_init_idle(&f, "45m");
	gc_instance_set_tag(head(&f, "i-10"), GC_TAG_IDLE, "30m"); /* not seconds */
	gc_instance_set_tag(worker(&f, "i-01", 1), GC_TAG_IDLE, "1800");
	gc_instance_set_tag(worker(&f, "i-02", 2), GC_TAG_IDLE, "2700"); /* already 45m */
	gc_instance_set_tag(add(&f, "i-03", "workers", f.workers, GC_STATE_STOPPED, "g5.xlarge", 3),
			    GC_TAG_IDLE, "1800");
	build_ok(&f);
	assert_true(gc_plan_has_changes(&f.plan));
	assert_int_equal(f.plan.n_idle, 2);
	assert_string_equal(f.plan.idle_tag, "2700");
	assert_int_equal(f.plan.n_create + f.plan.n_terminate + f.plan.n_replace, 0);
	assert_true(node(&f.plan, "i-01")->idle_moves);
	assert_true(node(&f.plan, "i-10")->idle_moves);
	assert_false(node(&f.plan, "i-02")->idle_moves);
	assert_action(&f.plan, "i-03", GC_PLAN_IGNORE, NULL);
	assert_false(node(&f.plan, "i-03")->idle_moves);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data,
			"  ~ i-01  running  g5.xlarge  us-east-1a  idle stop 30m -> 45m "
			"(lifecycle.idle, in place)\n");
	assert_contains(b.data, "idle stop '30m' -> 45m (lifecycle.idle, in place)\n");
	assert_contains(b.data, ", idle stop of 2 nodes set to 45m.\n");
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_json(&b, &f.plan, f.spec, NULL), 0);
	doc = json_loads(b.data, 0, &jerr);
	if (!doc)
		fail_msg("bad JSON at %d: %s\n%s", jerr.line, jerr.text, b.data);
	assert_json_int(get(doc, "summary"), "idle", 2);
	nodes = get(json_array_get(get(doc, "groups"), 0), "nodes");
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		json_t *n = json_array_get(nodes, i);
		const char *id = json_string_value(get(n, "id"));

		if (strcmp(id, "i-01") == 0) {
			assert_true(json_is_true(get(n, "idle_moves")));
			assert_json_int(n, "idle_s", 1800);
			assert_json_int(n, "new_idle_s", 2700);
		} else if (strcmp(id, "i-02") == 0) {
			assert_true(json_is_false(get(n, "idle_moves")));
			assert_json_int(n, "new_idle_s", 2700);
		}
	}
	json_decref(doc);
	fx_release(&f);

	/* lifecycle.idle dropped: the tag goes, in place; nodes without one stay as they are */
	fx_init_idle(&f, "");
	head(&f, "i-10");
	gc_instance_set_tag(worker(&f, "i-01", 1), GC_TAG_IDLE, "1800");
	worker(&f, "i-02", 2);
	build_ok(&f);
	assert_int_equal(f.plan.n_idle, 1);
	assert_string_equal(f.plan.idle_tag, "");
	assert_true(node(&f.plan, "i-01")->idle_moves);
	assert_false(node(&f.plan, "i-02")->idle_moves);
	assert_false(node(&f.plan, "i-10")->idle_moves);
	gc_buf_reset(&b);
	assert_int_equal(gc_plan_render_text(&b, &f.plan, f.spec, false), 0);
	assert_contains(b.data, "idle stop 30m -> none (lifecycle.idle, in place)\n");
	assert_contains(b.data, ", idle stop of 1 node removed.\n");
	fx_release(&f);
	gc_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_empty_cluster),
		cmocka_unit_test(test_exact_match),
		cmocka_unit_test(test_scale_down),
		cmocka_unit_test(test_scale_down_ties),
		cmocka_unit_test(test_scale_up),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_replace_reasons),
		cmocka_unit_test(test_fits_without_replace),
		cmocka_unit_test(test_count_lowered_and_changed),
		cmocka_unit_test(test_not_counted),
		cmocka_unit_test(test_expired),
		cmocka_unit_test(test_orphans),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_unknown_price),
		cmocka_unit_test(test_foreign_and_duplicates),
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_price_needs),
		cmocka_unit_test(test_worst_case),
		cmocka_unit_test(test_worst_case_unknown),
		cmocka_unit_test(test_ttl_change),
		cmocka_unit_test(test_group_types),
		cmocka_unit_test(test_render_text),
		cmocka_unit_test(test_render_text_no_changes),
		cmocka_unit_test(test_render_json),
		cmocka_unit_test(test_idle_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
