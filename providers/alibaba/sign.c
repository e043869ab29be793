/*
 * sign.c: Alibaba Cloud's two request signatures, ACS3-HMAC-SHA256 and the RPC
 * HMAC-SHA1 one, for the ECS driver (signing) and the emulator (verifying). See sign.h
 * for the rules and WIRE.md 2.3 / 2.4 and the alibaba_*.json vectors for their source.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "providers/alibaba/sign.h"

void ali_format_time(time_t t, char out[ALI_TIMESTAMP_LEN + 1])
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, ALI_TIMESTAMP_LEN + 1, "%Y-%m-%dT%H:%M:%SZ", &tm))
		out[0] = '\0'; /* out of range: the signer refuses an empty timestamp */
}

/*
 * Makes sure name is set: if have (a header list when ci, else a parameter list) has it,
 * it must equal value (when the input gives one); otherwise value is appended to added.
 */
static int fill(struct gc_params *added, const struct gc_params *have, bool ci, const char *name,
		const char *value, struct gc_error *err)
{
	const char *cur = NULL;

	if (have)
		cur = ci ? gc_params_get_ci(have, name) : gc_params_get(have, name);
	if (cur) {
		if (value && strcmp(cur, value))
			return gc_error_set(
				err, GC_EINVALID,
				"'%s' in the request is '%s', the signing input says '%s'", name,
				cur, value);
		return 0;
	}
	if (!gc_sign_present(value))
		return gc_error_set(err, GC_EINVALID, "no value for '%s'", name);
	gc_params_add(added, name, value);
	return 0;
}

/* ---- ACS3-HMAC-SHA256 ---- */

static bool acs3_want(const char *name, const void *ctx)
{
	(void)ctx;
	return !strcmp(name, "host") || !strcmp(name, "content-type") ||
		!strncmp(name, "x-acs-", 6);
}

static int acs3_added(struct gc_params *added, const struct gc_sign_request *req,
		      const struct ali_acs3_input *in, const char *payload_hash,
		      struct gc_error *err)
{
	if (fill(added, req->headers, true, "x-acs-date", in->timestamp, err) < 0 ||
	    fill(added, req->headers, true, "x-acs-signature-nonce", in->nonce, err) < 0 ||
	    fill(added, req->headers, true, "x-acs-content-sha256", payload_hash, err) < 0)
		return -1;
	if (gc_sign_present(in->security_token) &&
	    (fill(added, req->headers, true, "x-acs-accesskey-id", in->access_key_id, err) < 0 ||
	     fill(added, req->headers, true, "x-acs-security-token", in->security_token, err) < 0))
		return -1;
	return 0;
}

int ali_acs3_sign(struct gc_sign_result *out, const struct gc_sign_request *req,
		  const struct ali_acs3_input *in, struct gc_error *err)
{
	struct gc_sign_result r;
	struct gc_params query = GC_PARAMS_INIT, headers = GC_PARAMS_INIT;
	unsigned char mac[GC_SHA256_LEN];
	char canon_hash[GC_SHA256_HEX_LEN];
	const char *path = gc_sign_present(req->path) ? req->path : "/";
	bool signing = !in->signed_headers;
	int ret = -1;

	gc_sign_result_init(&r);
	if (!gc_sign_present(req->method) || !gc_sign_present(in->access_key_id) ||
	    !gc_sign_present(in->access_key_secret)) {
		gc_error_set(err, GC_EINVALID, "acs3: method or credentials missing");
		goto out;
	}
	gc_sha256_hex(req->body ? req->body : "", req->body ? req->body_len : 0, r.payload_hash);
	if (signing && acs3_added(&r.added_headers, req, in, r.payload_hash, err) < 0)
		goto out;
	if (gc_sign_request_query(&query, req, err) < 0 ||
	    gc_sign_request_headers(&headers, req, &r.added_headers, err) < 0)
		goto out;

	if (gc_buf_addf(&r.canonical_request, "%s\n", req->method) < 0 ||
	    gc_urlenc_path(&r.canonical_request, path, strlen(path)) < 0 ||
	    gc_buf_addch(&r.canonical_request, '\n') < 0 ||
	    gc_params_encode_sorted(&r.canonical_request, &query) < 0 ||
	    gc_buf_addch(&r.canonical_request, '\n') < 0)
		goto toobig;
	if (gc_sign_canonical_headers(&r.canonical_request, &r.signed_headers, &headers,
				      in->signed_headers, acs3_want, NULL, GC_HDR_TRIM, err) < 0)
		goto out;
	if (gc_buf_addf(&r.canonical_request, "\n%s\n%s", r.signed_headers.data, r.payload_hash) <
	    0)
		goto toobig;

	gc_sha256_hex(r.canonical_request.data, r.canonical_request.len, canon_hash);
	if (gc_buf_addf(&r.string_to_sign, ALI_ACS3_ALGORITHM "\n%s", canon_hash) < 0)
		goto toobig;
	gc_hmac_sha256(in->access_key_secret, strlen(in->access_key_secret), r.string_to_sign.data,
		       r.string_to_sign.len, mac);
	gc_hex(mac, sizeof(mac), r.signature);
	if (gc_buf_addf(&r.authorization,
			ALI_ACS3_ALGORITHM " Credential=%s,SignedHeaders=%s,Signature=%s",
			in->access_key_id, r.signed_headers.data, r.signature) < 0)
		goto toobig;
	if (signing)
		gc_params_add(&r.added_headers, "authorization", r.authorization.data);

	*out = r;
	ret = 0;
	goto out_keep;
toobig:
	gc_error_set(err, GC_ETOOBIG, "acs3: request is too large to sign");
out:
	gc_sign_result_release(&r);
out_keep:
	gc_params_release(&query);
	gc_params_release(&headers);
	return ret;
}

int ali_acs3_parse_authorization(struct gc_sign_auth *out, const char *value, struct gc_error *err)
{
	return gc_sign_parse_authorization(out, value, ALI_ACS3_ALGORITHM, err);
}

int ali_acs3_verify(const struct gc_sign_request *req, const struct gc_sign_auth *auth,
		    const char *access_key_secret, struct gc_sign_result *debug,
		    struct gc_error *err)
{
	struct gc_sign_result r;
	struct ali_acs3_input in = { 0 };
	const char *claimed;
	int ret = -1;

	in.access_key_id = auth->credential;
	in.access_key_secret = access_key_secret;
	in.signed_headers = auth->signed_headers;
	if (ali_acs3_sign(&r, req, &in, err) < 0)
		return -1;
	claimed = req->headers ? gc_params_get_ci(req->headers, "x-acs-content-sha256") : NULL;
	if (!claimed)
		gc_error_set(err, GC_EAUTH, "request has no x-acs-content-sha256 header");
	else if (strcmp(claimed, r.payload_hash))
		gc_error_set(err, GC_EAUTH, "x-acs-content-sha256 is not the hash of the body");
	else if (!gc_sign_equal(r.signature, auth->signature))
		gc_error_set(err, GC_EAUTH, "signature does not match");
	else
		ret = 0;
	return gc_sign_result_give(debug, &r, ret);
}

/* ---- RPC HMAC-SHA1 ---- */

void ali_rpc_result_init(struct ali_rpc_result *r)
{
	gc_buf_init(&r->canonical_query, 0);
	gc_buf_init(&r->string_to_sign, 0);
	r->signature[0] = '\0';
	gc_params_init(&r->added_params);
	gc_buf_init(&r->wire, 0);
}

void ali_rpc_result_release(struct ali_rpc_result *r)
{
	if (!r)
		return;
	gc_buf_release(&r->canonical_query);
	gc_buf_release(&r->string_to_sign);
	gc_params_release(&r->added_params);
	gc_buf_release(&r->wire);
}

static bool is_form(const struct gc_params *headers)
{
	static const char form[] = "application/x-www-form-urlencoded";
	const char *ct = headers ? gc_params_get_ci(headers, "content-type") : NULL;
	size_t n = sizeof(form) - 1;

	if (!ct)
		return false;
	ct += strspn(ct, " \t");
	return strncasecmp(ct, form, n) == 0 &&
		(ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

int ali_rpc_collect_params(struct gc_params *out, const struct gc_sign_request *req,
			   struct gc_error *err)
{
	struct gc_params got = GC_PARAMS_INIT;
	int ret = gc_sign_request_query(&got, req, err);

	if (ret == 0 && req->body && req->body_len && is_form(req->headers))
		ret = gc_params_parse(&got, req->body, req->body_len, GC_URLDEC_FORM, err);
	if (ret == 0)
		gc_params_add_all(out, &got);
	gc_params_release(&got);
	return ret;
}

int ali_rpc_hmac_key(struct gc_buf *out, const char *access_key_secret)
{
	return gc_buf_addf(out, "%s&", access_key_secret);
}

/* Canonical query, string to sign, signature and wire form of all (Signature excluded). */
static int rpc_compute(struct ali_rpc_result *r, const char *method, const struct gc_params *all,
		       const char *secret, struct gc_error *err)
{
	struct gc_buf key = GC_BUF_INIT(0), b64 = GC_BUF_INIT(0);
	unsigned char mac[GC_SHA1_LEN];
	int ret = -1;

	if (gc_params_encode_sorted(&r->canonical_query, all) < 0 ||
	    gc_buf_addf(&r->string_to_sign, "%s&%%2F&", method) < 0 ||
	    gc_urlenc(&r->string_to_sign, r->canonical_query.data, r->canonical_query.len) < 0 ||
	    ali_rpc_hmac_key(&key, secret) < 0)
		goto toobig;
	gc_hmac_sha1(key.data, key.len, r->string_to_sign.data, r->string_to_sign.len, mac);
	if (gc_base64_encode(&b64, mac, sizeof(mac)) < 0 || b64.len != ALI_RPC_SIGNATURE_LEN)
		goto toobig;
	memcpy(r->signature, b64.data, ALI_RPC_SIGNATURE_LEN + 1);
	if (gc_buf_add(&r->wire, r->canonical_query.data, r->canonical_query.len) < 0 ||
	    gc_buf_addstr(&r->wire, r->wire.len ? "&Signature=" : "Signature=") < 0 ||
	    gc_urlenc_str(&r->wire, r->signature) < 0)
		goto toobig;
	ret = 0;
	goto out;
toobig:
	gc_error_set(err, GC_ETOOBIG, "rpc: request is too large to sign");
out:
	if (key.len)
		memset(key.data, 0, key.len);
	gc_buf_release(&key);
	gc_buf_release(&b64);
	return ret;
}

int ali_rpc_sign(struct ali_rpc_result *out, const struct gc_sign_request *req,
		 const struct ali_rpc_input *in, struct gc_error *err)
{
	struct ali_rpc_result r;
	struct gc_params params = GC_PARAMS_INIT;
	int ret = -1;

	ali_rpc_result_init(&r);
	if (!gc_sign_present(req->method) || !gc_sign_present(in->access_key_id) ||
	    !gc_sign_present(in->access_key_secret)) {
		gc_error_set(err, GC_EINVALID, "rpc: method or credentials missing");
		goto out;
	}
	if (ali_rpc_collect_params(&params, req, err) < 0)
		goto out;
	if (gc_params_get(&params, "Signature")) {
		gc_error_set(err, GC_EINVALID, "rpc: the request already has a Signature");
		goto out;
	}
	if (fill(&r.added_params, &params, false, "AccessKeyId", in->access_key_id, err) < 0 ||
	    fill(&r.added_params, &params, false, "SignatureMethod", "HMAC-SHA1", err) < 0 ||
	    fill(&r.added_params, &params, false, "SignatureVersion", "1.0", err) < 0 ||
	    fill(&r.added_params, &params, false, "SignatureNonce", in->nonce, err) < 0 ||
	    fill(&r.added_params, &params, false, "Timestamp", in->timestamp, err) < 0)
		goto out;
	if (gc_sign_present(in->security_token) &&
	    fill(&r.added_params, &params, false, "SecurityToken", in->security_token, err) < 0)
		goto out;
	gc_params_add_all(&params, &r.added_params);
	if (rpc_compute(&r, req->method, &params, in->access_key_secret, err) < 0)
		goto out;
	gc_params_add(&r.added_params, "Signature", r.signature);
	*out = r;
	ret = 0;
	goto out_keep;
out:
	ali_rpc_result_release(&r);
out_keep:
	gc_params_release(&params);
	return ret;
}

int ali_rpc_verify(const struct gc_sign_request *req, const char *access_key_secret,
		   struct ali_rpc_result *debug, struct gc_error *err)
{
	struct ali_rpc_result r;
	struct gc_params params = GC_PARAMS_INIT;
	const char *method_param;
	char *claimed = NULL;
	int ret = -1;

	ali_rpc_result_init(&r);
	if (!gc_sign_present(req->method) || !access_key_secret) {
		gc_error_set(err, GC_EINVALID, "rpc: method or secret missing");
		goto out;
	}
	if (ali_rpc_collect_params(&params, req, err) < 0)
		goto out;
	if (gc_params_count(&params, "Signature") != 1) {
		gc_error_set(err, GC_EAUTH, "request needs exactly one Signature parameter");
		goto out;
	}
	claimed = gc_xstrdup(gc_params_get(&params, "Signature"));
	gc_params_remove(&params, "Signature");
	method_param = gc_params_get(&params, "SignatureMethod");
	if (!method_param || strcmp(method_param, "HMAC-SHA1")) {
		gc_error_set(err, GC_EAUTH, "SignatureMethod is not HMAC-SHA1");
		goto out;
	}
	if (rpc_compute(&r, req->method, &params, access_key_secret, err) < 0)
		goto out;
	if (!gc_sign_equal(r.signature, claimed))
		gc_error_set(err, GC_EAUTH, "signature does not match");
	else
		ret = 0;
	if (debug) {
		ali_rpc_result_release(debug);
		*debug = r;
		ali_rpc_result_init(&r);
	}
out:
	ali_rpc_result_release(&r);
	gc_params_release(&params);
	free(claimed);
	return ret;
}
