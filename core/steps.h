/*
 * steps.h: the bootstrap's built-in steps and the smoke test's checks, as tables.
 *
 * A full bootstrap runs gc_steps in order, the spec's own steps (as step-NAME) where the
 * table says so, and the smoke step last. Every row is one script,
 * templates/bootstrap/NAME.sh (embedded at build time), with its inputs taken from the
 * spec. The runner setup (bootstrap/cluster.c), the validator (core/spec-validate.c), the
 * benchmark (bench/bootstrap-runner.c) and the tests all read these tables, so adding a
 * step is a script and one row (docs/internals/ssh-runner.md, "Adding a bootstrap step").
 *
 * The tables live in core/, not bootstrap/, because the validator reads them too and
 * core/ cannot depend on bootstrap/. They are data only: what a step needs, never how
 * it runs. Read-only static data, no life cycle.
 */
#ifndef GC_STEPS_H
#define GC_STEPS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/spec.h"

#define GC_STEP_SMOKE	    "smoke" /* the step whose output is the smoke report */
#define GC_STEP_MAX_INPUTS  6
#define GC_STEP_USER_PREFIX "step-" /* the spec's own steps run as step-NAME */
#define GC_STEP_UNDO_SUFFIX "-undo" /* a step the spec no longer wants: NAME-undo */

/* How often a step runs again once it succeeded on a node (the runner's markers). */
enum gc_step_rerun {
	GC_STEP_RERUN_ON_CHANGE, /* when it, its inputs or an earlier step changed */
	GC_STEP_RERUN_PER_BOOT,	 /* also after every reboot (smoke) */
	GC_STEP_RERUN_ALWAYS,	 /* every time (exec) */
};

/* What a step does on a node whose instance type has no GPU (GC_NODE_GPUS=0). */
enum gc_step_guard {
	GC_STEP_GUARD_NONE,  /* runs as on any node */
	GC_STEP_GUARD_GPU,   /* does nothing: says so and exits 0 */
	GC_STEP_GUARD_SMOKE, /* prints a smoke report with nothing to check */
};

/* One input: an environment variable of the step's script and its value in the spec. */
struct gc_step_input {
	const char *var; /* "CUDA" */
	const char *key; /* the spec's key it comes from: "bootstrap.cuda" (for the docs) */
	/* The value, allocated; "" when the spec leaves it unset. */
	char *(*value)(const struct gc_spec *spec);
	/* Where the step gets things from, not what it makes (bootstrap.mirrors): a change
	 * does not run the step again (the runner's markers leave it out). */
	bool unhashed;
};

struct gc_step_def {
	const char *name; /* the step; its script is NAME.sh */
	enum gc_step_guard guard;
	enum gc_step_rerun rerun;
	bool after_user_steps; /* runs after the spec's own steps (smoke) */
	bool node_facts;       /* gets EXPECT_GPUS and EXPECT_GPU_MODEL from the type */
	struct gc_step_input inputs[GC_STEP_MAX_INPUTS]; /* up to the first var == NULL */
	/* NULL, or whether the spec wants the step at all: a step it does not want is left
	 * out of the bootstrap (preempt: only clusters with a spot group) */
	bool (*wanted)(const struct gc_spec *spec);
	/* gets FABRIC, its node's group's interconnect (rdma or standard, from the type's
	 * facts); left out of a bootstrap where no node's group has an RDMA network */
	bool node_fabric;
	/* its script, run with UNDO=1, removes what it installed that acts on its own (a
	 * watcher): a bootstrap whose spec does not want the step runs it as NAME-undo on the
	 * nodes where the step had run (docs/internals/ssh-runner.md, "Undo steps") */
	bool undo;
};

extern const struct gc_step_def gc_steps[];
extern const size_t gc_n_steps;

/* The row called name, or NULL. */
const struct gc_step_def *gc_step_find(const char *name);

/* The smoke checks a spec may ask for (bootstrap.smoke): gc_smoke_names[k] is the check
 * of flag 1u << k (GC_SMOKE_DRIVER, ...). */
#define GC_SMOKE_N_CHECKS 4
extern const char *const gc_smoke_names[GC_SMOKE_N_CHECKS];

#endif
