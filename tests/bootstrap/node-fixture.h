/*
 * node-fixture.h: gpucluster-sim's SSH nodes, in process, for the bootstrap tests.
 *
 * Starts the node manager (sim/node.c: real sshd in bubblewrap on 127.77.x.y:2222) in a
 * temporary state directory, makes nodes that authorise one in-memory cluster key, and
 * keeps a per-test known_hosts file. Tests skip (not fail) where bwrap, sshd or user
 * namespaces are missing. HOME and XDG_* point into the test's own directory. Header-only;
 * one test file at a time.
 */
#ifndef GC_TEST_NODE_FIXTURE_H
#define GC_TEST_NODE_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/known_hosts.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/keygen.h"
#include "sim/node.h"

struct nfx {
	char dir[64];
	char *state;
	char *kh_path;
	struct sim_nodes *nodes;
	const struct sim_node_ops *hooks;
	struct gc_keypair key;	 /* the cluster key every node authorises */
	struct gc_keypair other; /* a key no node knows */
	struct gc_buf pub;
	struct gc_known_hosts kh;
	struct sim_instance **inst;
	size_t n_inst, alloc_inst;
};

/* the fixture of the running test, freed by nfx_teardown when a test fails half-way */
static struct nfx *nfx_current;

static const struct sim_itype nfx_g5 = {
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

static const struct sim_image nfx_plain = {
	.cloud = SIM_AWS,
	.id = "ami-plain",
	.os = "ubuntu",
	.version = "22.04",
};

static inline double nfx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void nfx_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline bool nfx_sandbox_ok(void)
{
	return system("command -v bwrap >/dev/null 2>&1") == 0 &&
		access("/usr/sbin/sshd", X_OK) == 0 &&
		system("bwrap --unshare-user --ro-bind / / true >/dev/null 2>&1") == 0;
}

/* NULL when the sandbox cannot run here (the test then skips). */
static struct nfx *nfx_new(unsigned reboot_ms, unsigned drop_ms)
{
	struct nfx *f;
	struct sim_nodes_config cfg = { 0 };
	struct gc_error err;
	char *p;

	if (!nfx_sandbox_ok())
		return NULL;
	f = gc_xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/gc-test-boot.XXXXXX");
	if (!mkdtemp(f->dir))
		abort();
	f->state = gc_xasprintf("%s/state", f->dir);
	mkdir(f->state, 0700);
	p = gc_xasprintf("%s/home", f->dir);
	mkdir(p, 0700);
	setenv("HOME", p, 1);
	free(p);
	p = gc_xasprintf("%s/config", f->dir);
	setenv("XDG_CONFIG_HOME", p, 1);
	free(p);
	p = gc_xasprintf("%s/cache", f->dir);
	setenv("XDG_CACHE_HOME", p, 1);
	free(p);
	f->kh_path = gc_xasprintf("%s/known_hosts", f->dir);
	gc_error_init(&err);
	if (gc_keypair_generate(&f->key, "gpucluster:test", &err) < 0 ||
	    gc_keypair_generate(&f->other, "other", &err) < 0)
		abort();
	gc_buf_init(&f->pub, 4096);
	gc_keypair_public_line(&f->pub, &f->key);
	if (gc_known_hosts_open(&f->kh, f->kh_path, &err) < 0)
		abort();
	cfg.state_dir = f->state;
	cfg.net = "127.77.0.0/16";
	cfg.ssh_port = 2222;
	cfg.reboot_ms = reboot_ms;
	cfg.drop_after_ms = drop_ms;
	f->nodes = sim_nodes_new(&cfg, &err);
	if (!f->nodes) {
		fprintf(stderr, "sim_nodes_new: %s\n", err.message);
		abort();
	}
	f->hooks = sim_nodes_ops();
	nfx_current = f;
	return f;
}

/* A node for the cluster key; faults: node fault names for this node ("drop", "no-ssh"),
 * or NULL. Started (listening once booted) when start. */
static struct sim_instance *nfx_node(struct nfx *f, const char *faults, bool start)
{
	struct sim_instance *inst = gc_xcalloc(1, sizeof(*inst));
	struct gc_error err;

	gc_error_init(&err);
	if (faults && sim_nodes_add_fault_rule(f->nodes, faults, &err) < 0)
		abort();
	snprintf(inst->id, sizeof(inst->id), "i-%016zx", f->n_inst + 0xb007);
	inst->cloud = SIM_AWS;
	snprintf(inst->type, sizeof(inst->type), "%s", nfx_g5.name);
	snprintf(inst->private_ip, sizeof(inst->private_ip), "10.0.%zu.%zu",
		 (f->n_inst / 200) % 250, f->n_inst % 200 + 10);
	if (f->hooks->create(f->nodes, inst, f->pub.data, &nfx_g5, &nfx_plain, &err) < 0) {
		fprintf(stderr, "create: %s\n", err.message);
		abort();
	}
	if (faults)
		sim_nodes_clear_fault_rules(f->nodes);
	GC_ALLOC_GROW(f->inst, f->n_inst + 1, f->alloc_inst);
	f->inst[f->n_inst++] = inst;
	if (start)
		f->hooks->start(f->nodes, inst);
	return inst;
}

/* Pins a node's host key from its console output, as the engine does. */
static inline int nfx_pin(struct nfx *f, const struct sim_instance *inst)
{
	struct gc_error err;

	gc_error_init(&err);
	if (gc_known_hosts_pin_console(&f->kh, inst->public_ip, (unsigned)inst->ssh_port, inst->id,
				       inst->console, NULL, &err) < 0) {
		fprintf(stderr, "pin: %s\n", err.message);
		return -1;
	}
	return 0;
}

static inline bool nfx_refused(const struct sim_instance *inst)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc, e;

	sa.sin_port = htons((uint16_t)inst->ssh_port);
	inet_pton(AF_INET, inst->public_ip, &sa.sin_addr);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	return rc < 0 && e == ECONNREFUSED;
}

/* Waits until the node listens; false after limit_s. */
static inline bool nfx_wait_listening(const struct sim_instance *inst, double limit_s)
{
	double t0 = nfx_now();

	while (nfx_now() - t0 < limit_s) {
		if (!nfx_refused(inst))
			return true;
		nfx_sleep_ms(50);
	}
	return false;
}

static inline void nfx_free(struct nfx *f)
{
	char *cmd;

	if (!f)
		return;
	if (f == nfx_current)
		nfx_current = NULL;
	for (size_t i = 0; i < f->n_inst; i++) {
		f->hooks->stop(f->nodes, f->inst[i]);
		f->hooks->destroy(f->nodes, f->inst[i]->id);
		free(f->inst[i]);
	}
	free(f->inst);
	sim_nodes_free(f->nodes);
	gc_known_hosts_release(&f->kh);
	gc_keypair_release(&f->key);
	gc_keypair_release(&f->other);
	gc_buf_release(&f->pub);
	if (getenv("GC_TEST_KEEP")) {
		/* for debugging: the node roots are gone, but known_hosts and HOME stay */
		fprintf(stderr, "kept %s\n", f->dir);
	} else {
		cmd = gc_xasprintf("rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", f->dir);
		free(cmd);
	}
	free(f->state);
	free(f->kh_path);
	free(f);
}

/* cmocka teardown: frees what a failed test left (its nodes, its directory) */
static inline int nfx_teardown(void **state)
{
	(void)state;
	nfx_free(nfx_current);
	return 0;
}

#define NFX_SKIP_IF_NONE(f)                                                                \
	do {                                                                               \
		if (!(f)) {                                                                \
			print_message("bwrap/sshd or user namespaces missing: skipped\n"); \
			skip();                                                            \
		}                                                                          \
	} while (0)

#endif
