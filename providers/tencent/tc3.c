/*
 * tc3.c: TC3-HMAC-SHA256, the Tencent Cloud API 3.0 signature, for the CVM/VPC driver
 * (signing) and the emulator (verifying). See tc3.h for the rules and WIRE.md 3.2 /
 * vectors/tencent_tc3.json for their source.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/tencent/tc3.h"

/* 9999-12-31T23:59:59Z: past it the date no longer has four digits */
#define TC3_MAX_TIMESTAMP INT64_C(253402300799)

static void put_digits(char *out, int64_t v, int width)
{
	for (int i = width - 1; i >= 0; i--, v /= 10)
		out[i] = (char)('0' + v % 10);
}

/*
 * Civil date from a day count since 1970-01-01 (the proleptic Gregorian calendar, in
 * 400-year eras). Done by hand rather than with gmtime so that the result does not
 * depend on the width of time_t.
 */
static int tc_scope_date(int64_t timestamp, char out[TC3_DATE_LEN + 1])
{
	int64_t days, era, doe, yoe, doy, mp, d, m, y;

	if (timestamp < 0 || timestamp > TC3_MAX_TIMESTAMP)
		return -1;
	days = timestamp / 86400 + 719468; /* shift the epoch to 0000-03-01 */
	era = days / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	/* by hand: the range check above bounds y to 4 digits, which snprintf's
	 * truncation warning cannot see */
	put_digits(out, y, 4);
	out[4] = '-';
	put_digits(out + 5, m, 2);
	out[7] = '-';
	put_digits(out + 8, d, 2);
	out[10] = '\0';
	return 0;
}

static bool sign_want(const char *name, const void *ctx)
{
	const struct tc_sign_input *in = ctx;

	return !strcmp(name, "content-type") || !strcmp(name, "host") ||
		(in->sign_action && !strcmp(name, "x-tc-action"));
}

/* Adds name: value unless the request has it; a present one must agree. */
static int fill(struct gc_params *added, const struct gc_params *have, const char *name,
		const char *value, struct gc_error *err)
{
	const char *cur = have ? gc_params_get_ci(have, name) : NULL;

	if (cur) {
		if (value && strcmp(cur, value))
			return gc_error_set(err, GC_EINVALID,
					    "tc3: header '%s' is '%s', the signing input says '%s'",
					    name, cur, value);
		return 0;
	}
	if (gc_sign_present(value))
		gc_params_add(added, name, value);
	return 0;
}

static int added_headers(struct gc_params *added, const struct gc_sign_request *req,
			 const struct tc_sign_input *in, const char *timestamp,
			 struct gc_error *err)
{
	if (fill(added, req->headers, "x-tc-action", in->action, err) < 0 ||
	    fill(added, req->headers, "x-tc-timestamp", timestamp, err) < 0 ||
	    fill(added, req->headers, "x-tc-version", in->version, err) < 0 ||
	    fill(added, req->headers, "x-tc-region", in->region, err) < 0)
		return -1;
	if (gc_sign_present(in->token) &&
	    fill(added, req->headers, "x-tc-token", in->token, err) < 0)
		return -1;
	return 0;
}

/* The TC3 service of a host is its first label: cvm.tencentcloudapi.com -> cvm. */
static char *service_of(const struct gc_params *headers)
{
	const char *host = gc_params_get(headers, "host");
	const char *dot = host ? strchr(host, '.') : NULL;

	return dot && dot > host ? gc_xstrndup(host, (size_t)(dot - host)) : NULL;
}

static int canonical_query(struct gc_buf *b, const struct gc_sign_request *req)
{
	/* signed as sent: re-sorting or re-encoding would change what the server hashes */
	if (req->query_string)
		return gc_buf_addstr(b, req->query_string);
	if (req->query)
		return gc_params_encode(b, req->query);
	return 0;
}

static void derive_key(const char *secret_key, const char *date, const char *service,
		       unsigned char key[GC_SHA256_LEN])
{
	char *k0 = gc_xasprintf("TC3%s", secret_key);
	unsigned char k1[GC_SHA256_LEN];

	gc_hmac_sha256(k0, strlen(k0), date, strlen(date), key);
	gc_hmac_sha256(key, GC_SHA256_LEN, service, strlen(service), k1);
	gc_hmac_sha256(k1, GC_SHA256_LEN, "tc3_request", 11, key);
	memset(k1, 0, sizeof(k1));
	memset(k0, 0, strlen(k0));
	free(k0);
}

int tc_sign(struct gc_sign_result *out, const struct gc_sign_request *req,
	    const struct tc_sign_input *in, struct gc_error *err)
{
	struct gc_sign_result r;
	struct gc_params headers = GC_PARAMS_INIT;
	unsigned char key[GC_SHA256_LEN], mac[GC_SHA256_LEN];
	char canon_hash[GC_SHA256_HEX_LEN], timestamp[24];
	const char *path = gc_sign_present(req->path) ? req->path : "/";
	char *service = NULL;
	bool signing = !in->signed_headers;
	int ret = -1;

	gc_sign_result_init(&r);
	if (!gc_sign_present(req->method) || !gc_sign_present(in->secret_id) ||
	    !gc_sign_present(in->secret_key)) {
		gc_error_set(err, GC_EINVALID, "tc3: method or credentials missing");
		goto out;
	}
	if (tc_scope_date(in->timestamp, r.date) < 0) {
		gc_error_set(err, GC_EINVALID, "tc3: timestamp %" PRId64 " is out of range",
			     in->timestamp);
		goto out;
	}
	snprintf(timestamp, sizeof(timestamp), "%" PRId64, in->timestamp);
	gc_sha256_hex(req->body ? req->body : "", req->body ? req->body_len : 0, r.payload_hash);
	if (signing && added_headers(&r.added_headers, req, in, timestamp, err) < 0)
		goto out;
	if (gc_sign_request_headers(&headers, req, &r.added_headers, err) < 0)
		goto out;
	if (signing && !gc_params_get(&headers, "content-type")) {
		gc_error_set(err, GC_EINVALID, "tc3: request has no content-type, which is signed");
		goto out;
	}
	if (signing && in->sign_action && !gc_params_get(&headers, "x-tc-action")) {
		gc_error_set(err, GC_EINVALID, "tc3: no x-tc-action to sign");
		goto out;
	}
	service = gc_sign_present(in->service) ? gc_xstrdup(in->service) : service_of(&headers);
	if (!service || strchr(service, '/')) {
		gc_error_set(err, GC_EINVALID, "tc3: no service name");
		goto out;
	}

	if (gc_buf_addf(&r.canonical_request, "%s\n", req->method) < 0 ||
	    gc_urlenc_path(&r.canonical_request, path, strlen(path)) < 0 ||
	    gc_buf_addch(&r.canonical_request, '\n') < 0 ||
	    canonical_query(&r.canonical_request, req) < 0 ||
	    gc_buf_addch(&r.canonical_request, '\n') < 0)
		goto toobig;
	if (gc_sign_canonical_headers(&r.canonical_request, &r.signed_headers, &headers,
				      in->signed_headers, sign_want, in, GC_HDR_LOWER, err) < 0)
		goto out;
	if (gc_buf_addf(&r.canonical_request, "\n%s\n%s", r.signed_headers.data, r.payload_hash) <
	    0)
		goto toobig;

	if (gc_buf_addf(&r.credential_scope, "%s/%s/tc3_request", r.date, service) < 0)
		goto toobig;
	gc_sha256_hex(r.canonical_request.data, r.canonical_request.len, canon_hash);
	if (gc_buf_addf(&r.string_to_sign, TC3_ALGORITHM "\n%s\n%s\n%s", timestamp,
			r.credential_scope.data, canon_hash) < 0)
		goto toobig;
	derive_key(in->secret_key, r.date, service, key);
	gc_hmac_sha256(key, sizeof(key), r.string_to_sign.data, r.string_to_sign.len, mac);
	memset(key, 0, sizeof(key));
	gc_hex(mac, sizeof(mac), r.signature);
	if (gc_buf_addf(&r.authorization,
			TC3_ALGORITHM " Credential=%s/%s, SignedHeaders=%s, Signature=%s",
			in->secret_id, r.credential_scope.data, r.signed_headers.data,
			r.signature) < 0)
		goto toobig;
	if (signing)
		gc_params_add(&r.added_headers, "authorization", r.authorization.data);

	*out = r;
	ret = 0;
	goto out_keep;
toobig:
	gc_error_set(err, GC_ETOOBIG, "tc3: request is too large to sign");
out:
	gc_sign_result_release(&r);
out_keep:
	gc_params_release(&headers);
	free(service);
	return ret;
}

void tc_auth_release(struct tc_auth *a)
{
	if (!a)
		return;
	free(a->secret_id);
	free(a->date);
	free(a->service);
	free(a->signed_headers);
	free(a->signature);
	memset(a, 0, sizeof(*a));
}

int tc_parse_authorization(struct tc_auth *out, const char *value, struct gc_error *err)
{
	struct gc_sign_auth parts;
	char *slash[3];
	char *cred;
	size_t n = 0;

	if (gc_sign_parse_authorization(&parts, value, TC3_ALGORITHM, err) < 0)
		return -1;
	/* SecretId/date/service/tc3_request: split from the right */
	cred = parts.credential;
	for (char *p = cred + strlen(cred); p > cred && n < 3; p--)
		if (p[-1] == '/')
			slash[n++] = p - 1;
	if (n < 3 || slash[2] == cred || strcmp(slash[0] + 1, "tc3_request") ||
	    slash[1] - slash[2] != TC3_DATE_LEN + 1 || slash[0] - slash[1] < 2) {
		gc_sign_auth_release(&parts);
		return gc_error_set(err, GC_EAUTH, "malformed credential in authorization");
	}
	out->secret_id = gc_xstrndup(cred, (size_t)(slash[2] - cred));
	out->date = gc_xstrndup(slash[2] + 1, TC3_DATE_LEN);
	out->service = gc_xstrndup(slash[1] + 1, (size_t)(slash[0] - slash[1] - 1));
	out->signed_headers = parts.signed_headers;
	out->signature = parts.signature;
	free(parts.credential);
	return 0;
}

int tc_verify(const struct gc_sign_request *req, const struct tc_auth *auth, const char *secret_key,
	      struct gc_sign_result *debug, struct gc_error *err)
{
	struct gc_sign_result r;
	struct tc_sign_input in = { 0 };
	const char *ts = req->headers ? gc_params_get_ci(req->headers, "x-tc-timestamp") : NULL;
	int64_t t;
	int ret = -1;

	if (!ts)
		return gc_error_set(err, GC_EAUTH, "request has no X-TC-Timestamp header");
	if (gc_parse_i64(ts, 0, TC3_MAX_TIMESTAMP, &t) < 0)
		return gc_error_set(err, GC_EAUTH, "X-TC-Timestamp '%s' is not a Unix time", ts);
	in.secret_id = auth->secret_id;
	in.secret_key = secret_key;
	in.timestamp = t;
	in.service = auth->service;
	in.signed_headers = auth->signed_headers;
	if (tc_sign(&r, req, &in, err) < 0)
		return -1;
	if (strcmp(r.date, auth->date))
		gc_error_set(
			err, GC_EAUTH,
			"credential scope date '%s' is not the UTC date of X-TC-Timestamp (%s)",
			auth->date, r.date);
	else if (!gc_sign_equal(r.signature, auth->signature))
		gc_error_set(err, GC_EAUTH, "signature does not match");
	else
		ret = 0;
	return gc_sign_result_give(debug, &r, ret);
}
