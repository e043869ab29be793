/*
 * server.c: libmicrohttpd plumbing between sockets and the frontends.
 *
 * A request is gathered in three steps that libmicrohttpd dictates: the URI log callback
 * sees the request line's target before anything is decoded (the only place the raw
 * query text survives, which Tencent's GET signing needs verbatim) and allocates the
 * per-request state; the access handler is then called once with no body, once per body
 * chunk, and once more at the end, where the request is answered.
 *
 * Injected latency is applied here for every cloud call (the frontends add a slow
 * fault's delay to resp->delay_ms); a dropped response is a handler returning MHD_NO,
 * which makes libmicrohttpd close the socket without writing anything.
 *
 * Threads: one polling thread per daemon, one thread per connection, one ticker. The
 * request log has its own mutex so that lines from different connections never mix.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/str.h"
#include "sim/control.h"
#include "sim/server.h"

struct daemon_ctx {
	struct sim_server *server;
	int which; /* a cloud, or SIM_SERVER_CONTROL */
	struct MHD_Daemon *daemon;
	int port;
};

struct sim_server {
	struct sim *sim;
	struct gc_log *log;
	struct daemon_ctx daemons[SIM_NCLOUDS + 1];

	FILE *request_log;
	pthread_mutex_t log_lock;

	pthread_t ticker;
	bool ticker_started;
	unsigned tick_ms;
	pthread_mutex_t tick_lock;
	pthread_cond_t tick_cond;
	bool stopping;
	/* the control API on a Unix socket for the nodes' GitHub runner (sim/github.h) */
	struct daemon_ctx unix_control;
	char *unix_path;
};

/*
 * What one request accumulates between the handler's calls. It lives as long as the
 * connection (libmicrohttpd's socket context) and is emptied after each request: the
 * URI logger runs before the access handler, and if the client goes away in between,
 * the request-completed callback never runs, so only the connection's close can be
 * trusted to free anything.
 */
struct conn_req {
	char *raw_uri;
	struct gc_buf body;
	bool started;
	bool too_big;
};

static void conn_req_reset(struct conn_req *r)
{
	free(r->raw_uri);
	r->raw_uri = NULL;
	gc_buf_reset(&r->body);
	r->started = false;
	r->too_big = false;
}

static void notify_connection(void *cls, struct MHD_Connection *con, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct daemon_ctx *d = cls;
	struct conn_req *r = *socket_context;

	(void)con;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		r = gc_xcalloc(1, sizeof(*r));
		gc_buf_init(&r->body, d->server->sim->cfg.max_body);
		*socket_context = r;
	} else if (r) {
		conn_req_reset(r);
		gc_buf_release(&r->body);
		free(r);
		*socket_context = NULL;
	}
}

static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn_req *r = info ? info->socket_context : NULL;

	(void)cls;
	if (!r)
		return NULL;
	conn_req_reset(r);
	r->raw_uri = gc_xstrdup(uri ? uri : "/");
	return r;
}

static void request_completed(void *cls, struct MHD_Connection *con, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)con;
	(void)toe;
	if (*con_cls)
		conn_req_reset(*con_cls);
	*con_cls = NULL;
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
				      const char *value)
{
	(void)kind;
	gc_params_add(cls, key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result send_plain(struct MHD_Connection *con, unsigned status, const char *text)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
					    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	ret = MHD_queue_response(con, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Hostile bodies (sim/hostile.h) go out through a reader: a huge one is its prefix and
 * then filler made on the fly, never held whole; a slow one is the real body in pieces
 * with a pause before each, so that the whole trickle lasts about trickle_ms.
 */
struct stream {
	char *data;
	size_t len;
	uint64_t total;
	unsigned pause_ms;
	size_t piece;
};

#define STREAM_PIECES 16

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	size_t n;

	if (pos >= st->total)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = (size_t)(st->total - pos < max ? st->total - pos : max);
	if (st->pause_ms) {
		sleep_ms(st->pause_ms);
		if (n > st->piece)
			n = st->piece;
	}
	for (size_t i = 0; i < n; i++)
		buf[i] = pos + i < st->len ? st->data[pos + i] : 'x';
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	free(st->data);
	free(st);
}

static struct MHD_Response *stream_response(const struct sim_resp *resp)
{
	struct stream *st = gc_xcalloc(1, sizeof(*st));
	struct MHD_Response *r;

	st->data = gc_xmalloc(resp->body.len + 1);
	memcpy(st->data, resp->body.data ? resp->body.data : "", resp->body.len);
	st->len = resp->body.len;
	st->total = resp->stream_bytes > st->len ? resp->stream_bytes : st->len;
	if (resp->trickle_ms) {
		st->pause_ms = resp->trickle_ms / STREAM_PIECES;
		st->piece = st->len / STREAM_PIECES + 1;
	}
	r = MHD_create_response_from_callback(st->total, 64 * 1024, stream_read, st, stream_free);
	if (!r)
		stream_free(st);
	return r;
}

/* "2026-03-14T15:09:27.123Z" */
static void iso8601_ms(char out[48])
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 48, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

/*
 * User-data is the user's boot script and may hold secrets (tokens, keys), so the log
 * keeps only its size; so do the OIDC tokens the STS actions take, which are bearer
 * credentials. Every cloud names these fields at the top level.
 */
static void redact_user_data(json_t *params)
{
	static const char *const fields[] = { "UserData", "WebIdentityToken", "OIDCToken" };
	char note[64];

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		json_t *v = json_object_get(params, fields[i]);

		if (!json_is_string(v) || gc_starts_with(json_string_value(v), "<redacted: "))
			continue;
		snprintf(note, sizeof(note), "<redacted: %zu characters>", json_string_length(v));
		json_object_set_new(params, fields[i], json_string(note));
	}
}

static void write_request_log(struct sim_server *s, enum sim_cloud cloud,
			      const struct sim_resp *resp)
{
	char ts[48];
	json_t *line;
	char *text;

	if (!s->request_log)
		return;
	redact_user_data(resp->log_params);
	iso8601_ms(ts);
	line = json_object();
	json_object_set_new(line, "ts", json_string(ts));
	json_object_set_new(line, "provider", json_string(sim_cloud_name(cloud)));
	json_object_set_new(line, "action", json_string(resp->action));
	json_object_set_new(line, "version", json_string(resp->version));
	json_object_set_new(line, "params",
			    resp->log_params ? json_incref(resp->log_params) : json_object());
	/* a dropped connection never had a status: 0 says so */
	json_object_set_new(line, "status", json_integer(resp->drop ? 0 : resp->status));
	json_object_set_new(line, "error_code",
			    resp->error_code[0] ? json_string(resp->error_code) : json_null());
	text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(line);
	if (!text)
		return;
	pthread_mutex_lock(&s->log_lock);
	fputs(text, s->request_log);
	fputc('\n', s->request_log);
	fflush(s->request_log);
	pthread_mutex_unlock(&s->log_lock);
	free(text);
}

/* The client's address as text, for /checkip; "" when MHD cannot tell. */
static const char *remote_addr(struct MHD_Connection *con, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	buf[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
			  (socklen_t)size);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  buf, (socklen_t)size);
	return buf;
}

static enum MHD_Result answer(struct daemon_ctx *d, struct MHD_Connection *con, const char *url,
			      const char *method, struct conn_req *r)
{
	struct sim_server *s = d->server;
	struct gc_params headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct sim_resp resp;
	struct sim_req req;
	char addr[INET6_ADDRSTRLEN];
	struct gc_error err;
	const char *qs = strchr(r->raw_uri, '?');
	struct MHD_Response *mr = NULL;
	enum MHD_Result ret;

	gc_error_init(&err);
	qs = qs ? qs + 1 : "";
	if (gc_params_parse(&query, qs, strlen(qs), GC_URLDEC_RFC3986, &err) != 0) {
		gc_params_release(&query);
		return send_plain(con, MHD_HTTP_BAD_REQUEST, "malformed query string\n");
	}
	MHD_get_connection_values(con, MHD_HEADER_KIND, collect_header, &headers);

	memset(&req, 0, sizeof(req));
	/* the control API looks at no cloud; its requests carry the table's first */
	req.cloud = d->which == SIM_SERVER_CONTROL ? (enum sim_cloud)0 : (enum sim_cloud)d->which;
	req.method = method;
	req.path = url && *url ? url : "/";
	req.query_string = qs;
	req.query = &query;
	req.headers = &headers;
	req.body = r->body.data;
	req.body_len = r->body.len;
	req.now = time(NULL);
	req.remote_addr = remote_addr(con, addr, sizeof(addr));

	sim_resp_init(&resp);
	if (d->which == SIM_SERVER_CONTROL)
		sim_control_handle(s->sim, &req, &resp);
	else
		sim_frontend(req.cloud)->handle(s->sim, &req, &resp);

	if (d->which != SIM_SERVER_CONTROL) {
		resp.delay_ms += sim_faults_latency(s->sim->faults);
		write_request_log(s, req.cloud, &resp);
		if (s->log)
			gc_log_info(s->log, "%s %s -> %d%s%s%s", sim_cloud_name(req.cloud),
				    resp.action[0] ? resp.action : "-", resp.drop ? 0 : resp.status,
				    resp.error_code[0] ? " " : "", resp.error_code,
				    resp.drop ? " (dropped)" : "");
	}
	if (resp.delay_ms)
		sleep_ms(resp.delay_ms);
	if (resp.drop) {
		ret = MHD_NO;
		goto out;
	}

	if (resp.stream_bytes || resp.trickle_ms)
		mr = stream_response(&resp);
	else
		mr = MHD_create_response_from_buffer(resp.body.len, resp.body.data,
						     MHD_RESPMEM_MUST_COPY);
	if (!mr) {
		ret = MHD_NO;
		goto out;
	}
	MHD_add_response_header(mr, "Content-Type",
				resp.content_type ? resp.content_type : "text/plain");
	for (size_t i = 0; i < resp.headers.n; i++)
		MHD_add_response_header(mr, resp.headers.items[i].name,
					resp.headers.items[i].value);
	ret = MHD_queue_response(con, (unsigned)resp.status, mr);
	MHD_destroy_response(mr);
out:
	sim_resp_release(&resp);
	gc_params_release(&headers);
	gc_params_release(&query);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct daemon_ctx *d = cls;
	struct conn_req *r = *con_cls;

	(void)version;
	if (!r)
		return MHD_NO; /* the URI logger runs first; without it there is no state */
	if (!r->raw_uri)
		r->raw_uri = gc_xstrdup(url ? url : "/");
	if (!r->started) {
		const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		uint64_t n;

		r->started = true;
		if (cl && gc_parse_u64(cl, UINT64_MAX, &n) == 0 && n > r->body.max)
			return send_plain(con, 413, "request body too large\n");
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (!r->too_big && gc_buf_add(&r->body, upload_data, *upload_data_size) != 0)
			r->too_big = true;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->too_big)
		return send_plain(con, 413, "request body too large\n");
	return answer(d, con, url, method, r);
}

static void *ticker_main(void *arg)
{
	struct sim_server *s = arg;

	pthread_mutex_lock(&s->tick_lock);
	while (!s->stopping) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)(s->tick_ms % 1000) * 1000000L;
		until.tv_sec += (time_t)(s->tick_ms / 1000) + until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&s->tick_cond, &s->tick_lock, &until);
		if (s->stopping)
			break;
		pthread_mutex_unlock(&s->tick_lock);
		sim_world_lock(s->sim->world);
		sim_world_tick(s->sim->world);
		sim_world_unlock(s->sim->world);
		pthread_mutex_lock(&s->tick_lock);
	}
	pthread_mutex_unlock(&s->tick_lock);
	return NULL;
}

static int start_daemon(struct daemon_ctx *d, const struct in_addr *addr, int port,
			struct gc_error *err)
{
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	const char *what = d->which == SIM_SERVER_CONTROL ? "control" : sim_cloud_name(d->which);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr = *addr;
	d->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
		handler, d, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, d, MHD_OPTION_URI_LOG_CALLBACK,
		uri_logger, d, MHD_OPTION_NOTIFY_COMPLETED, request_completed, d,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120, MHD_OPTION_END);
	if (!d->daemon)
		return gc_error_set(err, GC_EIO, "cannot listen for %s on port %d: %s", what, port,
				    strerror(errno ? errno : EADDRINUSE));
	info = MHD_get_daemon_info(d->daemon, MHD_DAEMON_INFO_BIND_PORT);
	d->port = info && info->port ? (int)info->port : port;
	return 0;
}

/* The control API also on the Unix socket path, which the nodes reach (node.c binds it). */
static int start_unix_control(struct sim_server *s, const char *path, struct gc_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return gc_error_set(err, GC_EINVALID, "socket path '%s' is too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0777) < 0 ||
	    listen(fd, 64) < 0) {
		gc_error_set(err, GC_EIO, "cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s->unix_path = gc_xstrdup(path);
	s->unix_control.server = s;
	s->unix_control.which = SIM_SERVER_CONTROL;
	s->unix_control.daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
		handler, &s->unix_control, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, &s->unix_control,
		MHD_OPTION_URI_LOG_CALLBACK, uri_logger, &s->unix_control,
		MHD_OPTION_NOTIFY_COMPLETED, request_completed, &s->unix_control,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120, MHD_OPTION_END);
	if (!s->unix_control.daemon) {
		close(fd);
		return gc_error_set(err, GC_EIO, "cannot serve the control API on %s", path);
	}
	return 0;
}

struct sim_server *sim_server_start(struct sim *sim, const struct sim_server_config *cfg,
				    struct gc_error *err)
{
	struct sim_server *s = gc_xcalloc(1, sizeof(*s));
	struct in_addr addr;
	const char *listen = cfg->listen ? cfg->listen : "127.0.0.1";

	s->sim = sim;
	s->log = cfg->log;
	s->tick_ms = cfg->tick_ms ? cfg->tick_ms : 100;
	pthread_mutex_init(&s->log_lock, NULL);
	pthread_mutex_init(&s->tick_lock, NULL);
	pthread_cond_init(&s->tick_cond, NULL);

	if (inet_pton(AF_INET, listen, &addr) != 1 || (ntohl(addr.s_addr) >> 24) != 127) {
		gc_error_set(err, GC_EINVALID, "listen address '%s' is not inside 127.0.0.0/8",
			     listen);
		goto fail;
	}
	if (cfg->request_log) {
		s->request_log = fopen(cfg->request_log, "a");
		if (!s->request_log) {
			gc_error_set(err, GC_EIO, "cannot open request log '%s': %s",
				     cfg->request_log, strerror(errno));
			goto fail;
		}
	}
	for (int i = 0; i <= SIM_NCLOUDS; i++) {
		s->daemons[i].server = s;
		s->daemons[i].which = i;
		if (start_daemon(&s->daemons[i], &addr, cfg->ports[i], err) != 0)
			goto fail;
	}
	if (cfg->control_unix && start_unix_control(s, cfg->control_unix, err) != 0)
		goto fail;
	if (pthread_create(&s->ticker, NULL, ticker_main, s) != 0) {
		gc_error_set(err, GC_EGENERIC, "cannot start the ticker thread");
		goto fail;
	}
	s->ticker_started = true;
	return s;
fail:
	sim_server_stop(s);
	return NULL;
}

int sim_server_port(const struct sim_server *s, int which)
{
	if (which < 0 || which > SIM_NCLOUDS)
		return 0;
	return s->daemons[which].port;
}

void sim_server_stop(struct sim_server *s)
{
	if (!s)
		return;
	for (int i = 0; i <= SIM_NCLOUDS; i++)
		if (s->daemons[i].daemon)
			MHD_stop_daemon(s->daemons[i].daemon);
	if (s->unix_control.daemon)
		MHD_stop_daemon(s->unix_control.daemon);
	if (s->unix_path)
		unlink(s->unix_path);
	free(s->unix_path);
	if (s->ticker_started) {
		pthread_mutex_lock(&s->tick_lock);
		s->stopping = true;
		pthread_cond_signal(&s->tick_cond);
		pthread_mutex_unlock(&s->tick_lock);
		pthread_join(s->ticker, NULL);
	}
	if (s->request_log)
		fclose(s->request_log);
	pthread_cond_destroy(&s->tick_cond);
	pthread_mutex_destroy(&s->tick_lock);
	pthread_mutex_destroy(&s->log_lock);
	free(s);
}
