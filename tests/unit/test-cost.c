/*
 * test-cost.c: node-hours and money per type and market, the cloud's minimum charge,
 * and unknown prices, launch times and currencies making the total unknown.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "core/cost.h"

#define T0 1800000000LL

#define assert_near(a, b)                                               \
	do {                                                            \
		double a_ = (a), b_ = (b);                              \
		if (fabs(a_ - b_) > 1e-9)                               \
			fail_msg("%s is %.12f, not %.12f", #a, a_, b_); \
	} while (0)

static char id[] = "i-1";
static char p4d_x24xlarge[] = "p4d.24xlarge";
static char g5_xlarge[] = "g5.xlarge";
static char g6_xlarge[] = "g6.xlarge";

static struct gc_instance node(char *type, bool spot, int64_t launch)
{
	struct gc_instance in;

	memset(&in, 0, sizeof(in));
	in.id = id;
	in.type = type;
	in.spot = spot;
	in.launch_time = launch;
	return in;
}

static void test_lines_and_total(void **state)
{
	struct gc_cost c;
	struct gc_instance a = node(p4d_x24xlarge, false, T0);
	struct gc_instance b = node(p4d_x24xlarge, false, T0 + 1800);
	struct gc_instance s = node(p4d_x24xlarge, true, T0);

	(void)state;
	gc_cost_init(&c);
	gc_cost_add(&c, &a, T0 + 3600, 60, 32.0, "USD");
	gc_cost_add(&c, &b, T0 + 3600, 60, 32.0, "USD");
	gc_cost_add(&c, &s, T0 + 7200, 60, 10.0, "USD");
	assert_int_equal(c.n, 2); /* one line per type and market */
	assert_string_equal(c.lines[0].type, "p4d.24xlarge");
	assert_false(c.lines[0].spot);
	assert_int_equal(c.lines[0].nodes, 2);
	assert_near(c.lines[0].hours, 1.5);
	assert_near(c.lines[0].amount, 48.0);
	assert_true(c.lines[1].spot);
	assert_near(c.lines[1].amount, 20.0);
	assert_int_equal(c.nodes, 3);
	assert_near(c.hours, 3.5);
	assert_near(c.total, 68.0);
	assert_string_equal(c.currency, "USD");
	gc_cost_release(&c);
	assert_int_equal(c.n, 0);
}

static void test_minimum_charge(void **state)
{
	struct gc_cost c;
	struct gc_instance a = node(g5_xlarge, false, T0);

	(void)state;
	gc_cost_init(&c);
	gc_cost_add(&c, &a, T0 + 10, 60, 3.6, "USD"); /* 10 s billed as 60 */
	assert_near(c.hours, 60.0 / 3600.0);
	assert_near(c.total, 0.06);
	gc_cost_release(&c);

	gc_cost_init(&c);
	gc_cost_add(&c, &a, T0 + 10, 0, 3.6, "CNY"); /* per second from the first */
	assert_near(c.total, 0.01);
	assert_string_equal(c.currency, "CNY");
	gc_cost_release(&c);
}

static void test_unknowns(void **state)
{
	struct gc_cost c;
	struct gc_instance a = node(g5_xlarge, false, T0);
	struct gc_instance nolaunch = node(g5_xlarge, false, 0);
	struct gc_instance other = node(g6_xlarge, false, T0);

	(void)state;
	/* no price for one node: its line and the total are unknown, not smaller */
	gc_cost_init(&c);
	gc_cost_add(&c, &a, T0 + 3600, 60, 1.0, "USD");
	gc_cost_add(&c, &other, T0 + 3600, 60, -1, "");
	assert_near(c.lines[0].amount, 1.0);
	assert_true(c.lines[1].amount < 0);
	assert_true(c.total < 0);
	assert_near(c.hours, 2.0);
	gc_cost_release(&c);

	/* a launch time the cloud did not give */
	gc_cost_init(&c);
	gc_cost_add(&c, &nolaunch, T0 + 3600, 60, 1.0, "USD");
	assert_true(c.total < 0);
	assert_near(c.hours, 0);
	gc_cost_release(&c);

	/* two currencies never add up */
	gc_cost_init(&c);
	gc_cost_add(&c, &a, T0 + 3600, 60, 1.0, "USD");
	gc_cost_add(&c, &other, T0 + 3600, 60, 7.0, "CNY");
	assert_true(c.total < 0);
	assert_string_equal(c.currency, "USD");
	gc_cost_release(&c);

	/* a clock behind the launch: nothing negative */
	gc_cost_init(&c);
	gc_cost_add(&c, &a, T0 - 100, 0, 1.0, "USD");
	assert_near(c.total, 0);
	gc_cost_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_total),
		cmocka_unit_test(test_minimum_charge),
		cmocka_unit_test(test_unknowns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
