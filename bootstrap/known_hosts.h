/*
 * known_hosts.h: the per-cluster known_hosts file, and host keys read from console output.
 *
 * Every cluster pins its nodes' SSH host keys in its own file, in OpenSSH's format, the
 * comment field naming the instance each key belongs to. docs/internals/ssh-runner.md,
 * "Host keys", has the format, the pinning rules of gc_known_hosts_pin (and why the
 * instance id decides between "replaced" and "changed"), how the file is written and
 * which lines are refused. Nothing else removes a line except gc_known_hosts_forget.
 *
 * Life cycle: gc_known_hosts_open (fills caller memory; a missing file is an empty set) ->
 * check / pin / forget ... -> gc_known_hosts_release. One struct belongs to one thread
 * (the runner's event loop); other processes are handled by the file lock.
 */
#ifndef GC_BOOTSTRAP_KNOWN_HOSTS_H
#define GC_BOOTSTRAP_KNOWN_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/keygen.h"

/* The comment that records an instance id: "gpucluster:instance=ID" */
#define GC_KNOWN_HOSTS_INSTANCE "gpucluster:instance="
/* Longest known_hosts file we read: a cluster of 1000 nodes with 3 keys each is ~0.5 MiB */
#define GC_KNOWN_HOSTS_MAX ((size_t)16 << 20)

/* One host key: the type name and the base64 wire blob, as on a .pub line. */
struct gc_host_key {
	char *type;   /* "ssh-ed25519" */
	char *base64; /* "AAAAC3NzaC1lZDI1NTE5AAAAI..." */
};

struct gc_host_keys {
	struct gc_host_key *v;
	size_t n, alloc;
};

void gc_host_keys_release(struct gc_host_keys *keys);

/*
 * The host keys in a cloud's console output: the lines between "-----BEGIN SSH HOST KEY
 * KEYS-----" and "-----END SSH HOST KEY KEYS-----" that cloud-init prints (anything before
 * the key type on a line, such as a cloud's "NAME: " prefix, and \r are ignored). When the output
 * holds several complete blocks (one per boot) the last one counts. Only ssh-ed25519 keys
 * are returned when the block has one (the type we ask servers for first); else every key
 * of a type we know (ecdsa-sha2-nistp256/384/521, ssh-rsa). Each key's blob must decode
 * and name its own type. out is filled on success. GC_ENOTFOUND when there is no complete
 * block or it holds no usable key (the console is often empty for a minute after boot).
 */
int gc_console_host_keys(struct gc_host_keys *out, const char *console, struct gc_error *err);

struct gc_known_host {
	char *host;	/* the host field, "[127.77.0.3]:2222" */
	char *type;	/* NULL on a line that is not an entry (comment, blank) */
	char *base64;	/* the key's blob */
	char *instance; /* the recorded instance id, or NULL */
	char *text;	/* the line as read (without the newline) */
};

struct gc_known_hosts {
	char *path;
	struct gc_known_host *v;
	size_t n, alloc;
};

/* Reads path into out (a missing file gives an empty set; nothing is created yet).
 * GC_EINVALID names the line of a malformed entry; GC_EIO for read errors. */
int gc_known_hosts_open(struct gc_known_hosts *out, const char *path, struct gc_error *err);
void gc_known_hosts_release(struct gc_known_hosts *kh);

/* Re-reads the file (after another process may have pinned). On failure kh is unchanged. */
int gc_known_hosts_reload(struct gc_known_hosts *kh, struct gc_error *err);

enum gc_host_key_match {
	GC_HOST_KEY_MATCH = 0, /* the presented key is pinned for host:port */
	GC_HOST_KEY_UNKNOWN,   /* nothing is pinned for host:port */
	GC_HOST_KEY_CHANGED,   /* other keys are pinned for host:port (any type) */
};

/*
 * Compares the key a server presented (its wire blob) with the pins of host:port. With
 * GC_HOST_KEY_CHANGED, expected gets the fingerprint of the pinned key of the same type,
 * or else of the first pinned key; with the others it is "". expected may be NULL.
 */
enum gc_host_key_match gc_known_hosts_check(const struct gc_known_hosts *kh, const char *host,
					    unsigned port, const void *blob, size_t len,
					    char expected[GC_SSH_FINGERPRINT_SIZE]);

/* Whether a key is pinned for host:port recorded for instance id (or, with or_none, for
 * no instance: only a pin of another instance is an address reused). */
bool gc_known_hosts_pinned(const struct gc_known_hosts *kh, const char *host, unsigned port,
			   const char *id, bool or_none);

/* Appends the key types pinned for host:port as libssh2 host-key methods in our order of
 * preference ("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256,ssh-rsa"), so the
 * server is asked for a key we can check; nothing when none is pinned. Returns 0 or -1 at
 * out's cap. */
int gc_known_hosts_methods(const struct gc_known_hosts *kh, const char *host, unsigned port,
			   struct gc_buf *out);

enum gc_pin_outcome {
	GC_PIN_ADDED = 0, /* nothing was pinned for host:port */
	GC_PIN_SAME,	  /* exactly these keys were pinned already */
	GC_PIN_REPLACED,  /* a previous instance's keys were replaced */
};

/*
 * Pins keys for host:port on behalf of instance_id (NULL: unknown; then a different pinned
 * key is always an error), by the rules at the top of this file. Re-reads and rewrites
 * the file under its lock; kh shows the result. outcome may be NULL. Errors: GC_EAUTH (a
 * changed key), GC_EINVALID (no keys, a bad key, a bad host or instance id), GC_EIO.
 */
int gc_known_hosts_pin(struct gc_known_hosts *kh, const char *host, unsigned port,
		       const char *instance_id, const struct gc_host_keys *keys,
		       enum gc_pin_outcome *outcome, struct gc_error *err);

/* gc_console_host_keys + gc_known_hosts_pin. */
int gc_known_hosts_pin_console(struct gc_known_hosts *kh, const char *host, unsigned port,
			       const char *instance_id, const char *console,
			       enum gc_pin_outcome *outcome, struct gc_error *err);

/* Removes every line of host:port (a terminated instance). Not an error when none. */
int gc_known_hosts_forget(struct gc_known_hosts *kh, const char *host, unsigned port,
			  struct gc_error *err);

/* "127.77.0.3:2222", "[::1]:2222": how messages name an endpoint. */
void gc_ssh_endpoint(char *out, size_t size, const char *host, unsigned port);

/* The fingerprint ("SHA256:" + unpadded base64 of SHA-256) of a key's wire blob. */
void gc_ssh_blob_fingerprint(char out[GC_SSH_FINGERPRINT_SIZE], const void *blob, size_t len);

#endif
