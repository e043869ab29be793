/*
 * known_hosts.c: the per-cluster known_hosts file and console host keys (see known_hosts.h
 * for the format and the pinning rules).
 *
 * The file is small (a line per node and key) and written rarely (once per new node), so
 * every change rewrites it whole: lock, re-read, change the lines in memory, write a
 * temporary file, fsync, rename. Keys are compared as decoded blobs, so a line written by
 * another tool with different base64 padding still matches.
 */
#define _GNU_SOURCE /* O_CLOEXEC, O_NOFOLLOW, flock */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootstrap/known_hosts.h"
#include "core/alloc.h"
#include "core/hash.h"
#include "core/shape.h"
#include "core/str.h"

#define BEGIN_KEYS    "-----BEGIN SSH HOST KEY KEYS-----"
#define END_KEYS      "-----END SSH HOST KEY KEYS-----"
#define KEY_BLOB_MAX  ((size_t)16 << 10) /* an RSA-16384 blob is ~2 KiB */
#define HOST_MAX      256
#define INSTANCE_MAX  128
#define CONSOLE_LINES 4096 /* more key lines than any block has: the rest are ignored */

/* Key types we pin, in the order we ask servers for them, with their host-key methods. */
static const struct {
	const char *type;
	const char *methods;
} key_types[] = {
	{ "ssh-ed25519", "ssh-ed25519" },
	{ "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256" },
	{ "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384" },
	{ "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521" },
	{ "ssh-rsa", "rsa-sha2-512,rsa-sha2-256,ssh-rsa" },
};
#define N_KEY_TYPES (sizeof(key_types) / sizeof(key_types[0]))

static int key_type_index(const char *type, size_t len)
{
	for (size_t i = 0; i < N_KEY_TYPES; i++)
		if (strlen(key_types[i].type) == len && memcmp(key_types[i].type, type, len) == 0)
			return (int)i;
	return -1;
}

void gc_ssh_endpoint(char *out, size_t size, const char *host, unsigned port)
{
	if (strchr(host, ':'))
		snprintf(out, size, "[%s]:%u", host, port);
	else
		snprintf(out, size, "%s:%u", host, port);
}

/* The host field OpenSSH writes: "[host]:port", or the bare host for port 22. */
static char *host_field(const char *host, unsigned port)
{
	if (port == 22)
		return gc_xstrdup(host);
	return gc_xasprintf("[%s]:%u", host, port);
}

void gc_ssh_blob_fingerprint(char out[GC_SSH_FINGERPRINT_SIZE], const void *blob, size_t len)
{
	unsigned char md[GC_SHA256_LEN];
	struct gc_buf b = GC_BUF_INIT(128);

	gc_sha256(blob, len, md);
	gc_base64_encode(&b, md, sizeof(md));
	while (b.len && b.data[b.len - 1] == '=')
		gc_buf_truncate(&b, b.len - 1);
	snprintf(out, GC_SSH_FINGERPRINT_SIZE, "SHA256:%s", b.data);
	gc_buf_release(&b);
}

/* Decodes a key's base64 into blob and checks that the blob names the type. */
static int decode_key(struct gc_buf *blob, const char *type, size_t type_len, const char *b64,
		      size_t b64_len)
{
	const unsigned char *p;
	uint32_t n;

	gc_buf_reset(blob);
	if (gc_base64_decode(blob, b64, b64_len) < 0 || blob->len < 4)
		return -1;
	p = (const unsigned char *)blob->data;
	n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (n != type_len || blob->len - 4 < n || memcmp(p + 4, type, type_len) != 0)
		return -1;
	return 0;
}

static void fingerprint_b64(char out[GC_SSH_FINGERPRINT_SIZE], const char *type, const char *b64)
{
	struct gc_buf blob = GC_BUF_INIT(KEY_BLOB_MAX);

	if (decode_key(&blob, type, strlen(type), b64, strlen(b64)) == 0)
		gc_ssh_blob_fingerprint(out, blob.data, blob.len);
	else
		snprintf(out, GC_SSH_FINGERPRINT_SIZE, "SHA256:?");
	gc_buf_release(&blob);
}

/* ---- console output --------------------------------------------------------------------- */

static void host_key_free(struct gc_host_key *k)
{
	free(k->type);
	free(k->base64);
}

void gc_host_keys_release(struct gc_host_keys *keys)
{
	if (!keys)
		return;
	for (size_t i = 0; i < keys->n; i++)
		host_key_free(&keys->v[i]);
	free(keys->v);
	keys->v = NULL;
	keys->n = keys->alloc = 0;
}

static void host_keys_add(struct gc_host_keys *keys, const char *type, size_t type_len,
			  const char *b64, size_t b64_len)
{
	GC_ALLOC_GROW(keys->v, keys->n + 1, keys->alloc);
	keys->v[keys->n].type = gc_xstrndup(type, type_len);
	keys->v[keys->n].base64 = gc_xstrndup(b64, b64_len);
	keys->n++;
}

/* The key on one console line: the first known key type token and the base64 after it. */
static void console_line_key(struct gc_host_keys *keys, struct gc_buf *blob, const char *line,
			     size_t len)
{
	const char *end = line + len;

	for (const char *p = line; p < end;) {
		const char *tok = p, *b64, *b64_end;
		size_t tok_len;

		while (tok < end && (*tok == ' ' || *tok == '\t'))
			tok++;
		tok_len = 0;
		while (tok + tok_len < end && tok[tok_len] != ' ' && tok[tok_len] != '\t')
			tok_len++;
		if (!tok_len)
			return;
		p = tok + tok_len;
		if (key_type_index(tok, tok_len) < 0)
			continue;
		b64 = p;
		while (b64 < end && (*b64 == ' ' || *b64 == '\t'))
			b64++;
		b64_end = b64;
		while (b64_end < end && *b64_end != ' ' && *b64_end != '\t')
			b64_end++;
		if (b64_end > b64 &&
		    decode_key(blob, tok, tok_len, b64, (size_t)(b64_end - b64)) == 0)
			host_keys_add(keys, tok, tok_len, b64, (size_t)(b64_end - b64));
		return;
	}
}

int gc_console_host_keys(struct gc_host_keys *out, const char *console, struct gc_error *err)
{
	struct gc_host_keys all = { 0 }, block = { 0 }, pick = { 0 };
	struct gc_buf blob = GC_BUF_INIT(KEY_BLOB_MAX);
	const char *p = console ? console : "";
	bool inside = false, complete = false;
	size_t lines = 0;
	int ret = -1;

	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *next = p[len] ? p + len + 1 : p + len;
		char *line = gc_xstrndup(p, len);

		/* console text comes with \r\n and with a cloud's prefixes ("NAME: ") */
		line[strcspn(line, "\r")] = '\0';
		if (strstr(line, BEGIN_KEYS)) {
			gc_host_keys_release(&block);
			inside = true;
			lines = 0;
		} else if (inside && strstr(line, END_KEYS)) {
			/* a complete block: it replaces what an earlier boot printed */
			gc_host_keys_release(&all);
			all = block;
			block = (struct gc_host_keys){ 0 };
			inside = false;
			complete = true;
		} else if (inside && lines++ < CONSOLE_LINES) {
			console_line_key(&block, &blob, line, strlen(line));
		}
		free(line);
		p = next;
	}
	if (!complete || !all.n) {
		gc_error_set(
			err, GC_ENOTFOUND,
			complete ? "the console output's host key block holds no usable key"
				 : "no host keys in the console output (no complete '" BEGIN_KEYS
				   "' block yet)");
		goto out;
	}
	for (size_t i = 0; i < all.n; i++)
		if (strcmp(all.v[i].type, key_types[0].type) == 0)
			host_keys_add(&pick, all.v[i].type, strlen(all.v[i].type), all.v[i].base64,
				      strlen(all.v[i].base64));
	if (!pick.n) {
		pick = all;
		all = (struct gc_host_keys){ 0 };
	}
	*out = pick;
	pick = (struct gc_host_keys){ 0 };
	ret = 0;
out:
	gc_host_keys_release(&all);
	gc_host_keys_release(&block);
	gc_host_keys_release(&pick);
	gc_buf_release(&blob);
	return ret;
}

/* ---- the file ----------------------------------------------------------------------------- */

static void line_free(struct gc_known_host *l)
{
	free(l->host);
	free(l->type);
	free(l->base64);
	free(l->instance);
	free(l->text);
}

static void lines_free(struct gc_known_host *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		line_free(&v[i]);
	free(v);
}

void gc_known_hosts_release(struct gc_known_hosts *kh)
{
	if (!kh)
		return;
	lines_free(kh->v, kh->n);
	free(kh->path);
	kh->v = NULL;
	kh->path = NULL;
	kh->n = kh->alloc = 0;
}

static int parse_line(struct gc_known_host *out, const char *path, size_t lineno, const char *text,
		      struct gc_buf *blob, struct gc_error *err)
{
	const char *f[3], *p = text;
	size_t flen[3];
	int nf = 0;

	memset(out, 0, sizeof(*out));
	out->text = gc_xstrdup(text);
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '#')
		return 0;
	for (; nf < 3; nf++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		f[nf] = p;
		flen[nf] = strcspn(p, " \t");
		p += flen[nf];
	}
	if (*f[0] == '@') {
		gc_error_set(
			err, GC_EUNSUPPORTED,
			"known_hosts '%s' line %zu: markers (@cert-authority, @revoked) are not "
			"supported in a cluster's known_hosts",
			path, lineno);
		goto fail;
	}
	if (gc_starts_with(f[0], "|1|")) {
		gc_error_set(err, GC_EUNSUPPORTED,
			     "known_hosts '%s' line %zu: hashed host names are not supported in a "
			     "cluster's known_hosts",
			     path, lineno);
		goto fail;
	}
	if (nf < 3 || decode_key(blob, f[1], flen[1], f[2], flen[2]) < 0) {
		gc_error_set(
			err, GC_EINVALID,
			"known_hosts '%s' line %zu: not 'HOST KEYTYPE BASE64 [COMMENT]' with a "
			"key of its type",
			path, lineno);
		goto fail;
	}
	out->host = gc_xstrndup(f[0], flen[0]);
	out->type = gc_xstrndup(f[1], flen[1]);
	out->base64 = gc_xstrndup(f[2], flen[2]);
	/* the comment: our instance marker is one of its words */
	while (*p) {
		size_t n;

		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, " \t");
		if (n > strlen(GC_KNOWN_HOSTS_INSTANCE) &&
		    gc_starts_with(p, GC_KNOWN_HOSTS_INSTANCE)) {
			out->instance = gc_xstrndup(p + strlen(GC_KNOWN_HOSTS_INSTANCE),
						    n - strlen(GC_KNOWN_HOSTS_INSTANCE));
			break;
		}
		p += n;
	}
	return 0;
fail:
	line_free(out);
	memset(out, 0, sizeof(*out));
	return -1;
}

static int read_file(const char *path, struct gc_buf *out, struct gc_error *err)
{
	char chunk[8192];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return gc_error_set(err, GC_EIO, "cannot open known_hosts '%s': %s", path,
				    strerror(errno));
	}
	while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			gc_error_set(err, GC_EIO, "cannot read known_hosts '%s': %s", path,
				     strerror(errno));
			close(fd);
			return -1;
		}
		if (gc_buf_add(out, chunk, (size_t)got) < 0) {
			close(fd);
			return gc_error_set(err, GC_ETOOBIG,
					    "known_hosts '%s' is larger than %zu MiB", path,
					    GC_KNOWN_HOSTS_MAX >> 20);
		}
	}
	close(fd);
	return 0;
}

/* Parses the file into a fresh line array. */
static int load(const char *path, struct gc_known_host **v_out, size_t *n_out, size_t *alloc_out,
		struct gc_error *err)
{
	struct gc_buf text = GC_BUF_INIT(GC_KNOWN_HOSTS_MAX);
	struct gc_buf blob = GC_BUF_INIT(KEY_BLOB_MAX);
	struct gc_known_host *v = NULL;
	size_t n = 0, alloc = 0, lineno = 0;
	const char *p;
	int ret = -1;

	if (read_file(path, &text, err) < 0)
		goto out;
	if (memchr(text.data, '\0', text.len)) {
		gc_error_set(err, GC_EINVALID, "known_hosts '%s' is not a text file", path);
		goto out;
	}
	for (p = text.data; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = gc_xstrndup(p, len);

		line[strcspn(line, "\r")] = '\0';
		lineno++;
		GC_ALLOC_GROW(v, n + 1, alloc);
		if (parse_line(&v[n], path, lineno, line, &blob, err) < 0) {
			free(line);
			goto out;
		}
		n++;
		free(line);
		p += len;
		if (*p)
			p++;
	}
	*v_out = v;
	*n_out = n;
	*alloc_out = alloc;
	v = NULL;
	n = 0;
	ret = 0;
out:
	lines_free(v, n);
	gc_buf_release(&text);
	gc_buf_release(&blob);
	return ret;
}

int gc_known_hosts_open(struct gc_known_hosts *out, const char *path, struct gc_error *err)
{
	struct gc_known_hosts kh = { 0 };

	if (load(path, &kh.v, &kh.n, &kh.alloc, err) < 0)
		return -1;
	kh.path = gc_xstrdup(path);
	*out = kh;
	return 0;
}

int gc_known_hosts_reload(struct gc_known_hosts *kh, struct gc_error *err)
{
	struct gc_known_host *v = NULL;
	size_t n = 0, alloc = 0;

	if (load(kh->path, &v, &n, &alloc, err) < 0)
		return -1;
	lines_free(kh->v, kh->n);
	kh->v = v;
	kh->n = n;
	kh->alloc = alloc;
	return 0;
}

/* Whether a line is an entry for the host field hf (which may be one of a comma list). */
static bool line_is_host(const struct gc_known_host *l, const char *hf)
{
	size_t hlen = strlen(hf);

	if (!l->type)
		return false;
	for (const char *p = l->host; *p;) {
		size_t n = strcspn(p, ",");

		if (n == hlen && memcmp(p, hf, n) == 0)
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

static bool line_has_key(const struct gc_known_host *l, struct gc_buf *tmp, const void *blob,
			 size_t len)
{
	if (decode_key(tmp, l->type, strlen(l->type), l->base64, strlen(l->base64)) < 0)
		return false;
	return tmp->len == len && memcmp(tmp->data, blob, len) == 0;
}

bool gc_known_hosts_pinned(const struct gc_known_hosts *kh, const char *host, unsigned port,
			   const char *id, bool or_none)
{
	char *hf = host_field(host, port);
	bool found = false;

	for (size_t i = 0; i < kh->n && !found; i++) {
		const struct gc_known_host *l = &kh->v[i];

		found = l->type && l->host && strcmp(l->host, hf) == 0 &&
			(l->instance ? strcmp(l->instance, id) == 0 : or_none);
	}
	free(hf);
	return found;
}

enum gc_host_key_match gc_known_hosts_check(const struct gc_known_hosts *kh, const char *host,
					    unsigned port, const void *blob, size_t len,
					    char expected[GC_SSH_FINGERPRINT_SIZE])
{
	struct gc_buf tmp = GC_BUF_INIT(KEY_BLOB_MAX);
	char *hf = host_field(host, port);
	const struct gc_known_host *first = NULL, *same_type = NULL;
	const unsigned char *b = blob;
	enum gc_host_key_match m = GC_HOST_KEY_UNKNOWN;
	uint32_t tlen = 0;

	if (expected)
		expected[0] = '\0';
	if (len >= 4)
		tlen = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	for (size_t i = 0; i < kh->n; i++) {
		const struct gc_known_host *l = &kh->v[i];

		if (!line_is_host(l, hf))
			continue;
		if (line_has_key(l, &tmp, blob, len)) {
			m = GC_HOST_KEY_MATCH;
			goto out;
		}
		if (!first)
			first = l;
		if (!same_type && len >= 4 && tlen <= len - 4 && strlen(l->type) == tlen &&
		    memcmp(l->type, b + 4, tlen) == 0)
			same_type = l;
	}
	if (first) {
		m = GC_HOST_KEY_CHANGED;
		if (expected) {
			const struct gc_known_host *e = same_type ? same_type : first;

			fingerprint_b64(expected, e->type, e->base64);
		}
	}
out:
	free(hf);
	gc_buf_release(&tmp);
	return m;
}

int gc_known_hosts_methods(const struct gc_known_hosts *kh, const char *host, unsigned port,
			   struct gc_buf *out)
{
	char *hf = host_field(host, port);
	bool have[N_KEY_TYPES] = { false };
	bool first = true;
	int ret = 0;

	for (size_t i = 0; i < kh->n; i++) {
		int t;

		if (!line_is_host(&kh->v[i], hf))
			continue;
		t = key_type_index(kh->v[i].type, strlen(kh->v[i].type));
		if (t >= 0)
			have[t] = true;
	}
	for (size_t t = 0; t < N_KEY_TYPES && ret == 0; t++) {
		if (!have[t])
			continue;
		ret = gc_buf_addf(out, "%s%s", first ? "" : ",", key_types[t].methods);
		first = false;
	}
	free(hf);
	return ret;
}

/* ---- writing ------------------------------------------------------------------------------- */

static int lock_file(const char *path, struct gc_error *err)
{
	char *lp = gc_xasprintf("%s.lock", path);
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0) {
		gc_error_set(err, GC_EIO, "cannot create lock file '%s': %s", lp, strerror(errno));
		free(lp);
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			gc_error_set(err, GC_EIO, "cannot lock '%s': %s", lp, strerror(errno));
			close(fd);
			free(lp);
			return -1;
		}
	}
	free(lp);
	return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int save(const struct gc_known_hosts *kh, struct gc_error *err)
{
	struct gc_buf text = GC_BUF_INIT(GC_KNOWN_HOSTS_MAX);
	char *tmp = gc_xasprintf("%s.tmp.XXXXXX", kh->path);
	int fd = -1, ret = -1;

	for (size_t i = 0; i < kh->n; i++) {
		if (gc_buf_addf(&text, "%s\n", kh->v[i].text) < 0) {
			gc_error_set(err, GC_ETOOBIG, "known_hosts '%s' would pass %zu MiB",
				     kh->path, GC_KNOWN_HOSTS_MAX >> 20);
			goto out;
		}
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		gc_error_set(err, GC_EIO, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, 0600) < 0 || write_all(fd, text.data, text.len) < 0 || fsync(fd) < 0) {
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, kh->path) < 0) {
		gc_error_set(err, GC_EIO, "cannot replace known_hosts '%s': %s", kh->path,
			     strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		unlink(tmp);
	free(tmp);
	gc_buf_release(&text);
	return ret;
}

static void set_entry(struct gc_known_host *l, const char *hf, const char *type, const char *b64,
		      const char *instance)
{
	line_free(l);
	l->host = gc_xstrdup(hf);
	l->type = gc_xstrdup(type);
	l->base64 = gc_xstrdup(b64);
	l->instance = instance ? gc_xstrdup(instance) : NULL;
	if (instance)
		l->text = gc_xasprintf("%s %s %s " GC_KNOWN_HOSTS_INSTANCE "%s", hf, type, b64,
				       instance);
	else
		l->text = gc_xasprintf("%s %s %s", hf, type, b64);
}

static void remove_host(struct gc_known_hosts *kh, const char *hf)
{
	size_t j = 0;

	for (size_t i = 0; i < kh->n; i++) {
		if (line_is_host(&kh->v[i], hf))
			line_free(&kh->v[i]);
		else
			kh->v[j++] = kh->v[i];
	}
	kh->n = j;
}

static void append_keys(struct gc_known_hosts *kh, const char *hf, const struct gc_host_keys *keys,
			const char *instance)
{
	for (size_t i = 0; i < keys->n; i++) {
		GC_ALLOC_GROW(kh->v, kh->n + 1, kh->alloc);
		memset(&kh->v[kh->n], 0, sizeof(kh->v[kh->n]));
		set_entry(&kh->v[kh->n], hf, keys->v[i].type, keys->v[i].base64, instance);
		kh->n++;
	}
}

static int check_args(const char *host, unsigned port, const char *instance_id,
		      struct gc_error *err)
{
	if (!host || strlen(host) > HOST_MAX || !gc_word_of(host, ".:-_"))
		return gc_error_set(err, GC_EINVALID, "bad host '%s' for known_hosts",
				    host ? host : "(null)");
	if (!port || port > 65535)
		return gc_error_set(err, GC_EINVALID, "bad port %u for known_hosts", port);
	if (instance_id && (strlen(instance_id) > INSTANCE_MAX || !gc_word_of(instance_id, ".:-_")))
		return gc_error_set(err, GC_EINVALID, "bad instance id '%s' for known_hosts",
				    instance_id);
	return 0;
}

int gc_known_hosts_pin(struct gc_known_hosts *kh, const char *host, unsigned port,
		       const char *instance_id, const struct gc_host_keys *keys,
		       enum gc_pin_outcome *outcome, struct gc_error *err)
{
	struct gc_buf blob = GC_BUF_INIT(KEY_BLOB_MAX), tmp = GC_BUF_INIT(KEY_BLOB_MAX);
	char *hf = NULL;
	char ep[HOST_MAX + 16];
	enum gc_pin_outcome result = GC_PIN_ADDED;
	size_t existing = 0;
	bool all_pinned = true, replaceable = instance_id != NULL, changed_file = false;
	int lock = -1, ret = -1;

	if (check_args(host, port, instance_id, err) < 0)
		goto out;
	if (!keys || !keys->n) {
		gc_error_set(err, GC_EINVALID, "no host keys to pin");
		goto out;
	}
	for (size_t i = 0; i < keys->n; i++) {
		const struct gc_host_key *k = &keys->v[i];

		if (!gc_word_of(k->type, "-@.") ||
		    decode_key(&blob, k->type, strlen(k->type), k->base64, strlen(k->base64)) < 0 ||
		    !gc_word_of(k->base64, "+/=")) {
			gc_error_set(err, GC_EINVALID, "host key %zu to pin is not a '%s' key",
				     i + 1, k->type);
			goto out;
		}
	}
	hf = host_field(host, port);
	gc_ssh_endpoint(ep, sizeof(ep), host, port);
	lock = lock_file(kh->path, err);
	if (lock < 0 || gc_known_hosts_reload(kh, err) < 0)
		goto out;

	for (size_t i = 0; i < kh->n; i++) {
		if (!line_is_host(&kh->v[i], hf))
			continue;
		existing++;
		if (!kh->v[i].instance || (instance_id && !strcmp(kh->v[i].instance, instance_id)))
			replaceable = false;
	}
	for (size_t i = 0; i < keys->n && existing; i++) {
		bool found = false;

		decode_key(&blob, keys->v[i].type, strlen(keys->v[i].type), keys->v[i].base64,
			   strlen(keys->v[i].base64));
		for (size_t j = 0; j < kh->n && !found; j++)
			found = line_is_host(&kh->v[j], hf) &&
				line_has_key(&kh->v[j], &tmp, blob.data, blob.len);
		if (!found)
			all_pinned = false;
	}

	if (!existing) {
		append_keys(kh, hf, keys, instance_id);
		changed_file = true;
	} else if (all_pinned) {
		result = GC_PIN_SAME;
		for (size_t i = 0; i < kh->n && instance_id; i++) {
			struct gc_known_host *l = &kh->v[i];

			if (!line_is_host(l, hf) ||
			    (l->instance && !strcmp(l->instance, instance_id)))
				continue;
			/* a line listing several hosts keeps its own host field */
			if (strcmp(l->host, hf) != 0)
				continue;
			char *type = gc_xstrdup(l->type), *b64 = gc_xstrdup(l->base64);

			set_entry(l, hf, type, b64, instance_id);
			free(type);
			free(b64);
			changed_file = true;
		}
	} else if (replaceable) {
		result = GC_PIN_REPLACED;
		remove_host(kh, hf);
		append_keys(kh, hf, keys, instance_id);
		changed_file = true;
	} else {
		char want[GC_SSH_FINGERPRINT_SIZE], got[GC_SSH_FINGERPRINT_SIZE];

		decode_key(&blob, keys->v[0].type, strlen(keys->v[0].type), keys->v[0].base64,
			   strlen(keys->v[0].base64));
		gc_ssh_blob_fingerprint(got, blob.data, blob.len);
		if (gc_known_hosts_check(kh, host, port, blob.data, blob.len, want) ==
		    GC_HOST_KEY_MATCH) {
			/* the first key is pinned: name one that is not */
			for (size_t i = 1; i < keys->n; i++) {
				decode_key(&blob, keys->v[i].type, strlen(keys->v[i].type),
					   keys->v[i].base64, strlen(keys->v[i].base64));
				if (gc_known_hosts_check(kh, host, port, blob.data, blob.len,
							 want) == GC_HOST_KEY_CHANGED) {
					gc_ssh_blob_fingerprint(got, blob.data, blob.len);
					break;
				}
			}
		}
		gc_error_set(err, GC_EAUTH, "host key for %s changed (expected %s, got %s)", ep,
			     want, got);
		goto out;
	}
	if (changed_file && save(kh, err) < 0)
		goto out;
	if (outcome)
		*outcome = result;
	ret = 0;
out:
	if (lock >= 0)
		close(lock);
	free(hf);
	gc_buf_release(&blob);
	gc_buf_release(&tmp);
	return ret;
}

int gc_known_hosts_pin_console(struct gc_known_hosts *kh, const char *host, unsigned port,
			       const char *instance_id, const char *console,
			       enum gc_pin_outcome *outcome, struct gc_error *err)
{
	struct gc_host_keys keys = { 0 };
	int ret;

	if (gc_console_host_keys(&keys, console, err) < 0) {
		if (instance_id)
			gc_error_prefix(err, "instance '%s'", instance_id);
		return -1;
	}
	ret = gc_known_hosts_pin(kh, host, port, instance_id, &keys, outcome, err);
	gc_host_keys_release(&keys);
	return ret;
}

int gc_known_hosts_forget(struct gc_known_hosts *kh, const char *host, unsigned port,
			  struct gc_error *err)
{
	char *hf;
	size_t before;
	int lock, ret = -1;

	if (check_args(host, port, NULL, err) < 0)
		return -1;
	hf = host_field(host, port);
	lock = lock_file(kh->path, err);
	if (lock < 0 || gc_known_hosts_reload(kh, err) < 0)
		goto out;
	before = kh->n;
	remove_host(kh, hf);
	if (kh->n != before && save(kh, err) < 0)
		goto out;
	ret = 0;
out:
	if (lock >= 0)
		close(lock);
	free(hf);
	return ret;
}
