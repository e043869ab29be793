/*
 * cmd-ssh.c: `gpucluster ssh [FILE] NODE [-- CMD...]`.
 *
 * Opens OpenSSH's ssh on one node with the cluster's key and its pinned host key:
 * -i <state>/id_ed25519, -o UserKnownHostsFile=<state>/known_hosts and
 * StrictHostKeyChecking=yes, so the login is checked exactly as the bootstrapper checks
 * it. A node not pinned yet is pinned first, from the cloud's console output (or, where
 * there is none, by trusting its key on first use through our own SSH client, which
 * records the instance id with the key), and waited for until it answers. Then this
 * process becomes ssh (exec), so the terminal, signals and the exit status are ssh's
 * own. Only cmd/ runs other programs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/cluster.h"
#include "bootstrap/known_hosts.h"
#include "bootstrap/runner.h"
#include "bootstrap/ssh.h"
#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/engine.h"
#include "core/keygen.h"

static const struct gc_opt ssh_opts[] = {
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

static bool ssh_cancelled(void *arg)
{
	(void)arg;
	return gc_cmd_interrupted();
}

static void on_wait(void *arg, const struct gc_runner_event *ev)
{
	struct gc_cmd_ctx *ctx = arg;

	if (ev->phase == GC_RUN_WAITING_SSH && ev->err && !ctx->out->quiet)
		gc_out_printf(ctx->out, ctx->out->err, "waiting for SSH on %s: %s\n", ev->node_name,
			      ev->err->message);
}

/*
 * A node pinned just now may still be booting: waits (up to wait_ms) until our own client
 * logs in, so ssh is not started against a closed port. With trust on first use, that
 * login is what pins the key, with the instance id. The waiting is the runner's (one
 * no-op step), so its bounds and messages are the bootstrap's.
 */
static int wait_login(struct gc_cmd_ctx *ctx, const struct gc_boot *b, const struct gc_keypair *key,
		      struct gc_known_hosts *kh, bool tofu, uint64_t wait_ms)
{
	const struct gc_runner_step step = { .name = "login", .script = "true", .always = true };
	const struct gc_runner_node node = { .name = b->info[0].label,
					     .host = b->info[0].host,
					     .port = b->port,
					     .instance_id = b->info[0].id };
	struct gc_runner_opts ro;
	struct gc_runner_report rep;
	struct gc_error err;
	int rc;

	memset(&ro, 0, sizeof(ro));
	ro.user = b->user;
	ro.key = key;
	ro.known_hosts = kh;
	ro.trust_on_first_use = tofu;
	ro.steps = &step;
	ro.n_steps = 1;
	ro.ssh_wait_ms = wait_ms;
	ro.progress = on_wait;
	ro.progress_ctx = ctx;
	ro.cancelled = ssh_cancelled;
	ro.log = ctx->log;
	gc_error_init(&err);
	gc_runner_report_init(&rep);
	rc = gc_runner_run(&ro, &node, 1, &rep, &err);
	if (rc < 0)
		gc_cmd_report_error(
			ctx, b->info[0].id,
			rep.n_nodes && rep.nodes[0].err.code != GC_OK ? &rep.nodes[0].err : &err);
	gc_runner_report_release(&rep);
	return rc;
}

static int ssh_exec(struct gc_cmd_ctx *ctx)
{
	const char *name = ctx->args[ctx->n_args - 1];
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_instance_list live;
	struct gc_boot b;
	struct gc_keypair key;
	struct gc_known_hosts kh;
	struct gc_boot_pin_opts po;
	struct gc_error err;
	char **argv = NULL, *key_path = NULL, *kh_path = NULL;
	char port[16];
	bool tofu = false, kh_open = false;
	uint64_t wait_ms = (uint64_t)gc_cmd_opt_int(ctx, "ssh-wait") * 1000;
	size_t at, n = 0;
	int rc = GC_EXIT_FAILURE;

	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_error_init(&err);
	gc_instance_list_init(&live);
	gc_boot_init(&b);
	gc_keypair_init(&key);
	memset(&kh, 0, sizeof(kh));
	if (gc_engine_discover(&e, &live, &err) < 0 ||
	    gc_boot_add_nodes(&b, ctx->spec, &live, NULL, ctx->log, &err) < 0 ||
	    gc_boot_find(&b, name, &at, &err) < 0 || gc_boot_select(&b, &name, 1, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		if (err.code == GC_ENOTFOUND || err.code == GC_EINVALID)
			gc_out_hint(ctx->out, "'%s status' lists the cluster's nodes", GC_PROGRAM);
		goto out;
	}
	if (gc_engine_keypair(&e, &key, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		goto out;
	}
	kh_path = gc_xasprintf("%s/known_hosts", e.state_dir);
	if (gc_known_hosts_open(&kh, kh_path, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		goto out;
	}
	kh_open = true;
	memset(&po, 0, sizeof(po));
	po.console_wait_ms = wait_ms < GC_BOOT_CONSOLE_WAIT_MS ? wait_ms : GC_BOOT_CONSOLE_WAIT_MS;
	po.strict = gc_cmd_opt_given(ctx, "strict-host-keys");
	po.cancelled = ssh_cancelled;
	po.log = ctx->log;
	if (gc_boot_pin(&b, e.provider, &kh, &po, &tofu, &err) < 0) {
		gc_cmd_report_error(ctx, "host keys", &err);
		goto out;
	}
	if (b.info[0].pin != GC_BOOT_PIN_KNOWN && wait_login(ctx, &b, &key, &kh, tofu, wait_ms) < 0)
		goto out;

	key_path = gc_xasprintf("%s/id_ed25519", e.state_dir);
	snprintf(port, sizeof(port), "%u", b.port);
	/* every word is our own copy: execvp's argv is not const */
	argv = gc_xcalloc(32 + ctx->n_cmd, sizeof(*argv));
	argv[n++] = gc_xstrdup("ssh");
	argv[n++] = gc_xstrdup("-i");
	argv[n++] = gc_xstrdup(key_path);
	argv[n++] = gc_xstrdup("-o");
	argv[n++] = gc_xasprintf("UserKnownHostsFile=%s", kh_path);
	argv[n++] = gc_xstrdup("-o");
	argv[n++] = gc_xstrdup("GlobalKnownHostsFile=/dev/null");
	argv[n++] = gc_xstrdup("-o");
	argv[n++] = gc_xstrdup("StrictHostKeyChecking=yes");
	argv[n++] = gc_xstrdup("-o");
	argv[n++] = gc_xstrdup("IdentitiesOnly=yes");
	argv[n++] = gc_xstrdup("-o");
	argv[n++] = gc_xstrdup("BatchMode=yes");
	argv[n++] = gc_xstrdup("-p");
	argv[n++] = gc_xstrdup(port);
	argv[n++] = gc_xstrdup("--");
	argv[n++] = gc_xasprintf("%s@%s", b.user, b.info[0].host);
	for (size_t i = 0; i < ctx->n_cmd; i++)
		argv[n++] = gc_xstrdup(ctx->cmd[i]);
	argv[n] = NULL;
	gc_log_debug(ctx->log, "running ssh for %s (%s) at %s port %s", b.info[0].id,
		     b.info[0].label, b.info[0].host, port);
	fflush(ctx->out->out);
	fflush(ctx->out->err);
	execvp("ssh", argv);
	gc_out_error(ctx->out, "cannot run 'ssh': %s", strerror(errno));
	gc_out_hint(ctx->out, "install OpenSSH's client (openssh-client)");
out:
	for (size_t i = 0; i < n; i++)
		free(argv[i]);
	free(argv);
	free(key_path);
	if (kh_open)
		gc_known_hosts_release(&kh);
	free(kh_path);
	gc_keypair_release(&key);
	gc_boot_release(&b);
	gc_instance_list_release(&live);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_ssh = {
	.name = "ssh",
	.summary = "open a shell on a node (or run CMD) with the cluster's pinned keys",
	.usage = "[FILE] NODE [-- CMD...]",
	.description = "Runs OpenSSH's ssh as the spec's SSH user on NODE (an instance id, a\n"
		       "unique prefix of one, or GROUP/N, the Nth running node of GROUP by\n"
		       "launch order), with the cluster's key and its known_hosts: the node's\n"
		       "host key must be the one pinned for it, never another.",
	.opts = ssh_opts,
	.min_args = 1,
	.max_args = 2,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_REMOTE_CMD,
	.exec = ssh_exec,
};
