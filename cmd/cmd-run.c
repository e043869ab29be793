/*
 * cmd-run.c: `gpucluster run [FILE] [--down] [--no-apply] -- CMD...`: apply, CMD on every
 * node with its rank variables, then with --down destroy. docs/cli.md ("run") gives the
 * signals and exit codes; the design rule is that the teardown listens only to the second
 * signal (gc_cmd_interrupts), so the interrupt that stopped the job cannot cut it short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/cluster.h"
#include "bootstrap/hosts.h"
#include "bootstrap/runner.h"
#include "cmd/boot.h"
#include "cmd/ci-key.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/job.h"
#include "cmd/workdir.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/keygen.h"

#define RUN_N_VARS	 (2 * GC_HOSTS_N_ENV + 2) /* + GPUCLUSTER_NODE, _RUN_ID; PET_* */
#define STOP_TIMEOUT_MS	 30000
#define STOP_SSH_WAIT_MS 15000
/* fail-fast: ranks that fail within this of the first one report their own exit */
#define RUN_FAIL_FAST_MS 1000

static const char *const run_on_names[] = { "all", "node0", NULL };

static const struct gc_opt run_opts[] = {
	{ .name = "down",
	  .type = GC_OPT_FLAG,
	  .help = "destroy the cluster afterwards, whatever happened (failure, Ctrl-C)" },
	{ .name = "no-apply",
	  .type = GC_OPT_FLAG,
	  .help = "run on the cluster as it is (it must have running nodes)" },
	{ .name = "master-port",
	  .type = GC_OPT_INT,
	  .arg = "PORT",
	  .help = "MASTER_PORT given to the command",
	  .def = "29500",
	  .min = 1,
	  .max = 65535 },
	{ .name = "timeout",
	  .type = GC_OPT_INT,
	  .arg = "SECONDS",
	  .help = "how long the command may run on a node",
	  .def = "604800",
	  .min = 1,
	  .max = 2592000 },
	{ .name = "detach",
	  .type = GC_OPT_FLAG,
	  .help = "start the command under a supervisor on the nodes and return (see 'jobs', 'logs')" },
	{ .name = "env",
	  .type = GC_OPT_STRING,
	  .arg = "NAME=VALUE",
	  .help = "a variable for the command (repeatable; after the spec's envs)",
	  .repeat = true },
	{ .name = "on",
	  .type = GC_OPT_CHOICE,
	  .choices = run_on_names,
	  .arg = "WHERE",
	  .help = "launch on every node (all) or on the first only (node0: mpirun, deepspeed)",
	  .def = "all" },
	{ .name = "recover",
	  .type = GC_OPT_INT,
	  .arg = "N",
	  .help = "when the command fails (a spot node reclaimed), apply again, which replaces "
		  "lost nodes, and re-run it, up to N times",
	  .def = "0",
	  .min = 0,
	  .max = 100 },
	{ .name = "workdir",
	  .type = GC_OPT_STRING,
	  .arg = "DIR",
	  .help = "sync DIR to every node first; the command starts there (over the spec's workdir)" },
	GC_CMD_APPLY_OPTS,
	{ .name = NULL },
};

/* Where the command records its process group on the node, so a stop can kill it all. */
#define RUN_PGID_FILE "\"$HOME/.gpucluster/run-$GPUCLUSTER_RUN_ID.pgid\""

/*
 * The script run on each node. As under exec, the command runs in a subshell and exit 100
 * (a step's reboot request) becomes 1. The runner's `timeout` puts the script in a
 * process group of its own, which the script writes down for stop_remote.
 */
static char *run_script(const struct gc_cmd_ctx *ctx, const char *job_env)
{
	char *before = gc_xasprintf("%s%s", job_env ? job_env : "",
				    "gc_f=" RUN_PGID_FILE "\n"
				    "if mkdir -p \"$HOME/.gpucluster\" 2>/dev/null &&\n"
				    "\tread -r _ _ _ _ gc_pg _ 2>/dev/null </proc/$$/stat; then\n"
				    "\tprintf '%s\\n' \"$gc_pg\" >\"$gc_f\" 2>/dev/null || true\n"
				    "fi\n");
	char *script = gc_cmd_user_script(ctx, before, "rm -f \"$gc_f\"\n");

	gc_wipe_free(before);
	return script;
}

/* TERM to the command's process group, KILL after 5 s: what Ctrl-C is to a local job. */
static const char stop_script[] =
	"f=" RUN_PGID_FILE "\n"
	"[ -f \"$f\" ] || exit 0\n"
	"pg=$(cat \"$f\")\n"
	"case $pg in '' | *[!0-9]*) exit 0 ;; esac\n"
	"read -r _ _ _ _ me _ </proc/$$/stat || me=\n"
	"[ \"$pg\" != \"$me\" ] || exit 0 # a stale file: that group is ours\n"
	"kill -TERM -- \"-$pg\" 2>/dev/null || true\n"
	"for _ in 1 2 3 4 5 6 7 8 9 10; do\n"
	"\tkill -0 -- \"-$pg\" 2>/dev/null || break\n"
	"\tsleep 0.5\n"
	"done\n"
	"kill -KILL -- \"-$pg\" 2>/dev/null || true\n"
	"rm -f \"$f\"\n";

struct run_state {
	struct gc_cmd_ctx *ctx;
	unsigned master_port;
	char run_id[48];
	struct gc_hosts hosts;
	struct gc_hosts_var *env;   /* GC_HOSTS_N_ENV per node */
	struct gc_runner_var *vars; /* RUN_N_VARS per node */
	const struct gc_boot *boot;
	int width; /* of the widest label */
	/* exports of envs, --env and secrets (cmd/job.h) */
	char *job_env;
	struct gc_hosts_var *pet; /* GC_HOSTS_N_ENV per node: torchrun's PET_* */
	bool node0;		  /* --on node0 */
};

/* Node i's torchrun PET_* variables into v (GC_HOSTS_N_ENV of them). */
static void run_pet_vars(struct run_state *rs, size_t i, struct gc_runner_var *v)
{
	struct gc_hosts_var *pet;

	if (!rs->pet)
		rs->pet = gc_xcalloc(rs->hosts.n * GC_HOSTS_N_ENV + 1, sizeof(*rs->pet));
	pet = &rs->pet[i * GC_HOSTS_N_ENV];
	gc_hosts_pet_env(&rs->hosts, i, rs->master_port, pet);
	for (size_t k = 0; k < GC_HOSTS_N_ENV; k++)
		v[k] = (struct gc_runner_var){ .name = pet[k].name, .value = pet[k].value };
}

/* --on node0: the launcher (mpirun, deepspeed) starts the other ranks itself, so the
 * command runs on the first node only, with the whole cluster's variables. */
static void run_keep_node0(struct gc_boot *b)
{
	char *id = gc_xstrdup(b->info[0].id);
	const char *ids[] = { id };

	gc_boot_keep_ids(b, ids, 1);
	free(id);
}

/* The nodes are known: each gets its rank variables (the ones hosts --format torchrun
 * prints), its label and the run's id. */
static int run_prepare(void *arg, struct gc_session *s, struct gc_error *err)
{
	struct run_state *rs = arg;
	struct gc_boot *b = &s->boot;

	if (gc_hosts_add_boot(&rs->hosts, b, s->live, NULL, err) < 0)
		return -1;
	rs->env = gc_xcalloc(b->n_nodes * GC_HOSTS_N_ENV + 1, sizeof(*rs->env));
	rs->vars = gc_xcalloc(b->n_nodes * RUN_N_VARS + 1, sizeof(*rs->vars));
	for (size_t i = 0; i < b->n_nodes; i++) {
		struct gc_hosts_var *env = &rs->env[i * GC_HOSTS_N_ENV];
		struct gc_runner_var *v = &rs->vars[i * RUN_N_VARS];
		int w = (int)strlen(b->info[i].label);

		gc_hosts_env(&rs->hosts, i, rs->master_port, env);
		for (size_t k = 0; k < GC_HOSTS_N_ENV; k++)
			v[k] = (struct gc_runner_var){ .name = env[k].name, .value = env[k].value };
		v[GC_HOSTS_N_ENV] = (struct gc_runner_var){ .name = "GPUCLUSTER_NODE",
							    .value = b->info[i].label };
		v[GC_HOSTS_N_ENV + 1] =
			(struct gc_runner_var){ .name = "GPUCLUSTER_RUN_ID", .value = rs->run_id };
		run_pet_vars(rs, i, &v[GC_HOSTS_N_ENV + 2]);
		b->nodes[i].vars = v;
		b->nodes[i].n_vars = RUN_N_VARS;
		if (w > rs->width)
			rs->width = w;
	}
	rs->boot = b;
	if (rs->node0)
		run_keep_node0(b);
	return 0;
}

/* One line of a node's output (gc_job_print_line). */
static void run_line(void *arg, const struct gc_runner_line *l)
{
	struct run_state *rs = arg;

	gc_job_print_line(rs->ctx->out, rs->boot, rs->width, l);
}

/* ---- stopping the command on the nodes ---------------------------------------------- */

/*
 * After an interrupt without --down: the runner only closed its connections, and a
 * command without a terminal outlives its SSH channel, so each node is asked to kill the
 * command's process group. Bounded; a further signal ends gpucluster at once.
 */
static void stop_remote(struct gc_cmd_ctx *ctx, struct gc_session *b, const char *run_id,
			const char *why)
{
	const struct gc_runner_step step = {
		.name = "stop", .script = stop_script, .timeout_ms = STOP_TIMEOUT_MS, .always = true
	};
	const struct gc_runner_var var = { .name = "GPUCLUSTER_RUN_ID", .value = run_id };
	const struct gc_session_opts o = { .ssh_wait_ms = STOP_SSH_WAIT_MS };
	struct gc_runner_report rep;
	struct gc_error err;

	gc_error_init(&err);
	gc_runner_report_init(&rep);
	gc_out_printf(ctx->out, ctx->out->err, "run: %s: stopping the command on %zu node%s\n", why,
		      b->boot.n_nodes, b->boot.n_nodes == 1 ? "" : "s");
	if (gc_session_run_steps(b, &step, 1, &var, 1, &o, &rep, &err) < 0)
		gc_out_warn(ctx->out,
			    "the command may still run on some nodes (%s): '%s exec -- pkill "
			    "...' or the cluster's TTL ends it",
			    err.message, GC_PROGRAM);
	gc_runner_report_release(&rep);
}

/* ---- the teardown ----------------------------------------------------------------- */

struct teardown {
	struct gc_output *out;
	unsigned before; /* signals caught before the teardown began */
	bool warned;
};

static struct teardown teardown_state;

/* The teardown's own cancel check: only the run's second signal stops it. */
static bool teardown_cancelled(void *arg)
{
	struct teardown *t = &teardown_state;
	unsigned n = gc_cmd_interrupts();

	(void)arg;
	if (n >= 2)
		return true;
	if (n > t->before && !t->warned) {
		t->warned = true;
		gc_cmd_engine_progress_done();
		gc_out_warn(t->out,
			    "the teardown goes on: press Ctrl-C again to abort it (the "
			    "nodes then keep running, and billing)");
	}
	return false;
}

/* Destroys the cluster; returns 0, GC_EXIT_FAILURE when the teardown failed, or
 * GC_EXIT_INTERRUPTED when a second signal aborted it. */
static int teardown(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct gc_engine_opts *eopts,
		    const char *why)
{
	struct gc_output *o = ctx->out;
	struct gc_engine_report report;
	struct gc_lock lock = { .fd = -1 };
	struct gc_error err;
	bool (*old_cancel)(void *) = ctx->provider->cancelled;
	void *old_ctx = ctx->provider->cancel_ctx;
	bool reached = false;
	int rc = GC_EXIT_FAILURE;

	gc_error_init(&err);
	gc_engine_report_init(&report);
	teardown_state = (struct teardown){ .out = o, .before = gc_cmd_interrupts() };
	gc_out_printf(o, o->err, "\n%s==> run --down: %s; destroying cluster '%s' (%s %s)%s\n",
		      gc_out_style(o, o->err, GC_STYLE_BOLD), why, ctx->spec->name,
		      ctx->spec->provider.name, ctx->spec->provider.region,
		      gc_out_style(o, o->err, GC_STYLE_RESET));
	gc_out_printf(o, o->err,
		      "%s==> press Ctrl-C %s to abort the teardown: the nodes then keep running, "
		      "and billing, until '%s destroy'%s\n",
		      gc_out_style(o, o->err, GC_STYLE_BOLD),
		      teardown_state.before ? "again" : "twice", GC_PROGRAM,
		      gc_out_style(o, o->err, GC_STYLE_RESET));
	fflush(o->err);
	/* neither the engine nor the driver's rate-limit waits may see the first signal */
	eopts->cancelled = teardown_cancelled;
	eopts->cancel_ctx = NULL;
	eopts->wait_timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "wait-timeout") * 1000;
	ctx->provider->cancelled = teardown_cancelled;
	ctx->provider->cancel_ctx = NULL;
	if (teardown_cancelled(NULL)) {
		gc_error_set(&err, GC_ECANCELLED, "teardown: cancelled before it began");
		gc_cmd_report_error(ctx, NULL, &err);
	} else if (gc_cmd_lock(ctx, e, &lock) < 0) {
		gc_error_set(&err, GC_ELOCKED, "locked"); /* reported by gc_cmd_lock */
	} else {
		reached = true;
		rc = gc_engine_destroy(e, eopts, &report, &err) == 0 ? GC_EXIT_OK : GC_EXIT_FAILURE;
		gc_cmd_print_report(ctx, "destroy", &report);
		if (rc == GC_EXIT_OK)
			goto out;
		gc_cmd_report_error(ctx, "teardown", &err);
	}
	gc_out_error(o, "TEARDOWN %s: cluster '%s' may still be running, and billing",
		     err.code == GC_ECANCELLED ? "ABORTED" : "FAILED", ctx->spec->name);
	if (err.code == GC_ECANCELLED)
		rc = GC_EXIT_INTERRUPTED;
	gc_out_hint(o, "'%s destroy -y %s' finishes it", GC_PROGRAM, ctx->spec_file);
out:
	/* in GitHub Actions, the same summary as destroy's */
	if (ctx->gha && reached)
		gc_gha_report_destroy(ctx, "", &report, &err);
	ctx->provider->cancelled = old_cancel;
	ctx->provider->cancel_ctx = old_ctx;
	gc_lock_release(&lock);
	gc_engine_report_release(&report);
	return rc;
}

/* ---- the command ------------------------------------------------------------------- */

/* run --detach: where the job is now, and how to follow it; with --down, how the cluster
 * ends (docs/internals/idle.md). */
static void job_started(struct gc_cmd_ctx *ctx, const char *id)
{
	gc_out_printf(ctx->out, ctx->out->err,
		      "run: job %s runs on its own: '%s logs --follow -f %s %s' follows it, "
		      "'%s jobs %s' lists it\n",
		      id, GC_PROGRAM, ctx->spec_file, id, GC_PROGRAM, ctx->spec_file);
	if (gc_cmd_opt_given(ctx, "down")) {
		gc_out_printf(ctx->out, ctx->out->err,
			      "run: --down: each node powers itself off when its rank ends; the "
			      "cloud then terminates or stops it, and '%s gc' deletes stopped "
			      "nodes and what the cluster leaves behind\n",
			      GC_PROGRAM);
		if (!ctx->spec->lifecycle.ttl_s)
			gc_out_hint(ctx->out,
				    "give the spec a lifecycle.ttl: the cloud then ends the nodes "
				    "even if a job hangs");
	}
	gc_out_printf(ctx->out, ctx->out->out, "%s\n", id);
}

/* The summary of the command: each failed node, then one line. */
static void print_outcome(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	size_t n = b->boot.n_nodes;

	for (size_t i = 0; i < n; i++) {
		const struct gc_runner_node_result *nr = &b->report.nodes[i];
		const struct gc_runner_step_result *sr = &nr->steps[0];

		if (nr->err.code == GC_OK)
			continue;
		if (sr->state == GC_STEP_FAILED && sr->exit_signal[0])
			gc_out_error(ctx->out, "%s (%s): killed by signal %s",
				     b->boot.info[i].label, b->boot.info[i].id, sr->exit_signal);
		else if (sr->state == GC_STEP_FAILED && sr->exit_status >= 0)
			gc_out_error(ctx->out, "%s (%s): exit %d", b->boot.info[i].label,
				     b->boot.info[i].id, sr->exit_status);
		else if (nr->err.code != GC_ECANCELLED)
			gc_out_error(ctx->out, "%s (%s): %s", b->boot.info[i].label,
				     b->boot.info[i].id, nr->err.message);
	}
	gc_ci_key_session_hint(ctx, b);
	if (ctx->out->quiet)
		return;
	if (gc_cmd_interrupted())
		gc_out_printf(ctx->out, ctx->out->err, "run: interrupted after %.1fs\n",
			      (double)b->report.wall_ms / 1000);
	else if (b->n_failed)
		gc_out_printf(ctx->out, ctx->out->err, "run: failed on %zu of %zu node%s (%.1fs)\n",
			      b->n_failed - b->report.n_stopped, n, n == 1 ? "" : "s",
			      (double)b->report.wall_ms / 1000);
	else
		gc_out_printf(ctx->out, ctx->out->err, "run: exit 0 on %zu node%s (%.1fs)\n", n,
			      n == 1 ? "" : "s", (double)b->report.wall_ms / 1000);
}

/* Fail-fast: which rank's failure stopped the others, and the others' commands killed
 * (the runner only closed their connections). */
static void run_failed_fast(struct gc_cmd_ctx *ctx, struct run_state *rs, struct gc_session *b)
{
	size_t k = b->report.first_failed;
	const struct gc_error *e;

	if (k >= b->boot.n_nodes || !b->report.n_stopped)
		return;
	e = &b->report.nodes[k].err;
	gc_out_error(ctx->out, "rank %zu (%s) failed%s: stopping the other %zu rank%s", k,
		     b->boot.info[k].label,
		     e->code == GC_ETRANSIENT || e->code == GC_ETIMEOUT
			     ? " (the node was lost mid-job)"
			     : "",
		     b->report.n_stopped, b->report.n_stopped == 1 ? "" : "s");
	stop_remote(ctx, b, rs->run_id, "rank failed");
}

/* Runs the command on every running node; returns an exit code. b->ran says whether it
 * started anywhere. */
static int run_command(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct run_state *rs,
		       struct gc_session *b)
{
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC };
	char *script = gc_cmd_opt_given(ctx, "detach") ? gc_job_launch_script(ctx, rs->job_env)
						       : run_script(ctx, rs->job_env);
	int rc;

	o.command = script;
	o.timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "timeout") * 1000;
	o.prepare = run_prepare;
	o.prepare_ctx = rs;
	o.fail_fast_ms = RUN_FAIL_FAST_MS;
	o.cb.output = run_line;
	o.cb.output_ctx = rs;
	rc = gc_cmd_boot_run(ctx, e, NULL, &o, b);
	if (rc == GC_EXIT_OK && !b->ran) {
		gc_out_error(ctx->out, "cluster '%s' has no running nodes", ctx->spec->name);
		if (gc_cmd_opt_given(ctx, "no-apply"))
			gc_out_hint(ctx->out, "without --no-apply, run creates them first");
		rc = GC_EXIT_FAILURE;
	} else if (b->ran) {
		fflush(ctx->out->out);
		print_outcome(ctx, b);
		run_failed_fast(ctx, rs, b);
	}
	gc_wipe_free(script);
	return rc;
}

/*
 * --recover N around run_command: after a failure, apply again (the engine replaces the
 * nodes the cloud reclaimed) and re-run the command on the cluster as it now is, at most N
 * times; the command resumes from its own checkpoint (docs/internals/spot.md).
 */
static int run_recover(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct run_state *rs,
		       struct gc_session *b, const struct gc_workdir *wd)
{
	struct gc_output *o = ctx->out;
	unsigned n = (unsigned)gc_cmd_opt_int(ctx, "recover");
	int rc = run_command(ctx, e, rs, b);

	for (unsigned k = 1; k <= n && rc != GC_EXIT_OK && !gc_cmd_interrupted(); k++) {
		FILE *stdout_saved = o->out;
		bool color_saved = o->color_out;

		gc_out_printf(o, o->err,
			      "run: recovering (%u of %u): apply, then the command again\n", k, n);
		o->out = o->err;
		o->color_out = o->color_err;
		rc = gc_cmd_apply_run(ctx, NULL, NULL, 0);
		gc_cmd_engine_progress_done();
		o->out = stdout_saved;
		o->color_out = color_saved;
		/* a replaced node has no workdir yet: the sync sends it only what it lacks */
		if (rc == GC_EXIT_OK && wd->root && !gc_cmd_interrupted())
			rc = gc_cmd_workdir_sync(ctx, e, wd);
		if (rc != GC_EXIT_OK || gc_cmd_interrupted())
			break;
		/* the nodes may be others now: their ranks and labels anew */
		free(rs->env);
		free(rs->vars);
		rs->env = NULL;
		rs->vars = NULL;
		rs->boot = NULL;
		rs->width = 0;
		gc_hosts_release(&rs->hosts);
		gc_hosts_init(&rs->hosts, ctx->spec->name, ctx->spec->ssh.user, ctx->spec->ssh.port,
			      NULL, NULL);
		gc_session_release(b);
		gc_session_init(b);
		rc = run_command(ctx, e, rs, b);
	}
	return rc;
}

/* The workdir (--workdir, else the spec's, relative to the spec's folder) scanned into wd
 * (root NULL: none), before anything is created. Returns an exit code. */
static int run_workdir_scan(struct gc_cmd_ctx *ctx, struct gc_workdir *wd)
{
	const char *opt = gc_cmd_opt_str(ctx, "workdir"), *spec = ctx->spec->workdir;
	const char *slash = strrchr(ctx->spec_file, '/');
	struct gc_error err;
	char *dir, *msg;

	memset(wd, 0, sizeof(*wd));
	if (!opt && !spec)
		return GC_EXIT_OK;
	if (opt || spec[0] == '/' || !slash)
		dir = gc_xstrdup(opt ? opt : spec);
	else
		dir = gc_xasprintf("%.*s/%s", (int)(slash - ctx->spec_file), ctx->spec_file, spec);
	gc_error_init(&err);
	if (gc_workdir_scan(dir, wd, &err) == 0) {
		free(dir);
		return GC_EXIT_OK;
	}
	gc_workdir_release(wd);
	free(dir);
	if (opt) {
		gc_out_error(ctx->out, "--workdir: %s", err.message);
	} else {
		msg = gc_xasprintf("workdir: %s", err.message);
		gc_out_file_error(ctx->out, ctx->spec_file, ctx->spec->workdir_pos.line,
				  ctx->spec->workdir_pos.col, msg);
		free(msg);
	}
	if (err.code == GC_ETOOBIG)
		gc_out_hint(ctx->out, "the workdir is for code: at most %llu MiB and %d files",
			    (unsigned long long)(GC_WORKDIR_MAX_BYTES >> 20), GC_WORKDIR_MAX_FILES);
	return opt ? GC_EXIT_USAGE : GC_EXIT_FAILURE;
}

static int run_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_output *o = ctx->out;
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_session b;
	struct run_state rs;
	struct gc_job_env job;
	struct gc_workdir wd;
	FILE *stdout_saved = o->out;
	bool color_saved = o->color_out, down = gc_cmd_opt_given(ctx, "down"), engine = false;
	bool interrupted;
	const char *why = "the apply failed";
	int rc = GC_EXIT_OK, trc;

	if (o->format == GC_OUTPUT_JSON) {
		gc_out_error(o, "'run' has no JSON output: its output is the command's");
		gc_out_hint(o, "'%s exec -o json' gives each node's output as JSON", GC_PROGRAM);
		return GC_EXIT_USAGE;
	}
	if (gc_cmd_opt_given(ctx, "no-wait")) {
		gc_out_error(o,
			     "'--no-wait' cannot go with 'run': the command needs running nodes");
		return GC_EXIT_USAGE;
	}
	/* --down --detach: the teardown is the nodes' own (gc_job_launch_script) */
	if (down && gc_cmd_opt_given(ctx, "detach"))
		down = false;
	rc = run_workdir_scan(ctx, &wd);
	if (rc != GC_EXIT_OK)
		return rc;
	gc_job_env_init(&job);
	rc = gc_job_env_load(&job, ctx);
	if (rc != GC_EXIT_OK) {
		gc_job_env_release(&job);
		gc_workdir_release(&wd);
		return rc;
	}
	/* the command line is the confirmation of what the apply launches; terminating
	 * nodes (a spec that now says fewer) still asks, unless -y */
	ctx->launches_approved = true;
	if (down)
		gc_cmd_catch_interrupts(2);
	memset(&rs, 0, sizeof(rs));
	rs.ctx = ctx;
	rs.master_port = (unsigned)gc_cmd_opt_int(ctx, "master-port");
	rs.job_env = gc_job_env_script(&job);
	gc_job_env_release(&job);
	if (wd.root) {
		char *cd = gc_xasprintf("%scd \"" GC_WORKDIR_REMOTE "\" || exit 1\n", rs.job_env);

		gc_wipe_free(rs.job_env);
		rs.job_env = cd;
	}
	rs.node0 = strcmp(gc_cmd_opt_str(ctx, "on"), "node0") == 0;
	snprintf(rs.run_id, sizeof(rs.run_id), "%lld-%ld", (long long)time(NULL), (long)getpid());
	gc_hosts_init(&rs.hosts, ctx->spec->name, ctx->spec->ssh.user, ctx->spec->ssh.port, NULL,
		      NULL);
	gc_session_init(&b);

	/* what gpucluster says goes to stderr: stdout is the nodes' */
	o->out = o->err;
	o->color_out = o->color_err;
	if (!gc_cmd_opt_given(ctx, "no-apply"))
		rc = gc_cmd_apply_run(ctx, NULL, NULL, 0);
	gc_cmd_engine_progress_done();
	o->out = stdout_saved;
	o->color_out = color_saved;
	if (gc_cmd_engine(ctx, &e, &eopts) < 0) {
		rc = GC_EXIT_FAILURE;
		goto out;
	}
	engine = true;
	if (rc == GC_EXIT_OK && wd.root && !gc_cmd_interrupted())
		rc = gc_cmd_workdir_sync(ctx, &e, &wd);
	if (rc == GC_EXIT_OK && !gc_cmd_interrupted()) {
		rc = run_recover(ctx, &e, &rs, &b, &wd);
		why = rc == GC_EXIT_OK ? "the command succeeded" : "the command failed";
		if (rc == GC_EXIT_OK && gc_cmd_opt_given(ctx, "detach"))
			job_started(ctx, rs.run_id);
	}
	interrupted = gc_cmd_interrupted();
	if (interrupted)
		why = "interrupted";
	if (interrupted && !down && b.ran)
		stop_remote(ctx, &b, rs.run_id, "interrupted");
	if (down) {
		o->out = o->err;
		o->color_out = o->color_err;
		trc = teardown(ctx, &e, &eopts, why);
		o->out = stdout_saved;
		o->color_out = color_saved;
		if (trc != GC_EXIT_OK) {
			rc = trc;
			goto out;
		}
	}
	if (interrupted)
		rc = GC_EXIT_INTERRUPTED;
out:
	gc_session_release(&b);
	gc_hosts_release(&rs.hosts);
	free(rs.env);
	free(rs.vars);
	gc_wipe_free(rs.job_env);
	free(rs.pet);
	gc_workdir_release(&wd);
	if (engine)
		gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_run = {
	.name = "run",
	.summary = "apply, run a command on every node with its rank, then (--down) destroy",
	.usage = "[FILE] -- CMD...",
	.description =
		"A job's life cycle in one command: apply (bootstrap included; launches need\n"
		"no confirmation, terminating nodes does: -y or a 'yes'; --no-apply uses the\n"
		"cluster as it is), then CMD on every running node at once (--on node0: the\n"
		"first only, for mpirun or deepspeed), with MASTER_ADDR, MASTER_PORT, NNODES,\n"
		"NODE_RANK, NPROC_PER_NODE, their torchrun PET_* forms, GPUCLUSTER_NODE and\n"
		"GPUCLUSTER_RUN_ID in its environment (as 'hosts --format torchrun' computes\n"
		"them). When one rank fails, the others are stopped (fail-fast). Each line of\n"
		"output is shown as it comes, behind the node's label. With --down the\n"
		"cluster is destroyed afterwards, whatever happened: Ctrl-C stops the\n"
		"command and goes on to the teardown, which only a second Ctrl-C aborts.\n"
		"Exit 1 when the command failed on any node or the teardown failed, 130 when\n"
		"interrupted. --recover N: after a failure (a spot node reclaimed), apply\n"
		"again, which replaces lost nodes, and re-run, N times. --detach --down: each\n"
		"node powers itself off once its rank's job ends, and the cloud terminates or\n"
		"stops it ('gc' deletes stopped nodes).",
	.opts = run_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_MUTATES | GC_CMD_REMOTE_CMD |
		GC_CMD_NEEDS_CMD | GC_CMD_OWN_EXIT,
	.exec = run_exec,
};
