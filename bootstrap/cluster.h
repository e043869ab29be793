/*
 * cluster.h: a cluster's bootstrap, from its spec and its running instances to what the
 * runner needs, the host key pins it checks, and the smoke reports it brings back.
 *
 * gc_runner_run (runner.h) knows nodes, steps and variables; this module knows the
 * cluster: its nodes in the spec's group order and, within a group, launch order (so
 * "workers/0" names the oldest running node of group workers), the steps of a mode with
 * the inputs the step table (core/steps.h) takes from the spec, the pinning policy
 * (docs/bootstrap.md) and the smoke document, validated and capped: anything malformed is
 * a failed smoke with the reason, never trusted. Nodes without GPUs get the GPU steps as
 * no-ops through GC_NODE_GPUS, a per-node input the scripts' guard reads.
 *
 * Nothing here prints; warnings go to the log. Life cycle: gc_boot_init -> add_nodes ->
 * (select) -> set_steps -> (pin) -> gc_boot_runner_opts + gc_runner_run ->
 * gc_boot_release. The struct owns every string and array it points to; the spec, the
 * instance list and the provider are only read during the calls that take them.
 */
#ifndef GC_BOOTSTRAP_CLUSTER_H
#define GC_BOOTSTRAP_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/known_hosts.h"
#include "bootstrap/runner.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/spec.h"
#include "core/steps.h"

#define GC_BOOT_EXEC_STEP	 "exec"
#define GC_BOOT_CONSOLE_WAIT_MS	 120000 /* how long a console may lag before we give up */
#define GC_BOOT_CONSOLE_RETRY_MS 5000

enum gc_boot_mode {
	GC_BOOT_FULL,  /* the step table (core/steps.h) with the spec's steps in it */
	GC_BOOT_SMOKE, /* smoke alone */
	GC_BOOT_EXEC,  /* one step that runs a command, every time */
	GC_BOOT_LOGIN, /* no steps: the nodes and their host keys (ssh) */
	GC_BOOT_NODES, /* no steps, no keys: the nodes alone (hosts) */
};

/* How a node's host key came to be trusted. */
enum gc_boot_pin_source {
	GC_BOOT_PIN_NONE = 0, /* not looked at yet */
	GC_BOOT_PIN_KNOWN,    /* pinned before, for this instance */
	GC_BOOT_PIN_CONSOLE,  /* pinned now from the console output */
	GC_BOOT_PIN_TAG,      /* pinned now from the key we gave it (GC_TAG_HOST_KEY) */
	GC_BOOT_PIN_TOFU,     /* left to trust on first use */
};

struct gc_boot_node {
	char *id;
	char *group;	/* "" for an instance without a group tag */
	unsigned index; /* position among the group's running nodes, by launch order */
	char *label;	/* "workers/0" */
	char *host;	/* the address connected to: public, else private */
	char *type;
	char *host_key;	 /* GC_TAG_HOST_KEY: the key we gave it at launch, or NULL */
	bool have_facts; /* facts is the instance type's */
	struct gc_type_facts facts;
	enum gc_boot_pin_source pin;
};

struct gc_boot {
	const char *user; /* the spec's ssh.user */
	unsigned port;
	struct gc_boot_node *info; /* n_nodes, parallel to nodes */
	struct gc_runner_node *nodes;
	size_t n_nodes;
	struct gc_runner_file *files;
	size_t n_files;
	struct gc_runner_step *steps;
	size_t n_steps;
	struct gc_runner_var *vars;
	size_t n_vars, alloc_vars;
	size_t smoke_step; /* index of the smoke step; SIZE_MAX without one */
	void **owned;	   /* strings and arrays the runner structs point at */
	size_t n_owned, alloc_owned;
};

void gc_boot_init(struct gc_boot *b);
void gc_boot_release(struct gc_boot *b);

/*
 * Adds every running instance of live that has an address. p (may be NULL) is asked for
 * each instance type's facts once; a type it cannot describe leaves have_facts false
 * (the smoke test then counts the GPUs on the PCI bus), with a warning in log.
 */
int gc_boot_add_nodes(struct gc_boot *b, const struct gc_spec *spec,
		      const struct gc_instance_list *live, struct gc_provider *p,
		      struct gc_log *log, struct gc_error *err);

/* The node called name: an instance id, a unique prefix of one, or GROUP/N. *out is its
 * index. GC_ENOTFOUND or GC_EINVALID (an ambiguous prefix) name the candidates. */
int gc_boot_find(const struct gc_boot *b, const char *name, size_t *out, struct gc_error *err);

/* Keeps only the nodes names[0..n) find (each may be named once; order is kept). */
int gc_boot_select(struct gc_boot *b, const char *const *names, size_t n, struct gc_error *err);

/* Keeps only the nodes whose ids are in ids[0..n) (ids of other instances are ignored). */
void gc_boot_keep_ids(struct gc_boot *b, const char *const *ids, size_t n);

/* Whether a full bootstrap of b's nodes runs row d: the row's wanted(), and for the
 * fabric step, a node whose group has an RDMA network. */
bool gc_boot_step_wanted(const struct gc_boot *b, const struct gc_spec *spec,
			 const struct gc_step_def *d);

/*
 * Builds the steps and inputs of mode, after the nodes were added. command and
 * timeout_ms are for GC_BOOT_EXEC (0: the runner's default timeout). verbose passes
 * GC_VERBOSE=1, which changes no marker.
 */
int gc_boot_set_steps(struct gc_boot *b, const struct gc_spec *spec, enum gc_boot_mode mode,
		      const char *command, uint64_t timeout_ms, bool verbose, struct gc_error *err);

/* The index of the step called name, or SIZE_MAX. */
size_t gc_boot_step_index(const struct gc_boot *b, const char *name);

/* Fills the runner's user, files, steps and variables from b (the rest is the caller's). */
void gc_boot_runner_opts(const struct gc_boot *b, struct gc_runner_opts *o);

struct gc_boot_pin_opts {
	uint64_t console_wait_ms;  /* 0: GC_BOOT_CONSOLE_WAIT_MS */
	uint64_t console_retry_ms; /* 0: GC_BOOT_CONSOLE_RETRY_MS */
	bool strict;		   /* never fall back to trust on first use */
	const struct gc_clock *clock;
	bool (*cancelled)(void *ctx); /* polled while waiting; NULL: never */
	void *cancel_ctx;
	struct gc_log *log;
};

/*
 * Pins every node's host key in kh before any connection: the key it was given at launch
 * (its GC_TAG_HOST_KEY tag), else the cloud's console output (retried, since consoles lag
 * behind boot), else trust on first use with a logged warning, unless o->strict. Nodes
 * already pinned for their instance cost nothing. *out_tofu says whether some
 * node is left to trust on first use (the runner must then allow it; pinned nodes are
 * still checked). Errors: GC_EAUTH for a key that changed on a known instance (never
 * overridden) and, with strict, for a node whose key could not be pinned; GC_ECANCELLED;
 * GC_EIO when kh cannot be written.
 */
int gc_boot_pin(struct gc_boot *b, struct gc_provider *p, struct gc_known_hosts *kh,
		const struct gc_boot_pin_opts *o, bool *out_tofu, struct gc_error *err);

/* ---- the smoke report --------------------------------------------------------------- */

#define GC_SMOKE_OUTPUT_MAX ((size_t)1 << 20) /* a larger document is garbage */
#define GC_SMOKE_MAX_CHECKS 32
#define GC_SMOKE_MAX_GPUS   64
#define GC_SMOKE_NAME_MAX   64
#define GC_SMOKE_DETAIL_MAX 512

struct gc_smoke_check {
	char name[GC_SMOKE_NAME_MAX];
	bool ok;
	char detail[GC_SMOKE_DETAIL_MAX];
};

/* A figure the document did not give is negative. */
struct gc_smoke_gpu {
	int index;
	char name[128];
	int64_t memory_mib;
	double h2d_gbps, d2h_gbps, d2d_gbps;
	double gemm_tflops;
};

struct gc_smoke_report {
	bool ran;	/* the smoke step ran (gc_smoke_report_parse was called) */
	bool earlier;	/* not run: it passed on this node since its last boot, nothing changed */
	bool parsed;	/* the document was well formed (checks and gpus hold its contents) */
	bool ok;	/* the node is healthy: every check passed and the step exited 0 */
	bool simulated; /* the figures come from the emulator's simulated GPUs */
	char reason[GC_SMOKE_DETAIL_MAX]; /* why not ok; "" when ok */
	struct gc_smoke_check *checks;
	size_t n_checks;
	struct gc_smoke_gpu *gpus;
	size_t n_gpus;
	char driver[64];
	char cuda_runtime[32];
};

void gc_smoke_report_init(struct gc_smoke_report *r);
/* The node passed smoke earlier in this boot and nothing before it changed, so the step was
 * skipped: ok, without figures. */
void gc_smoke_report_earlier(struct gc_smoke_report *r);
void gc_smoke_report_release(struct gc_smoke_report *r);

/*
 * Parses a smoke step's stdout (text, len bytes) and exit status into r (initialised).
 * Always fills r: a document that is missing, too big, not JSON, or has a field of the
 * wrong type, too many checks or GPUs, or a figure that is not a finite non-negative
 * number, gives parsed = false, ok = false and the reason. Returns 0 when parsed, -1 not.
 * Strings from the node are kept only up to their field's size, control characters
 * replaced by '?'.
 */
int gc_smoke_report_parse(struct gc_smoke_report *r, const char *text, size_t len, int exit_status);

/* Marks r as "smoke did not run" with reason (a node that failed an earlier step). */
void gc_smoke_report_not_run(struct gc_smoke_report *r, const char *reason);

#endif
