/*
 * sigv4.c: AWS Signature Version 4 for the EC2 Query API, for the driver (signing what
 * it sends) and the emulator (verifying what it receives). See sigv4.h for the rules
 * and WIRE.md 1.2 / vectors/aws_sigv4.json for where they come from.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "providers/aws/sigv4.h"

/*
 * Headers a sender never signs: proxies and HTTP stacks add, drop or rewrite them on
 * the way, and the SDK leaves the same ones out (user-agent above all).
 */
static const char *const unsignable[] = {
	"authorization", "cache-control",     "connection", "expect",	  "from",
	"keep-alive",	 "max-forwards",      "pragma",	    "referer",	  "te",
	"trailer",	 "transfer-encoding", "upgrade",    "user-agent", "x-amzn-trace-id",
};

static bool want_header(const char *name, const void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(unsignable) / sizeof(unsignable[0]); i++)
		if (!strcmp(name, unsignable[i]))
			return false;
	return true;
}

void aws_sigv4_format_time(time_t t, char out[AWS_SIGV4_TIMESTAMP_LEN + 1])
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) ||
	    !strftime(out, AWS_SIGV4_TIMESTAMP_LEN + 1, "%Y%m%dT%H%M%SZ", &tm))
		out[0] = '\0'; /* a year past 9999: the signer then refuses the empty stamp */
}

static bool valid_timestamp(const char *ts)
{
	if (!ts || strlen(ts) != AWS_SIGV4_TIMESTAMP_LEN || ts[8] != 'T' || ts[15] != 'Z')
		return false;
	for (size_t i = 0; i < 15; i++)
		if (i != 8 && (ts[i] < '0' || ts[i] > '9'))
			return false;
	return true;
}

static int check_input(const struct gc_sign_request *req, const struct aws_sigv4_input *in,
		       struct gc_error *err)
{
	if (!gc_sign_present(req->method))
		return gc_error_set(err, GC_EINVALID, "sigv4: request has no method");
	if (!gc_sign_present(in->access_key_id) || !gc_sign_present(in->secret_access_key))
		return gc_error_set(err, GC_EINVALID, "sigv4: credentials are incomplete");
	if (!valid_timestamp(in->timestamp))
		return gc_error_set(err, GC_EINVALID,
				    "sigv4: timestamp '%s' is not YYYYMMDDTHHMMSSZ",
				    in->timestamp ? in->timestamp : "");
	if (!gc_sign_present(in->region) || strchr(in->region, '/'))
		return gc_error_set(err, GC_EINVALID, "sigv4: bad region '%s'",
				    in->region ? in->region : "");
	if (!gc_sign_present(in->service) || strchr(in->service, '/'))
		return gc_error_set(err, GC_EINVALID, "sigv4: bad service '%s'",
				    in->service ? in->service : "");
	return 0;
}

/* The headers a sender's signer adds before Authorization, in the SDK's order. */
static int signer_headers(struct gc_params *added, const struct gc_sign_request *req,
			  const struct aws_sigv4_input *in, const char *payload_hash,
			  struct gc_error *err)
{
	gc_params_add(added, "x-amz-date", in->timestamp);
	if (gc_sign_present(in->session_token))
		gc_params_add(added, "x-amz-security-token", in->session_token);
	if (in->add_content_sha256)
		gc_params_add(added, "x-amz-content-sha256", payload_hash);
	if (!req->headers)
		return 0;
	for (size_t i = 0; i < added->n; i++)
		if (gc_params_get_ci(req->headers, added->items[i].name))
			return gc_error_set(
				err, GC_EINVALID,
				"sigv4: header '%s' is set by the signer, not the caller",
				added->items[i].name);
	return 0;
}

static void derive_key(const struct aws_sigv4_input *in, unsigned char key[GC_SHA256_LEN])
{
	const char *parts[] = { NULL, in->region, in->service, "aws4_request" };
	char date[9];
	char *secret = gc_xasprintf("AWS4%s", in->secret_access_key);

	memcpy(date, in->timestamp, 8);
	date[8] = '\0';
	parts[0] = date;
	gc_hmac_sha256(secret, strlen(secret), date, 8, key);
	for (size_t i = 1; i < 4; i++) {
		unsigned char next[GC_SHA256_LEN];

		gc_hmac_sha256(key, GC_SHA256_LEN, parts[i], strlen(parts[i]), next);
		memcpy(key, next, GC_SHA256_LEN);
	}
	memset(secret, 0, strlen(secret));
	free(secret);
}

int aws_sigv4_sign(struct gc_sign_result *out, const struct gc_sign_request *req,
		   const struct aws_sigv4_input *in, struct gc_error *err)
{
	struct gc_sign_result r;
	struct gc_params query = GC_PARAMS_INIT, headers = GC_PARAMS_INIT;
	unsigned char key[GC_SHA256_LEN], mac[GC_SHA256_LEN];
	char canon_hash[GC_SHA256_HEX_LEN];
	const char *path = gc_sign_present(req->path) ? req->path : "/";
	bool signing = !in->signed_headers;
	int ret = -1;

	gc_sign_result_init(&r);
	if (check_input(req, in, err) < 0)
		goto out;
	gc_sha256_hex(req->body ? req->body : "", req->body ? req->body_len : 0, r.payload_hash);
	if (signing && signer_headers(&r.added_headers, req, in, r.payload_hash, err) < 0)
		goto out;
	if (gc_sign_request_query(&query, req, err) < 0 ||
	    gc_sign_request_headers(&headers, req, &r.added_headers, err) < 0)
		goto out;

	/* METHOD \n URI \n QUERY \n HEADERS (each line ends in \n) \n SIGNED \n HASH */
	if (gc_buf_addf(&r.canonical_request, "%s\n", req->method) < 0 ||
	    gc_urlenc_path(&r.canonical_request, path, strlen(path)) < 0 ||
	    gc_buf_addch(&r.canonical_request, '\n') < 0 ||
	    gc_params_encode_sorted(&r.canonical_request, &query) < 0 ||
	    gc_buf_addch(&r.canonical_request, '\n') < 0)
		goto toobig;
	if (gc_sign_canonical_headers(&r.canonical_request, &r.signed_headers, &headers,
				      in->signed_headers, want_header, NULL, GC_HDR_COLLAPSE,
				      err) < 0)
		goto out;
	if (gc_buf_addf(&r.canonical_request, "\n%s\n%s", r.signed_headers.data, r.payload_hash) <
	    0)
		goto toobig;

	if (gc_buf_addf(&r.credential_scope, "%.8s/%s/%s/aws4_request", in->timestamp, in->region,
			in->service) < 0)
		goto toobig;
	gc_sha256_hex(r.canonical_request.data, r.canonical_request.len, canon_hash);
	if (gc_buf_addf(&r.string_to_sign, AWS_SIGV4_ALGORITHM "\n%s\n%s\n%s", in->timestamp,
			r.credential_scope.data, canon_hash) < 0)
		goto toobig;

	derive_key(in, key);
	gc_hmac_sha256(key, sizeof(key), r.string_to_sign.data, r.string_to_sign.len, mac);
	memset(key, 0, sizeof(key));
	gc_hex(mac, sizeof(mac), r.signature);

	if (gc_buf_addf(&r.authorization,
			AWS_SIGV4_ALGORITHM " Credential=%s/%s, SignedHeaders=%s, Signature=%s",
			in->access_key_id, r.credential_scope.data, r.signed_headers.data,
			r.signature) < 0)
		goto toobig;
	if (signing)
		gc_params_add(&r.added_headers, "authorization", r.authorization.data);

	*out = r;
	ret = 0;
	goto out_keep;
toobig:
	gc_error_set(err, GC_ETOOBIG, "sigv4: request is too large to sign");
out:
	gc_sign_result_release(&r);
out_keep:
	gc_params_release(&query);
	gc_params_release(&headers);
	return ret;
}

void aws_sigv4_auth_release(struct aws_sigv4_auth *a)
{
	if (!a)
		return;
	free(a->access_key_id);
	free(a->date);
	free(a->region);
	free(a->service);
	free(a->signed_headers);
	free(a->signature);
	memset(a, 0, sizeof(*a));
}

int aws_sigv4_parse_authorization(struct aws_sigv4_auth *out, const char *value,
				  struct gc_error *err)
{
	struct gc_sign_auth parts;
	char *slash[4];
	char *cred;
	size_t n = 0;

	if (gc_sign_parse_authorization(&parts, value, AWS_SIGV4_ALGORITHM, err) < 0)
		return -1;
	/* AKID/date/region/service/aws4_request: split from the right */
	cred = parts.credential;
	for (char *p = cred + strlen(cred); p > cred && n < 4; p--)
		if (p[-1] == '/')
			slash[n++] = p - 1;
	if (n < 4 || slash[3] == cred || strcmp(slash[0] + 1, "aws4_request") ||
	    slash[2] - slash[3] != 9 || slash[1] - slash[2] < 2 || slash[0] - slash[1] < 2) {
		gc_sign_auth_release(&parts);
		return gc_error_set(err, GC_EAUTH, "malformed credential in authorization");
	}
	out->access_key_id = gc_xstrndup(cred, (size_t)(slash[3] - cred));
	out->date = gc_xstrndup(slash[3] + 1, (size_t)(slash[2] - slash[3] - 1));
	out->region = gc_xstrndup(slash[2] + 1, (size_t)(slash[1] - slash[2] - 1));
	out->service = gc_xstrndup(slash[1] + 1, (size_t)(slash[0] - slash[1] - 1));
	out->signed_headers = parts.signed_headers;
	out->signature = parts.signature;
	free(parts.credential);
	return 0;
}

int aws_sigv4_verify(const struct gc_sign_request *req, const struct aws_sigv4_auth *auth,
		     const char *secret_access_key, struct gc_sign_result *debug,
		     struct gc_error *err)
{
	struct gc_sign_result r;
	struct aws_sigv4_input in = { 0 };
	const char *date = req->headers ? gc_params_get_ci(req->headers, "x-amz-date") : NULL;
	const char *claimed;
	int ret = -1;

	if (!date)
		return gc_error_set(err, GC_EAUTH, "request has no x-amz-date header");
	if (!valid_timestamp(date))
		return gc_error_set(err, GC_EAUTH, "x-amz-date '%s' is not YYYYMMDDTHHMMSSZ", date);
	if (strlen(auth->date) != 8 || strncmp(auth->date, date, 8))
		return gc_error_set(err, GC_EAUTH,
				    "credential scope date '%s' is not the date of x-amz-date '%s'",
				    auth->date, date);
	in.access_key_id = auth->access_key_id;
	in.secret_access_key = secret_access_key;
	in.timestamp = date;
	in.region = auth->region;
	in.service = auth->service;
	in.signed_headers = auth->signed_headers;
	if (aws_sigv4_sign(&r, req, &in, err) < 0)
		return -1;
	claimed = gc_params_get_ci(req->headers, "x-amz-content-sha256");
	if (claimed && strcmp(claimed, r.payload_hash))
		gc_error_set(err, GC_EAUTH, "x-amz-content-sha256 is not the hash of the body");
	else if (!gc_sign_equal(r.signature, auth->signature))
		gc_error_set(err, GC_EAUTH, "signature does not match");
	else
		ret = 0;
	return gc_sign_result_give(debug, &r, ret);
}
