/*
 * node.c: the SSH node manager (see node.h for what a node is).
 *
 * Layout of a node under STATE_DIR/nodes/INSTANCE-ID:
 *   ssh/            sshd_config, the host key and the authorized key; /etc/ssh, read-only
 *   root/etc ...    the node's writable tree, bound over /etc, /home, /var, /tmp, /opt,
 *                   /root, /run and /usr/local inside the sandbox
 *   root/var/lib/gpucluster-sim/   the simulated machine's state, shared with the tools
 *   log             stderr of every sshd and boot hook of the node
 *
 * Life of a node: create (address, key, root, socket bound but not listening, so a
 * connection is refused like a pending instance refuses it) -> start (the poll thread
 * runs the boot hook, then listens) -> reboots (the tool writes reboot-request; the
 * thread kills the sessions, closes the socket, waits reboot_ms, boots again) -> stop
 * (socket closed, sessions killed) -> destroy (root removed).
 *
 * Threading: one mutex guards everything below. The world's hooks only change state and
 * wake the poll thread through a pipe; every process is spawned by the poll thread,
 * because bwrap --die-with-parent ties a sandbox to the thread that spawned it (it
 * would die with a short-lived caller thread). Children are reaped by pid, never with
 * waitpid(-1), so the embedding program's own children are left alone.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np */

#include "sim/node.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/cidr.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/shape.h"
#include "core/str.h"
#include "sim/node/files.h"

extern char **environ;

#define NODE_UID	  "1000"
#define SIM_STATE	  "var/lib/gpucluster-sim"
#define POLL_MS		  100
#define DEFAULT_DROP_MS	  1500
#define DEFAULT_REBOOT_MS 3000
#define DEFAULT_SSH_PORT  2222
#define SANDBOX_PATH	  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define BOOT_HOOK	  "/usr/local/lib/gpucluster-sim/boot"
#define UNIT_RUNNER	  "/usr/local/lib/gpucluster-sim/unit"
#define NET_DIR		  "/run/gpucluster-sim/net"
/* the node's service manager: runs the units installed in /etc/systemd/system (lib/units) */
#define UNITS_HOOK "/usr/local/lib/gpucluster-sim/units"

enum node_phase {
	PH_CREATED,   /* socket bound, not listening */
	PH_START,     /* start asked for; the poll thread boots it */
	PH_BOOTING,   /* boot hook running */
	PH_UP,	      /* listening (unless the no-ssh fault) */
	PH_REBOOTING, /* down until reboot_until_ns */
	PH_STOPPED,
};

struct node_child {
	pid_t pid;
	bool boot;
	uint64_t kill_at_ns; /* the drop fault; 0: none */
};

struct node {
	char id[SIM_ID_MAX];
	char *dir;  /* STATE/nodes/ID */
	char *root; /* dir/root */
	char addr[SIM_IP_MAX];
	uint32_t host; /* address, host order */
	char hostname[64];
	int sock;
	bool listening;
	enum node_phase phase;
	unsigned faults;
	uint64_t reboot_until_ns;
	bool dropped; /* the drop fault has cut its session */
	struct node_child *children;
	size_t n_children;
	size_t alloc_children;
	/* The private network: a Unix socket per node named by its private address, in one
	 * directory per region bound into the node (NET_DIR), where another node's ssh reaches
	 * it through tools/lib/connect (its /etc/ssh/ssh_config's ProxyCommand). NULL: none. */
	char *net_dir;	/* STATE/net/REGION */
	char *net_sock; /* net_dir/PRIVATE-IP */
	int isock;	/* listening while the node is up; -1 otherwise */
};

struct fault_rule {
	unsigned bit;
	double p;      /* < 0: always */
	unsigned call; /* 0: any */
};

struct shadow {
	char *src; /* relative to the node root */
	char *dst; /* host path inside /usr that the tool replaces */
};

struct sim_nodes {
	pthread_mutex_t lock;
	pthread_t thread;
	bool thread_started;
	bool quit;
	int wake[2];

	char *state_dir;
	char *nodes_dir;
	char *bwrap;
	char *sshd;
	int port;
	unsigned reboot_ms;
	unsigned drop_ms;
	uint32_t net;	/* host order */
	uint32_t hosts; /* addresses in the block */
	uint32_t next;	/* next host offset to try */
	bool have_alternatives;
	bool have_ldcache;
	bool have_keyrings;

	struct node **nodes;
	size_t n_nodes;
	size_t alloc_nodes;
	pid_t *grave; /* killed, not yet reaped */
	size_t n_grave;
	size_t alloc_grave;

	struct fault_rule *rules;
	size_t n_rules;
	size_t alloc_rules;
	unsigned creates;
	uint64_t rng;

	struct shadow *shadows;
	size_t n_shadows;
	char *github_sock; /* state_dir/github.sock: the control API for the runner */
};

/* --- small helpers ----------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t next_random(struct sim_nodes *n)
{
	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return n->rng;
}

static void wake_thread(struct sim_nodes *n)
{
	char c = 1;

	/* a full pipe already means a pending wake-up */
	if (write(n->wake[1], &c, 1) < 0) {
	}
}

static int write_file(const char *path, const char *data, size_t len, mode_t mode,
		      struct gc_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	size_t off = 0;

	if (fd < 0)
		return gc_error_set(err, GC_EIO, "cannot create %s: %s", path, strerror(errno));
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return gc_error_set(err, GC_EIO, "cannot write %s: %s", path,
					    strerror(errno));
		}
		off += (size_t)w;
	}
	if (fchmod(fd, mode) < 0 || close(fd) < 0)
		return gc_error_set(err, GC_EIO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

static int write_text(const char *dir, const char *rel, const char *text, struct gc_error *err)
{
	char *path = gc_xasprintf("%s/%s", dir, rel);
	int rc = write_file(path, text, strlen(text), 0644, err);

	free(path);
	return rc;
}

/* mkdir -p for a path relative to base; base exists. */
static int make_dirs(const char *base, const char *rel, struct gc_error *err)
{
	char *path = gc_xasprintf("%s/%s", base, rel);
	size_t blen = strlen(base);

	for (char *p = path + blen + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char save = *p;

		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			gc_error_set(err, GC_EIO, "cannot create %s: %s", path, strerror(errno));
			free(path);
			return -1;
		}
		*p = save;
		if (save == '\0')
			break;
	}
	free(path);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/*
 * Removes a node directory. FTW_PHYS: symlinks a node user planted are removed, never
 * followed; FTW_MOUNT: a bind mount someone left inside is not descended into.
 */
static void remove_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* Single-quotes a value for the node's sourced env file. */
static void add_shell_var(struct gc_buf *b, const char *name, const char *value)
{
	gc_buf_addf(b, "%s='", name);
	for (const char *p = value ? value : ""; *p; p++) {
		if (*p == '\'')
			gc_buf_addstr(b, "'\\''");
		else
			gc_buf_addch(b, *p);
	}
	gc_buf_addstr(b, "'\n");
}

/* --- fault names and rules ----------------------------------------------------------- */

static const struct {
	unsigned bit;
	const char *name;
} fault_names[] = {
	/* clang-format off */
	{ SIM_NODE_FAULT_NO_SSH, "no-ssh" },
	{ SIM_NODE_FAULT_MISSING_GPU, "missing-gpu" },
	{ SIM_NODE_FAULT_ECC, "ecc" },
	{ SIM_NODE_FAULT_DROP, "drop" },
	{ SIM_NODE_FAULT_SLOW_NET, "slow-net" },
	{ SIM_NODE_FAULT_MOUNT, "mount" },
	{ SIM_NODE_FAULT_NO_RDMA, "no-rdma" },
	/* clang-format on */
};

unsigned sim_node_fault_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++)
		if (strcmp(name, fault_names[i].name) == 0)
			return fault_names[i].bit;
	return 0;
}

const char *sim_node_fault_name(unsigned bit)
{
	for (size_t i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++)
		if (fault_names[i].bit == bit)
			return fault_names[i].name;
	return NULL;
}

int sim_nodes_add_fault_rule(struct sim_nodes *n, const char *rule, struct gc_error *err)
{
	struct fault_rule r = { .p = -1 };
	char *copy = gc_xstrdup(rule);
	char *save = NULL;
	int rc = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (r.bit == 0) {
			r.bit = sim_node_fault_parse(tok);
			if (!r.bit) {
				rc = gc_error_set(err, GC_EINVALID,
						  "unknown node fault \"%s\" (no-ssh, missing-gpu, "
						  "ecc, drop, slow-net, mount, no-rdma)",
						  tok);
				break;
			}
		} else if (gc_starts_with(tok, "p=")) {
			if (gc_parse_double(tok + 2, &r.p) < 0 || r.p < 0 || r.p > 1) {
				rc = gc_error_set(err, GC_EINVALID,
						  "node fault rule \"%s\": p must be 0..1", rule);
				break;
			}
		} else if (gc_starts_with(tok, "call=")) {
			if (gc_parse_u64(tok + 5, 1000000, &v) < 0 || v == 0) {
				rc = gc_error_set(err, GC_EINVALID,
						  "node fault rule \"%s\": call must be 1 or more",
						  rule);
				break;
			}
			r.call = (unsigned)v;
		} else {
			rc = gc_error_set(err, GC_EINVALID,
					  "node fault rule \"%s\": unknown option \"%s\"", rule,
					  tok);
			break;
		}
	}
	free(copy);
	if (rc == 0 && r.bit == 0)
		rc = gc_error_set(err, GC_EINVALID, "empty node fault rule");
	if (rc < 0)
		return -1;
	pthread_mutex_lock(&n->lock);
	GC_ALLOC_GROW(n->rules, n->n_rules + 1, n->alloc_rules);
	n->rules[n->n_rules++] = r;
	pthread_mutex_unlock(&n->lock);
	return 0;
}

void sim_nodes_clear_fault_rules(struct sim_nodes *n)
{
	pthread_mutex_lock(&n->lock);
	n->n_rules = 0;
	pthread_mutex_unlock(&n->lock);
}

static unsigned faults_for_create(struct sim_nodes *n, unsigned call)
{
	unsigned bits = 0;

	for (size_t i = 0; i < n->n_rules; i++) {
		const struct fault_rule *r = &n->rules[i];

		if (r->call && r->call != call)
			continue;
		if (r->p >= 0 && (double)(next_random(n) >> 11) / 9007199254740992.0 >= r->p)
			continue;
		bits |= r->bit;
	}
	return bits;
}

/* --- node lookup and children -------------------------------------------------------- */

static struct node *find_node(struct sim_nodes *n, const char *id, size_t *idx)
{
	for (size_t i = 0; i < n->n_nodes; i++) {
		if (strcmp(n->nodes[i]->id, id) == 0) {
			if (idx)
				*idx = i;
			return n->nodes[i];
		}
	}
	return NULL;
}

/* Kills a child's process group; the pid namespace takes every sandboxed process along. */
static void bury(struct sim_nodes *n, pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	GC_ALLOC_GROW(n->grave, n->n_grave + 1, n->alloc_grave);
	n->grave[n->n_grave++] = pid;
}

static void kill_children(struct sim_nodes *n, struct node *node)
{
	for (size_t i = 0; i < node->n_children; i++)
		bury(n, node->children[i].pid);
	node->n_children = 0;
}

static void close_socket(struct node *node)
{
	/*
	 * shutdown first: while the poll thread sits in poll() on the fd, close() alone
	 * leaves the socket listening until poll returns; shutdown stops it at once.
	 */
	if (node->sock >= 0) {
		shutdown(node->sock, SHUT_RDWR);
		close(node->sock);
	}
	node->sock = -1;
	node->listening = false;
	if (node->isock >= 0) {
		shutdown(node->isock, SHUT_RDWR);
		close(node->isock);
		unlink(node->net_sock);
	}
	node->isock = -1;
}

/* The node's private-network socket, listening (the node is up); failures leave it
 * unreachable from the other nodes, as a down interface would. */
static void net_listen(struct node *node)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!node->net_sock || node->isock >= 0 || strlen(node->net_sock) >= sizeof(sa.sun_path))
		return;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	memcpy(sa.sun_path, node->net_sock, strlen(node->net_sock) + 1);
	unlink(node->net_sock);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(node->net_sock, 0777) < 0 ||
	    listen(fd, 64) < 0) {
		close(fd);
		unlink(node->net_sock);
		return;
	}
	node->isock = fd;
}

/*
 * A first bind (at create) goes without SO_REUSEADDR: Linux lets two non-listening
 * sockets that both set it share ADDRESS:PORT, which would hide a clash with another
 * emulator. Later binds (after a reboot) set it, because the node's finished sessions
 * leave TIME_WAIT entries on ADDRESS:PORT; the clash check was done at create.
 */
static int bind_socket(uint32_t host, int port, bool reuse)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (reuse)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(host);
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Closes and rebinds without listening: connections are refused while the node is down. */
static void refuse(struct node *node, int port)
{
	close_socket(node);
	node->sock = bind_socket(node->host, port, true);
}

static void set_listening(struct node *node, int port)
{
	bool want = node->phase == PH_UP && !(node->faults & SIM_NODE_FAULT_NO_SSH);

	if (want == node->listening)
		return;
	if (!want) {
		refuse(node, port);
		return;
	}
	if (node->sock < 0)
		node->sock = bind_socket(node->host, port, true);
	/*
	 * Accepted sessions inherit SO_REUSEADDR from the listener, and so do their TIME_WAIT
	 * entries (left when a killed session's client closes gracefully, as libssh2 does).
	 * From a first listener bound without it, those entries would block the rebind after
	 * a reboot for a minute; setting it after the bind keeps the clash check above.
	 */
	if (node->sock >= 0) {
		int one = 1;

		setsockopt(node->sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	if (node->sock >= 0 && listen(node->sock, 64) == 0)
		node->listening = true;
	if (node->listening)
		net_listen(node);
}

/* --- spawning ------------------------------------------------------------------------- */

struct argv {
	char **v;
	size_t n;
	size_t alloc;
};

static void argv_add(struct argv *a, const char *s)
{
	GC_ALLOC_GROW(a->v, a->n + 2, a->alloc);
	a->v[a->n++] = s ? gc_xstrdup(s) : NULL;
	a->v[a->n] = NULL;
}

static void argv_addf2(struct argv *a, const char *opt, const char *base, const char *rel,
		       const char *dst)
{
	char *src = gc_xasprintf("%s/%s", base, rel);

	argv_add(a, opt);
	argv_add(a, src);
	argv_add(a, dst);
	free(src);
}

static void argv_free(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static void sandbox_argv(struct sim_nodes *n, const struct node *node, bool as_root, struct argv *a)
{
	argv_add(a, n->bwrap);
	argv_add(a, "--unshare-user");
	argv_add(a, "--uid");
	argv_add(a, as_root ? "0" : NODE_UID);
	argv_add(a, "--gid");
	argv_add(a, as_root ? "0" : NODE_UID);
	argv_add(a, "--unshare-net");
	argv_add(a, "--unshare-pid");
	argv_add(a, "--unshare-ipc");
	argv_add(a, "--unshare-uts");
	argv_add(a, "--hostname");
	argv_add(a, node->hostname);
	argv_add(a, "--die-with-parent");
	argv_add(a, "--new-session");
	argv_add(a, "--ro-bind");
	argv_add(a, "/usr");
	argv_add(a, "/usr");
	static const char *const links[][2] = {
		{ "usr/bin", "/bin" },
		{ "usr/lib", "/lib" },
		{ "usr/lib64", "/lib64" },
		{ "usr/sbin", "/sbin" },
	};
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		argv_add(a, "--symlink");
		argv_add(a, links[i][0]);
		argv_add(a, links[i][1]);
	}
	argv_addf2(a, "--bind", node->root, "etc", "/etc");
	/* Debian's awk, editor, ... are symlinks through /etc/alternatives */
	if (n->have_alternatives) {
		argv_add(a, "--ro-bind");
		argv_add(a, "/etc/alternatives");
		argv_add(a, "/etc/alternatives");
	}
	if (n->have_ldcache) {
		argv_add(a, "--ro-bind");
		argv_add(a, "/etc/ld.so.cache");
		argv_add(a, "/etc/ld.so.cache");
	}
	argv_addf2(a, "--ro-bind", node->dir, "ssh", "/etc/ssh");
	static const char *const binds[][2] = {
		{ "home", "/home" }, { "tmp", "/tmp" },
		{ "var", "/var" },   { "usr-local", "/usr/local" },
		{ "opt", "/opt" },   { "root", "/root" },
		{ "run", "/run" },
	};
	for (size_t i = 0; i < sizeof(binds) / sizeof(binds[0]); i++)
		argv_addf2(a, "--bind", node->root, binds[i][0], binds[i][1]);
	/* NVIDIA's install docs write keyrings there with gpg --dearmor */
	if (n->have_keyrings)
		argv_addf2(a, "--bind", node->root, "usr-share-keyrings", "/usr/share/keyrings");
	for (size_t i = 0; i < n->n_shadows; i++)
		argv_addf2(a, "--ro-bind", node->root, n->shadows[i].src, n->shadows[i].dst);
	if (node->net_dir) {
		argv_add(a, "--bind");
		argv_add(a, node->net_dir);
		argv_add(a, NET_DIR);
	}
	/* the emulator's GitHub for the simulated Actions runner (sim/github.h) */
	if (n->github_sock && access(n->github_sock, F_OK) == 0) {
		argv_add(a, "--bind");
		argv_add(a, n->github_sock);
		argv_add(a, "/run/gpucluster-sim/github.sock");
	}
	argv_add(a, "--proc");
	argv_add(a, "/proc");
	argv_addf2(a, "--ro-bind", node->root, SIM_STATE "/boot_id",
		   "/proc/sys/kernel/random/boot_id");
	argv_add(a, "--dev");
	argv_add(a, "/dev");
	argv_add(a, "--chdir");
	argv_add(a, "/");
	argv_add(a, "--");
}

/* Spawns a sandboxed command with fd as stdin and stdout (-1: /dev/null): sshd; with
 * script, that script as root (the boot hook or the unit runner); with unit, a transient
 * unit's runner (systemd-run's shim) as the node's user. Lock held. */
static pid_t spawn(struct sim_nodes *n, struct node *node, const char *script, int fd,
		   const char *unit)
{
	bool boot = script && strcmp(script, BOOT_HOOK) == 0;
	struct argv a = { 0 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	char *logpath = gc_xasprintf("%s/log", node->dir);
	char *envp[] = { gc_xstrdup("PATH=" SANDBOX_PATH), gc_xstrdup("LANG=C.UTF-8"), NULL };
	pid_t pid = -1;
	int log = open(logpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	free(logpath);
	sandbox_argv(n, node, script != NULL, &a);
	if (script) {
		argv_add(&a, "/bin/bash");
		argv_add(&a, script);
	} else if (unit) {
		argv_add(&a, "/bin/bash");
		argv_add(&a, UNIT_RUNNER);
		argv_add(&a, unit);
	} else {
		argv_add(&a, n->sshd);
		argv_add(&a, "-i");
		argv_add(&a, "-f");
		argv_add(&a, "/etc/ssh/sshd_config");
	}
	if (fd < 0)
		fd = null;
	if (log < 0)
		log = null;
	if (fd < 0 || log < 0)
		goto out;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_adddup2(&fa, log, 2);
	/* the emulator's other sockets and files must not leak into a node */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(
		&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (posix_spawn(&pid, n->bwrap, &fa, &attr, a.v, envp) != 0)
		pid = -1;
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (pid > 0) {
		struct node_child c = { .pid = pid, .boot = boot };

		/*
		 * The drop fault cuts the first session that lasts drop_ms, not simply the
		 * first connection: a client's "is SSH up yet" probe must not use it up.
		 */
		if (!script && !unit && !node->dropped && (node->faults & SIM_NODE_FAULT_DROP))
			c.kill_at_ns = now_ns() + (uint64_t)n->drop_ms * 1000000u;
		GC_ALLOC_GROW(node->children, node->n_children + 1, node->alloc_children);
		node->children[node->n_children++] = c;
	}
out:
	if (log >= 0 && log != null)
		close(log);
	if (null >= 0)
		close(null);
	free(envp[0]);
	free(envp[1]);
	argv_free(&a);
	return pid;
}

/* --- node state files ------------------------------------------------------------------ */

static void new_boot_id(struct sim_nodes *n, struct node *node)
{
	unsigned char r[16];
	char text[40];
	char *path = gc_xasprintf("%s/" SIM_STATE "/boot_id", node->root);

	if (gc_random_bytes(r, sizeof(r)) < 0) {
		uint64_t a = next_random(n), b = next_random(n);

		memcpy(r, &a, 8);
		memcpy(r + 8, &b, 8);
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	snprintf(text, sizeof(text),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n", r[0],
		 r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
		 r[14], r[15]);
	/* rewritten in place: the sandbox's /proc/sys/kernel/random/boot_id is bound to it */
	write_file(path, text, strlen(text), 0644, NULL);
	free(path);
}

static void write_faults(struct node *node)
{
	struct gc_buf b = GC_BUF_INIT(4096);
	char *path = gc_xasprintf("%s/" SIM_STATE "/faults", node->root);

	for (size_t i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++)
		if (node->faults & fault_names[i].bit)
			gc_buf_addf(&b, "%s\n", fault_names[i].name);
	write_file(path, b.data, b.len, 0644, NULL);
	free(path);
	gc_buf_release(&b);
}

static const char *codename(const char *version)
{
	if (version && strcmp(version, "24.04") == 0)
		return "noble";
	if (version && strcmp(version, "20.04") == 0)
		return "focal";
	return "jammy";
}

static const char *kernel_for(const char *version, enum sim_cloud cloud)
{
	bool noble = version && strcmp(version, "24.04") == 0;

	return sim_frontend(cloud)->kernels[noble ? 1 : 0];
}

static int write_etc(const struct node *node, const struct sim_image *image, struct gc_error *err)
{
	const char *ver = image && image->version ? image->version : "22.04";
	const char *cn = codename(ver);
	const char *pretty = strcmp(ver, "24.04") == 0 ? "Ubuntu 24.04.1 LTS"
		: strcmp(ver, "20.04") == 0	       ? "Ubuntu 20.04.6 LTS"
						       : "Ubuntu 22.04.5 LTS";
	char *etc = gc_xasprintf("%s/etc", node->root);
	char *text;
	int rc = 0;

	rc |= write_text(etc, "passwd",
			 "root:x:0:0:root:/root:/bin/bash\n"
			 "ubuntu:x:" NODE_UID ":" NODE_UID ":Ubuntu:/home/ubuntu:/bin/bash\n"
			 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			 err);
	rc |= write_text(etc, "group",
			 "root:x:0:\nadm:x:4:ubuntu\nsudo:x:27:ubuntu\nubuntu:x:" NODE_UID
			 ":\ndocker:x:999:\nnogroup:x:65534:\n",
			 err);
	rc |= write_text(etc, "nsswitch.conf",
			 "passwd: files\ngroup: files\nshadow: files\nhosts: files\n", err);
	rc |= write_text(etc, "hosts", "127.0.0.1 localhost\n::1 localhost ip6-localhost\n", err);
	text = gc_xasprintf("%s\n", node->hostname);
	rc |= write_text(etc, "hostname", text, err);
	free(text);
	text = gc_xasprintf("PRETTY_NAME=\"%s\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"%s\"\n"
			    "VERSION=\"%s (%s)\"\nVERSION_CODENAME=%s\nID=ubuntu\nID_LIKE=debian\n"
			    "HOME_URL=\"https://www.ubuntu.com/\"\nUBUNTU_CODENAME=%s\n",
			    pretty, ver, pretty + 7, cn, cn, cn);
	rc |= write_text(etc, "os-release", text, err);
	free(text);
	text = gc_xasprintf("DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=%s\nDISTRIB_CODENAME=%s\n"
			    "DISTRIB_DESCRIPTION=\"%s\"\n",
			    ver, cn, pretty);
	rc |= write_text(etc, "lsb-release", text, err);
	free(text);
	text = gc_xasprintf("deb http://archive.ubuntu.com/ubuntu %s main restricted universe "
			    "multiverse\ndeb http://archive.ubuntu.com/ubuntu %s-updates main "
			    "restricted universe multiverse\ndeb http://security.ubuntu.com/ubuntu "
			    "%s-security main restricted universe multiverse\n",
			    cn, cn, cn);
	rc |= write_text(etc, "apt/sources.list", text, err);
	free(text);
	free(etc);
	return rc ? -1 : 0;
}

static int write_ssh(struct sim_nodes *n, const struct node *node, const char *authorized_key,
		     struct gc_error *err)
{
	char *ssh = gc_xasprintf("%s/ssh", node->dir);
	char *text;
	int rc;

	(void)n;
	text = gc_xasprintf("# gpucluster-sim node %s\n"
			    "HostKey /etc/ssh/ssh_host_ed25519_key\n"
			    "AuthorizedKeysFile /etc/ssh/authorized_keys .ssh/authorized_keys\n"
			    "StrictModes no\n"
			    "UsePAM no\n"
			    "PasswordAuthentication no\n"
			    "KbdInteractiveAuthentication no\n"
			    "PermitRootLogin no\n"
			    "AllowUsers ubuntu\n"
			    "PidFile none\n"
			    "LogLevel ERROR\n"
			    "ClientAliveInterval 15\n"
			    "ClientAliveCountMax 4\n"
			    "PrintMotd no\n"
			    "Subsystem sftp internal-sftp\n"
			    "SetEnv PATH=" SANDBOX_PATH "\n",
			    node->id);
	rc = write_text(ssh, "sshd_config", text, err);
	free(text);
	/* the node's ssh reaches the other nodes of its network by private address */
	if (rc == 0)
		rc = write_text(ssh, "ssh_config",
				"# gpucluster-sim: the private network of the node's VPC\n"
				"Host *\n"
				"\tProxyCommand /usr/local/lib/gpucluster-sim/connect %h\n",
				err);
	if (rc == 0) {
		text = gc_xasprintf("%s\n", authorized_key ? authorized_key : "");
		rc = write_text(ssh, "authorized_keys", authorized_key ? text : "", err);
		free(text);
	}
	free(ssh);
	return rc;
}

static int write_state(struct node *node, const struct sim_instance *inst,
		       const struct sim_itype *type, const struct sim_image *image,
		       struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(65536);
	char *dir = gc_xasprintf("%s/" SIM_STATE, node->root);
	const char *ver = image && image->version ? image->version : "22.04";
	char num[32];
	int rc;

	gc_buf_addstr(&b, "# written by gpucluster-sim when the node was created\n");
	add_shell_var(&b, "GCSIM_INSTANCE_ID", inst->id);
	add_shell_var(&b, "GCSIM_CLOUD", sim_cloud_name(inst->cloud));
	add_shell_var(&b, "GCSIM_TYPE", inst->type);
	add_shell_var(&b, "GCSIM_HOSTNAME", node->hostname);
	add_shell_var(&b, "GCSIM_ADDRESS", node->addr);
	add_shell_var(&b, "GCSIM_OS", image && image->os ? image->os : "ubuntu");
	add_shell_var(&b, "GCSIM_OS_VERSION", ver);
	add_shell_var(&b, "GCSIM_CODENAME", codename(ver));
	add_shell_var(&b, "GCSIM_KERNEL", kernel_for(ver, inst->cloud));
	snprintf(num, sizeof(num), "%u", type ? type->gpus : 0);
	add_shell_var(&b, "GCSIM_GPU_COUNT", num);
	add_shell_var(&b, "GCSIM_GPU_MODEL", type ? type->gpu_model : "");
	snprintf(num, sizeof(num), "%u", type ? type->gpu_memory_mib : 0);
	add_shell_var(&b, "GCSIM_GPU_MEMORY_MIB", num);
	add_shell_var(&b, "GCSIM_GPU_ARCH", type && type->gpu_arch ? type->gpu_arch : "");
	add_shell_var(&b, "GCSIM_NVSWITCH", type && type->nvswitch ? "1" : "0");
	snprintf(num, sizeof(num), "%u", type ? type->vcpu : 0);
	add_shell_var(&b, "GCSIM_VCPUS", num);
	snprintf(num, sizeof(num), "%u", type ? type->memory_mib : 0);
	add_shell_var(&b, "GCSIM_MEMORY_MIB", num);
	add_shell_var(&b, "GCSIM_GPU_READY", image && image->gpu_ready ? "1" : "0");
	add_shell_var(&b, "GCSIM_IMAGE_DRIVER", image && image->driver ? image->driver : "");
	add_shell_var(&b, "GCSIM_IMAGE_CUDA", image && image->cuda ? image->cuda : "");
	add_shell_var(&b, "GCSIM_ROLE", inst->role); /* the metadata service's role */
	/* its RDMA devices (the EFAs or ERIs it launched with, an HCC type's network) as the
	 * simulated fi_info and ibv_devinfo show them once the fabric step installed them
	 * (docs/internals/fabric.md) */
	snprintf(num, sizeof(num), "%u", inst->rdma_devices);
	add_shell_var(&b, "GCSIM_RDMA_DEVICES", num);
	rc = write_text(dir, "node.env", b.data, err);
	gc_buf_release(&b);
	free(dir);
	if (rc == 0)
		write_faults(node);
	return rc;
}

static int install_tools(const struct node *node, struct gc_error *err)
{
	for (size_t i = 0; i < sim_node_nfiles; i++) {
		const struct sim_node_file *f = &sim_node_files[i];
		const char *prefix = gc_starts_with(f->path, "lib/")
			? "usr-local/lib/gpucluster-sim/"
			: "usr-local/";
		const char *rel = gc_starts_with(f->path, "lib/") ? f->path + 4 : f->path;
		char *path = gc_xasprintf("%s/%s%s", node->root, prefix, rel);
		char *slash = strrchr(path, '/');
		int rc;

		*slash = '\0';
		rc = make_dirs(node->root, path + strlen(node->root) + 1, err);
		*slash = '/';
		if (rc == 0)
			rc = write_file(path, (const char *)f->data, f->len, (mode_t)f->mode, err);
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static void make_hostname(const struct sim_instance *inst, const struct node *node, char *out,
			  size_t size)
{
	const char *ip = inst->private_ip[0] ? inst->private_ip : node->addr;

	sim_frontend(inst->cloud)->hostname(inst, ip, out, size);
}

static void make_console(struct sim_instance *inst, const struct node *node, const char *fpr,
			 const char *pubkey)
{
	struct gc_buf b = GC_BUF_INIT(sizeof(inst->console) - 1);

	/* the shape of cloud-init's boot output and its host-key block (cc_keys_to_console) */
	gc_buf_addf(&b,
		    "[    0.000000] Linux version (simulated) gpucluster-sim\n"
		    "[    4.210934] cloud-init[512]: Cloud-init v. 24.1.3 running 'init' at "
		    "boot. Up 4.20 seconds.\n"
		    "ci-info: ++++++++++++++++++++++++Net device info+++++++++++++++++++++++++\n"
		    "ci-info: | Device |  Up  |   Address   |    Mask   | Scope |\n"
		    "ci-info: |  eth0  | True | %-11s | 255.0.0.0 | global |\n"
		    "ci-info: |   lo   | True |  127.0.0.1  | 255.0.0.0 |  host |\n"
		    "ci-info: +++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++\n"
		    "[    6.402117] cloud-init[512]: Generating public/private ed25519 key pair.\n",
		    node->addr);
	gc_buf_addf(&b,
		    "ec2: #############################################################\n"
		    "ec2: -----BEGIN SSH HOST KEY FINGERPRINTS-----\n"
		    "ec2: 256 %s root@%s (ED25519)\n"
		    "ec2: -----END SSH HOST KEY FINGERPRINTS-----\n"
		    "ec2: #############################################################\n"
		    "-----BEGIN SSH HOST KEY KEYS-----\n"
		    "%s root@%s\n"
		    "-----END SSH HOST KEY KEYS-----\n"
		    "[    9.877012] cloud-init[733]: Cloud-init v. 24.1.3 finished. Datasource "
		    "DataSourceEc2Local. Up 9.87 seconds\n",
		    fpr, node->hostname, pubkey, node->hostname);
	snprintf(inst->console, sizeof(inst->console), "%s", b.data);
	gc_buf_release(&b);
}

/* --- the world's hooks ------------------------------------------------------------------ */

static int alloc_address(struct sim_nodes *n, struct node *node, struct gc_error *err)
{
	for (uint32_t tries = 0; tries < n->hosts; tries++) {
		uint32_t off = n->next++ % n->hosts;
		uint32_t host = n->net + off;
		bool used = false;

		if ((host & 0xff) == 0 || (host & 0xff) == 255)
			continue;
		for (size_t i = 0; i < n->n_nodes && !used; i++)
			used = n->nodes[i]->host == host;
		if (used)
			continue;
		int fd = bind_socket(host, n->port, false);

		if (fd < 0) {
			if (errno == EADDRINUSE)
				continue; /* someone else's: take the next address */
			return gc_error_set(err, GC_EIO, "cannot bind a node address: %s",
					    strerror(errno));
		}
		node->sock = fd;
		node->host = host;
		snprintf(node->addr, sizeof(node->addr), "%u.%u.%u.%u", host >> 24,
			 (host >> 16) & 0xff, (host >> 8) & 0xff, host & 0xff);
		return 0;
	}
	return gc_error_set(err, GC_ECAPACITY, "no free node address left in the node network");
}

/*
 * The host key a launch asked for, as cloud-init's cc_ssh module takes it: user-data that
 * starts "#cloud-config" with ssh_keys: { ed25519_private: | <PEM block> }. Only the block
 * literal form is read (the form our drivers write); *pem gets the key file's text with
 * the block's indentation removed. Returns true when there was one.
 */
static bool user_data_host_key(const char *ud, struct gc_buf *pem)
{
	const char *p;
	size_t indent = 0;

	if (!ud || strncmp(ud, "#cloud-config", 13) != 0)
		return false;
	p = strstr(ud, "\n  ed25519_private: |\n");
	if (!p)
		return false;
	p = strchr(p + 1, '\n') + 1;
	while (p[indent] == ' ')
		indent++;
	if (indent <= 2)
		return false;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p), sp = 0;

		while (sp < len && p[sp] == ' ')
			sp++;
		if (sp < indent)
			break;
		gc_buf_add(pem, p + indent, len - indent);
		gc_buf_addch(pem, '\n');
		if (!eol)
			break;
		p = eol + 1;
	}
	return pem->len > 0;
}

/*
 * The login keys a launch gave cloud-init instead of a key pair (Alibaba and Tencent take
 * no Ed25519 key pairs): the "- KEY" items of a top-level ssh_authorized_keys list in
 * #cloud-config user-data, plain or double-quoted, one per line into *keys.
 */
static void user_data_authorized_keys(const char *ud, struct gc_buf *keys)
{
	const char *p;

	if (!ud || strncmp(ud, "#cloud-config", 13) != 0 ||
	    !(p = strstr(ud, "\nssh_authorized_keys:\n")))
		return;
	p = strchr(p + 1, '\n') + 1;
	while (strncmp(p, "  - ", 4) == 0) {
		const char *v = p + 4, *eol = strchr(v, '\n');
		size_t len = eol ? (size_t)(eol - v) : strlen(v);

		if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
			for (size_t i = 1; i + 1 < len; i++) {
				if (v[i] == '\\' && i + 2 < len)
					i++;
				gc_buf_addch(keys, v[i]);
			}
		} else {
			gc_buf_add(keys, v, len);
		}
		gc_buf_addch(keys, '\n');
		if (!eol)
			break;
		p = eol + 1;
	}
}

/* The node's place in its VPC's private network (see struct node). */
static int net_setup(struct sim_nodes *n, struct node *node, const struct sim_instance *inst,
		     struct gc_error *err)
{
	/* private addresses are unique in the emulator (by launch sequence), so one network
	 * per region stands for the VPCs in it: nodes of other regions are not reached */
	const char *vpc = gc_word_of(inst->region, "_-") ? inst->region : "default";
	char *rel = gc_xasprintf("net/%s", vpc);
	int rc = make_dirs(n->state_dir, rel, err);

	free(rel);
	if (rc < 0 || make_dirs(node->dir, "root/run/gpucluster-sim/net", err) < 0)
		return -1;
	node->net_dir = gc_xasprintf("%s/net/%s", n->state_dir, vpc);
	if (inst->private_ip[0] && gc_word_of(inst->private_ip, ".:"))
		node->net_sock = gc_xasprintf("%s/%s", node->net_dir, inst->private_ip);
	return 0;
}

static int node_create(void *ctx, struct sim_instance *inst, const char *authorized_key,
		       const struct sim_itype *type, const struct sim_image *image,
		       struct gc_error *err)
{
	struct sim_nodes *n = ctx;
	struct node *node = gc_xcalloc(1, sizeof(*node));
	struct gc_keypair kp;
	struct gc_buf line = GC_BUF_INIT(1024), pem = GC_BUF_INIT(16384), keys = GC_BUF_INIT(65536);
	char fpr[GC_SSH_FINGERPRINT_SIZE];
	char *keypath = NULL;
	int rc = -1;

	node->sock = -1;
	node->isock = -1;
	snprintf(node->id, sizeof(node->id), "%s", inst->id);
	pthread_mutex_lock(&n->lock);
	if (find_node(n, inst->id, NULL)) {
		pthread_mutex_unlock(&n->lock);
		free(node);
		return gc_error_set(err, GC_EINVALID, "node %s exists", inst->id);
	}
	node->faults = faults_for_create(n, ++n->creates);
	if (alloc_address(n, node, err) < 0)
		goto fail;
	make_hostname(inst, node, node->hostname, sizeof(node->hostname));
	node->dir = gc_xasprintf("%s/%s", n->nodes_dir, inst->id);
	node->root = gc_xasprintf("%s/root", node->dir);
	if (mkdir(node->dir, 0700) < 0) {
		gc_error_set(err, GC_EIO, "cannot create %s: %s", node->dir, strerror(errno));
		goto fail_nodir;
	}
	static const char *const dirs[] = {
		"ssh",
		"root/etc/apt/sources.list.d",
		"root/etc/apt/keyrings",
		"root/etc/modprobe.d",
		"root/etc/alternatives",
		"root/home/ubuntu/.ssh",
		"root/tmp",
		"root/var/lib/gpucluster-sim/dpkg",
		"root/var/log",
		"root/var/tmp",
		"root/usr-local/bin",
		"root/usr-local/sbin",
		"root/usr-local/lib",
		"root/usr-local/share",
		"root/usr-share-keyrings",
		"root/opt",
		"root/root",
		"root/run",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (make_dirs(node->dir, dirs[i], err) < 0)
			goto fail;
	if (net_setup(n, node, inst, err) < 0)
		goto fail;
	/* the mount points the sandbox binds over, so bwrap need not create them */
	if (write_text(node->root, "etc/ld.so.cache", "", err) < 0)
		goto fail;
	{
		char *run = gc_xasprintf("%s/var/run", node->root);
		int s = symlink("/run", run);

		free(run);
		if (s < 0) {
			gc_error_set(err, GC_EIO, "cannot link var/run: %s", strerror(errno));
			goto fail;
		}
	}

	keypath = gc_xasprintf("%s/ssh/ssh_host_ed25519_key", node->dir);
	gc_keypair_init(&kp);
	if (user_data_host_key(inst->user_data, &pem)) {
		/* cloud-init writes the key it was given; a bad one fails the launch loudly */
		if (write_file(keypath, pem.data, pem.len, 0600, err) < 0 ||
		    gc_keypair_load(&kp, keypath, err) < 0) {
			gc_error_prefix(err, "the host key in the user-data of %s", inst->id);
			goto fail;
		}
	} else if (gc_keypair_generate(&kp, "", err) < 0 ||
		   gc_keypair_write(&kp, keypath, err) < 0) {
		gc_keypair_release(&kp);
		goto fail;
	}
	if (gc_keypair_public_line(&line, &kp) < 0) {
		gc_keypair_release(&kp);
		goto fail;
	}
	gc_keypair_fingerprint(fpr, &kp);
	gc_keypair_release(&kp);

	if (!authorized_key) {
		user_data_authorized_keys(inst->user_data, &keys);
		if (keys.len) {
			gc_buf_truncate(&keys, keys.len - 1); /* write_ssh adds the newline */
			authorized_key = keys.data;
		}
	}
	if (write_ssh(n, node, authorized_key, err) < 0 || write_etc(node, image, err) < 0 ||
	    write_state(node, inst, type, image, err) < 0 || install_tools(node, err) < 0)
		goto fail;
	new_boot_id(n, node);

	snprintf(inst->public_ip, sizeof(inst->public_ip), "%s", node->addr);
	inst->ssh_port = n->port;
	snprintf(inst->host_key_line, sizeof(inst->host_key_line), "%s", line.data);
	snprintf(inst->host_key_fpr, sizeof(inst->host_key_fpr), "%s", fpr);
	make_console(inst, node, fpr, line.data);
	inst->node_faults = node->faults;

	GC_ALLOC_GROW(n->nodes, n->n_nodes + 1, n->alloc_nodes);
	n->nodes[n->n_nodes++] = node;
	rc = 0;
	goto out;

fail:
	remove_tree(node->dir);
fail_nodir:
	close_socket(node);
	free(node->dir);
	free(node->root);
	free(node->net_dir);
	free(node->net_sock);
	free(node);
out:
	pthread_mutex_unlock(&n->lock);
	free(keypath);
	gc_buf_release(&line);
	gc_buf_release(&keys);
	gc_keypair_wipe_buf(&pem);
	return rc;
}

static void node_start(void *ctx, struct sim_instance *inst)
{
	struct sim_nodes *n = ctx;
	struct node *node;

	pthread_mutex_lock(&n->lock);
	node = find_node(n, inst->id, NULL);
	if (node && node->phase == PH_CREATED) {
		node->phase = PH_START;
		wake_thread(n);
	}
	pthread_mutex_unlock(&n->lock);
}

static void node_stop(void *ctx, struct sim_instance *inst)
{
	struct sim_nodes *n = ctx;
	struct node *node;

	pthread_mutex_lock(&n->lock);
	node = find_node(n, inst->id, NULL);
	if (node) {
		close_socket(node);
		kill_children(n, node);
		node->phase = PH_STOPPED;
		wake_thread(n);
	}
	pthread_mutex_unlock(&n->lock);
}

static void free_node(struct sim_nodes *n, struct node *node)
{
	close_socket(node);
	kill_children(n, node);
	remove_tree(node->dir);
	free(node->children);
	free(node->dir);
	free(node->root);
	free(node->net_dir);
	free(node->net_sock);
	free(node);
}

static void node_destroy(void *ctx, const char *instance_id)
{
	struct sim_nodes *n = ctx;
	struct node *node;
	size_t idx;

	pthread_mutex_lock(&n->lock);
	node = find_node(n, instance_id, &idx);
	if (node) {
		n->nodes[idx] = n->nodes[--n->n_nodes];
		free_node(n, node);
		wake_thread(n);
	}
	pthread_mutex_unlock(&n->lock);
}

/* The interruption notice on the node's metadata service (tools/lib/metadata.sh). */
static void node_notice(void *ctx, struct sim_instance *inst)
{
	struct sim_nodes *n = ctx;
	struct node *node;

	pthread_mutex_lock(&n->lock);
	node = find_node(n, inst->id, NULL);
	if (node) {
		char *path = gc_xasprintf("%s/" SIM_STATE "/spot-notice", node->root);
		char *text = gc_xasprintf("%lld terminate\n", (long long)inst->reclaim_at_wall);

		write_file(path, text, strlen(text), 0644, NULL);
		free(text);
		free(path);
		/* AWS's rebalance recommendation comes no later than the notice */
		path = gc_xasprintf("%s/" SIM_STATE "/rebalance", node->root);
		text = gc_xasprintf("%lld\n", (long long)time(NULL));
		write_file(path, text, strlen(text), 0644, NULL);
		free(text);
		free(path);
	}
	pthread_mutex_unlock(&n->lock);
}

/* The node's shutdown -h / poweroff asked to power off (tools/sbin/reboot). */
static bool node_powered_off(void *ctx, struct sim_instance *inst)
{
	struct sim_nodes *n = ctx;
	struct node *node;
	bool asked = false;

	pthread_mutex_lock(&n->lock);
	node = find_node(n, inst->id, NULL);
	if (node && node->phase == PH_UP) {
		char *req = gc_xasprintf("%s/" SIM_STATE "/poweroff-request", node->root);
		struct stat st;

		asked = lstat(req, &st) == 0 && unlink(req) == 0;
		free(req);
	}
	pthread_mutex_unlock(&n->lock);
	return asked;
}

static const struct sim_node_ops ops = {
	.create = node_create,
	.start = node_start,
	.stop = node_stop,
	.destroy = node_destroy,
	.notice = node_notice,
	.powered_off = node_powered_off,
};

const struct sim_node_ops *sim_nodes_ops(void)
{
	return &ops;
}

void sim_nodes_set_faults(struct sim_nodes *n, struct sim_instance *inst, unsigned faults)
{
	struct node *node;

	pthread_mutex_lock(&n->lock);
	node = find_node(n, inst->id, NULL);
	if (node) {
		if ((faults & SIM_NODE_FAULT_DROP) && !(node->faults & SIM_NODE_FAULT_DROP))
			node->dropped = false;
		node->faults = faults;
		write_faults(node);
		set_listening(node, n->port);
	}
	inst->node_faults = faults;
	pthread_mutex_unlock(&n->lock);
}

/* --- the poll thread ------------------------------------------------------------------- */

static void reap(struct sim_nodes *n)
{
	for (size_t i = 0; i < n->n_grave;) {
		if (waitpid(n->grave[i], NULL, WNOHANG) != 0)
			n->grave[i] = n->grave[--n->n_grave];
		else
			i++;
	}
	for (size_t k = 0; k < n->n_nodes; k++) {
		struct node *node = n->nodes[k];

		for (size_t i = 0; i < node->n_children;) {
			if (waitpid(node->children[i].pid, NULL, WNOHANG) != 0)
				node->children[i] = node->children[--node->n_children];
			else
				i++;
		}
	}
}

static bool booting(const struct node *node)
{
	for (size_t i = 0; i < node->n_children; i++)
		if (node->children[i].boot)
			return true;
	return false;
}

static void begin_reboot(struct sim_nodes *n, struct node *node, uint64_t now)
{
	/* the socket first: once a session dies its client may probe at once, and must
	 * find the node down, not a listener that is about to go */
	refuse(node, n->port);
	kill_children(n, node);
	node->phase = PH_REBOOTING;
	node->reboot_until_ns = now + (uint64_t)n->reboot_ms * 1000000u;
}

/*
 * The transient units systemd-run's shim asked for (units/NAME.start): each runs in a
 * sandbox of its own, so it outlives the SSH session that started it (a session's sandbox
 * dies with it) and dies with a reboot or stop, like the node's other processes.
 */
static void start_units(struct sim_nodes *n, struct node *node)
{
	char *dir = gc_xasprintf("%s/" SIM_STATE "/units", node->root);
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char *from, *to, *name;

		if (len <= 6 || strcmp(e->d_name + len - 6, ".start") != 0)
			continue;
		name = gc_xstrndup(e->d_name, len - 6);
		from = gc_xasprintf("%s/%s", dir, e->d_name);
		to = gc_xasprintf("%s/%s.cmd", dir, name);
		if (rename(from, to) == 0)
			spawn(n, node, NULL, -1, name);
		free(from);
		free(to);
		free(name);
	}
	if (d)
		closedir(d);
	free(dir);
}

static void advance(struct sim_nodes *n, struct node *node, uint64_t now)
{
	switch (node->phase) {
	case PH_START:
		if (spawn(n, node, BOOT_HOOK, -1, NULL) > 0)
			node->phase = PH_BOOTING;
		break;
	case PH_BOOTING:
		if (!booting(node)) {
			node->phase = PH_UP;
			spawn(n, node, UNITS_HOOK, -1, NULL);
			set_listening(node, n->port);
		}
		break;
	case PH_UP: {
		char *req = gc_xasprintf("%s/" SIM_STATE "/reboot-request", node->root);
		struct stat st;

		/* a rebind can fail while poll() still holds the old socket: retry here */
		set_listening(node, n->port);
		if (lstat(req, &st) == 0) {
			unlink(req);
			begin_reboot(n, node, now);
		}
		free(req);
		if (node->phase == PH_UP)
			start_units(n, node);
		break;
	}
	case PH_REBOOTING:
		if (now >= node->reboot_until_ns) {
			new_boot_id(n, node);
			node->phase = PH_START;
			advance(n, node, now);
		}
		break;
	case PH_CREATED:
	case PH_STOPPED: break;
	}
	for (size_t i = 0; i < node->n_children && !node->dropped; i++) {
		if (node->children[i].kill_at_ns && now >= node->children[i].kill_at_ns) {
			bury(n, node->children[i].pid);
			node->children[i] = node->children[--node->n_children];
			node->dropped = true;
		}
	}
}

static void accept_all(struct sim_nodes *n, struct node *node)
{
	for (;;) {
		int fd = accept4(node->sock, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		spawn(n, node, NULL, fd, NULL);
		close(fd);
	}
}

/* A connection over the private network: the same sshd as from outside. */
static void accept_net(struct sim_nodes *n, struct node *node)
{
	for (;;) {
		int fd = accept4(node->isock, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		spawn(n, node, NULL, fd, NULL);
		close(fd);
	}
}

static void *poll_main(void *arg)
{
	struct sim_nodes *n = arg;
	struct pollfd *pfds = NULL;
	size_t alloc = 0;

	pthread_mutex_lock(&n->lock);
	while (!n->quit) {
		size_t np = 0;

		GC_ALLOC_GROW(pfds, 2 * n->n_nodes + 1, alloc);
		pfds[np++] = (struct pollfd){ .fd = n->wake[0], .events = POLLIN };
		for (size_t i = 0; i < n->n_nodes; i++)
			if (n->nodes[i]->listening)
				pfds[np++] = (struct pollfd){ .fd = n->nodes[i]->sock,
							      .events = POLLIN };
		for (size_t i = 0; i < n->n_nodes; i++)
			if (n->nodes[i]->isock >= 0)
				pfds[np++] = (struct pollfd){ .fd = n->nodes[i]->isock,
							      .events = POLLIN };
		pthread_mutex_unlock(&n->lock);
		poll(pfds, np, POLL_MS);
		if (pfds[0].revents) {
			char buf[64];

			while (read(n->wake[0], buf, sizeof(buf)) > 0) {
			}
		}
		pthread_mutex_lock(&n->lock);
		/*
		 * A hook may have closed a socket while we polled and its number may be
		 * reused: accept only on fds that are still some node's listener (they are
		 * non-blocking, so a stale readiness costs an EAGAIN).
		 */
		for (size_t k = 1; k < np; k++) {
			if (!pfds[k].revents)
				continue;
			for (size_t i = 0; i < n->n_nodes; i++)
				if (n->nodes[i]->listening && n->nodes[i]->sock == pfds[k].fd)
					accept_all(n, n->nodes[i]);
				else if (n->nodes[i]->isock == pfds[k].fd)
					accept_net(n, n->nodes[i]);
		}
		reap(n);
		uint64_t now = now_ns();

		for (size_t i = 0; i < n->n_nodes; i++)
			advance(n, n->nodes[i], now);
	}
	pthread_mutex_unlock(&n->lock);
	free(pfds);
	return NULL;
}

/* --- set-up ------------------------------------------------------------------------------ */

static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? gc_xstrdup(name) : NULL;
	copy = gc_xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = gc_xasprintf("%s/%s", d, name);

		if (access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(copy);
	return found;
}

/*
 * Tools the host also has as regular files in /usr/bin or /usr/sbin are bound over them
 * too, so that absolute paths (/usr/bin/apt-get) reach the simulation. Symlinks on the
 * host (/usr/sbin/reboot -> /bin/systemctl) are left: they resolve to a shadowed file.
 */
static void find_shadows(struct sim_nodes *n)
{
	static const char *const hostdirs[] = { "/usr/bin", "/usr/sbin" };

	for (size_t i = 0; i < sim_node_nfiles; i++) {
		const char *p = sim_node_files[i].path;
		const char *name;

		if (!gc_starts_with(p, "bin/") && !gc_starts_with(p, "sbin/"))
			continue;
		name = strchr(p, '/') + 1;
		for (size_t d = 0; d < 2; d++) {
			char *dst = gc_xasprintf("%s/%s", hostdirs[d], name);
			struct stat st;

			if (lstat(dst, &st) == 0 && S_ISREG(st.st_mode)) {
				n->shadows = gc_xreallocarray(n->shadows, n->n_shadows + 1,
							      sizeof(*n->shadows));
				n->shadows[n->n_shadows].src = gc_xasprintf("usr-local/%s", p);
				n->shadows[n->n_shadows++].dst = dst;
			} else {
				free(dst);
			}
		}
	}
}

static int parse_net(struct sim_nodes *n, const char *text, struct gc_error *err)
{
	struct gc_cidr c;
	uint32_t a;

	if (gc_cidr_parse(&c, text) < 0 || c.family != GC_CIDR_IPV4 || c.prefix < 8 ||
	    c.prefix > 30 || c.addr[0] != 127)
		return gc_error_set(err, GC_EINVALID,
				    "node network \"%s\" must be an IPv4 block inside 127.0.0.0/8 "
				    "(prefix 8..30)",
				    text);
	a = (uint32_t)c.addr[0] << 24 | (uint32_t)c.addr[1] << 16 | (uint32_t)c.addr[2] << 8 |
		c.addr[3];
	n->hosts = (uint32_t)1 << (32 - c.prefix);
	n->net = a & ~(n->hosts - 1);
	n->next = 1;
	return 0;
}

struct sim_nodes *sim_nodes_new(const struct sim_nodes_config *cfg, struct gc_error *err)
{
	struct sim_nodes *n = gc_xcalloc(1, sizeof(*n));
	struct stat st;

	n->wake[0] = n->wake[1] = -1;
	pthread_mutex_init(&n->lock, NULL);
	if (!cfg->state_dir) {
		gc_error_set(err, GC_EINVALID, "the node manager needs a state directory");
		goto fail;
	}
	if (parse_net(n, cfg->net ? cfg->net : "127.77.0.0/16", err) < 0)
		goto fail;
	n->port = cfg->ssh_port > 0 ? cfg->ssh_port : DEFAULT_SSH_PORT;
	n->reboot_ms = cfg->reboot_ms ? cfg->reboot_ms : DEFAULT_REBOOT_MS;
	n->drop_ms = cfg->drop_after_ms ? cfg->drop_after_ms : DEFAULT_DROP_MS;
	n->bwrap = find_in_path(cfg->bwrap ? cfg->bwrap : "bwrap");
	if (!n->bwrap) {
		gc_error_set(err, GC_EUNSUPPORTED,
			     "bubblewrap (bwrap) not found: install it or run with --no-ssh");
		goto fail;
	}
	n->sshd = gc_xstrdup(cfg->sshd ? cfg->sshd : "/usr/sbin/sshd");
	if (access(n->sshd, X_OK) < 0) {
		gc_error_set(err, GC_EUNSUPPORTED,
			     "%s not found: install openssh-server or run with --no-ssh", n->sshd);
		goto fail;
	}
	n->state_dir = gc_xstrdup(cfg->state_dir);
	n->github_sock = gc_xasprintf("%s/github.sock", cfg->state_dir);
	n->nodes_dir = gc_xasprintf("%s/nodes", cfg->state_dir);
	if (mkdir(n->nodes_dir, 0700) < 0 && errno != EEXIST) {
		gc_error_set(err, GC_EIO, "cannot create %s: %s", n->nodes_dir, strerror(errno));
		goto fail;
	}
	n->have_alternatives = stat("/etc/alternatives", &st) == 0 && S_ISDIR(st.st_mode);
	n->have_ldcache = stat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode);
	n->have_keyrings = stat("/usr/share/keyrings", &st) == 0 && S_ISDIR(st.st_mode);
	find_shadows(n);
	if (gc_random_bytes(&n->rng, sizeof(n->rng)) < 0 || n->rng == 0)
		n->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	if (pipe2(n->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		gc_error_set(err, GC_EIO, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&n->thread, NULL, poll_main, n) != 0) {
		gc_error_set(err, GC_EIO, "cannot start the node thread");
		goto fail;
	}
	n->thread_started = true;
	return n;
fail:
	sim_nodes_free(n);
	return NULL;
}

void sim_nodes_free(struct sim_nodes *n)
{
	if (!n)
		return;
	if (n->thread_started) {
		pthread_mutex_lock(&n->lock);
		n->quit = true;
		wake_thread(n);
		pthread_mutex_unlock(&n->lock);
		pthread_join(n->thread, NULL);
	}
	for (size_t i = 0; i < n->n_nodes; i++)
		free_node(n, n->nodes[i]);
	/* every child was SIGKILLed: these waits are short */
	for (size_t i = 0; i < n->n_grave; i++)
		waitpid(n->grave[i], NULL, 0);
	if (n->nodes_dir)
		rmdir(n->nodes_dir);
	for (size_t i = 0; i < n->n_shadows; i++) {
		free(n->shadows[i].src);
		free(n->shadows[i].dst);
	}
	if (n->wake[0] >= 0)
		close(n->wake[0]);
	if (n->wake[1] >= 0)
		close(n->wake[1]);
	pthread_mutex_destroy(&n->lock);
	free(n->shadows);
	free(n->nodes);
	free(n->grave);
	free(n->rules);
	free(n->bwrap);
	free(n->sshd);
	free(n->state_dir);
	free(n->github_sock);
	free(n->nodes_dir);
	free(n);
}
