/*
 * node.h: instances as real SSH targets.
 *
 * Every instance gets its own loopback address (127.x.y.z, from --node-net) and its own
 * Ed25519 host key. The node manager listens on ADDRESS:PORT (--ssh-port, default 2222)
 * for each running instance and, for each connection, starts OpenSSH's sshd in inetd
 * mode (sshd -i) inside a bubblewrap sandbox with the connection as its stdin and
 * stdout. The sandbox:
 *   - runs as an unprivileged uid that the node's /etc/passwd calls the image's login
 *     user (ubuntu), whatever uid the emulator itself has;
 *   - sees the host's /usr read-only and the node's own writable root (etc, home, var,
 *     tmp, opt, usr/local, root) from a directory under --state-dir, so nothing on the
 *     host changes;
 *   - has no network of its own (a fresh network namespace with only its loopback);
 *     sshd talks to the client only through the inherited socket;
 *   - finds simulated system tools (apt-get, dpkg, lspci, nvidia-smi, reboot, docker,
 *     nvcc, ...) ahead of the host's, which read and write the node's simulated state
 *     under /var/lib/gpucluster-sim in the node root.
 * So "its own sshd" is one sshd process per connection, with the node's config and host
 * key: an idle node costs a listening socket and a directory, not a process.
 *
 * A reboot (the simulated reboot tool writes a request file) closes the node's sessions,
 * refuses connections for --reboot-ms, and brings the node back with a new boot id.
 *
 * Threads: one thread polls every listener and reaps children. The hooks below are
 * called by the world with its lock held; they only touch the manager's own state
 * under its own lock, never the world.
 */
#ifndef GC_SIM_NODE_H
#define GC_SIM_NODE_H

#include <stdbool.h>

#include "core/error.h"
#include "sim/catalog.h"
#include "sim/world.h"

/* Node faults, bits in sim_instance.node_faults */
#define SIM_NODE_FAULT_NO_SSH	   (1u << 0) /* SSH never comes up (connections refused) */
#define SIM_NODE_FAULT_MISSING_GPU (1u << 1) /* one GPU fewer than the type has */
#define SIM_NODE_FAULT_ECC	   (1u << 2) /* uncorrectable ECC errors on GPU 0 */
#define SIM_NODE_FAULT_DROP	   (1u << 3) /* the first session is cut mid-command */
#define SIM_NODE_FAULT_SLOW_NET	   (1u << 4) /* a tenth of the NCCL bandwidth between nodes */
#define SIM_NODE_FAULT_MOUNT	   (1u << 5) /* bucket mounts fail, mounted ones are lost */
#define SIM_NODE_FAULT_NO_RDMA	   (1u << 6) /* its RDMA devices are missing (fi_info, ibv_devinfo) */

/* Parses "no-ssh", "missing-gpu", "ecc", "drop", "slow-net", "mount", "no-rdma" into a bit; 0
 * when unknown. */
unsigned sim_node_fault_parse(const char *name);
const char *sim_node_fault_name(unsigned bit);

/* What the world calls; ctx is the manager. */
struct sim_node_ops {
	/*
	 * A new instance (state pending): allocates its address and host key, writes its
	 * node root, and fills inst->public_ip, ssh_port, host_key_line, host_key_fpr and
	 * console. authorized_key is the OpenSSH public-key line of the key pair named at
	 * launch, or NULL (then nobody can log in). type and image are the catalogue's
	 * facts (image may be NULL for an unknown literal image id).
	 */
	int (*create)(void *ctx, struct sim_instance *inst, const char *authorized_key,
		      const struct sim_itype *type, const struct sim_image *image,
		      struct gc_error *err);
	/* The instance is running: start accepting SSH (unless it has the no-ssh fault). */
	void (*start)(void *ctx, struct sim_instance *inst);
	/* The instance is terminating: stop listening and end its sessions. */
	void (*stop)(void *ctx, struct sim_instance *inst);
	/* The instance is forgotten: remove its node root and its state. */
	void (*destroy)(void *ctx, const char *instance_id);
	/* A spot reclaim is coming at inst->reclaim_at_wall: the metadata service says so. */
	void (*notice)(void *ctx, struct sim_instance *inst);
	/* Whether the node asked to power off (its shutdown -h or poweroff tool wrote
	 * poweroff-request); the world then stops or terminates it. Must not block. */
	bool (*powered_off)(void *ctx, struct sim_instance *inst);
};

struct sim_nodes_config {
	const char *state_dir;	/* node roots go under STATE_DIR/nodes/INSTANCE-ID */
	const char *net;	/* "127.77.0.0/16": where node addresses come from */
	int ssh_port;		/* default 2222 */
	unsigned reboot_ms;	/* how long a reboot keeps SSH down (default 3000) */
	unsigned drop_after_ms; /* SIM_NODE_FAULT_DROP: cut the session this long in */
	const char *bwrap;	/* NULL: "bwrap" from PATH */
	const char *sshd;	/* NULL: /usr/sbin/sshd */
};

struct sim_nodes;

struct sim_nodes *sim_nodes_new(const struct sim_nodes_config *cfg, struct gc_error *err);
/* Stops the thread, kills every session and removes every node root. */
void sim_nodes_free(struct sim_nodes *n);
const struct sim_node_ops *sim_nodes_ops(void);

/*
 * Node-fault rules applied as instances are created, "KIND[,p=P][,call=N]" with KIND a
 * node fault name: call=N gives the Nth instance created (from 1) the fault.
 */
int sim_nodes_add_fault_rule(struct sim_nodes *n, const char *rule, struct gc_error *err);
void sim_nodes_clear_fault_rules(struct sim_nodes *n);
/* Sets the faults of a live node (control API); the world lock is held by the caller. */
void sim_nodes_set_faults(struct sim_nodes *n, struct sim_instance *inst, unsigned faults);

#endif
