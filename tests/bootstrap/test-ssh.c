/*
 * test-ssh.c: one SSH connection (bootstrap/ssh.c) against gpucluster-sim's real sshd nodes.
 *
 * Connect and run with separate stdout/stderr and exit codes, stdin uploads, signals;
 * environment quoting with hostile values; the output cap; host keys pinned from console
 * output (and the file readable by OpenSSH and libssh2); a changed host key refused;
 * trust on first use off (refused) and on (pinned with the instance id); a client key the
 * node does not know; refused, silent and dropped connections; keepalives that go
 * unanswered; command timeouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <libssh2.h>
#include <poll.h>
#include <sys/stat.h>

#include "bootstrap/ssh.h"
#include "core/hash.h"
#include "node-fixture.h"

static struct gc_ssh *session(struct nfx *f, const struct sim_instance *inst,
			      const struct gc_keypair *key, bool tofu)
{
	struct gc_ssh_opts o = {
		.host = inst->public_ip,
		.port = (unsigned)inst->ssh_port,
		.user = "ubuntu",
		.key = key,
		.known_hosts = &f->kh,
		.trust_on_first_use = tofu,
		.instance_id = inst->id,
		.connect_timeout_ms = 10000,
	};
	struct gc_error err;
	struct gc_ssh *s;

	gc_error_init(&err);
	s = gc_ssh_new(&o, &err);
	assert_non_null(s);
	return s;
}

static struct gc_ssh *connected(struct nfx *f, const struct sim_instance *inst)
{
	struct gc_ssh *s = session(f, inst, &f->key, false);
	struct gc_error err;

	gc_error_init(&err);
	if (gc_ssh_connect(s, &err) < 0)
		fail_msg("connect: %s", err.message);
	return s;
}

static int run(struct gc_ssh *s, const char *command, struct gc_ssh_result *res,
	       struct gc_error *err)
{
	struct gc_ssh_cmd c = { .command = command, .what = "test" };

	return gc_ssh_exec(s, &c, res, err);
}

static struct sim_instance *up_node(struct nfx *f, const char *faults)
{
	struct sim_instance *inst = nfx_node(f, faults, true);

	assert_true(nfx_wait_listening(inst, 15));
	assert_int_equal(nfx_pin(f, inst), 0);
	return inst;
}

static void test_run(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_ssh_result res;
	struct gc_error err;
	struct gc_buf data = GC_BUF_INIT(1 << 20);
	char want[GC_SHA256_HEX_LEN];
	struct gc_ssh *s;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = up_node(f, NULL);

	s = connected(f, inst);
	assert_string_equal(gc_ssh_host_fingerprint(s), inst->host_key_fpr);
	gc_ssh_result_init(&res);
	gc_error_init(&err);

	/* separate streams and the exit code */
	assert_int_equal(run(s, "echo out; echo err >&2; echo more; exit 7", &res, &err), 0);
	assert_int_equal(res.exit_status, 7);
	assert_string_equal(res.out.data, "out\nmore\n");
	assert_string_equal(res.err.data, "err\n");
	assert_false(res.out_truncated);

	/* the same connection runs the next command; exit 0; the node is the sandbox */
	assert_int_equal(run(s, "id -un; hostname", &res, &err), 0);
	assert_int_equal(res.exit_status, 0);
	assert_string_equal(res.out.data, "ubuntu\nip-10-0-0-10\n");
	assert_string_equal(res.err.data, "");

	/* stdin: 600 KiB of every byte value, written to a file and hashed there */
	for (unsigned i = 0; i < 600 * 1024; i++)
		gc_buf_addch(&data, (char)(i * 7 + i / 256));
	gc_sha256_hex(data.data, data.len, want);
	struct gc_ssh_cmd up = { .command = "cat > up.bin && sha256sum < up.bin | cut -d' ' -f1",
				 .stdin_data = data.data,
				 .stdin_len = data.len,
				 .what = "upload" };
	assert_int_equal(gc_ssh_exec(s, &up, &res, &err), 0);
	assert_int_equal(res.exit_status, 0);
	assert_int_equal(strncmp(res.out.data, want, 64), 0);

	/* a command that does not read stdin still ends */
	up.command = "echo ignored";
	assert_int_equal(gc_ssh_exec(s, &up, &res, &err), 0);
	assert_string_equal(res.out.data, "ignored\n");

	/* killed by a signal */
	assert_int_equal(run(s, "kill -TERM $$", &res, &err), 0);
	assert_int_equal(res.exit_status, -1);
	assert_string_equal(res.exit_signal, "TERM");

	/* a command timeout closes the connection; a new one works */
	struct gc_ssh_cmd slow = { .command = "sleep 20", .timeout_ms = 400, .what = "nap" };
	double t0 = nfx_now();

	assert_int_equal(gc_ssh_exec(s, &slow, &res, &err), -1);
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_true(nfx_now() - t0 < 3);
	assert_non_null(strstr(err.message, "'nap' timed out after 1 s on 127.77."));
	assert_false(gc_ssh_connected(s));
	assert_int_equal(gc_ssh_connect(s, &err), 0);
	assert_int_equal(run(s, "echo again", &res, &err), 0);
	assert_string_equal(res.out.data, "again\n");

	gc_ssh_free(s);
	gc_ssh_result_release(&res);
	gc_buf_release(&data);
	nfx_free(f);
}

static void test_env_quoting(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_ssh_result res;
	struct gc_error err;
	struct gc_buf want = GC_BUF_INIT(1 << 16);
	static const struct gc_ssh_env env[] = {
		{ "A", "it's" },
		{ "B", "$(touch /tmp/pwned-b)" },
		{ "C", "`touch /tmp/pwned-c`" },
		{ "D", "two\nlines" },
		{ "E", "back\\slash \"dq\" 'sq' ''" },
		{ "F", "'; touch /tmp/pwned-f; echo '" },
		{ "G", "" },
		{ "H", "* ? [a] ~ $HOME ${X:-y} ;& | > <" },
		{ "I", "ünï ✓" },
		{ "J", "'" },
		{ "_k9", "--" },
	};
	const size_t n = sizeof(env) / sizeof(env[0]);

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = up_node(f, NULL);
	struct gc_ssh *s = connected(f, inst);
	struct gc_ssh_cmd c = {
		.command =
			"printf '%s|' \"$A\" \"$B\" \"$C\" \"$D\" \"$E\" \"$F\" \"$G\" \"$H\" \"$I\" "
			"\"$J\" \"$_k9\"; ls /tmp/pwned-* 2>/dev/null | wc -l",
		.env = env,
		.n_env = n,
	};

	gc_ssh_result_init(&res);
	gc_error_init(&err);
	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), 0);
	for (size_t i = 0; i < n; i++)
		gc_buf_addf(&want, "%s|", env[i].value);
	gc_buf_addstr(&want, "0\n");
	assert_string_equal(res.out.data, want.data);
	assert_int_equal(res.exit_status, 0);

	/* names are checked, not quoted */
	static const struct gc_ssh_env bad[] = { { "X; rm -rf /", "v" } };
	c.env = bad;
	c.n_env = 1;
	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_true(gc_ssh_connected(s));
	assert_false(gc_sh_name_ok("9a"));
	assert_false(gc_sh_name_ok(""));
	assert_true(gc_sh_name_ok("CUDA_12"));

	gc_ssh_free(s);
	gc_ssh_result_release(&res);
	gc_buf_release(&want);
	nfx_free(f);
}

static void test_output_cap(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_ssh_result res;
	struct gc_error err;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = up_node(f, NULL);
	struct gc_ssh *s = connected(f, inst);
	/* 3 MiB on stdout and 5000 bytes on stderr, capped at 1000: the command still
	 * finishes (the rest is read and dropped), the head is kept */
	struct gc_ssh_cmd c = {
		.command = "printf 'head'; head -c 3145728 /dev/zero | tr '\\0' a; "
			   "head -c 5000 /dev/zero | tr '\\0' b >&2; echo done >&2; exit 3",
		.max_output = 1000,
	};

	gc_ssh_result_init(&res);
	gc_error_init(&err);
	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), 0);
	assert_int_equal(res.exit_status, 3);
	assert_int_equal(res.out.len, 1000);
	assert_true(res.out_truncated);
	assert_int_equal(strncmp(res.out.data, "headaaaa", 8), 0);
	assert_int_equal(res.err.len, 1000);
	assert_true(res.err_truncated);
	assert_null(strchr(res.err.data, 'd'));

	/* the next command starts with clean flags and the default cap */
	c.command = "echo small";
	c.max_output = 0;
	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), 0);
	assert_string_equal(res.out.data, "small\n");
	assert_false(res.out_truncated);

	gc_ssh_free(s);
	gc_ssh_result_release(&res);
	nfx_free(f);
}

static void test_pinned_from_console(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_error err;
	enum gc_pin_outcome how;
	struct stat st;
	char *cmd, host[64];

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = nfx_node(f, NULL, true);

	gc_error_init(&err);
	assert_int_equal(gc_known_hosts_pin_console(&f->kh, inst->public_ip, 2222, inst->id,
						    inst->console, &how, &err),
			 0);
	assert_int_equal(how, GC_PIN_ADDED);
	assert_int_equal(gc_known_hosts_pin_console(&f->kh, inst->public_ip, 2222, inst->id,
						    inst->console, &how, &err),
			 0);
	assert_int_equal(how, GC_PIN_SAME);
	assert_int_equal(stat(f->kh_path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(f->kh.n, 1);
	assert_string_equal(f->kh.v[0].instance, inst->id);

	/* OpenSSH finds it, and libssh2's own known_hosts parser matches the host's key */
	snprintf(host, sizeof(host), "[%s]:2222", inst->public_ip);
	cmd = gc_xasprintf("ssh-keygen -F '%s' -f '%s' | grep -q 'ssh-ed25519'", host, f->kh_path);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	{
		LIBSSH2_SESSION *ls = libssh2_session_init();
		LIBSSH2_KNOWNHOSTS *lk = libssh2_knownhost_init(ls);
		struct gc_host_keys keys = { 0 };
		struct gc_buf blob = GC_BUF_INIT(4096);
		struct libssh2_knownhost *found = NULL;

		assert_int_equal(
			libssh2_knownhost_readfile(lk, f->kh_path, LIBSSH2_KNOWNHOST_FILE_OPENSSH),
			1);
		assert_int_equal(gc_console_host_keys(&keys, inst->console, &err), 0);
		assert_int_equal(
			gc_base64_decode(&blob, keys.v[0].base64, strlen(keys.v[0].base64)), 0);
		assert_int_equal(libssh2_knownhost_checkp(lk, inst->public_ip, 2222, blob.data,
							  blob.len,
							  LIBSSH2_KNOWNHOST_TYPE_PLAIN |
								  LIBSSH2_KNOWNHOST_KEYENC_RAW |
								  LIBSSH2_KNOWNHOST_KEY_ED25519,
							  &found),
				 LIBSSH2_KNOWNHOST_CHECK_MATCH);
		gc_host_keys_release(&keys);
		gc_buf_release(&blob);
		libssh2_knownhost_free(lk);
		libssh2_session_free(ls);
	}

	/* with the pin, trust on first use off: connects */
	assert_true(nfx_wait_listening(inst, 15));
	struct gc_ssh *s = connected(f, inst);
	assert_string_equal(gc_ssh_host_fingerprint(s), inst->host_key_fpr);
	gc_ssh_free(s);
	nfx_free(f);
}

static void test_changed_host_key(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_error err;
	enum gc_pin_outcome how;
	char *want;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *a = nfx_node(f, NULL, true);
	struct sim_instance *b = nfx_node(f, NULL, false);

	/* a's address pinned with b's key (its console) for a's instance: a man in the middle,
	 * as far as we can tell */
	gc_error_init(&err);
	assert_int_equal(gc_known_hosts_pin_console(&f->kh, a->public_ip, 2222, a->id, b->console,
						    &how, &err),
			 0);
	assert_true(nfx_wait_listening(a, 15));
	struct gc_ssh *s = session(f, a, &f->key, true);

	assert_int_equal(gc_ssh_connect(s, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	want = gc_xasprintf("host key for %s:2222 changed (expected %s, got %s)", a->public_ip,
			    b->host_key_fpr, a->host_key_fpr);
	assert_non_null(strstr(err.message, want));
	free(want);
	assert_false(gc_ssh_connected(s));
	/* trust on first use does not paper over it, and nothing was rewritten */
	assert_int_equal(f->kh.n, 1);
	assert_int_equal(gc_ssh_connect(s, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);

	/* the console of the same instance now showing a's key: refused the same way */
	assert_int_equal(gc_known_hosts_pin_console(&f->kh, a->public_ip, 2222, a->id, a->console,
						    &how, &err),
			 -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "changed (expected"));
	/* ... but a new instance that got the address replaces the old pin */
	assert_int_equal(gc_known_hosts_pin_console(&f->kh, a->public_ip, 2222, "i-new", a->console,
						    &how, &err),
			 0);
	assert_int_equal(how, GC_PIN_REPLACED);
	assert_int_equal(f->kh.n, 1);
	assert_string_equal(f->kh.v[0].instance, "i-new");
	assert_int_equal(gc_ssh_connect(s, &err), 0);
	gc_ssh_free(s);
	nfx_free(f);
}

static void test_tofu(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_error err;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = nfx_node(f, NULL, true);

	assert_true(nfx_wait_listening(inst, 15));
	gc_error_init(&err);
	/* unknown host, trust on first use off: refused, nothing pinned */
	struct gc_ssh *s = session(f, inst, &f->key, false);

	assert_int_equal(gc_ssh_connect(s, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "is not pinned and trust on first use is off"));
	assert_non_null(strstr(err.message, inst->host_key_fpr));
	assert_int_equal(f->kh.n, 0);
	assert_int_not_equal(access(f->kh_path, F_OK), 0);
	gc_ssh_free(s);

	/* on: pinned with the instance id, and later connections need no trust */
	s = session(f, inst, &f->key, true);
	assert_int_equal(gc_ssh_connect(s, &err), 0);
	gc_ssh_free(s);
	assert_int_equal(f->kh.n, 1);
	assert_string_equal(f->kh.v[0].instance, inst->id);
	assert_int_equal(gc_known_hosts_reload(&f->kh, &err), 0);
	assert_int_equal(f->kh.n, 1);
	s = connected(f, inst);
	gc_ssh_free(s);
	nfx_free(f);
}

static void test_wrong_client_key(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_error err;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = up_node(f, NULL);
	struct gc_ssh *s = session(f, inst, &f->other, false);

	gc_error_init(&err);
	assert_int_equal(gc_ssh_connect(s, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "public key authentication as 'ubuntu' refused"));
	gc_ssh_free(s);
	nfx_free(f);
}

static void test_connection_errors(void **state)
{
	struct nfx *f = nfx_new(1000, 1200);
	struct gc_ssh_result res;
	struct gc_error err;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sa);
	int lfd;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	gc_error_init(&err);
	gc_ssh_result_init(&res);

	/* created, not started: refused, GC_ETRANSIENT */
	struct sim_instance *down = nfx_node(f, NULL, false);
	assert_int_equal(nfx_pin(f, down), 0);
	struct gc_ssh *s = session(f, down, &f->key, false);

	assert_int_equal(gc_ssh_connect(s, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "connection refused"));
	gc_ssh_free(s);

	/* a listener that never speaks SSH: the connect timeout, GC_ETIMEOUT */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &slen), 0);
	{
		struct gc_ssh_opts o = { .host = "127.0.0.1",
					 .port = ntohs(sa.sin_port),
					 .user = "ubuntu",
					 .key = &f->key,
					 .known_hosts = &f->kh,
					 .connect_timeout_ms = 500 };
		double t0 = nfx_now();

		s = gc_ssh_new(&o, &err);
		assert_int_equal(gc_ssh_connect(s, &err), -1);
		assert_int_equal(err.code, GC_ETIMEOUT);
		assert_true(nfx_now() - t0 < 3);
		assert_non_null(strstr(err.message, "timed out"));
		gc_ssh_free(s);
	}
	close(lfd);

	/* the node cuts the first session 1.2 s in: the command reports the lost connection */
	struct sim_instance *drop = up_node(f, "drop");
	s = connected(f, drop);
	struct gc_ssh_cmd c = { .command = "echo started; sleep 10", .what = "driver" };

	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "connection lost during 'driver' on 127.77."));
	assert_string_equal(res.out.data, "started\n");
	assert_false(gc_ssh_connected(s));
	/* and the next connection is not cut */
	assert_int_equal(gc_ssh_connect(s, &err), 0);
	c.command = "sleep 1.5; echo fine";
	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), 0);
	assert_string_equal(res.out.data, "fine\n");
	gc_ssh_free(s);

	/* a peer that stops answering (its sshd stopped, the TCP connection still up): the
	 * keepalives go unanswered and the connection counts as lost */
	struct sim_instance *frozen = up_node(f, NULL);
	struct gc_ssh_opts ko = { .host = frozen->public_ip,
				  .port = 2222,
				  .user = "ubuntu",
				  .key = &f->key,
				  .known_hosts = &f->kh,
				  .keepalive_s = 1,
				  .keepalive_max = 2 };
	double t0 = nfx_now();

	s = gc_ssh_new(&ko, &err);
	assert_int_equal(gc_ssh_connect(s, &err), 0);
	c.command = "echo stopping; kill -STOP $PPID; sleep 30";
	c.what = "frozen";
	assert_int_equal(gc_ssh_exec(s, &c, &res, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "connection lost during 'frozen'"));
	assert_non_null(strstr(err.message, "no answer to keepalives"));
	assert_true(nfx_now() - t0 >= 1.5 && nfx_now() - t0 < 6);
	gc_ssh_free(s);

	/* bad options */
	struct gc_ssh_opts bad = {
		.host = "not-an-ip", .user = "u", .key = &f->key, .known_hosts = &f->kh
	};
	s = gc_ssh_new(&bad, &err);
	assert_non_null(s);
	assert_int_equal(gc_ssh_connect(s, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	gc_ssh_free(s);
	bad.key = NULL;
	assert_null(gc_ssh_new(&bad, &err));
	gc_ssh_result_release(&res);
	nfx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_run, nfx_teardown),
		cmocka_unit_test_teardown(test_env_quoting, nfx_teardown),
		cmocka_unit_test_teardown(test_output_cap, nfx_teardown),
		cmocka_unit_test_teardown(test_pinned_from_console, nfx_teardown),
		cmocka_unit_test_teardown(test_changed_host_key, nfx_teardown),
		cmocka_unit_test_teardown(test_tofu, nfx_teardown),
		cmocka_unit_test_teardown(test_wrong_client_key, nfx_teardown),
		cmocka_unit_test_teardown(test_connection_errors, nfx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
