/*
 * test-rules.c: the security group rule diff (core/rules.h): missing rules added, ours
 * that are no longer wanted dropped, foreign ones kept, a wanted rule that a foreign one
 * already covers not made twice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/rules.h"

static const char *const cidrs[] = { "203.0.113.7/32", "198.51.100.0/24" };

static struct gc_secgroup_request request(size_t n)
{
	struct gc_secgroup_request req;

	memset(&req, 0, sizeof(req));
	req.ssh_port = 22;
	req.allow_from = cidrs;
	req.n_allow_from = n;
	req.allow_members = true;
	return req;
}

static void test_marker(void **state)
{
	(void)state;
	assert_true(gc_rule_is_ours(GC_RULE_SSH));
	assert_true(gc_rule_is_ours(GC_RULE_MEMBERS));
	assert_false(gc_rule_is_ours(NULL));
	assert_false(gc_rule_is_ours(""));
	assert_false(gc_rule_is_ours("gpucluster")); /* the marker has its space */
	assert_false(gc_rule_is_ours("office ssh"));
}

static void test_wanted(void **state)
{
	struct gc_secgroup_request req = request(2);
	struct gc_rule *w;
	size_t n;

	(void)state;
	n = gc_rules_wanted(&req, "sg-1", true, &w);
	assert_int_equal(n, 3);
	assert_false(w[0].all);
	assert_int_equal(w[0].port, 22);
	assert_string_equal(w[1].cidr, "198.51.100.0/24");
	assert_true(w[2].all);
	assert_string_equal(w[2].group, "sg-1");
	assert_true(w[2].ours);
	free(w);
	/* a cloud whose groups let members in by themselves asks for no members' rule */
	n = gc_rules_wanted(&req, "sg-1", false, &w);
	assert_int_equal(n, 2);
	free(w);
	req.allow_members = false;
	assert_int_equal(gc_rules_wanted(&req, "sg-1", true, &w), 2);
	free(w);
}

static void test_empty_group(void **state)
{
	struct gc_secgroup_request req = request(2);
	struct gc_rule *w;
	bool add[3], drop[1];
	size_t n;

	(void)state;
	n = gc_rules_wanted(&req, "sg-1", true, &w);
	assert_int_equal(gc_rules_diff(w, n, NULL, 0, add, drop), 3);
	assert_true(add[0] && add[1] && add[2]);
	free(w);
}

static void test_changed_cidr(void **state)
{
	struct gc_secgroup_request req = request(1);
	const char *now[] = { "192.0.2.0/24" };
	struct gc_rule have[] = {
		{ .port = 22, .cidr = "203.0.113.7/32", .ours = true },	  /* ours, gone */
		{ .all = true, .group = "sg-1", .ours = true },		  /* ours, kept */
		{ .port = 80, .cidr = "0.0.0.0/0" },			  /* foreign */
		{ .port = 22, .cidr = "10.0.0.0/8" },			  /* foreign, our port */
		{ .port = 22, .cidr = "198.51.100.0/24", .ours = false }, /* foreign */
	};
	struct gc_rule *w;
	bool add[2], drop[5];
	size_t n;

	(void)state;
	req.allow_from = now;
	n = gc_rules_wanted(&req, "sg-1", true, &w);
	assert_int_equal(gc_rules_diff(w, n, have, 5, add, drop), 2);
	assert_true(add[0]);  /* the new CIDR */
	assert_false(add[1]); /* the members' rule is there */
	assert_true(drop[0]);
	assert_false(drop[1] || drop[2] || drop[3] || drop[4]);
	free(w);
}

static void test_covered_and_shapes(void **state)
{
	struct gc_secgroup_request req = request(2);
	struct gc_rule have[] = {
		/* a user's rule of the same shape covers a wanted one, whatever its text */
		{ .port = 22, .cidr = "203.0.113.7/32" },
		/* not the same: another port, a group that is not this one, no port */
		{ .port = 2222, .cidr = "198.51.100.0/24", .ours = true },
		{ .all = true, .group = "sg-other", .ours = true },
		{ .port = 0, .cidr = "198.51.100.0/24" },
	};
	struct gc_rule *w;
	bool add[3], drop[4];
	size_t n;

	(void)state;
	n = gc_rules_wanted(&req, "sg-1", true, &w);
	assert_int_equal(gc_rules_diff(w, n, have, 4, add, drop), 4);
	assert_false(add[0]);
	assert_true(add[1]);
	assert_true(add[2]);
	assert_false(drop[0]);
	assert_true(drop[1]);
	assert_true(drop[2]);
	assert_false(drop[3]);
	free(w);
}

static void test_duplicate_cidr(void **state)
{
	const char *twice[] = { "203.0.113.7/32", "203.0.113.7/32" };
	struct gc_secgroup_request req = request(2);
	struct gc_rule *w;
	bool add[3], drop[1];
	size_t n;

	(void)state;
	req.allow_from = twice;
	n = gc_rules_wanted(&req, "sg-1", false, &w);
	assert_int_equal(gc_rules_diff(w, n, NULL, 0, add, drop), 1);
	assert_true(add[0]);
	assert_false(add[1]);
	free(w);
}

/* IPv6 ranges beside IPv4 ones: the cloud's echo of a block in another case or
 * compression is the same rule; an IPv4 and an IPv6 rule never match each other. */
static void test_ipv6(void **state)
{
	const char *mixed[] = { "203.0.113.0/24", "2001:db8::/32" };
	struct gc_secgroup_request req = request(2);
	struct gc_rule have[] = {
		{ .port = 22, .cidr = "2001:DB8:0::/32", .ours = true }, /* the v6 one, echoed */
		{ .port = 22,
		  .cidr = "2001:db8:1::/48",
		  .ours = true }, /* ours, no longer wanted */
		{ .port = 22, .cidr = "::ffff:203.0.113.0/120", .ours = true }, /* not the v4 one */
	};
	struct gc_rule *w;
	bool add[2], drop[3];
	size_t n;

	(void)state;
	req.allow_from = mixed;
	n = gc_rules_wanted(&req, "sg-1", false, &w);
	assert_int_equal(gc_rules_diff(w, n, have, 3, add, drop), 3);
	assert_true(add[0]);
	assert_false(add[1]);
	assert_false(drop[0]);
	assert_true(drop[1]);
	assert_true(drop[2]);
	free(w);
	/* removing the v6 range drops its rule and only it */
	req.n_allow_from = 1;
	n = gc_rules_wanted(&req, "sg-1", false, &w);
	assert_int_equal(gc_rules_diff(w, n, have, 1, add, drop), 2);
	assert_true(add[0]);
	assert_true(drop[0]);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marker),
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_empty_group),
		cmocka_unit_test(test_changed_cidr),
		cmocka_unit_test(test_covered_and_shapes),
		cmocka_unit_test(test_duplicate_cidr),
		cmocka_unit_test(test_ipv6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
