/*
 * urlenc.h: RFC 3986 percent-encoding, a name/value list, and what the clouds' request
 * signers (each in its providers/ folder) share: the plain request shape the drivers and
 * the emulator fill in, header canonicalisation, Authorization parsing and a constant-time
 * compare. Nothing here keeps state; every function is safe to call from any thread. The
 * encoding, decoding and sorting rules (and why) are in docs/internals/signing.md,
 * "Quirks that bite".
 *
 * struct gc_params is an ordered list of owned name/value strings (query parameters,
 * form fields or HTTP headers), kept in the order added; sorting is explicit. Life cycle:
 * gc_params_init (or GC_PARAMS_INIT) -> gc_params_add / gc_params_parse ->
 * gc_params_release.
 */
#ifndef GC_URLENC_H
#define GC_URLENC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/hash.h"
#include "core/error.h"

/* Appends the encoding of s[0..len) to out. Returns 0, or -1 at out's cap. */
int gc_urlenc(struct gc_buf *out, const char *s, size_t len);
int gc_urlenc_str(struct gc_buf *out, const char *s);
/* The same, but '/' stays as it is: for canonical URI paths. */
int gc_urlenc_path(struct gc_buf *out, const char *s, size_t len);

enum gc_urldec_mode {
	GC_URLDEC_RFC3986 = 0, /* query text: '+' is a literal plus */
	GC_URLDEC_FORM = 1,    /* form bodies: '+' is a space */
};

/*
 * Appends the decoding of s[0..len) to out. Fails with GC_EINVALID on a malformed
 * escape ("%", "%4", "%zz"), GC_ETOOBIG at out's cap. The output may hold any byte,
 * NUL included; out->len says how many.
 */
int gc_urldec(struct gc_buf *out, const char *s, size_t len, enum gc_urldec_mode mode,
	      struct gc_error *err);

struct gc_param {
	char *name;
	char *value;
};

struct gc_params {
	struct gc_param *items;
	size_t n;
	size_t alloc;
};

/* kept on one line, as clang-format would spread it over four */
/* clang-format off */
#define GC_PARAMS_INIT { NULL, 0, 0 }
/* clang-format on */

void gc_params_init(struct gc_params *p);
void gc_params_release(struct gc_params *p);

/* Appends copies of name and value. */
void gc_params_add(struct gc_params *p, const char *name, const char *value);
/* Appends every item of src, in order. */
void gc_params_add_all(struct gc_params *p, const struct gc_params *src);

/* The value of the first item named exactly name, or NULL. */
const char *gc_params_get(const struct gc_params *p, const char *name);
/* The same with an ASCII case-insensitive name match, for HTTP headers. */
const char *gc_params_get_ci(const struct gc_params *p, const char *name);
/* How many items are named exactly name. */
size_t gc_params_count(const struct gc_params *p, const char *name);
/* Removes every item named exactly name; returns how many went. */
size_t gc_params_remove(struct gc_params *p, const char *name);

/*
 * Parses "a=1&b=2" text and appends the decoded pairs to out. Empty pieces ("a=1&&b")
 * are skipped, a piece without '=' has the value "". A decoded name or value holding
 * a NUL byte is rejected (GC_EINVALID), as is a malformed escape. On failure out is
 * left as it was.
 */
int gc_params_parse(struct gc_params *out, const char *text, size_t len, enum gc_urldec_mode mode,
		    struct gc_error *err);

/* Sorts p in place, bytewise on the encoded name, then on the encoded value, ties
 * keeping their order. */
void gc_params_sort(struct gc_params *p);

/* Appends "name=value&..." in list order, each side RFC 3986-encoded. Returns 0, or
 * -1 at out's cap. */
int gc_params_encode(struct gc_buf *out, const struct gc_params *p);
/* The same in sorted order (see gc_params_sort), leaving p as it is: the canonical
 * query string of the signing schemes that sort it (docs/internals/signing.md). */
int gc_params_encode_sorted(struct gc_buf *out, const struct gc_params *p);

/*
 * An HTTP request as the signers see it: plain, borrowed pointers, nothing owned.
 * The sender fills it from what it is about to send; the emulator fills it from what it
 * received.
 *   method        "GET", "POST", ...
 *   host          used as the host header when headers has no "host" (curl adds Host
 *                 from the URL, so a sender need not list it)
 *   path          the decoded path; NULL means "/"
 *   query         decoded query parameters in wire order, or NULL: then query_string
 *                 is decoded (RFC 3986 rules) where a scheme needs the parameters
 *   query_string  the raw query text as sent, or NULL (for a scheme that signs it verbatim)
 *   headers       header name/value pairs as sent (names in any case), or NULL
 *   body          the exact body bytes, body_len of them (NULL with 0 for none)
 */
struct gc_sign_request {
	const char *method;
	const char *host;
	const char *path;
	const struct gc_params *query;
	const char *query_string;
	const struct gc_params *headers;
	const void *body;
	size_t body_len;
};

/*
 * What a header-signing scheme (SigV4, ACS3, TC3) produces: every intermediate, so the
 * vectors program can compare each one and the emulator can explain a mismatch.
 * Life cycle: gc_sign_result_init -> a scheme's sign or verify -> gc_sign_result_release.
 */
#define GC_SIGN_DATE_MAX 16
struct gc_sign_result {
	char payload_hash[GC_SHA256_HEX_LEN]; /* hex sha256 of the body */
	char signature[GC_SHA256_HEX_LEN];
	char date[GC_SIGN_DATE_MAX + 1]; /* the scope date, where the scheme has one (TC3) */
	struct gc_buf canonical_request;
	struct gc_buf string_to_sign;
	struct gc_buf credential_scope; /* empty where the scheme has none (ACS3) */
	struct gc_buf signed_headers;	/* "host;x-amz-date" */
	struct gc_buf authorization;	/* the full Authorization header value */
	struct gc_params added_headers; /* what a sender adds, Authorization last */
};

void gc_sign_result_init(struct gc_sign_result *r);
void gc_sign_result_release(struct gc_sign_result *r);
/* A verifier's end: r moves into debug (what debug held is released) or, debug NULL, is
 * released. Returns ret. */
int gc_sign_result_give(struct gc_sign_result *debug, struct gc_sign_result *r, int ret);

/* Whether s is set and not empty: a signing input's "given". */
bool gc_sign_present(const char *s);

/*
 * The decoded query parameters of req (req->query copied, or req->query_string
 * parsed) appended to out. Returns 0 or -1 with err set.
 */
int gc_sign_request_query(struct gc_params *out, const struct gc_sign_request *req,
			  struct gc_error *err);

/*
 * The pieces the three header-signing schemes share.
 *
 * gc_sign_request_headers: req->headers followed by extra (may be NULL) into out, which
 * must be empty, as lower-case names sorted bytewise, a repeated name's values joined
 * with ",", and "host" taken from req->host when no header gives it. Names must be
 * HTTP tokens; GC_EINVALID otherwise, or when there is no host at all.
 */
int gc_sign_request_headers(struct gc_params *out, const struct gc_sign_request *req,
			    const struct gc_params *extra, struct gc_error *err);

enum gc_hdr_norm {
	GC_HDR_TRIM,	 /* leading and trailing spaces and tabs dropped */
	GC_HDR_COLLAPSE, /* trimmed, and each inner run of spaces and tabs made one space */
	GC_HDR_LOWER,	 /* trimmed and ASCII lower-cased */
};

/*
 * Writes "name:value\n" for each signed header to canon and "a;b;c" to signed_list
 * (both appended). headers is the output of gc_sign_request_headers. The signed set is
 * either the ";"-separated names in only (a verifier passes the list it received; each
 * must be present, names are matched case-insensitively and used in the given order),
 * or, when only is NULL, every header for which want(name, ctx) is true, in sorted
 * order. Fails with GC_EINVALID (a listed header missing, an empty list) or
 * GC_ETOOBIG.
 */
int gc_sign_canonical_headers(struct gc_buf *canon, struct gc_buf *signed_list,
			      const struct gc_params *headers, const char *only,
			      bool (*want)(const char *name, const void *ctx), const void *ctx,
			      enum gc_hdr_norm norm, struct gc_error *err);

/*
 * The three parts of an "ALGORITHM Credential=...,SignedHeaders=...,Signature=..."
 * Authorization value (some clouds put a space after each comma, some do not; both are
 * accepted, and the parts may come in any order). Owned strings.
 */
struct gc_sign_auth {
	char *credential;
	char *signed_headers;
	char *signature;
};

/* Parses value into out (need not be initialised; written only on success). Fails
 * with GC_EAUTH when the algorithm is not the one given or a part is missing, empty,
 * repeated or unknown. */
int gc_sign_parse_authorization(struct gc_sign_auth *out, const char *value, const char *algorithm,
				struct gc_error *err);
void gc_sign_auth_release(struct gc_sign_auth *a);

/* Whether two strings are equal, in time that does not depend on where they differ:
 * for comparing a received signature with the recomputed one. */
bool gc_sign_equal(const char *a, const char *b);

#endif
