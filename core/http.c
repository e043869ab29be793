/*
 * http.c: the HTTP client (see http.h) on libcurl's multi interface.
 *
 * One loop serves both the single request and the batch: up to K easy handles are in the
 * client's CURLM at once, each with its own request, response and error; as one finishes
 * the next is added. Connections and DNS answers live in the CURLM, so they are reused
 * across transfers and across calls. Callbacks enforce the size caps and abort the
 * transfer the moment a cap is passed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/alloc.h"
#include "core/http.h"
#include "core/provider.h"
#include "core/retry.h"

#ifndef GC_VERSION
#define GC_VERSION "dev"
#endif

/* Connections kept open between batches. libcurl's default follows the number of handles
 * in the CURLM, which drops to zero between calls and would close what we want to reuse. */
#define HTTP_MAX_IDLE_CONNECTIONS 64L

struct gc_http {
	CURLM *multi;
	struct gc_log *log;
};

/* One transfer in flight. Lives in an array that does not move while curl holds it. */
struct xfer {
	CURL *easy;
	struct curl_slist *headers;
	const struct gc_http_request *req;
	struct gc_http_response *res;
	char *where; /* "POST 'https://host/path'" for messages and logs */
	size_t header_bytes;
	enum gc_errcode abort_code; /* set by a callback that aborted the transfer */
	char abort_msg[160];
	char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	/* not thread-safe in libcurl 7.x, hence the once; never cleaned up: the process
	 * ends first, and cleaning up under another thread's feet is worse */
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive equality of s[0..n) and the NUL-terminated word. */
static int name_is(const char *s, size_t n, const char *word)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!word[i] || ascii_lower(s[i]) != ascii_lower(word[i]))
			return 0;
	return word[n] == '\0';
}

static int name_in(const char *s, size_t n, const char *const *list)
{
	for (; list && *list; list++)
		if (name_is(s, n, *list))
			return 1;
	return 0;
}

/* Credentials travel in these (the signatures of every cloud), and in each cloud's
 * session-token header, which its facts' secret_names list; their values never reach a
 * log. */
static const char *const sensitive_headers[] = {
	"authorization", "proxy-authorization", "cookie", "set-cookie", NULL,
};

static int sensitive_n(const char *name, size_t n)
{
	const struct gc_provider_ops *c;

	if (name_in(name, n, sensitive_headers))
		return 1;
	for (size_t i = 0; (c = gc_provider_at(i)); i++)
		if (name_in(name, n, c->facts->secret_names))
			return 1;
	return 0;
}

int gc_http_header_is_sensitive(const char *name)
{
	return name && sensitive_n(name, strlen(name));
}

enum gc_errcode gc_http_status_errcode(int status)
{
	if (status >= 200 && status < 400)
		return GC_OK;
	switch (status) {
	case 429: return GC_ETHROTTLED;
	case 408: return GC_ETIMEOUT;
	case 500:
	case 502:
	case 503:
	case 504: return GC_ETRANSIENT;
	case 401:
	case 403: return GC_EAUTH;
	case 404: return GC_ENOTFOUND;
	}
	return status >= 400 && status < 500 ? GC_EINVALID : GC_EGENERIC;
}

static void response_init(struct gc_http_response *res)
{
	memset(res, 0, sizeof(*res));
	gc_buf_init(&res->body, GC_HTTP_DEFAULT_MAX);
	gc_error_init(&res->error);
}

static void clear_headers(struct gc_http_response *res)
{
	size_t i;

	for (i = 0; i < res->n_headers; i++) {
		free(res->headers[i].name);
		free(res->headers[i].value);
	}
	res->n_headers = 0;
}

void gc_http_response_release(struct gc_http_response *res)
{
	if (!res)
		return;
	clear_headers(res);
	free(res->headers);
	res->headers = NULL;
	res->alloc_headers = 0;
	gc_buf_release(&res->body);
	res->status = 0;
}

const char *gc_http_response_header(const struct gc_http_response *res, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < res->n_headers; i++) {
		const char *h = res->headers[i].name;
		size_t j;

		/* stored names are lowercase; lower the caller's side only */
		for (j = 0; j < n && h[j] && h[j] == ascii_lower(name[j]); j++)
			;
		if (j == n && !h[j])
			return res->headers[i].value;
	}
	return NULL;
}

struct gc_http *gc_http_new(struct gc_log *log, struct gc_error *err)
{
	struct gc_http *http;

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		gc_error_set(err, GC_EGENERIC, "cannot initialise libcurl: %s",
			     curl_easy_strerror(global_rc));
		return NULL;
	}
	http = gc_xcalloc(1, sizeof(*http));
	http->log = log;
	http->multi = curl_multi_init();
	if (!http->multi) {
		free(http);
		gc_error_set(err, GC_EGENERIC, "cannot create a libcurl multi handle");
		return NULL;
	}
	curl_multi_setopt(http->multi, CURLMOPT_MAXCONNECTS, HTTP_MAX_IDLE_CONNECTIONS);
	return http;
}

void gc_http_free(struct gc_http *http)
{
	if (!http)
		return;
	if (http->multi)
		curl_multi_cleanup(http->multi);
	free(http);
}

static int tracing(const struct gc_http *http)
{
	return http->log && http->log->level >= GC_LOG_TRACE;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *p)
{
	struct xfer *x = p;
	size_t n = size * nmemb;
	curl_off_t declared = -1;

	/* a declared size is reserved at once: a body grown by doubling would be up to twice
	 * its size, copied at each step (a page of 1000 instances is megabytes) */
	if (x->res->body.alloc == 0 &&
	    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared) == CURLE_OK &&
	    declared > 0 && (size_t)declared <= x->res->body.max)
		gc_buf_reserve(&x->res->body, (size_t)declared);
	if (gc_buf_add(&x->res->body, data, n) < 0) {
		x->abort_code = GC_ETOOBIG;
		snprintf(x->abort_msg, sizeof(x->abort_msg), "response larger than %zu bytes",
			 x->res->body.max);
		return 0; /* a short count aborts the transfer: nothing more is read */
	}
	return n;
}

static void add_header(struct gc_http_response *res, const char *name, size_t name_len,
		       const char *value, size_t value_len)
{
	struct gc_http_header *h;
	size_t i;

	GC_ALLOC_GROW(res->headers, res->n_headers + 1, res->alloc_headers);
	h = &res->headers[res->n_headers++];
	h->name = gc_xstrndup(name, name_len);
	for (i = 0; i < name_len; i++)
		h->name[i] = ascii_lower(h->name[i]);
	h->value = gc_xstrndup(value, value_len);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Called once per header line, status lines included, of every response in the exchange
 * (a 100 Continue, a proxy's CONNECT answer, the final one). */
static size_t on_header(char *data, size_t size, size_t nmemb, void *p)
{
	struct xfer *x = p;
	struct gc_http_response *res = x->res;
	size_t n = size * nmemb, len = n, name_len;
	const char *colon, *value;

	x->header_bytes += n;
	if (x->header_bytes > GC_HTTP_MAX_HEADER_BYTES) {
		x->abort_code = GC_ETOOBIG;
		snprintf(x->abort_msg, sizeof(x->abort_msg),
			 "response headers larger than %zu bytes", GC_HTTP_MAX_HEADER_BYTES);
		return 0;
	}
	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		/* a new response begins: keep only the final response's headers */
		clear_headers(res);
		return n;
	}
	while (len > 0 &&
	       (data[len - 1] == '\r' || data[len - 1] == '\n' || is_blank(data[len - 1])))
		len--;
	if (len == 0)
		return n;
	if (is_blank(data[0])) {
		/* obsolete line folding: the line continues the previous header's value */
		struct gc_http_header *h;
		char *v;
		size_t start = 0;

		if (res->n_headers == 0)
			return n;
		while (start < len && is_blank(data[start]))
			start++;
		h = &res->headers[res->n_headers - 1];
		v = gc_xasprintf("%s %.*s", h->value, (int)(len - start), data + start);
		free(h->value);
		h->value = v;
		return n;
	}
	colon = memchr(data, ':', len);
	if (!colon || colon == data)
		return n; /* not a header; nothing a caller could ask for */
	name_len = (size_t)(colon - data);
	while (name_len > 0 && is_blank(data[name_len - 1]))
		name_len--;
	value = colon + 1;
	while (value < data + len && is_blank(*value))
		value++;
	add_header(res, data, name_len, value, (size_t)(data + len - value));
	return n;
}

static enum gc_errcode map_curl_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST: /* DNS hiccups pass; a typo fails after a few tries */
	case CURLE_COULDNT_CONNECT:
	case CURLE_GOT_NOTHING: /* the server closed without a reply */
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR: /* connection reset */
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR: /* handshake cut short; verification failures differ */
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM: return GC_ETRANSIENT;
	case CURLE_OPERATION_TIMEDOUT: return GC_ETIMEOUT;
	case CURLE_FILESIZE_EXCEEDED: return GC_ETOOBIG;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL: return GC_EINVALID;
	default: return GC_EGENERIC;
	}
}

static int valid_method(const char *m)
{
	size_t i;

	for (i = 0; m[i]; i++)
		if (m[i] < 'A' || m[i] > 'Z' || i >= 16)
			return 0;
	return i > 0;
}

static int has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* Header names are RFC 9110 tokens; values may not hold control characters, so a CR LF
 * smuggled into a value cannot start a header or a request of its own. */
static int valid_header(const char *h)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~";
	const char *p;

	for (p = h; *p && *p != ':'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(tchar, *p)))
			return 0;
	if (*p != ':' || p == h)
		return 0;
	for (p++; *p; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
			return 0;
	return 1;
}

static void xfer_cleanup(struct xfer *x)
{
	if (x->easy)
		curl_easy_cleanup(x->easy);
	x->easy = NULL;
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	free(x->where);
	x->where = NULL;
}

static void log_request(struct gc_http *http, const struct xfer *x)
{
	const struct gc_http_request *req = x->req;
	size_t i;

	gc_log_trace(http->log, "http: > %s, %zu byte body", x->where, req->body_len);
	for (i = 0; i < req->n_headers; i++) {
		const char *h = req->headers[i];
		size_t name_len = strcspn(h, ":");

		/* withheld here rather than left to the log's redactor: the value never even
		 * reaches the formatter */
		if (sensitive_n(h, name_len))
			gc_log_trace(http->log, "http: >   %.*s (value not logged)", (int)name_len,
				     h);
		else
			gc_log_trace(http->log, "http: >   %s", h);
	}
}

/* curl_slist_append returns NULL on failure and leaves the list alone: keep hold of it. */
static int append_header(struct xfer *x, const char *h)
{
	struct curl_slist *l = curl_slist_append(x->headers, h);

	if (!l)
		return -1;
	x->headers = l;
	return 0;
}

/* Sets up x for req and adds it to the multi. Returns 0, or -1 with x->res->error set. */
static int xfer_start(struct gc_http *http, struct xfer *x, const struct gc_http_request *req,
		      struct gc_http_response *res)
{
	const char *method = req->method ? req->method : "GET";
	size_t cap = req->max_response ? req->max_response : GC_HTTP_DEFAULT_MAX;
	int has_expect = 0;
	size_t i;
	CURLMcode mc;

	x->req = req;
	x->res = res;
	gc_buf_init(&res->body, cap);
	if (!valid_method(method))
		return gc_error_set(&res->error, GC_EINVALID, "invalid HTTP method");
	if (!req->url || !*req->url || has_ctl(req->url))
		return gc_error_set(&res->error, GC_EINVALID, "invalid URL for %s request", method);
	/* the query string carries signatures and, for some clouds' signing schemes, the session token:
	 * keep it out of messages and logs */
	x->where = gc_xasprintf("%s '%.*s'", method, (int)strcspn(req->url, "?#"), req->url);
	if (req->body_len && !req->body)
		return gc_error_set(&res->error, GC_EINVALID, "cannot send %s: body missing",
				    x->where);
	for (i = 0; i < req->n_headers; i++) {
		const char *h = req->headers[i];

		if (!h || !valid_header(h))
			return gc_error_set(&res->error, GC_EINVALID,
					    "cannot send %s: invalid header #%zu", x->where, i + 1);
		if (name_is(h, strcspn(h, ":"), "expect"))
			has_expect = 1;
		if (append_header(x, h) < 0)
			return gc_error_set(&res->error, GC_EGENERIC,
					    "cannot send %s: out of memory", x->where);
	}
	/* "Expect: 100-continue" would stall bigger bodies for a round trip (or a second,
	 * with servers that ignore it); API endpoints take the body straight away */
	if (!has_expect && append_header(x, "Expect:") < 0)
		return gc_error_set(&res->error, GC_EGENERIC, "cannot send %s: out of memory",
				    x->where);

	x->easy = curl_easy_init();
	if (!x->easy)
		return gc_error_set(&res->error, GC_EGENERIC, "cannot send %s: no curl handle",
				    x->where);
	curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (void *)x);
	curl_easy_setopt(x->easy, CURLOPT_URL, req->url);
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS */
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS,
			 req->connect_timeout_ms > 0 ? req->connect_timeout_ms
						     : GC_HTTP_DEFAULT_CONNECT_TIMEOUT);
	curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS,
			 req->timeout_ms > 0 ? req->timeout_ms : GC_HTTP_DEFAULT_TIMEOUT);
	/* refuses a declared Content-Length over the cap before reading any of the body;
	 * on_body catches the rest (chunked, or longer than declared, or decompressed) */
	curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)cap);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, (void *)x);
	curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, (void *)x);
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(x->easy, CURLOPT_USERAGENT, "gpucluster/" GC_VERSION);
	curl_easy_setopt(x->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
	/* CURLOPT_PROXY is deliberately never set: libcurl then reads the proxy variables */

	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(x->easy, CURLOPT_NOBODY, 1L);
	} else if (req->body_len || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
		   strcmp(method, "PATCH") == 0) {
		/* the size first: without it libcurl would strlen() a binary body */
		curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, req->body_len ? req->body : "");
		if (strcmp(method, "POST") != 0)
			curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, method);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, method);
	}

	if (tracing(http))
		log_request(http, x);
	mc = curl_multi_add_handle(http->multi, x->easy);
	if (mc != CURLM_OK)
		return gc_error_set(&res->error, GC_EGENERIC, "cannot send %s: %s", x->where,
				    curl_multi_strerror(mc));
	return 0;
}

/* Records the outcome of a finished transfer in its response. */
static void xfer_finish(struct gc_http *http, struct xfer *x, CURLcode rc)
{
	struct gc_http_response *res = x->res;
	long status = 0;
	curl_off_t us = 0;

	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &us);
	res->status = (int)status;
	if (x->abort_code != GC_OK) {
		gc_error_set(&res->error, x->abort_code, "cannot %s: %s", x->where, x->abort_msg);
	} else if (rc == CURLE_FILESIZE_EXCEEDED) {
		gc_error_set(&res->error, GC_ETOOBIG, "cannot %s: response larger than %zu bytes",
			     x->where, res->body.max);
	} else if (rc != CURLE_OK) {
		gc_error_set(&res->error, map_curl_error(rc), "cannot %s: %s", x->where,
			     x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
	}
	if (res->error.code != GC_OK && res->status)
		res->error.http_status = res->status;
	if (!tracing(http))
		return;
	if (res->error.code == GC_OK)
		gc_log_trace(http->log, "http: < %d from %s, %zu bytes in %lld ms", res->status,
			     x->where, res->body.len, (long long)(us / 1000));
	else
		gc_log_trace(http->log, "http: ! %s", res->error.message);
}

/* Fails every transfer still in the multi when the multi itself breaks. */
static void fail_active(struct gc_http *http, struct xfer *xs, size_t n, CURLMcode mc)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!xs[i].easy)
			continue;
		curl_multi_remove_handle(http->multi, xs[i].easy);
		gc_error_set(&xs[i].res->error, GC_EGENERIC, "cannot %s: %s", xs[i].where,
			     curl_multi_strerror(mc));
		xfer_cleanup(&xs[i]);
	}
}

int gc_http_perform_retried(struct gc_http *http, const struct gc_http_request *req,
			    struct gc_http_response *res, const struct gc_retry_policy *policy,
			    struct gc_error *err)
{
	struct gc_retry r;

	gc_retry_begin(&r, policy);
	for (;;) {
		if (gc_http_perform(http, req, res, err) == 0 && res->status < 500) {
			gc_retry_succeeded(&r);
			return 0;
		}
		if (res->status >= 500)
			gc_error_set(err, GC_ETRANSIENT, "HTTP %d", res->status);
		gc_http_response_release(res);
		if (gc_retry_pause(&r, err, -1) != 0)
			return -1;
	}
}

int gc_http_perform_many(struct gc_http *http, const struct gc_http_request *reqs,
			 struct gc_http_response *res, size_t n, size_t max_in_flight)
{
	struct xfer *xs = NULL;
	size_t i, next = 0, active = 0, failed = 0;
	CURLMcode mc = CURLM_OK;

	for (i = 0; i < n; i++)
		response_init(&res[i]);
	if (n == 0)
		return 0;
	if (max_in_flight == 0)
		max_in_flight = GC_HTTP_DEFAULT_IN_FLIGHT;
	xs = gc_xcalloc(n, sizeof(*xs));

	while (next < n || active > 0) {
		CURLMsg *msg;
		int running, left;

		while (active < max_in_flight && next < n) {
			struct xfer *x = &xs[next];

			if (xfer_start(http, x, &reqs[next], &res[next]) < 0)
				xfer_cleanup(x);
			else
				active++;
			next++;
		}
		if (active == 0)
			continue;
		mc = curl_multi_perform(http->multi, &running);
		if (mc != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(http->multi, &left))) {
			struct xfer *x;
			char *priv = NULL;
			CURLcode rc = msg->data.result;
			CURL *easy = msg->easy_handle;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
			x = (struct xfer *)(void *)priv;
			/* msg points into the multi's memory: done with it before removing */
			curl_multi_remove_handle(http->multi, easy);
			xfer_finish(http, x, rc);
			xfer_cleanup(x);
			active--;
		}
		/* room for more: start them before waiting */
		if (active < max_in_flight && next < n)
			continue;
		if (active > 0) {
			mc = curl_multi_poll(http->multi, NULL, 0, 1000, NULL);
			if (mc != CURLM_OK)
				break;
		}
	}
	if (mc != CURLM_OK) {
		fail_active(http, xs, n, mc);
		for (; next < n; next++)
			gc_error_set(&res[next].error, GC_EGENERIC, "cannot send request: %s",
				     curl_multi_strerror(mc));
	}
	free(xs);
	for (i = 0; i < n; i++)
		if (res[i].error.code != GC_OK)
			failed++;
	return failed ? -1 : 0;
}

int gc_http_perform(struct gc_http *http, const struct gc_http_request *req,
		    struct gc_http_response *res, struct gc_error *err)
{
	if (gc_http_perform_many(http, req, res, 1, 1) == 0)
		return 0;
	if (err)
		*err = res->error;
	return -1;
}
