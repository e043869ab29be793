/*
 * hash.h: digests, HMACs and encodings on OpenSSL's EVP interface, plus the short
 * deterministic hash used in tags and client tokens.
 *
 * All functions are pure and thread-safe. Output buffers are caller memory of the size
 * the macros give; hex output is lowercase and NUL-terminated.
 */
#ifndef GC_HASH_H
#define GC_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define GC_SHA256_LEN	  32
#define GC_SHA1_LEN	  20
#define GC_SHA256_HEX_LEN (GC_SHA256_LEN * 2 + 1)

void gc_sha256(const void *data, size_t len, unsigned char out[GC_SHA256_LEN]);
void gc_sha256_hex(const void *data, size_t len, char out[GC_SHA256_HEX_LEN]);
void gc_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
		    unsigned char out[GC_SHA256_LEN]);
void gc_hmac_sha1(const void *key, size_t keylen, const void *data, size_t len,
		  unsigned char out[GC_SHA1_LEN]);

/* Lowercase hex of n bytes into out (2n+1 bytes). */
void gc_hex(const unsigned char *in, size_t n, char *out);

/* Standard base64 with padding, appended to b. Returns 0, or -1 at b's cap. */
int gc_base64_encode(struct gc_buf *b, const void *data, size_t len);
/* Decodes standard base64 (whitespace ignored, padding optional) into b.
 * Returns 0, or -1 on bad input or b's cap. */
int gc_base64_decode(struct gc_buf *b, const char *text, size_t len);

/*
 * The short hash: the first 10 characters of the lowercase base32 (a-z2-7) of
 * SHA-256(data), 50 bits. Stable across versions and platforms, because it lands in
 * cloud tags and client tokens that later runs must recompute exactly.
 */
#define GC_SHORTHASH_LEN 10
void gc_shorthash(const void *data, size_t len, char out[GC_SHORTHASH_LEN + 1]);

/* Cryptographically random bytes. Returns 0, or -1 if the RNG failed. */
int gc_random_bytes(void *out, size_t n);

#endif
