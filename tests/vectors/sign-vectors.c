/*
 * sign-vectors.c: checks the request signers against a known-answer vectors file in the
 * "cloud-sign-vectors/1" schema (see shared/providers/vectors/README.md).
 *
 * Usage: sign-vectors FILE. For every vector it rebuilds the request from the inputs
 * ("credentials", "request", "signing"), signs it, and compares every field of
 * "expected" that the file has; an expected field this program does not know how to
 * check is a failure, not a pass ("wire" is compared after decoding, as a server would).
 * It then checks what the drivers and the emulator rely on: a bare request (without the
 * headers or parameters the signer adds) signs the same; the raw query text signs like
 * the decoded parameters; headers sent but not signed change nothing; the signed request
 * verifies, and one with a wrong secret, body, day or an extra parameter does not.
 *
 * Output: one line per vector, "ok <id>" or "FAIL <id>: <field> differs: expected ...,
 * got ...", then "N passed, M failed". Exit status 0 when all pass, 1 when any fails,
 * 2 when the file cannot be read or is of an unknown schema, provider or algorithm.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/urlenc.h"
#include "providers/alibaba/sign.h"
#include "providers/aws/sigv4.h"
#include "providers/tencent/tc3.h"

enum scheme { SCHEME_AWS, SCHEME_ACS3, SCHEME_RPC, SCHEME_TC3 };

#define MAX_CHECKED 32

/* One vector's inputs, decoded, and what went wrong with it. */
struct vec {
	const char *id;
	json_t *json, *request, *signing, *creds, *expected;
	struct gc_params query, headers, params;
	bool has_query;
	const char *body;
	size_t body_len;
	struct gc_sign_request req;

	int nfail;
	struct gc_buf first; /* the first failure, in full */
	struct gc_buf more;  /* the names of the others */
	const char *checked[MAX_CHECKED];
	size_t nchecked;
};

/* Appends s with newlines, quotes, backslashes and control bytes escaped, so that a
 * failure stays on one line. */
static void add_escaped(struct gc_buf *b, const char *s)
{
	gc_buf_addch(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			gc_buf_addstr(b, "\\n");
		else if (c == '"' || c == '\\')
			gc_buf_addf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			gc_buf_addf(b, "\\x%02x", c);
		else
			gc_buf_addch(b, (char)c);
	}
	gc_buf_addch(b, '"');
}

static void failure(struct vec *v, const char *what, const char *detail)
{
	if (v->nfail++ == 0) {
		gc_buf_addf(&v->first, "%s", what);
		if (detail)
			gc_buf_addf(&v->first, ": %s", detail);
	} else {
		gc_buf_addf(&v->more, "%s%s", v->more.len ? ", " : "", what);
	}
}

static void differ(struct vec *v, const char *field, const char *want, const char *got)
{
	struct gc_buf what = GC_BUF_INIT(0), values = GC_BUF_INIT(0);

	gc_buf_addf(&what, "%s differs", field);
	gc_buf_addstr(&values, "expected ");
	add_escaped(&values, want);
	gc_buf_addstr(&values, ", got ");
	add_escaped(&values, got);
	failure(v, what.data, values.data);
	gc_buf_release(&what);
	gc_buf_release(&values);
}

static void mark_checked(struct vec *v, const char *field)
{
	if (v->nchecked < MAX_CHECKED)
		v->checked[v->nchecked++] = field;
}

/* The expected string for field, or NULL when the file has none (or null). */
static const char *expected_str(struct vec *v, const char *field, bool *bad)
{
	json_t *e = json_object_get(v->expected, field);

	*bad = false;
	mark_checked(v, field);
	if (!e || json_is_null(e))
		return NULL;
	if (!json_is_string(e)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(e);
}

static void check_str(struct vec *v, const char *field, const char *got)
{
	bool bad;
	const char *want = expected_str(v, field, &bad);

	if (bad)
		failure(v, field, "expected value is not a string");
	else if (want && strcmp(want, got))
		differ(v, field, want, got);
}

static void render_pairs(struct gc_buf *b, const struct gc_params *p)
{
	for (size_t i = 0; i < p->n; i++)
		gc_buf_addf(b, "%s%s: %s", i ? "; " : "", p->items[i].name, p->items[i].value);
}

/* Reads a [[name, value], ...] array; -1 when it is not one. */
static int json_pairs(struct gc_params *out, const json_t *arr)
{
	size_t i;

	if (!json_is_array(arr))
		return -1;
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *pair = json_array_get(arr, i);
		const json_t *n = json_array_get(pair, 0), *val = json_array_get(pair, 1);

		if (json_array_size(pair) != 2 || !json_is_string(n) || !json_is_string(val))
			return -1;
		gc_params_add(out, json_string_value(n), json_string_value(val));
	}
	return 0;
}

/* Compares a list of pairs, order included. */
static void check_pairs(struct vec *v, const char *field, const struct gc_params *got)
{
	json_t *e = json_object_get(v->expected, field);
	struct gc_params want = GC_PARAMS_INIT;
	struct gc_buf a = GC_BUF_INIT(0), b = GC_BUF_INIT(0);

	mark_checked(v, field);
	if (!e || json_is_null(e))
		return;
	if (json_pairs(&want, e) < 0) {
		failure(v, field, "expected value is not a list of [name, value] pairs");
		goto out;
	}
	render_pairs(&a, &want);
	render_pairs(&b, got);
	if (strcmp(a.data, b.data))
		differ(v, field, a.data, b.data);
out:
	gc_params_release(&want);
	gc_buf_release(&a);
	gc_buf_release(&b);
}

/* Whether two parameter lists hold the same pairs, in any order. */
static bool same_params(const struct gc_params *x, const struct gc_params *y)
{
	struct gc_params a = GC_PARAMS_INIT, b = GC_PARAMS_INIT;
	bool same = x->n == y->n;

	gc_params_add_all(&a, x);
	gc_params_add_all(&b, y);
	gc_params_sort(&a);
	gc_params_sort(&b);
	for (size_t i = 0; same && i < a.n; i++)
		same = !strcmp(a.items[i].name, b.items[i].name) &&
			!strcmp(a.items[i].value, b.items[i].value);
	gc_params_release(&a);
	gc_params_release(&b);
	return same;
}

static const char *str_member(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key)); /* NULL unless a string */
}

/*
 * The "wire" field: {"url": ..., "body": ... or null}. The wire encoding may be looser
 * than the canonical one (the SDKs leave '*' or '(' raw), so parameters are compared
 * after decoding, as the server would. want_query / want_body are what this program
 * would put there.
 */
static void check_wire_params(struct vec *v, const struct gc_params *want_query,
			      const struct gc_params *want_body)
{
	json_t *wire = json_object_get(v->expected, "wire");
	const char *url, *q, *body;
	struct gc_params got = GC_PARAMS_INIT, empty = GC_PARAMS_INIT;
	struct gc_error err;

	mark_checked(v, "wire");
	if (!wire || json_is_null(wire))
		return;
	url = str_member(wire, "url");
	body = str_member(wire, "body");
	if (!url) {
		failure(v, "wire", "no url");
		return;
	}
	q = strchr(url, '?');
	if (gc_params_parse(&got, q ? q + 1 : "", q ? strlen(q + 1) : 0, GC_URLDEC_RFC3986, &err) <
	    0) {
		failure(v, "wire url", err.message);
		goto out;
	}
	if (!same_params(&got, want_query ? want_query : &empty)) {
		struct gc_buf a = GC_BUF_INIT(0), b = GC_BUF_INIT(0);

		render_pairs(&a, want_query ? want_query : &empty);
		render_pairs(&b, &got);
		differ(v, "wire url parameters", b.data, a.data);
		gc_buf_release(&a);
		gc_buf_release(&b);
		goto out;
	}
	gc_params_release(&got);
	if (body && gc_params_parse(&got, body, strlen(body), GC_URLDEC_FORM, &err) < 0) {
		failure(v, "wire body", err.message);
		goto out;
	}
	if (!same_params(&got, want_body ? want_body : &empty))
		failure(v, "wire body differs", NULL);
out:
	gc_params_release(&got);
}

/* The query of a URL, or "" */
static const char *url_query(const char *url)
{
	const char *q = url ? strchr(url, '?') : NULL;

	return q ? q + 1 : "";
}

static void sign_failed(struct vec *v, const char *what, const struct gc_error *err)
{
	failure(v, what, err->message[0] ? err->message : "failed");
}

/* After verifying an unchanged copy must pass and a tampered one must fail: these are
 * what the emulator's checks rest on. */
static void check_verify_result(struct vec *v, int rc, const struct gc_error *err, bool tampered)
{
	if (!tampered && rc < 0)
		failure(v, "verify", err->message);
	else if (tampered && rc == 0)
		failure(v, "verify", "a tampered request verified");
	else if (tampered && err->code != GC_EAUTH)
		failure(v, "verify", "a tampered request failed for the wrong reason");
}

/* A copy of the request with an extra query parameter: no signature covers it. */
static void tamper_query(struct gc_params *q, struct gc_sign_request *req)
{
	if (req->query)
		gc_params_add_all(q, req->query);
	else if (req->query_string)
		gc_params_parse(q, req->query_string, strlen(req->query_string), GC_URLDEC_RFC3986,
				NULL);
	gc_params_add(q, "X-Tamper", "1");
	req->query = q;
	req->query_string = NULL;
}

/*
 * Splits in into out (what a bare sender would pass) and removed (what the signer is to
 * add itself): the items named in names, matched case-insensitively when ci.
 */
static bool same_name(const char *a, const char *b, bool ci)
{
	if (!ci)
		return !strcmp(a, b);
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return *a == *b;
}

static void strip(struct gc_params *out, struct gc_params *removed, const struct gc_params *in,
		  const char *const *names, bool ci)
{
	for (size_t i = 0; i < in->n; i++) {
		bool hit = false;

		for (size_t k = 0; names[k] && !hit; k++)
			hit = same_name(in->items[i].name, names[k], ci);
		gc_params_add(hit ? removed : out, in->items[i].name, in->items[i].value);
	}
}

/* Every removed item must come back among what the signer added, with its value. */
static void check_readded(struct vec *v, const char *what, const struct gc_params *removed,
			  const struct gc_params *added, bool ci)
{
	for (size_t i = 0; i < removed->n; i++) {
		const char *name = removed->items[i].name;
		const char *got = ci ? gc_params_get_ci(added, name) : gc_params_get(added, name);

		if (!got || strcmp(got, removed->items[i].value)) {
			struct gc_buf field = GC_BUF_INIT(0);

			gc_buf_addf(&field, "%s: %s", what, name);
			differ(v, field.data, removed->items[i].value, got ? got : "(not added)");
			gc_buf_release(&field);
		}
	}
}

/* A copy of in with the value of header name (any case) replaced. */
static void replace_header(struct gc_params *out, const struct gc_params *in, const char *name,
			   const char *value)
{
	for (size_t i = 0; i < in->n; i++)
		gc_params_add(out, in->items[i].name,
			      same_name(in->items[i].name, name, true) ? value
								       : in->items[i].value);
}

/* ---- AWS SigV4 ---- */

static void aws_input(struct aws_sigv4_input *in, const struct vec *v)
{
	memset(in, 0, sizeof(*in));
	in->access_key_id = str_member(v->creds, "access_key_id");
	in->secret_access_key = str_member(v->creds, "secret_access_key");
	in->session_token = str_member(v->creds, "session_token");
	in->timestamp = str_member(v->signing, "timestamp");
	in->region = str_member(v->signing, "region");
	in->service = str_member(v->signing, "service");
	in->add_content_sha256 =
		json_is_true(json_object_get(v->signing, "sign_payload_hash_header"));
}

/* Signs a variant of the request and checks that the signature stays want. */
static void aws_same_signature(struct vec *v, const char *what, const struct gc_sign_request *req,
			       const struct aws_sigv4_input *in, const char *want)
{
	struct gc_sign_result r;
	struct gc_error err;

	gc_error_init(&err);
	if (aws_sigv4_sign(&r, req, in, &err) < 0) {
		sign_failed(v, what, &err);
		return;
	}
	if (strcmp(r.signature, want))
		differ(v, what, want, r.signature);
	gc_sign_result_release(&r);
}

static void aws_verify_round_trip(struct vec *v, const struct aws_sigv4_input *in,
				  const struct gc_sign_result *r)
{
	struct gc_params recv = GC_PARAMS_INIT, tq = GC_PARAMS_INIT;
	struct gc_sign_request got = v->req;
	struct gc_sign_result dbg;
	struct aws_sigv4_auth auth;
	struct gc_error err;
	int rc;

	gc_error_init(&err);
	if (aws_sigv4_parse_authorization(&auth, r->authorization.data, &err) < 0) {
		failure(v, "parse authorization", err.message);
		return;
	}
	gc_params_add_all(&recv, &v->headers);
	gc_params_add_all(&recv, &r->added_headers);
	got.headers = &recv;
	gc_sign_result_init(&dbg);
	rc = aws_sigv4_verify(&got, &auth, in->secret_access_key, &dbg, &err);
	check_verify_result(v, rc, &err, false);
	if (strcmp(dbg.canonical_request.data, r->canonical_request.data))
		differ(v, "verifier canonical_request", r->canonical_request.data,
		       dbg.canonical_request.data);
	gc_sign_result_release(&dbg);

	/* a wrong secret, another body, another day, an extra parameter: all refused */
	rc = aws_sigv4_verify(&got, &auth, "not-the-secret", NULL, &err);
	check_verify_result(v, rc, &err, true);
	{
		struct gc_sign_request other = got;
		struct gc_params shifted = GC_PARAMS_INIT;

		other.body = "tampered";
		other.body_len = 8;
		rc = aws_sigv4_verify(&other, &auth, in->secret_access_key, NULL, &err);
		check_verify_result(v, rc, &err, true);
		other = got;
		replace_header(&shifted, &recv, "x-amz-date", "20000101T000000Z");
		other.headers = &shifted;
		rc = aws_sigv4_verify(&other, &auth, in->secret_access_key, NULL, &err);
		check_verify_result(v, rc, &err, true);
		gc_params_release(&shifted);
	}
	tamper_query(&tq, &got);
	gc_error_init(&err);
	rc = aws_sigv4_verify(&got, &auth, in->secret_access_key, NULL, &err);
	check_verify_result(v, rc, &err, true);
	aws_sigv4_auth_release(&auth);
	gc_params_release(&recv);
	gc_params_release(&tq);
}

static void run_aws(struct vec *v)
{
	struct aws_sigv4_input in;
	struct gc_sign_result r;
	struct gc_params body = GC_PARAMS_INIT, more = GC_PARAMS_INIT;
	struct gc_error err;
	json_t *unsigned_sent = json_object_get(v->json, "unsigned_headers_sent");

	aws_input(&in, v);
	gc_error_init(&err);
	if (aws_sigv4_sign(&r, &v->req, &in, &err) < 0) {
		sign_failed(v, "sign", &err);
		return;
	}
	check_str(v, "payload_hash", r.payload_hash);
	check_str(v, "canonical_request", r.canonical_request.data);
	check_str(v, "string_to_sign", r.string_to_sign.data);
	check_str(v, "credential_scope", r.credential_scope.data);
	check_str(v, "signed_headers", r.signed_headers.data);
	check_str(v, "signature", r.signature);
	check_str(v, "authorization", r.authorization.data);
	check_pairs(v, "added_headers", &r.added_headers);

	/* a form body decodes to the listed params ('+' is a space in a form) */
	if (v->params.n && v->body_len && !v->query.n) {
		if (gc_params_parse(&body, v->body, v->body_len, GC_URLDEC_FORM, &err) < 0)
			failure(v, "body", err.message);
		else if (!same_params(&body, &v->params))
			failure(v, "params", "the body does not decode to the listed params");
	}

	/* the raw query text signs the same as the decoded parameters */
	if (v->req.query_string && *v->req.query_string && v->has_query) {
		struct gc_sign_request raw = v->req;

		raw.query = NULL;
		aws_same_signature(v, "signature from query_string", &raw, &in, r.signature);
	}

	/* headers the SDK sent but never signed (user-agent) leave the signature alone */
	if (unsigned_sent && !json_is_null(unsigned_sent)) {
		struct gc_sign_request with = v->req;

		gc_params_add_all(&more, &v->headers);
		if (json_pairs(&more, unsigned_sent) < 0) {
			failure(v, "unsigned_headers_sent", "not a list of [name, value] pairs");
		} else {
			with.headers = &more;
			aws_same_signature(v, "signature with unsigned_headers_sent", &with, &in,
					   r.signature);
		}
	}

	aws_verify_round_trip(v, &in, &r);
	gc_sign_result_release(&r);
	gc_params_release(&body);
	gc_params_release(&more);
}

/* ---- Alibaba ACS3 ---- */

static void acs3_input(struct ali_acs3_input *in, const struct vec *v)
{
	memset(in, 0, sizeof(*in));
	in->access_key_id = str_member(v->creds, "access_key_id");
	in->access_key_secret = str_member(v->creds, "access_key_secret");
	in->security_token = str_member(v->creds, "security_token");
	in->timestamp = str_member(v->signing, "timestamp");
	in->nonce = str_member(v->signing, "nonce");
}

static void acs3_verify_round_trip(struct vec *v, const struct ali_acs3_input *in,
				   const struct gc_sign_result *r)
{
	struct gc_params recv = GC_PARAMS_INIT, tq = GC_PARAMS_INIT;
	struct gc_sign_request got = v->req;
	struct gc_sign_result dbg;
	struct gc_sign_auth auth;
	struct gc_error err;
	int rc;

	gc_error_init(&err);
	if (ali_acs3_parse_authorization(&auth, r->authorization.data, &err) < 0) {
		failure(v, "parse authorization", err.message);
		return;
	}
	gc_params_add_all(&recv, &v->headers);
	gc_params_add_all(&recv, &r->added_headers);
	got.headers = &recv;
	gc_sign_result_init(&dbg);
	rc = ali_acs3_verify(&got, &auth, in->access_key_secret, &dbg, &err);
	check_verify_result(v, rc, &err, false);
	if (strcmp(dbg.canonical_request.data, r->canonical_request.data))
		differ(v, "verifier canonical_request", r->canonical_request.data,
		       dbg.canonical_request.data);
	gc_sign_result_release(&dbg);

	rc = ali_acs3_verify(&got, &auth, "not-the-secret", NULL, &err);
	check_verify_result(v, rc, &err, true);
	{
		struct gc_sign_request other = got;

		other.body = "tampered";
		other.body_len = 8;
		rc = ali_acs3_verify(&other, &auth, in->access_key_secret, NULL, &err);
		check_verify_result(v, rc, &err, true);
	}
	tamper_query(&tq, &got);
	gc_error_init(&err);
	rc = ali_acs3_verify(&got, &auth, in->access_key_secret, NULL, &err);
	check_verify_result(v, rc, &err, true);
	gc_sign_auth_release(&auth);
	gc_params_release(&recv);
	gc_params_release(&tq);
}

/* A bare sender passes no signing headers: the signer must add the same ones itself. */
static void acs3_bare(struct vec *v, const struct ali_acs3_input *in,
		      const struct gc_sign_result *r)
{
	static const char *const own[] = { "x-acs-date",	   "x-acs-signature-nonce",
					   "x-acs-content-sha256", "x-acs-accesskey-id",
					   "x-acs-security-token", NULL };
	struct gc_params bare = GC_PARAMS_INIT, removed = GC_PARAMS_INIT;
	struct gc_sign_request req = v->req;
	struct gc_sign_result r2;
	struct gc_error err;

	strip(&bare, &removed, &v->headers, own, true);
	req.headers = &bare;
	gc_error_init(&err);
	if (ali_acs3_sign(&r2, &req, in, &err) < 0) {
		sign_failed(v, "sign a bare request", &err);
	} else {
		if (strcmp(r2.signature, r->signature))
			differ(v, "signature of a bare request", r->signature, r2.signature);
		check_readded(v, "added header", &removed, &r2.added_headers, true);
		gc_sign_result_release(&r2);
	}
	gc_params_release(&bare);
	gc_params_release(&removed);
}

static void run_acs3(struct vec *v)
{
	struct ali_acs3_input in;
	struct gc_sign_result r, r2;
	struct gc_error err;
	const char *url = str_member(json_object_get(v->expected, "wire"), "url");

	acs3_input(&in, v);
	gc_error_init(&err);
	if (ali_acs3_sign(&r, &v->req, &in, &err) < 0) {
		sign_failed(v, "sign", &err);
		return;
	}
	check_str(v, "payload_hash", r.payload_hash);
	check_str(v, "canonical_request", r.canonical_request.data);
	check_str(v, "string_to_sign", r.string_to_sign.data);
	check_str(v, "signed_headers", r.signed_headers.data);
	check_str(v, "signature", r.signature);
	check_str(v, "authorization", r.authorization.data);
	check_pairs(v, "added_headers", &r.added_headers);
	check_wire_params(v, &v->query, NULL);

	/* the SDK's own wire query (looser than canonical) verifies to the same signature */
	if (url) {
		struct gc_sign_request raw = v->req;

		raw.query = NULL;
		raw.query_string = url_query(url);
		if (ali_acs3_sign(&r2, &raw, &in, &err) < 0) {
			sign_failed(v, "sign from the wire query", &err);
		} else {
			if (strcmp(r2.signature, r.signature))
				differ(v, "signature from the wire query", r.signature,
				       r2.signature);
			gc_sign_result_release(&r2);
		}
	}

	acs3_bare(v, &in, &r);
	acs3_verify_round_trip(v, &in, &r);
	gc_sign_result_release(&r);
}

/* ---- Alibaba RPC ---- */

static void rpc_input(struct ali_rpc_input *in, const struct vec *v)
{
	memset(in, 0, sizeof(*in));
	in->access_key_id = str_member(v->creds, "access_key_id");
	in->access_key_secret = str_member(v->creds, "access_key_secret");
	in->security_token = str_member(v->creds, "security_token");
	in->timestamp = str_member(v->signing, "timestamp");
	in->nonce = str_member(v->signing, "nonce");
}

/* The request as received: the signer's wire text in the query or the form body. */
static void rpc_verify_round_trip(struct vec *v, const struct ali_rpc_input *in,
				  const struct ali_rpc_result *r, bool in_body)
{
	struct gc_sign_request got = v->req;
	struct gc_params tq = GC_PARAMS_INIT;
	struct ali_rpc_result dbg;
	struct gc_error err;
	int rc;

	got.query = NULL;
	got.query_string = in_body ? NULL : r->wire.data;
	got.body = in_body ? r->wire.data : NULL;
	got.body_len = in_body ? r->wire.len : 0;
	gc_error_init(&err);
	ali_rpc_result_init(&dbg);
	rc = ali_rpc_verify(&got, in->access_key_secret, &dbg, &err);
	check_verify_result(v, rc, &err, false);
	if (strcmp(dbg.string_to_sign.data, r->string_to_sign.data))
		differ(v, "verifier string_to_sign", r->string_to_sign.data,
		       dbg.string_to_sign.data);
	ali_rpc_result_release(&dbg);

	rc = ali_rpc_verify(&got, "not-the-secret", NULL, &err);
	check_verify_result(v, rc, &err, true);
	tamper_query(&tq, &got);
	gc_error_init(&err);
	rc = ali_rpc_verify(&got, in->access_key_secret, NULL, &err);
	check_verify_result(v, rc, &err, true);
	gc_params_release(&tq);
}

/* A bare sender passes only the API parameters: the signer adds the common ones. */
static void rpc_bare(struct vec *v, const struct ali_rpc_input *in, const struct ali_rpc_result *r,
		     bool in_body)
{
	static const char *const own[] = { "AccessKeyId",
					   "SignatureMethod",
					   "SignatureVersion",
					   "SignatureNonce",
					   "Timestamp",
					   "SecurityToken",
					   NULL };
	struct gc_params bare = GC_PARAMS_INIT, removed = GC_PARAMS_INIT;
	struct gc_buf form = GC_BUF_INIT(0);
	struct gc_sign_request req = v->req;
	struct ali_rpc_result r2;
	struct gc_error err;

	strip(&bare, &removed, &v->params, own, false);
	if (in_body) {
		gc_params_encode(&form, &bare);
		req.body = form.data;
		req.body_len = form.len;
	} else {
		req.query = &bare;
	}
	gc_error_init(&err);
	if (ali_rpc_sign(&r2, &req, in, &err) < 0) {
		sign_failed(v, "sign a bare request", &err);
	} else {
		if (strcmp(r2.signature, r->signature))
			differ(v, "signature of a bare request", r->signature, r2.signature);
		check_readded(v, "added parameter", &removed, &r2.added_params, false);
		ali_rpc_result_release(&r2);
	}
	gc_params_release(&bare);
	gc_params_release(&removed);
	gc_buf_release(&form);
}

static void run_rpc(struct vec *v)
{
	struct ali_rpc_input in;
	struct ali_rpc_result r;
	struct gc_params sent = GC_PARAMS_INIT;
	struct gc_buf key = GC_BUF_INIT(0), form = GC_BUF_INIT(0);
	struct gc_error err;
	const char *where = str_member(v->request, "params_location");
	bool in_body = where && !strcmp(where, "body");

	if (where && !in_body && strcmp(where, "query")) {
		failure(v, "params_location", "neither query nor body");
		return;
	}
	/* the vector's params are decoded: put them where the SDK put them */
	if (in_body) {
		gc_params_encode(&form, &v->params);
		v->req.body = form.data;
		v->req.body_len = form.len;
	} else {
		v->req.query = &v->params;
	}
	rpc_input(&in, v);
	gc_error_init(&err);
	if (ali_rpc_sign(&r, &v->req, &in, &err) < 0) {
		sign_failed(v, "sign", &err);
		goto out;
	}
	check_str(v, "canonicalized_query_string", r.canonical_query.data);
	check_str(v, "string_to_sign", r.string_to_sign.data);
	ali_rpc_hmac_key(&key, in.access_key_secret);
	check_str(v, "hmac_key", key.data);
	check_str(v, "signature", r.signature);
	check_pairs(v, "added_params", &r.added_params);

	gc_params_add_all(&sent, &v->params);
	gc_params_add_all(&sent, &r.added_params);
	check_wire_params(v, in_body ? NULL : &sent, in_body ? &sent : NULL);

	rpc_bare(v, &in, &r, in_body);
	rpc_verify_round_trip(v, &in, &r, in_body);
	ali_rpc_result_release(&r);
out:
	gc_params_release(&sent);
	gc_buf_release(&key);
	gc_buf_release(&form);
}

/* ---- Tencent TC3 ---- */

static int tc3_input(struct tc_sign_input *in, struct vec *v)
{
	json_t *ts = json_object_get(v->signing, "timestamp");

	memset(in, 0, sizeof(*in));
	in->secret_id = str_member(v->creds, "secret_id");
	in->secret_key = str_member(v->creds, "secret_key");
	in->token = str_member(v->creds, "token");
	in->service = str_member(v->signing, "service");
	in->action = str_member(v->signing, "action");
	in->version = str_member(v->signing, "version");
	in->region = str_member(v->signing, "region");
	in->sign_action = json_is_true(json_object_get(v->signing, "sign_action_header"));
	if (!json_is_integer(ts)) {
		failure(v, "signing.timestamp", "not an integer");
		return -1;
	}
	in->timestamp = (int64_t)json_integer_value(ts);
	return 0;
}

static void tc3_verify_round_trip(struct vec *v, const struct tc_sign_input *in,
				  const struct gc_sign_result *r)
{
	struct gc_params recv = GC_PARAMS_INIT, tq = GC_PARAMS_INIT;
	struct gc_sign_request got = v->req;
	struct gc_sign_result dbg;
	struct tc_auth auth;
	struct gc_error err;
	int rc;

	gc_error_init(&err);
	if (tc_parse_authorization(&auth, r->authorization.data, &err) < 0) {
		failure(v, "parse authorization", err.message);
		return;
	}
	gc_params_add_all(&recv, &v->headers);
	gc_params_add_all(&recv, &r->added_headers);
	got.headers = &recv;
	gc_sign_result_init(&dbg);
	rc = tc_verify(&got, &auth, in->secret_key, &dbg, &err);
	check_verify_result(v, rc, &err, false);
	if (strcmp(dbg.canonical_request.data, r->canonical_request.data))
		differ(v, "verifier canonical_request", r->canonical_request.data,
		       dbg.canonical_request.data);
	gc_sign_result_release(&dbg);

	rc = tc_verify(&got, &auth, "not-the-secret", NULL, &err);
	check_verify_result(v, rc, &err, true);
	{
		struct gc_sign_request other = got;
		struct gc_params shifted = GC_PARAMS_INIT;
		char later[32];

		other.body = "tampered";
		other.body_len = 8;
		rc = tc_verify(&other, &auth, in->secret_key, NULL, &err);
		check_verify_result(v, rc, &err, true);
		/* a day later: the scope date no longer matches */
		snprintf(later, sizeof(later), "%lld", (long long)in->timestamp + 86400);
		other = got;
		replace_header(&shifted, &recv, "x-tc-timestamp", later);
		other.headers = &shifted;
		rc = tc_verify(&other, &auth, in->secret_key, NULL, &err);
		check_verify_result(v, rc, &err, true);
		gc_params_release(&shifted);
	}
	tamper_query(&tq, &got);
	gc_error_init(&err);
	rc = tc_verify(&got, &auth, in->secret_key, NULL, &err);
	check_verify_result(v, rc, &err, true);
	tc_auth_release(&auth);
	gc_params_release(&recv);
	gc_params_release(&tq);
}

/* A bare sender passes no X-TC-* headers: the signer adds them from the input. */
static void tc3_bare(struct vec *v, const struct tc_sign_input *in, const struct gc_sign_result *r)
{
	static const char *const own[] = { "x-tc-action", "x-tc-timestamp", "x-tc-version",
					   "x-tc-region", "x-tc-token",	    NULL };
	struct gc_params bare = GC_PARAMS_INIT, removed = GC_PARAMS_INIT;
	struct gc_sign_request req = v->req;
	struct gc_sign_result r2;
	struct gc_error err;

	strip(&bare, &removed, &v->headers, own, true);
	req.headers = &bare;
	gc_error_init(&err);
	if (tc_sign(&r2, &req, in, &err) < 0) {
		sign_failed(v, "sign a bare request", &err);
	} else {
		if (strcmp(r2.signature, r->signature))
			differ(v, "signature of a bare request", r->signature, r2.signature);
		check_readded(v, "added header", &removed, &r2.added_headers, true);
		gc_sign_result_release(&r2);
	}
	gc_params_release(&bare);
	gc_params_release(&removed);
}

/*
 * The newer doc samples also sign x-tc-action, its value lower-cased (WIRE.md 3.2). No
 * vendor vector covers it, so check the rule itself and that the emulator accepts it.
 */
static void tc3_sign_action(struct vec *v, const struct tc_sign_input *in,
			    const struct gc_sign_result *r)
{
	struct tc_sign_input with = *in;
	struct gc_sign_result r2, dbg;
	struct gc_params recv = GC_PARAMS_INIT;
	struct gc_sign_request got = v->req;
	struct gc_buf want = GC_BUF_INIT(0), line = GC_BUF_INIT(0);
	struct tc_auth auth;
	struct gc_error err;
	const char *action = gc_params_get_ci(&v->headers, "x-tc-action");

	if (!action || in->sign_action)
		return;
	with.sign_action = true;
	gc_error_init(&err);
	if (tc_sign(&r2, &v->req, &with, &err) < 0) {
		sign_failed(v, "sign with x-tc-action", &err);
		return;
	}
	gc_buf_addf(&want, "%s;x-tc-action", r->signed_headers.data);
	gc_buf_addstr(&line, "\nx-tc-action:");
	for (const char *c = action; *c; c++)
		gc_buf_addch(&line, (char)tolower((unsigned char)*c));
	gc_buf_addch(&line, '\n');
	if (strcmp(r2.signed_headers.data, want.data))
		differ(v, "signed_headers with x-tc-action", want.data, r2.signed_headers.data);
	else if (!strstr(r2.canonical_request.data, line.data))
		failure(v, "canonical_request with x-tc-action", "no lower-cased x-tc-action line");
	else if (!strcmp(r2.signature, r->signature))
		failure(v, "signature with x-tc-action", "same as without");
	if (tc_parse_authorization(&auth, r2.authorization.data, &err) < 0) {
		failure(v, "parse authorization with x-tc-action", err.message);
	} else {
		gc_params_add_all(&recv, &v->headers);
		gc_params_add_all(&recv, &r2.added_headers);
		got.headers = &recv;
		gc_sign_result_init(&dbg);
		check_verify_result(v, tc_verify(&got, &auth, in->secret_key, &dbg, &err), &err,
				    false);
		gc_sign_result_release(&dbg);
		tc_auth_release(&auth);
	}
	gc_sign_result_release(&r2);
	gc_params_release(&recv);
	gc_buf_release(&want);
	gc_buf_release(&line);
}

static void run_tc3(struct vec *v)
{
	struct tc_sign_input in;
	struct gc_sign_result r;
	struct gc_error err;
	json_t *wire = json_object_get(v->expected, "wire");
	const char *date = str_member(v->signing, "date");

	if (tc3_input(&in, v) < 0)
		return;
	gc_error_init(&err);
	if (tc_sign(&r, &v->req, &in, &err) < 0) {
		sign_failed(v, "sign", &err);
		return;
	}
	if (date && strcmp(date, r.date))
		differ(v, "signing.date", date, r.date);
	check_str(v, "payload_hash", r.payload_hash);
	check_str(v, "canonical_request", r.canonical_request.data);
	check_str(v, "string_to_sign", r.string_to_sign.data);
	check_str(v, "credential_scope", r.credential_scope.data);
	check_str(v, "signed_headers", r.signed_headers.data);
	check_str(v, "signature", r.signature);
	check_str(v, "authorization", r.authorization.data);
	check_pairs(v, "added_headers", &r.added_headers);

	/* TC3 signs what is sent, byte for byte: the wire must be the inputs exactly */
	mark_checked(v, "wire");
	if (wire && !json_is_null(wire)) {
		const char *url = str_member(wire, "url"), *body = str_member(wire, "body");
		const char *qs = v->req.query_string ? v->req.query_string : "";
		const char *sent = v->body ? v->body : "";

		if (!url)
			failure(v, "wire", "no url");
		else if (strcmp(url_query(url), qs))
			differ(v, "wire query", url_query(url), qs);
		else if (body && strcmp(body, sent))
			differ(v, "wire body", body, sent);
		else if (!body && *sent)
			failure(v, "wire body", "the vector sends no body");
	}

	tc3_bare(v, &in, &r);
	tc3_sign_action(v, &in, &r);
	tc3_verify_round_trip(v, &in, &r);
	gc_sign_result_release(&r);
}

/* ---- the file ---- */

/* Decodes the request part shared by all schemes. */
static int load_request(struct vec *v)
{
	json_t *q = json_object_get(v->request, "query");
	json_t *h = json_object_get(v->request, "headers");
	json_t *p = json_object_get(v->request, "params");
	json_t *b = json_object_get(v->request, "body");

	if (!json_is_object(v->request) || !json_is_object(v->signing) ||
	    !json_is_object(v->creds) || !json_is_object(v->expected)) {
		failure(v, "vector", "needs credentials, request, signing and expected objects");
		return -1;
	}
	if ((q && json_pairs(&v->query, q) < 0) || (h && json_pairs(&v->headers, h) < 0) ||
	    (p && json_pairs(&v->params, p) < 0)) {
		failure(v, "request", "query, headers and params must be [name, value] lists");
		return -1;
	}
	if (b && !json_is_null(b) && !json_is_string(b)) {
		failure(v, "request.body", "not a string");
		return -1;
	}
	v->has_query = v->query.n > 0;
	v->body = json_string_value(b);
	v->body_len = v->body ? json_string_length(b) : 0;
	v->req.method = str_member(v->request, "method");
	v->req.host = str_member(v->request, "host");
	v->req.path = str_member(v->request, "path");
	v->req.query = v->has_query ? &v->query : NULL;
	v->req.query_string = str_member(v->request, "query_string");
	v->req.headers = &v->headers;
	v->req.body = v->body;
	v->req.body_len = v->body_len;
	return 0;
}

/* An expected field that no check looked at is a failure: a check not made is not a
 * pass. */
static void check_all_seen(struct vec *v)
{
	for (void *it = json_object_iter(v->expected); it;
	     it = json_object_iter_next(v->expected, it)) {
		const char *key = json_object_iter_key(it);
		bool seen = false;

		for (size_t i = 0; i < v->nchecked && !seen; i++)
			seen = !strcmp(v->checked[i], key);
		if (!seen)
			failure(v, key, "this program does not know how to check this field");
	}
}

static bool run_vector(json_t *json, enum scheme scheme)
{
	struct vec v;
	bool ok;

	memset(&v, 0, sizeof(v));
	v.json = json;
	v.id = str_member(json, "id");
	if (!v.id)
		v.id = "(no id)";
	v.request = json_object_get(json, "request");
	v.signing = json_object_get(json, "signing");
	v.creds = json_object_get(json, "credentials");
	v.expected = json_object_get(json, "expected");
	gc_params_init(&v.query);
	gc_params_init(&v.headers);
	gc_params_init(&v.params);
	gc_buf_init(&v.first, 0);
	gc_buf_init(&v.more, 0);

	if (load_request(&v) == 0) {
		switch (scheme) {
		case SCHEME_AWS: run_aws(&v); break;
		case SCHEME_ACS3: run_acs3(&v); break;
		case SCHEME_RPC: run_rpc(&v); break;
		case SCHEME_TC3: run_tc3(&v); break;
		}
		check_all_seen(&v);
	}
	ok = v.nfail == 0;
	if (ok)
		printf("ok %s\n", v.id);
	else if (v.nfail == 1)
		printf("FAIL %s: %s\n", v.id, v.first.data);
	else
		printf("FAIL %s: %s (also: %s)\n", v.id, v.first.data, v.more.data);
	gc_params_release(&v.query);
	gc_params_release(&v.headers);
	gc_params_release(&v.params);
	gc_buf_release(&v.first);
	gc_buf_release(&v.more);
	return ok;
}

static int pick_scheme(const json_t *root, enum scheme *out)
{
	const char *provider = str_member(root, "provider");
	const char *algorithm = str_member(root, "algorithm");

	if (!provider || !algorithm)
		return -1;
	if (!strcmp(provider, "aws") && !strcmp(algorithm, "AWS4-HMAC-SHA256"))
		*out = SCHEME_AWS;
	else if (!strcmp(provider, "alibaba") && !strncmp(algorithm, "ACS3-HMAC-SHA256", 16))
		*out = SCHEME_ACS3;
	else if (!strcmp(provider, "alibaba") && !strncmp(algorithm, "HMAC-SHA1", 9))
		*out = SCHEME_RPC;
	else if (!strcmp(provider, "tencent") && !strcmp(algorithm, "TC3-HMAC-SHA256"))
		*out = SCHEME_TC3;
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	json_error_t jerr;
	json_t *root, *vectors;
	enum scheme scheme;
	const char *schema;
	size_t i, passed = 0, failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: sign-vectors FILE\n");
		return 2;
	}
	root = json_load_file(argv[1], 0, &jerr);
	if (!root) {
		fprintf(stderr, "sign-vectors: cannot read '%s': %s (line %d)\n", argv[1],
			jerr.text, jerr.line);
		return 2;
	}
	schema = str_member(root, "schema");
	vectors = json_object_get(root, "vectors");
	if (!schema || strcmp(schema, "cloud-sign-vectors/1") || !json_is_array(vectors) ||
	    !json_array_size(vectors)) {
		fprintf(stderr,
			"sign-vectors: '%s' is not a cloud-sign-vectors/1 file with vectors\n",
			argv[1]);
		json_decref(root);
		return 2;
	}
	if (pick_scheme(root, &scheme) < 0) {
		fprintf(stderr, "sign-vectors: '%s': unknown provider/algorithm '%s'/'%s'\n",
			argv[1], str_member(root, "provider") ? str_member(root, "provider") : "",
			str_member(root, "algorithm") ? str_member(root, "algorithm") : "");
		json_decref(root);
		return 2;
	}
	for (i = 0; i < json_array_size(vectors); i++) {
		if (run_vector(json_array_get(vectors, i), scheme))
			passed++;
		else
			failed++;
	}
	printf("%zu passed, %zu failed\n", passed, failed);
	json_decref(root);
	return failed ? 1 : 0;
}
