/*
 * test-http.c: the HTTP client against a libmicrohttpd server on 127.0.0.1 (ephemeral
 * port, started here) and a few raw sockets for what a proper server will not do (reply
 * with nothing, flood headers). Covers round trips, status codes, the size caps, timeouts,
 * connection errors, the in-flight limit, connection reuse, per-request isolation of
 * errors, proxy environment variables, and what reaches the log.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"
#include "core/retry.h"
#include "core/str.h"

#define MS 1000000ull

/* ---- the server ---- */

struct server {
	struct MHD_Daemon *daemon;
	unsigned short port;
	char base[64]; /* "http://127.0.0.1:PORT" */
	pthread_mutex_t lock;
	int in_flight, max_in_flight;
	unsigned connections;
	unsigned long long streamed;
	int stopping;
};

static struct server srv;
static char big_body[1 << 20];

struct upload {
	struct gc_buf body;
};

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct gc_buf *b)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(b->len, b->data, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "X-Amzn-RequestId", "req-123");
	MHD_add_response_header(r, "x-acs-retry-after", "1500");
	MHD_add_response_header(r, "Content-Type", "text/plain");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	gc_buf_release(b);
	return ret;
}

static const char *hdr(struct MHD_Connection *c, const char *name)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);

	return v ? v : "(none)";
}

static ssize_t endless(void *cls, uint64_t pos, char *buf, size_t max)
{
	int stop;

	(void)cls;
	(void)pos;
	pthread_mutex_lock(&srv.lock);
	stop = srv.stopping;
	srv.streamed += max;
	pthread_mutex_unlock(&srv.lock);
	if (stop)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	memset(buf, 's', max);
	return (ssize_t)max;
}

static int server_stopping(void)
{
	int stop;

	pthread_mutex_lock(&srv.lock);
	stop = srv.stopping;
	pthread_mutex_unlock(&srv.lock);
	return stop;
}

/* The path of an origin-form ("/x") or absolute-form ("http://host/x") target. */
static const char *path_of(const char *url)
{
	if (gc_starts_with(url, "http://")) {
		const char *p = strchr(url + 7, '/');

		return p ? p : "/";
	}
	return url;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct upload *up = *con_cls;
	struct gc_buf out = GC_BUF_INIT(8 << 20);
	const char *path = path_of(url);
	uint64_t status;

	(void)cls;
	(void)version;
	if (!up) {
		up = gc_xcalloc(1, sizeof(*up));
		gc_buf_init(&up->body, 4 << 20);
		*con_cls = up;
		return MHD_YES;
	}
	if (*upload_data_size) {
		gc_buf_add(&up->body, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}

	if (strcmp(path, "/echo") == 0 || gc_starts_with(path, "/echo?")) {
		gc_buf_addf(&out,
			    "method=%s\nurl=%s\nx-test=%s\ncontent-type=%s\nexpect=%s\n"
			    "user-agent=%s\nbody-len=%zu\nbody=",
			    method, url, hdr(c, "X-Test"), hdr(c, "Content-Type"), hdr(c, "Expect"),
			    hdr(c, "User-Agent"), up->body.len);
		gc_buf_add(&out, up->body.data, up->body.len);
		return queue(c, MHD_HTTP_OK, &out);
	}
	if (gc_starts_with(path, "/status/") && gc_parse_u64(path + 8, 599, &status) == 0) {
		gc_buf_addf(&out, "status %u", (unsigned)status);
		return queue(c, (unsigned)status, &out);
	}
	if (strcmp(path, "/big") == 0) {
		struct MHD_Response *r;
		enum MHD_Result ret;

		r = MHD_create_response_from_buffer(sizeof(big_body), big_body,
						    MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(path, "/stream") == 0) {
		struct MHD_Response *r;
		enum MHD_Result ret;

		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, endless, NULL, NULL);
		ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(path, "/slow") == 0) {
		unsigned i;

		for (i = 0; i < 300 && !server_stopping(); i++)
			gc_clock_sleep_ms(NULL, 10);
		gc_buf_addstr(&out, "finally");
		return queue(c, MHD_HTTP_OK, &out);
	}
	if (strcmp(path, "/concurrent") == 0) {
		pthread_mutex_lock(&srv.lock);
		if (++srv.in_flight > srv.max_in_flight)
			srv.max_in_flight = srv.in_flight;
		pthread_mutex_unlock(&srv.lock);
		gc_clock_sleep_ms(NULL, 40);
		pthread_mutex_lock(&srv.lock);
		srv.in_flight--;
		pthread_mutex_unlock(&srv.lock);
		gc_buf_addstr(&out, "ok");
		return queue(c, MHD_HTTP_OK, &out);
	}
	gc_buf_addstr(&out, "no such path");
	return queue(c, MHD_HTTP_NOT_FOUND, &out);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct upload *up = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (up) {
		gc_buf_release(&up->body);
		free(up);
		*con_cls = NULL;
	}
}

static void connection_event(void *cls, struct MHD_Connection *c, void **socket_context,
			     enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)c;
	(void)socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		pthread_mutex_lock(&srv.lock);
		srv.connections++;
		pthread_mutex_unlock(&srv.lock);
	}
}

static unsigned connections_seen(void)
{
	unsigned n;

	pthread_mutex_lock(&srv.lock);
	n = srv.connections;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

static void clear_proxy_env(void)
{
	static const char *const vars[] = {
		"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
		"all_proxy",  "ALL_PROXY",  "no_proxy",	   "NO_PROXY",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static int group_setup(void **state)
{
	struct sockaddr_in sin;
	const union MHD_DaemonInfo *info;

	(void)state;
	/* proxies set for the machine running the tests must not reroute loopback requests */
	clear_proxy_env();
	memset(big_body, 'b', sizeof(big_body));
	pthread_mutex_init(&srv.lock, NULL);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = 0;
	srv.daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
		handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
		connection_event, NULL, MHD_OPTION_END);
	if (!srv.daemon)
		return -1;
	info = MHD_get_daemon_info(srv.daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || !info->port)
		return -1;
	srv.port = info->port;
	snprintf(srv.base, sizeof(srv.base), "http://127.0.0.1:%u", (unsigned)srv.port);
	return 0;
}

/* Each test starts without proxy variables, whatever a failed test before it left. */
static int test_setup(void **state)
{
	(void)state;
	clear_proxy_env();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	pthread_mutex_lock(&srv.lock);
	srv.stopping = 1;
	pthread_mutex_unlock(&srv.lock);
	if (srv.daemon)
		MHD_stop_daemon(srv.daemon);
	pthread_mutex_destroy(&srv.lock);
	clear_proxy_env();
	return 0;
}

/* ---- raw sockets ---- */

/* A port nothing listens on: bound, read back, closed. */
static unsigned short closed_port(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* Accepts one connection, reads the request head, sends `reply` (maybe nothing), closes. */
struct raw {
	int fd;
	unsigned short port;
	pthread_t thread;
	const char *reply;
	size_t reply_len;
};

static void *raw_main(void *p)
{
	struct raw *r = p;
	char buf[8192];
	size_t got = 0, off = 0;
	int c = accept(r->fd, NULL, NULL);

	if (c < 0)
		return NULL;
	while (got < sizeof(buf) - 1) {
		ssize_t k = recv(c, buf + got, sizeof(buf) - 1 - got, 0);

		if (k <= 0)
			break;
		got += (size_t)k;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	while (off < r->reply_len) {
		ssize_t k = send(c, r->reply + off, r->reply_len - off, MSG_NOSIGNAL);

		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(c);
	return NULL;
}

static void raw_start(struct raw *r, const char *reply, size_t reply_len)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	r->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(r->fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(r->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(r->fd, 4), 0);
	assert_int_equal(getsockname(r->fd, (struct sockaddr *)&sin, &len), 0);
	r->port = ntohs(sin.sin_port);
	r->reply = reply;
	r->reply_len = reply_len;
	assert_int_equal(pthread_create(&r->thread, NULL, raw_main, r), 0);
}

static void raw_stop(struct raw *r)
{
	shutdown(r->fd, SHUT_RDWR); /* wakes accept() if nobody came */
	pthread_join(r->thread, NULL);
	close(r->fd);
}

/* ---- helpers ---- */

static char *url(const char *path)
{
	return gc_xasprintf("%s%s", srv.base, path);
}

static struct gc_http *client(struct gc_log *log)
{
	struct gc_error err;
	struct gc_http *h = gc_http_new(log, &err);

	assert_non_null(h);
	return h;
}

static const char *body_line(const struct gc_http_response *res, const char *key)
{
	static char line[512];
	const char *p = res->body.data;
	size_t n = strlen(key);

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (len > n && memcmp(p, key, n) == 0 && p[n] == '=') {
			snprintf(line, sizeof(line), "%.*s", (int)(len - n - 1), p + n + 1);
			return line;
		}
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/* ---- tests ---- */

static void test_get_and_post_round_trip(void **state)
{
	static const char body[] = "Action=RunInstances&Version=2016-11-15\0binary\xff";
	const char *headers[] = { "X-Test: hello world",
				  "Content-Type: application/x-www-form-urlencoded" };
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_error err;
	char *u = url("/echo");
	const char *b;

	(void)state;
	req.url = u;
	req.headers = headers;
	req.n_headers = 1;
	assert_int_equal(gc_http_perform(h, &req, &res, &err), 0);
	assert_int_equal(res.status, 200);
	assert_int_equal(res.error.code, GC_OK);
	assert_string_equal(body_line(&res, "method"), "GET");
	assert_string_equal(body_line(&res, "x-test"), "hello world");
	assert_string_equal(body_line(&res, "body-len"), "0");
	assert_true(gc_starts_with(body_line(&res, "user-agent"), "gpucluster/"));
	gc_http_response_release(&res);

	req.method = "POST";
	req.n_headers = 2;
	req.body = body;
	req.body_len = sizeof(body) - 1; /* NUL and 0xff inside: sent byte for byte */
	assert_int_equal(gc_http_perform(h, &req, &res, &err), 0);
	assert_int_equal(res.status, 200);
	assert_string_equal(body_line(&res, "method"), "POST");
	assert_string_equal(body_line(&res, "content-type"), "application/x-www-form-urlencoded");
	assert_string_equal(body_line(&res, "expect"), "(none)");
	b = strstr(res.body.data, "\nbody=");
	assert_non_null(b);
	b += 6;
	assert_int_equal((size_t)(res.body.data + res.body.len - b), sizeof(body) - 1);
	assert_memory_equal(b, body, sizeof(body) - 1);
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

static void test_other_methods_and_big_upload(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	size_t big = (size_t)3 << 19; /* 1.5 MiB: curl would ask "Expect: 100-continue" */
	char *payload = gc_xmalloc(big), *u = url("/echo");
	char want[32];

	(void)state;
	memset(payload, 'p', big);
	req.url = u;
	req.method = "PUT";
	req.body = payload;
	req.body_len = big;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_string_equal(body_line(&res, "method"), "PUT");
	snprintf(want, sizeof(want), "%zu", big);
	assert_string_equal(body_line(&res, "body-len"), want);
	assert_string_equal(body_line(&res, "expect"), "(none)");
	gc_http_response_release(&res);

	req.method = "DELETE";
	req.body = NULL;
	req.body_len = 0;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_string_equal(body_line(&res, "method"), "DELETE");
	gc_http_response_release(&res);

	req.method = "HEAD";
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_int_equal(res.status, 200);
	assert_int_equal(res.body.len, 0);
	assert_string_equal(gc_http_response_header(&res, "x-amzn-requestid"), "req-123");
	gc_http_response_release(&res);
	free(payload);
	free(u);
	gc_http_free(h);
}

static void test_status_codes(void **state)
{
	static const int codes[] = { 200, 204, 400, 403, 404, 429, 500, 503 };
	struct gc_http *h = client(NULL);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		struct gc_http_request req = { 0 };
		struct gc_http_response res;
		char path[32];
		char *u;

		snprintf(path, sizeof(path), "/status/%d", codes[i]);
		u = url(path);
		req.url = u;
		/* an error status is a successful exchange: the driver reads the body */
		assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
		assert_int_equal(res.status, codes[i]);
		assert_int_equal(res.error.code, GC_OK);
		if (codes[i] != 204) {
			snprintf(path, sizeof(path), "status %d", codes[i]);
			assert_string_equal(res.body.data, path);
		}
		gc_http_response_release(&res);
		free(u);
	}
	gc_http_free(h);

	assert_int_equal(gc_http_status_errcode(200), GC_OK);
	assert_int_equal(gc_http_status_errcode(304), GC_OK);
	assert_int_equal(gc_http_status_errcode(429), GC_ETHROTTLED);
	assert_int_equal(gc_http_status_errcode(408), GC_ETIMEOUT);
	assert_int_equal(gc_http_status_errcode(500), GC_ETRANSIENT);
	assert_int_equal(gc_http_status_errcode(503), GC_ETRANSIENT);
	assert_int_equal(gc_http_status_errcode(504), GC_ETRANSIENT);
	assert_int_equal(gc_http_status_errcode(501), GC_EGENERIC);
	assert_int_equal(gc_http_status_errcode(401), GC_EAUTH);
	assert_int_equal(gc_http_status_errcode(403), GC_EAUTH);
	assert_int_equal(gc_http_status_errcode(404), GC_ENOTFOUND);
	assert_int_equal(gc_http_status_errcode(400), GC_EINVALID);
	assert_int_equal(gc_http_status_errcode(0), GC_EGENERIC);
}

static void test_response_headers_any_case(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	char *u = url("/status/503");

	(void)state;
	req.url = u;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_string_equal(gc_http_response_header(&res, "x-amzn-requestid"), "req-123");
	assert_string_equal(gc_http_response_header(&res, "X-Amzn-RequestId"), "req-123");
	assert_string_equal(gc_http_response_header(&res, "X-ACS-RETRY-AFTER"), "1500");
	assert_string_equal(gc_http_response_header(&res, "content-type"), "text/plain");
	assert_null(gc_http_response_header(&res, "x-amzn-request"));
	assert_null(gc_http_response_header(&res, "x-amzn-requestid-2"));
	/* the status line is not a header */
	assert_null(gc_http_response_header(&res, "HTTP/1.1 503 Service Unavailable"));
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

/* Only the final response's headers are kept, not those of a 1xx before it. */
static void test_interim_response_headers_dropped(void **state)
{
	static const char reply[] = "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n"
				    "HTTP/1.1 200 OK\r\nX-Final: 2\r\nX-Folded: a\r\n b\r\n"
				    "Content-Length: 2\r\n\r\nok";
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct raw raw;
	char *u;

	(void)state;
	raw_start(&raw, reply, sizeof(reply) - 1);
	u = gc_xasprintf("http://127.0.0.1:%u/", (unsigned)raw.port);
	req.url = u;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_int_equal(res.status, 200);
	assert_string_equal(res.body.data, "ok");
	assert_null(gc_http_response_header(&res, "x-interim"));
	assert_string_equal(gc_http_response_header(&res, "x-final"), "2");
	assert_string_equal(gc_http_response_header(&res, "x-folded"), "a b");
	gc_http_response_release(&res);
	raw_stop(&raw);
	free(u);
	gc_http_free(h);
}

static void test_too_big_declared_length(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_error err;
	char *u = url("/big");

	(void)state;
	req.url = u;
	req.max_response = 64 << 10;
	assert_int_equal(gc_http_perform(h, &req, &res, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_int_equal(res.error.code, GC_ETOOBIG);
	assert_non_null(strstr(err.message, "larger than 65536 bytes"));
	assert_true(res.body.len <= 64 << 10);
	gc_http_response_release(&res);

	/* a cap just above the size lets it through */
	req.max_response = sizeof(big_body);
	assert_int_equal(gc_http_perform(h, &req, &res, &err), 0);
	assert_int_equal(res.body.len, sizeof(big_body));
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

static void test_too_big_endless_stream(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_error err;
	char *u = url("/stream");
	uint64_t t0 = gc_clock_now_ns(NULL);

	(void)state;
	req.url = u;
	req.max_response = 64 << 10;
	req.timeout_ms = 20000;
	/* no Content-Length: only the write callback can stop it, and it must, long before
	 * the timeout */
	assert_int_equal(gc_http_perform(h, &req, &res, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_true(res.body.len <= 64 << 10);
	assert_true(gc_clock_now_ns(NULL) - t0 < 10000 * MS);
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

static void test_too_big_headers(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_buf reply = GC_BUF_INIT(1 << 20);
	struct raw raw;
	char *u;
	unsigned i;

	(void)state;
	gc_buf_addstr(&reply, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i < 4000; i++)
		gc_buf_addf(&reply, "X-Pad-%u: %080u\r\n", i, i);
	gc_buf_addstr(&reply, "Content-Length: 0\r\n\r\n");
	raw_start(&raw, reply.data, reply.len);
	u = gc_xasprintf("http://127.0.0.1:%u/", (unsigned)raw.port);
	req.url = u;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_ETOOBIG);
	assert_non_null(strstr(res.error.message, "headers"));
	gc_http_response_release(&res);
	raw_stop(&raw);
	free(u);
	gc_buf_release(&reply);
	gc_http_free(h);
}

static void test_timeout(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_error err;
	char *u = url("/slow");
	uint64_t t0 = gc_clock_now_ns(NULL), took;

	(void)state;
	req.url = u;
	req.timeout_ms = 200;
	assert_int_equal(gc_http_perform(h, &req, &res, &err), -1);
	took = gc_clock_now_ns(NULL) - t0;
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_true(took >= 150 * MS);
	assert_true(took < 2000 * MS);
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

static void test_connection_refused(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_error err;
	char *u = gc_xasprintf("http://127.0.0.1:%u/x?Signature=SIGSECRET&SecurityToken=TOKSECRET",
			       (unsigned)closed_port());

	(void)state;
	req.url = u;
	req.method = "POST";
	assert_int_equal(gc_http_perform(h, &req, &res, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_int_equal(res.status, 0);
	assert_true(gc_starts_with(err.message, "cannot POST 'http://127.0.0.1:"));
	/* the query, where signatures and tokens travel, stays out of messages */
	assert_null(strstr(err.message, "SIGSECRET"));
	assert_null(strstr(err.message, "TOKSECRET"));
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

static void test_empty_reply(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct raw raw;
	char *u;

	(void)state;
	raw_start(&raw, "", 0);
	u = gc_xasprintf("http://127.0.0.1:%u/", (unsigned)raw.port);
	req.url = u;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_ETRANSIENT);
	gc_http_response_release(&res);
	raw_stop(&raw);
	free(u);
	gc_http_free(h);
}

static void test_invalid_requests(void **state)
{
	const char *crlf[] = { "X-Test: a\r\nX-Injected: b" };
	const char *noname[] = { ": value" };
	const char *nocolon[] = { "X-Test value" };
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	char *u = url("/echo");
	const char *bad_urls[] = { "http://[::1", "ftp://127.0.0.1/file", "",
				   "http://127.0.0.1/\r\n" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_urls) / sizeof(bad_urls[0]); i++) {
		req.url = bad_urls[i];
		assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
		assert_int_equal(res.error.code, GC_EINVALID);
		gc_http_response_release(&res);
	}
	req.url = NULL;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);

	req.url = u;
	req.method = "GE T";
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);
	req.method = "get";
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);

	req.method = NULL;
	req.n_headers = 1;
	req.headers = crlf;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);
	req.headers = noname;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);
	req.headers = nocolon;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);

	/* a body length without a body */
	req.n_headers = 0;
	req.body_len = 5;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_EINVALID);
	gc_http_response_release(&res);
	free(u);
	gc_http_free(h);
}

static void test_in_flight_limit(void **state)
{
	enum { N = 50, K = 8 };
	struct gc_http *h = client(NULL);
	struct gc_http_request reqs[N];
	struct gc_http_response res[N];
	char *u = url("/concurrent");
	unsigned before;
	int peak;
	size_t i;

	(void)state;
	pthread_mutex_lock(&srv.lock);
	srv.in_flight = srv.max_in_flight = 0;
	pthread_mutex_unlock(&srv.lock);
	before = connections_seen();
	memset(reqs, 0, sizeof(reqs));
	for (i = 0; i < N; i++)
		reqs[i].url = u;
	assert_int_equal(gc_http_perform_many(h, reqs, res, N, K), 0);
	for (i = 0; i < N; i++) {
		assert_int_equal(res[i].error.code, GC_OK);
		assert_int_equal(res[i].status, 200);
		assert_string_equal(res[i].body.data, "ok");
		gc_http_response_release(&res[i]);
	}
	/* read under the lock, assert outside it: a failed assert longjmps away */
	pthread_mutex_lock(&srv.lock);
	peak = srv.max_in_flight;
	pthread_mutex_unlock(&srv.lock);
	/* never more than K at once, and really in parallel (each handler takes 40 ms) */
	assert_true(peak <= K);
	assert_true(peak >= 2);
	/* 50 requests over at most K connections: connections are reused */
	assert_true(connections_seen() - before <= K);
	free(u);
	gc_http_free(h);
}

static void test_connection_reuse(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	char *u = url("/echo");
	unsigned before = connections_seen(), i;

	(void)state;
	req.url = u;
	for (i = 0; i < 5; i++) {
		assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
		gc_http_response_release(&res);
	}
	assert_int_equal(connections_seen() - before, 1);
	free(u);
	gc_http_free(h);
}

static void test_errors_isolated(void **state)
{
	struct gc_http *h = client(NULL);
	struct gc_http_request reqs[7];
	struct gc_http_response res[7];
	char *echo = url("/echo"), *big = url("/big"), *s503 = url("/status/503");
	char *slow = url("/slow");
	char *refused = gc_xasprintf("http://127.0.0.1:%u/", (unsigned)closed_port());
	size_t i;

	(void)state;
	memset(reqs, 0, sizeof(reqs));
	reqs[0].url = echo;
	reqs[1].url = refused;
	reqs[2].url = big;
	reqs[2].max_response = 1000;
	reqs[3].url = s503;
	reqs[4].url = "http://[::1";
	reqs[5].url = slow;
	reqs[5].timeout_ms = 200;
	reqs[6].url = echo;
	reqs[6].method = "POST";
	reqs[6].body = "x=1";
	reqs[6].body_len = 3;
	assert_int_equal(gc_http_perform_many(h, reqs, res, 7, 3), -1);
	assert_int_equal(res[0].error.code, GC_OK);
	assert_int_equal(res[0].status, 200);
	assert_int_equal(res[1].error.code, GC_ETRANSIENT);
	assert_int_equal(res[2].error.code, GC_ETOOBIG);
	assert_int_equal(res[3].error.code, GC_OK);
	assert_int_equal(res[3].status, 503);
	assert_int_equal(res[4].error.code, GC_EINVALID);
	assert_int_equal(res[5].error.code, GC_ETIMEOUT);
	assert_int_equal(res[6].error.code, GC_OK);
	assert_string_equal(body_line(&res[6], "body"), "x=1");
	for (i = 0; i < 7; i++)
		gc_http_response_release(&res[i]);

	/* all good: 0; none at all: 0 */
	assert_int_equal(gc_http_perform_many(h, reqs, res, 1, 0), 0);
	gc_http_response_release(&res[0]);
	assert_int_equal(gc_http_perform_many(h, reqs, res, 0, 4), 0);
	free(echo);
	free(big);
	free(s503);
	free(slow);
	free(refused);
	gc_http_free(h);
}

static void test_proxy_environment(void **state)
{
	struct gc_http *h;
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	char *proxy = gc_xasprintf("http://127.0.0.1:%u", (unsigned)srv.port);
	char *dead = gc_xasprintf("http://127.0.0.1:%u", (unsigned)closed_port());
	char *u = url("/echo");

	(void)state;
	/* http_proxy is used: our server plays the proxy and sees the absolute URL; the
	 * .invalid name is never resolved here, the proxy would do that */
	setenv("http_proxy", proxy, 1);
	h = client(NULL);
	req.url = "http://proxied.invalid/echo";
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_int_equal(res.status, 200);
	assert_string_equal(body_line(&res, "url"), "http://proxied.invalid/echo");
	gc_http_response_release(&res);
	gc_http_free(h);

	/* an unreachable proxy fails the request... */
	setenv("http_proxy", dead, 1);
	h = client(NULL);
	req.url = u;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), -1);
	assert_int_equal(res.error.code, GC_ETRANSIENT);
	gc_http_response_release(&res);
	gc_http_free(h);

	/* ...unless no_proxy names the host: then the request goes direct */
	setenv("no_proxy", "127.0.0.1", 1);
	h = client(NULL);
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_int_equal(res.status, 200);
	assert_string_equal(body_line(&res, "url"), "/echo");
	gc_http_response_release(&res);
	gc_http_free(h);

	clear_proxy_env();
	free(proxy);
	free(dead);
	free(u);
}

static void capture(void *ctx, enum gc_log_level level, const char *line)
{
	struct gc_buf *b = ctx;

	(void)level;
	gc_buf_addstr(b, line);
	gc_buf_addch(b, '\n');
}

static void test_log_withholds_credentials_and_bodies(void **state)
{
	const char *headers[] = {
		"Authorization: TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5/2019-02-25/cvm/tc3_request, "
		"SignedHeaders=content-type;host, Signature=c492e8e41437e97a620b728c301bb8d17e",
		"X-Amz-Security-Token: FwoGZXIvYXdzEXAMPLEAMZTOKEN",
		"x-acs-security-token: CAISEXAMPLEACSTOKEN",
		"X-TC-Token: EXAMPLETCTOKEN",
		"X-Custom: visible-value",
	};
	static const char body[] = "#!/bin/sh\necho USERDATASECRET";
	struct gc_buf lines = GC_BUF_INIT(1 << 20);
	struct gc_log log;
	struct gc_http *h;
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	char *u = url("/echo?Action=RunInstances&Signature=QUERYSIGSECRET");

	(void)state;
	gc_log_init(&log, GC_LOG_TRACE, capture, &lines);
	h = client(&log);
	req.url = u;
	req.method = "POST";
	req.headers = headers;
	req.n_headers = 5;
	req.body = body;
	req.body_len = sizeof(body) - 1;
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	assert_int_equal(res.status, 200);
	gc_http_response_release(&res);

	/* withheld by the client itself, not just masked later by the log's redactor */
	assert_non_null(strstr(lines.data, "Authorization (value not logged)"));
	assert_non_null(strstr(lines.data, "X-Amz-Security-Token (value not logged)"));
	assert_non_null(strstr(lines.data, "x-acs-security-token (value not logged)"));
	assert_non_null(strstr(lines.data, "X-TC-Token (value not logged)"));
	assert_non_null(strstr(lines.data, "X-Custom: visible-value"));
	assert_non_null(strstr(lines.data, "http: > POST 'http://127.0.0.1:"));
	assert_non_null(strstr(lines.data, "http: < 200"));
	assert_null(strstr(lines.data, "c492e8e4"));
	assert_null(strstr(lines.data, "AMZTOKEN"));
	assert_null(strstr(lines.data, "ACSTOKEN"));
	assert_null(strstr(lines.data, "TCTOKEN"));
	assert_null(strstr(lines.data, "USERDATASECRET"));
	assert_null(strstr(lines.data, "QUERYSIGSECRET"));
	assert_null(strstr(lines.data, "RunInstances"));
	gc_http_free(h);

	/* below trace level, nothing */
	gc_buf_reset(&lines);
	log.level = GC_LOG_DEBUG;
	h = client(&log);
	assert_int_equal(gc_http_perform(h, &req, &res, NULL), 0);
	gc_http_response_release(&res);
	assert_int_equal(lines.len, 0);
	gc_http_free(h);
	gc_log_release(&log);
	gc_buf_release(&lines);
	free(u);
}

static void test_sensitive_header_names(void **state)
{
	(void)state;
	assert_true(gc_http_header_is_sensitive("Authorization"));
	assert_true(gc_http_header_is_sensitive("AUTHORIZATION"));
	assert_true(gc_http_header_is_sensitive("x-amz-security-token"));
	assert_true(gc_http_header_is_sensitive("X-Acs-Security-Token"));
	assert_true(gc_http_header_is_sensitive("x-tc-token"));
	assert_true(gc_http_header_is_sensitive("Proxy-Authorization"));
	assert_false(gc_http_header_is_sensitive("X-TC-Timestamp"));
	assert_false(gc_http_header_is_sensitive("Authorizatio"));
	assert_false(gc_http_header_is_sensitive("Authorization2"));
	assert_false(gc_http_header_is_sensitive("Content-Type"));
	assert_false(gc_http_header_is_sensitive(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_get_and_post_round_trip, test_setup),
		cmocka_unit_test_setup(test_other_methods_and_big_upload, test_setup),
		cmocka_unit_test_setup(test_status_codes, test_setup),
		cmocka_unit_test_setup(test_response_headers_any_case, test_setup),
		cmocka_unit_test_setup(test_interim_response_headers_dropped, test_setup),
		cmocka_unit_test_setup(test_too_big_declared_length, test_setup),
		cmocka_unit_test_setup(test_too_big_endless_stream, test_setup),
		cmocka_unit_test_setup(test_too_big_headers, test_setup),
		cmocka_unit_test_setup(test_timeout, test_setup),
		cmocka_unit_test_setup(test_connection_refused, test_setup),
		cmocka_unit_test_setup(test_empty_reply, test_setup),
		cmocka_unit_test_setup(test_invalid_requests, test_setup),
		cmocka_unit_test_setup(test_in_flight_limit, test_setup),
		cmocka_unit_test_setup(test_connection_reuse, test_setup),
		cmocka_unit_test_setup(test_errors_isolated, test_setup),
		cmocka_unit_test_setup(test_proxy_environment, test_setup),
		cmocka_unit_test_setup(test_log_withholds_credentials_and_bodies, test_setup),
		cmocka_unit_test_setup(test_sensitive_header_names, test_setup),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
