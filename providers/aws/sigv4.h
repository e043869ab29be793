/*
 * sigv4.h: AWS Signature Version 4 (AWS4-HMAC-SHA256) over a plain request, for a sender
 * (gets the headers to add, Authorization last) and for the emulator's verifier (gets the
 * intermediates for its messages). The rules (WIRE.md 1.2) and the two modes are in
 * docs/internals/signing.md; the result's life cycle is core/urlenc.h's. Nothing here
 * holds global state.
 */
#ifndef GC_AWS_SIGV4_H
#define GC_AWS_SIGV4_H

#include <stdbool.h>
#include <time.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/urlenc.h"

#define AWS_SIGV4_ALGORITHM	"AWS4-HMAC-SHA256"
#define AWS_SIGV4_TIMESTAMP_LEN 16 /* YYYYMMDDTHHMMSSZ */

struct aws_sigv4_input {
	const char *access_key_id;
	const char *secret_access_key;
	const char *session_token; /* NULL (or "") without temporary credentials */
	const char *timestamp;	   /* the x-amz-date value, YYYYMMDDTHHMMSSZ, UTC */
	const char *region;
	const char *service; /* "ec2" */
	bool add_content_sha256;
	/*
	 * NULL to sign. A verifier passes the SignedHeaders list it received: then exactly
	 * those headers are signed, in that order, and nothing is added (x-amz-date and
	 * any token must be among the request's headers).
	 */
	const char *signed_headers;
};

/*
 * Signs req. out need not be initialised; it is written only on success and then
 * belongs to the caller. Fails with GC_EINVALID on a missing or malformed input, or
 * when a sender's request already carries a header the signer adds.
 */
int aws_sigv4_sign(struct gc_sign_result *out, const struct gc_sign_request *req,
		   const struct aws_sigv4_input *in, struct gc_error *err);

/* Writes t as an x-amz-date value (YYYYMMDDTHHMMSSZ, UTC). */
void aws_sigv4_format_time(time_t t, char out[AWS_SIGV4_TIMESTAMP_LEN + 1]);

/* A received Authorization header, split. Owned strings. */
struct aws_sigv4_auth {
	char *access_key_id;
	char *date; /* YYYYMMDD */
	char *region;
	char *service;
	char *signed_headers;
	char *signature;
};

/* Splits value; out is written only on success. GC_EAUTH on anything malformed. */
int aws_sigv4_parse_authorization(struct aws_sigv4_auth *out, const char *value,
				  struct gc_error *err);
void aws_sigv4_auth_release(struct aws_sigv4_auth *a);

/*
 * Recomputes the signature of a received request (its headers include x-amz-date) with
 * the secret of auth->access_key_id and compares it with auth->signature. Returns 0 on
 * a match; otherwise -1 with GC_EAUTH (signature mismatch, scope date not the date of
 * x-amz-date, x-amz-content-sha256 not the hash of the body) or GC_EINVALID. The emulator
 * checks region, service and clock skew itself. debug, when not NULL, must have been
 * initialised; it receives the intermediates whenever the recomputation ran, matching
 * or not, so that a server can say what it expected.
 */
int aws_sigv4_verify(const struct gc_sign_request *req, const struct aws_sigv4_auth *auth,
		     const char *secret_access_key, struct gc_sign_result *debug,
		     struct gc_error *err);

#endif
