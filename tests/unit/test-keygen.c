/*
 * test-keygen.c: Ed25519 key pairs checked against the real OpenSSH tools: ssh-keygen
 * must derive our public key from our private key file and print our fingerprint, and
 * we must load what ssh-keygen writes. Also: file modes, refusing to overwrite, load
 * round trips, and rejecting truncated or corrupted files. Everything happens in a
 * mkdtemp directory that is removed afterwards.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/str.h"

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = gc_xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/gc-keygen-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* The directory holds only plain files and symlinks we made: unlink each, then it. */
static int teardown(void **state)
{
	struct fixture *f = *state;
	struct dirent *e;
	DIR *d = opendir(f->dir);

	while (d && (e = readdir(d))) {
		char *p;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = gc_xasprintf("%s/%s", f->dir, e->d_name);
		unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

static char *path_in(const struct fixture *f, const char *name)
{
	return gc_xasprintf("%s/%s", f->dir, name);
}

/* Runs a shell command, returns its exit status and (stdout+stderr) output. */
static int run(struct gc_buf *out, const char *cmd)
{
	char chunk[512];
	size_t n;
	char *full = gc_xasprintf("%s 2>&1 </dev/null", cmd);
	FILE *p = popen(full, "r");
	int status;

	free(full);
	assert_non_null(p);
	gc_buf_reset(out);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		assert_int_equal(gc_buf_add(out, chunk, n), 0);
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first n space-separated fields of a line, without the newline. */
static char *fields(const char *line, int n)
{
	const char *p = line;

	for (int i = 0; i < n && *p; i++) {
		p += strcspn(p, " \n");
		if (i + 1 < n && *p == ' ')
			p++;
	}
	return gc_xstrndup(line, (size_t)(p - line));
}

static char *slurp(const char *path)
{
	struct gc_buf b = GC_BUF_INIT(1 << 20);
	char chunk[512];
	FILE *fp = fopen(path, "rb");
	size_t n;

	assert_non_null(fp);
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		assert_int_equal(gc_buf_add(&b, chunk, n), 0);
	fclose(fp);
	return gc_buf_detach(&b, NULL);
}

static void spit(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void test_generate_and_ssh_keygen_agrees(void **state)
{
	struct fixture *f = *state;
	struct gc_buf line = GC_BUF_INIT(0), out = GC_BUF_INIT(0);
	char fp[GC_SSH_FINGERPRINT_SIZE], fp2[GC_SSH_FINGERPRINT_SIZE];
	char *priv = path_in(f, "id_cluster"), *pub = path_in(f, "id_cluster.pub");
	char *cmd, *got, *want, *pubtext;
	struct gc_keypair kp;
	struct gc_error err;
	struct stat st;

	gc_error_init(&err);
	assert_int_equal(gc_keypair_generate(&kp, "gpucluster:llm-train", &err), 0);
	assert_string_equal(kp.comment, "gpucluster:llm-train");
	assert_int_equal(gc_keypair_write(&kp, priv, &err), 0);

	/* modes: private exactly 0600 */
	assert_int_equal(lstat(priv, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(lstat(pub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* the .pub file is our public line and a newline */
	assert_int_equal(gc_keypair_public_line(&line, &kp), 0);
	assert_true(gc_starts_with(line.data, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"));
	assert_true(gc_ends_with(line.data, " gpucluster:llm-train"));
	pubtext = slurp(pub);
	want = gc_xasprintf("%s\n", line.data);
	assert_string_equal(pubtext, want);
	free(want);
	free(pubtext);

	/* ssh-keygen derives the same public key from our private key file */
	cmd = gc_xasprintf("ssh-keygen -y -f '%s'", priv);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	got = fields(out.data, 2);
	want = fields(line.data, 2);
	assert_string_equal(got, want);
	free(got);
	free(want);

	/* ssh-keygen -l prints our fingerprint, for the .pub and the private file */
	gc_keypair_fingerprint(fp, &kp);
	assert_int_equal(strlen(fp), GC_SSH_FINGERPRINT_SIZE - 1);
	assert_int_equal(gc_ssh_fingerprint(fp2, line.data, &err), 0);
	assert_string_equal(fp, fp2);
	cmd = gc_xasprintf("ssh-keygen -l -E sha256 -f '%s'", pub);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	want = gc_xasprintf("256 %s gpucluster:llm-train (ED25519)\n", fp);
	assert_string_equal(out.data, want);
	free(want);
	cmd = gc_xasprintf("ssh-keygen -l -f '%s'", priv);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	assert_non_null(strstr(out.data, fp));

	gc_buf_release(&out);
	gc_buf_release(&line);
	gc_keypair_release(&kp);
	free(priv);
	free(pub);
}

static void test_pem_layout(void **state)
{
	struct gc_buf pem = GC_BUF_INIT(0);
	struct gc_keypair kp;
	const char *p;
	int lines = 0;

	(void)state;
	assert_int_equal(gc_keypair_generate(&kp, "c", NULL), 0);
	assert_int_equal(gc_keypair_private_pem(&pem, &kp, NULL), 0);
	assert_true(gc_starts_with(pem.data,
				   "-----BEGIN OPENSSH PRIVATE KEY-----\n"
				   "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB"));
	assert_true(gc_ends_with(pem.data, "\n-----END OPENSSH PRIVATE KEY-----\n"));
	/* body lines are 70 columns, except the last */
	p = strchr(pem.data, '\n') + 1;
	while (!gc_starts_with(p, "-----END")) {
		size_t n = strcspn(p, "\n");
		const char *next = p + n + 1;

		if (!gc_starts_with(next, "-----END"))
			assert_int_equal(n, 70);
		else
			assert_true(n > 0 && n <= 70);
		lines++;
		p = next;
	}
	assert_true(lines >= 5);
	gc_keypair_wipe_buf(&pem);
	gc_keypair_release(&kp);
}

static void test_load_round_trip(void **state)
{
	struct fixture *f = *state;
	char *priv = path_in(f, "k");
	struct gc_keypair a, b;
	struct gc_error err;

	gc_error_init(&err);
	assert_int_equal(gc_keypair_generate(&a, "round trip", &err), 0);
	assert_int_equal(gc_keypair_write(&a, priv, &err), 0);
	assert_int_equal(gc_keypair_load(&b, priv, &err), 0);
	assert_memory_equal(a.pub, b.pub, GC_ED25519_LEN);
	assert_memory_equal(a.priv, b.priv, GC_ED25519_LEN);
	assert_string_equal(a.comment, b.comment);
	gc_keypair_release(&a);
	gc_keypair_release(&b);
	/* release wipes and is idempotent */
	assert_null(b.comment);
	for (size_t i = 0; i < GC_ED25519_LEN; i++)
		assert_int_equal(b.priv[i], 0);
	gc_keypair_release(&b);
	gc_keypair_release(NULL);

	/* an empty comment: no third field in the public line, and it round-trips */
	assert_int_equal(gc_keypair_generate(&a, NULL, &err), 0);
	free(priv);
	priv = path_in(f, "k2");
	assert_int_equal(gc_keypair_write(&a, priv, &err), 0);
	assert_int_equal(gc_keypair_load(&b, priv, &err), 0);
	assert_string_equal(b.comment, "");
	assert_memory_equal(a.priv, b.priv, GC_ED25519_LEN);
	gc_keypair_release(&a);
	gc_keypair_release(&b);
	free(priv);
}

static void test_load_ssh_keygen_keys(void **state)
{
	struct fixture *f = *state;
	struct gc_buf out = GC_BUF_INIT(0), line = GC_BUF_INIT(0);
	char *priv = path_in(f, "theirs"), *pub = path_in(f, "theirs.pub");
	char *ec = path_in(f, "ec"), *ecpub = path_in(f, "ec.pub"), *enc = path_in(f, "enc");
	char fp[GC_SSH_FINGERPRINT_SIZE], *cmd, *pubtext;
	struct gc_keypair kp;
	struct gc_error err;

	gc_error_init(&err);
	cmd = gc_xasprintf("ssh-keygen -q -t ed25519 -N '' -C 'them@host' -f '%s'", priv);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	assert_int_equal(gc_keypair_load(&kp, priv, &err), 0);
	assert_string_equal(kp.comment, "them@host");
	assert_int_equal(gc_keypair_public_line(&line, &kp), 0);
	pubtext = slurp(pub);
	assert_true(gc_ends_with(pubtext, "\n"));
	pubtext[strlen(pubtext) - 1] = '\0';
	assert_string_equal(line.data, pubtext);
	free(pubtext);
	gc_keypair_release(&kp);

	/* fingerprints of other key types, as ssh-keygen prints them */
	cmd = gc_xasprintf("ssh-keygen -q -t ecdsa -N '' -C '' -f '%s'", ec);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	pubtext = slurp(ecpub);
	assert_int_equal(gc_ssh_fingerprint(fp, pubtext, &err), 0);
	cmd = gc_xasprintf("ssh-keygen -l -f '%s'", ecpub);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	assert_true(gc_starts_with(out.data, "256 "));
	assert_true(gc_starts_with(out.data + 4, fp));
	assert_int_equal(out.data[4 + strlen(fp)], ' ');
	free(pubtext);
	/* ... but we load only ed25519 */
	assert_int_equal(gc_keypair_load(&kp, ec, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);

	/* encrypted keys are refused as unsupported */
	cmd = gc_xasprintf("ssh-keygen -q -t ed25519 -a 1 -N 'pass phrase' -f '%s'", enc);
	assert_int_equal(run(&out, cmd), 0);
	free(cmd);
	assert_int_equal(gc_keypair_load(&kp, enc, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);

	gc_buf_release(&out);
	gc_buf_release(&line);
	free(priv);
	free(pub);
	free(ec);
	free(ecpub);
	free(enc);
}

static void test_refuses_to_overwrite(void **state)
{
	struct fixture *f = *state;
	char *priv = path_in(f, "id"), *pub = path_in(f, "id.pub");
	char *other = path_in(f, "other"), *otherpub = path_in(f, "other.pub");
	char *link_path = path_in(f, "via-link"), *target = path_in(f, "target");
	char *before, *before_pub, *after;
	struct gc_keypair a, b, c;
	struct gc_error err;
	DIR *d;
	struct dirent *e;
	int entries = 0;

	gc_error_init(&err);
	assert_int_equal(gc_keypair_generate(&a, "a", &err), 0);
	assert_int_equal(gc_keypair_generate(&b, "b", &err), 0);
	assert_int_equal(gc_keypair_write(&a, priv, &err), 0);
	before = slurp(priv);
	before_pub = slurp(pub);

	/* a second write to the same name fails and leaves both files as they were */
	assert_int_equal(gc_keypair_write(&b, priv, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_non_null(strstr(err.message, "already exists"));
	after = slurp(priv);
	assert_string_equal(before, after);
	free(after);
	after = slurp(pub);
	assert_string_equal(before_pub, after);
	free(after);
	assert_int_equal(gc_keypair_load(&c, priv, &err), 0);
	assert_memory_equal(c.priv, a.priv, GC_ED25519_LEN);
	gc_keypair_release(&c);

	/* a stray .pub alone also blocks, and no private file is left behind */
	spit(otherpub, "stale\n", 6);
	assert_int_equal(gc_keypair_write(&b, other, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_int_equal(access(other, F_OK), -1);

	/* a dangling symlink at the name is not followed */
	assert_int_equal(symlink(target, link_path), 0);
	assert_int_equal(gc_keypair_write(&b, link_path, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_int_equal(access(target, F_OK), -1);

	/* a directory that does not exist: GC_EIO, nothing created */
	free(other);
	other = path_in(f, "missing/id");
	assert_int_equal(gc_keypair_write(&b, other, &err), -1);
	assert_int_equal(err.code, GC_EIO);

	/* no temporary files left: id, id.pub, other.pub, via-link */
	d = opendir(f->dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			entries++;
	closedir(d);
	assert_int_equal(entries, 4);

	free(before);
	free(before_pub);
	gc_keypair_release(&a);
	gc_keypair_release(&b);
	free(priv);
	free(pub);
	free(other);
	free(otherpub);
	free(link_path);
	free(target);
}

/* Rewrites the PEM armour around a modified binary container. */
static char *rearmour(const struct gc_buf *bin)
{
	struct gc_buf b64 = GC_BUF_INIT(0), pem = GC_BUF_INIT(0);

	assert_int_equal(gc_base64_encode(&b64, bin->data, bin->len), 0);
	gc_buf_addstr(&pem, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
	for (size_t i = 0; i < b64.len; i += 70) {
		gc_buf_add(&pem, b64.data + i, b64.len - i < 70 ? b64.len - i : 70);
		gc_buf_addch(&pem, '\n');
	}
	gc_buf_addstr(&pem, "-----END OPENSSH PRIVATE KEY-----\n");
	gc_buf_release(&b64);
	return gc_buf_detach(&pem, NULL);
}

static void expect_invalid(const char *path, const char *text, size_t len)
{
	struct gc_keypair kp;
	struct gc_error err;

	gc_error_init(&err);
	unlink(path);
	spit(path, text, len);
	if (gc_keypair_load(&kp, path, &err) == 0) {
		gc_keypair_release(&kp);
		fail_msg("a corrupt key loaded: %.60s", text);
	}
	assert_int_equal(err.code, GC_EINVALID);
}

static void test_rejects_corrupt_files(void **state)
{
	struct fixture *f = *state;
	char *priv = path_in(f, "good"), *bad = path_in(f, "bad"), *good, *text;
	struct gc_buf bin = GC_BUF_INIT(0);
	const char *body, *end;
	struct gc_keypair kp;
	struct gc_error err;
	size_t len;
	/*
	 * Offsets into the container: magic 15, cipher 8, kdf 8, kdf options 4, count 4,
	 * public blob 4+51, section length 4; then check ints at 98, type 4+11, public key
	 * 4+32, private 4+64 (the seed at 161), comment.
	 */
	static const size_t flips[] = { 0, 20, 38, 60, 95, 100, 104, 130, 165, 190, 215 };

	gc_error_init(&err);
	assert_int_equal(gc_keypair_generate(&kp, "x", &err), 0);
	assert_int_equal(gc_keypair_write(&kp, priv, &err), 0);
	gc_keypair_release(&kp);
	good = slurp(priv);
	len = strlen(good);

	/* missing */
	assert_int_equal(gc_keypair_load(&kp, bad, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);

	/* truncated at several points, empty, and garbage */
	expect_invalid(bad, good, len / 2);
	expect_invalid(bad, good, len - 40);
	expect_invalid(bad, good, 36);
	expect_invalid(bad, "", 0);
	expect_invalid(bad, "hello\n", 6);
	/* trailing garbage, a bad base64 character, a NUL */
	text = gc_xasprintf("%sjunk\n", good);
	expect_invalid(bad, text, strlen(text));
	free(text);
	text = gc_xstrdup(good);
	text[60] = '*';
	expect_invalid(bad, text, len);
	text[60] = good[60];
	text[80] = '\0';
	expect_invalid(bad, text, len);
	free(text);

	/* bytes flipped inside the container, wherever they land */
	body = good + strlen("-----BEGIN OPENSSH PRIVATE KEY-----");
	end = strstr(body, "-----END");
	assert_int_equal(gc_base64_decode(&bin, body, (size_t)(end - body)), 0);
	assert_true(bin.len > 215);
	text = rearmour(&bin);
	assert_string_equal(text, good); /* the armour round-trips untouched */
	free(text);
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		bin.data[flips[i]] ^= 0x04;
		text = rearmour(&bin);
		expect_invalid(bad, text, strlen(text));
		free(text);
		bin.data[flips[i]] ^= 0x04;
	}

	gc_buf_release(&bin);
	free(good);
	free(priv);
	free(bad);
}

static void test_keys_differ_and_comments(void **state)
{
	struct gc_keypair a, b;
	struct gc_error err;
	char fa[GC_SSH_FINGERPRINT_SIZE], fb[GC_SSH_FINGERPRINT_SIZE];

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_keypair_generate(&a, "same", &err), 0);
	assert_int_equal(gc_keypair_generate(&b, "same", &err), 0);
	assert_memory_not_equal(a.pub, b.pub, GC_ED25519_LEN);
	assert_memory_not_equal(a.priv, b.priv, GC_ED25519_LEN);
	gc_keypair_fingerprint(fa, &a);
	gc_keypair_fingerprint(fb, &b);
	assert_string_not_equal(fa, fb);
	gc_keypair_release(&a);
	gc_keypair_release(&b);

	/* a comment that would break the .pub line is refused */
	assert_int_equal(gc_keypair_generate(&a, "two\nlines", &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(gc_keypair_generate(&a, "bad\xff utf8", &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
}

static void unhex(unsigned char *out, const char *hex)
{
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned int v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (unsigned char)v;
	}
}

static void test_fingerprint_known_answer(void **state)
{
	static const char line[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+"
				   "08lkBzoO4XLz2qYjJa8CGmj3B1Ea rfc8032";
	/* printed by `ssh-keygen -l` for that line */
	static const char want[] = "SHA256:bbXpuKG6zhzdmnxq256TlqzFBzRl2f6OOg722cYNbU8";
	struct fixture *f = *state;
	struct gc_buf out = GC_BUF_INIT(0);
	char fp[GC_SSH_FINGERPRINT_SIZE], *path = path_in(f, "rfc");
	struct gc_keypair kp, back;
	struct gc_error err;

	gc_error_init(&err);
	assert_int_equal(gc_ssh_fingerprint(fp, line, &err), 0);
	assert_string_equal(fp, want);

	/* the key pair of RFC 8032 test 1: our struct holds the raw seed and public key */
	gc_keypair_init(&kp);
	unhex(kp.priv, "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
	unhex(kp.pub, "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
	kp.comment = gc_xstrdup("rfc8032");
	gc_keypair_fingerprint(fp, &kp);
	assert_string_equal(fp, want);
	assert_int_equal(gc_keypair_public_line(&out, &kp), 0);
	assert_string_equal(out.data, line);
	/* loading checks that the seed makes the public key */
	assert_int_equal(gc_keypair_write(&kp, path, &err), 0);
	assert_int_equal(gc_keypair_load(&back, path, &err), 0);
	assert_memory_equal(back.pub, kp.pub, GC_ED25519_LEN);
	gc_keypair_release(&back);
	gc_keypair_release(&kp);
	gc_buf_release(&out);
	free(path);
}

static void test_fingerprint_bad_lines(void **state)
{
	char fp[GC_SSH_FINGERPRINT_SIZE];
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	/* leading blanks and a trailing newline are fine */
	assert_int_equal(gc_ssh_fingerprint(fp,
					    "  ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCs"
					    "Qq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea\n",
					    &err),
			 0);
	assert_string_equal(fp, "SHA256:bbXpuKG6zhzdmnxq256TlqzFBzRl2f6OOg722cYNbU8");

	assert_int_equal(gc_ssh_fingerprint(fp, "", &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(gc_ssh_fingerprint(fp, "ssh-ed25519", &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(gc_ssh_fingerprint(fp, "ssh-ed25519 !!!notbase64", &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	/* the blob names another type than the line */
	assert_int_equal(gc_ssh_fingerprint(fp,
					    "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+"
					    "08lkBzoO4XLz2qYjJa8CGmj3B1Ea",
					    &err),
			 -1);
	assert_int_equal(err.code, GC_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_generate_and_ssh_keygen_agrees, setup,
						teardown),
		cmocka_unit_test(test_pem_layout),
		cmocka_unit_test_setup_teardown(test_load_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_ssh_keygen_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_to_overwrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejects_corrupt_files, setup, teardown),
		cmocka_unit_test(test_keys_differ_and_comments),
		cmocka_unit_test_setup_teardown(test_fingerprint_known_answer, setup, teardown),
		cmocka_unit_test(test_fingerprint_bad_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
