/*
 * session.h: one bootstrap session on a cluster's nodes, from discovery to the report.
 *
 * Every command that works on the nodes (apply, scale, bootstrap, smoke, exec, run, ssh,
 * hosts) runs this one sequence, or its first part (docs/internals/ssh-runner.md, "One
 * session"). Nothing here prints or exits: progress goes to the caller's callbacks,
 * problems into a struct gc_error with the stage they happened in, so the CLI words and
 * hints them.
 *
 * Life cycle: gc_session_init -> gc_session_open -> (gc_session_run, _run_steps) ->
 * gc_session_release, which accepts a session that failed anywhere. The engine (its
 * provider, state directory and log) must outlive the session.
 */
#ifndef GC_BOOTSTRAP_SESSION_H
#define GC_BOOTSTRAP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/cluster.h"
#include "bootstrap/known_hosts.h"
#include "bootstrap/runner.h"
#include "core/engine.h"
#include "core/keygen.h"

/* Where a session stopped, for the caller's message and hint. */
enum gc_session_stage {
	GC_SESSION_NODES,  /* discovering the instances */
	GC_SESSION_SELECT, /* a name that matches no node, or several */
	GC_SESSION_STEPS,  /* the steps, or the caller's prepare */
	GC_SESSION_FROM,   /* --from names no step (GC_ENOTFOUND; the steps are set) */
	GC_SESSION_KEYS,   /* the key pair or the known_hosts file */
	GC_SESSION_PIN,	   /* pinning a host key (GC_EAUTH: one changed) */
	GC_SESSION_RUN,	   /* the runner refused its options, or the run itself */
};

struct gc_session;

struct gc_session_opts {
	enum gc_boot_mode mode;
	const char *from;	  /* run this step and the later ones whatever the markers */
	const char *const *names; /* only these nodes (ids, prefixes, GROUP/N); NULL: all */
	size_t n_names;
	const char *const *ids; /* only these instances (exact ids); NULL: all */
	size_t n_ids;
	const char *command;  /* GC_BOOT_EXEC */
	uint64_t timeout_ms;  /* GC_BOOT_EXEC; 0: the runner's default */
	uint64_t ssh_wait_ms; /* how long a node may take to answer SSH; 0: the runner's */
	bool strict;	      /* never trust a host key on first use */
	bool verbose;	      /* GC_VERBOSE=1 for the scripts (changes no marker) */
	/* Called once the nodes and steps are set, before any host key is pinned: a chance
	 * to give the nodes (s->boot) their own inputs. Returns 0, or -1 with err set.
	 * NULL: none. */
	int (*prepare)(void *ctx, struct gc_session *s, struct gc_error *err);
	void *prepare_ctx;
	/* The runner's; cancelled is also polled while pinning, and output is only for
	 * GC_BOOT_EXEC (the step then streams and the report keeps none of its output). */
	struct gc_runner_callbacks cb;
	uint64_t fail_fast_ms; /* the runner's (runner.h): 0, every node runs to its end */
};

struct gc_session {
	enum gc_boot_mode mode;
	enum gc_session_stage stage; /* where the last call stopped */
	struct gc_engine *engine;
	/* the instances the nodes came from (the caller's list, or found): their addresses,
	 * for the caller */
	const struct gc_instance_list *live;
	struct gc_instance_list found;
	struct gc_boot boot;
	struct gc_keypair key;
	struct gc_known_hosts kh;
	bool kh_open;
	char *kh_path; /* the cluster's known_hosts (core/state.h) */
	bool tofu;     /* some node is left to trust on first use */
	struct gc_runner_report report;
	struct gc_smoke_report *smoke; /* boot.n_nodes when the mode has a smoke step */
	char **console;		       /* boot.n_nodes: a node that never answered, its console */
	bool ran;		       /* the runner ran (there were nodes) */
	size_t n_failed;	       /* nodes that did not finish every step */
	size_t n_unhealthy;	       /* of those, nodes whose smoke test ran and failed */
};

void gc_session_init(struct gc_session *s);
void gc_session_release(struct gc_session *s);

/*
 * Opens the session (see the top of this file) on the running instances of live (which
 * must outlive the session), or of a discovery when live is NULL. No running node is not
 * an error: boot.n_nodes is 0 and nothing else is set. Returns 0, or -1 with err set and
 * s->stage saying where.
 */
int gc_session_open(struct gc_session *s, struct gc_engine *e, const struct gc_instance_list *live,
		    const struct gc_session_opts *o, struct gc_error *err);

/*
 * Runs the session's steps on its nodes and fills report, smoke, console, n_failed and
 * n_unhealthy. Returns 0 when every node finished (and passed smoke); -1 otherwise, with
 * err the run's (GC_ECANCELLED when cancelled) and ran saying whether the runner ran at
 * all (it refuses bad options before connecting anywhere).
 */
int gc_session_run(struct gc_session *s, const struct gc_session_opts *o, struct gc_error *err);

/*
 * Runs steps (with vars for every node) on the session's nodes with its key and pins,
 * waiting up to o->ssh_wait_ms for SSH, with o's progress and cancel callbacks (o may
 * be NULL: none); report (initialised) gets the outcome. Returns gc_runner_run's result.
 */
int gc_session_run_steps(struct gc_session *s, const struct gc_runner_step *steps, size_t n_steps,
			 const struct gc_runner_var *vars, size_t n_vars,
			 const struct gc_session_opts *o, struct gc_runner_report *report,
			 struct gc_error *err);

#endif
