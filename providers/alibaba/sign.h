/*
 * sign.h: Alibaba Cloud request signatures, both kinds ECS accepts: ACS3-HMAC-SHA256
 * ("V3", what the current SDK sends) and RPC HMAC-SHA1 ("V2", deprecated but accepted).
 * The rules (WIRE.md 2.3, 2.4), the sender and verifier modes and the quirks are in
 * docs/internals/signing.md. A sender gets missing signing headers or common parameters
 * filled from the input (time, nonce, key id, token); ones already present must agree.
 *
 * Life cycle: results are written by *_sign on success and released with
 * *_result_release; *_verify fill a result the caller initialised with *_result_init.
 */
#ifndef GC_ALI_SIGN_H
#define GC_ALI_SIGN_H

#include <time.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/urlenc.h"

#define ALI_ACS3_ALGORITHM    "ACS3-HMAC-SHA256"
#define ALI_TIMESTAMP_LEN     20 /* YYYY-MM-DDTHH:MM:SSZ */
#define ALI_RPC_SIGNATURE_LEN 28 /* base64 of a SHA-1 HMAC */

/* Writes t as Alibaba's timestamp (x-acs-date, Timestamp): YYYY-MM-DDTHH:MM:SSZ, UTC. */
void ali_format_time(time_t t, char out[ALI_TIMESTAMP_LEN + 1]);

struct ali_acs3_input {
	const char *access_key_id;
	const char *access_key_secret;
	const char *security_token; /* NULL (or "") without STS */
	const char *timestamp;	    /* x-acs-date; may be NULL when the request has it */
	const char *nonce;	    /* x-acs-signature-nonce; likewise */
	/* NULL to sign; a verifier passes the SignedHeaders list it received */
	const char *signed_headers;
};

/*
 * Signs req; out is written only on success. A sender's request gets x-acs-date,
 * x-acs-signature-nonce, x-acs-content-sha256 and, with a token,
 * x-acs-accesskey-id and x-acs-security-token, each unless already present (then
 * it must equal the input). x-acs-action and x-acs-version are the caller's.
 */
int ali_acs3_sign(struct gc_sign_result *out, const struct gc_sign_request *req,
		  const struct ali_acs3_input *in, struct gc_error *err);

/* Splits a received ACS3 Authorization; credential is the AccessKey id. */
int ali_acs3_parse_authorization(struct gc_sign_auth *out, const char *value, struct gc_error *err);

/*
 * Recomputes a received request's signature with the secret of auth->credential and
 * compares it with auth->signature. 0 on a match, else -1 with GC_EAUTH (mismatch, no
 * or a wrong x-acs-content-sha256) or GC_EINVALID. debug as in aws_sigv4_verify: when
 * not NULL it must be initialised, and it gets the intermediates whenever they were
 * computed.
 */
int ali_acs3_verify(const struct gc_sign_request *req, const struct gc_sign_auth *auth,
		    const char *access_key_secret, struct gc_sign_result *debug,
		    struct gc_error *err);

struct ali_rpc_input {
	const char *access_key_id;
	const char *access_key_secret;
	const char *security_token; /* NULL (or "") without STS */
	const char *timestamp;	    /* Timestamp; may be NULL when the parameters have it */
	const char *nonce;	    /* SignatureNonce; likewise */
};

struct ali_rpc_result {
	struct gc_buf canonical_query; /* the sorted, encoded "k=v&..." */
	struct gc_buf string_to_sign;
	char signature[ALI_RPC_SIGNATURE_LEN + 1];
	struct gc_params added_params; /* what a sender adds, Signature last */
	/* every signed parameter plus Signature, encoded, in canonical order: the query
	 * string or form body to send */
	struct gc_buf wire;
};

void ali_rpc_result_init(struct ali_rpc_result *r);
void ali_rpc_result_release(struct ali_rpc_result *r);

/*
 * The request's parameters as the server sees them: the query (req->query, or
 * req->query_string decoded), then the fields of an application/x-www-form-urlencoded
 * body ('+' is a space there), appended to out.
 */
int ali_rpc_collect_params(struct gc_params *out, const struct gc_sign_request *req,
			   struct gc_error *err);

/* The HMAC key: secret + "&". Returns 0, or -1 at out's cap. */
int ali_rpc_hmac_key(struct gc_buf *out, const char *access_key_secret);

/*
 * Signs the parameters of req (see ali_rpc_collect_params); out is written only on
 * success. Missing common parameters (AccessKeyId, SignatureMethod, SignatureVersion,
 * SignatureNonce, Timestamp, SecurityToken with a token) are added from the input;
 * present ones must agree with it. A Signature parameter in req is an error.
 */
int ali_rpc_sign(struct ali_rpc_result *out, const struct gc_sign_request *req,
		 const struct ali_rpc_input *in, struct gc_error *err);

/*
 * Verifies a received RPC request: takes its one Signature parameter out, recomputes
 * over the rest with the secret of its AccessKeyId (the caller looked it up, from
 * ali_rpc_collect_params) and compares. 0 on a match, else -1 with GC_EAUTH. debug as
 * in ali_acs3_verify.
 */
int ali_rpc_verify(const struct gc_sign_request *req, const char *access_key_secret,
		   struct ali_rpc_result *debug, struct gc_error *err);

#endif
