/*
 * ssh.c: one non-blocking SSH connection over libssh2 (see ssh.h for the contract, and
 * docs/internals/ssh-runner.md, "One connection", for the state machine gc_ssh_advance
 * drives). Socket-level libssh2 errors mean the connection is gone: we tear the session
 * down (shutdown first, so freeing it cannot wait on a dead peer) and report
 * GC_ETRANSIENT.
 */
#define _GNU_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC */

#include <errno.h>
#include <fcntl.h>
#include <libssh2.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/ssh.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/shape.h"

#define PEM_MAX	   ((size_t)16 << 10)
#define READ_CHUNK 16384
/* nothing pinned yet (trust on first use): ed25519 first, the rest in OpenSSH's order */
#define DEFAULT_HOST_METHODS                                                       \
	"ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521," \
	"rsa-sha2-512,rsa-sha2-256,ssh-rsa"

enum ssh_state {
	ST_IDLE,	/* no connection */
	ST_TCP,		/* connect() in progress */
	ST_HANDSHAKE,	/* SSH key exchange */
	ST_AUTH,	/* public key authentication */
	ST_READY,	/* connected, no command */
	ST_OPEN,	/* opening a session channel */
	ST_EXEC,	/* sending the exec request */
	ST_IO,		/* input out, output and errors in */
	ST_CLOSE,	/* the remote side sent EOF: closing the channel */
	ST_WAIT_CLOSED, /* waiting for the server's close (the exit status comes before it) */
	ST_FREE,	/* freeing the channel */
};

struct gc_ssh {
	char *host, *user, *instance_id;
	unsigned port;
	const struct gc_keypair *key;
	struct gc_known_hosts *kh;
	bool tofu;
	uint64_t connect_timeout_ns;
	unsigned ka_s, ka_max;
	struct gc_log *log;
	char endpoint[300];
	char fpr[GC_SSH_FINGERPRINT_SIZE];

	enum ssh_state st;
	int fd;
	LIBSSH2_SESSION *sess;
	LIBSSH2_CHANNEL *ch;
	uint64_t deadline_ns; /* the connect or the command deadline; 0: none */
	uint64_t last_rx_ns;  /* last time anything arrived */
	uint64_t next_ka_ns;  /* when to call libssh2_keepalive_send next */
	struct gc_buf pem;    /* the private key, only while authenticating (secret) */

	/* the command in progress */
	struct gc_buf cmdline;
	const unsigned char *in;
	size_t in_len, in_off;
	bool eof_sent;
	size_t max_out;
	char *what;
	uint64_t timeout_ms;
	uint64_t cmd_start_ns;
	struct gc_ssh_result *res;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

static void init_libssh2(void)
{
	init_rc = libssh2_init(0);
}

static uint64_t now_ns(void)
{
	return gc_clock_now_ns(NULL);
}

/* ---- shell quoting ---------------------------------------------------------------------- */

int gc_sh_quote(struct gc_buf *b, const char *s)
{
	if (gc_buf_addch(b, '\'') < 0)
		return -1;
	for (; *s; s++) {
		if (*s == '\'') {
			if (gc_buf_addstr(b, "'\\''") < 0)
				return -1;
		} else if (gc_buf_addch(b, *s) < 0) {
			return -1;
		}
	}
	return gc_buf_addch(b, '\'');
}

bool gc_sh_name_ok(const char *name)
{
	return gc_word_of(name, "_") && !(*name >= '0' && *name <= '9');
}

int gc_sh_env_prefix(struct gc_buf *b, const struct gc_ssh_env *env, size_t n, struct gc_error *err)
{
	size_t start = b->len;

	if (!n)
		return 0;
	if (gc_buf_addstr(b, "export") < 0)
		goto big;
	for (size_t i = 0; i < n; i++) {
		if (!gc_sh_name_ok(env[i].name)) {
			gc_buf_truncate(b, start);
			return gc_error_set(err, GC_EINVALID,
					    "bad environment variable name '%s' (want "
					    "[A-Za-z_][A-Za-z0-9_]*)",
					    env[i].name ? env[i].name : "(null)");
		}
		if (gc_buf_addf(b, " %s=", env[i].name) < 0 ||
		    gc_sh_quote(b, env[i].value ? env[i].value : "") < 0)
			goto big;
	}
	if (gc_buf_addstr(b, "; ") < 0)
		goto big;
	return 0;
big:
	gc_buf_truncate(b, start);
	return gc_error_set(err, GC_ETOOBIG, "the command's environment is too large");
}

/* ---- results ------------------------------------------------------------------------------ */

void gc_ssh_result_init(struct gc_ssh_result *r)
{
	memset(r, 0, sizeof(*r));
	r->exit_status = -1;
	gc_buf_init(&r->out, GC_SSH_OUTPUT_MAX);
	gc_buf_init(&r->err, GC_SSH_OUTPUT_MAX);
}

void gc_ssh_result_release(struct gc_ssh_result *r)
{
	if (!r)
		return;
	gc_buf_release(&r->out);
	gc_buf_release(&r->err);
}

/* ---- life cycle ---------------------------------------------------------------------------- */

struct gc_ssh *gc_ssh_new(const struct gc_ssh_opts *opts, struct gc_error *err)
{
	struct gc_ssh *s;

	pthread_once(&init_once, init_libssh2);
	if (init_rc != 0) {
		gc_error_set(err, GC_EGENERIC, "cannot initialise libssh2 (%d)", init_rc);
		return NULL;
	}
	if (!opts->host || !*opts->host || !opts->user || !*opts->user || !opts->key ||
	    !opts->known_hosts || opts->port > 65535) {
		gc_error_set(err, GC_EINVALID,
			     "ssh: host, user, key and known_hosts are required, port <= 65535");
		return NULL;
	}
	s = gc_xcalloc(1, sizeof(*s));
	s->host = gc_xstrdup(opts->host);
	s->user = gc_xstrdup(opts->user);
	s->instance_id = opts->instance_id ? gc_xstrdup(opts->instance_id) : NULL;
	s->port = opts->port ? opts->port : 22;
	s->key = opts->key;
	s->kh = opts->known_hosts;
	s->tofu = opts->trust_on_first_use;
	s->connect_timeout_ns =
		(opts->connect_timeout_ms ? opts->connect_timeout_ms : GC_SSH_CONNECT_TIMEOUT_MS) *
		GC_NS_PER_MS;
	s->ka_s = opts->keepalive_s ? opts->keepalive_s : GC_SSH_KEEPALIVE_S;
	s->ka_max = opts->keepalive_max ? opts->keepalive_max : GC_SSH_KEEPALIVE_MAX;
	s->log = opts->log;
	gc_ssh_endpoint(s->endpoint, sizeof(s->endpoint), s->host, s->port);
	s->fd = -1;
	s->st = ST_IDLE;
	gc_buf_init(&s->pem, PEM_MAX);
	gc_buf_init(&s->cmdline, (size_t)1 << 20);
	return s;
}

static void wipe_pem(struct gc_ssh *s)
{
	gc_keypair_wipe_buf(&s->pem);
	gc_buf_init(&s->pem, PEM_MAX);
}

/* Drops the connection at once: no goodbye, no waiting on the peer. */
static void teardown(struct gc_ssh *s)
{
	if (s->fd >= 0)
		shutdown(s->fd, SHUT_RDWR);
	if (s->sess) {
		/* the socket is shut, so freeing the channel and session fails fast, never waits */
		if (s->ch)
			libssh2_channel_free(s->ch);
		s->ch = NULL;
		libssh2_session_free(s->sess);
		s->sess = NULL;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->ch = NULL;
	wipe_pem(s);
	s->st = ST_IDLE;
	s->deadline_ns = 0;
}

void gc_ssh_disconnect(struct gc_ssh *s)
{
	if (!s)
		return;
	if (s->st == ST_READY && s->sess)
		/* one try at a polite goodbye; a full socket buffer just means none */
		libssh2_session_disconnect(s->sess, "gpucluster: done");
	teardown(s);
}

void gc_ssh_free(struct gc_ssh *s)
{
	if (!s)
		return;
	gc_ssh_disconnect(s);
	gc_keypair_wipe_buf(&s->pem);
	gc_buf_release(&s->cmdline);
	free(s->host);
	free(s->user);
	free(s->instance_id);
	free(s->what);
	free(s);
}

int gc_ssh_fd(const struct gc_ssh *s)
{
	return s->fd;
}

bool gc_ssh_connected(const struct gc_ssh *s)
{
	return s->st >= ST_READY;
}

bool gc_ssh_busy(const struct gc_ssh *s)
{
	return s->st != ST_IDLE && s->st != ST_READY;
}

const char *gc_ssh_host_fingerprint(const struct gc_ssh *s)
{
	return s->fpr;
}

short gc_ssh_events(const struct gc_ssh *s)
{
	short ev = 0;
	int dirs;

	switch (s->st) {
	case ST_IDLE:
	case ST_READY: return 0;
	case ST_TCP: return POLLOUT;
	default: break;
	}
	if (!s->sess)
		return POLLIN | POLLOUT;
	dirs = libssh2_session_block_directions(s->sess);
	if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND)
		ev |= POLLIN;
	if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		ev |= POLLOUT;
	/* a running command may print at any time */
	if (!ev || s->st >= ST_OPEN)
		ev |= POLLIN;
	return ev;
}

static bool in_command(const struct gc_ssh *s)
{
	return s->st >= ST_OPEN;
}

uint64_t gc_ssh_deadline_ns(const struct gc_ssh *s)
{
	uint64_t d = s->deadline_ns;

	if (in_command(s)) {
		uint64_t dead = s->last_rx_ns + (uint64_t)s->ka_s * s->ka_max * GC_NS_PER_S;

		if (s->next_ka_ns && (!d || s->next_ka_ns < d))
			d = s->next_ka_ns;
		if (!d || dead < d)
			d = dead;
	}
	return d;
}

/* ---- errors ------------------------------------------------------------------------------- */

static const char *last_error(struct gc_ssh *s)
{
	char *msg = NULL;

	if (!s->sess)
		return "no session";
	libssh2_session_last_error(s->sess, &msg, NULL, 0);
	return msg && *msg ? msg : "unknown libssh2 error";
}

static bool socket_error(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_NONE:
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_BANNER_SEND:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_SOCKET_RECV: return true;
	default: return false;
	}
}

/* The connection died while a command ran: GC_ETRANSIENT, connection closed. */
static int lost(struct gc_ssh *s, const char *why, struct gc_error *err)
{
	if (s->res)
		s->res->elapsed_ms = (now_ns() - s->cmd_start_ns) / GC_NS_PER_MS;
	gc_error_set(err, GC_ETRANSIENT, "connection lost during '%s' on %s (%s)",
		     s->what ? s->what : "command", s->endpoint, why);
	teardown(s);
	s->res = NULL;
	return -1;
}

/* A libssh2 failure (rc < 0, not EAGAIN) during a command. */
static int cmd_fail(struct gc_ssh *s, int rc, const char *doing, struct gc_error *err)
{
	if (socket_error(rc))
		return lost(s, last_error(s), err);
	gc_error_set(err, GC_EGENERIC, "cannot %s '%s' on %s: %s", doing,
		     s->what ? s->what : "command", s->endpoint, last_error(s));
	/* the channel's state is unknown: start afresh */
	teardown(s);
	s->res = NULL;
	return -1;
}

/* The end of a nonblocking channel call: 1 to call it again, a failure, or on to next. */
static int cmd_next(struct gc_ssh *s, int rc, enum ssh_state next, const char *doing,
		    struct gc_error *err)
{
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return 1;
	if (rc < 0)
		return cmd_fail(s, rc, doing, err);
	s->st = next;
	return 0;
}

/* A failure while connecting: the connection is closed. */
static int connect_fail(struct gc_ssh *s, struct gc_error *err, enum gc_errcode code,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int connect_fail(struct gc_ssh *s, struct gc_error *err, enum gc_errcode code,
			const char *fmt, ...)
{
	char msg[GC_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gc_error_set(err, code, "cannot connect to %s: %s", s->endpoint, msg);
	teardown(s);
	return -1;
}

/* ---- connecting --------------------------------------------------------------------------- */

int gc_ssh_connect_start(struct gc_ssh *s, struct gc_error *err)
{
	struct addrinfo hints = { 0 }, *ai = NULL;
	char port[16];
	int rc, one = 1;

	if (s->st != ST_IDLE)
		return gc_error_set(err, GC_EINVALID, "ssh: %s is already connected", s->endpoint);
	s->fpr[0] = '\0';
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%u", s->port);
	rc = getaddrinfo(s->host, port, &hints, &ai);
	if (rc != 0)
		return gc_error_set(err, GC_EINVALID, "ssh: '%s' is not a numeric address: %s",
				    s->host, gai_strerror(rc));
	s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		freeaddrinfo(ai);
		return connect_fail(s, err, GC_EIO, "socket: %s", strerror(errno));
	}
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	s->deadline_ns = now_ns() + s->connect_timeout_ns;
	s->st = ST_TCP;
	rc = connect(s->fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (rc < 0 && errno != EINPROGRESS) {
		int e = errno;

		return connect_fail(s, err, GC_ETRANSIENT, "%s",
				    e == ECONNREFUSED ? "connection refused" : strerror(e));
	}
	return 0;
}

static int tcp_step(struct gc_ssh *s, struct gc_error *err)
{
	struct pollfd p = { .fd = s->fd, .events = POLLOUT };
	int e = 0;
	socklen_t len = sizeof(e);

	if (poll(&p, 1, 0) <= 0)
		return 1;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		e = errno;
	if (e)
		return connect_fail(s, err, GC_ETRANSIENT, "%s",
				    e == ECONNREFUSED ? "connection refused" : strerror(e));
	return 0;
}

/* The methods of want (comma-separated) that this libssh2 supports, in want's order: Debian
 * 12's libssh2 1.10 has no rsa-sha2-* host keys, and its method_pref mishandles (overlapping
 * memcpy) a list with methods it does not know, so it only ever gets known ones. */
static void supported_methods(LIBSSH2_SESSION *sess, const char *want, struct gc_buf *out)
{
	const char **algs = NULL;
	int n = libssh2_session_supported_algs(sess, LIBSSH2_METHOD_HOSTKEY, &algs);

	for (const char *p = want; *p;) {
		size_t len = strcspn(p, ",");

		for (int i = 0; i < n; i++) {
			if (strlen(algs[i]) == len && memcmp(algs[i], p, len) == 0) {
				gc_buf_addf(out, "%s%.*s", out->len ? "," : "", (int)len, p);
				break;
			}
		}
		p += len;
		if (*p)
			p++;
	}
	if (n > 0)
		libssh2_free(sess, (void *)algs);
}

static int start_session(struct gc_ssh *s, struct gc_error *err)
{
	struct gc_buf pinned = GC_BUF_INIT(1024), methods = GC_BUF_INIT(1024);
	int rc = 0;

	s->sess = libssh2_session_init();
	if (!s->sess)
		return connect_fail(s, err, GC_EGENERIC, "libssh2_session_init failed");
	libssh2_session_set_blocking(s->sess, 0);
	/* ask only for the key types pinned for this host, so the check below is never
	 * steered to a type we have no pin for */
	gc_known_hosts_methods(s->kh, s->host, s->port, &pinned);
	supported_methods(s->sess, pinned.len ? pinned.data : DEFAULT_HOST_METHODS, &methods);
	if (!methods.len ||
	    libssh2_session_method_pref(s->sess, LIBSSH2_METHOD_HOSTKEY, methods.data) < 0)
		rc = connect_fail(s, err, GC_EAUTH,
				  "this libssh2 supports none of the host key types pinned for it "
				  "('%s')",
				  pinned.data);
	gc_buf_release(&pinned);
	gc_buf_release(&methods);
	if (rc < 0)
		return -1;
	libssh2_keepalive_config(s->sess, 1, s->ka_s);
	return 0;
}

static int check_host_key(struct gc_ssh *s, struct gc_error *err)
{
	char expected[GC_SSH_FINGERPRINT_SIZE];
	const char *blob;
	size_t len = 0;
	int type = 0;

	blob = libssh2_session_hostkey(s->sess, &len, &type);
	if (!blob || len < 4)
		return connect_fail(s, err, GC_EAUTH, "the server presented no host key");
	gc_ssh_blob_fingerprint(s->fpr, blob, len);
	switch (gc_known_hosts_check(s->kh, s->host, s->port, blob, len, expected)) {
	case GC_HOST_KEY_MATCH: return 0;
	case GC_HOST_KEY_CHANGED:
		return connect_fail(s, err, GC_EAUTH,
				    "host key for %s changed (expected %s, got %s)", s->endpoint,
				    expected, s->fpr);
	case GC_HOST_KEY_UNKNOWN: break;
	}
	if (!s->tofu)
		return connect_fail(s, err, GC_EAUTH,
				    "host key %s of %s is not pinned and trust on first use is off",
				    s->fpr, s->endpoint);
	{
		const unsigned char *b = (const unsigned char *)blob;
		uint32_t tlen =
			(uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
		struct gc_host_keys keys = { 0 };
		struct gc_host_key k;
		struct gc_buf b64 = GC_BUF_INIT(64 << 10);
		struct gc_error perr;
		int rc;

		if (tlen > len - 4)
			return connect_fail(s, err, GC_EAUTH, "the server's host key is malformed");
		gc_error_init(&perr);
		gc_base64_encode(&b64, blob, len);
		k.type = gc_xstrndup(blob + 4, tlen);
		k.base64 = b64.data;
		keys.v = &k;
		keys.n = 1;
		rc = gc_known_hosts_pin(s->kh, s->host, s->port, s->instance_id, &keys, NULL,
					&perr);
		free(k.type);
		gc_buf_release(&b64);
		if (rc < 0)
			return connect_fail(s, err, perr.code, "%s", perr.message);
		gc_log_info(s->log, "ssh: %s: pinned host key %s on first use", s->endpoint,
			    s->fpr);
	}
	return 0;
}

static int handshake_step(struct gc_ssh *s, struct gc_error *err)
{
	int rc;

	if (!s->sess && start_session(s, err) < 0)
		return -1;
	rc = libssh2_session_handshake(s->sess, s->fd);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return 1;
	if (rc == LIBSSH2_ERROR_KEX_FAILURE) {
		struct gc_buf m = GC_BUF_INIT(1024);

		gc_known_hosts_methods(s->kh, s->host, s->port, &m);
		rc = connect_fail(s, err, m.len ? GC_EAUTH : GC_ETRANSIENT,
				  "SSH key exchange failed%s%s%s: %s",
				  m.len ? " (the pinned host key types are '" : "",
				  m.len ? m.data : "", m.len ? "')" : "", last_error(s));
		gc_buf_release(&m);
		return rc;
	}
	if (rc < 0)
		return connect_fail(s, err, GC_ETRANSIENT, "SSH handshake failed: %s",
				    last_error(s));
	if (check_host_key(s, err) < 0)
		return -1;
	s->st = ST_AUTH;
	return 0;
}

static int auth_step(struct gc_ssh *s, struct gc_error *err)
{
	int rc;

	if (!s->pem.len) {
		struct gc_error kerr;

		gc_error_init(&kerr);
		if (gc_keypair_private_pem(&s->pem, s->key, &kerr) < 0)
			return connect_fail(s, err, kerr.code, "%s", kerr.message);
	}
	rc = libssh2_userauth_publickey_frommemory(s->sess, s->user, strlen(s->user), NULL, 0,
						   s->pem.data, s->pem.len, NULL);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return 1;
	wipe_pem(s);
	if (rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED || rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED)
		return connect_fail(s, err, GC_EAUTH, "public key authentication as '%s' refused",
				    s->user);
	if (rc == LIBSSH2_ERROR_FILE)
		return connect_fail(s, err, GC_EINVALID, "libssh2 cannot use the cluster key: %s",
				    last_error(s));
	if (rc < 0)
		return connect_fail(s, err, socket_error(rc) ? GC_ETRANSIENT : GC_EAUTH,
				    "authentication failed: %s", last_error(s));
	s->st = ST_READY;
	s->deadline_ns = 0;
	gc_log_debug(s->log, "ssh: connected to %s as '%s' (host key %s)", s->endpoint, s->user,
		     s->fpr);
	return 0;
}

/* ---- commands ------------------------------------------------------------------------------ */

int gc_ssh_exec_start(struct gc_ssh *s, const struct gc_ssh_cmd *cmd, struct gc_ssh_result *res,
		      struct gc_error *err)
{
	if (s->st != ST_READY)
		return gc_error_set(err, s->st == ST_IDLE ? GC_ETRANSIENT : GC_EINVALID,
				    "ssh: %s is %s", s->endpoint,
				    s->st == ST_IDLE ? "not connected" : "busy");
	if (!cmd->command)
		return gc_error_set(err, GC_EINVALID, "ssh: no command");
	gc_buf_reset(&s->cmdline);
	if (gc_sh_env_prefix(&s->cmdline, cmd->env, cmd->n_env, err) < 0)
		return -1;
	if (gc_buf_addstr(&s->cmdline, cmd->command) < 0)
		return gc_error_set(err, GC_ETOOBIG, "ssh: the command line is longer than 1 MiB");
	free(s->what);
	s->what = gc_xstrdup(cmd->what ? cmd->what : "command");
	s->in = cmd->stdin_data;
	s->in_len = cmd->stdin_data ? cmd->stdin_len : 0;
	s->in_off = 0;
	s->eof_sent = false;
	s->max_out = cmd->max_output ? cmd->max_output : GC_SSH_OUTPUT_MAX;
	s->timeout_ms = cmd->timeout_ms;
	s->res = res;
	res->exit_status = -1;
	res->exit_signal[0] = '\0';
	res->out_truncated = res->err_truncated = false;
	res->out.max = res->err.max = s->max_out;
	gc_buf_reset(&res->out);
	gc_buf_reset(&res->err);
	res->elapsed_ms = 0;
	s->cmd_start_ns = now_ns();
	s->last_rx_ns = s->cmd_start_ns;
	s->next_ka_ns = s->cmd_start_ns + (uint64_t)s->ka_s * GC_NS_PER_S;
	s->deadline_ns = cmd->timeout_ms ? s->cmd_start_ns + cmd->timeout_ms * GC_NS_PER_MS : 0;
	s->st = ST_OPEN;
	return 0;
}

static void keep(struct gc_buf *b, bool *truncated, const char *data, size_t n)
{
	if (*truncated)
		return;
	if (gc_buf_add(b, data, n) < 0) {
		/* keep what fits, drop the rest: the head says what went wrong first */
		gc_buf_add(b, data, b->max - b->len);
		*truncated = true;
	}
}

/* Reads what is there on both streams; -1 on failure (reported), else whether anything came. */
static int drain(struct gc_ssh *s, bool *progress, struct gc_error *err)
{
	char chunk[READ_CHUNK];
	bool more = true;

	while (more) {
		more = false;
		for (int stream = 0; stream < 2; stream++) {
			ssize_t n = libssh2_channel_read_ex(
				s->ch, stream ? SSH_EXTENDED_DATA_STDERR : 0, chunk, sizeof(chunk));

			if (n > 0) {
				if (stream)
					keep(&s->res->err, &s->res->err_truncated, chunk,
					     (size_t)n);
				else
					keep(&s->res->out, &s->res->out_truncated, chunk,
					     (size_t)n);
				s->last_rx_ns = now_ns();
				*progress = more = true;
			} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
				return cmd_fail(s, (int)n, "read the output of", err);
			}
		}
	}
	return 0;
}

static int io_step(struct gc_ssh *s, struct gc_error *err)
{
	bool progress = true;

	while (progress) {
		progress = false;
		if (drain(s, &progress, err) < 0)
			return -1;
		while (s->in_off < s->in_len) {
			ssize_t w = libssh2_channel_write_ex(
				s->ch, 0, (const char *)s->in + s->in_off, s->in_len - s->in_off);

			if (w == LIBSSH2_ERROR_EAGAIN)
				break;
			if (w < 0) {
				if (socket_error((int)w))
					return lost(s, last_error(s), err);
				/* the command stopped reading (exited, closed stdin): drop the rest */
				s->in_off = s->in_len;
				s->eof_sent = true;
				break;
			}
			s->in_off += (size_t)w;
			progress = true;
		}
		if (s->in_off == s->in_len && !s->eof_sent) {
			int rc = libssh2_channel_send_eof(s->ch);

			if (rc == 0) {
				s->eof_sent = true;
			} else if (rc != LIBSSH2_ERROR_EAGAIN) {
				if (socket_error(rc))
					return lost(s, last_error(s), err);
				s->eof_sent = true;
			}
		}
		if (libssh2_channel_eof(s->ch)) {
			/* the server sent EOF: take what is left, then close */
			if (drain(s, &progress, err) < 0)
				return -1;
			s->st = ST_CLOSE;
			return 0;
		}
	}
	return 1;
}

static void collect_exit(struct gc_ssh *s)
{
	char *sig = NULL;
	size_t siglen = 0;

	s->res->exit_status = libssh2_channel_get_exit_status(s->ch);
	if (libssh2_channel_get_exit_signal(s->ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
	    sig) {
		snprintf(s->res->exit_signal, sizeof(s->res->exit_signal), "%.*s",
			 (int)(siglen < 31 ? siglen : 31), sig);
		s->res->exit_status = -1;
		libssh2_free(s->sess, sig);
	}
}

static int command_step(struct gc_ssh *s, struct gc_error *err)
{
	int rc;

	switch (s->st) {
	case ST_OPEN:
		s->ch = libssh2_channel_open_session(s->sess);
		/* NULL sets the session's error: EAGAIN, or why it failed */
		return cmd_next(s, s->ch ? 0 : libssh2_session_last_errno(s->sess), ST_EXEC,
				"open a channel for", err);
	case ST_EXEC:
		return cmd_next(s, libssh2_channel_exec(s->ch, s->cmdline.data), ST_IO, "start",
				err);
	case ST_IO: return io_step(s, err);
	case ST_CLOSE:
		return cmd_next(s, libssh2_channel_close(s->ch), ST_WAIT_CLOSED,
				"close the channel of", err);
	case ST_WAIT_CLOSED:
		rc = cmd_next(s, libssh2_channel_wait_closed(s->ch), ST_FREE,
			      "close the channel of", err);
		if (rc == 0)
			collect_exit(s);
		return rc;
	case ST_FREE:
		rc = libssh2_channel_free(s->ch);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 1;
		s->ch = NULL;
		s->res->elapsed_ms = (now_ns() - s->cmd_start_ns) / GC_NS_PER_MS;
		s->res = NULL;
		s->st = ST_READY;
		s->deadline_ns = 0;
		return 2; /* done */
	default: return gc_error_set(err, GC_EGENERIC, "ssh: bad state %d", (int)s->st);
	}
}

static int keepalive(struct gc_ssh *s, uint64_t now, struct gc_error *err)
{
	int next = 0;

	if (now - s->last_rx_ns >= (uint64_t)s->ka_s * s->ka_max * GC_NS_PER_S)
		return lost(s, "no answer to keepalives", err);
	if (now >= s->next_ka_ns) {
		int rc = libssh2_keepalive_send(s->sess, &next);

		if (rc < 0 && rc != LIBSSH2_ERROR_EAGAIN && socket_error(rc))
			return lost(s, last_error(s), err);
		s->next_ka_ns = now + (uint64_t)(next > 0 ? (unsigned)next : s->ka_s) * GC_NS_PER_S;
	}
	return 0;
}

int gc_ssh_advance(struct gc_ssh *s, short revents, struct gc_error *err)
{
	uint64_t now = now_ns();

	if (s->st == ST_IDLE || s->st == ST_READY)
		return 0;
	if (revents & (POLLIN | POLLHUP | POLLERR))
		s->last_rx_ns = now;
	if (s->deadline_ns && now >= s->deadline_ns) {
		if (!in_command(s))
			return connect_fail(
				s, err, GC_ETIMEOUT, "timed out after %llu ms",
				(unsigned long long)(s->connect_timeout_ns / GC_NS_PER_MS));
		if (s->res)
			s->res->elapsed_ms = (now - s->cmd_start_ns) / GC_NS_PER_MS;
		gc_error_set(err, GC_ETIMEOUT, "'%s' timed out after %llu s on %s", s->what,
			     (unsigned long long)((s->timeout_ms + 999) / 1000), s->endpoint);
		teardown(s);
		s->res = NULL;
		return -1;
	}
	if (in_command(s) && keepalive(s, now, err) < 0)
		return -1;
	for (;;) {
		int rc;

		switch (s->st) {
		case ST_TCP:
			rc = tcp_step(s, err);
			if (rc == 0)
				s->st = ST_HANDSHAKE;
			break;
		case ST_HANDSHAKE: rc = handshake_step(s, err); break;
		case ST_AUTH:
			rc = auth_step(s, err);
			if (rc == 0)
				return 0;
			break;
		case ST_IDLE:
		case ST_READY: return 0;
		default:
			rc = command_step(s, err);
			if (rc == 2)
				return 0;
			break;
		}
		if (rc != 0)
			return rc;
	}
}

/* ---- blocking forms ------------------------------------------------------------------------ */

static int run_blocking(struct gc_ssh *s, struct gc_error *err)
{
	short rev = 0;

	for (;;) {
		struct pollfd p;
		uint64_t d, now;
		int rc = gc_ssh_advance(s, rev, err), timeout = -1;

		if (rc != 1)
			return rc;
		d = gc_ssh_deadline_ns(s);
		now = now_ns();
		if (d)
			timeout = d > now ? (int)((d - now) / GC_NS_PER_MS + 1) : 0;
		p.fd = s->fd;
		p.events = gc_ssh_events(s);
		p.revents = 0;
		rc = poll(&p, 1, timeout);
		if (rc < 0 && errno != EINTR) {
			gc_error_set(err, GC_EIO, "poll: %s", strerror(errno));
			teardown(s);
			return -1;
		}
		rev = rc > 0 ? p.revents : 0;
	}
}

int gc_ssh_connect(struct gc_ssh *s, struct gc_error *err)
{
	if (gc_ssh_connect_start(s, err) < 0)
		return -1;
	return run_blocking(s, err);
}

int gc_ssh_exec(struct gc_ssh *s, const struct gc_ssh_cmd *cmd, struct gc_ssh_result *res,
		struct gc_error *err)
{
	if (gc_ssh_exec_start(s, cmd, res, err) < 0)
		return -1;
	return run_blocking(s, err);
}
