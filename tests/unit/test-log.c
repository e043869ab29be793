/*
 * test-log.c: level filtering, the sink seeing exactly the redacted line, every redaction
 * rule in every form it covers, registered secrets (raw, inside words, URL- and
 * base64-encoded, cut by truncation), text that must pass unchanged, long messages, and
 * logging from many threads at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/log.h"
#include "core/str.h"

struct capture {
	int count;
	enum gc_log_level level;
	char *last;
};

static void capture_sink(void *ctx, enum gc_log_level level, const char *line)
{
	struct capture *c = ctx;

	c->count++;
	c->level = level;
	free(c->last);
	c->last = gc_xstrdup(line);
}

static void capture_release(struct capture *c)
{
	free(c->last);
	c->last = NULL;
}

/* Redacts with no registered secrets and compares. */
static void check_redact(const char *in, const char *want)
{
	char *got = gc_log_redact(NULL, in);

	if (strcmp(got, want))
		fail_msg("redacting\n  <%s>\ngave\n  <%s>\nwanted\n  <%s>", in, got, want);
	free(got);
}

static void check_unchanged(const char *in)
{
	check_redact(in, in);
}

static void test_level_filtering(void **state)
{
	struct capture c = { 0 };
	struct gc_log log;

	(void)state;
	gc_log_init(&log, GC_LOG_INFO, capture_sink, &c);
	gc_log_debug(&log, "debug %d", 1);
	gc_log_trace(&log, "trace");
	assert_int_equal(c.count, 0);
	gc_log_info(&log, "info %d", 2);
	assert_int_equal(c.count, 1);
	assert_int_equal(c.level, GC_LOG_INFO);
	assert_string_equal(c.last, "info 2");
	gc_log_warn(&log, "warn");
	gc_log_error(&log, "error %s", "x");
	assert_int_equal(c.count, 3);
	assert_int_equal(c.level, GC_LOG_ERROR);
	assert_string_equal(c.last, "error x");
	log.level = GC_LOG_TRACE;
	gc_log_trace(&log, "trace %s", "now");
	assert_int_equal(c.count, 4);
	assert_int_equal(c.level, GC_LOG_TRACE);
	log.level = GC_LOG_ERROR;
	gc_log_warn(&log, "dropped");
	assert_int_equal(c.count, 4);
	gc_log_release(&log);
	capture_release(&c);

	/* no sink, or no log: dropped without harm */
	gc_log_init(&log, GC_LOG_TRACE, NULL, NULL);
	gc_log_error(&log, "nowhere");
	gc_log_release(&log);
	gc_log_error(NULL, "nowhere");
	gc_log_release(NULL);
}

static void test_sink_gets_redacted_line(void **state)
{
	struct capture c = { 0 };
	struct gc_log log;

	(void)state;
	gc_log_init(&log, GC_LOG_DEBUG, capture_sink, &c);
	gc_log_add_secret(&log, "tok-9f8e7d6c5b");
	gc_log_info(&log, "POST %s?Action=RunInstances&Password=%s&Version=2014-05-26 (%s)",
		    "https://ecs.aliyuncs.com/", "hunter22!", "tok-9f8e7d6c5b");
	assert_int_equal(c.count, 1);
	assert_string_equal(c.last,
			    "POST https://ecs.aliyuncs.com/?Action=RunInstances&"
			    "Password=***&Version=2014-05-26 (***)");
	gc_log_debug(&log, "> Authorization: %s\n> Host: ec2.us-east-1.amazonaws.com",
		     "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20240101/us-east-1/"
		     "ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123abcd");
	assert_string_equal(c.last, "> Authorization: ***\n> Host: ec2.us-east-1.amazonaws.com");
	gc_log_release(&log);
	capture_release(&c);
}

static void test_headers(void **state)
{
	(void)state;
	check_redact("Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/2024/"
		     "us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=fe5f80f77d5f\r\n"
		     "Host: ec2.amazonaws.com",
		     "Authorization: ***\r\nHost: ec2.amazonaws.com");
	check_redact("authorization: Bearer abc.def.ghi", "authorization: ***");
	check_redact("AUTHORIZATION:TC3-HMAC-SHA256 Credential=AKIDz8/2024/cvm/tc3_request",
		     "AUTHORIZATION:***");
	check_redact("Proxy-Authorization: Basic dXNlcjpwYXNz\nAccept: */*",
		     "Proxy-Authorization: ***\nAccept: */*");
	check_redact("X-Amz-Security-Token: FwoGZXIvYXdzEJr//////////wEaDA==\nX-Amz-Date: 1",
		     "X-Amz-Security-Token: ***\nX-Amz-Date: 1");
	check_redact("x-acs-security-token: CAIS8gF1q6Ft5B2yfSjIr5\nx-acs-action: RunInstances",
		     "x-acs-security-token: ***\nx-acs-action: RunInstances");
	check_redact("X-TC-Token: tc-session-token-1\nX-TC-Action: RunInstances",
		     "X-TC-Token: ***\nX-TC-Action: RunInstances");
	check_redact("x-tc-token:   spaced value  \n", "x-tc-token:   ***\n");
}

/* Every parameter name, in every form, in its own case and in lower case. */
static void test_named_values(void **state)
{
	static const char *const params[] = {
		"Signature",
		"SecurityToken",
		"X-Amz-Signature",
		"X-Amz-Security-Token",
		"X-Amz-Credential",
		"AccessKeySecret",
		"SecretKey",
		"SecretAccessKey",
		"aws_secret_access_key",
		"aws_session_token",
		"Password",
		"UserData",
		"user_data",
		"userdata",
		"Authorization",
		"x-acs-security-token",
		"X-TC-Token",
		"Proxy-Authorization",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		for (int lc = 0; lc < 2; lc++) {
			char name[64], *in, *want;

			snprintf(name, sizeof(name), "%s", params[i]);
			for (char *p = name; lc && *p; p++)
				if (*p >= 'A' && *p <= 'Z')
					*p = (char)(*p - 'A' + 'a');
#define CASE(fmt_in, fmt_want)                       \
	do {                                         \
		in = gc_xasprintf(fmt_in, name);     \
		want = gc_xasprintf(fmt_want, name); \
		check_redact(in, want);              \
		free(in);                            \
		free(want);                          \
	} while (0)
			/* query string and form body */
			CASE("Action=X&%s=s3cr3t%%2Bv%%3D&Version=1", "Action=X&%s=***&Version=1");
			CASE("?%s=s3cr3tVal", "?%s=***");
			CASE("%s=s3cr3tVal next", "%s=*** next");
			/* INI (credential files) and shell */
			CASE("%s = wJalrXUt/K7MDENG\nregion = x", "%s = ***\nregion = x");
			CASE("export %s=\"a b c\"; echo", "export %s=\"***\"; echo");
			/* JSON, compact and spaced, with an escaped quote in the value */
			CASE("{\"%s\":\"s3cr3t val\",\"b\":2}", "{\"%s\":\"***\",\"b\":2}");
			CASE("{ \"%s\" : \"x\\\"y\", \"b\": 2 }", "{ \"%s\" : \"***\", \"b\": 2 }");
			CASE("{\"%s\": 123456, \"b\": 2}", "{\"%s\": ***, \"b\": 2}");
			/* JSON logged inside a JSON string */
			CASE("{\"body\":\"{\\\"%s\\\":\\\"a\\\\\\\"b\\\"}\"}",
			     "{\"body\":\"{\\\"%s\\\":\\\"***\\\"}\"}");
			/* Python-style repr */
			CASE("{'%s': 's3cr3t'}", "{'%s': '***'}");
			/* YAML-ish and headers */
			CASE("  %s: s3cr3t value\nnext: 1", "  %s: ***\nnext: 1");
			/* XML */
			in = gc_xasprintf("<%s>s3cr3t</%s>", name, name);
			want = gc_xasprintf("<%s>***</%s>", name, name);
			check_redact(in, want);
			free(in);
			free(want);
			/* a URL-encoded URL inside a parameter */
			CASE("u=https%%3A%%2F%%2Fh%%2F%%3F%s%%3Ds3cr3t%%26a%%3D1",
			     "u=https%%3A%%2F%%2Fh%%2F%%3F%s%%3D***%%26a%%3D1");
#undef CASE
		}
	}
}

static void test_named_value_details(void **state)
{
	(void)state;
	/* names embedded in longer names are caught */
	check_redact("MasterUserPassword=pw1234&x=1", "MasterUserPassword=***&x=1");
	check_redact("{\"Credentials\":{\"Token\":\"t0k\",\"TmpSecretKey\":\"k3y\","
		     "\"TmpSecretId\":\"AKIDxx\"}}",
		     "{\"Credentials\":{\"Token\":\"***\",\"TmpSecretKey\":\"***\","
		     "\"TmpSecretId\":\"AKIDxx\"}}");
	check_redact("<AssumeRoleResult><Credentials><SessionToken>FQoG</SessionToken>"
		     "<SecretAccessKey>wJa</SecretAccessKey></Credentials>",
		     "<AssumeRoleResult><Credentials><SessionToken>***</SessionToken>"
		     "<SecretAccessKey>***</SecretAccessKey></Credentials>");
	/* nested XML content goes whole */
	check_redact("<userData><value>SGVsbG8=</value></userData><x>1</x>",
		     "<userData>***</userData><x>1</x>");
	/* YAML block scalars and nested blocks end where indentation returns */
	check_redact("user_data: |\n  #!/bin/bash\n\n  echo hi\nname: x",
		     "user_data: ***\nname: x");
	check_redact("  UserData: >-\n    line one\n    line two\n  other: 1",
		     "  UserData: ***\n  other: 1");
	check_redact("password:\n  nested: value\nafter: 1", "password:***\nafter: 1");
	/* environment variables of the three clouds' tools */
	check_redact("AWS_SECRET_ACCESS_KEY=abc AWS_SESSION_TOKEN=def ok",
		     "AWS_SECRET_ACCESS_KEY=*** AWS_SESSION_TOKEN=*** ok");
	check_redact("ALIBABA_CLOUD_ACCESS_KEY_SECRET=abc TENCENTCLOUD_SECRET_KEY=def",
		     "ALIBABA_CLOUD_ACCESS_KEY_SECRET=*** TENCENTCLOUD_SECRET_KEY=***");
	/* unterminated values mask to the end, never show a tail */
	check_redact("{\"Password\":\"abc", "{\"Password\":\"***");
}

static void test_private_keys(void **state)
{
	struct gc_buf pem = GC_BUF_INIT(0);
	struct gc_keypair kp;
	char *got, *in;

	(void)state;
	check_redact("key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
		     "AAAAAAAA\n-----END OPENSSH PRIVATE KEY-----\ndone",
		     "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n***\n"
		     "-----END OPENSSH PRIVATE KEY-----\ndone");
	check_redact("-----BEGIN RSA PRIVATE KEY-----\r\nMIIEpAIBAAKCAQEA\r\n"
		     "-----END RSA PRIVATE KEY-----\r\n",
		     "-----BEGIN RSA PRIVATE KEY-----\r\n***\r\n-----END RSA PRIVATE KEY-----\r\n");
	check_redact("x -----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY----- y",
		     "x -----BEGIN PRIVATE KEY-----\n***\n-----END PRIVATE KEY----- y");
	check_redact("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n"
		     "-----END ENCRYPTED PRIVATE KEY-----",
		     "-----BEGIN ENCRYPTED PRIVATE KEY-----\n***\n"
		     "-----END ENCRYPTED PRIVATE KEY-----");
	/* cut short: everything after BEGIN goes */
	check_redact("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\nMoreKeyMaterial",
		     "-----BEGIN EC PRIVATE KEY-----\n***");
	/* on one line, as inside a JSON string */
	check_redact("\"-----BEGIN OPENSSH PRIVATE KEY-----\\nAAAA\\n"
		     "-----END OPENSSH PRIVATE KEY-----\\n\"",
		     "\"-----BEGIN OPENSSH PRIVATE KEY-----***-----END OPENSSH PRIVATE KEY-----"
		     "\\n\"");
	/* base64 of an OpenSSH key without its armour */
	check_redact("k=b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA+/= done", "k=*** done");
	/* public material passes */
	check_unchanged("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n"
			"-----END CERTIFICATE-----");
	check_unchanged("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----");
	check_unchanged("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHx8 gpucluster:c1");

	/* a real key: not one of its base64 lines survives */
	assert_int_equal(gc_keypair_generate(&kp, "c1", NULL), 0);
	assert_int_equal(gc_keypair_private_pem(&pem, &kp, NULL), 0);
	in = gc_xasprintf("writing key:\n%s(end)", pem.data);
	got = gc_log_redact(NULL, in);
	assert_string_equal(got,
			    "writing key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n***\n"
			    "-----END OPENSSH PRIVATE KEY-----\n(end)");
	free(got);
	free(in);
	gc_keypair_wipe_buf(&pem);
	gc_keypair_release(&kp);
}

static void test_aws_key_ids(void **state)
{
	(void)state;
	check_redact("using key AKIAIOSFODNN7EXAMPLE for s3", "using key AKIA*** for s3");
	check_redact("ASIAY34FZKBOKMUTVV7A,AKIAIOSFODNN7EXAMPLE", "ASIA***,AKIA***");
	check_redact("(AKIAIOSFODNN7EXAMPLE)", "(AKIA***)");
	/* too short, or lower case: not an access key id */
	check_unchanged("AKIAIOSFODNN7EXAMP is short");
	check_unchanged("akiaiosfodnn7example");
	check_unchanged("AKIA");
}

static void test_plain_text_passes(void **state)
{
	(void)state;
	check_unchanged("");
	check_unchanged("instance i-0abc123 running in us-east-1a (p4d.24xlarge, 8 GPUs)");
	check_unchanged("Action=DescribeInstances&Version=2016-11-15&Filter.1.Name=tag-key");
	check_unchanged("SignatureMethod=HMAC-SHA1&SignatureVersion=1.0&SignatureNonce=abc");
	check_unchanged("PasswordInherit=true&NextToken=abc&ClientToken=def");
	check_unchanged("The request signature we calculated does not match the signature");
	check_unchanged("{\"NextToken\":\"n1\",\"InstanceIds\":[\"i-1\",\"i-2\"]}");
	check_unchanged("h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 100% done %2F %zz");
	check_unchanged("userData attribute requested; Password reset skipped");
	check_unchanged("tags: {team: research}\nname: llm-train");
}

/* URLs: userinfo and credentials in a query string; plain URLs pass */
static void test_urls(void **state)
{
	(void)state;
	check_redact("cannot reach http://user:hunter2@host:8080/x?y=1",
		     "cannot reach http://user:***@host:8080/x?y=1");
	check_redact("https://ghp_abcdefgh@github.com/a/b", "https://***@github.com/a/b");
	check_redact("https://o/x?OSSAccessKeyId=LTAIabc&Expires=1&token=t0k&access_token=a1",
		     "https://o/x?OSSAccessKeyId=***&Expires=1&token=***&access_token=***");
	check_unchanged("http://host/@x https://h:8443/p?Action=RunInstances&NextToken=n1");
	check_unchanged("mail user@example.com about ?x=1&ClientToken=c1");
}

static void test_registered_secrets(void **state)
{
	struct capture c = { 0 };
	struct gc_buf b64 = GC_BUF_INIT(0);
	struct gc_log log;
	size_t n;
	char *got;

	(void)state;
	gc_log_init(&log, GC_LOG_TRACE, capture_sink, &c);
	gc_log_add_secret(&log, "S3cr3t/K3y+Value");
	n = log.n_secrets;
	gc_log_add_secret(&log, "S3cr3t/K3y+Value"); /* deduplicated */
	assert_int_equal(log.n_secrets, n);
	gc_log_add_secret(&log, "abc"); /* too short: ignored */
	gc_log_add_secret(&log, NULL);
	assert_int_equal(log.n_secrets, n);
	gc_log_add_secret(&log, "my pass phrase");

	gc_log_info(&log, "key %s", "S3cr3t/K3y+Value");
	assert_string_equal(c.last, "key ***");
	gc_log_info(&log, "prefixS3cr3t/K3y+Valuesuffix");
	assert_string_equal(c.last, "prefix***suffix");
	gc_log_info(&log, "q=S3cr3t%%2FK3y%%2BValue&x=1 q=S3cr3t%%2fK3y%%2bValue");
	assert_string_equal(c.last, "q=***&x=1 q=***");
	gc_log_info(&log, "p=my+pass+phrase&q=my%%20pass%%20phrase abc");
	assert_string_equal(c.last, "p=***&q=*** abc");
	/* overlapping occurrences merge into one mask */
	gc_log_info(&log, "S3cr3t/K3y+ValueS3cr3t/K3y+Value!");
	assert_string_equal(c.last, "***!");

	/* base64, at each of the three alignments inside a longer blob */
	for (size_t k = 0; k < 3; k++) {
		char raw[64];
		int len = snprintf(raw, sizeof(raw), "%.*suser:S3cr3t/K3y+Value@", (int)k, "xx");

		gc_buf_reset(&b64);
		assert_int_equal(gc_base64_encode(&b64, raw, (size_t)len), 0);
		got = gc_log_redact(&log, b64.data);
		assert_non_null(strstr(got, "***"));
		/* what is left is at most the edges: a few characters, not the secret */
		assert_true(strlen(got) < b64.len - 14);
		free(got);
	}

	/* the redactor alone, for error text shown to users */
	got = gc_log_redact(&log, "cannot sign with 'S3cr3t/K3y+Value'");
	assert_string_equal(got, "cannot sign with '***'");
	free(got);
	/* short and unregistered values pass */
	got = gc_log_redact(&log, "abc S3cr3t/K3y");
	assert_string_equal(got, "abc S3cr3t/K3y");
	free(got);

	gc_buf_release(&b64);
	gc_log_release(&log);
	capture_release(&c);
}

static void test_long_message_truncated(void **state)
{
	struct capture c = { 0 };
	struct gc_log log;
	size_t big = 100 << 10, pre;
	char *msg = gc_xmalloc(big + 1), *got;

	(void)state;
	gc_log_init(&log, GC_LOG_INFO, capture_sink, &c);
	memset(msg, 'x', big);
	msg[big] = '\0';
	gc_log_info(&log, "%s", msg);
	assert_int_equal(c.count, 1);
	assert_int_equal(strlen(c.last), GC_LOG_LINE_MAX + strlen(GC_LOG_TRUNCATED));
	assert_true(gc_ends_with(c.last, GC_LOG_TRUNCATED));
	assert_int_equal(strspn(c.last, "x"), GC_LOG_LINE_MAX);

	/* the cut never splits a UTF-8 character: 'a' then 2-byte characters */
	msg[0] = 'a';
	for (size_t i = 1; i + 1 < big; i += 2) {
		msg[i] = '\xc3';
		msg[i + 1] = '\xa9';
	}
	msg[big - 1] = 'z';
	gc_log_info(&log, "%s", msg);
	assert_true(strlen(c.last) <= GC_LOG_LINE_MAX + strlen(GC_LOG_TRUNCATED));
	assert_true(gc_utf8_valid(c.last, strlen(c.last)));

	/* a registered secret cut in half by the cap is still masked */
	gc_log_add_secret(&log, "ZZsecretZZsecretZZ");
	pre = GC_LOG_LINE_MAX - 5;
	memset(msg, 'y', pre);
	snprintf(msg + pre, big + 1 - pre, "%s", "ZZsecretZZsecretZZ tail");
	gc_log_info(&log, "%s", msg);
	assert_int_equal(strspn(c.last, "y"), pre);
	assert_string_equal(c.last + pre, "***" GC_LOG_TRUNCATED);

	/* gc_log_redact itself has no cap: a 100 KiB text is redacted to its end */
	memset(msg, 'w', big);
	memcpy(msg + big - 14, "Password=abcde", 14);
	got = gc_log_redact(&log, msg);
	assert_int_equal(strlen(got), big - 5 + 3);
	assert_true(gc_ends_with(got, "Password=***"));
	free(got);

	free(msg);
	gc_log_release(&log);
	capture_release(&c);
}

#define THREADS	   8
#define PER_THREAD 2000

struct counting {
	long lines;
	long leaks;
};

/* No locking here on purpose: the log serialises sink calls. */
static void counting_sink(void *ctx, enum gc_log_level level, const char *line)
{
	struct counting *c = ctx;

	(void)level;
	c->lines++;
	if (strstr(line, "Thr3adS3cret") || !gc_starts_with(line, "worker "))
		c->leaks++;
}

static void *worker(void *arg)
{
	struct gc_log *log = arg;

	for (int i = 0; i < PER_THREAD; i++)
		gc_log_info(log, "worker %p line %d: Thr3adS3cret Password=x%d", (void *)&i, i, i);
	return NULL;
}

static void *adder(void *arg)
{
	struct gc_log *log = arg;

	for (int i = 0; i < 50; i++) {
		char s[32];

		snprintf(s, sizeof(s), "other-secret-%d", i);
		gc_log_add_secret(log, s);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct counting c = { 0, 0 };
	pthread_t t[THREADS], a;
	struct gc_log log;

	(void)state;
	gc_log_init(&log, GC_LOG_INFO, counting_sink, &c);
	gc_log_add_secret(&log, "Thr3adS3cret");
	assert_int_equal(pthread_create(&a, NULL, adder, &log), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, &log), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	assert_int_equal(c.lines, THREADS * PER_THREAD);
	assert_int_equal(c.leaks, 0);
	gc_log_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_filtering),
		cmocka_unit_test(test_sink_gets_redacted_line),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_named_values),
		cmocka_unit_test(test_named_value_details),
		cmocka_unit_test(test_private_keys),
		cmocka_unit_test(test_aws_key_ids),
		cmocka_unit_test(test_plain_text_passes),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_registered_secrets),
		cmocka_unit_test(test_long_message_truncated),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
