/*
 * tc3.h: Tencent Cloud API 3.0 request signatures, TC3-HMAC-SHA256 (WIRE.md 3.2); the
 * rules and quirks are in docs/internals/signing.md. The body is hashed byte for byte:
 * sign exactly the JSON text you send. A sender gets back X-TC-Timestamp and, from the
 * input when given, X-TC-Action, X-TC-Version, X-TC-Region, X-TC-Token (each only when
 * the request lacks it; a present one must agree), then Authorization. The emulator
 * verifies with tc_verify. The result's life cycle is core/urlenc.h's.
 */
#ifndef GC_TC_TC3_H
#define GC_TC_TC3_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/urlenc.h"

#define TC3_ALGORITHM "TC3-HMAC-SHA256"
#define TC3_DATE_LEN  10 /* YYYY-MM-DD */

struct tc_sign_input {
	const char *secret_id;
	const char *secret_key;
	const char *token;   /* NULL (or "") without temporary credentials; sent, not signed */
	int64_t timestamp;   /* Unix seconds: X-TC-Timestamp */
	const char *service; /* "cvm", "vpc"; NULL: the first label of the host */
	const char *action;  /* X-TC-Action to add, or NULL */
	const char *version; /* X-TC-Version to add, or NULL */
	const char *region;  /* X-TC-Region to add, or NULL */
	bool sign_action;    /* sign x-tc-action too (newer doc samples do; both are accepted) */
	/* NULL to sign; a verifier passes the SignedHeaders list it received */
	const char *signed_headers;
};

/* Signs req; out is written only on success. GC_EINVALID on a bad input. */
int tc_sign(struct gc_sign_result *out, const struct gc_sign_request *req,
	    const struct tc_sign_input *in, struct gc_error *err);

/* A received Authorization header, split. Owned strings. */
struct tc_auth {
	char *secret_id;
	char *date;
	char *service;
	char *signed_headers;
	char *signature;
};

/* Splits value; out is written only on success. GC_EAUTH on anything malformed. */
int tc_parse_authorization(struct tc_auth *out, const char *value, struct gc_error *err);
void tc_auth_release(struct tc_auth *a);

/*
 * Recomputes a received request's signature (its X-TC-Timestamp header gives the time)
 * with the key of auth->secret_id and compares. 0 on a match, else -1 with GC_EAUTH
 * (mismatch, no or a bad X-TC-Timestamp, scope date not its UTC date) or GC_EINVALID.
 * The caller checks the clock window and the service. debug as in aws_sigv4_verify.
 */
int tc_verify(const struct gc_sign_request *req, const struct tc_auth *auth, const char *secret_key,
	      struct gc_sign_result *debug, struct gc_error *err);

#endif
