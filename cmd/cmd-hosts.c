/*
 * cmd-hosts.c: `gpucluster hosts [FILE] [--format F] [--output-file PATH]` (docs/cli.md
 * "hosts"). The nodes and their order are the bootstrapper's, so labels and ranks match
 * `exec`, `ssh` and `run`; the text comes from bootstrap/hosts.c, where it is unit-tested.
 * Nothing connects to the nodes: an unpinned host key is only warned about.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/hosts.h"
#include "bootstrap/known_hosts.h"
#include "bootstrap/mesh.h"
#include "bootstrap/session.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/state.h"

static const struct gc_opt hosts_opts[] = {
	{ .name = "format",
	  .type = GC_OPT_CHOICE,
	  .choices = gc_hosts_format_names,
	  .arg = "FORMAT",
	  .help = "what to write (json is also what -o json gives)",
	  .def = "mpi" },
	{ .name = "output-file",
	  .type = GC_OPT_STRING,
	  .arg = "PATH",
	  .help = "write it to PATH (atomically, mode 0600), not standard output" },
	{ .name = "master-port",
	  .type = GC_OPT_INT,
	  .arg = "PORT",
	  .help = "MASTER_PORT in the torchrun and json formats",
	  .def = "29500",
	  .min = 1,
	  .max = 65535 },
	{ .name = "node",
	  .type = GC_OPT_STRING,
	  .arg = "NODE",
	  .help = "torchrun: only this node, as export lines (an id, a prefix, GROUP/N)" },
	{ .name = "private",
	  .type = GC_OPT_FLAG,
	  .help = "mpi, deepspeed: private addresses, for a launcher on a node (as in the\n"
		  "files every node has under " GC_MESH_DIR ")" },
	{ .name = NULL },
};

/* --format, or json for -o json; a usage error when the two disagree. */
static int pick_format(struct gc_cmd_ctx *ctx, enum gc_hosts_format *out)
{
	bool json = ctx->globals.output == GC_OUTPUT_JSON;

	if (!gc_cmd_opt_given(ctx, "format")) {
		*out = json ? GC_HOSTS_JSON : GC_HOSTS_MPI;
	} else if (gc_hosts_format_find(gc_cmd_opt_str(ctx, "format"), out) < 0) {
		return -1; /* the dispatcher only lets the choices through */
	} else if (json && *out != GC_HOSTS_JSON) {
		gc_out_error(ctx->out, "'-o json' and '--format %s' disagree: give one of them",
			     gc_cmd_opt_str(ctx, "format"));
		return -1;
	}
	if (gc_cmd_opt_given(ctx, "node") && *out != GC_HOSTS_TORCHRUN) {
		gc_out_error(ctx->out, "'--node' goes with '--format torchrun'");
		return -1;
	}
	return 0;
}

/* --private: a launcher on a node has these files already; which is for which. */
static void note_node_files(struct gc_cmd_ctx *ctx)
{
	if (ctx->out->quiet)
		return;
	gc_out_printf(ctx->out, ctx->out->err,
		      "hosts: every node has these files, with private addresses:\n"
		      "  " GC_MESH_DIR "/hostfile            mpirun --hostfile FILE\n"
		      "  " GC_MESH_DIR "/deepspeed_hostfile  deepspeed --hostfile FILE\n"
		      "  " GC_MESH_DIR "/hosts               one address a line (pdsh -w ^FILE)\n"
		      "  " GC_MESH_DIR
		      "/ssh_config          ssh between nodes with the internal key "
		      "(in ~/.ssh/config)\n");
}

/* What would make the ssh-config or the inventory fail for a node: no pinned key, or no
 * key file here (a cluster created from another machine). */
static void warn_unusable(struct gc_cmd_ctx *ctx, const struct gc_hosts *h)
{
	if (h->identity_file && access(h->identity_file, R_OK) != 0)
		gc_out_warn(ctx->out,
			    "the cluster's key '%s' is not on this machine: the nodes accept "
			    "the key of the machine that created them",
			    h->identity_file);
	for (size_t i = 0; i < h->n; i++)
		if (!h->nodes[i].pinned)
			gc_out_warn(ctx->out,
				    "no host key is pinned for %s (%s) yet, so ssh will refuse it: "
				    "'%s ssh %s' or '%s bootstrap' pins it",
				    h->nodes[i].label, h->nodes[i].id, GC_PROGRAM,
				    h->nodes[i].label, GC_PROGRAM);
}

static int hosts_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_session s;
	const struct gc_session_opts so = { .mode = GC_BOOT_NODES };
	struct gc_hosts h;
	struct gc_known_hosts kh;
	struct gc_hosts_opts ho = { .only = SIZE_MAX };
	struct gc_buf text = GC_BUF_INIT(0);
	struct gc_error err;
	const char *file = gc_cmd_opt_str(ctx, "output-file");
	const char *node = gc_cmd_opt_str(ctx, "node");
	char *dir = NULL, *key_path = NULL, *kh_path = NULL;
	bool kh_open = false;
	int rc = GC_EXIT_FAILURE;

	if (pick_format(ctx, &ho.format) < 0)
		return GC_EXIT_USAGE;
	ho.master_port = (unsigned)gc_cmd_opt_int(ctx, "master-port");
	ho.private_addrs = gc_cmd_opt_given(ctx, "private");
	if (ho.private_addrs && ho.format != GC_HOSTS_MPI && ho.format != GC_HOSTS_DEEPSPEED) {
		gc_out_error(ctx->out,
			     "'--private' goes with '--format mpi' or '--format deepspeed'");
		return GC_EXIT_USAGE;
	}
	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_error_init(&err);
	gc_session_init(&s);
	memset(&kh, 0, sizeof(kh));
	gc_hosts_init(&h, ctx->spec->name, ctx->spec->ssh.user, ctx->spec->ssh.port, NULL, NULL);
	if (gc_session_open(&s, &e, NULL, &so, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		goto out;
	}
	if (!s.boot.n_nodes) {
		gc_out_error(ctx->out, "cluster '%s' has no running nodes", ctx->spec->name);
		gc_out_hint(ctx->out, "'%s apply' creates them", GC_PROGRAM);
		goto out;
	}
	if (node && gc_boot_find(&s.boot, node, &ho.only, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		gc_out_hint(ctx->out, "'%s status' lists the cluster's nodes", GC_PROGRAM);
		goto out;
	}
	/* the files are read from other directories (and by other programs): absolute paths */
	dir = realpath(e.state_dir, NULL);
	if (!dir)
		dir = gc_xstrdup(e.state_dir);
	key_path = gc_state_path(dir, GC_STATE_KEY);
	kh_path = gc_state_path(dir, GC_STATE_KNOWN_HOSTS);
	if (gc_known_hosts_open(&kh, kh_path, &err) < 0)
		gc_out_warn(ctx->out, "%s", err.message);
	else
		kh_open = true;
	gc_hosts_release(&h);
	gc_hosts_init(&h, ctx->spec->name, s.boot.user, s.boot.port, key_path, kh_path);
	if (gc_hosts_add_boot(&h, &s.boot, s.live, kh_open ? &kh : NULL, &err) < 0 ||
	    gc_hosts_format(&text, &h, &ho, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		goto out;
	}
	if (ho.format == GC_HOSTS_SSH_CONFIG || ho.format == GC_HOSTS_ANSIBLE)
		warn_unusable(ctx, &h);
	if (ho.private_addrs)
		note_node_files(ctx);
	if (file) {
		if (gc_hosts_write_file(file, text.data, text.len, &err) < 0) {
			gc_cmd_report_error(ctx, NULL, &err);
			goto out;
		}
		if (!ctx->out->quiet)
			gc_out_printf(ctx->out, ctx->out->err, "hosts: %zu node%s (%s) in %s\n",
				      h.n, h.n == 1 ? "" : "s", gc_hosts_format_names[ho.format],
				      file);
	} else {
		fwrite(text.data, 1, text.len, ctx->out->out);
	}
	rc = GC_EXIT_OK;
out:
	gc_buf_release(&text);
	gc_hosts_release(&h);
	if (kh_open)
		gc_known_hosts_release(&kh);
	free(kh_path);
	free(key_path);
	free(dir);
	gc_session_release(&s);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_hosts = {
	.name = "hosts",
	.summary = "write the running nodes as a hostfile, ssh config, inventory or JSON",
	.usage = "[FILE]",
	.description =
		"Writes the cluster's running nodes, in the order and with the labels of\n"
		"exec and ssh (GROUP/N), as: mpi (an Open MPI hostfile, ADDRESS slots=GPUs),\n"
		"deepspeed (DeepSpeed's hostfile), torchrun (MASTER_ADDR, MASTER_PORT, NNODES,\n"
		"NODE_RANK and NPROC_PER_NODE per node), ssh-config (for ssh -F FILE NODE, with\n"
		"the cluster's key and pinned host keys only), ansible (an INI inventory, a\n"
		"group per node group) or json. Addresses are public where a node has one,\n"
		"else private (--private: private, for a launcher on a node; every node has\n"
		"those files under " GC_MESH_DIR "); MASTER_ADDR is the first node's private\n"
		"address.",
	.opts = hosts_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = hosts_exec,
};
