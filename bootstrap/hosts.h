/*
 * hosts.h: a cluster's running nodes as the files other tools read: an Open MPI or
 * DeepSpeed hostfile, torchrun's rendezvous variables, an OpenSSH client config, an
 * Ansible inventory, or JSON (`gpucluster hosts`), and the rank variables `gpucluster run`
 * gives each node's command.
 *
 * The nodes are the bootstrapper's (cluster.h): the running instances with an address, in
 * gc_boot_add_nodes order (the spec's groups, then launch order), so the labels GROUP/N,
 * the ranks and the order of every file agree with `exec`, `ssh` and `run`. What each
 * node's address, MASTER_ADDR and slots are, and why, is in docs/cli.md ("hosts").
 *
 * Everything here is text from a cloud (ids, groups, addresses) or the environment
 * (paths), written into files that other programs parse. So an address must be an IP
 * literal (anything else is treated as no address), control characters in names become
 * '?' (every format is line based), names that are not plain words are left out of
 * ssh_config Host patterns, and paths are quoted for each file's parser (or
 * refused where no quoting can carry them, GC_EINVALID naming the path).
 *
 * Nothing here prints. Life cycle: gc_hosts_init -> gc_hosts_add_boot (or
 * gc_hosts_add_node) -> gc_hosts_format / gc_hosts_env -> gc_hosts_release. The struct
 * owns copies of every string.
 */
#ifndef GC_BOOTSTRAP_HOSTS_H
#define GC_BOOTSTRAP_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#include "bootstrap/cluster.h"
#include "bootstrap/known_hosts.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/provider.h"

#define GC_HOSTS_MASTER_PORT 29500 /* torchrun's default */
#define GC_HOSTS_N_ENV	     5	   /* the variables gc_hosts_env gives */
#define GC_HOSTS_VALUE_MAX   64	   /* an IPv6 literal is at most 45 characters */

enum gc_hosts_format {
	GC_HOSTS_MPI,	     /* Open MPI hostfile */
	GC_HOSTS_DEEPSPEED,  /* DeepSpeed hostfile */
	GC_HOSTS_TORCHRUN,   /* per node: MASTER_ADDR, MASTER_PORT, NNODES, NODE_RANK, ... */
	GC_HOSTS_SSH_CONFIG, /* ssh -F FILE NODE */
	GC_HOSTS_ANSIBLE,    /* INI inventory */
	GC_HOSTS_JSON,
};

/* The format names, in enum order, NULL-terminated (for an option's choices). */
extern const char *const gc_hosts_format_names[];

/* The format called name; -1 when none is. */
int gc_hosts_format_find(const char *name, enum gc_hosts_format *out);

struct gc_hosts_node {
	char *label; /* "workers/0" */
	char *id;
	char *group; /* "" without a group tag */
	unsigned index;
	char *public_ip;  /* NULL when none (or not an IP literal) */
	char *private_ip; /* NULL when none */
	char *type;	  /* NULL when unknown */
	char *zone;	  /* NULL when unknown */
	bool have_facts;  /* gpus and gpu_model are the instance type's */
	unsigned gpus;
	char *gpu_model; /* NULL without GPUs or facts */
	bool pinned;	 /* its host key is pinned for this instance in known_hosts_file */
};

struct gc_hosts {
	char *cluster;
	char *user;
	unsigned port;
	char *identity_file;	/* the cluster's private key */
	char *known_hosts_file; /* the cluster's pinned host keys */
	struct gc_hosts_node *nodes;
	size_t n, alloc;
};

/* cluster, user, the paths: copied; a NULL path stays NULL (the formats that need one
 * refuse to run without it). port 0 means 22. */
void gc_hosts_init(struct gc_hosts *h, const char *cluster, const char *user, unsigned port,
		   const char *identity_file, const char *known_hosts_file);
void gc_hosts_release(struct gc_hosts *h);

/* What gc_hosts_add_node copies: the fields of struct gc_hosts_node, borrowed. */
struct gc_hosts_node_in {
	const char *label, *id, *group;
	unsigned index;
	const char *public_ip, *private_ip, *type, *zone;
	bool have_facts;
	unsigned gpus;
	const char *gpu_model;
	bool pinned;
};

/* Appends a copy of n (its strings may be NULL; a public or private address that is not
 * an IP literal is dropped). */
void gc_hosts_add_node(struct gc_hosts *h, const struct gc_hosts_node_in *n);

/*
 * Appends b's nodes, in b's order, with their addresses and zone from the instance of
 * the same id in live, and pinned from kh (NULL: none pinned). GC_ENOTFOUND when a node
 * of b is not in live (b was not built from it).
 */
int gc_hosts_add_boot(struct gc_hosts *h, const struct gc_boot *b,
		      const struct gc_instance_list *live, const struct gc_known_hosts *kh,
		      struct gc_error *err);

/* The address this machine uses for node i: public, else private (NULL when neither). */
const char *gc_hosts_address(const struct gc_hosts *h, size_t i);
/* MASTER_ADDR: the first node's private address, else its public one; NULL without nodes. */
const char *gc_hosts_master_addr(const struct gc_hosts *h);
/* The slots of node i: its type's GPUs, or 1 for none or unknown. */
unsigned gc_hosts_slots(const struct gc_hosts *h, size_t i);

struct gc_hosts_var {
	const char *name;
	char value[GC_HOSTS_VALUE_MAX];
};

/*
 * Node i's torchrun variables, in this order: MASTER_ADDR, MASTER_PORT (master_port, 0:
 * 29500), NNODES, NODE_RANK (i), NPROC_PER_NODE (its slots). `hosts --format torchrun`
 * prints them and `run` exports them.
 */
void gc_hosts_env(const struct gc_hosts *h, size_t i, unsigned master_port,
		  struct gc_hosts_var out[GC_HOSTS_N_ENV]);

/*
 * The same five values under torchrun's own names (PET_MASTER_ADDR, PET_MASTER_PORT,
 * PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE): torchrun takes a missing --FLAG from
 * PET_FLAG, so a bare `torchrun train.py` under `run` joins the job.
 */
void gc_hosts_pet_env(const struct gc_hosts *h, size_t i, unsigned master_port,
		      struct gc_hosts_var out[GC_HOSTS_N_ENV]);

struct gc_hosts_opts {
	enum gc_hosts_format format;
	unsigned master_port; /* 0: 29500 */
	/* torchrun: only node `only`, as `export K=V` lines; SIZE_MAX: every node, a block
	 * each under a "# LABEL" line. Ignored by the other formats. */
	size_t only; /* mpi, deepspeed: the private addresses, as the nodes see each other (the files
	 * under /etc/gpucluster on the nodes, bootstrap/mesh.h); a node without one is
	 * GC_EINVALID. */
	bool private_addrs;
};

/*
 * Appends the nodes in o's format to out (see docs/cli.md, "hosts", for each one). -1
 * with GC_EINVALID when a format needs what h lacks (a key or known_hosts path, or one
 * that cannot be quoted for its parser), GC_ENOTFOUND when h has no nodes, GC_ETOOBIG at
 * out's cap.
 */
int gc_hosts_format(struct gc_buf *out, const struct gc_hosts *h, const struct gc_hosts_opts *o,
		    struct gc_error *err);

/*
 * Writes data to path atomically, mode 0600: a temporary file in the same directory,
 * fsync, rename; the old file, if any, stays whole until the rename. GC_EIO names the path
 * and the reason.
 */
int gc_hosts_write_file(const char *path, const void *data, size_t len, struct gc_error *err);

#endif
