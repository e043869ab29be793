/*
 * keygen.c: Ed25519 key pairs, generated with OpenSSL and stored in OpenSSH's formats
 * (see keygen.h).
 *
 * The private key file is PROTOCOL.key's "openssh-key-v1" container, unencrypted:
 *   "openssh-key-v1\0", string cipher "none", string kdf "none", string kdfoptions "",
 *   uint32 1 (keys), string public blob, string private section;
 * the private section is uint32 check, uint32 check (equal; derived from the public key,
 * see gc_keypair_private_pem), string
 * "ssh-ed25519", string pub, string seed||pub, string comment, then padding bytes
 * 1, 2, 3... to a multiple of 8. The whole is base64, 70 columns, in PEM armour, as
 * ssh-keygen writes it. Strings are a uint32 big-endian length and the bytes.
 *
 * Secret bytes are built in fixed stack arrays or in buffers whose capacity is reserved
 * before the secret is appended (so no realloc leaves a stale copy in freed memory), and
 * are wiped with OPENSSL_cleanse before they go.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/str.h"

#define KEY_TYPE       "ssh-ed25519"
#define AUTH_MAGIC     "openssh-key-v1" /* with its NUL: 15 bytes */
#define AUTH_MAGIC_LEN 15
#define PEM_BEGIN      "-----BEGIN OPENSSH PRIVATE KEY-----"
#define PEM_END	       "-----END OPENSSH PRIVATE KEY-----"
#define PEM_COLUMNS    70
#define PEM_BLOCK      8 /* the "none" cipher's block size, which the padding rounds to */
#define KEYFILE_MAX    ((size_t)16 << 10) /* ours are ~400 bytes; a cap on what we read */
#define PUB_BLOB_LEN   (4 + sizeof(KEY_TYPE) - 1 + 4 + GC_ED25519_LEN)
/* the binary container, with the longest comment, padding included */
#define PRIV_BIN_MAX                                                                               \
	(AUTH_MAGIC_LEN + 4 + 4 + 4 + 4 + 4 + 4 + 4 + PUB_BLOB_LEN + 4 + 8 + 4 +                   \
	 sizeof(KEY_TYPE) + 4 + GC_ED25519_LEN + 4 + 2 * GC_ED25519_LEN + 4 + GC_KEY_COMMENT_MAX + \
	 PEM_BLOCK)

static const char zeros[4096];

/* Makes sure n more bytes fit in b without a realloc, so secrets appended next are
 * never copied behind our back. */
static int reserve(struct gc_buf *b, size_t n)
{
	size_t len = b->len;

	while (n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		if (gc_buf_add(b, zeros, k) < 0) {
			gc_buf_truncate(b, len);
			return -1;
		}
		n -= k;
	}
	gc_buf_truncate(b, len);
	return 0;
}

void gc_wipe(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}

void gc_wipe_free(char *s)
{
	if (!s)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}

void gc_keypair_wipe_buf(struct gc_buf *b)
{
	if (!b)
		return;
	if (b->alloc)
		OPENSSL_cleanse(b->data, b->alloc);
	gc_buf_release(b);
}

void gc_keypair_init(struct gc_keypair *kp)
{
	memset(kp, 0, sizeof(*kp));
}

void gc_keypair_release(struct gc_keypair *kp)
{
	if (!kp)
		return;
	free(kp->comment);
	OPENSSL_cleanse(kp, sizeof(*kp));
	kp->comment = NULL;
}

/* ---- the wire format ---- */

struct writer {
	unsigned char *p;
	size_t len, cap;
	bool overflow;
};

static void put(struct writer *w, const void *data, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = true;
		return;
	}
	memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void put_u32(struct writer *w, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };

	put(w, b, 4);
}

static void put_string(struct writer *w, const void *data, size_t n)
{
	put_u32(w, (uint32_t)n);
	put(w, data, n);
}

struct reader {
	const unsigned char *p;
	size_t len, off;
};

static int get_u32(struct reader *r, uint32_t *v)
{
	if (r->len - r->off < 4)
		return -1;
	*v = (uint32_t)r->p[r->off] << 24 | (uint32_t)r->p[r->off + 1] << 16 |
		(uint32_t)r->p[r->off + 2] << 8 | r->p[r->off + 3];
	r->off += 4;
	return 0;
}

static int get_string(struct reader *r, const unsigned char **s, size_t *n)
{
	uint32_t len;

	if (get_u32(r, &len) < 0 || len > r->len - r->off)
		return -1;
	*s = r->p + r->off;
	*n = len;
	r->off += len;
	return 0;
}

static bool bytes_eq(const unsigned char *s, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(s, want, n);
}

/*
 * Whether a name from a key file is one OpenSSH really uses. A file that names a real
 * cipher or key type we do not handle is unsupported; any other name is corruption.
 */
static bool known_name(const unsigned char *s, size_t n, const char *const *names)
{
	for (; *names; names++) {
		size_t k = strlen(*names);
		bool prefix = (*names)[k - 1] == '-'; /* "ecdsa-sha2-" stands for a family */

		if ((prefix ? n > k : n == k) && !memcmp(s, *names, k))
			return true;
	}
	return false;
}

static const char *const ssh_ciphers[] = {
	"aes128-ctr",
	"aes192-ctr",
	"aes256-ctr",
	"aes128-cbc",
	"aes192-cbc",
	"aes256-cbc",
	"aes128-gcm@openssh.com",
	"aes256-gcm@openssh.com",
	"chacha20-poly1305@openssh.com",
	"3des-cbc",
	NULL,
};
static const char *const ssh_kdfs[] = { "bcrypt", NULL };
static const char *const ssh_key_types[] = {
	"ssh-rsa", "ssh-dss", "ssh-ed448", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-", "ssh-xmss", NULL,
};

static void pub_blob(struct writer *w, const unsigned char pub[GC_ED25519_LEN])
{
	put_string(w, KEY_TYPE, strlen(KEY_TYPE));
	put_string(w, pub, GC_ED25519_LEN);
}

int gc_keypair_public_line(struct gc_buf *out, const struct gc_keypair *kp)
{
	unsigned char blob[PUB_BLOB_LEN];
	struct writer w = { blob, 0, sizeof(blob), false };
	size_t start = out->len;

	pub_blob(&w, kp->pub);
	if (gc_buf_addstr(out, KEY_TYPE " ") < 0 || gc_base64_encode(out, blob, w.len) < 0)
		goto fail;
	if (kp->comment && *kp->comment && gc_buf_addf(out, " %s", kp->comment) < 0)
		goto fail;
	return 0;
fail:
	gc_buf_truncate(out, start);
	return -1;
}

/* ---- fingerprints ---- */

static void fingerprint_of_blob(char out[GC_SSH_FINGERPRINT_SIZE], const void *blob, size_t len)
{
	unsigned char md[GC_SHA256_LEN];
	struct gc_buf b = GC_BUF_INIT(64);
	size_t n;

	gc_sha256(blob, len, md);
	gc_base64_encode(&b, md, sizeof(md)); /* 44 bytes: fits the cap */
	n = b.len;
	while (n > 0 && b.data[n - 1] == '=')
		n--;
	memcpy(out, "SHA256:", 7);
	memcpy(out + 7, b.data, n);
	out[7 + n] = '\0';
	gc_buf_release(&b);
}

void gc_keypair_fingerprint(char out[GC_SSH_FINGERPRINT_SIZE], const struct gc_keypair *kp)
{
	unsigned char blob[PUB_BLOB_LEN];
	struct writer w = { blob, 0, sizeof(blob), false };

	pub_blob(&w, kp->pub);
	fingerprint_of_blob(out, blob, w.len);
}

int gc_ssh_fingerprint(char out[GC_SSH_FINGERPRINT_SIZE], const char *line, struct gc_error *err)
{
	struct gc_buf blob = GC_BUF_INIT(64 << 10);
	const char *type = line, *b64, *end;
	const unsigned char *s;
	struct reader r;
	size_t n, type_len;
	int ret = -1;

	while (*type == ' ' || *type == '\t')
		type++;
	type_len = strcspn(type, " \t\r\n");
	b64 = type + type_len;
	while (*b64 == ' ' || *b64 == '\t')
		b64++;
	end = b64 + strcspn(b64, " \t\r\n");
	if (!type_len || end == b64) {
		gc_error_set(err, GC_EINVALID, "not an ssh public key line");
		goto out;
	}
	if (gc_base64_decode(&blob, b64, (size_t)(end - b64)) < 0) {
		gc_error_set(err, GC_EINVALID, "ssh public key: bad base64");
		goto out;
	}
	r = (struct reader){ (const unsigned char *)blob.data, blob.len, 0 };
	if (get_string(&r, &s, &n) < 0 || n != type_len || memcmp(s, type, n)) {
		gc_error_set(err, GC_EINVALID, "ssh public key: the key is not of type '%.*s'",
			     (int)(type_len < 64 ? type_len : 64), type);
		goto out;
	}
	fingerprint_of_blob(out, blob.data, blob.len);
	ret = 0;
out:
	gc_buf_release(&blob);
	return ret;
}

/* ---- generation ---- */

static int comment_ok(const char *c)
{
	size_t n = strlen(c);

	if (n > GC_KEY_COMMENT_MAX || !gc_utf8_valid(c, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
			return 0;
	return 1;
}

/* The public key of an Ed25519 seed, so that a loaded file can be checked. */
static int derive_public(unsigned char pub[GC_ED25519_LEN],
			 const unsigned char seed[GC_ED25519_LEN])
{
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, GC_ED25519_LEN);
	size_t len = GC_ED25519_LEN;
	int ret = -1;

	if (pkey && EVP_PKEY_get_raw_public_key(pkey, pub, &len) == 1 && len == GC_ED25519_LEN)
		ret = 0;
	EVP_PKEY_free(pkey); /* OpenSSL wipes its copy of the key */
	ERR_clear_error();
	return ret;
}

int gc_keypair_from_seed(struct gc_keypair *out, const unsigned char seed[GC_ED25519_LEN],
			 const char *comment, struct gc_error *err)
{
	EVP_PKEY *pkey;
	struct gc_keypair kp;
	size_t len = GC_ED25519_LEN;

	if (!comment)
		comment = "";
	if (!comment_ok(comment))
		return gc_error_set(err, GC_EINVALID,
				    "key comment must be at most %d bytes of text without control "
				    "characters",
				    GC_KEY_COMMENT_MAX);
	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, GC_ED25519_LEN);
	gc_keypair_init(&kp);
	if (!pkey || EVP_PKEY_get_raw_public_key(pkey, kp.pub, &len) != 1 ||
	    len != GC_ED25519_LEN) {
		EVP_PKEY_free(pkey);
		ERR_clear_error();
		return gc_error_set(err, GC_EGENERIC, "cannot derive an ed25519 key (openssl)");
	}
	EVP_PKEY_free(pkey);
	memcpy(kp.priv, seed, GC_ED25519_LEN);
	kp.comment = gc_xstrdup(comment);
	*out = kp;
	return 0;
}

int gc_keypair_generate(struct gc_keypair *out, const char *comment, struct gc_error *err)
{
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;
	struct gc_keypair kp;
	size_t len;
	int ret = -1;

	gc_keypair_init(&kp);
	if (!comment)
		comment = "";
	if (!comment_ok(comment)) {
		gc_error_set(err, GC_EINVALID,
			     "key comment must be at most %d bytes of text without control "
			     "characters",
			     GC_KEY_COMMENT_MAX);
		goto out;
	}
	ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_keygen(ctx, &pkey) <= 0) {
		gc_error_set(err, GC_EGENERIC, "cannot generate an ed25519 key (openssl)");
		goto out;
	}
	len = GC_ED25519_LEN;
	if (EVP_PKEY_get_raw_private_key(pkey, kp.priv, &len) != 1 || len != GC_ED25519_LEN) {
		gc_error_set(err, GC_EGENERIC, "cannot read the new ed25519 key (openssl)");
		goto out;
	}
	len = GC_ED25519_LEN;
	if (EVP_PKEY_get_raw_public_key(pkey, kp.pub, &len) != 1 || len != GC_ED25519_LEN) {
		gc_error_set(err, GC_EGENERIC, "cannot read the new ed25519 key (openssl)");
		goto out;
	}
	kp.comment = gc_xstrdup(comment);
	*out = kp;
	gc_keypair_init(&kp); /* ownership moved to *out */
	ret = 0;
out:
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	gc_keypair_release(&kp);
	return ret;
}

/* ---- the private key file's text ---- */

int gc_keypair_private_pem(struct gc_buf *out, const struct gc_keypair *kp, struct gc_error *err)
{
	unsigned char bin[PRIV_BIN_MAX], section[PRIV_BIN_MAX], both[2 * GC_ED25519_LEN];
	struct writer w = { bin, 0, sizeof(bin), false };
	struct writer s = { section, 0, sizeof(section), false };
	struct gc_buf b64 = GC_BUF_INIT(0);
	const char *comment = kp->comment ? kp->comment : "";
	size_t start = out->len, pem_len;
	uint32_t check;
	int ret = -1;

	if (strlen(comment) > GC_KEY_COMMENT_MAX) {
		gc_error_set(err, GC_EINVALID, "key comment is too long");
		goto out;
	}
	/* OpenSSH draws the check word at random, but without a cipher it checks nothing: a
	 * word derived from the key makes the file a function of the key, which host keys
	 * sent in a replayable launch request need (the request must not change) */
	{
		unsigned char h[32];

		gc_sha256(kp->pub, GC_ED25519_LEN, h);
		check = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	}
	memcpy(both, kp->priv, GC_ED25519_LEN);
	memcpy(both + GC_ED25519_LEN, kp->pub, GC_ED25519_LEN);
	put_u32(&s, check);
	put_u32(&s, check);
	put_string(&s, KEY_TYPE, strlen(KEY_TYPE));
	put_string(&s, kp->pub, GC_ED25519_LEN);
	put_string(&s, both, sizeof(both));
	put_string(&s, comment, strlen(comment));
	for (unsigned char pad = 1; s.len % PEM_BLOCK; pad++)
		put(&s, &pad, 1);

	put(&w, AUTH_MAGIC, AUTH_MAGIC_LEN);
	put_string(&w, "none", 4); /* cipher */
	put_string(&w, "none", 4); /* kdf */
	put_string(&w, "", 0);	   /* kdf options */
	put_u32(&w, 1);		   /* number of keys */
	put_u32(&w, (uint32_t)PUB_BLOB_LEN);
	pub_blob(&w, kp->pub);
	put_string(&w, section, s.len);
	if (w.overflow || s.overflow) { /* cannot happen: the arrays fit the longest comment */
		gc_error_set(err, GC_EGENERIC, "private key container overflow");
		goto out;
	}

	pem_len = sizeof(PEM_BEGIN) + sizeof(PEM_END) + (w.len + 2) / 3 * 4 +
		(w.len + 2) / 3 * 4 / PEM_COLUMNS + 1;
	if (reserve(&b64, (w.len + 2) / 3 * 4) < 0 || reserve(out, pem_len) < 0 ||
	    gc_base64_encode(&b64, bin, w.len) < 0) {
		gc_error_set(err, GC_ETOOBIG, "private key does not fit its buffer");
		goto out;
	}
	gc_buf_addstr(out, PEM_BEGIN "\n");
	for (size_t i = 0; i < b64.len; i += PEM_COLUMNS) {
		size_t n = b64.len - i < PEM_COLUMNS ? b64.len - i : PEM_COLUMNS;

		gc_buf_add(out, b64.data + i, n);
		gc_buf_addch(out, '\n');
	}
	gc_buf_addstr(out, PEM_END "\n");
	ret = 0;
out:
	if (ret < 0)
		gc_buf_truncate(out, start);
	OPENSSL_cleanse(bin, sizeof(bin));
	OPENSSL_cleanse(section, sizeof(section));
	OPENSSL_cleanse(both, sizeof(both));
	gc_keypair_wipe_buf(&b64);
	return ret;
}

/* ---- files ---- */

static const char *errstr(int e, char *buf, size_t n)
{
	if (strerror_r(e, buf, n) != 0)
		return "unknown error";
	return buf;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The directory part of path, "." when there is none. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return gc_xstrdup(".");
	if (slash == path)
		return gc_xstrdup("/");
	return gc_xstrndup(path, (size_t)(slash - path));
}

/* Makes a rename or link in dir durable. Some file systems refuse fsync on a
 * directory (EINVAL): there is nothing more we can do there. */
static int sync_dir(const char *dir, struct gc_error *err)
{
	char ebuf[128];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return gc_error_set(err, GC_EIO, "cannot open directory '%s': %s", dir,
				    errstr(errno, ebuf, sizeof(ebuf)));
	if (fsync(fd) < 0 && errno != EINVAL) {
		int e = errno;

		close(fd);
		return gc_error_set(err, GC_EIO, "cannot sync directory '%s': %s", dir,
				    errstr(e, ebuf, sizeof(ebuf)));
	}
	close(fd);
	return 0;
}

/*
 * Creates path with exactly these contents, or fails leaving nothing: write a temporary
 * file beside it, sync it, and hard-link it into place. link(), unlike rename(), fails
 * when the name exists, so an existing key is never replaced, even by a racing process.
 */
static int write_new_file(const char *path, const char *data, size_t len, mode_t mode,
			  struct gc_error *err)
{
	char *dir = dir_of(path), *tmp = NULL, ebuf[128], hex[17];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	unsigned char rnd[8];
	struct stat st;
	int fd = -1, ret = -1;

	if (!*base) {
		gc_error_set(err, GC_EIO, "'%s' is not a file name", path);
		goto out;
	}
	if (lstat(path, &st) == 0) {
		gc_error_set(err, GC_EIO, "'%s' already exists; not overwriting a key", path);
		goto out;
	}
	if (gc_random_bytes(rnd, sizeof(rnd)) < 0) {
		gc_error_set(err, GC_EIO, "cannot get random bytes (openssl)");
		goto out;
	}
	gc_hex(rnd, sizeof(rnd), hex);
	tmp = gc_xasprintf("%s/.%s.%s.tmp", dir, base, hex);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		gc_error_set(err, GC_EIO, "cannot create '%s': %s", tmp,
			     errstr(errno, ebuf, sizeof(ebuf)));
		free(tmp);
		tmp = NULL; /* not ours: do not unlink it */
		goto out;
	}
	/* the umask may only narrow the mode; set it exactly (0600 for the private key) */
	if (fchmod(fd, mode) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", tmp,
			     errstr(errno, ebuf, sizeof(ebuf)));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", tmp,
			     errstr(errno, ebuf, sizeof(ebuf)));
		goto out;
	}
	fd = -1;
	if (link(tmp, path) < 0) {
		if (errno == EEXIST)
			gc_error_set(err, GC_EIO, "'%s' already exists; not overwriting a key",
				     path);
		else
			gc_error_set(err, GC_EIO, "cannot create '%s': %s", path,
				     errstr(errno, ebuf, sizeof(ebuf)));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(dir);
	return ret;
}

int gc_keypair_write(const struct gc_keypair *kp, const char *path, struct gc_error *err)
{
	struct gc_buf pem = GC_BUF_INIT(0), line = GC_BUF_INIT(0);
	char *pub_path = gc_xasprintf("%s.pub", path), *dir = dir_of(path);
	struct stat st;
	bool wrote_private = false;
	int ret = -1;

	/* refuse before writing anything when either name is taken */
	if (lstat(pub_path, &st) == 0) {
		gc_error_set(err, GC_EIO, "'%s' already exists; not overwriting a key", pub_path);
		goto out;
	}
	if (gc_keypair_private_pem(&pem, kp, err) < 0)
		goto out;
	if (gc_keypair_public_line(&line, kp) < 0 || gc_buf_addch(&line, '\n') < 0) {
		gc_error_set(err, GC_ETOOBIG, "public key line does not fit its buffer");
		goto out;
	}
	if (write_new_file(path, pem.data, pem.len, 0600, err) < 0)
		goto out;
	wrote_private = true;
	if (write_new_file(pub_path, line.data, line.len, 0644, err) < 0 || sync_dir(dir, err) < 0)
		goto out;
	ret = 0;
out:
	/* both files or neither: the private key we just linked is not in use yet */
	if (ret < 0 && wrote_private)
		unlink(path);
	gc_keypair_wipe_buf(&pem);
	gc_buf_release(&line);
	free(pub_path);
	free(dir);
	return ret;
}

/* ---- loading ---- */

/* Reads at most KEYFILE_MAX bytes into a reserved buffer (so never reallocated). */
static int read_key_file(struct gc_buf *out, const char *path, struct gc_error *err)
{
	char ebuf[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;

	if (fd < 0) {
		int e = errno;

		return gc_error_set(err, e == ENOENT ? GC_ENOTFOUND : GC_EIO,
				    "cannot open key '%s': %s", path,
				    errstr(e, ebuf, sizeof(ebuf)));
	}
	if (reserve(out, KEYFILE_MAX + 1) < 0) {
		gc_error_set(err, GC_ETOOBIG, "key '%s': buffer too small", path);
		goto out;
	}
	for (;;) {
		char chunk[512];
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gc_error_set(err, GC_EIO, "cannot read key '%s': %s", path,
				     errstr(errno, ebuf, sizeof(ebuf)));
			OPENSSL_cleanse(chunk, sizeof(chunk));
			goto out;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > KEYFILE_MAX || gc_buf_add(out, chunk, (size_t)n) < 0) {
			OPENSSL_cleanse(chunk, sizeof(chunk));
			gc_error_set(err, GC_EINVALID, "key '%s' is too large to be a key", path);
			goto out;
		}
		OPENSSL_cleanse(chunk, sizeof(chunk));
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

/* Parses the decoded container into kp. The error says what is wrong, not the bytes. */
static int parse_container(struct gc_keypair *kp, const unsigned char *bin, size_t len,
			   const char *path, struct gc_error *err)
{
	struct reader r = { bin, len, 0 }, sec, pub;
	const unsigned char *s, *blob, *section, *key, *priv, *comment;
	size_t n, blob_len, section_len, key_len, priv_len, comment_len;
	unsigned char derived[GC_ED25519_LEN];
	uint32_t nkeys, check1, check2;
	int ret = -1;

	if (len < AUTH_MAGIC_LEN || memcmp(bin, AUTH_MAGIC, AUTH_MAGIC_LEN))
		return gc_error_set(err, GC_EINVALID, "key '%s' is not an openssh-key-v1 key",
				    path);
	r.off = AUTH_MAGIC_LEN;
	if (get_string(&r, &s, &n) < 0)
		goto bad;
	if (known_name(s, n, ssh_ciphers))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "key '%s' is encrypted; only unencrypted keys are supported",
				    path);
	if (!bytes_eq(s, n, "none") || get_string(&r, &s, &n) < 0)
		goto bad;
	if (known_name(s, n, ssh_kdfs))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "key '%s' is encrypted; only unencrypted keys are supported",
				    path);
	/* one key per file is all OpenSSH has ever written */
	if (!bytes_eq(s, n, "none") || get_string(&r, &s, &n) < 0 || n != 0 ||
	    get_u32(&r, &nkeys) < 0 || nkeys != 1 || get_string(&r, &blob, &blob_len) < 0 ||
	    get_string(&r, &section, &section_len) < 0 || r.off != r.len)
		goto bad;

	pub = (struct reader){ blob, blob_len, 0 };
	if (get_string(&pub, &s, &n) < 0)
		goto bad;
	if (known_name(s, n, ssh_key_types))
		return gc_error_set(err, GC_EUNSUPPORTED, "key '%s' is not an ed25519 key", path);
	if (!bytes_eq(s, n, KEY_TYPE))
		goto bad;
	if (get_string(&pub, &key, &key_len) < 0 || key_len != GC_ED25519_LEN || pub.off != pub.len)
		goto bad;

	sec = (struct reader){ section, section_len, 0 };
	if (section_len % PEM_BLOCK || get_u32(&sec, &check1) < 0 || get_u32(&sec, &check2) < 0 ||
	    check1 != check2)
		goto bad;
	if (get_string(&sec, &s, &n) < 0 || !bytes_eq(s, n, KEY_TYPE) ||
	    get_string(&sec, &s, &n) < 0 || n != GC_ED25519_LEN || memcmp(s, key, n) ||
	    get_string(&sec, &priv, &priv_len) < 0 || priv_len != 2 * GC_ED25519_LEN ||
	    memcmp(priv + GC_ED25519_LEN, key, GC_ED25519_LEN) ||
	    get_string(&sec, &comment, &comment_len) < 0 || comment_len > GC_KEY_COMMENT_MAX)
		goto bad;
	for (unsigned char pad = 1; sec.off < sec.len; pad++)
		if (sec.p[sec.off++] != pad)
			goto bad;
	/* the public key must be the one the private key makes: catches flipped bits */
	if (derive_public(derived, priv) < 0 || memcmp(derived, key, GC_ED25519_LEN))
		goto bad;

	memcpy(kp->pub, key, GC_ED25519_LEN);
	memcpy(kp->priv, priv, GC_ED25519_LEN);
	kp->comment = gc_xstrndup((const char *)comment, comment_len);
	if (strlen(kp->comment) != comment_len || !comment_ok(kp->comment))
		goto bad;
	ret = 0;
	goto out;
bad:
	ret = gc_error_set(err, GC_EINVALID, "key '%s' is corrupt or truncated", path);
out:
	OPENSSL_cleanse(derived, sizeof(derived));
	return ret;
}

int gc_keypair_load(struct gc_keypair *out, const char *path, struct gc_error *err)
{
	struct gc_buf text = GC_BUF_INIT(KEYFILE_MAX + 1), bin = GC_BUF_INIT(KEYFILE_MAX);
	const char *body, *end;
	struct gc_keypair kp;
	int ret = -1;

	gc_keypair_init(&kp);
	if (read_key_file(&text, path, err) < 0)
		goto out;
	if (!gc_starts_with(text.data, PEM_BEGIN "\n") &&
	    !gc_starts_with(text.data, PEM_BEGIN "\r\n")) {
		gc_error_set(err, GC_EINVALID, "'%s' is not an openssh private key file", path);
		goto out;
	}
	body = text.data + strlen(PEM_BEGIN);
	end = strstr(body, PEM_END);
	if (!end || strlen(text.data) != text.len ||
	    strspn(end + strlen(PEM_END), " \t\r\n") != strlen(end + strlen(PEM_END)) ||
	    reserve(&bin, KEYFILE_MAX) < 0 ||
	    gc_base64_decode(&bin, body, (size_t)(end - body)) < 0) {
		gc_error_set(err, GC_EINVALID, "key '%s' is corrupt or truncated", path);
		goto out;
	}
	if (parse_container(&kp, (const unsigned char *)bin.data, bin.len, path, err) < 0)
		goto out;
	*out = kp;
	gc_keypair_init(&kp);
	ret = 0;
out:
	gc_keypair_release(&kp);
	gc_keypair_wipe_buf(&text);
	gc_keypair_wipe_buf(&bin);
	return ret;
}
