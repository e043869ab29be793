/*
 * test-urlenc.c: RFC 3986 percent-encoding and decoding, the name/value list, its
 * bytewise sort on encoded names, and the shared header and Authorization helpers
 * the request signers are built on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/urlenc.h"

static char *enc(const char *s)
{
	struct gc_buf b = GC_BUF_INIT(0);

	assert_int_equal(gc_urlenc_str(&b, s), 0);
	return gc_buf_detach(&b, NULL);
}

static void assert_enc(const char *in, const char *want)
{
	char *got = enc(in);

	assert_string_equal(got, want);
	free(got);
}

static void test_encode_rfc3986_set(void **state)
{
	(void)state;
	/* the unreserved set stays as it is, '~' included */
	assert_enc("AZaz09-_.~", "AZaz09-_.~");
	assert_enc("a b", "a%20b");
	assert_enc("*", "%2A");
	/* what encodeURIComponent leaves raw must be encoded here */
	assert_enc("!'()", "%21%27%28%29");
	assert_enc("a+b=c/d&e", "a%2Bb%3Dc%2Fd%26e");
	assert_enc("%", "%25");
	assert_enc(":@,;?#[]$", "%3A%40%2C%3B%3F%23%5B%5D%24");
	/* UTF-8 bytes, upper-case hex */
	assert_enc("\xce\xb1", "%CE%B1");
	assert_enc("\xe1\x88\xb4", "%E1%88%B4");
	assert_enc("\x7f\x01\xff", "%7F%01%FF");
	assert_enc("", "");
}

static void test_encode_binary_and_path(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	assert_int_equal(gc_urlenc(&b, "a\0b", 3), 0);
	assert_string_equal(b.data, "a%00b");
	gc_buf_reset(&b);
	assert_int_equal(gc_urlenc_path(&b, "/a b/c~d/", 9), 0);
	assert_string_equal(b.data, "/a%20b/c~d/");
	gc_buf_release(&b);
}

static void test_encode_respects_cap(void **state)
{
	struct gc_buf b = GC_BUF_INIT(6);

	(void)state;
	assert_int_equal(gc_buf_addstr(&b, "x"), 0);
	/* "xab%20c" is one past the cap: the "ab" already copied is taken back */
	assert_int_equal(gc_urlenc_str(&b, "ab c"), -1);
	assert_string_equal(b.data, "x");
	assert_int_equal(gc_urlenc_str(&b, "a b"), 0);
	assert_string_equal(b.data, "xa%20b");
	assert_int_equal(gc_urlenc_str(&b, "c"), -1);
	assert_string_equal(b.data, "xa%20b");
	gc_buf_release(&b);
}

static void assert_dec(const char *in, enum gc_urldec_mode mode, const char *want)
{
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;

	gc_error_init(&err);
	assert_int_equal(gc_urldec(&b, in, strlen(in), mode, &err), 0);
	assert_string_equal(b.data, want);
	gc_buf_release(&b);
}

static void test_decode_plus(void **state)
{
	(void)state;
	/* in RFC 3986 query text '+' is itself; in a form body it is a space */
	assert_dec("a+b%20c", GC_URLDEC_RFC3986, "a+b c");
	assert_dec("a+b%20c", GC_URLDEC_FORM, "a b c");
	/* an encoded plus is a plus in both */
	assert_dec("%2B", GC_URLDEC_FORM, "+");
	assert_dec("%2b", GC_URLDEC_RFC3986, "+");
	assert_dec("%CE%B1%e1%88%b4", GC_URLDEC_RFC3986, "\xce\xb1\xe1\x88\xb4");
	/* lenient wire text the SDKs send: '*', '(' and '~' raw */
	assert_dec("x*(y)~", GC_URLDEC_RFC3986, "x*(y)~");
}

static void test_decode_rejects_malformed(void **state)
{
	const char *bad[] = { "%", "%4", "a%zz", "%g1", "abc%", "%%20", "%2" };
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;

	(void)state;
	assert_int_equal(gc_buf_addstr(&b, "keep"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_error_init(&err);
		assert_int_equal(gc_urldec(&b, bad[i], strlen(bad[i]), GC_URLDEC_FORM, &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		assert_non_null(strstr(err.message, "percent-escape"));
		/* a failed decode leaves the buffer as it was */
		assert_string_equal(b.data, "keep");
	}
	gc_buf_release(&b);
}

static void test_decode_nul_byte(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_params p = GC_PARAMS_INIT;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	/* the decoder passes any byte through... */
	assert_int_equal(gc_urldec(&b, "a%00b", 5, GC_URLDEC_RFC3986, &err), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0b", 3);
	gc_buf_release(&b);
	/* ...but a parameter is a C string and must not hide one */
	assert_int_equal(gc_params_parse(&p, "k=a%00b", 7, GC_URLDEC_RFC3986, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(p.n, 0);
}

static void test_params_parse(void **state)
{
	struct gc_params p = GC_PARAMS_INIT;
	struct gc_error err;
	const char *text = "Action=Run&&Key=a+b%2Bc&Flag&Eq=x=y&=v&Empty=";

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_params_parse(&p, text, strlen(text), GC_URLDEC_FORM, &err), 0);
	assert_int_equal(p.n, 6);
	assert_string_equal(p.items[0].name, "Action");
	assert_string_equal(p.items[0].value, "Run");
	assert_string_equal(gc_params_get(&p, "Key"), "a b+c");
	assert_string_equal(gc_params_get(&p, "Flag"), "");
	assert_string_equal(gc_params_get(&p, "Eq"), "x=y");
	assert_string_equal(gc_params_get(&p, ""), "v");
	assert_string_equal(gc_params_get(&p, "Empty"), "");
	assert_null(gc_params_get(&p, "key"));
	gc_params_release(&p);

	/* the same text as RFC 3986 query text keeps its '+' */
	assert_int_equal(gc_params_parse(&p, text, strlen(text), GC_URLDEC_RFC3986, &err), 0);
	assert_string_equal(gc_params_get(&p, "Key"), "a+b+c");

	/* a malformed escape leaves the list untouched */
	assert_int_equal(gc_params_parse(&p, "x=1&y=%G0", 9, GC_URLDEC_RFC3986, &err), -1);
	assert_int_equal(p.n, 6);
	assert_null(gc_params_get(&p, "x"));
	gc_params_release(&p);
}

static void test_params_list_ops(void **state)
{
	struct gc_params p = GC_PARAMS_INIT, q = GC_PARAMS_INIT;

	(void)state;
	gc_params_add(&p, "Content-Type", "a");
	gc_params_add(&p, "Signature", "s1");
	gc_params_add(&p, "Signature", "s2");
	gc_params_add(&p, "x", "y");
	assert_string_equal(gc_params_get_ci(&p, "content-type"), "a");
	assert_null(gc_params_get(&p, "content-type"));
	assert_int_equal(gc_params_count(&p, "Signature"), 2);
	assert_int_equal(gc_params_remove(&p, "Signature"), 2);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.items[1].name, "x");
	gc_params_add_all(&q, &p);
	assert_int_equal(q.n, 2);
	assert_string_equal(q.items[0].value, "a");
	gc_params_release(&p);
	gc_params_release(&q);
	gc_params_release(NULL);
}

static void test_sort_is_bytewise_on_encoded_names(void **state)
{
	struct gc_params p = GC_PARAMS_INIT;
	struct gc_buf b = GC_BUF_INIT(0);
	char name[32];

	(void)state;
	for (int i = 1; i <= 11; i++) {
		snprintf(name, sizeof(name), "InstanceId.%d", i);
		gc_params_add(&p, name, "i");
	}
	gc_params_add(&p, "Action", "Terminate");
	assert_int_equal(gc_params_encode_sorted(&b, &p), 0);
	assert_string_equal(b.data,
			    "Action=Terminate&InstanceId.1=i&InstanceId.10=i&"
			    "InstanceId.11=i&InstanceId.2=i&InstanceId.3=i&"
			    "InstanceId.4=i&InstanceId.5=i&InstanceId.6=i&"
			    "InstanceId.7=i&InstanceId.8=i&InstanceId.9=i");
	/* the list itself keeps its order until sorted */
	assert_string_equal(p.items[0].name, "InstanceId.1");
	assert_string_equal(p.items[11].name, "Action");
	gc_params_sort(&p);
	assert_string_equal(p.items[0].name, "Action");
	assert_string_equal(p.items[2].name, "InstanceId.10");
	gc_params_release(&p);
	gc_buf_release(&b);
}

static void test_sort_uses_encoded_form(void **state)
{
	struct gc_params p = GC_PARAMS_INIT;
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	/*
	 * Raw, '.' (0x2E) sorts before '/' (0x2F); encoded, "a%2F" sorts before "a." because
	 * '%' is 0x25. The clouds sort the encoded names.
	 */
	gc_params_add(&p, "a.", "1");
	gc_params_add(&p, "a/", "2");
	/* equal names sort by encoded value; "Z" before "a" bytewise */
	gc_params_add(&p, "k", "a");
	gc_params_add(&p, "k", "Z");
	gc_params_add(&p, "~", "t");
	gc_params_add(&p, "B", "u");
	assert_int_equal(gc_params_encode_sorted(&b, &p), 0);
	assert_string_equal(b.data, "B=u&a%2F=2&a.=1&k=Z&k=a&~=t");
	gc_buf_reset(&b);
	assert_int_equal(gc_params_encode(&b, &p), 0);
	assert_string_equal(b.data, "a.=1&a%2F=2&k=a&k=Z&~=t&B=u");
	gc_params_release(&p);
	gc_buf_release(&b);
}

static void test_request_headers_merge(void **state)
{
	struct gc_params in = GC_PARAMS_INIT, extra = GC_PARAMS_INIT, out = GC_PARAMS_INIT;
	struct gc_sign_request req = { 0 };
	struct gc_error err;

	(void)state;
	gc_params_add(&in, "X-Amz-Date", "d");
	/* a repeated name: the values are trimmed and joined with "," */
	gc_params_add(&in, "My-Header", "a ");
	gc_params_add(&in, "my-header", "\tb c");
	gc_params_add(&extra, "Content-Type", "t");
	req.host = "example.com";
	req.headers = &in;
	gc_error_init(&err);
	assert_int_equal(gc_sign_request_headers(&out, &req, &extra, &err), 0);
	assert_int_equal(out.n, 4);
	assert_string_equal(out.items[0].name, "content-type");
	assert_string_equal(out.items[1].name, "host");
	assert_string_equal(out.items[1].value, "example.com");
	assert_string_equal(out.items[2].name, "my-header");
	assert_string_equal(out.items[2].value, "a,b c");
	assert_string_equal(out.items[3].name, "x-amz-date");
	gc_params_release(&out);

	/* a header named host wins over req->host; no host at all is an error */
	gc_params_add(&in, "Host", "h.example");
	assert_int_equal(gc_sign_request_headers(&out, &req, NULL, &err), 0);
	assert_string_equal(gc_params_get(&out, "host"), "h.example");
	gc_params_release(&out);
	gc_params_remove(&in, "Host");
	req.host = NULL;
	assert_int_equal(gc_sign_request_headers(&out, &req, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);

	/* a name that is not an HTTP token could smuggle a ';' into the signed list */
	req.host = "example.com";
	gc_params_add(&in, "a;b", "x");
	assert_int_equal(gc_sign_request_headers(&out, &req, NULL, &err), -1);
	assert_int_equal(out.n, 0);
	gc_params_release(&in);
	gc_params_release(&extra);
}

static bool want_all(const char *name, const void *ctx)
{
	(void)ctx;
	return strcmp(name, "user-agent") != 0;
}

static void test_canonical_headers(void **state)
{
	struct gc_params h = GC_PARAMS_INIT;
	struct gc_buf canon = GC_BUF_INIT(0), list = GC_BUF_INIT(0);
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	gc_params_add(&h, "host", "Example.com");
	gc_params_add(&h, "my-header", " \"a   b \t c\"  ");
	gc_params_add(&h, "user-agent", "x");
	assert_int_equal(gc_sign_canonical_headers(&canon, &list, &h, NULL, want_all, NULL,
						   GC_HDR_COLLAPSE, &err),
			 0);
	assert_string_equal(canon.data, "host:Example.com\nmy-header:\"a b c\"\n");
	assert_string_equal(list.data, "host;my-header");
	gc_buf_reset(&canon);
	gc_buf_reset(&list);

	/* a verifier's list: its order and names, in any case; values lower-cased */
	assert_int_equal(gc_sign_canonical_headers(&canon, &list, &h, "User-Agent;HOST", NULL, NULL,
						   GC_HDR_LOWER, &err),
			 0);
	assert_string_equal(canon.data, "user-agent:x\nhost:example.com\n");
	assert_string_equal(list.data, "user-agent;host");
	gc_buf_reset(&canon);
	gc_buf_reset(&list);

	assert_int_equal(gc_sign_canonical_headers(&canon, &list, &h, "my-header", NULL, NULL,
						   GC_HDR_TRIM, &err),
			 0);
	assert_string_equal(canon.data, "my-header:\"a   b \t c\"\n");
	gc_buf_reset(&canon);
	gc_buf_reset(&list);

	assert_int_equal(gc_sign_canonical_headers(&canon, &list, &h, "host;x-missing", NULL, NULL,
						   GC_HDR_TRIM, &err),
			 -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "x-missing"));
	assert_int_equal(canon.len, 0);
	assert_int_equal(
		gc_sign_canonical_headers(&canon, &list, &h, "", NULL, NULL, GC_HDR_TRIM, &err),
		-1);
	gc_params_release(&h);
	gc_buf_release(&canon);
	gc_buf_release(&list);
}

static void test_parse_authorization(void **state)
{
	const char *bad[] = {
		"TC3-HMAC-SHA256 Credential=a, SignedHeaders=h, Signature=s",
		"ACS3-HMAC-SHA256 Credential=a,SignedHeaders=h",
		"ACS3-HMAC-SHA256 Credential=a,Credential=b,SignedHeaders=h,Signature=s",
		"ACS3-HMAC-SHA256 Credential=,SignedHeaders=h,Signature=s",
		"ACS3-HMAC-SHA256 Credential=a,SignedHeaders=h,Signature=s,Extra=1",
		"ACS3-HMAC-SHA256",
		"ACS3-HMAC-SHA256X Credential=a,SignedHeaders=h,Signature=s",
	};
	struct gc_sign_auth a;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_sign_parse_authorization(
				 &a,
				 "ACS3-HMAC-SHA256 Credential=AK,SignedHeaders=host;x,Signature=ab",
				 "ACS3-HMAC-SHA256", &err),
			 0);
	assert_string_equal(a.credential, "AK");
	assert_string_equal(a.signed_headers, "host;x");
	assert_string_equal(a.signature, "ab");
	gc_sign_auth_release(&a);

	assert_int_equal(gc_sign_parse_authorization(
				 &a, "TC3-HMAC-SHA256 Signature=s, Credential=i/d, SignedHeaders=h",
				 "TC3-HMAC-SHA256", &err),
			 0);
	assert_string_equal(a.credential, "i/d");
	gc_sign_auth_release(&a);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_error_init(&err);
		assert_int_equal(gc_sign_parse_authorization(&a, bad[i], "ACS3-HMAC-SHA256", &err),
				 -1);
		assert_int_equal(err.code, GC_EAUTH);
	}
}

static void test_sign_equal(void **state)
{
	(void)state;
	assert_true(gc_sign_equal("abc", "abc"));
	assert_false(gc_sign_equal("abc", "abd"));
	assert_false(gc_sign_equal("abc", "ab"));
	assert_true(gc_sign_equal("", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_rfc3986_set),
		cmocka_unit_test(test_encode_binary_and_path),
		cmocka_unit_test(test_encode_respects_cap),
		cmocka_unit_test(test_decode_plus),
		cmocka_unit_test(test_decode_rejects_malformed),
		cmocka_unit_test(test_decode_nul_byte),
		cmocka_unit_test(test_params_parse),
		cmocka_unit_test(test_params_list_ops),
		cmocka_unit_test(test_sort_is_bytewise_on_encoded_names),
		cmocka_unit_test(test_sort_uses_encoded_form),
		cmocka_unit_test(test_request_headers_merge),
		cmocka_unit_test(test_canonical_headers),
		cmocka_unit_test(test_parse_authorization),
		cmocka_unit_test(test_sign_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
