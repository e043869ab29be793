/*
 * runner.h: run ordered steps on many nodes over SSH, in parallel, resumably.
 *
 * gc_runner_run runs every step on every node, in order per node, with at most
 * `concurrency` SSH connections at a time, from one thread and one poll() loop (ssh.h is
 * non-blocking). The node's state machine (wait for SSH, probe and upload, steps behind
 * markers keyed by a hash chain, reboots on exit 100, reconnects, timeouts) and the
 * reasons for it are in docs/internals/ssh-runner.md.
 *
 * Contracts: output is captured per node and step, never mixed with another node's, and
 * `out` is exactly what the final attempt printed (earlier attempts go to `history`); a
 * `stream` step hands whole lines to opts->cb.output and keeps none. opts->cb.progress is
 * called from the loop thread; opts->cb.cancelled is polled at least every 100 ms, and on
 * cancel every connection is closed and the run returns GC_ECANCELLED.
 *
 * Life cycle: gc_runner_report_init -> gc_runner_run -> read the report ->
 * gc_runner_report_release. Everything in opts and nodes is borrowed for the call.
 */
#ifndef GC_BOOTSTRAP_RUNNER_H
#define GC_BOOTSTRAP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/known_hosts.h"
#include "bootstrap/ssh.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/log.h"

#define GC_RUNNER_CONCURRENCY	  64
#define GC_RUNNER_SSH_WAIT_MS	  300000 /* wait for SSH after launch: 5 min */
#define GC_RUNNER_SSH_RETRY_MS	  2000
#define GC_RUNNER_STEP_TIMEOUT_MS 1800000 /* 30 min: a driver install can take 15 */
#define GC_RUNNER_REBOOT_WAIT_MS  600000
#define GC_RUNNER_MAX_REBOOTS	  2
#define GC_RUNNER_MAX_RECONNECTS  3
#define GC_RUNNER_REMOTE_DIR	  ".gpucluster/bootstrap" /* relative to the login directory */
#define GC_RUNNER_MARKER_DIR	  "/var/lib/gpucluster/steps"
#define GC_RUNNER_BOOT_ID_MAX	  64

/* An input of the steps. */
struct gc_runner_var {
	const char *step; /* the step it is for; NULL: every step */
	const char *name; /* [A-Za-z_][A-Za-z0-9_]* */
	const char *value;
	bool unhashed; /* not an input: changing it reruns nothing (GC_VERBOSE) */
};

/* A file uploaded into remote_dir before the first step (lib.sh, smoke.cu). */
struct gc_runner_file {
	const char *name; /* [A-Za-z0-9._-]+, not starting with '.' */
	const void *data;
	size_t len;
};

struct gc_runner_step {
	const char *name;    /* [a-z0-9_-]{1,64}, unique; the marker and remote_dir/NAME.sh */
	const char *script;  /* bash script text */
	size_t script_len;   /* 0: strlen(script) */
	uint64_t timeout_ms; /* 0: opts->step_timeout_ms */
	bool always;	     /* no marker: runs every time (exec, the smoke command) */
	/* The marker also names the node's boot id: the step runs again after a reboot or
	 * when an earlier step ran, and is skipped otherwise (smoke on a re-apply: a node
	 * that passed since it last booted, with nothing changed, is not tested again). */
	bool per_boot;
	/* Its output goes to opts->cb.output line by line as it arrives and is not kept: the
	 * result's out and err stay empty. A dropped connection fails it instead of running
	 * it again (it is a job, which must not start twice). Only for `always` steps (a
	 * marked step's skip is recognised from its whole output) and with opts->cb.output. */
	bool stream;
	/* NULL, or the step this one undoes (the spec no longer wants it): it runs only where
	 * that step's marker exists (elsewhere its state is GC_STEP_NOT_NEEDED), removes that
	 * marker when it succeeds, has no marker of its own and leaves the chain of hashes as
	 * if it were not there (docs/internals/ssh-runner.md, "Undo steps"). */
	const char *undoes;
};

struct gc_runner_node {
	const char *name;	 /* for messages and progress: an instance id or a node name */
	const char *host;	 /* numeric address */
	unsigned port;		 /* 0: 22 */
	const char *instance_id; /* recorded with a first-use pin; may be NULL */
	const struct gc_runner_var *vars; /* this node's inputs (EXPECT_GPUS=...) */
	size_t n_vars;
};

enum gc_step_state {
	GC_STEP_PENDING = 0, /* not reached */
	GC_STEP_RUNNING,
	GC_STEP_OK,
	GC_STEP_SKIPPED, /* its marker matched: done on an earlier run */
	GC_STEP_FAILED,
	GC_STEP_CANCELLED,
	GC_STEP_NOT_NEEDED, /* an undo step where the step it undoes never ran: nothing to do */
};

const char *gc_step_state_name(enum gc_step_state s); /* "ok", "skipped: done", ... */

struct gc_runner_step_result {
	enum gc_step_state state;
	int exit_status;      /* of the final attempt; -1 when none */
	char exit_signal[32]; /* "KILL" when a signal ended it */
	struct gc_buf out, err;
	bool out_truncated, err_truncated;
	struct gc_buf history; /* earlier attempts' output and the runner's notes on them */
	uint64_t elapsed_ms;   /* first attempt to the end, reboots included */
	unsigned attempts;     /* runs of the script (reboots and reconnects add one each) */
	unsigned reboots;
	char hash[GC_SHA256_HEX_LEN]; /* the marker value */
};

struct gc_runner_node_result {
	struct gc_runner_step_result *steps; /* n_steps */
	size_t n_steps;
	struct gc_error err; /* GC_OK when every step is ok or skipped */
	uint64_t elapsed_ms;
	char boot_id[GC_RUNNER_BOOT_ID_MAX]; /* as of the last connection */
	char host_key[GC_SSH_FINGERPRINT_SIZE];
	unsigned connects; /* successful connections */
	bool uploaded;	   /* the files were (re)uploaded */
};

struct gc_runner_report {
	struct gc_runner_node_result *nodes;
	size_t n_nodes;
	size_t n_ok, n_failed;
	size_t peak_sessions; /* most connections open at once */
	uint64_t wall_ms;
	/* fail_fast_ms: the node whose failure stopped the others (SIZE_MAX: none did) */
	size_t first_failed;
	size_t n_stopped; /* nodes stopped because of it */
};

void gc_runner_report_init(struct gc_runner_report *r);
void gc_runner_report_release(struct gc_runner_report *r);

enum gc_runner_phase {
	GC_RUN_WAITING_SSH, /* a connection attempt failed; retrying (err says why) */
	GC_RUN_CONNECTED,
	GC_RUN_UPLOADING,
	GC_RUN_STEP_START,
	GC_RUN_STEP_DONE,    /* result->state: ok, skipped, failed */
	GC_RUN_REBOOTING,    /* the step asked for a reboot */
	GC_RUN_RECONNECTING, /* the connection dropped during a step */
	GC_RUN_NODE_DONE,    /* err: GC_OK or why the node failed */
};

struct gc_runner_event {
	enum gc_runner_phase phase;
	size_t node; /* index into the nodes */
	const char *node_name;
	size_t step;	       /* index, or SIZE_MAX when no step is concerned */
	const char *step_name; /* NULL when none */
	uint64_t node_elapsed_ms;
	uint64_t step_elapsed_ms;
	const struct gc_runner_step_result *result; /* GC_RUN_STEP_DONE */
	const struct gc_error *err; /* GC_RUN_WAITING_SSH, GC_RUN_RECONNECTING, NODE_DONE */
};

/*
 * One line of a streamed step's output. text is NUL-terminated at len (the line may hold
 * other NUL bytes); it is valid during the call only. partial: no newline ended it: the
 * attempt ended first, or the line was longer than max_output and was cut there (the
 * rest comes as further lines; bytes beyond the cap that arrived at once are dropped and
 * the result's out_truncated / err_truncated say so).
 */
struct gc_runner_line {
	size_t node; /* index into the nodes */
	const char *node_name;
	size_t step;
	const char *step_name;
	bool is_stderr;
	const char *text;
	size_t len;
	bool partial;
};

/* What a run reports through and polls: the runner's and a session's (session.h). */
struct gc_runner_callbacks {
	void (*progress)(void *ctx, const struct gc_runner_event *ev); /* NULL: none */
	void *progress_ctx;
	bool (*cancelled)(void *ctx); /* NULL: never */
	void *cancel_ctx;
	/* The lines of `stream` steps, from the loop thread, in the order they arrived on each
	 * stream (a node's stdout and stderr are read in turn, so their relative order is
	 * only as good as the arrival). NULL: no step may stream. */
	void (*output)(void *ctx, const struct gc_runner_line *line);
	void *output_ctx;
};

struct gc_runner_opts {
	const char *user;
	const struct gc_keypair *key;
	struct gc_known_hosts *known_hosts;
	bool trust_on_first_use;
	const struct gc_runner_file *files;
	size_t n_files;
	const struct gc_runner_step *steps;
	size_t n_steps;
	const struct gc_runner_var *vars; /* for every node; a node's own vars win */
	size_t n_vars;
	const char *force_from; /* run this step and the later ones whatever their markers */

	unsigned concurrency;	     /* connections at once; 0: 64 */
	uint64_t ssh_wait_ms;	     /* 0: 5 min */
	uint64_t ssh_retry_ms;	     /* 0: 2 s */
	uint64_t connect_timeout_ms; /* one attempt; 0: 10 s */
	uint64_t step_timeout_ms;    /* 0: 30 min */
	uint64_t reboot_wait_ms;     /* 0: 10 min */
	unsigned max_reboots;	     /* per step; 0: 2 */
	unsigned max_reconnects;     /* per step; 0: 3 */
	unsigned keepalive_s;	     /* 0: ssh.h's default */
	size_t max_output;	     /* per stream and step; 0: 4 MiB */
	const char *remote_dir;	     /* 0: GC_RUNNER_REMOTE_DIR */
	const char *marker_dir;	     /* 0: GC_RUNNER_MARKER_DIR */

	struct gc_runner_callbacks cb;
	struct gc_log *log;
	/* Fail-fast (`run`'s ranks): once a node fails, every node still running is stopped
	 * this long after (GC_ECANCELLED, "stopped: NAME failed"), so nodes that fail in the
	 * same moment report their own status. 0: off, every node runs to its end. */
	uint64_t fail_fast_ms;
};

/*
 * Runs the steps on the nodes; report (initialised) is filled either way. Returns 0 when
 * every node finished every step; -1 with err summarising otherwise (GC_ECANCELLED when
 * cancelled, GC_EINVALID for bad options before anything ran, else the first failed
 * node's code), the per-node details in the report.
 */
int gc_runner_run(const struct gc_runner_opts *opts, const struct gc_runner_node *nodes,
		  size_t n_nodes, struct gc_runner_report *report, struct gc_error *err);

#endif
