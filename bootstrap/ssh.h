/*
 * ssh.h: one SSH connection to a node over libssh2, driven without blocking.
 *
 * A struct gc_ssh is one TCP connection with one SSH session on it, running one command at
 * a time on a fresh channel. Everything is non-blocking, so one thread can drive hundreds
 * of them with poll(): start an operation (gc_ssh_connect_start, gc_ssh_exec_start), then
 * wait until gc_ssh_fd() shows gc_ssh_events() or gc_ssh_deadline_ns() passes, and call
 * gc_ssh_advance() until it stops answering 1. gc_ssh_connect and gc_ssh_exec are the
 * blocking forms of the same thing, for code that has one node (ssh, exec, tests).
 *
 * Trust: the server's host key must be pinned for host:port in the cluster's known_hosts
 * (known_hosts.h), or trust on first use allowed by the caller (then it is pinned with the
 * instance id); there is no way to skip the check. How commands, input, output, keepalives
 * and authentication work, and the error codes and messages, are in
 * docs/internals/ssh-runner.md ("One connection", "Errors"). After a GC_ETRANSIENT or
 * GC_ETIMEOUT during a command the connection is closed (its state is unknown): connect
 * again. After other command errors it stays usable.
 *
 * Life cycle: gc_ssh_new -> (connect -> exec...)... -> gc_ssh_free (closes). The options'
 * pointers (key, known_hosts, log) must outlive the struct; strings are copied. One struct
 * belongs to one thread; structs that share a struct gc_known_hosts (a first-use pin
 * writes to it) must share that thread too.
 */
#ifndef GC_BOOTSTRAP_SSH_H
#define GC_BOOTSTRAP_SSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/known_hosts.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/keygen.h"
#include "core/log.h"

#define GC_SSH_OUTPUT_MAX	  ((size_t)4 << 20) /* per stream */
#define GC_SSH_CONNECT_TIMEOUT_MS 10000
#define GC_SSH_KEEPALIVE_S	  15
#define GC_SSH_KEEPALIVE_MAX	  3

struct gc_ssh_opts {
	const char *host;	      /* a numeric IPv4 or IPv6 address (no DNS: it would block) */
	unsigned port;		      /* 0: 22 */
	const char *user;	      /* login user, e.g. "ubuntu" */
	const struct gc_keypair *key; /* the cluster's key */
	struct gc_known_hosts *known_hosts; /* required: pins are checked here */
	bool trust_on_first_use;	    /* pin an unknown host's key instead of refusing */
	const char *instance_id;	    /* recorded with a first-use pin; may be NULL */
	uint64_t connect_timeout_ms;	    /* TCP + handshake + auth; 0: 10 s */
	unsigned keepalive_s;		    /* 0: 15 */
	unsigned keepalive_max;		    /* 0: 3 */
	struct gc_log *log;		    /* debug lines; may be NULL */
};

struct gc_ssh_env {
	const char *name; /* [A-Za-z_][A-Za-z0-9_]* */
	const char *value;
};

struct gc_ssh_cmd {
	const char *command; /* shell text for the login shell */
	const struct gc_ssh_env *env;
	size_t n_env;
	const void *stdin_data; /* NULL: empty stdin (EOF at once) */
	size_t stdin_len;
	uint64_t timeout_ms; /* 0: none */
	size_t max_output;   /* per stream; 0: GC_SSH_OUTPUT_MAX */
	const char *what;    /* names the command in messages ("driver"); NULL: "command" */
};

struct gc_ssh_result {
	int exit_status;      /* -1 when the command was killed by a signal or gave none */
	char exit_signal[32]; /* "KILL" when killed by a signal; "" otherwise */
	struct gc_buf out, err;
	bool out_truncated, err_truncated; /* more than max_output bytes came and were dropped */
	uint64_t elapsed_ms;
};

void gc_ssh_result_init(struct gc_ssh_result *r);
void gc_ssh_result_release(struct gc_ssh_result *r);

struct gc_ssh;

/* Copies the options; connects nothing. NULL with GC_EINVALID for bad options. */
struct gc_ssh *gc_ssh_new(const struct gc_ssh_opts *opts, struct gc_error *err);
/* Closes the connection (without waiting for the server) and frees; accepts NULL. */
void gc_ssh_free(struct gc_ssh *s);

/* Starts connecting (the struct must not be connected). -1 on an immediate failure. */
int gc_ssh_connect_start(struct gc_ssh *s, struct gc_error *err);
/* Starts a command on a connected session; res (caller memory, initialised) receives the
 * output and must stay valid until the command ends. */
int gc_ssh_exec_start(struct gc_ssh *s, const struct gc_ssh_cmd *cmd, struct gc_ssh_result *res,
		      struct gc_error *err);
/*
 * Drives the operation in progress: 1 while it needs to wait, 0 when it finished (the
 * command's result is in res, whatever its exit status), -1 on failure. revents are the
 * poll() events seen on gc_ssh_fd() (0 after a timer); calling with 0 is always safe.
 */
int gc_ssh_advance(struct gc_ssh *s, short revents, struct gc_error *err);

int gc_ssh_fd(const struct gc_ssh *s);		     /* -1 when not connected */
short gc_ssh_events(const struct gc_ssh *s);	     /* POLLIN and/or POLLOUT to wait for */
uint64_t gc_ssh_deadline_ns(const struct gc_ssh *s); /* next timer (monotonic); 0: none */
bool gc_ssh_connected(const struct gc_ssh *s);	     /* authenticated and idle or busy */
bool gc_ssh_busy(const struct gc_ssh *s);	     /* an operation is in progress */
/* Closes the connection now (a running command is abandoned); the struct may reconnect. */
void gc_ssh_disconnect(struct gc_ssh *s);
/* The presented host key's fingerprint after a handshake ("" before). */
const char *gc_ssh_host_fingerprint(const struct gc_ssh *s);

/* Blocking forms: start, then poll and advance until done. */
int gc_ssh_connect(struct gc_ssh *s, struct gc_error *err);
int gc_ssh_exec(struct gc_ssh *s, const struct gc_ssh_cmd *cmd, struct gc_ssh_result *res,
		struct gc_error *err);

/* Appends s single-quoted for a POSIX shell ('it'\''s'). Returns 0 or -1 at b's cap. */
int gc_sh_quote(struct gc_buf *b, const char *s);
/* Whether name is a valid environment variable name. */
bool gc_sh_name_ok(const char *name);
/* Appends "export A='x' B='y'; " (nothing for n == 0). -1: GC_EINVALID for a bad name,
 * GC_ETOOBIG at b's cap. */
int gc_sh_env_prefix(struct gc_buf *b, const struct gc_ssh_env *env, size_t n,
		     struct gc_error *err);

#endif
