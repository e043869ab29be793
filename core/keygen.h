/*
 * keygen.h: Ed25519 SSH key pairs in OpenSSH's own file formats.
 *
 * A cluster gets one key pair: the public half is imported into the cloud, the private
 * half lets bootstrap log in. The private key is written as an unencrypted
 * "openssh-key-v1" PEM file (what `ssh-keygen -t ed25519 -N ''` writes) with mode 0600,
 * the public key as the usual one-line ".pub" file next to it, so ssh, ssh-keygen and
 * libssh2 use them as they are.
 *
 * Invariants: `priv` is secret. It is wiped (OPENSSL_cleanse) by gc_keypair_release and
 * every temporary copy is wiped before it is freed; nothing here logs or puts key bytes
 * into error messages. A written key is never overwritten: the key of a running cluster
 * must not be lost, so writing over an existing file fails and leaves it as it was.
 *
 * Life cycle: gc_keypair_generate or gc_keypair_load (which fill an uninitialised
 * struct on success) -> use -> gc_keypair_release. gc_keypair_init gives an empty pair
 * that release accepts, for cleanup paths.
 */
#ifndef GC_KEYGEN_H
#define GC_KEYGEN_H

#include <stddef.h>

#include "core/buf.h"
#include "core/error.h"

#define GC_ED25519_LEN	   32
#define GC_KEY_COMMENT_MAX 1024
/* "SHA256:" and 43 characters of unpadded base64, NUL-terminated */
#define GC_SSH_FINGERPRINT_SIZE 51

struct gc_keypair {
	unsigned char pub[GC_ED25519_LEN];  /* raw Ed25519 public key */
	unsigned char priv[GC_ED25519_LEN]; /* raw Ed25519 private key (the RFC 8032 seed) */
	char *comment;			    /* never NULL once filled; may be "" */
};

void gc_keypair_init(struct gc_keypair *kp);
/* Wipes the private key and frees the comment; accepts NULL and an init'ed pair. */
void gc_keypair_release(struct gc_keypair *kp);

/* A new random pair. The comment (often "gpucluster:<cluster>") must be printable
 * ASCII or UTF-8 without control characters: it ends up on a line of the .pub file. */
int gc_keypair_generate(struct gc_keypair *out, const char *comment, struct gc_error *err);

/* The pair of a given 32-byte seed (RFC 8032): the same seed always gives the same pair.
 * Used for host keys derived from the cluster key, never for the cluster key itself. */
int gc_keypair_from_seed(struct gc_keypair *out, const unsigned char seed[GC_ED25519_LEN],
			 const char *comment, struct gc_error *err);

/*
 * Writes the private key to `path` (mode 0600) and the public key line to `path`.pub.
 * Each file is written under a temporary name in the same directory (created with
 * O_EXCL|O_NOFOLLOW), synced, then hard-linked to its name, which fails if the name
 * exists: so the files appear complete or not at all, and an existing key is never
 * replaced. Fails with GC_EIO, leaving existing files untouched and no new ones behind.
 */
int gc_keypair_write(const struct gc_keypair *kp, const char *path, struct gc_error *err);

/*
 * Reads a private key file in the unencrypted openssh-key-v1 format (ours, or one from
 * `ssh-keygen -t ed25519 -N ''`). Errors: GC_ENOTFOUND when the file does not exist,
 * GC_EUNSUPPORTED for encrypted keys and other key types, GC_EINVALID for anything
 * malformed, truncated or inconsistent (the public key must match the private one),
 * GC_EIO for other read failures.
 */
int gc_keypair_load(struct gc_keypair *out, const char *path, struct gc_error *err);

/* Appends "ssh-ed25519 AAAA... comment" (no newline; no comment part when it is ""),
 * the text clouds' ImportKeyPair calls take. Returns 0, or -1 at out's cap. */
int gc_keypair_public_line(struct gc_buf *out, const struct gc_keypair *kp);

/*
 * Appends the private key file's text. The result is secret: release the buffer with
 * gc_keypair_wipe_buf. Returns 0, or -1 (GC_EINVALID: comment too long; GC_EGENERIC: RNG
 * failure; GC_ETOOBIG: out's cap).
 */
int gc_keypair_private_pem(struct gc_buf *out, const struct gc_keypair *kp, struct gc_error *err);
/* Overwrites n bytes at p with zeros in a way the compiler keeps. */
void gc_wipe(void *p, size_t n);
/* Overwrites a secret string (NULL is fine) before freeing it, so it does not linger in
 * freed heap memory. */
void gc_wipe_free(char *s);
/* Overwrites a buffer's memory with zeros, then releases it. */
void gc_keypair_wipe_buf(struct gc_buf *b);

/* The fingerprint as `ssh-keygen -l` prints it: "SHA256:" + unpadded base64 of the
 * SHA-256 of the public key blob. */
void gc_keypair_fingerprint(char out[GC_SSH_FINGERPRINT_SIZE], const struct gc_keypair *kp);

/*
 * The same for a public key line "type base64 [comment]" of any key type (host keys
 * too). GC_EINVALID when the line is malformed or its blob does not name its type.
 */
int gc_ssh_fingerprint(char out[GC_SSH_FINGERPRINT_SIZE], const char *line, struct gc_error *err);

#endif
