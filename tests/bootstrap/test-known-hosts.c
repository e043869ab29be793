/*
 * test-known-hosts.c: host keys from console output, the per-cluster known_hosts rules
 * (bootstrap/known_hosts.c) and shell quoting (bootstrap/ssh.c), without any node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootstrap/known_hosts.h"
#include "bootstrap/ssh.h"
#include "core/alloc.h"
#include "core/hash.h"
#include "core/keygen.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gc-test-kh.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char *cmd = gc_xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);

	(void)state;
	free(cmd);
	return rc;
}

/* "TYPE BASE64" of a fresh Ed25519 key, or of a fake key blob of another type */
static char *ed25519_line(void)
{
	struct gc_keypair kp;
	struct gc_buf b = GC_BUF_INIT(4096);
	char *s;

	assert_int_equal(gc_keypair_generate(&kp, "", NULL), 0);
	gc_keypair_public_line(&b, &kp);
	gc_keypair_release(&kp);
	s = gc_xstrdup(b.data);
	gc_buf_release(&b);
	return s;
}

static char *fake_line(const char *type, unsigned char fill)
{
	struct gc_buf blob = GC_BUF_INIT(4096), b64 = GC_BUF_INIT(8192);
	size_t n = strlen(type);
	char *s;

	gc_buf_addch(&blob, 0);
	gc_buf_addch(&blob, 0);
	gc_buf_addch(&blob, 0);
	gc_buf_addch(&blob, (char)n);
	gc_buf_addstr(&blob, type);
	for (int i = 0; i < 40; i++)
		gc_buf_addch(&blob, (char)(fill + i));
	gc_base64_encode(&b64, blob.data, blob.len);
	s = gc_xasprintf("%s %s", type, b64.data);
	gc_buf_release(&blob);
	gc_buf_release(&b64);
	return s;
}

static void one_key(struct gc_host_keys *k, const char *line)
{
	size_t sp = strcspn(line, " ");

	memset(k, 0, sizeof(*k));
	k->v = gc_xcalloc(1, sizeof(*k->v));
	k->alloc = k->n = 1;
	k->v[0].type = gc_xstrndup(line, sp);
	k->v[0].base64 = gc_xstrdup(line + sp + 1);
}

static void test_console(void **state)
{
	char *ed = ed25519_line(), *ed2 = ed25519_line(), *ec = fake_line("ecdsa-sha2-nistp256", 1);
	char *rsa = fake_line("ssh-rsa", 9);
	struct gc_host_keys k = { 0 };
	struct gc_error err;
	char *console;

	(void)state;
	gc_error_init(&err);
	/* cloud-init's shape, \r\n line ends, the fingerprint block before; ed25519 preferred */
	console = gc_xasprintf(
		"ci-info: boot\r\nec2: -----BEGIN SSH HOST KEY FINGERPRINTS-----\r\n"
		"ec2: 256 SHA256:x root@ip (ED25519)\r\n"
		"ec2: -----END SSH HOST KEY FINGERPRINTS-----\r\n"
		"-----BEGIN SSH HOST KEY KEYS-----\r\n%s root@ip\r\n%s root@ip\r\n%s root@ip\r\n"
		"-----END SSH HOST KEY KEYS-----\r\n[ 9.8] cloud-init finished\r\n",
		ec, ed, rsa);
	assert_int_equal(gc_console_host_keys(&k, console, &err), 0);
	assert_int_equal(k.n, 1);
	assert_string_equal(k.v[0].type, "ssh-ed25519");
	assert_int_equal(strncmp(ed + 12, k.v[0].base64, strlen(k.v[0].base64)), 0);
	gc_host_keys_release(&k);
	free(console);

	/* no ed25519: every key of a known type; prefixes before the type are fine; a key
	 * whose blob names another type and junk lines are ignored */
	console = gc_xasprintf("-----BEGIN SSH HOST KEY KEYS-----\nec2: %s c\njunk line\n"
			       "ssh-dss AAAA\n%s\n%s\n-----END SSH HOST KEY KEYS-----\n",
			       ec, rsa, "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIA==");
	assert_int_equal(gc_console_host_keys(&k, console, &err), 0);
	assert_int_equal(k.n, 2);
	assert_string_equal(k.v[0].type, "ecdsa-sha2-nistp256");
	assert_string_equal(k.v[1].type, "ssh-rsa");
	gc_host_keys_release(&k);
	free(console);

	/* two boots: the last complete block counts; an unfinished block after it does not */
	console = gc_xasprintf(
		"-----BEGIN SSH HOST KEY KEYS-----\n%s\n-----END SSH HOST KEY KEYS-----\n"
		"-----BEGIN SSH HOST KEY KEYS-----\n%s\n-----END SSH HOST KEY KEYS-----\n"
		"-----BEGIN SSH HOST KEY KEYS-----\n%s\n",
		ed, ed2, ed);
	assert_int_equal(gc_console_host_keys(&k, console, &err), 0);
	assert_int_equal(k.n, 1);
	assert_int_equal(strncmp(ed2 + 12, k.v[0].base64, strlen(k.v[0].base64)), 0);
	gc_host_keys_release(&k);
	free(console);

	/* nothing yet, an unfinished block, an empty one */
	assert_int_equal(gc_console_host_keys(&k, "", &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_int_equal(gc_console_host_keys(&k, NULL, &err), -1);
	console = gc_xasprintf("-----BEGIN SSH HOST KEY KEYS-----\n%s\n", ed);
	assert_int_equal(gc_console_host_keys(&k, console, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	free(console);
	assert_int_equal(gc_console_host_keys(&k,
					      "-----BEGIN SSH HOST KEY KEYS-----\nnothing\n"
					      "-----END SSH HOST KEY KEYS-----\n",
					      &err),
			 -1);
	assert_non_null(strstr(err.message, "holds no usable key"));
	free(ed);
	free(ed2);
	free(ec);
	free(rsa);
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	struct gc_buf b = GC_BUF_INIT(1 << 20);
	char chunk[4096];
	size_t n;

	assert_non_null(fp);
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		gc_buf_add(&b, chunk, n);
	fclose(fp);
	return gc_buf_detach(&b, NULL);
}

static void test_pin_rules(void **state)
{
	char *path = gc_xasprintf("%s/kh1", dir), *text, *want;
	char *ed = ed25519_line(), *ed2 = ed25519_line(), *ec = fake_line("ecdsa-sha2-nistp256", 5);
	struct gc_known_hosts kh, other;
	struct gc_host_keys k1, k2, kec;
	struct gc_buf blob = GC_BUF_INIT(4096), methods = GC_BUF_INIT(1024);
	char fpr1[GC_SSH_FINGERPRINT_SIZE], fpr2[GC_SSH_FINGERPRINT_SIZE];
	char expected[GC_SSH_FINGERPRINT_SIZE];
	enum gc_pin_outcome how;
	struct gc_error err;
	struct stat st;
	FILE *fp;

	(void)state;
	gc_error_init(&err);
	one_key(&k1, ed);
	one_key(&k2, ed2);
	one_key(&kec, ec);
	assert_int_equal(gc_ssh_fingerprint(fpr1, ed, NULL), 0);
	assert_int_equal(gc_ssh_fingerprint(fpr2, ed2, NULL), 0);

	/* somebody's comment and another host's plain entry are kept as they are */
	fp = fopen(path, "w");
	fprintf(fp, "# hand-written\n\n10.1.1.1 %s\n", ec);
	fclose(fp);
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), 0);
	assert_int_equal(kh.n, 3);

	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.3", 2222, "i-a", &k1, &how, &err), 0);
	assert_int_equal(how, GC_PIN_ADDED);
	text = slurp(path);
	want = gc_xasprintf("# hand-written\n\n10.1.1.1 %s\n[127.77.0.3]:2222 %s "
			    "gpucluster:instance=i-a\n",
			    ec, ed);
	assert_string_equal(text, want);
	free(text);
	free(want);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* check: match, unknown host or port, changed; the expected key is named */
	gc_base64_decode(&blob, k1.v[0].base64, strlen(k1.v[0].base64));
	assert_int_equal(
		gc_known_hosts_check(&kh, "127.77.0.3", 2222, blob.data, blob.len, expected),
		GC_HOST_KEY_MATCH);
	assert_int_equal(gc_known_hosts_check(&kh, "127.77.0.3", 22, blob.data, blob.len, NULL),
			 GC_HOST_KEY_UNKNOWN);
	assert_int_equal(gc_known_hosts_check(&kh, "127.77.0.4", 2222, blob.data, blob.len, NULL),
			 GC_HOST_KEY_UNKNOWN);
	gc_buf_reset(&blob);
	gc_base64_decode(&blob, k2.v[0].base64, strlen(k2.v[0].base64));
	assert_int_equal(
		gc_known_hosts_check(&kh, "127.77.0.3", 2222, blob.data, blob.len, expected),
		GC_HOST_KEY_CHANGED);
	assert_string_equal(expected, fpr1);
	/* a key of another type than the pinned one is a change too, not an unknown host */
	gc_buf_reset(&blob);
	gc_base64_decode(&blob, kec.v[0].base64, strlen(kec.v[0].base64));
	assert_int_equal(
		gc_known_hosts_check(&kh, "127.77.0.3", 2222, blob.data, blob.len, expected),
		GC_HOST_KEY_CHANGED);
	assert_string_equal(expected, fpr1);
	gc_known_hosts_methods(&kh, "127.77.0.3", 2222, &methods);
	assert_string_equal(methods.data, "ssh-ed25519");
	gc_buf_reset(&methods);
	gc_known_hosts_methods(&kh, "127.77.0.9", 2222, &methods);
	assert_string_equal(methods.data, "");

	/* the same key again: nothing changes */
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.3", 2222, "i-a", &k1, &how, &err), 0);
	assert_int_equal(how, GC_PIN_SAME);
	/* another key for the same instance, or with no instance named: refused */
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.3", 2222, "i-a", &k2, &how, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	want = gc_xasprintf("host key for 127.77.0.3:2222 changed (expected %s, got %s)", fpr1,
			    fpr2);
	assert_string_equal(err.message, want);
	free(want);
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.3", 2222, NULL, &k2, &how, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	/* a new instance on the address: replaced */
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.3", 2222, "i-b", &k2, &how, &err), 0);
	assert_int_equal(how, GC_PIN_REPLACED);
	text = slurp(path);
	want = gc_xasprintf("# hand-written\n\n10.1.1.1 %s\n[127.77.0.3]:2222 %s "
			    "gpucluster:instance=i-b\n",
			    ec, ed2);
	assert_string_equal(text, want);
	free(text);
	free(want);

	/* a line pinned by hand, without an instance id, is never replaced */
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.5", 22, NULL, &k1, &how, &err), 0);
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.5", 22, "i-c", &k2, &how, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "host key for 127.77.0.5:22 changed"));
	text = slurp(path);
	want = gc_xasprintf("\n127.77.0.5 %s\n", ed);
	assert_non_null(strstr(text, want));
	free(text);
	free(want);

	/* two holders of the file: each pin re-reads under the lock, so none is lost */
	assert_int_equal(gc_known_hosts_open(&other, path, &err), 0);
	assert_int_equal(gc_known_hosts_pin(&kh, "127.77.0.6", 2222, "i-d", &k1, &how, &err), 0);
	assert_int_equal(gc_known_hosts_pin(&other, "127.77.0.7", 2222, "i-e", &k2, &how, &err), 0);
	assert_int_equal(gc_known_hosts_reload(&kh, &err), 0);
	gc_buf_reset(&blob);
	gc_base64_decode(&blob, k1.v[0].base64, strlen(k1.v[0].base64));
	assert_int_equal(
		gc_known_hosts_check(&other, "127.77.0.6", 2222, blob.data, blob.len, NULL),
		GC_HOST_KEY_MATCH);
	gc_known_hosts_release(&other);

	/* forget: the lines of that endpoint go, the rest stay */
	assert_int_equal(gc_known_hosts_forget(&kh, "127.77.0.3", 2222, &err), 0);
	assert_int_equal(gc_known_hosts_forget(&kh, "127.77.0.3", 2222, &err), 0);
	text = slurp(path);
	assert_null(strstr(text, "[127.77.0.3]:2222"));
	assert_non_null(strstr(text, "[127.77.0.7]:2222"));
	assert_non_null(strstr(text, "# hand-written"));
	free(text);

	/* bad arguments */
	assert_int_equal(gc_known_hosts_pin(&kh, "a b", 22, NULL, &k1, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(gc_known_hosts_pin(&kh, "1.2.3.4", 22, "i x", &k1, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	free(k1.v[0].base64);
	k1.v[0].base64 = gc_xstrdup(kec.v[0].base64); /* an ecdsa blob under the ed25519 name */
	assert_int_equal(gc_known_hosts_pin(&kh, "1.2.3.4", 22, NULL, &k1, NULL, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);

	gc_known_hosts_release(&kh);
	gc_host_keys_release(&k1);
	gc_host_keys_release(&k2);
	gc_host_keys_release(&kec);
	gc_buf_release(&blob);
	gc_buf_release(&methods);
	free(ed);
	free(ed2);
	free(ec);
	free(path);
}

static void test_bad_files(void **state)
{
	char *path = gc_xasprintf("%s/kh2", dir);
	char *ed = ed25519_line();
	struct gc_known_hosts kh;
	struct gc_error err;
	FILE *fp;

	(void)state;
	gc_error_init(&err);
	/* missing: empty, and nothing is created by opening */
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), 0);
	assert_int_equal(kh.n, 0);
	assert_int_not_equal(access(path, F_OK), 0);
	gc_known_hosts_release(&kh);

	fp = fopen(path, "w");
	fprintf(fp, "# ok\n|1|c2FsdA==|aGFzaA== %s\n", ed);
	fclose(fp);
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "line 2: hashed host names"));

	fp = fopen(path, "w");
	fprintf(fp, "@revoked * %s\n", ed);
	fclose(fp);
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);

	fp = fopen(path, "w");
	fprintf(fp, "1.2.3.4 %s\n1.2.3.5 ssh-ed25519\n", ed);
	fclose(fp);
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "line 2:"));

	fp = fopen(path, "w");
	fprintf(fp, "1.2.3.4 ssh-rsa %s\n", ed + 12);
	fclose(fp);
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	free(ed);
	free(path);
}

/* Runs `sh -c PREFIX printf ...` locally: what the node's shell does with our quoting. */
static void test_quoting(void **state)
{
	static const char *const values[] = {
		"plain", "it's",     "'", "''", "$(id)",   "`id`", "a\nb", "\\",
		"\"",	 "; exit 1", "",  "*",	"${HOME}", "é ✓",  "-n",   "'\\''",
	};
	const size_t n = sizeof(values) / sizeof(values[0]);
	struct gc_ssh_env env[sizeof(values) / sizeof(values[0])];
	struct gc_buf cmd = GC_BUF_INIT(1 << 16), script = GC_BUF_INIT(1 << 16);
	struct gc_buf out = GC_BUF_INIT(1 << 16), want = GC_BUF_INIT(1 << 16);
	char names[sizeof(values) / sizeof(values[0])][8];
	struct gc_error err;
	char chunk[1024];
	size_t got;
	FILE *p;

	(void)state;
	gc_error_init(&err);
	gc_buf_addstr(&script, "printf '%s|'");
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "V%zu", i);
		env[i].name = names[i];
		env[i].value = values[i];
		gc_buf_addf(&script, " \"$V%zu\"", i);
		gc_buf_addf(&want, "%s|", values[i]);
	}
	assert_int_equal(gc_sh_env_prefix(&cmd, env, n, &err), 0);
	assert_int_equal(strncmp(cmd.data, "export V0='plain' V1='it'\\''s' V2=''\\''' ", 41), 0);
	gc_buf_addstr(&cmd, script.data);
	gc_buf_reset(&script);
	gc_buf_addstr(&script, "sh -c ");
	gc_sh_quote(&script, cmd.data);
	p = popen(script.data, "r");
	assert_non_null(p);
	while ((got = fread(chunk, 1, sizeof(chunk), p)) > 0)
		gc_buf_add(&out, chunk, got);
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out.data, want.data);

	/* no variables: no prefix; a bad name: nothing appended */
	gc_buf_reset(&cmd);
	assert_int_equal(gc_sh_env_prefix(&cmd, env, 0, &err), 0);
	assert_int_equal(cmd.len, 0);
	env[3].name = "A=B";
	assert_int_equal(gc_sh_env_prefix(&cmd, env, n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(cmd.len, 0);
	gc_buf_release(&cmd);
	gc_buf_release(&script);
	gc_buf_release(&out);
	gc_buf_release(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_console),
		cmocka_unit_test(test_pin_rules),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_quoting),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
