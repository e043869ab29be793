/*
 * boot.h: the bootstrapper as the commands use it. apply, scale, bootstrap, smoke, exec and
 * run all run a session (bootstrap/session.h); boot.c holds its printing side once, and
 * progress.c is the one progress printer.
 *
 * Life cycle: gc_session_init -> gc_cmd_boot_run -> gc_cmd_boot_json or the text report ->
 * gc_session_release. A struct gc_cmd_progress lives on the stack of gc_cmd_boot_run for
 * one run of the runner.
 */
#ifndef GC_CMD_BOOT_H
#define GC_CMD_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bootstrap/cluster.h"
#include "bootstrap/runner.h"
#include "bootstrap/session.h"
#include "cmd/cmd.h"
#include "core/engine.h"

/* Options of every command that connects to the nodes (rows of a struct gc_opt table). */
/* clang-format off */
#define GC_CMD_SSH_OPTS \
	{ .name = "ssh-wait", .type = GC_OPT_INT, .arg = "SECONDS", \
	  .help = "how long to wait for a node to answer on SSH", \
	  .def = "300", .min = 1, .max = 3600 }, \
	{ .name = "strict-host-keys", .type = GC_OPT_FLAG, \
	  .help = "never trust a host key on first use" }

/* --node, repeatable, for the commands that may run on some of the nodes. */
#define GC_CMD_NODE_OPT \
	{ .name = "node", .type = GC_OPT_STRING, .arg = "NODE", \
	  .help = "only this node (an id, a prefix of one, or GROUP/N)", .repeat = true }

/* apply's and scale's options: confirmation, the wait for instances, the bootstrap that
 * follows them. */
#define GC_CMD_APPLY_OPTS \
	{ .name = "auto-approve", .short_name = 'y', .type = GC_OPT_FLAG, \
	  .help = "apply without asking for confirmation" }, \
	{ .name = "wait-timeout", .type = GC_OPT_INT, .arg = "SECONDS", \
	  .help = "how long to wait for instances to run", \
	  .def = "900", .min = 1, .max = 86400 }, \
	{ .name = "no-wait", .type = GC_OPT_FLAG, \
	  .help = "return once the cloud accepted the launches (no bootstrap)" }, \
	GC_CMD_APPLY_BOOT_OPTS

#define GC_CMD_APPLY_BOOT_OPTS \
	{ .name = "no-bootstrap", .type = GC_OPT_FLAG, \
	  .help = "create and terminate instances only: no bootstrap" }, \
	{ .name = "replace-unhealthy", .type = GC_OPT_FLAG, \
	  .help = "replace nodes that fail the smoke test (once)" }, \
	GC_CMD_SSH_OPTS
/* clang-format on */

/*
 * Opens a session (bootstrap/session.h) with o and the command's --ssh-wait,
 * --strict-host-keys and -vv, and runs it with live progress on stderr. out is
 * initialised (gc_session_init) and released by the caller. Problems with the whole run
 * (no such node, a changed host key, a bad --from) are reported here; per-node outcomes
 * are left to the caller's report. Returns an exit code: 0 when every node finished (also
 * when there were no running nodes: check out->ran), 1 when any failed, 64 for a bad
 * --from, 130 when interrupted.
 */
int gc_cmd_boot_run(struct gc_cmd_ctx *ctx, struct gc_engine *e,
		    const struct gc_instance_list *live, const struct gc_session_opts *o,
		    struct gc_session *out);

/* The whole of `bootstrap`, `smoke` and `exec`: run with o on the cluster's running nodes
 * (an error when there are none, with hint as a hint when not NULL), then write the JSON
 * report (to_json) or the text one (print); NULL: the bootstrap's. Returns an exit code. */
int gc_cmd_boot_command(struct gc_cmd_ctx *ctx, const struct gc_session_opts *o, const char *hint,
			json_t *(*to_json)(const struct gc_session *),
			void (*print)(struct gc_cmd_ctx *, const struct gc_session *));

/*
 * The script that runs the user's command line (ctx->cmd, words joined by spaces, run by
 * bash as ssh runs its command) on a node: before, then the command in a subshell (its
 * `exit` ends only the subshell), then after_rc with $gc_rc set; exit status 100, which
 * steps use to ask for a reboot, is reported as 1 so that a command exiting 100 (apt-get
 * does) never reboots a node. before and after_rc may be "".
 */
char *gc_cmd_user_script(const struct gc_cmd_ctx *ctx, const char *before, const char *after_rc);

/* The text report of a session: what failed, the counts, the smoke table. */
void gc_cmd_boot_print(struct gc_cmd_ctx *ctx, const struct gc_session *b);

/* {"nodes":[...], "ok":N, "failed":N, "unhealthy":N, "wall_ms":N} (see docs/cli.md). */
json_t *gc_cmd_boot_json(const struct gc_session *b);

/*
 * apply and scale, once the engine is done: bootstraps every running node (unless
 * --no-bootstrap) and, with --replace-unhealthy, terminates the nodes whose smoke test
 * failed, applies again (with scale's count overrides names/counts, as the first time)
 * and bootstraps the new nodes, once. doc (JSON mode; else NULL) gets "bootstrap" and
 * "replaced". Returns an exit code.
 */
int gc_cmd_apply_bootstrap(struct gc_cmd_ctx *ctx, struct gc_engine *e,
			   const struct gc_engine_opts *eopts, json_t *doc,
			   const char *const *names, const unsigned *counts, size_t n_over);

/* ---- progress.c ---------------------------------------------------------------------- */

struct gc_cmd_progress_node;

struct gc_cmd_progress {
	struct gc_cmd_ctx *ctx;
	const struct gc_boot *boot;
	const char *verb;
	bool show;  /* not quiet */
	bool live;  /* rewrite lines in place (a terminal, and no log lines to mix with) */
	bool terse; /* in a log, only what went wrong (exec) */
	uint64_t start_ns, last_draw_ns;
	size_t lines; /* drawn by the last redraw */
	size_t done, failed;
	struct gc_cmd_progress_node *nodes;
};

void gc_cmd_progress_begin(struct gc_cmd_progress *p, struct gc_cmd_ctx *ctx,
			   const struct gc_boot *boot, const char *verb);
/* Draws the final state and frees what begin allocated. */
void gc_cmd_progress_end(struct gc_cmd_progress *p);
/* The runner's callbacks: progress, and cancelled (SIGINT/SIGTERM; with a progress, it
 * also ticks the elapsed times; NULL: only the signals, as when pinning). */
void gc_cmd_progress_event(void *p, const struct gc_runner_event *ev);
bool gc_cmd_progress_tick(void *p);
/* ssh's wait for a node (ctx: the struct gc_cmd_ctx): a line per failed attempt. */
void gc_cmd_progress_wait(void *ctx, const struct gc_runner_event *ev);

#endif
