/*
 * job.h: what `run` gives a job besides its command: the spec's `envs`, `run --env
 * KEY=VALUE`, and the spec's `secrets`, read from the user's environment at run time.
 * docs/internals/jobs.md gives the path a secret takes and where it never goes.
 *
 * Life cycle: gc_job_env_init -> gc_job_env_load (before anything is created: an unset
 * secret is an error there) -> gc_job_env_script -> gc_job_env_release (wipes the values).
 */
#ifndef GC_CMD_JOB_H
#define GC_CMD_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "bootstrap/cluster.h"
#include "bootstrap/runner.h"
#include "cmd/cmd.h"

struct gc_job_env {
	char **names, **values; /* envs, then --env (a later one of a name wins), then secrets */
	size_t n, n_secrets;	/* the last n_secrets entries are secrets */
};

void gc_job_env_init(struct gc_job_env *j);
/* Collects the variables; prints what is wrong and returns an exit code (GC_EXIT_USAGE for
 * a bad --env, GC_EXIT_FAILURE for an unset secret), or GC_EXIT_OK. Each secret's value is
 * registered with the log (redacted everywhere) and masked in GitHub Actions. */
int gc_job_env_load(struct gc_job_env *j, struct gc_cmd_ctx *ctx);
/* The shell text that exports every variable, for the top of the job's script (which
 * reaches the node on the SSH session's stdin, never on a command line); "" when none.
 * The caller frees it with gc_wipe_free (core/keygen.h). */
char *gc_job_env_script(const struct gc_job_env *j);
void gc_job_env_release(struct gc_job_env *j);

/* ---- detached jobs (run --detach, logs, jobs) --------------------------------------------
 * A detached job lives on each node in ~/.gpucluster/jobs/ID/ (mode 0700): job.sh (the
 * command with its exports; removed by the job as it starts when it holds secrets),
 * env.sh (the rank variables), pid, output.log (stdout and stderr), and exit once it
 * ended. docs/internals/jobs.md. */
/* Whether id looks like a job id (what run makes: digits and '-', 1-47 characters). */
bool gc_job_id_ok(const char *id);
/* The launcher run as `run --detach`'s command: writes the job's files and starts it under
 * systemd-run (sudo -n; the sim has a shim), or setsid where there is none. job_env as
 * from gc_job_env_script; the result holds secrets: free it with gc_wipe_free. */
char *gc_job_launch_script(const struct gc_cmd_ctx *ctx, const char *job_env);
/* A shell function for the node: `gc_job_state DIR` prints "exited CODE", "running",
 * "starting" (the supervisor has not started it yet) or "lost" (no exit code and no
 * process: the node rebooted, or the job was killed). */
extern const char gc_job_state_fn[];

/* One line of a node's output, whole, behind its label (padded to width): the node's stdout
 * to ours, its stderr to ours. One write per line, flushed, so lines of different nodes
 * never mix and a CI log shows them as they come (run, logs). boot may be NULL ("?"). */
void gc_job_print_line(struct gc_output *o, const struct gc_boot *boot, int width,
		       const struct gc_runner_line *l);

#endif
