/*
 * http.h: the HTTP client, on libcurl's multi interface. One client owns a CURLM and with
 * it the connection and DNS caches, so consecutive requests to an endpoint reuse their TLS
 * connections. Its guarantees (TLS verification always on, no redirects, every body
 * capped with GC_ETOOBIG, transport failures mapped onto error.h, proxies from the
 * environment, no bodies or credential headers logged): docs/internals/http.md. An HTTP
 * error status is NOT a failure here: the driver reads the cloud's error from the body.
 *
 * Life cycle and threads: gc_http_new -> gc_http_perform / gc_http_perform_many... ->
 * gc_http_free. A client is used by one thread at a time; separate clients may run in
 * separate threads. A response is always initialised by the perform functions, success
 * or not, and must be released with gc_http_response_release.
 */
#ifndef GC_HTTP_H
#define GC_HTTP_H

#include <stddef.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/log.h"

#define GC_HTTP_DEFAULT_MAX		((size_t)16 << 20)  /* response body cap, 16 MiB */
#define GC_HTTP_MAX_HEADER_BYTES	((size_t)256 << 10) /* all response headers */
#define GC_HTTP_DEFAULT_CONNECT_TIMEOUT 10000L		    /* ms */
#define GC_HTTP_DEFAULT_TIMEOUT		60000L		    /* ms, whole exchange */
#define GC_HTTP_DEFAULT_IN_FLIGHT	16

struct gc_http;

struct gc_http_request {
	const char *method;	    /* "GET", "POST", ...; NULL means GET */
	const char *url;	    /* http:// or https:// */
	const char *const *headers; /* "Name: value" strings, n_headers of them */
	size_t n_headers;
	const void *body; /* sent as is; must outlive the call */
	size_t body_len;
	long connect_timeout_ms; /* 0: GC_HTTP_DEFAULT_CONNECT_TIMEOUT */
	long timeout_ms;	 /* whole exchange; 0: GC_HTTP_DEFAULT_TIMEOUT */
	size_t max_response;	 /* body cap in bytes; 0: GC_HTTP_DEFAULT_MAX */
};

struct gc_http_header {
	char *name; /* lowercased */
	char *value;
};

struct gc_http_response {
	int status;			/* HTTP status; 0 when no response arrived */
	struct gc_buf body;		/* capped at the request's max_response */
	struct gc_http_header *headers; /* of the final response, in order received */
	size_t n_headers, alloc_headers;
	struct gc_error error; /* code GC_OK on success */
};

/* Returns a new client, or NULL with err set if libcurl cannot be set up. log may be
 * NULL; if not, it must outlive the client. */
struct gc_http *gc_http_new(struct gc_log *log, struct gc_error *err);
void gc_http_free(struct gc_http *http);

/*
 * Performs one request. Returns 0 when an HTTP response arrived (whatever its status), or
 * -1 with res->error (and err, if not NULL) set. res is initialised here in both cases.
 */
int gc_http_perform(struct gc_http *http, const struct gc_http_request *req,
		    struct gc_http_response *res, struct gc_error *err);

struct gc_retry_policy;

/*
 * gc_http_perform retried under policy (core/retry.h) while the transport fails or the
 * answer is a 5xx (then GC_ETRANSIENT, "HTTP <status>"): for small services with no error
 * bodies of their own, such as an instance metadata service. Returns 0 with the first
 * answer below 500, whatever its status, or -1 with err set (err must not be NULL).
 */
int gc_http_perform_retried(struct gc_http *http, const struct gc_http_request *req,
			    struct gc_http_response *res, const struct gc_retry_policy *policy,
			    struct gc_error *err);

/*
 * Performs n requests with at most max_in_flight of them in progress at any moment
 * (0: GC_HTTP_DEFAULT_IN_FLIGHT). Every res[i] is initialised and gets its own outcome in
 * res[i].error; one request failing does not affect the others. Each request's timeouts
 * run from when it starts, not from when the batch starts. Returns 0 if all succeeded,
 * -1 if at least one failed.
 */
int gc_http_perform_many(struct gc_http *http, const struct gc_http_request *reqs,
			 struct gc_http_response *res, size_t n, size_t max_in_flight);

void gc_http_response_release(struct gc_http_response *res);

/* The value of the first response header named name (any case), or NULL. */
const char *gc_http_response_header(const struct gc_http_response *res, const char *name);

/* Whether a header's value must never be logged (Authorization, session tokens...). */
int gc_http_header_is_sensitive(const char *name);

/*
 * A fallback classification of an HTTP status, for when the body names no error the
 * driver knows: 2xx/3xx GC_OK, 429 GC_ETHROTTLED, 408 GC_ETIMEOUT, 500/502/503/504
 * GC_ETRANSIENT, 401/403 GC_EAUTH, 404 GC_ENOTFOUND, other 4xx GC_EINVALID, anything
 * else GC_EGENERIC.
 */
enum gc_errcode gc_http_status_errcode(int status);

#endif
