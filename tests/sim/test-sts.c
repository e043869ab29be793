/*
 * test-sts.c: the emulator's STS and the AWS credential chain that uses it.
 *
 * First the frontend called directly (through sim_ec2_handle, so the routing by
 * credential scope is part of every call): AssumeRole, AssumeRoleWithWebIdentity and
 * GetCallerIdentity with their answers, validation and errors, and the temporary
 * credentials they issue being accepted by EC2 only with their own unexpired session
 * token. Then the chain end to end against the emulator served in-process on 127.0.0.1:
 * role profiles chained through source_profile (with external_id, duration_seconds and
 * role_session_name on the wire), web identity from a token file, STS errors mapped onto
 * the error taxonomy and throttling retried, and a signed EC2 call made with the
 * resulting session credentials.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/http.h"
#include "core/str.h"
#include "fake-clock.h"
#include "sim-fixture.h"
#include "providers/aws/creds.h"
#include "providers/aws/sigv4.h"
#include "sim/oidc.h"
#include "sim/server.h"
#include "sim/sim.h"

#define AKID	"AKIAGPUCLUSTERSIM001"
#define SECRET	"gpucluster-sim-aws-secret-key-0000000000"
#define ACCOUNT "111122223333"
#define ROLE	"arn:aws:iam::" ACCOUNT ":role/builder"

/* --- calling the frontend ------------------------------------------------------------- */

struct who {
	const char *akid, *secret, *token; /* NULL akid: unsigned */
	const char *service;		   /* default "sts" */
	int64_t shift_s;		   /* added to the emulator's clock */
};

static const struct who root = { AKID, SECRET, NULL, "sts", 0 };

struct reply {
	int status;
	char code[128];
	xmlDocPtr doc;
	json_t *log_params;
};

static void reply_release(struct reply *r)
{
	if (r->doc)
		xmlFreeDoc(r->doc);
	json_decref(r->log_params);
	memset(r, 0, sizeof(*r));
}

static xmlNodePtr find(xmlNodePtr n, const char *name)
{
	for (; n; n = n->next) {
		xmlNodePtr f;
		if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0)
			return n;
		if ((f = find(n->children, name)))
			return f;
	}
	return NULL;
}

/* The text of the first `name` (static buffer, one of four in turn; "" when absent). */
static const char *text(const struct reply *r, const char *name)
{
	static char bufs[4][4096];
	static int k;
	char *buf = bufs[k++ % 4];
	xmlNodePtr n = r->doc ? find(xmlDocGetRootElement(r->doc), name) : NULL;
	xmlChar *t;

	buf[0] = '\0';
	if (!n)
		return buf;
	t = xmlNodeGetContent(n);
	snprintf(buf, 4096, "%s", t ? (const char *)t : "");
	xmlFree(t);
	return buf;
}

static void vsend(const struct who *w, struct reply *out, const char *const *kv)
{
	struct gc_params form = GC_PARAMS_INIT, headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1 << 20);
	struct gc_sign_result sr;
	struct gc_sign_request req;
	struct aws_sigv4_input in;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];
	time_t now = time(NULL);

	gc_error_init(&err);
	for (size_t i = 0; kv[i]; i += 2)
		gc_params_add(&form, kv[i], kv[i + 1]);
	assert_int_equal(gc_params_encode(&body, &form), 0);
	gc_params_add(&headers, "Content-Type", "application/x-www-form-urlencoded");
	gc_params_add(&headers, "Host", "127.0.0.1:8000");
	if (w->akid) {
		memset(&req, 0, sizeof(req));
		req.method = "POST";
		req.path = "/";
		req.headers = &headers;
		req.body = body.data;
		req.body_len = body.len;
		memset(&in, 0, sizeof(in));
		aws_sigv4_format_time(now + w->shift_s, ts);
		in.access_key_id = w->akid;
		in.secret_access_key = w->secret;
		in.session_token = w->token;
		in.timestamp = ts;
		in.region = "us-east-1";
		in.service = w->service ? w->service : "sts";
		assert_int_equal(aws_sigv4_sign(&sr, &req, &in, &err), 0);
		gc_params_add_all(&headers, &sr.added_headers);
		gc_sign_result_release(&sr);
	}
	memset(&sreq, 0, sizeof(sreq));
	sreq.cloud = SIM_AWS;
	sreq.method = "POST";
	sreq.path = "/";
	sreq.query_string = "";
	sreq.query = &query;
	sreq.headers = &headers;
	sreq.body = body.data;
	sreq.body_len = body.len;
	sreq.now = now + w->shift_s;
	sim_resp_init(&resp);
	sim_ec2_handle(&sim, &sreq, &resp);

	memset(out, 0, sizeof(*out));
	out->status = resp.status;
	snprintf(out->code, sizeof(out->code), "%s", resp.error_code);
	out->doc =
		xmlReadMemory(resp.body.data, (int)resp.body.len, "r.xml", NULL, XML_PARSE_NONET);
	assert_non_null(out->doc);
	out->log_params = json_incref(resp.log_params);
	if (resp.error_code[0] && strcmp(w->service ? w->service : "sts", "sts") == 0) {
		/* STS's error document */
		assert_string_equal((const char *)xmlDocGetRootElement(out->doc)->name,
				    "ErrorResponse");
		assert_string_equal(text(out, "Code"), resp.error_code);
		assert_string_equal(text(out, "Type"), resp.status >= 500 ? "Receiver" : "Sender");
		assert_int_equal(strlen(text(out, "RequestId")), 36);
	}
	sim_resp_release(&resp);
	gc_buf_release(&body);
	gc_params_release(&form);
	gc_params_release(&headers);
	gc_params_release(&query);
}

#define SEND(w, out, ...)                                        \
	do {                                                     \
		const char *const kv_[] = { __VA_ARGS__, NULL }; \
		vsend((w), (out), kv_);                          \
	} while (0)
#define STS(action) "Action", action, "Version", "2011-06-15"
#define EC2(action) "Action", action, "Version", "2016-11-15"

/* Temporary credentials, copied out of an answer. */
struct temp {
	char akid[64], secret[64], token[1024], expiration[32], arn[256], role_id[128];
};

static void take(const struct reply *r, struct temp *t)
{
	assert_int_equal(r->status, 200);
	snprintf(t->akid, sizeof(t->akid), "%s", text(r, "AccessKeyId"));
	snprintf(t->secret, sizeof(t->secret), "%s", text(r, "SecretAccessKey"));
	snprintf(t->token, sizeof(t->token), "%s", text(r, "SessionToken"));
	snprintf(t->expiration, sizeof(t->expiration), "%s", text(r, "Expiration"));
	snprintf(t->arn, sizeof(t->arn), "%s", text(r, "Arn"));
	snprintf(t->role_id, sizeof(t->role_id), "%s", text(r, "AssumedRoleId"));
}

static void assume(const struct who *w, const char *session, const char *duration, struct temp *t)
{
	struct reply r;

	if (duration)
		SEND(w, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", session,
		     "DurationSeconds", duration);
	else
		SEND(w, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", session);
	if (r.status != 200)
		print_message("AssumeRole: %d %s\n", r.status, r.code);
	take(&r, t);
	reply_release(&r);
}

static void expect(const struct reply *r, int status, const char *code)
{
	if (r->status != status || strcmp(r->code, code) != 0) {
		print_message("wanted %d %s, got %d %s (%s)\n", status, code, r->status, r->code,
			      text(r, "Message"));
		fail();
	}
}

/* --- the frontend --------------------------------------------------------------------- */

static void test_assume_role_and_use(void **state)
{
	struct temp t, other;
	struct who w = { NULL, NULL, NULL, "ec2", 0 };
	struct reply r;
	char when[32];
	struct tm tm;
	time_t exp;

	(void)state;
	assume(&root, "s1", NULL, &t);
	assert_true(gc_starts_with(t.akid, "ASIA"));
	assert_int_equal(strlen(t.akid), 20);
	assert_int_equal(strlen(t.secret), 40);
	assert_true(strlen(t.token) > 40);
	assert_string_equal(t.arn, "arn:aws:sts::" ACCOUNT ":assumed-role/builder/s1");
	assert_true(gc_starts_with(t.role_id, "AROA"));
	assert_true(gc_ends_with(t.role_id, ":s1"));
	/* an hour by default */
	exp = time(NULL) + 3600;
	gmtime_r(&exp, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M", &tm);
	assert_true(gc_starts_with(t.expiration, when));
	assume(&root, "s2", "900", &other);
	assert_string_not_equal(other.akid, t.akid);

	/* EC2 takes them with their own token */
	w.akid = t.akid;
	w.secret = t.secret;
	w.token = t.token;
	SEND(&w, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 200);
	reply_release(&r);
	/* and not without it, with another session's, or with a forged one */
	w.token = NULL;
	SEND(&w, &r, EC2("DescribeRegions"));
	expect(&r, 401, "AuthFailure");
	reply_release(&r);
	w.token = other.token;
	SEND(&w, &r, EC2("DescribeRegions"));
	expect(&r, 401, "AuthFailure");
	reply_release(&r);
	{
		char forged[sizeof(t.token)];
		snprintf(forged, sizeof(forged), "%s", t.token);
		forged[10] = forged[10] == 'A' ? 'B' : 'A';
		w.token = forged;
		SEND(&w, &r, EC2("DescribeRegions"));
		expect(&r, 401, "AuthFailure");
		reply_release(&r);
	}
	/* a wrong secret with the right token: the signature fails, which EC2 calls
	 * AuthFailure (STS would say SignatureDoesNotMatch) */
	w.token = t.token;
	w.secret = other.secret;
	SEND(&w, &r, EC2("DescribeRegions"));
	expect(&r, 401, "AuthFailure");
	reply_release(&r);
	/* an hour later they are gone, for EC2 and STS alike */
	w.secret = t.secret;
	w.shift_s = 3601;
	SEND(&w, &r, EC2("DescribeRegions"));
	expect(&r, 401, "AuthFailure");
	reply_release(&r);
	w.service = "sts";
	SEND(&w, &r, STS("GetCallerIdentity"));
	expect(&r, 400, "ExpiredToken");
	reply_release(&r);
	/* the one of 900 s is gone after 900 s, still valid before */
	w.akid = other.akid;
	w.secret = other.secret;
	w.token = other.token;
	w.shift_s = 899;
	SEND(&w, &r, STS("GetCallerIdentity"));
	assert_int_equal(r.status, 200);
	reply_release(&r);
	w.shift_s = 900;
	SEND(&w, &r, STS("GetCallerIdentity"));
	expect(&r, 400, "ExpiredToken");
	reply_release(&r);
}

static void test_caller_identity(void **state)
{
	struct temp t;
	struct who w = { NULL, NULL, NULL, "sts", 0 };
	struct reply r;

	(void)state;
	SEND(&root, &r, STS("GetCallerIdentity"));
	assert_int_equal(r.status, 200);
	assert_string_equal((const char *)xmlDocGetRootElement(r.doc)->name,
			    "GetCallerIdentityResponse");
	assert_string_equal(text(&r, "Arn"), "arn:aws:iam::" ACCOUNT ":user/gpucluster-sim");
	assert_string_equal(text(&r, "Account"), ACCOUNT);
	assert_true(gc_starts_with(text(&r, "UserId"), "AIDA"));
	assert_int_equal(strlen(text(&r, "RequestId")), 36);
	reply_release(&r);

	assume(&root, "who-am-i", NULL, &t);
	w.akid = t.akid;
	w.secret = t.secret;
	w.token = t.token;
	SEND(&w, &r, STS("GetCallerIdentity"));
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "Arn"), t.arn);
	assert_string_equal(text(&r, "UserId"), t.role_id);
	reply_release(&r);
}

static void test_assume_role_errors(void **state)
{
	struct who w = root;
	struct temp t;
	struct reply r;

	(void)state;
	SEND(&root, &r, STS("AssumeRole"), "RoleSessionName", "s");
	expect(&r, 400, "ValidationError");
	assert_string_equal(text(&r, "Message"),
			    "1 validation error detected: Value null at 'roleArn' failed to "
			    "satisfy constraint: Member must not be null");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE);
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "x");
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "has space");
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "s1",
	     "DurationSeconds", "899");
	expect(&r, 400, "ValidationError");
	assert_string_equal(text(&r, "Message"),
			    "1 validation error detected: Value '899' at 'durationSeconds' failed "
			    "to satisfy constraint: Member must have value greater than or equal "
			    "to 900");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "s1",
	     "DurationSeconds", "43201");
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "s1", "ExternalId",
	     "x");
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", "arn:aws:iam::1234:role/builder",
	     "RoleSessionName", "s1");
	expect(&r, 400, "ValidationError");
	assert_string_equal(text(&r, "Message"), "arn:aws:iam::1234:role/builder is invalid");
	reply_release(&r);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", "arn:aws:iam::999999999999:role/x",
	     "RoleSessionName", "s1", "ExternalId", "ext-123");
	expect(&r, 403, "AccessDenied");
	assert_string_equal(text(&r, "Message"),
			    "User: arn:aws:iam::" ACCOUNT ":user/gpucluster-sim is not authorized "
			    "to perform: sts:AssumeRole on resource: "
			    "arn:aws:iam::999999999999:role/x");
	reply_release(&r);
	/* a role path, an external id and the longest session are fine */
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", "arn:aws:iam::" ACCOUNT ":role/ci/deploy",
	     "RoleSessionName", "s1", "ExternalId", "ext-123", "DurationSeconds", "43200");
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "Arn"), "arn:aws:sts::" ACCOUNT ":assumed-role/deploy/s1");
	reply_release(&r);

	/* role chaining caps the session at an hour */
	assume(&root, "first", NULL, &t);
	w.akid = t.akid;
	w.secret = t.secret;
	w.token = t.token;
	SEND(&w, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "second",
	     "DurationSeconds", "7200");
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	assume(&w, "second", "3600", &t);

	/* authentication */
	w = root;
	w.akid = NULL;
	SEND(&w, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "s1");
	expect(&r, 403, "MissingAuthenticationToken");
	reply_release(&r);
	w = root;
	w.secret = "wrong";
	SEND(&w, &r, STS("GetCallerIdentity"));
	expect(&r, 403, "SignatureDoesNotMatch");
	reply_release(&r);
	w = root;
	w.akid = "AKIAUNKNOWN000000000";
	SEND(&w, &r, STS("GetCallerIdentity"));
	expect(&r, 403, "InvalidClientTokenId");
	reply_release(&r);
	w = root;
	w.shift_s = 0;
	SEND(&root, &r, STS("DescribeInstances"));
	expect(&r, 400, "InvalidAction");
	reply_release(&r);
	SEND(&root, &r, "Action", "GetCallerIdentity", "Version", "2016-11-15");
	expect(&r, 400, "InvalidAction");
	reply_release(&r);

	/* faults apply to STS actions by name */
	assert_int_equal(sim_faults_add(sim.faults, "aws:AssumeRole:throttle,times=1", NULL), 0);
	SEND(&root, &r, STS("AssumeRole"), "RoleArn", ROLE, "RoleSessionName", "s1");
	expect(&r, 400, "Throttling");
	reply_release(&r);
	assert_int_equal(sim_faults_add(sim.faults, "aws:GetCallerIdentity:5xx,times=1", NULL), 0);
	SEND(&root, &r, STS("GetCallerIdentity"));
	expect(&r, 500, "InternalFailure");
	reply_release(&r);
	SEND(&root, &r, STS("GetCallerIdentity"));
	assert_int_equal(r.status, 200);
	reply_release(&r);
}

/* The emulator's issuer, under GitHub's name: the account's identity provider. */
#define ISSUER "https://token.actions.githubusercontent.com"

static int oidc_setup(void **state)
{
	setup(state);
	sim.oidc = sim_oidc_new(NULL);
	if (!sim.oidc)
		return -1;
	sim_oidc_set_issuer(sim.oidc, ISSUER);
	return 0;
}

static int oidc_teardown(void **state)
{
	sim_oidc_free(sim.oidc);
	sim.oidc = NULL;
	return teardown(state);
}

/* A token from the emulator's issuer for aud, issued at iat (0: now). */
static char *jwt(const char *aud, int64_t iat)
{
	struct sim_oidc_claims c;
	char *t;

	memset(&c, 0, sizeof(c));
	c.audience = aud;
	c.iat = iat;
	t = sim_oidc_issue(sim.oidc, &c);
	assert_non_null(t);
	return t;
}

/* A JWT-shaped token whose parts are the texts given, with a made-up signature. */
static char *fake_jwt(const char *header, const char *claims)
{
	struct gc_buf b = GC_BUF_INIT(1 << 16), out = GC_BUF_INIT(1 << 16);
	const char *parts[2] = { header, claims };

	for (int i = 0; i < 2; i++) {
		gc_buf_reset(&b);
		gc_base64_encode(&b, parts[i], strlen(parts[i]));
		for (size_t k = 0; k < b.len; k++) {
			char c = b.data[k];
			if (c == '=')
				break;
			gc_buf_addch(&out, c == '+' ? '-' : c == '/' ? '_' : c);
		}
		gc_buf_addch(&out, '.');
	}
	gc_buf_addstr(&out, "c2lnbmF0dXJl-_x");
	gc_buf_release(&b);
	return gc_buf_detach(&out, NULL);
}

static void test_web_identity(void **state)
{
	const struct who anon = { NULL, NULL, NULL, "sts", 0 };
	struct who w = { NULL, NULL, NULL, "ec2", 0 };
	char *token = jwt("sts.amazonaws.com", 0);
	char *wrong_aud = jwt("https://github.com/acme", 0);
	char *expired = jwt("sts.amazonaws.com", 1000);
	char *hs256 =
		fake_jwt("{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
			 "{\"iss\":\"" ISSUER "\",\"sub\":\"x\",\"aud\":\"sts.amazonaws.com\"}");
	char *forged =
		fake_jwt("{\"alg\":\"RS256\",\"typ\":\"JWT\"}",
			 "{\"iss\":\"" ISSUER "\",\"sub\":\"x\",\"aud\":\"sts.amazonaws.com\"}");
	const char *bad[] = { "abcd", "ab.cd", "a.b.c", "e30.e30.", "!!!.e30.sig", NULL };
	char *not_json = fake_jwt("{\"alg\":\"RS256\"}", "[1]");
	char *other = NULL;
	struct sim_oidc *stranger = sim_oidc_new(NULL);
	struct sim_oidc_claims oc;
	struct temp t;
	struct reply r;

	(void)state;
	assert_non_null(stranger);
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE, "RoleSessionName",
	     "gh-run-1", "WebIdentityToken", token);
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "SubjectFromWebIdentityToken"),
			    "repo:gpucluster-sim/ci:ref:refs/heads/main");
	assert_string_equal(text(&r, "Audience"), "sts.amazonaws.com");
	assert_string_equal(text(&r, "Provider"), ISSUER);
	take(&r, &t);
	assert_string_equal(t.arn, "arn:aws:sts::" ACCOUNT ":assumed-role/builder/gh-run-1");
	/* the token is a bearer secret: the request log only shows its size */
	{
		char note[64];
		snprintf(note, sizeof(note), "<redacted: %zu characters>", strlen(token));
		assert_string_equal(
			json_string_value(json_object_get(r.log_params, "WebIdentityToken")), note);
	}
	reply_release(&r);
	w.akid = t.akid;
	w.secret = t.secret;
	w.token = t.token;
	SEND(&w, &r, EC2("DescribeInstances"));
	assert_int_equal(r.status, 200);
	reply_release(&r);

	/* what STS checks: the audience its identity provider trusts */
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE, "RoleSessionName",
	     "gh-run-1", "WebIdentityToken", wrong_aud);
	expect(&r, 400, "InvalidIdentityToken");
	assert_string_equal(text(&r, "Message"), "Incorrect token audience");
	reply_release(&r);
	/* an issuer the account has no provider for */
	sim_oidc_set_issuer(stranger, "https://oidc.example.com");
	memset(&oc, 0, sizeof(oc));
	oc.audience = "sts.amazonaws.com";
	other = sim_oidc_issue(stranger, &oc);
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE, "RoleSessionName",
	     "gh-run-1", "WebIdentityToken", other);
	expect(&r, 400, "InvalidIdentityToken");
	assert_string_equal(text(&r, "Message"),
			    "No OpenIDConnect provider found in your account for "
			    "https://oidc.example.com");
	reply_release(&r);
	free(other);
	/* the right issuer's name on another key's signature, and a forged one */
	sim_oidc_set_issuer(stranger, ISSUER);
	other = sim_oidc_issue(stranger, &oc);
	{
		const char *wrong[] = { other, forged, hs256 };

		for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
			SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE,
			     "RoleSessionName", "gh-run-1", "WebIdentityToken", wrong[i]);
			expect(&r, 400, "InvalidIdentityToken");
			assert_non_null(strstr(text(&r, "Message"), "The token is not valid: "));
			reply_release(&r);
		}
	}
	for (size_t i = 0; bad[i]; i++) {
		SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE,
		     "RoleSessionName", "gh-run-1", "WebIdentityToken", bad[i]);
		expect(&r, 400, "InvalidIdentityToken");
		reply_release(&r);
	}
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE, "RoleSessionName",
	     "gh-run-1", "WebIdentityToken", not_json);
	expect(&r, 400, "InvalidIdentityToken");
	assert_string_equal(text(&r, "Message"), "Couldn't parse the token");
	reply_release(&r);
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE, "RoleSessionName",
	     "gh-run-1", "WebIdentityToken", expired);
	expect(&r, 400, "ExpiredTokenException");
	reply_release(&r);
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn", ROLE, "WebIdentityToken",
	     token);
	expect(&r, 400, "ValidationError");
	reply_release(&r);
	/* a role in another account */
	SEND(&anon, &r, STS("AssumeRoleWithWebIdentity"), "RoleArn",
	     "arn:aws:iam::999999999999:role/builder", "RoleSessionName", "gh-run-1",
	     "WebIdentityToken", token);
	expect(&r, 403, "AccessDenied");
	reply_release(&r);
	free(token);
	free(wrong_aud);
	free(expired);
	free(hs256);
	free(forged);
	free(not_json);
	free(other);
	sim_oidc_free(stranger);
}

static void test_routing(void **state)
{
	struct gc_params h = GC_PARAMS_INIT, q = GC_PARAMS_INIT;
	const char *webid = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15";
	const char *ec2 = "Action=DescribeInstances&Version=2016-11-15";
	struct sim_req req;

	(void)state;
	memset(&req, 0, sizeof(req));
	req.headers = &h;
	req.query = &q;
	req.method = "POST";
	/* unsigned: only AssumeRoleWithWebIdentity, in the body or the query */
	req.body = webid;
	req.body_len = strlen(webid);
	assert_true(sim_sts_wants(&req));
	req.body = ec2;
	req.body_len = strlen(ec2);
	assert_false(sim_sts_wants(&req));
	gc_params_add(&q, "Action", "AssumeRoleWithWebIdentity");
	assert_true(sim_sts_wants(&req));
	gc_params_release(&q);
	/* so that an unsigned AssumeRole gets STS's answer, not EC2's */
	gc_params_add(&q, "Action", "AssumeRole");
	assert_true(sim_sts_wants(&req));
	gc_params_release(&q);
	gc_params_add(&q, "Action", "RunInstances");
	assert_false(sim_sts_wants(&req));
	gc_params_release(&q);
	/* signed: by the credential scope's service */
	gc_params_add(&h, "Authorization",
		      "AWS4-HMAC-SHA256 Credential=AKID/20270115/us-east-1/sts/aws4_request, "
		      "SignedHeaders=host, Signature=00");
	assert_true(sim_sts_wants(&req));
	gc_params_release(&h);
	gc_params_add(&h, "Authorization",
		      "AWS4-HMAC-SHA256 Credential=AKID/20270115/us-east-1/ec2/aws4_request, "
		      "SignedHeaders=host, Signature=00");
	req.body = webid;
	req.body_len = strlen(webid);
	assert_false(sim_sts_wants(&req));
	gc_params_release(&h);
	gc_params_add(&h, "Authorization", "AWS4-HMAC-SHA256 Credential=sts, Signature=00");
	assert_false(sim_sts_wants(&req));
	gc_params_release(&h);
	gc_params_add(&h, "Authorization",
		      "AWS4-HMAC-SHA256 Credential=AKID/20270115/us-east-1/stsx/aws4_request");
	assert_false(sim_sts_wants(&req));
	gc_params_release(&h);
}

/* --- the chain against the emulator on 127.0.0.1 -------------------------------------- */

struct env_var {
	const char *name;
	char *value;
};

struct chain_env {
	char home[64];
	char endpoint[64];
	char log_path[128];
	struct env_var vars[16];
	size_t n;
	struct gc_spec_env env;
	struct sim_server *srv;
	struct gc_http *http;
	struct fake_clock clock_state;
	struct gc_clock clock;
};

static struct chain_env ce;

static const char *ce_lookup(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < ce.n; i++)
		if (strcmp(ce.vars[i].name, name) == 0)
			return ce.vars[i].value;
	return NULL;
}

static void ce_set(const char *name, const char *value)
{
	for (size_t i = 0; i < ce.n; i++)
		if (strcmp(ce.vars[i].name, name) == 0) {
			free(ce.vars[i].value);
			ce.vars[i].value = gc_xstrdup(value);
			return;
		}
	assert_true(ce.n < 16);
	ce.vars[ce.n].name = name;
	ce.vars[ce.n++].value = gc_xstrdup(value);
}

static void ce_file(const char *rel, const char *text)
{
	char *path = gc_xasprintf("%s/%s", ce.home, rel);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static int chain_setup(void **state)
{
	struct sim_server_config cfg;
	struct gc_error err;
	char *dir;

	if (oidc_setup(state) != 0)
		return -1;
	memset(&ce, 0, sizeof(ce));
	snprintf(ce.home, sizeof(ce.home), "/tmp/gc-sts-XXXXXX");
	if (!mkdtemp(ce.home))
		return -1;
	dir = gc_xasprintf("%s/.aws", ce.home);
	mkdir(dir, 0700);
	free(dir);
	snprintf(ce.log_path, sizeof(ce.log_path), "%s/requests.log", ce.home);
	memset(&cfg, 0, sizeof(cfg));
	cfg.listen = "127.0.0.1";
	cfg.request_log = ce.log_path;
	gc_error_init(&err);
	ce.srv = sim_server_start(&sim, &cfg, &err);
	if (!ce.srv)
		return -1;
	snprintf(ce.endpoint, sizeof(ce.endpoint), "http://127.0.0.1:%d",
		 sim_server_port(ce.srv, SIM_AWS));
	ce.http = gc_http_new(NULL, &err);
	ce.env.lookup = ce_lookup;
	ce_set("HOME", ce.home);
	ce_set("AWS_EC2_METADATA_DISABLED", "true");
	/* the retries' waits pass on a clock of their own, not the world's */
	ce.clock.now_ns = fake_now;
	ce.clock.sleep_ns = fake_sleep;
	ce.clock.ctx = &ce.clock_state;
	return ce.http ? 0 : -1;
}

static int chain_teardown(void **state)
{
	const char *names[] = { "requests.log", ".aws/credentials", ".aws/config",
				"token",	"bad-token",	    NULL };

	sim_server_stop(ce.srv);
	gc_http_free(ce.http);
	for (size_t i = 0; names[i]; i++) {
		char *p = gc_xasprintf("%s/%s", ce.home, names[i]);
		unlink(p);
		free(p);
	}
	{
		char *p = gc_xasprintf("%s/.aws", ce.home);
		rmdir(p);
		free(p);
	}
	rmdir(ce.home);
	for (size_t i = 0; i < ce.n; i++)
		free(ce.vars[i].value);
	return oidc_teardown(state);
}

static void chain_input(struct aws_creds_input *in, const char *profile)
{
	memset(in, 0, sizeof(*in));
	in->profile = profile;
	in->region = "us-east-1";
	in->endpoint = ce.endpoint;
	in->env = &ce.env;
	in->http = ce.http;
	in->now = (int64_t)time(NULL);
	in->clock = &ce.clock;
}

static int chain_resolve(const char *profile, struct aws_creds *c, struct gc_error *err)
{
	struct aws_creds_input in;
	struct aws_config cfg;
	int rc;

	chain_input(&in, profile);
	aws_creds_init(c);
	aws_config_init(&cfg);
	gc_error_init(err);
	if (aws_config_resolve(&cfg, &in, err) != 0)
		return -1;
	assert_string_equal(cfg.sts_endpoint, ce.endpoint);
	rc = aws_creds_resolve(c, &cfg, &in, err);
	aws_config_release(&cfg);
	return rc;
}

/* A signed POST to the emulator with c; the status, the body into out. */
static int http_call(const struct aws_creds *c, const char *service, const char *form,
		     struct gc_buf *out)
{
	struct gc_params hdrs = GC_PARAMS_INIT;
	struct gc_sign_request sreq;
	struct aws_sigv4_input in;
	struct gc_sign_result sr;
	struct gc_http_request req;
	struct gc_http_response res;
	struct gc_error err;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1], host[600], url[600];
	const char *lines[8];
	char *owned[8];
	size_t n = 0;
	int status;

	gc_error_init(&err);
	snprintf(host, sizeof(host), "%s", ce.endpoint + strlen("http://"));
	snprintf(url, sizeof(url), "%s/", ce.endpoint);
	gc_params_add(&hdrs, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
	memset(&sreq, 0, sizeof(sreq));
	sreq.method = "POST";
	sreq.host = host;
	sreq.path = "/";
	sreq.headers = &hdrs;
	sreq.body = form;
	sreq.body_len = strlen(form);
	memset(&in, 0, sizeof(in));
	aws_sigv4_format_time(time(NULL), ts);
	in.access_key_id = c->access_key_id;
	in.secret_access_key = c->secret_access_key;
	in.session_token = c->session_token;
	in.timestamp = ts;
	in.region = "us-east-1";
	in.service = service;
	assert_int_equal(aws_sigv4_sign(&sr, &sreq, &in, &err), 0);
	gc_params_add_all(&hdrs, &sr.added_headers);
	gc_sign_result_release(&sr);
	assert_true(hdrs.n <= 8);
	for (; n < hdrs.n; n++) {
		owned[n] = gc_xasprintf("%s: %s", hdrs.items[n].name, hdrs.items[n].value);
		lines[n] = owned[n];
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.headers = lines;
	req.n_headers = n;
	req.body = form;
	req.body_len = strlen(form);
	assert_int_equal(gc_http_perform(ce.http, &req, &res, &err), 0);
	status = res.status;
	gc_buf_reset(out);
	gc_buf_add(out, res.body.data, res.body.len);
	gc_http_response_release(&res);
	for (size_t i = 0; i < n; i++)
		free(owned[i]);
	gc_params_release(&hdrs);
	return status;
}

/* The request log's AssumeRole* lines, in order, as JSON. */
static size_t logged_calls(const char *action, json_t **out, size_t max)
{
	FILE *f = fopen(ce.log_path, "r");
	char line[8192];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *j = json_loads(line, 0, NULL);
		if (j && strcmp(json_string_value(json_object_get(j, "action")), action) == 0 &&
		    n < max)
			out[n++] = j;
		else
			json_decref(j);
	}
	fclose(f);
	return n;
}

static const char *param(json_t *line, const char *name)
{
	return json_string_value(json_object_get(json_object_get(line, "params"), name));
}

static void test_chain_role_profiles(void **state)
{
	struct gc_buf body = GC_BUF_INIT(1 << 20);
	struct aws_creds c, bare;
	struct gc_error err;
	json_t *calls[4];
	char session[48];
	time_t started = time(NULL);

	(void)state;
	ce_file(".aws/credentials",
		"[base]\n"
		"aws_access_key_id = " AKID "\n"
		"aws_secret_access_key = " SECRET "\n");
	ce_file(".aws/config",
		"[profile mid]\n"
		"role_arn = arn:aws:iam::" ACCOUNT ":role/mid\n"
		"source_profile = base\n"
		"external_id = ext-123\n"
		"duration_seconds = 1800\n"
		"[profile top]\n"
		"role_arn = arn:aws:iam::" ACCOUNT ":role/top\n"
		"source_profile = mid\n"
		"role_session_name = ci-run-7\n");
	assert_int_equal(chain_resolve("top", &c, &err), 0);
	assert_true(gc_starts_with(c.access_key_id, "ASIA"));
	assert_non_null(c.session_token);
	assert_string_equal(c.source, "profile 'top' (role 'arn:aws:iam::" ACCOUNT ":role/top')");
	/* a chained role gets the default hour */
	assert_true(c.expiration >= (int64_t)started + 3600 &&
		    c.expiration <= (int64_t)time(NULL) + 3600);

	/* what went over the wire: mid with its settings signed by base, then top */
	assert_int_equal(logged_calls("AssumeRole", calls, 4), 2);
	assert_string_equal(param(calls[0], "RoleArn"), "arn:aws:iam::" ACCOUNT ":role/mid");
	assert_string_equal(param(calls[0], "ExternalId"), "ext-123");
	assert_string_equal(param(calls[0], "DurationSeconds"), "1800");
	assert_true(gc_starts_with(param(calls[0], "RoleSessionName"), "gpucluster-"));
	snprintf(session, sizeof(session), "gpucluster-%lld", (long long)started);
	assert_true(strcmp(param(calls[0], "RoleSessionName"), session) >= 0);
	assert_string_equal(param(calls[1], "RoleArn"), "arn:aws:iam::" ACCOUNT ":role/top");
	assert_string_equal(param(calls[1], "RoleSessionName"), "ci-run-7");
	assert_null(param(calls[1], "ExternalId"));
	assert_int_equal(json_integer_value(json_object_get(calls[1], "status")), 200);
	json_decref(calls[0]);
	json_decref(calls[1]);

	/* the credentials are the top role's, and EC2 takes them */
	assert_int_equal(http_call(&c, "sts", "Action=GetCallerIdentity&Version=2011-06-15", &body),
			 200);
	assert_non_null(
		strstr(body.data, "<Arn>arn:aws:sts::" ACCOUNT ":assumed-role/top/ci-run-7</Arn>"));
	assert_int_equal(http_call(&c, "ec2", "Action=DescribeInstances&Version=2016-11-15", &body),
			 200);
	assert_non_null(strstr(body.data, "<DescribeInstancesResponse"));
	bare = c;
	bare.session_token = NULL;
	assert_int_equal(
		http_call(&bare, "ec2", "Action=DescribeRegions&Version=2016-11-15", &body), 401);
	assert_non_null(strstr(body.data, "<Code>AuthFailure</Code>"));
	aws_creds_release(&c);

	/* a profile may sign for its own role with its own keys */
	ce_file(".aws/credentials",
		"[self]\n"
		"aws_access_key_id = " AKID "\n"
		"aws_secret_access_key = " SECRET "\n"
		"role_arn = arn:aws:iam::" ACCOUNT ":role/self\n"
		"source_profile = self\n");
	assert_int_equal(chain_resolve("self", &c, &err), 0);
	assert_true(gc_starts_with(c.access_key_id, "ASIA"));
	aws_creds_release(&c);
	gc_buf_release(&body);
}

static void test_chain_web_identity(void **state)
{
	char *token = jwt("sts.amazonaws.com", 0);
	struct gc_buf body = GC_BUF_INIT(1 << 20);
	char *path = gc_xasprintf("%s/token", ce.home);
	struct aws_creds c;
	struct gc_error err;
	json_t *calls[2];

	(void)state;
	ce_file("token", token);
	ce_set("AWS_ROLE_ARN", ROLE);
	ce_set("AWS_WEB_IDENTITY_TOKEN_FILE", path);
	ce_set("AWS_ROLE_SESSION_NAME", "gh-run-42");
	assert_int_equal(chain_resolve(NULL, &c, &err), 0);
	assert_string_equal(c.source, "web identity (role '" ROLE "')");
	assert_true(gc_starts_with(c.access_key_id, "ASIA"));
	assert_int_equal(http_call(&c, "ec2", "Action=DescribeRegions&Version=2016-11-15", &body),
			 200);
	aws_creds_release(&c);
	assert_int_equal(logged_calls("AssumeRoleWithWebIdentity", calls, 2), 1);
	assert_string_equal(param(calls[0], "RoleSessionName"), "gh-run-42");
	json_decref(calls[0]);

	/* from a profile, which comes first */
	ce_file(".aws/config",
		"[profile oidc]\n"
		"role_arn = arn:aws:iam::" ACCOUNT ":role/oidc\n"
		"web_identity_token_file = ~/token\n"
		"duration_seconds = 900\n");
	assert_int_equal(chain_resolve("oidc", &c, &err), 0);
	assert_string_equal(c.source,
			    "profile 'oidc' (web identity, role 'arn:aws:iam::" ACCOUNT
			    ":role/oidc')");
	assert_true(c.expiration <= (int64_t)time(NULL) + 900);
	aws_creds_release(&c);

	/* a token STS cannot parse is an authentication failure with STS's code */
	ce_file("bad-token", "not-a-jwt\n");
	free(path);
	path = gc_xasprintf("%s/bad-token", ce.home);
	ce_set("AWS_WEB_IDENTITY_TOKEN_FILE", path);
	assert_int_equal(chain_resolve(NULL, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "InvalidIdentityToken");
	assert_int_equal(err.http_status, 400);
	assert_non_null(strstr(err.message,
			       "cannot assume role '" ROLE "' (AWS_ROLE_ARN) with "
			       "web identity: InvalidIdentityToken: Couldn't parse "
			       "the token (HTTP 400 from 'http://127.0.0.1:"));
	assert_null(c.access_key_id);

	ce_set("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token");
	assert_int_equal(chain_resolve(NULL, &c, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	free(path);
	free(token);
	gc_buf_release(&body);
}

static void test_chain_sts_errors(void **state)
{
	struct aws_creds c;
	struct gc_error err;

	(void)state;
	ce_file(".aws/credentials",
		"[base]\n"
		"aws_access_key_id = " AKID "\n"
		"aws_secret_access_key = " SECRET "\n"
		"[stranger]\n"
		"aws_access_key_id = AKIANOTKNOWN00000000\n"
		"aws_secret_access_key = nope\n");
	ce_file(".aws/config",
		"[profile denied]\n"
		"role_arn = arn:aws:iam::999999999999:role/x\n"
		"source_profile = base\n"
		"[profile ok]\n"
		"role_arn = " ROLE "\n"
		"source_profile = base\n"
		"[profile badkeys]\n"
		"role_arn = " ROLE "\n"
		"source_profile = stranger\n"
		"[profile long]\n"
		"role_arn = " ROLE "\n"
		"source_profile = ok\n"
		"duration_seconds = 7200\n");
	assert_int_equal(chain_resolve("denied", &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AccessDenied");
	assert_int_equal(err.http_status, 403);
	assert_int_equal(strlen(err.request_id), 36);
	assert_non_null(strstr(err.message,
			       "cannot assume role 'arn:aws:iam::999999999999:role/x' "
			       "for profile 'denied': AccessDenied: User: "));

	assert_int_equal(chain_resolve("badkeys", &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "InvalidClientTokenId");

	/* role chaining past an hour: STS says no, and it is not retried */
	assert_int_equal(chain_resolve("long", &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, "ValidationError");

	/* throttling is retried */
	ce.clock_state.sleeps = 0;
	assert_int_equal(sim_faults_add(sim.faults, "aws:AssumeRole:throttle,times=1", NULL), 0);
	assert_int_equal(chain_resolve("ok", &c, &err), 0);
	assert_int_equal(ce.clock_state.sleeps, 1);
	aws_creds_release(&c);
	/* up to three attempts */
	assert_int_equal(sim_faults_add(sim.faults, "aws:AssumeRole:throttle", NULL), 0);
	assert_int_equal(chain_resolve("ok", &c, &err), -1);
	assert_int_equal(err.code, GC_ETHROTTLED);
	assert_string_equal(err.cloud_code, "Throttling");
	assert_non_null(strstr(err.message, "gave up after 3 attempts"));
	sim_faults_clear(sim.faults);
	/* and so are 5xx */
	assert_int_equal(sim_faults_add(sim.faults, "aws:AssumeRole:5xx,times=2", NULL), 0);
	assert_int_equal(chain_resolve("ok", &c, &err), 0);
	aws_creds_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_assume_role_and_use, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caller_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_assume_role_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_web_identity, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_routing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_role_profiles, chain_setup,
						chain_teardown),
		cmocka_unit_test_setup_teardown(test_chain_web_identity, chain_setup,
						chain_teardown),
		cmocka_unit_test_setup_teardown(test_chain_sts_errors, chain_setup, chain_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
