/*
 * test-faults.c: the emulator's fault rules (parsing, matching, call=N, times=N, p=),
 * capacity rules narrowed by zone and type, and the documented rate limits as buckets
 * on a fake clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake-clock.h"
#include "sim/faults.h"

static struct sim_faults *new_faults(bool limits)
{
	struct sim_faults *f = sim_faults_new(7, &fake);

	fc.now = 5 * 60 * 1000 * MS;
	sim_faults_set_rate_limits(f, limits);
	return f;
}

static enum sim_fault_kind check(struct sim_faults *f, enum sim_cloud c, const char *action)
{
	struct sim_fault_hit hit;

	sim_faults_check(f, c, action, 0, &hit);
	return hit.kind;
}

static void test_parse_errors(void **state)
{
	struct sim_faults *f = new_faults(false);
	struct gc_error err;
	static const char *const bad[] = {
		"aws:RunInstances",
		"gcp:RunInstances:throttle",
		"aws:*:explode",
		"aws:*:throttle,p=2",
		"aws:*:throttle,call=0",
		"aws:*:throttle,when=now",
		"aws:*:throttle,zone=us-east-1a",
		"aws:*:slow,delay_ms=x",
		"aws::throttle",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_error_init(&err);
		assert_int_equal(sim_faults_add(f, bad[i], &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		/* the message quotes the rule so a user sees which flag was wrong */
		assert_non_null(strstr(err.message, bad[i][0] == 'g' ? "gcp" : "aws"));
	}
	assert_int_equal(sim_faults_add(f, "*:*:slow,delay_ms=10", &err), 0);
	sim_faults_free(f);
}

static void test_matching_and_counting(void **state)
{
	struct sim_faults *f = new_faults(false);
	struct sim_fault_hit hit;
	char *desc;

	(void)state;
	assert_int_equal(sim_faults_add(f, "aws:RunInstances:5xx,call=2", NULL), 0);
	assert_int_equal(sim_faults_add(f, "tencent:*:throttle,times=2", NULL), 0);
	assert_int_equal(sim_faults_add(f, "alibaba:DescribeInstances:drop,after=1", NULL), 0);

	assert_int_equal(check(f, SIM_AWS, "RunInstances"), SIM_FAULT_NONE);
	assert_int_equal(check(f, SIM_AWS, "DescribeInstances"), SIM_FAULT_NONE);
	assert_int_equal(check(f, SIM_AWS, "RunInstances"), SIM_FAULT_5XX);
	assert_int_equal(check(f, SIM_AWS, "RunInstances"), SIM_FAULT_NONE);

	assert_int_equal(check(f, SIM_TENCENT, "RunInstances"), SIM_FAULT_THROTTLE);
	assert_int_equal(check(f, SIM_TENCENT, "DescribeInstances"), SIM_FAULT_THROTTLE);
	assert_int_equal(check(f, SIM_TENCENT, "DescribeInstances"), SIM_FAULT_NONE);

	sim_faults_check(f, SIM_ALIBABA, "DescribeInstances", 0, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_DROP);
	assert_true(hit.after);
	assert_string_equal(hit.rule, "alibaba:DescribeInstances:drop,after=1");

	desc = sim_faults_describe(f);
	assert_non_null(strstr(desc, "aws:RunInstances:5xx,call=2\tseen=3 fired=1"));
	free(desc);
	sim_faults_clear(f);
	assert_int_equal(check(f, SIM_ALIBABA, "DescribeInstances"), SIM_FAULT_NONE);
	sim_faults_free(f);
}

static void test_probability(void **state)
{
	struct sim_faults *f = new_faults(false);
	unsigned fired = 0;

	(void)state;
	assert_int_equal(sim_faults_add(f, "*:*:quota,p=0.25", NULL), 0);
	for (int i = 0; i < 4000; i++)
		fired += check(f, SIM_AWS, "RunInstances") == SIM_FAULT_QUOTA;
	/* 1000 expected; 4 standard deviations is about 110 */
	assert_in_range(fired, 890, 1110);
	sim_faults_free(f);
}

static void test_capacity_narrowing(void **state)
{
	struct sim_faults *f = new_faults(false);
	struct sim_fault_hit hit;

	(void)state;
	assert_int_equal(
		sim_faults_add(f, "aws:RunInstances:capacity,zone=us-east-1a,type=p5.48xlarge",
			       NULL),
		0);
	/* a capacity rule never fires from the generic check */
	assert_int_equal(check(f, SIM_AWS, "RunInstances"), SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "p5.48xlarge", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_CAPACITY);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1b", "p5.48xlarge", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_free(f);
}

/* a quota rule with market= fails only launches of that market, never other calls */
static void test_quota_per_market(void **state)
{
	struct sim_faults *f = new_faults(false);
	struct sim_fault_hit hit;

	(void)state;
	assert_int_equal(sim_faults_add(f, "*:RunInstances:quota,market=spot", NULL), 0);
	assert_int_equal(check(f, SIM_AWS, "RunInstances"), SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_TENCENT, "RunInstances", "z", "g5.xlarge", true, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_QUOTA);
	assert_true(hit.spot);
	sim_faults_clear(f);
	assert_int_equal(sim_faults_add(f, "aws:RunInstances:quota,market=on-demand", NULL), 0);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", true, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_QUOTA);
	assert_false(hit.spot);
	/* market= goes with quota only, and takes the two markets' names */
	assert_int_equal(sim_faults_add(f, "aws:RunInstances:capacity,market=spot", NULL), -1);
	assert_int_equal(sim_faults_add(f, "aws:RunInstances:quota,market=reserved", NULL), -1);
	sim_faults_free(f);
}

static void test_ec2_buckets(void **state)
{
	struct sim_faults *f = new_faults(true);
	struct sim_fault_hit hit;
	unsigned ok = 0;

	(void)state;
	/* mutating: 50 tokens, then 5 a second */
	for (int i = 0; i < 60; i++)
		ok += check(f, SIM_AWS, "CreateTags") == SIM_FAULT_NONE;
	assert_int_equal(ok, 50);
	fc.now += 1000 * MS;
	ok = 0;
	for (int i = 0; i < 10; i++)
		ok += check(f, SIM_AWS, "CreateTags") == SIM_FAULT_NONE;
	assert_int_equal(ok, 5);
	/* each action has its own bucket; Describe* holds 100 */
	ok = 0;
	for (int i = 0; i < 120; i++)
		ok += check(f, SIM_AWS, "DescribeInstances") == SIM_FAULT_NONE;
	assert_int_equal(ok, 100);
	/* unfiltered Describe calls draw from a separate, smaller bucket */
	ok = 0;
	for (int i = 0; i < 60; i++) {
		sim_faults_check(f, SIM_AWS, "DescribeInstances", SIM_CALL_UNFILTERED, &hit);
		ok += hit.kind == SIM_FAULT_NONE;
	}
	assert_int_equal(ok, 50);
	assert_non_null(strstr(hit.rule, "unfiltered"));

	/* RunInstances' resource bucket counts instances: 1000, then 2 a second */
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 1000, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_THROTTLE);
	fc.now += 1000 * MS;
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 2, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_AWS, "RunInstances", "us-east-1a", "g5.xlarge", false, 1001, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_THROTTLE);
	sim_faults_terminate(f, SIM_AWS, "TerminateInstances", 1000, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_terminate(f, SIM_AWS, "TerminateInstances", 21, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_THROTTLE);
	fc.now += 1000 * MS;
	sim_faults_terminate(f, SIM_AWS, "TerminateInstances", 20, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_free(f);
}

static void test_tencent_and_alibaba_limits(void **state)
{
	struct sim_faults *f = new_faults(true);
	struct sim_fault_hit hit;
	unsigned ok = 0;

	(void)state;
	for (int i = 0; i < 15; i++)
		ok += check(f, SIM_TENCENT, "RunInstances") == SIM_FAULT_NONE;
	assert_int_equal(ok, 10);
	ok = 0;
	for (int i = 0; i < 50; i++)
		ok += check(f, SIM_TENCENT, "DescribeInstances") == SIM_FAULT_NONE;
	assert_int_equal(ok, 40);

	/* Alibaba: one-minute windows; throttled in minute T, allowed again in T+1 */
	ok = 0;
	for (int i = 0; i < 700; i++)
		ok += check(f, SIM_ALIBABA, "DescribeInstances") == SIM_FAULT_NONE;
	assert_int_equal(ok, 600);
	fc.now += 30 * 1000 * MS; /* still the same minute */
	assert_int_equal(check(f, SIM_ALIBABA, "DescribeInstances"), SIM_FAULT_THROTTLE);
	fc.now += 30 * 1000 * MS;
	assert_int_equal(check(f, SIM_ALIBABA, "DescribeInstances"), SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_ALIBABA, "RunInstances", "cn-hangzhou-i", "x", false, 5000, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_NONE);
	sim_faults_launch(f, SIM_ALIBABA, "RunInstances", "cn-hangzhou-i", "x", false, 1, &hit);
	assert_int_equal(hit.kind, SIM_FAULT_THROTTLE);

	/* off means off */
	sim_faults_set_rate_limits(f, false);
	for (int i = 0; i < 100; i++)
		assert_int_equal(check(f, SIM_TENCENT, "RunInstances"), SIM_FAULT_NONE);
	sim_faults_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_matching_and_counting),
		cmocka_unit_test(test_probability),
		cmocka_unit_test(test_capacity_narrowing),
		cmocka_unit_test(test_quota_per_market),
		cmocka_unit_test(test_ec2_buckets),
		cmocka_unit_test(test_tencent_and_alibaba_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
