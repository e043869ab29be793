/*
 * test-node.c: the SSH node manager with real sshd, bubblewrap and the system ssh client.
 *
 * Drives sim/node.c through its API (no world): creates nodes for hand-made instances,
 * starts them, and logs in with `ssh -i KEY` to check the sandbox, authentication and the
 * pinned host key, reboots, the simulated NVIDIA install flow and the node faults.
 * Skipped (not failed) when bwrap, sshd or ssh is missing or user namespaces are off.
 * Each test uses its own temporary state directory and removes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/keygen.h"
#include "sim/node.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct fx {
	char dir[64];
	char *state;
	char *key;   /* the authorized client key */
	char *other; /* a key the node does not know */
	char *kh;    /* known_hosts with the node's host key pinned */
	struct sim_nodes *nodes;
	const struct sim_node_ops *hooks;
};

static const struct sim_itype type_g5 = {
	.cloud = SIM_AWS,
	.name = "g5.xlarge",
	.vcpu = 4,
	.memory_mib = 16384,
	.gpus = 1,
	.gpu_model = "A10G",
	.gpu_vendor = "NVIDIA",
	.gpu_memory_mib = 24576,
	.gpu_arch = "ampere",
};

static const struct sim_itype type_g4dn12 = {
	.cloud = SIM_AWS,
	.name = "g4dn.12xlarge",
	.vcpu = 48,
	.memory_mib = 196608,
	.gpus = 4,
	.gpu_model = "T4",
	.gpu_vendor = "NVIDIA",
	.gpu_memory_mib = 16384,
	.gpu_arch = "turing",
};

static const struct sim_image img_plain = {
	.cloud = SIM_AWS,
	.id = "ami-plain",
	.os = "ubuntu",
	.version = "22.04",
};

static const struct sim_image img_gpu = {
	.cloud = SIM_AWS,
	.id = "ami-gpu",
	.os = "ubuntu",
	.version = "22.04",
	.gpu_ready = true,
	.driver = "570",
	.cuda = "12.8",
};

static int write_key(const char *path, struct gc_buf *pub)
{
	struct gc_keypair kp;

	if (gc_keypair_generate(&kp, "test", NULL) < 0)
		return -1;
	if (gc_keypair_write(&kp, path, NULL) < 0) {
		gc_keypair_release(&kp);
		return -1;
	}
	if (pub)
		gc_keypair_public_line(pub, &kp);
	gc_keypair_release(&kp);
	return 0;
}

static bool have(const char *cmd)
{
	char *c = gc_xasprintf("command -v %s >/dev/null 2>&1", cmd);
	int rc = system(c);

	free(c);
	return rc == 0;
}

static struct gc_buf g_pub = GC_BUF_INIT(4096);

static int setup(void **state)
{
	struct fx *f = gc_xcalloc(1, sizeof(*f));
	struct sim_nodes_config cfg = { 0 };
	struct gc_error err;

	if (!have("bwrap") || !have("ssh") || access("/usr/sbin/sshd", X_OK) != 0 ||
	    system("bwrap --unshare-user --ro-bind / / true >/dev/null 2>&1") != 0) {
		free(f);
		*state = NULL;
		return 0;
	}
	snprintf(f->dir, sizeof(f->dir), "/tmp/gc-test-node.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->state = gc_xasprintf("%s/state", f->dir);
	assert_int_equal(mkdir(f->state, 0700), 0);
	f->key = gc_xasprintf("%s/client", f->dir);
	f->other = gc_xasprintf("%s/other", f->dir);
	f->kh = gc_xasprintf("%s/known_hosts", f->dir);
	gc_buf_reset(&g_pub);
	assert_int_equal(write_key(f->key, &g_pub), 0);
	assert_int_equal(write_key(f->other, NULL), 0);
	cfg.state_dir = f->state;
	cfg.net = "127.77.0.0/16";
	cfg.ssh_port = 2222;
	cfg.reboot_ms = 2000;
	cfg.drop_after_ms = 700;
	gc_error_init(&err);
	f->nodes = sim_nodes_new(&cfg, &err);
	assert_non_null(f->nodes);
	f->hooks = sim_nodes_ops();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char *cmd;

	if (!f)
		return 0;
	sim_nodes_free(f->nodes);
	/* the manager must have removed every node root */
	cmd = gc_xasprintf("%s/nodes", f->state);
	assert_int_not_equal(access(cmd, F_OK), 0);
	free(cmd);
	cmd = gc_xasprintf("rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f->state);
	free(f->key);
	free(f->other);
	free(f->kh);
	free(f);
	return 0;
}

#define SKIP_IF_NO_SANDBOX()                                                          \
	do {                                                                          \
		if (!*state) {                                                        \
			print_message("bwrap/sshd/ssh or user namespaces missing\n"); \
			skip();                                                       \
		}                                                                     \
	} while (0)

static struct sim_instance *new_node(struct fx *f, const char *id, const struct sim_itype *type,
				     const struct sim_image *img, bool start)
{
	struct sim_instance *inst = gc_xcalloc(1, sizeof(*inst));
	struct gc_error err;
	FILE *kh;

	snprintf(inst->id, sizeof(inst->id), "%s", id);
	inst->cloud = SIM_AWS;
	snprintf(inst->type, sizeof(inst->type), "%s", type->name);
	snprintf(inst->private_ip, sizeof(inst->private_ip), "10.0.0.%d", (int)(strlen(id) % 200));
	gc_error_init(&err);
	assert_int_equal(f->hooks->create(f->nodes, inst, g_pub.data, type, img, &err), 0);
	kh = fopen(f->kh, "a");
	assert_non_null(kh);
	fprintf(kh, "[%s]:%d %s\n", inst->public_ip, inst->ssh_port, inst->host_key_line);
	fclose(kh);
	if (start)
		f->hooks->start(f->nodes, inst);
	return inst;
}

static void free_node(struct fx *f, struct sim_instance *inst)
{
	f->hooks->stop(f->nodes, inst);
	f->hooks->destroy(f->nodes, inst->id);
	free(inst);
}

/* Runs cmd on the node over ssh; returns ssh's exit status, output (both streams) in out. */
static int ssh_run(struct fx *f, const struct sim_instance *inst, const char *key, const char *cmd,
		   struct gc_buf *out)
{
	struct gc_buf q = GC_BUF_INIT(1 << 20);
	char *line;
	char chunk[4096];
	size_t got;
	FILE *p;
	int st;

	/* the remote command, single-quoted for the local shell */
	gc_buf_addch(&q, '\'');
	for (const char *c = cmd; *c; c++) {
		if (*c == '\'')
			gc_buf_addstr(&q, "'\\''");
		else
			gc_buf_addch(&q, *c);
	}
	gc_buf_addch(&q, '\'');
	line = gc_xasprintf(
		"ssh -F /dev/null -i %s -o IdentitiesOnly=yes -o BatchMode=yes "
		"-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes "
		"-o ConnectTimeout=5 -o LogLevel=ERROR -p %d ubuntu@%s %s 2>&1 </dev/null",
		key, f->kh, inst->ssh_port, inst->public_ip, q.data);
	gc_buf_release(&q);
	gc_buf_reset(out);
	p = popen(line, "r");
	free(line);
	assert_non_null(p);
	while ((got = fread(chunk, 1, sizeof(chunk), p)) > 0)
		gc_buf_add(out, chunk, got);
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits until a login works; returns the seconds it took, or -1 after limit_s. */
static double wait_up(struct fx *f, const struct sim_instance *inst, double limit_s)
{
	struct gc_buf out = GC_BUF_INIT(1 << 20);
	double t0 = now_s();

	while (now_s() - t0 < limit_s) {
		if (ssh_run(f, inst, f->key, "true", &out) == 0) {
			gc_buf_release(&out);
			return now_s() - t0;
		}
		sleep_ms(100);
	}
	gc_buf_release(&out);
	return -1;
}

/* Whether a TCP connection to the node's SSH port is refused right now. */
static bool refused(const struct sim_instance *inst)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int rc;

	sa.sin_port = htons((uint16_t)inst->ssh_port);
	inet_pton(AF_INET, inst->public_ip, &sa.sin_addr);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	int e = errno;

	close(fd);
	return rc < 0 && e == ECONNREFUSED;
}

#define RUN_OK(f, inst, cmd, out)                                                \
	do {                                                                     \
		int rc_ = ssh_run(f, inst, (f)->key, cmd, out);                  \
		if (rc_ != 0)                                                    \
			print_message("%s -> %d:\n%s\n", cmd, rc_, (out)->data); \
		assert_int_equal(rc_, 0);                                        \
	} while (0)

static void test_sandbox(void **state)
{
	SKIP_IF_NO_SANDBOX();
	struct fx *f = *state;
	struct sim_instance *inst = new_node(f, "i-sandbox", &type_g5, &img_plain, true);
	struct gc_buf out = GC_BUF_INIT(1 << 20);
	char *cmd, *path;
	int lfd, port;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sa);

	assert_true(wait_up(f, inst, 15) >= 0);

	/* the host's /usr is read-only, as root too */
	assert_int_not_equal(ssh_run(f, inst, f->key, "touch /usr/gc-x", &out), 0);
	assert_non_null(strstr(out.data, "Read-only file system"));
	assert_int_not_equal(ssh_run(f, inst, f->key, "sudo touch /usr/bin/gc-x", &out), 0);
	assert_int_not_equal(access("/usr/gc-x", F_OK), 0);
	assert_int_not_equal(access("/usr/bin/gc-x", F_OK), 0);

	/* the host's state directory is not visible: a write to its path lands in the node */
	cmd = gc_xasprintf("mkdir -p %s/escape && touch %s/escape/f", f->state, f->state);
	RUN_OK(f, inst, cmd, &out);
	free(cmd);
	path = gc_xasprintf("%s/escape", f->state);
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
	path = gc_xasprintf("%s/nodes/i-sandbox/root%s/escape/f", f->state, f->state);
	assert_int_equal(access(path, F_OK), 0);
	free(path);
	/* the host's node roots, its own included, are not there */
	cmd = gc_xasprintf("ls %s/nodes 2>&1; true", f->state);
	RUN_OK(f, inst, cmd, &out);
	free(cmd);
	assert_non_null(strstr(out.data, "No such file or directory"));

	/* writes land under the node root, and a second session sees them */
	RUN_OK(f, inst, "echo persisted > ~/gc-file && sudo sh -c 'echo r > /etc/gc-etc'", &out);
	path = gc_xasprintf("%s/nodes/i-sandbox/root/home/ubuntu/gc-file", f->state);
	assert_int_equal(access(path, F_OK), 0);
	free(path);
	path = gc_xasprintf("%s/nodes/i-sandbox/root/etc/gc-etc", f->state);
	assert_int_equal(access(path, F_OK), 0);
	free(path);
	RUN_OK(f, inst, "cat ~/gc-file /etc/gc-etc", &out);
	assert_string_equal(out.data, "persisted\nr\n");

	/* no network: other addresses are unreachable at once */
	RUN_OK(f, inst,
	       "s=$(date +%s%N); (exec 3<>/dev/tcp/10.0.0.1/80) 2>&1; "
	       "(exec 3<>/dev/tcp/192.0.2.1/443) 2>&1; e=$(date +%s%N); "
	       "echo ms=$(( (e - s) / 1000000 ))",
	       &out);
	assert_non_null(strstr(out.data, "/dev/tcp/10.0.0.1/80: Network is unreachable"));
	assert_non_null(strstr(out.data, "/dev/tcp/192.0.2.1/443: Network is unreachable"));
	long ms = strtol(strstr(out.data, "ms=") + 3, NULL, 10);
	assert_true(ms < 1000);

	/* the node has its own loopback: the host's 127.0.0.1 listeners are not reachable */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &slen), 0);
	port = ntohs(sa.sin_port);
	cmd = gc_xasprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) 2>&1; echo rc=$?", port);
	RUN_OK(f, inst, cmd, &out);
	free(cmd);
	assert_non_null(strstr(out.data, "Connection refused"));
	assert_non_null(strstr(out.data, "rc=1"));
	close(lfd);

	/* the os-release of the image, the node's hostname, uid 1000 and sudo's root */
	RUN_OK(f, inst, ". /etc/os-release; echo $VERSION_ID; id -u; sudo id -u; hostname", &out);
	assert_non_null(strstr(out.data, "22.04\n1000\n0\nip-10-0-0-"));

	gc_buf_release(&out);
	free_node(f, inst);
	path = gc_xasprintf("%s/nodes/i-sandbox", f->state);
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
}

static void test_auth_and_host_key(void **state)
{
	SKIP_IF_NO_SANDBOX();
	struct fx *f = *state;
	struct sim_instance *inst = new_node(f, "i-auth", &type_g5, &img_plain, false);
	struct gc_buf out = GC_BUF_INIT(1 << 20);
	char fpr[GC_SSH_FINGERPRINT_SIZE];
	char *line;

	/* created, not started: refused like a pending instance */
	assert_true(refused(inst));
	sleep_ms(300);
	assert_true(refused(inst));
	f->hooks->start(f->nodes, inst);
	assert_true(wait_up(f, inst, 15) >= 0);

	/* the pinned host key (StrictHostKeyChecking=yes) is the one sshd presents */
	assert_int_equal(gc_ssh_fingerprint(fpr, inst->host_key_line, NULL), 0);
	assert_string_equal(fpr, inst->host_key_fpr);
	line = gc_xasprintf("ec2: 256 %s root@", inst->host_key_fpr);
	assert_non_null(strstr(inst->console, line));
	free(line);
	line = gc_xasprintf("-----BEGIN SSH HOST KEY KEYS-----\n%s root@", inst->host_key_line);
	assert_non_null(strstr(inst->console, line));
	free(line);
	assert_int_equal(strncmp(inst->public_ip, "127.77.", 7), 0);

	/* another key is refused */
	assert_int_equal(ssh_run(f, inst, f->other, "true", &out), 255);
	assert_non_null(strstr(out.data, "Permission denied"));

	/* sftp works (internal-sftp) */
	char *cmd = gc_xasprintf("echo 'put %s.pub up.pub' | sftp -F /dev/null -i %s -o "
				 "IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=%s -P "
				 "%d -b - ubuntu@%s >/dev/null 2>&1",
				 f->key, f->key, f->kh, inst->ssh_port, inst->public_ip);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	RUN_OK(f, inst, "cat ~/up.pub", &out);
	assert_int_equal(strncmp(out.data, "ssh-ed25519 ", 12), 0);

	/* stopped: refused again */
	f->hooks->stop(f->nodes, inst);
	assert_true(refused(inst));
	gc_buf_release(&out);
	free_node(f, inst);
}

/* cloud-init's ssh_keys in the user-data: the node serves exactly that host key (what
 * the Tencent driver sends, CVM having no console output); a broken key fails the launch. */
static void test_host_key_from_user_data(void **state)
{
	SKIP_IF_NO_SANDBOX();
	struct fx *f = *state;
	struct sim_instance *inst = gc_xcalloc(1, sizeof(*inst));
	struct gc_keypair kp;
	struct gc_buf pem = GC_BUF_INIT(0), pub = GC_BUF_INIT(0), ud = GC_BUF_INIT(0);
	struct gc_error err;
	char fpr[GC_SSH_FINGERPRINT_SIZE];

	assert_int_equal(gc_keypair_generate(&kp, "", NULL), 0);
	assert_int_equal(gc_keypair_private_pem(&pem, &kp, NULL), 0);
	assert_int_equal(gc_keypair_public_line(&pub, &kp), 0);
	gc_keypair_fingerprint(fpr, &kp);
	gc_buf_addstr(&ud,
		      "#cloud-config\nssh_deletekeys: true\nssh_genkeytypes: []\n"
		      "ssh_keys:\n  ed25519_private: |\n");
	for (const char *p = pem.data; *p;) {
		const char *eol = strchr(p, '\n');

		gc_buf_addstr(&ud, "    ");
		gc_buf_add(&ud, p, (size_t)(eol - p) + 1);
		p = eol + 1;
	}
	gc_buf_addf(&ud, "  ed25519_public: %s\n", pub.data);

	snprintf(inst->id, sizeof(inst->id), "i-given");
	inst->cloud = SIM_TENCENT;
	snprintf(inst->type, sizeof(inst->type), "%s", type_g5.name);
	inst->user_data = gc_xstrdup(ud.data);
	gc_error_init(&err);
	assert_int_equal(f->hooks->create(f->nodes, inst, g_pub.data, &type_g5, &img_plain, &err),
			 0);
	assert_string_equal(inst->host_key_line, pub.data);
	assert_string_equal(inst->host_key_fpr, fpr);
	f->hooks->destroy(f->nodes, inst->id);

	/* no key pair at launch: the login key comes from ssh_authorized_keys, and a login
	 * with strict checking against the given host key works */
	{
		struct gc_buf ud2 = GC_BUF_INIT(0), out = GC_BUF_INIT(1 << 20);
		FILE *kh;

		gc_buf_addf(&ud2, "%.*sssh_pwauth: false\nssh_authorized_keys:\n  - \"%s\"\n%s", 14,
			    ud.data, g_pub.data, ud.data + 14);
		free(inst->user_data);
		inst->user_data = gc_xstrdup(ud2.data);
		snprintf(inst->id, sizeof(inst->id), "i-userkey");
		gc_error_init(&err);
		assert_int_equal(f->hooks->create(f->nodes, inst, NULL, &type_g5, &img_plain, &err),
				 0);
		assert_string_equal(inst->host_key_line, pub.data);
		kh = fopen(f->kh, "a");
		assert_non_null(kh);
		fprintf(kh, "[%s]:%d %s\n", inst->public_ip, inst->ssh_port, inst->host_key_line);
		fclose(kh);
		f->hooks->start(f->nodes, inst);
		assert_true(wait_up(f, inst, 15) >= 0);
		RUN_OK(f, inst, "echo in", &out);
		assert_string_equal(out.data, "in\n");
		f->hooks->stop(f->nodes, inst);
		f->hooks->destroy(f->nodes, inst->id);
		gc_buf_release(&out);
		gc_buf_release(&ud2);
	}

	/* a key cloud-init could not use: the launch fails, naming the user-data */
	free(inst->user_data);
	inst->user_data = gc_xstrdup("#cloud-config\nssh_keys:\n  ed25519_private: |\n"
				     "    -----BEGIN OPENSSH PRIVATE KEY-----\n    bm9wZQ==\n"
				     "    -----END OPENSSH PRIVATE KEY-----\n");
	snprintf(inst->id, sizeof(inst->id), "i-broken");
	gc_error_init(&err);
	assert_int_equal(f->hooks->create(f->nodes, inst, g_pub.data, &type_g5, &img_plain, &err),
			 -1);
	assert_non_null(strstr(err.message, "user-data of i-broken"));
	free(inst->user_data);
	free(inst);
	gc_keypair_release(&kp);
	gc_keypair_wipe_buf(&pem);
	gc_buf_release(&pub);
	gc_buf_release(&ud);
}

static void test_reboot(void **state)
{
	SKIP_IF_NO_SANDBOX();
	struct fx *f = *state;
	struct sim_instance *inst = new_node(f, "i-reboot", &type_g5, &img_plain, true);
	struct gc_buf out = GC_BUF_INIT(1 << 20);
	char before[64], after[64];
	double t0, back;
	bool down;

	assert_true(wait_up(f, inst, 15) >= 0);
	RUN_OK(f, inst, "cat /proc/sys/kernel/random/boot_id", &out);
	snprintf(before, sizeof(before), "%s", out.data);
	assert_int_equal(strlen(before), 37);

	/* not as the user */
	assert_int_not_equal(ssh_run(f, inst, f->key, "reboot", &out), 0);
	assert_non_null(strstr(out.data, "Interactive authentication required"));

	t0 = now_s();
	assert_int_not_equal(ssh_run(f, inst, f->key, "sudo reboot", &out), 0);
	assert_true(now_s() - t0 < 5);
	/*
	 * reboot_ms is 2000 and the window opened before ssh returned: a probe that
	 * ends well inside it must be refused. On a machine loaded enough to eat the
	 * window, the boot id below still proves the reboot.
	 */
	down = refused(inst);
	if (now_s() - t0 < 1.5)
		assert_true(down);
	back = wait_up(f, inst, 15);
	assert_true(back >= 0);
	assert_true(now_s() - t0 >= 1.9);
	RUN_OK(f, inst, "cat /proc/sys/kernel/random/boot_id", &out);
	snprintf(after, sizeof(after), "%s", out.data);
	assert_int_equal(strlen(after), 37);
	assert_string_not_equal(before, after);

	/* shutdown -r now through the host's /sbin/shutdown path works the same way */
	assert_int_not_equal(ssh_run(f, inst, f->key, "sudo /sbin/shutdown -r now", &out), 0);
	assert_true(wait_up(f, inst, 15) >= 0);
	RUN_OK(f, inst, "cat /var/lib/gpucluster-sim/boot_id", &out);
	assert_string_not_equal(out.data, after);
	gc_buf_release(&out);
	free_node(f, inst);
}

static void reboot_and_wait(struct fx *f, const struct sim_instance *inst)
{
	struct gc_buf out = GC_BUF_INIT(1 << 20);

	assert_int_not_equal(ssh_run(f, inst, f->key, "sudo reboot", &out), 0);
	assert_true(wait_up(f, inst, 15) >= 0);
	gc_buf_release(&out);
}

static void test_install_flow(void **state)
{
	SKIP_IF_NO_SANDBOX();
	struct fx *f = *state;
	struct sim_instance *inst = new_node(f, "i-flow", &type_g5, &img_plain, true);
	struct gc_buf out = GC_BUF_INIT(1 << 20);

	assert_true(wait_up(f, inst, 15) >= 0);
	/* a fresh image: the GPU is on the bus, nouveau holds it, no nvidia-smi */
	RUN_OK(f, inst, "lspci -nn -d 10de:; lsmod | cut -d' ' -f1; uname -r", &out);
	assert_non_null(strstr(out.data,
			       "00:1e.0 3D controller [0302]: NVIDIA Corporation "
			       "GA102GL [A10G] [10de:2237] (rev a1)"));
	assert_non_null(strstr(out.data, "\nnouveau\n"));
	assert_non_null(strstr(out.data, "5.15.0-1051-aws"));
	assert_int_not_equal(ssh_run(f, inst, f->key, "command -v nvidia-smi", &out), 0);

	/* apt needs root, an update, and the CUDA repository for cuda-drivers */
	assert_int_equal(ssh_run(f, inst, f->key, "apt-get install -y cuda-drivers", &out), 100);
	assert_int_equal(ssh_run(f, inst, f->key, "sudo apt-get install -y build-essential", &out),
			 100);
	assert_non_null(strstr(out.data, "E: Unable to locate package build-essential"));
	RUN_OK(f, inst,
	       "set -e; sudo apt-get update; sudo apt-get install -y linux-headers-$(uname -r) "
	       "build-essential; wget -q https://developer.download.nvidia.com/compute/cuda/repos/"
	       "ubuntu2204/x86_64/cuda-keyring_1.1-1_all.deb; sudo dpkg -i "
	       "cuda-keyring_1.1-1_all.deb; sudo apt-get update; sudo apt-get install -y "
	       "cuda-drivers-570 cuda-toolkit-12-8",
	       &out);
	assert_non_null(strstr(out.data, "Setting up nvidia-driver-570"));
	assert_int_equal(ssh_run(f, inst, f->key, "curl -fsS https://example.com/", &out), 6);
	assert_non_null(strstr(out.data, "Could not resolve host: example.com"));
	assert_int_equal(ssh_run(f, inst, f->key, "sudo apt-get install -y no-such-pkg", &out),
			 100);

	/* nouveau is still loaded: a reboot is required, nvidia-smi cannot talk to the driver */
	RUN_OK(f, inst, "test -f /var/run/reboot-required && echo required", &out);
	assert_int_equal(ssh_run(f, inst, f->key, "nvidia-smi", &out), 9);
	assert_non_null(strstr(out.data, "couldn't communicate with the NVIDIA driver"));
	reboot_and_wait(f, inst);
	RUN_OK(f, inst, "nvidia-smi -L; lsmod | grep -c '^nouveau' || true", &out);
	assert_non_null(strstr(out.data, "GPU 0: NVIDIA A10G (UUID: GPU-"));
	assert_non_null(strstr(out.data, "\n0\n"));
	RUN_OK(f, inst,
	       "nvidia-smi --query-gpu=name,memory.total,driver_version "
	       "--format=csv,noheader,nounits",
	       &out);
	assert_string_equal(out.data, "NVIDIA A10G, 24576, 570.133.20\n");

	/* CUDA: nvcc compiles to the simulated smoke program */
	RUN_OK(f, inst,
	       "/usr/local/cuda/bin/nvcc --version | tail -2 | head -1; echo '__global__ void "
	       "k(){}' > s.cu; /usr/local/cuda/bin/nvcc -o smoke s.cu && ./smoke",
	       &out);
	assert_non_null(strstr(out.data, "release 12.8, V12.8"));
	assert_non_null(strstr(out.data,
			       "{\"simulated\":true,\"gpus\":[{\"index\":0,\"name\":"
			       "\"NVIDIA A10G\""));
	assert_non_null(strstr(out.data, "\"cuda_runtime\":\"12.8\",\"driver\":\"570.133.20\"}"));

	/* Docker: --gpus fails until the toolkit is installed, configured and docker restarted */
	RUN_OK(f, inst, "sudo apt-get install -y docker.io", &out);
	assert_int_equal(ssh_run(f, inst, f->key,
				 "sudo docker run --rm --gpus all ubuntu nvidia-smi -L", &out),
			 125);
	assert_non_null(
		strstr(out.data, "could not select device driver \"\" with capabilities: [[gpu]]"));
	RUN_OK(f, inst,
	       "set -e; curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg "
	       "--dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg; curl -s -L "
	       "https://nvidia.github.io/libnvidia-container/stable/deb/"
	       "nvidia-container-toolkit.list | sed 's#deb https://#deb "
	       "[signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | "
	       "sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list; sudo apt-get "
	       "update; sudo apt-get install -y nvidia-container-toolkit; sudo nvidia-ctk runtime "
	       "configure --runtime=docker",
	       &out);
	assert_int_equal(ssh_run(f, inst, f->key,
				 "sudo docker run --rm --gpus all ubuntu nvidia-smi -L", &out),
			 125);
	RUN_OK(f, inst,
	       "sudo systemctl restart docker; sudo docker run --rm --gpus all "
	       "nvidia/cuda:12.8.0-base-ubuntu22.04 nvidia-smi -L 2>/dev/null",
	       &out);
	assert_int_equal(strncmp(out.data, "GPU 0: NVIDIA A10G (UUID: GPU-", 30), 0);
	/* and the state survives a reboot */
	reboot_and_wait(f, inst);
	RUN_OK(f, inst, "sudo docker run --rm --gpus all img nvidia-smi -L 2>/dev/null", &out);
	assert_int_equal(strncmp(out.data, "GPU 0: NVIDIA A10G", 18), 0);
	gc_buf_release(&out);
	free_node(f, inst);
}

static void test_faults(void **state)
{
	SKIP_IF_NO_SANDBOX();
	struct fx *f = *state;
	struct gc_buf out = GC_BUF_INIT(1 << 20);
	struct gc_error err;
	struct sim_instance *a, *b;

	gc_error_init(&err);
	assert_int_equal(sim_nodes_add_fault_rule(f->nodes, "bogus", &err), -1);
	assert_int_equal(sim_nodes_add_fault_rule(f->nodes, "missing-gpu,p=2", &err), -1);
	/* every test has a fresh manager: the next node created is call 1 */
	assert_int_equal(sim_nodes_add_fault_rule(f->nodes, "missing-gpu,call=1", &err), 0);
	a = new_node(f, "i-fault-a", &type_g4dn12, &img_gpu, true);
	b = new_node(f, "i-fault-b", &type_g4dn12, &img_gpu, true);
	assert_int_equal(a->node_faults, SIM_NODE_FAULT_MISSING_GPU);
	assert_int_equal(b->node_faults, 0);
	sim_nodes_clear_fault_rules(f->nodes);
	assert_true(wait_up(f, a, 15) >= 0);
	assert_true(wait_up(f, b, 15) >= 0);

	/* GPU-ready image: the driver works from the start; one GPU is missing on a */
	RUN_OK(f, a, "nvidia-smi -L | wc -l; lspci -d 10de: | wc -l", &out);
	assert_string_equal(out.data, "3\n3\n");
	RUN_OK(f, b,
	       "nvidia-smi -L | wc -l; sudo docker run --rm --gpus all x nvidia-smi -L 2>/dev/null | wc -l",
	       &out);
	assert_string_equal(out.data, "4\n4\n");

	/* ECC at runtime: nvidia-smi and dmesg show it */
	RUN_OK(f, b,
	       "nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total,"
	       "remapped_rows.pending --format=csv,noheader",
	       &out);
	assert_string_equal(out.data, "0, 0, No\n1, 0, No\n2, 0, No\n3, 0, No\n");
	sim_nodes_set_faults(f->nodes, b, SIM_NODE_FAULT_ECC);
	RUN_OK(f, b,
	       "nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total,"
	       "remapped_rows.pending --format=csv,noheader; sudo dmesg | grep -c 'Xid.*: 48,'",
	       &out);
	assert_string_equal(out.data, "0, 2, Yes\n1, 0, No\n2, 0, No\n3, 0, No\n1\n");
	RUN_OK(f, b, "nvidia-smi -q | grep -m1 'DRAM Uncorrectable'", &out);
	assert_non_null(strstr(out.data, ": 2"));

	/* no-ssh at runtime: refused; cleared: back */
	sim_nodes_set_faults(f->nodes, b, SIM_NODE_FAULT_NO_SSH);
	assert_true(refused(b));
	sim_nodes_set_faults(f->nodes, b, 0);
	assert_true(wait_up(f, b, 5) >= 0);
	free_node(f, a);
	free_node(f, b);

	/* drop: the first session is cut drop_after_ms (700 ms) in, the next one is not */
	assert_int_equal(sim_nodes_add_fault_rule(f->nodes, "drop", &err), 0);
	a = new_node(f, "i-fault-drop", &type_g5, &img_plain, true);
	sim_nodes_clear_fault_rules(f->nodes);
	assert_int_equal(a->node_faults, SIM_NODE_FAULT_DROP);
	double t0 = now_s();

	while (refused(a) && now_s() - t0 < 15)
		sleep_ms(50);
	t0 = now_s();
	assert_int_equal(ssh_run(f, a, f->key, "sleep 10", &out), 255);
	assert_true(now_s() - t0 < 5);
	RUN_OK(f, a, "sleep 1; echo fine", &out);
	assert_string_equal(out.data, "fine\n");
	free_node(f, a);

	/* no-ssh from a rule: never listens */
	assert_int_equal(sim_nodes_add_fault_rule(f->nodes, "no-ssh,p=1", &err), 0);
	a = new_node(f, "i-fault-nossh", &type_g5, &img_plain, true);
	sim_nodes_clear_fault_rules(f->nodes);
	sleep_ms(800);
	assert_true(refused(a));
	free_node(f, a);
	gc_buf_release(&out);
}

static void test_fault_names(void **state)
{
	(void)state;
	assert_int_equal(sim_node_fault_parse("ecc"), SIM_NODE_FAULT_ECC);
	assert_int_equal(sim_node_fault_parse("missing-gpu"), SIM_NODE_FAULT_MISSING_GPU);
	assert_int_equal(sim_node_fault_parse("no-ssh"), SIM_NODE_FAULT_NO_SSH);
	assert_int_equal(sim_node_fault_parse("drop"), SIM_NODE_FAULT_DROP);
	assert_int_equal(sim_node_fault_parse("mount"), SIM_NODE_FAULT_MOUNT);
	assert_string_equal(sim_node_fault_name(SIM_NODE_FAULT_MOUNT), "mount");
	assert_int_equal(sim_node_fault_parse("nope"), 0);
	assert_string_equal(sim_node_fault_name(SIM_NODE_FAULT_ECC), "ecc");
	assert_null(sim_node_fault_name(1u << 20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_names),
		cmocka_unit_test_setup_teardown(test_sandbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_and_host_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_key_from_user_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reboot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_install_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	gc_buf_release(&g_pub);
	return rc;
}
