/*
 * hash.c: digests, HMACs, base64 and the short hash, on OpenSSL (see hash.h).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"

void gc_sha256(const void *data, size_t len, unsigned char out[GC_SHA256_LEN])
{
	unsigned int n = GC_SHA256_LEN;

	if (!EVP_Digest(data, len, out, &n, EVP_sha256(), NULL))
		abort(); /* only fails on allocation failure inside OpenSSL */
}

void gc_sha256_hex(const void *data, size_t len, char out[GC_SHA256_HEX_LEN])
{
	unsigned char md[GC_SHA256_LEN];

	gc_sha256(data, len, md);
	gc_hex(md, sizeof(md), out);
}

static void hmac(const EVP_MD *md, const void *key, size_t keylen, const void *data, size_t len,
		 unsigned char *out)
{
	unsigned int n = 0;

	if (!HMAC(md, key, (int)keylen, data, len, out, &n))
		abort();
}

void gc_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
		    unsigned char out[GC_SHA256_LEN])
{
	hmac(EVP_sha256(), key, keylen, data, len, out);
}

void gc_hmac_sha1(const void *key, size_t keylen, const void *data, size_t len,
		  unsigned char out[GC_SHA1_LEN])
{
	hmac(EVP_sha1(), key, keylen, data, len, out);
}

void gc_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int gc_base64_encode(struct gc_buf *b, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t start = b->len;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		char q[4];

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		q[0] = b64[(v >> 18) & 63];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < len ? b64[v & 63] : '=';
		if (gc_buf_add(b, q, 4) < 0) {
			gc_buf_truncate(b, start);
			return -1;
		}
	}
	return 0;
}

int gc_base64_decode(struct gc_buf *b, const char *text, size_t len)
{
	size_t start = b->len;
	uint32_t acc = 0;
	int bits = 0, pad = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		const char *pos;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		pos = c ? strchr(b64, c) : NULL;
		if (!pos || pad)
			goto fail;
		acc = (acc << 6) | (uint32_t)(pos - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (gc_buf_addch(b, (char)((acc >> bits) & 0xff)) < 0)
				goto fail;
		}
	}
	/* leftover bits must be zero padding of a 2- or 3-byte tail */
	if (bits >= 6 || pad > 2 || (acc & ((1u << bits) - 1)))
		goto fail;
	return 0;
fail:
	gc_buf_truncate(b, start);
	return -1;
}

void gc_shorthash(const void *data, size_t len, char out[GC_SHORTHASH_LEN + 1])
{
	static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";
	unsigned char md[GC_SHA256_LEN];
	uint64_t v = 0;

	gc_sha256(data, len, md);
	for (int i = 0; i < 8; i++)
		v = (v << 8) | md[i];
	for (int i = 0; i < GC_SHORTHASH_LEN; i++)
		out[i] = b32[(v >> (64 - 5 * (i + 1))) & 31];
	out[GC_SHORTHASH_LEN] = '\0';
}

int gc_random_bytes(void *out, size_t n)
{
	return RAND_bytes(out, (int)n) == 1 ? 0 : -1;
}
