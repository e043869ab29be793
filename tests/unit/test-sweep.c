/*
 * test-sweep.c: selectors and gc's classification (core/sweep.h), which calls nothing:
 * items are built here as a scan would return them. Covered: selector syntax and its
 * errors, matching, formatting; expired instances (at, before and after the deadline,
 * none set); orphaned key pairs and security groups (no instance left, only collected
 * instances left, a live one left, a terminating one left, another region's, the grace
 * period on either side, no created-at tag); selectors alone and narrowing the other
 * reasons; and the texts gc prints for kinds and reasons. Execution against a cloud is in
 * test-engine.c (its fake cloud) and tests/e2e/gc.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/sweep.h"

#define NOW  1763700000 /* 2025-11-21T04:40:00Z */
#define HOUR 3600

/* ---- selectors ------------------------------------------------------------------- */

static void test_selector_parse(void **state)
{
	struct gc_selectors s;
	struct gc_error err;
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	gc_selectors_init(&s);
	gc_error_init(&err);
	assert_int_equal(gc_selectors_add(&s, "run-id=123", &err), 0);
	assert_int_equal(gc_selectors_add(&s, "gpucluster:repository=acme/train", &err), 0);
	/* the same one twice counts once */
	assert_int_equal(gc_selectors_add(&s, "run-id=123", &err), 0);
	/* a value may hold '=' */
	assert_int_equal(gc_selectors_add(&s, "note=a=b", &err), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.tags[0].key, "gpucluster:run-id");
	assert_string_equal(s.tags[0].value, "123");
	assert_string_equal(s.filters[1].key, "gpucluster:repository");
	assert_string_equal(s.filters[1].value, "acme/train");
	assert_string_equal(s.tags[2].value, "a=b");
	/* the filters view follows the tags */
	for (size_t i = 0; i < s.n; i++) {
		assert_ptr_equal(s.filters[i].key, s.tags[i].key);
		assert_ptr_equal(s.filters[i].value, s.tags[i].value);
	}
	gc_selectors_format(&s, &b);
	assert_string_equal(b.data, "run-id=123 repository=acme/train note=a=b");
	gc_buf_release(&b);
	gc_selectors_release(&s);
	assert_int_equal(s.n, 0);
	gc_selectors_release(&s); /* twice is harmless */
}

static void expect_bad(const char *text, const char *words)
{
	struct gc_selectors s;
	struct gc_error err;

	gc_selectors_init(&s);
	gc_error_init(&err);
	assert_int_equal(gc_selectors_add(&s, text, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	if (!strstr(err.message, words))
		fail_msg("'%s': '%s' does not say '%s'", text, err.message, words);
	assert_int_equal(s.n, 0);
	gc_selectors_release(&s);
}

static void test_selector_errors(void **state)
{
	struct gc_selectors s;
	struct gc_error err;
	char many[32];

	(void)state;
	expect_bad("run-id", "is not KEY=VALUE");
	expect_bad("=123", "no key");
	expect_bad("gpucluster:=1", "no key");
	expect_bad("run-id=", "no value");
	expect_bad("Run-Id=1", "lowercase letters");
	expect_bad("run id=1", "lowercase letters");
	expect_bad("tag:x=1", "lowercase letters");
	expect_bad("run-id=a\nb", "control character");

	/* one key, two values: nothing could match */
	gc_selectors_init(&s);
	gc_error_init(&err);
	assert_int_equal(gc_selectors_add(&s, "run-id=1", &err), 0);
	assert_int_equal(gc_selectors_add(&s, "run-id=2", &err), -1);
	assert_non_null(strstr(err.message, "cannot both hold"));
	assert_int_equal(s.n, 1);
	gc_selectors_release(&s);

	/* bounded */
	gc_selectors_init(&s);
	for (int i = 0; i < GC_SELECTORS_MAX; i++) {
		snprintf(many, sizeof(many), "k%d=v", i);
		assert_int_equal(gc_selectors_add(&s, many, &err), 0);
	}
	assert_int_equal(gc_selectors_add(&s, "one-more=v", &err), -1);
	gc_selectors_release(&s);
}

static void test_selector_match(void **state)
{
	struct gc_selectors s;
	struct gc_error err;
	char kc[] = "gpucluster:cluster", kr[] = "gpucluster:run-id",
	     ka[] = "gpucluster:run-attempt";
	char kp[] = "run-id", vc[] = "c", v1[] = "1", v2[] = "2", v10[] = "10";
	const struct gc_tag run1[] = { { kc, vc }, { kr, v1 }, { ka, v2 } };
	const struct gc_tag run10[] = { { kr, v10 } };
	const struct gc_tag plain[] = { { kp, v1 } };

	(void)state;
	gc_selectors_init(&s);
	gc_error_init(&err);
	/* no selector matches everything */
	assert_true(gc_selectors_match(&s, run1, 3));
	assert_true(gc_selectors_match(NULL, NULL, 0));
	assert_int_equal(gc_selectors_add(&s, "run-id=1", &err), 0);
	assert_true(gc_selectors_match(&s, run1, 3));
	assert_false(gc_selectors_match(&s, run10, 1)); /* whole values, not prefixes */
	assert_false(gc_selectors_match(&s, plain, 1)); /* only our tags */
	assert_false(gc_selectors_match(&s, NULL, 0));
	assert_int_equal(gc_selectors_add(&s, "run-attempt=2", &err), 0);
	assert_true(gc_selectors_match(&s, run1, 3));
	assert_int_equal(gc_selectors_add(&s, "cluster=d", &err), 0);
	assert_false(gc_selectors_match(&s, run1, 3)); /* every one must hold */
	gc_selectors_release(&s);
}

/* ---- classification -------------------------------------------------------------- */

struct item_spec {
	enum gc_sweep_kind kind;
	const char *region;
	const char *cluster;
	enum gc_instance_state state;
	int64_t created;
	int64_t expires_at;
	const char *run; /* gpucluster:run-id, or NULL */
};

/* Builds a sweep as gc_sweep_scan would have filled it. */
static void build(struct gc_sweep *s, const struct item_spec *spec, size_t n)
{
	gc_sweep_init(s);
	s->items = gc_xcalloc(n, sizeof(*s->items));
	s->n = s->alloc = n;
	for (size_t i = 0; i < n; i++) {
		struct gc_sweep_item *it = &s->items[i];

		it->kind = spec[i].kind;
		it->region = gc_xstrdup(spec[i].region ? spec[i].region : "r1");
		it->id = gc_xasprintf("id-%zu", i);
		it->cluster = gc_xstrdup(spec[i].cluster);
		it->state = spec[i].kind == GC_SWEEP_INSTANCE ? spec[i].state : GC_STATE_UNKNOWN;
		it->created = spec[i].created;
		it->expires_at = spec[i].expires_at;
		it->tags = gc_xcalloc(3, sizeof(*it->tags));
		it->tags[0].key = gc_xstrdup("gpucluster:cluster");
		it->tags[0].value = gc_xstrdup(spec[i].cluster);
		it->n_tags = 1;
		if (spec[i].run) {
			it->tags[1].key = gc_xstrdup("gpucluster:run-id");
			it->tags[1].value = gc_xstrdup(spec[i].run);
			it->n_tags = 2;
		}
		gc_error_init(&it->err);
	}
}

static const struct gc_sweep_opts DEFAULTS = {
	.want = GC_SWEEP_EXPIRED | GC_SWEEP_ORPHANED,
	.now = NOW,
	.grace_s = HOUR,
};

#define INST(cl, st, exp)                                                  \
	{                                                                  \
		GC_SWEEP_INSTANCE, NULL, cl, st, NOW - 2 * HOUR, exp, NULL \
	}
#define KEY(cl, made)                                        \
	{                                                    \
		GC_SWEEP_KEYPAIR, NULL, cl, 0, made, 0, NULL \
	}
#define SG(cl, made)                                          \
	{                                                     \
		GC_SWEEP_SECGROUP, NULL, cl, 0, made, 0, NULL \
	}

static void test_expired(void **state)
{
	const struct item_spec spec[] = {
		INST("a", GC_STATE_RUNNING, NOW - 1),	     /* passed */
		INST("a", GC_STATE_RUNNING, NOW),	     /* just now: passed */
		INST("a", GC_STATE_RUNNING, NOW + 1),	     /* not yet */
		INST("a", GC_STATE_RUNNING, 0),		     /* no deadline */
		INST("a", GC_STATE_PENDING, NOW - HOUR),     /* pending, passed */
		INST("a", GC_STATE_STOPPED, NOW - HOUR),     /* stopped still costs disks */
		INST("a", GC_STATE_TERMINATING, NOW - HOUR), /* already going */
		INST("a", GC_STATE_STOPPED, 0), /* powered itself off (docs/internals/idle.md) */
	};
	const unsigned want[] = { GC_SWEEP_EXPIRED,
				  GC_SWEEP_EXPIRED,
				  0,
				  0,
				  GC_SWEEP_EXPIRED,
				  GC_SWEEP_EXPIRED | GC_SWEEP_STOPPED,
				  0,
				  GC_SWEEP_STOPPED };
	struct gc_sweep s;
	struct gc_sweep_opts o = DEFAULTS;

	(void)state;
	build(&s, spec, sizeof(spec) / sizeof(spec[0]));
	gc_sweep_classify(&s, &o);
	for (size_t i = 0; i < s.n; i++)
		if (s.items[i].why != want[i])
			fail_msg("item %zu: why %u, want %u", i, s.items[i].why, want[i]);
	assert_int_equal(gc_sweep_count(&s), 5);

	/* --orphaned alone never collects an instance */
	o.want = GC_SWEEP_ORPHANED;
	gc_sweep_classify(&s, &o);
	assert_int_equal(gc_sweep_count(&s), 0);
	gc_sweep_release(&s);
}

static void test_orphaned(void **state)
{
	const struct item_spec spec[] = {
		/* 0-1: cluster gone entirely, made two hours ago: orphans */
		KEY("gone", NOW - 2 * HOUR),
		SG("gone", NOW - 2 * HOUR),
		/* 2-3: no instance yet, made a minute ago (an apply about to launch): kept */
		KEY("fresh", NOW - 60),
		SG("fresh", NOW - 60),
		/* 4-6: a live instance: kept, whatever their age */
		INST("live", GC_STATE_RUNNING, 0),
		KEY("live", NOW - 30 * 24 * HOUR),
		SG("live", NOW - 30 * 24 * HOUR),
		/* 7-9: the cluster's only instance expired and is collected: they go too */
		INST("exp", GC_STATE_RUNNING, NOW - HOUR),
		KEY("exp", NOW - 3 * HOUR),
		SG("exp", NOW - 3 * HOUR),
		/* 10-11: a terminating instance may still hold the group: kept for now */
		INST("ending", GC_STATE_TERMINATING, 0),
		SG("ending", NOW - 3 * HOUR),
		/* 12: made before created-at existed: its age is unknown, never an orphan */
		KEY("old", 0),
		/* 13: exactly as old as the grace period: goes */
		SG("edge", NOW - HOUR),
		/* 14: a live instance of the same cluster name in another region */
		{ GC_SWEEP_INSTANCE, "r2", "gone", GC_STATE_RUNNING, NOW, 0, NULL },
	};
	const unsigned O = GC_SWEEP_ORPHANED, E = GC_SWEEP_EXPIRED;
	const unsigned want[] = { O, O, 0, 0, 0, 0, 0, E, O, O, 0, 0, 0, O, 0 };
	struct gc_sweep s;
	struct gc_sweep_opts o = DEFAULTS;
	char why[32];

	(void)state;
	build(&s, spec, sizeof(spec) / sizeof(spec[0]));
	gc_sweep_classify(&s, &o);
	for (size_t i = 0; i < s.n; i++)
		if (s.items[i].why != want[i])
			fail_msg("item %zu: why %u, want %u", i, s.items[i].why, want[i]);

	/* a longer grace period spares them */
	o.grace_s = 3 * HOUR + 1;
	gc_sweep_classify(&s, &o);
	assert_int_equal(s.items[0].why, 0);
	assert_int_equal(s.items[8].why, 0);
	assert_int_equal(s.items[7].why, E);
	/* a zero one takes the fresh ones too */
	o.grace_s = 0;
	gc_sweep_classify(&s, &o);
	assert_int_equal(s.items[2].why, O);
	assert_int_equal(s.items[3].why, O);
	assert_int_equal(s.items[5].why, 0); /* never what a live instance uses */

	/* --expired alone: the expired cluster's instance goes, its resources wait */
	o = DEFAULTS;
	o.want = GC_SWEEP_EXPIRED;
	gc_sweep_classify(&s, &o);
	assert_int_equal(gc_sweep_count(&s), 1);
	assert_int_equal(s.items[7].why, E);
	gc_sweep_why_text(O | E | GC_SWEEP_SELECTED, why);
	assert_string_equal(why, "expired,orphaned,selected");
	gc_sweep_why_text(E | GC_SWEEP_SELECTED | GC_SWEEP_STOPPED, why);
	assert_string_equal(why, "expired,selected,stopped");
	gc_sweep_why_text(0, why);
	assert_string_equal(why, "");
	gc_sweep_release(&s);
}

static void test_selected(void **state)
{
	const struct item_spec spec[] = {
		{ GC_SWEEP_INSTANCE, NULL, "c", GC_STATE_RUNNING, NOW, 0, "7" },
		{ GC_SWEEP_INSTANCE, NULL, "c", GC_STATE_PENDING, NOW, NOW - 1, "7" },
		{ GC_SWEEP_KEYPAIR, NULL, "c", 0, NOW, 0, "7" },
		{ GC_SWEEP_SECGROUP, NULL, "c", 0, NOW, 0, "7" },
		/* 4-6: run 8 shares cluster d with run 7 */
		{ GC_SWEEP_INSTANCE, NULL, "d", GC_STATE_RUNNING, NOW, 0, "7" },
		{ GC_SWEEP_INSTANCE, NULL, "d", GC_STATE_RUNNING, NOW, 0, "8" },
		{ GC_SWEEP_SECGROUP, NULL, "d", 0, NOW - 9 * HOUR, 0, "7" },
		/* 7: run 8's expired instance */
		{ GC_SWEEP_INSTANCE, NULL, "e", GC_STATE_RUNNING, NOW, NOW - 1, "8" },
	};
	const unsigned S = GC_SWEEP_SELECTED, E = GC_SWEEP_EXPIRED;
	struct gc_selectors sel;
	struct gc_error err;
	struct gc_sweep s;
	struct gc_sweep_opts o = DEFAULTS;

	(void)state;
	gc_selectors_init(&sel);
	gc_error_init(&err);
	assert_int_equal(gc_selectors_add(&sel, "run-id=7", &err), 0);
	build(&s, spec, sizeof(spec) / sizeof(spec[0]));

	/* alone: everything of run 7, resources only where nothing else of the cluster stays */
	o.want = GC_SWEEP_SELECTED;
	o.sel = &sel;
	gc_sweep_classify(&s, &o);
	assert_int_equal(s.items[0].why, S);
	assert_int_equal(s.items[1].why, S);
	assert_int_equal(s.items[2].why, S);
	assert_int_equal(s.items[3].why, S);
	assert_int_equal(s.items[4].why, S);
	assert_int_equal(s.items[5].why, 0);
	assert_int_equal(s.items[6].why, 0); /* run 8's node uses it */
	assert_int_equal(s.items[7].why, 0);

	/* narrowing: --expired with run-id=7 is run 7's expired instances only */
	o.want = GC_SWEEP_EXPIRED;
	gc_sweep_classify(&s, &o);
	assert_int_equal(gc_sweep_count(&s), 1);
	assert_int_equal(s.items[1].why, E);
	assert_int_equal(s.items[7].why, 0);

	/* both: reasons add up */
	o.want = GC_SWEEP_EXPIRED | GC_SWEEP_SELECTED;
	gc_sweep_classify(&s, &o);
	assert_int_equal(s.items[1].why, E | S);
	assert_int_equal(s.items[0].why, S);
	gc_sweep_release(&s);
	gc_selectors_release(&sel);
}

/* A public address is kept by its own instance only: one whose instance is gone is an
 * orphan even while the rest of its cluster runs (docs/internals/fabric.md). */
static void test_address(void **state)
{
	const struct item_spec spec[] = {
		INST("c", GC_STATE_RUNNING, 0),				     /* id-0 */
		{ GC_SWEEP_ADDRESS, NULL, "c", 0, NOW - 2 * HOUR, 0, NULL }, /* for id-0 */
		{ GC_SWEEP_ADDRESS, NULL, "c", 0, NOW - 2 * HOUR, 0, NULL }, /* for a gone one */
		{ GC_SWEEP_ADDRESS, NULL, "c", 0, NOW - 60, 0, NULL },	     /* just made */
		{ GC_SWEEP_ADDRESS, NULL, "c", 0, NOW - 2 * HOUR, 0, NULL }, /* no instance tag */
	};
	const char *const of[] = { NULL, "id-0", "i-gone", "i-gone", NULL };
	const unsigned want[] = { 0, 0, GC_SWEEP_ORPHANED, 0, 0 };
	struct gc_sweep s;
	struct gc_sweep_opts o = DEFAULTS;

	(void)state;
	build(&s, spec, sizeof(spec) / sizeof(spec[0]));
	for (size_t i = 0; i < s.n; i++) {
		if (!of[i])
			continue;
		s.items[i].tags[s.items[i].n_tags].key = gc_xstrdup(GC_TAG_INSTANCE);
		s.items[i].tags[s.items[i].n_tags++].value = gc_xstrdup(of[i]);
	}
	gc_sweep_classify(&s, &o);
	for (size_t i = 0; i < s.n; i++)
		if (s.items[i].why != want[i])
			fail_msg("item %zu: why %u, want %u", i, s.items[i].why, want[i]);
	assert_string_equal(gc_sweep_kind_name(GC_SWEEP_ADDRESS), "address");
	gc_sweep_release(&s);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(gc_sweep_kind_name(GC_SWEEP_INSTANCE), "instance");
	assert_string_equal(gc_sweep_kind_name(GC_SWEEP_KEYPAIR), "key-pair");
	assert_string_equal(gc_sweep_kind_name(GC_SWEEP_SECGROUP), "security-group");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selector_parse), cmocka_unit_test(test_selector_errors),
		cmocka_unit_test(test_selector_match), cmocka_unit_test(test_expired),
		cmocka_unit_test(test_orphaned),       cmocka_unit_test(test_selected),
		cmocka_unit_test(test_names),	       cmocka_unit_test(test_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
