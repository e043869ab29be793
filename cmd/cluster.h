/*
 * cluster.h: the glue the commands that talk to a cloud share (opening it, the engine and
 * its progress, confirmation, errors with the cloud's code and request id), so each
 * cmd-*.c file is only its command.
 */
#ifndef GC_CMD_CLUSTER_H
#define GC_CMD_CLUSTER_H

#include <stdbool.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "core/cost.h"
#include "core/engine.h"
#include "core/error.h"

/* clang-format off */
/* destroy's and gc's wait for terminations */
#define GC_CMD_TERMINATE_WAIT_OPT \
	{ .name = "wait-timeout", .type = GC_OPT_INT, .arg = "SECONDS", \
	  .help = "how long to wait for instances to terminate", \
	  .def = "900", .min = 1, .max = 86400 }
/* clang-format on */

/* NEEDS_CREDS: opens the spec's cloud into ctx->provider, or reports why not. */
int gc_cmd_open_provider(struct gc_cmd_ctx *ctx);
/* A group's gpus resolved into its instance_types (core/gpupick.h); plan, apply and
 * scale ask the cloud. gc_cmd_open_provider calls it; reports why not. */
int gc_cmd_resolve_gpus(struct gc_cmd_ctx *ctx);
/* Opens ops with cfg (its environment, log and cancel set from ctx) and masks the
 * credentials it found (cmd/gha.h) before anything else is written. */
int gc_cmd_open_cloud(struct gc_cmd_ctx *ctx, const struct gc_provider_ops *ops,
		      struct gc_provider_config *cfg, struct gc_provider **out,
		      struct gc_error *err);

/* "gpucluster: error: WHAT: MESSAGE (CloudCode, request ID)" plus a hint for the codes a
 * user can act on (credentials, quota, locks). what may be NULL. */
void gc_cmd_report_error(struct gc_cmd_ctx *ctx, const char *what, const struct gc_error *err);

/* For an auth error on cloud ops (NULL: none known): when the cloud said the credentials
 * may not make the call (its facts' permission_codes), the permission to grant, named
 * after the refused action; else "check the credentials". */
void gc_cmd_hint_auth(struct gc_output *out, const struct gc_provider_ops *ops,
		      const struct gc_error *err);

/* After a failed apply, scale or destroy (verb): "run it again" only for the classes a
 * re-run can get past (transient, throttled, timeout, capacity, a wrong answer, a token
 * clash, generic); for a configuration error (invalid, not-found, unsupported, too-big)
 * the advice to fix the input instead; nothing more where gc_cmd_report_error already
 * advised (auth, quota, lock, cancel). */
void gc_cmd_hint_after(struct gc_output *out, const struct gc_error *err, const char *verb);

/* The exit code for a failed engine call: 130 when cancelled, else 1. */
int gc_cmd_exit_for(const struct gc_error *err);

/* Asks question unless --auto-approve; only "yes" proceeds, and no terminal on stdin is an
 * error, never a silent yes (docs/cli.md "apply"). */
bool gc_cmd_confirm(struct gc_cmd_ctx *ctx, const char *question);

/* Sets up an engine on ctx's spec and provider, and engine options whose progress goes
 * to stderr (a live line on a terminal, plain lines otherwise) and whose cancellation
 * follows SIGINT/SIGTERM. */
int gc_cmd_engine(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct gc_engine_opts *opts);

/* The outcome of an apply or destroy, per group, on stderr (text) or as JSON on stdout. */
void gc_cmd_print_report(struct gc_cmd_ctx *ctx, const char *verb,
			 const struct gc_engine_report *r);

/* What nodes cost from their launch to end, priced through ctx->provider and prices (NULL:
 * a cache of its own) (core/cost.h); out is caller memory (gc_cost_release). */
void gc_cmd_cost(struct gc_cmd_ctx *ctx, struct gc_price_cache *prices,
		 const struct gc_instance_list *nodes, int64_t end, struct gc_cost *out);
/* {"nodes", "node_hours", "total", "currency", "known", "by_type": [...]}: null where unknown */
json_t *gc_cmd_cost_json(const struct gc_cost *c);
/* "WHAT: about 12.30 USD, 0.40 node-hours" and a line per type and market, on stdout */
void gc_cmd_print_cost(struct gc_output *o, const char *what, const struct gc_cost *c);

/* That outcome as the JSON document gc_cmd_print_report writes (apply adds to it). */
json_t *gc_cmd_report_json(const struct gc_engine_report *r);

/* progress.c: the engine's progress on stderr (gc_cmd_engine sets it up in opts), and
 * the end of its live line, if one is open on the terminal. */
void gc_cmd_engine_progress_begin(struct gc_cmd_ctx *ctx, struct gc_engine_opts *opts);
void gc_cmd_engine_progress_done(void);

/* The hourly price of type (NULL: unknown) on a market, asked of p once per (type, spot)
 * (zone goes with the first ask) and kept in cache. < 0: unknown. When known and currency
 * is not NULL, currency is set to the cloud's code for it ("USD", "CNY"). */
double gc_cmd_price(struct gc_provider *p, struct gc_price_cache *cache, const char *type,
		    const char *zone, bool spot, char currency[GC_CURRENCY_SIZE]);

/* gc_cmd_interrupted for a cancelled(ctx) callback (ctx unused). */
bool gc_cmd_cancelled(void *arg);

/* Acquires the cluster's local lock, reporting a held lock clearly. */
int gc_cmd_lock(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct gc_lock *lock);

/* Prints a plan on stdout in the chosen format (cmd-plan.c). */
int gc_cmd_show_plan(struct gc_cmd_ctx *ctx, const struct gc_plan *plan);

/* apply and scale: lock, plan with the count overrides, show, confirm, execute, report
 * (cmd-apply.c). Returns an exit code. */
int gc_cmd_apply_run(struct gc_cmd_ctx *ctx, const char *const *names, const unsigned *counts,
		     size_t n);

#endif
