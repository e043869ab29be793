/*
 * test-quotacheck.c: plan's quota preflight (core/quotacheck.h) against a fake cloud:
 * the shortfall message, groups summed on one quota, spot falling back to on-demand,
 * sold-out candidates skipped, an unreadable quota said and not guessed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/quotacheck.h"

/* The fake account: a quota per market, a sold-out type, or a refusal. */
static struct {
	int64_t od_limit, od_used, spot_limit, spot_used;
	const char *sold_out;	 /* a type */
	const char *unsupported; /* a type whose quota the driver does not read */
	enum gc_errcode fail;
	unsigned calls;
} acct;

static int fake_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
		      struct gc_quota *out, struct gc_error *err)
{
	(void)p;
	(void)zone;
	acct.calls++;
	if (acct.fail)
		return gc_error_set(err, acct.fail, "not allowed to read quotas");
	if (acct.unsupported && !strcmp(type, acct.unsupported))
		return gc_error_set(err, GC_EUNSUPPORTED, "no quota read for '%s'", type);
	snprintf(out->name, sizeof(out->name), "%s", spot ? "spot vCPUs" : "on-demand vCPUs");
	snprintf(out->unit, sizeof(out->unit), "vCPUs");
	snprintf(out->where, sizeof(out->where), "the quota console");
	out->limit = spot ? acct.spot_limit : acct.od_limit;
	out->used = spot ? acct.spot_used : acct.od_used;
	out->per_node = 4;
	out->sold_out = acct.sold_out && !strcmp(type, acct.sold_out);
	return 0;
}

static const struct gc_provider_ops fake_ops = { .name = "fake", .quota = fake_quota };

static char type_a[] = "a.large", type_b[] = "b.large";
static char n_head[] = "head", n_workers[] = "workers";
static char *types_ab[] = { type_a, type_b };
static char *types_b[] = { type_b };

static void setup_group(struct gc_spec_group *sg, struct gc_plan_group *g, char *name,
			enum gc_market market, unsigned create)
{
	memset(sg, 0, sizeof(*sg));
	memset(g, 0, sizeof(*g));
	sg->name = name;
	sg->instance_types = types_ab;
	sg->n_instance_types = 2;
	sg->market = market;
	g->spec = sg;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->want = g->create = create;
}

static int run(struct gc_plan_group *groups, size_t n, struct gc_plan *plan, struct gc_error *err)
{
	struct gc_provider p;

	memset(&p, 0, sizeof(p));
	p.ops = &fake_ops;
	gc_plan_init(plan);
	plan->groups = groups;
	plan->n_groups = n;
	gc_error_init(err);
	return gc_quotacheck_plan(&p, NULL, plan, err);
}

static void done(struct gc_plan *plan)
{
	plan->groups = NULL; /* the test's */
	plan->n_groups = 0;
	gc_plan_release(plan);
}

static void test_fits_message(void **state)
{
	struct gc_quota q = { .name = "Running On-Demand G and VT instances",
			      .unit = "vCPUs",
			      .limit = 8,
			      .used = 4,
			      .per_node = 4,
			      .where = "Service Quotas, code L-DB2E81BA" };
	char why[512];

	(void)state;
	assert_true(gc_quota_fits(&q, 1, 0, why, sizeof(why)));
	assert_false(gc_quota_fits(&q, 2, 0, why, sizeof(why)));
	assert_string_equal(why,
			    "quota 'Running On-Demand G and VT instances' allows 8 vCPUs, 4 "
			    "are in use and 2 new nodes need 8 more: 4 short; raise it at "
			    "Service Quotas, code L-DB2E81BA");
	assert_false(gc_quota_fits(&q, 1, 4, why, sizeof(why)));
	assert_non_null(strstr(why, "taken by earlier groups of this plan"));
}

static void test_refused_and_raised(void **state)
{
	struct gc_spec_group sg;
	struct gc_plan_group g;
	struct gc_plan plan;
	struct gc_error err;

	(void)state;
	memset(&acct, 0, sizeof(acct));
	acct.od_limit = 4;
	setup_group(&sg, &g, n_workers, GC_MARKET_ON_DEMAND, 2);
	assert_int_equal(run(&g, 1, &plan, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_non_null(strstr(err.message,
			       "group 'workers' does not fit the account's quota: "
			       "quota 'on-demand vCPUs' allows 4 vCPUs, 0 are in use"));
	assert_non_null(strstr(err.message, "4 short"));
	assert_int_equal(acct.calls, 1); /* on-demand stops at the quota, as apply does */
	done(&plan);

	acct.od_limit = 8;
	assert_int_equal(run(&g, 1, &plan, &err), 0);
	assert_int_equal(plan.n_preflight, 1);
	assert_non_null(strstr(plan.preflight[0], "fit quota 'on-demand vCPUs'"));
	done(&plan);
}

static void test_groups_add_up(void **state)
{
	struct gc_spec_group sg[2];
	struct gc_plan_group g[2];
	struct gc_plan plan;
	struct gc_error err;

	(void)state;
	memset(&acct, 0, sizeof(acct));
	acct.od_limit = 12;
	setup_group(&sg[0], &g[0], n_head, GC_MARKET_ON_DEMAND, 1);
	setup_group(&sg[1], &g[1], n_workers, GC_MARKET_ON_DEMAND, 3);
	assert_int_equal(run(g, 2, &plan, &err), -1);
	assert_non_null(strstr(err.message, "group 'workers'"));
	assert_non_null(strstr(err.message, "taken by earlier groups"));
	done(&plan);
}

static void test_spot_falls_back(void **state)
{
	struct gc_spec_group sg;
	struct gc_plan_group g;
	struct gc_plan plan;
	struct gc_error err;

	(void)state;
	memset(&acct, 0, sizeof(acct));
	acct.od_limit = 8;
	setup_group(&sg, &g, n_workers, GC_MARKET_SPOT_THEN_ON_DEMAND, 2);
	assert_int_equal(run(&g, 1, &plan, &err), 0);
	assert_int_equal(plan.n_preflight, 2);
	assert_non_null(strstr(plan.preflight[0], "the spot quota 'spot vCPUs'"));
	assert_non_null(strstr(plan.preflight[0], "apply launches on-demand instead"));
	done(&plan);

	setup_group(&sg, &g, n_workers, GC_MARKET_SPOT, 2);
	assert_int_equal(run(&g, 1, &plan, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_non_null(strstr(err.message, "'spot vCPUs' allows 0"));
	done(&plan);
}

static void test_sold_out_skipped(void **state)
{
	struct gc_spec_group sg;
	struct gc_plan_group g;
	struct gc_plan plan;
	struct gc_error err;

	(void)state;
	memset(&acct, 0, sizeof(acct));
	acct.od_limit = 8;
	acct.sold_out = "a.large";
	setup_group(&sg, &g, n_workers, GC_MARKET_ON_DEMAND, 1);
	assert_int_equal(run(&g, 1, &plan, &err), 0);
	assert_int_equal(plan.n_preflight, 2);
	assert_string_equal(
		plan.preflight[0],
		"group 'workers': a.large (on-demand) is sold out in the region: skipped");
	assert_non_null(strstr(plan.preflight[1], "1 new b.large (on-demand) fit"));
	done(&plan);
}

static void test_unreadable_said(void **state)
{
	struct gc_spec_group sg[2];
	struct gc_plan_group g[2];
	struct gc_plan plan;
	struct gc_error err;

	(void)state;
	memset(&acct, 0, sizeof(acct));
	acct.fail = GC_EAUTH;
	setup_group(&sg[0], &g[0], n_head, GC_MARKET_ON_DEMAND, 1);
	setup_group(&sg[1], &g[1], n_workers, GC_MARKET_ON_DEMAND, 3);
	assert_int_equal(run(g, 2, &plan, &err), 0);
	assert_int_equal(plan.n_preflight, 1); /* said once */
	assert_non_null(strstr(plan.preflight[0], "quota not checked: cannot read the quota"));
	assert_non_null(strstr(plan.preflight[0], "not allowed to read quotas"));
	done(&plan);

	acct.fail = GC_EUNSUPPORTED; /* no quota API: nothing said */
	assert_int_equal(run(g, 2, &plan, &err), 0);
	assert_int_equal(plan.n_preflight, 0);
	done(&plan);
}

/* A group whose first type has a quota the driver does not read is not checked, silently;
 * the groups after it still are (the check used to stop there). */
static void test_unsupported_goes_on(void **state)
{
	struct gc_spec_group sg[2];
	struct gc_plan_group g[2];
	struct gc_plan plan;
	struct gc_error err;

	(void)state;
	memset(&acct, 0, sizeof(acct));
	acct.od_limit = 4;
	acct.unsupported = "a.large";
	setup_group(&sg[0], &g[0], n_head, GC_MARKET_ON_DEMAND, 1);
	setup_group(&sg[1], &g[1], n_workers, GC_MARKET_ON_DEMAND, 2);
	sg[1].instance_types = types_b;
	sg[1].n_instance_types = 1;
	assert_int_equal(run(g, 2, &plan, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_non_null(strstr(err.message,
			       "group 'workers' does not fit the account's quota: "
			       "quota 'on-demand vCPUs' allows 4 vCPUs, 0 are in use "
			       "and 2 new nodes"));
	assert_int_equal(acct.calls, 2);
	done(&plan);

	acct.od_limit = 8;
	assert_int_equal(run(g, 2, &plan, &err), 0);
	assert_int_equal(plan.n_preflight, 1);
	assert_non_null(
		strstr(plan.preflight[0], "group 'workers': 2 new b.large (on-demand) fit"));
	done(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits_message),
		cmocka_unit_test(test_refused_and_raised),
		cmocka_unit_test(test_groups_add_up),
		cmocka_unit_test(test_spot_falls_back),
		cmocka_unit_test(test_sold_out_skipped),
		cmocka_unit_test(test_unreadable_said),
		cmocka_unit_test(test_unsupported_goes_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
