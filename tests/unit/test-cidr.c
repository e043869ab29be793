/*
 * test-cidr.c: CIDR parsing (IPv4 and IPv6), host-bit detection and the corrected
 * network, equality, containment and canonical formatting.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/cidr.h"

static void assert_format(const struct gc_cidr *c, const char *want)
{
	char buf[GC_CIDR_STRLEN];

	assert_int_equal(gc_cidr_format(c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_parse_ipv4(void **state)
{
	struct gc_cidr c;

	(void)state;
	assert_int_equal(gc_cidr_parse(&c, "203.0.113.7/32"), 0);
	assert_int_equal(c.family, GC_CIDR_IPV4);
	assert_int_equal(c.prefix, 32);
	assert_int_equal(c.addr[0], 203);
	assert_int_equal(c.addr[3], 7);
	assert_int_equal(c.addr[4], 0); /* the unused bytes stay zero */
	assert_true(gc_cidr_is_network(&c));
	assert_format(&c, "203.0.113.7/32");

	assert_int_equal(gc_cidr_parse(&c, "0.0.0.0/0"), 0);
	assert_int_equal(c.prefix, 0);
	assert_true(gc_cidr_is_network(&c));
	assert_format(&c, "0.0.0.0/0");

	assert_int_equal(gc_cidr_parse(&c, "10.0.0.0/8"), 0);
	assert_true(gc_cidr_is_network(&c));
}

static void test_parse_ipv6(void **state)
{
	struct gc_cidr c;

	(void)state;
	assert_int_equal(gc_cidr_parse(&c, "2001:db8::/48"), 0);
	assert_int_equal(c.family, GC_CIDR_IPV6);
	assert_int_equal(c.prefix, 48);
	assert_int_equal(c.addr[0], 0x20);
	assert_int_equal(c.addr[1], 0x01);
	assert_true(gc_cidr_is_network(&c));
	assert_format(&c, "2001:db8::/48");

	/* formatting is canonical: lowercase, zeros compressed */
	assert_int_equal(gc_cidr_parse(&c, "2001:0DB8:0000:0000:0000:0000:0000:0001/128"), 0);
	assert_format(&c, "2001:db8::1/128");

	assert_int_equal(gc_cidr_parse(&c, "::/0"), 0);
	assert_format(&c, "::/0");
	assert_int_equal(gc_cidr_parse(&c, "::ffff:192.0.2.1/128"), 0);
	assert_int_equal(c.family, GC_CIDR_IPV6);
}

static void test_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		"10.0.0.0",
		"10.0.0.0/",
		"/8",
		"10.0.0.0/33",
		"10.0.0.0/08",
		"10.0.0.0/-1",
		"10.0.0.0/+8",
		"10.0.0.256/8",
		"10.0.0/8",
		"::/129",
		"1.2.3.4 /8",
		"1.2.3.4/ 8",
		"x::y/8",
		"10.0.0.0/8/8",
		"10.0.0.0/1000",
		"2001:db8::/0048",
		"fe80::1%eth0/64",
		"2001:db8:::/48",
		"1.2.3.4/32x",
		"a/1",
		"1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:cccc:dddd:eeee:ffff/1",
	};
	struct gc_cidr c, untouched;

	(void)state;
	memset(&untouched, 0x5a, sizeof(untouched));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = untouched;
		if (gc_cidr_parse(&c, bad[i]) != -1)
			fail_msg("'%s' was accepted", bad[i]);
		/* out is written only on success */
		assert_memory_equal(&c, &untouched, sizeof(c));
	}
	assert_int_equal(gc_cidr_parse(&c, NULL), -1);
}

static void test_host_bits(void **state)
{
	struct gc_cidr c, n;

	(void)state;
	assert_int_equal(gc_cidr_parse(&c, "10.0.0.1/24"), 0);
	assert_false(gc_cidr_is_network(&c));
	gc_cidr_network(&n, &c);
	assert_true(gc_cidr_is_network(&n));
	assert_format(&n, "10.0.0.0/24");
	/* the original keeps what was written */
	assert_format(&c, "10.0.0.1/24");

	/* prefixes that split a byte */
	assert_int_equal(gc_cidr_parse(&c, "10.0.0.129/25"), 0);
	assert_false(gc_cidr_is_network(&c));
	gc_cidr_network(&n, &c);
	assert_format(&n, "10.0.0.128/25");
	assert_int_equal(gc_cidr_parse(&c, "10.0.0.128/25"), 0);
	assert_true(gc_cidr_is_network(&c));
	assert_int_equal(gc_cidr_parse(&c, "255.255.255.255/1"), 0);
	gc_cidr_network(&n, &c);
	assert_format(&n, "128.0.0.0/1");
	assert_int_equal(gc_cidr_parse(&c, "1.2.3.4/0"), 0);
	gc_cidr_network(&n, &c);
	assert_format(&n, "0.0.0.0/0");

	assert_int_equal(gc_cidr_parse(&c, "2001:db8::1/48"), 0);
	assert_false(gc_cidr_is_network(&c));
	gc_cidr_network(&n, &c);
	assert_format(&n, "2001:db8::/48");
	assert_int_equal(gc_cidr_parse(&c, "2001:db8::3/127"), 0);
	gc_cidr_network(&n, &c);
	assert_format(&n, "2001:db8::2/127");
	assert_int_equal(gc_cidr_parse(&c, "2001:db8:ffff::/33"), 0);
	gc_cidr_network(&n, &c);
	assert_format(&n, "2001:db8:8000::/33");

	/* in place is allowed */
	gc_cidr_network(&c, &c);
	assert_format(&c, "2001:db8:8000::/33");
}

static void test_equal_and_contains(void **state)
{
	struct gc_cidr a, b, h, net;

	(void)state;
	assert_int_equal(gc_cidr_parse(&a, "2001:db8::/48"), 0);
	assert_int_equal(gc_cidr_parse(&b, "2001:DB8:0::/48"), 0);
	assert_true(gc_cidr_equal(&a, &b));
	assert_int_equal(gc_cidr_parse(&b, "2001:db8::/49"), 0);
	assert_false(gc_cidr_equal(&a, &b));
	assert_true(gc_cidr_contains(&a, &b));
	assert_false(gc_cidr_contains(&b, &a));

	assert_int_equal(gc_cidr_parse(&net, "10.0.0.0/8"), 0);
	assert_int_equal(gc_cidr_parse_host(&h, "10.200.3.4"), 0);
	assert_int_equal(h.prefix, 32);
	assert_true(gc_cidr_contains(&net, &h));
	assert_int_equal(gc_cidr_parse_host(&h, "11.0.0.1"), 0);
	assert_false(gc_cidr_contains(&net, &h));
	/* families never mix */
	assert_int_equal(gc_cidr_parse_host(&h, "::a00:1"), 0);
	assert_int_equal(h.prefix, 128);
	assert_false(gc_cidr_contains(&net, &h));
	assert_int_equal(gc_cidr_parse(&b, "0.0.0.0/0"), 0);
	assert_false(gc_cidr_equal(&b, &a));
	assert_int_equal(gc_cidr_parse_host(&h, "10.0.0.1/32"), -1);
	assert_int_equal(gc_cidr_parse_host(&h, NULL), -1);
}

static void test_format_small_buffer(void **state)
{
	struct gc_cidr c;
	char small[8];

	(void)state;
	assert_int_equal(gc_cidr_parse(&c, "203.0.113.0/24"), 0);
	assert_int_equal(gc_cidr_format(&c, small, sizeof(small)), -1);
	assert_int_equal(gc_cidr_parse(&c, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128"), 0);
	{
		char buf[GC_CIDR_STRLEN];

		assert_int_equal(gc_cidr_format(&c, buf, sizeof(buf)), 0);
		assert_true(strlen(buf) < GC_CIDR_STRLEN);
	}
}

/* What an address service may answer as this machine's address, and what it may not. */
static void test_unicast(void **state)
{
	static const char *const ok[] = { "203.0.113.7",     "1.0.0.1",	    "127.0.0.1",
					  "223.255.255.254", "2001:db8::1", "::1" };
	static const char *const no[] = { "0.0.0.0",   "0.1.2.3",	  "224.0.0.1", "239.1.1.1",
					  "240.0.0.1", "255.255.255.255", "::",	       "ff02::1" };
	struct gc_cidr c;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(gc_cidr_parse_host(&c, ok[i]), 0);
		if (!gc_cidr_is_unicast(&c))
			fail_msg("%s refused", ok[i]);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		assert_int_equal(gc_cidr_parse_host(&c, no[i]), 0);
		if (gc_cidr_is_unicast(&c))
			fail_msg("%s taken as one host", no[i]);
	}
}

static void test_text_is_ipv6(void **state)
{
	(void)state;
	assert_true(gc_cidr_text_is_ipv6("2001:db8::/32"));
	assert_true(gc_cidr_text_is_ipv6("::/0"));
	assert_true(gc_cidr_text_is_ipv6("2001:db8::1"));
	assert_true(gc_cidr_text_is_ipv6("::ffff:192.0.2.1/128"));
	assert_false(gc_cidr_text_is_ipv6("203.0.113.0/24"));
	assert_false(gc_cidr_text_is_ipv6("0.0.0.0/0"));
	assert_false(gc_cidr_text_is_ipv6("not a block"));
	assert_false(gc_cidr_text_is_ipv6(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ipv4),
		cmocka_unit_test(test_parse_ipv6),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_host_bits),
		cmocka_unit_test(test_equal_and_contains),
		cmocka_unit_test(test_format_small_buffer),
		cmocka_unit_test(test_unicast),
		cmocka_unit_test(test_text_is_ipv6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
