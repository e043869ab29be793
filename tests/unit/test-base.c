/*
 * test-base.c: the error struct, the capped buffer, checked number parsing, UTF-8
 * validation, hashing/encoding helpers and suggestions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/str.h"
#include "core/suggest.h"

static void test_error_set_and_prefix(void **state)
{
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_error_set(&err, GC_ETHROTTLED, "too fast: %d", 3), -1);
	assert_int_equal(err.code, GC_ETHROTTLED);
	assert_string_equal(err.message, "too fast: 3");
	gc_error_set_cloud(&err, "RequestLimitExceeded", "req-1", 503);
	gc_error_prefix(&err, "cannot create instances in zone '%s'", "us-east-1a");
	assert_string_equal(err.message,
			    "cannot create instances in zone 'us-east-1a': too fast: 3");
	assert_string_equal(err.cloud_code, "RequestLimitExceeded");
	assert_int_equal(err.http_status, 503);
	assert_string_equal(gc_strerror(GC_ECAPACITY), "capacity");
	assert_true(gc_error_is_retryable(GC_ETHROTTLED));
	assert_false(gc_error_is_retryable(GC_EQUOTA));
	/* a NULL error is allowed and still reports failure */
	assert_int_equal(gc_error_set(NULL, GC_EINVALID, "x"), -1);
}

static void test_error_message_truncates(void **state)
{
	struct gc_error err;
	char big[4096];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gc_error_set(&err, GC_EGENERIC, "%s", big);
	assert_int_equal(strlen(err.message), GC_ERROR_MSG_MAX - 1);
}

static void test_buf_cap(void **state)
{
	struct gc_buf b = GC_BUF_INIT(8);
	char *p;
	size_t len;

	(void)state;
	assert_string_equal(b.data, "");
	assert_int_equal(gc_buf_addstr(&b, "abcd"), 0);
	assert_int_equal(gc_buf_addf(&b, "%d", 123), 0);
	assert_string_equal(b.data, "abcd123");
	assert_int_equal(gc_buf_addstr(&b, "xy"), -1); /* would make 9 > 8 */
	assert_string_equal(b.data, "abcd123");	       /* nothing appended */
	assert_int_equal(gc_buf_addch(&b, 'z'), 0);
	assert_int_equal(b.len, 8);
	assert_int_equal(gc_buf_addf(&b, "%s", "q"), -1);
	p = gc_buf_detach(&b, &len);
	assert_int_equal(len, 8);
	assert_string_equal(p, "abcd123z");
	free(p);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	gc_buf_release(&b);
	gc_buf_release(NULL);
}

static void test_buf_grows(void **state)
{
	struct gc_buf b;

	(void)state;
	gc_buf_init(&b, 0);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(gc_buf_addch(&b, (char)('a' + i % 26)), 0);
	assert_int_equal(b.len, 10000);
	assert_int_equal(b.data[9999], 'a' + 9999 % 26);
	assert_int_equal(b.data[10000], '\0');
	gc_buf_truncate(&b, 3);
	assert_string_equal(b.data, "abc");
	gc_buf_release(&b);
}

static void test_parse_numbers(void **state)
{
	uint64_t u = 77;
	int64_t i = 77;
	double d = 0;

	(void)state;
	assert_int_equal(gc_parse_u64("1000", 1000, &u), 0);
	assert_int_equal(u, 1000);
	u = 77;
	assert_int_equal(gc_parse_u64("1001", 1000, &u), -1);
	assert_int_equal(u, 77); /* untouched on failure */
	assert_int_equal(gc_parse_u64("", 10, &u), -1);
	assert_int_equal(gc_parse_u64(" 1", 10, &u), -1);
	assert_int_equal(gc_parse_u64("1x", 10, &u), -1);
	assert_int_equal(gc_parse_u64("-1", 10, &u), -1);
	assert_int_equal(gc_parse_u64("18446744073709551616", UINT64_MAX, &u), -1);
	assert_int_equal(gc_parse_u64("18446744073709551615", UINT64_MAX, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(gc_parse_i64("-5", -10, 10, &i), 0);
	assert_int_equal(i, -5);
	assert_int_equal(gc_parse_i64("-9223372036854775808", INT64_MIN, 0, &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(gc_parse_i64("11", -10, 10, &i), -1);
	assert_int_equal(gc_parse_double("2.5", &d), 0);
	assert_true(d == 2.5);
	assert_int_equal(gc_parse_double("nan", &d), -1);
	assert_int_equal(gc_parse_double("inf", &d), -1);
	assert_int_equal(gc_parse_double("0x10", &d), -1);
	assert_int_equal(gc_parse_double("1e999", &d), -1);
	assert_int_equal(gc_parse_double("1.5.", &d), -1);
}

static void test_utf8(void **state)
{
	(void)state;
	assert_true(gc_utf8_valid("plain", 5));
	assert_true(gc_utf8_valid("\xc3\xa9t\xc3\xa9", 6)); /* été */
	assert_true(gc_utf8_valid("\xf0\x9f\x9a\x80", 4));  /* rocket */
	assert_false(gc_utf8_valid("\xc3", 1));		    /* truncated */
	assert_false(gc_utf8_valid("\xc0\xaf", 2));	    /* overlong '/' */
	assert_false(gc_utf8_valid("\xed\xa0\x80", 3));	    /* surrogate */
	assert_false(gc_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	assert_false(gc_utf8_valid("\xff", 1));
	assert_int_equal(gc_utf8_char("\xc3\xa9t", 3), 2);
	assert_int_equal(gc_utf8_char("\xf0\x9f\x9a\x80", 4), 4);
	assert_int_equal(gc_utf8_char("\xf0\x9f\x9a\x80", 3), 0); /* cut short */
	assert_int_equal(gc_utf8_char("a", 0), 0);
}

static void test_sha256_hmac(void **state)
{
	char hex[GC_SHA256_HEX_LEN];
	unsigned char mac[GC_SHA256_LEN], mac1[GC_SHA1_LEN];

	(void)state;
	gc_sha256_hex("", 0, hex);
	assert_string_equal(hex,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	gc_sha256_hex("abc", 3, hex);
	assert_string_equal(hex,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* RFC 4231 test case 2 */
	gc_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac);
	gc_hex(mac, sizeof(mac), hex);
	assert_string_equal(hex,
			    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* RFC 2202 test case 2 */
	gc_hmac_sha1("Jefe", 4, "what do ya want for nothing?", 28, mac1);
	gc_hex(mac1, sizeof(mac1), hex);
	assert_string_equal(hex, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
}

static void test_base64(void **state)
{
	static const struct {
		const char *plain, *enc;
	} v[] = {
		{ "", "" },
		{ "f", "Zg==" },
		{ "fo", "Zm8=" },
		{ "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		gc_buf_reset(&b);
		assert_int_equal(gc_base64_encode(&b, v[i].plain, strlen(v[i].plain)), 0);
		assert_string_equal(b.data, v[i].enc);
		gc_buf_reset(&b);
		assert_int_equal(gc_base64_decode(&b, v[i].enc, strlen(v[i].enc)), 0);
		assert_string_equal(b.data, v[i].plain);
	}
	gc_buf_reset(&b);
	assert_int_equal(gc_base64_decode(&b, "Zm9v\nYmFy", 9), 0); /* whitespace ok */
	assert_string_equal(b.data, "foobar");
	gc_buf_reset(&b);
	assert_int_equal(gc_base64_decode(&b, "Zm9v!", 5), -1);
	assert_int_equal(b.len, 0);
	assert_int_equal(gc_base64_decode(&b, "Zg=a", 4), -1); /* data after padding */
	assert_int_equal(gc_base64_decode(&b, "Zh==", 4), -1); /* non-zero pad bits */
	gc_buf_release(&b);
}

static void test_shorthash(void **state)
{
	char a[GC_SHORTHASH_LEN + 1], b[GC_SHORTHASH_LEN + 1];

	(void)state;
	gc_shorthash("llm-train/workers", 17, a);
	gc_shorthash("llm-train/workers", 17, b);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), GC_SHORTHASH_LEN);
	for (size_t i = 0; i < GC_SHORTHASH_LEN; i++)
		assert_non_null(strchr("abcdefghijklmnopqrstuvwxyz234567", a[i]));
	/* pinned: tags and tokens written by earlier versions must still match */
	gc_shorthash("abc", 3, a);
	assert_string_equal(a, "xj4bnp4pah"); /* base32 of sha256("abc") = ba7816bf8f01cfea */
	gc_shorthash("abd", 3, b);
	assert_string_not_equal(a, b);
}

static void test_suggest(void **state)
{
	static const char *const keys[] = { "count", "name", "instance_types", "zones", NULL };

	(void)state;
	assert_int_equal(gc_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(gc_edit_distance("cuont", "count"), 1); /* transposition */
	assert_string_equal(gc_suggest("cuont", keys, 0), "count");
	assert_string_equal(gc_suggest("instance_type", keys, 0), "instance_types");
	assert_string_equal(gc_suggest("zone", keys, 0), "zones");
	assert_null(gc_suggest("banana", keys, 0));
	assert_null(gc_suggest("", keys, 0));
}

static void test_diags_sorted_and_owned(void **state)
{
	struct gc_diags d;
	char path[] = "node_groups[0].count";

	(void)state;
	gc_diags_init(&d, "cluster.yaml");
	gc_diag_add(&d, 9, 3, "b", "second %s", "x");
	gc_diag_add(&d, 2, 7, path, "first");
	gc_diag_add(&d, 9, 1, NULL, "between");
	gc_diag_add(&d, 9, 3, "c", "equal position keeps order");
	path[0] = 'X'; /* entries own their strings */
	gc_diags_sort(&d);
	assert_int_equal(d.nr, 4);
	assert_string_equal(d.file, "cluster.yaml");
	assert_string_equal(d.items[0].message, "first");
	assert_string_equal(d.items[0].path, "node_groups[0].count");
	assert_string_equal(d.items[1].message, "between");
	assert_string_equal(d.items[1].path, "");
	assert_string_equal(d.items[2].message, "second x");
	assert_string_equal(d.items[3].message, "equal position keeps order");
	gc_diags_release(&d);
	gc_diags_release(&d); /* release twice is harmless */
}

static void test_xasprintf(void **state)
{
	char *s;

	(void)state;
	s = gc_xasprintf("%s-%03d", "node", 7);
	assert_string_equal(s, "node-007");
	free(s);
	s = gc_xstrndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
}

/* A spot bid is never above the user's maximum and never 0 (issue 18). */
static void test_format_bid(void **state)
{
	static const struct {
		double max;
		unsigned decimals;
		const char *want; /* NULL: refused */
	} cases[] = {
		{ 0.9, 5, "0.9" },	    { 4.5, 5, "4.5" },	       { 3, 5, "3" },
		{ 1.234567, 5, "1.23456" }, /* down, not the nearest 1.23457 */
		{ 0.3, 3, "0.3" },	    { 0.0019, 3, "0.001" },    { 0.0009, 3, NULL },
		{ 0.0000001, 5, NULL },	    { 0.00001, 5, "0.00001" }, { 98.32, 3, "98.32" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gc_error err;
		char out[32] = "";
		int rc;

		gc_error_init(&err);
		rc = gc_format_bid(cases[i].max, cases[i].decimals, out, &err);
		if (!cases[i].want) {
			assert_int_equal(rc, -1);
			assert_int_equal(err.code, GC_EINVALID);
			assert_non_null(strstr(err.message, "rounds down to 0"));
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(out, cases[i].want);
		assert_true(strtod(out, NULL) <= cases[i].max);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_bid),
		cmocka_unit_test(test_error_set_and_prefix),
		cmocka_unit_test(test_error_message_truncates),
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_buf_grows),
		cmocka_unit_test(test_parse_numbers),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_sha256_hmac),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_shorthash),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_diags_sorted_and_owned),
		cmocka_unit_test(test_xasprintf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
