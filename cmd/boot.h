/*
 * boot.h: the bootstrapper as the commands use it.
 *
 * apply, scale, bootstrap, smoke and exec all do the same thing with different steps:
 * find the cluster's running nodes, pin their host keys, run steps on them through the
 * runner with live progress on stderr, and report per node. boot.c holds that once
 * (gc_cmd_boot_run, the reports, and apply's "bootstrap, then replace the unhealthy
 * ones"); progress.c turns the runner's events into a live display on a terminal (one
 * line per node, rewritten in place, with elapsed times) or plain lines in a log.
 *
 * Life cycle: gc_cmd_boot_init -> gc_cmd_boot_run -> gc_cmd_boot_print / _json ->
 * gc_cmd_boot_release. A struct gc_cmd_progress lives on the stack of gc_cmd_boot_run for
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

struct gc_cmd_boot_opts {
	enum gc_boot_mode mode;
	const char *from;	  /* run this step and the later ones whatever the markers */
	const char *const *names; /* only these nodes (ids, prefixes, GROUP/N); NULL: all */
	size_t n_names;
	const char *const *ids; /* only these instances (exact ids); NULL: all */
	size_t n_ids;
	const char *command; /* GC_BOOT_EXEC */
	uint64_t timeout_ms; /* GC_BOOT_EXEC; 0: the runner's default */
	/* Called once the nodes and steps are set, before any host key is pinned: a chance
	 * to give the nodes their own inputs (run's ranks). Returns 0, or -1 with err set.
	 * NULL: none. */
	int (*prepare)(void *ctx, struct gc_boot *b, struct gc_error *err);
	void *prepare_ctx;
	/* GC_BOOT_EXEC: the command's output, line by line as it comes (the step streams,
	 * the report keeps none of it, and progress is never drawn in place). NULL: the
	 * output is in the report. */
	void (*output)(void *ctx, const struct gc_runner_line *line);
	void *output_ctx;
};

struct gc_cmd_boot {
	struct gc_boot boot;
	struct gc_runner_report report;
	struct gc_smoke_report *smoke; /* boot.n_nodes when the mode has a smoke step */
	bool ran;		       /* the runner ran (there were nodes) */
	size_t n_failed;	       /* nodes that did not finish every step */
	size_t n_unhealthy;	       /* of those, nodes whose smoke test ran and failed */
	char **console; /* boot.n_nodes: for a node that never answered SSH, its console */
	char *verb;	/* "bootstrap", "smoke", "exec": for messages */
};

void gc_cmd_boot_init(struct gc_cmd_boot *b);
void gc_cmd_boot_release(struct gc_cmd_boot *b);

/*
 * Finds the running nodes (from live, or discovered when live is NULL), keeps the ones o
 * names, pins their host keys, runs o's steps on them and parses the smoke reports.
 * Problems with the whole run (no such node, a changed host key, a bad --from) are
 * reported here; per-node outcomes are left to gc_cmd_boot_print. Returns an exit code:
 * 0 when every node finished (also when there were no running nodes: check ran), 1 when
 * any failed, 64 for a bad --from, 130 when interrupted.
 */
int gc_cmd_boot_run(struct gc_cmd_ctx *ctx, struct gc_engine *e,
		    const struct gc_instance_list *live, const struct gc_cmd_boot_opts *o,
		    struct gc_cmd_boot *out);

/* Text: each failed node with its reason and the failed step's last lines (stderr), a
 * summary line (stderr), then the smoke table (stdout). */
void gc_cmd_boot_print(struct gc_cmd_ctx *ctx, const struct gc_cmd_boot *b);

/* The whole of `bootstrap` and `smoke`: run with o on the cluster's running nodes (an
 * error when there are none, with hint as a hint when not NULL), then print or write the
 * JSON report. Returns an exit code. */
int gc_cmd_boot_command(struct gc_cmd_ctx *ctx, const struct gc_cmd_boot_opts *o, const char *hint);

/*
 * The script that runs the user's command line (ctx->cmd, words joined by spaces, run by
 * bash as ssh runs its command) on a node: before, then the command in a subshell (its
 * `exit` ends only the subshell), then after_rc with $gc_rc set; exit status 100, which
 * steps use to ask for a reboot, is reported as 1 so that a command exiting 100 (apt-get
 * does) never reboots a node. before and after_rc may be "".
 */
char *gc_cmd_user_script(const struct gc_cmd_ctx *ctx, const char *before, const char *after_rc);

/* The smoke table alone, on stdout: node, GPUs, model, bandwidths, GEMM, result. */
void gc_cmd_boot_print_smoke(struct gc_cmd_ctx *ctx, const struct gc_cmd_boot *b);

/* {"nodes":[...], "ok":N, "failed":N, "unhealthy":N, "wall_ms":N} (see docs/cli.md). */
json_t *gc_cmd_boot_json(const struct gc_cmd_boot *b);

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
/* The runner's callbacks: progress, and cancelled (which also ticks the elapsed times). */
void gc_cmd_progress_event(void *p, const struct gc_runner_event *ev);
bool gc_cmd_progress_tick(void *p);

#endif
