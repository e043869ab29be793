/*
 * http.h: the HTTP client, on libcurl's multi interface.
 *
 * Cloud drivers send many API requests at once (40 pages of DescribeInstances, batches of
 * RunInstances); the CLI sends single ones. Both go through one client object, which owns
 * a CURLM and with it the connection and DNS caches, so consecutive requests to the same
 * endpoint reuse their TLS connections.
 *
 * What it guarantees:
 *   - TLS peer and host verification are always on; there is no switch to turn them off.
 *   - Only http:// and https:// URLs; redirects are not followed (a signed API request
 *     that is redirected is a bug to surface, not to chase).
 *   - Every response body is capped (req.max_response, default GC_HTTP_DEFAULT_MAX): the
 *     transfer is aborted as soon as the cap is passed, nothing past it is buffered, and
 *     the request fails with GC_ETOOBIG. Compressed responses are capped after decoding.
 *   - Transport failures map onto error.h: connect failure, reset, empty reply ->
 *     GC_ETRANSIENT; timeouts -> GC_ETIMEOUT; over the cap -> GC_ETOOBIG; bad URL, method
 *     or header -> GC_EINVALID; anything else (TLS verification failure included) ->
 *     GC_EGENERIC. An HTTP error status (4xx, 5xx) is NOT a failure here: the exchange
 *     worked, and the driver reads the cloud's error from the body;
 *     gc_http_status_errcode() gives a fallback classification by status alone.
 *   - Proxies come from the environment, as libcurl reads it when no proxy is set in code:
 *     http_proxy (lowercase only, as libcurl ignores HTTP_PROXY), https_proxy or
 *     HTTPS_PROXY, all_proxy or ALL_PROXY, and no_proxy or NO_PROXY for exceptions.
 *   - Logging (trace level, when a log is given) shows method, URL without its query
 *     (signatures and session tokens travel there), header names and values except those
 *     of credential headers (see gc_http_header_is_sensitive), status, size and time.
 *     Bodies are never logged: they may carry user-data.
 *
 * Life cycle and threads: gc_http_new -> gc_http_perform / gc_http_perform_many... ->
 * gc_http_free. A client is used by one thread at a time; separate clients may run in
 * separate threads (libcurl's global init is done once, under pthread_once).
 * A response is always initialised by the perform functions, success or not, and must be
 * released with gc_http_response_release.
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
