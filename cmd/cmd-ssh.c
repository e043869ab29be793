/*
 * cmd-ssh.c: `gpucluster ssh [FILE] NODE [-- CMD...]` (docs/cli.md "ssh"): pins the node
 * first if needed, then this process becomes OpenSSH's ssh (exec) with exactly the
 * cluster's key and pinned host key, so the terminal, signals and exit status are ssh's.
 * Only cmd/ runs other programs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/session.h"
#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/engine.h"
#include "core/state.h"

static const struct gc_opt ssh_opts[] = {
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

/*
 * A node pinned just now may still be booting: waits (up to the session's ssh_wait)
 * until our own client logs in, so ssh is not started against a closed port. With trust
 * on first use, that login is what pins the key, with the instance id. The waiting is
 * the runner's (one no-op step), so its bounds and messages are the bootstrap's.
 */
static int wait_login(struct gc_cmd_ctx *ctx, struct gc_session *s, const struct gc_session_opts *o)
{
	const struct gc_runner_step step = { .name = "login", .script = "true", .always = true };
	struct gc_runner_report rep;
	struct gc_error err;
	int rc;

	gc_error_init(&err);
	gc_runner_report_init(&rep);
	rc = gc_session_run_steps(s, &step, 1, NULL, 0, o, &rep, &err);
	if (rc < 0)
		gc_cmd_report_error(
			ctx, s->boot.info[0].id,
			rep.n_nodes && rep.nodes[0].err.code != GC_OK ? &rep.nodes[0].err : &err);
	gc_runner_report_release(&rep);
	return rc;
}

static int ssh_exec(struct gc_cmd_ctx *ctx)
{
	const char *name = ctx->args[ctx->n_args - 1];
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_session s;
	struct gc_session_opts so = {
		.mode = GC_BOOT_LOGIN,
		.names = &name,
		.n_names = 1,
		.ssh_wait_ms = (uint64_t)gc_cmd_opt_int(ctx, "ssh-wait") * 1000,
		.strict = gc_cmd_opt_given(ctx, "strict-host-keys"),
		.cb = { .progress = gc_cmd_progress_wait,
			.progress_ctx = ctx,
			.cancelled = gc_cmd_progress_tick },
	};
	struct gc_error err;
	char **argv = NULL, *key_path = NULL;
	char port[16];
	size_t n = 0;
	int rc = GC_EXIT_FAILURE;

	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_error_init(&err);
	gc_session_init(&s);
	if (gc_session_open(&s, &e, NULL, &so, &err) < 0) {
		gc_cmd_report_error(ctx, s.stage == GC_SESSION_PIN ? "host keys" : NULL, &err);
		if (s.stage <= GC_SESSION_SELECT &&
		    (err.code == GC_ENOTFOUND || err.code == GC_EINVALID))
			gc_out_hint(ctx->out, "'%s status' lists the cluster's nodes", GC_PROGRAM);
		goto out;
	}
	if (s.boot.info[0].pin != GC_BOOT_PIN_KNOWN && wait_login(ctx, &s, &so) < 0)
		goto out;

	key_path = gc_state_path(e.state_dir, GC_STATE_KEY);
	snprintf(port, sizeof(port), "%u", s.boot.port);
	/* every word is our own copy: execvp's argv is not const */
	argv = gc_xcalloc(32 + ctx->n_cmd, sizeof(*argv));
	argv[n++] = gc_xstrdup("ssh");
	argv[n++] = gc_xstrdup("-i");
	argv[n++] = gc_xstrdup(key_path);
	argv[n++] = gc_xstrdup("-o");
	argv[n++] = gc_xasprintf("UserKnownHostsFile=%s", s.kh_path);
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
	argv[n++] = gc_xasprintf("%s@%s", s.boot.user, s.boot.info[0].host);
	for (size_t i = 0; i < ctx->n_cmd; i++)
		argv[n++] = gc_xstrdup(ctx->cmd[i]);
	argv[n] = NULL;
	gc_log_debug(ctx->log, "running ssh for %s (%s) at %s port %s", s.boot.info[0].id,
		     s.boot.info[0].label, s.boot.info[0].host, port);
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
	gc_session_release(&s);
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
