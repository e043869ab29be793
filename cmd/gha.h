/*
 * gha.h: GitHub Actions mode (GITHUB_ACTIONS=true in the dispatcher's env), whose
 * behaviour docs/ci.md ("GitHub Actions mode") describes: masks, annotations, per-node
 * groups (progress.c), $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY. Workflow commands go to
 * standard error, which the runner reads for commands too, so `-o json` on standard
 * output stays one clean document.
 *
 * The gc_gha_format_* functions only fill buffers (the tests check their exact text);
 * the rest writes. Life cycle: the dispatcher sets up one struct gc_gha per command line
 * (gc_gha_init) when gc_gha_enabled, points ctx->gha at it and releases it at the end.
 */
#ifndef GC_CMD_GHA_H
#define GC_CMD_GHA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cmd/output.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/log.h"
#include "core/spec.h"

struct gc_cmd_ctx;
struct gc_engine_report;
struct gc_engine;
struct gc_plan;

struct gc_gha {
	struct gc_output *out;
	struct gc_log *log;	       /* whose secrets are masked */
	const struct gc_spec_env *env; /* GITHUB_OUTPUT, GITHUB_STEP_SUMMARY */
	size_t masked;		       /* log->secrets[0..masked) were announced */
	json_t *boot;		       /* the last bootstrap report (gc_cmd_boot_json), or NULL */
};

/* GITHUB_ACTIONS is "true" in env (NULL env: never). */
bool gc_gha_enabled(const struct gc_spec_env *env);

void gc_gha_init(struct gc_gha *g, struct gc_output *out, struct gc_log *log,
		 const struct gc_spec_env *env);
void gc_gha_release(struct gc_gha *g);

/* A gc_log sink: announces new secrets, then writes the line as gc_output_log_sink does.
 * ctx is the struct gc_gha. (The log calls it with its mutex held.) */
void gc_gha_log_sink(void *ctx, enum gc_log_level level, const char *line);

/* Announces the secrets the log learnt since the last call (after opening a cloud). */
void gc_gha_flush_masks(struct gc_gha *g);

/* Spec diagnostics as error annotations (or one for err on the whole file). */
void gc_gha_print_diags(struct gc_output *o, const char *file, const struct gc_diags *d,
			const struct gc_error *err);

/* Keeps a bootstrap report for the summary; a later one (the replacement round) replaces
 * the nodes it names. Takes doc. */
void gc_gha_note_boot(struct gc_gha *g, json_t *doc);

/* apply and scale, at the end (err NULL or GC_OK: it succeeded): outputs and summary. */
void gc_gha_report_apply(struct gc_cmd_ctx *ctx, struct gc_engine *e, const struct gc_plan *plan,
			 const struct gc_error *err);

/* destroy, at the end: the summary. selector is "" without one. */
void gc_gha_report_destroy(struct gc_cmd_ctx *ctx, const char *selector,
			   const struct gc_engine_report *r, const struct gc_error *err);

/* Appends text (Markdown) to $GITHUB_STEP_SUMMARY; nothing outside GitHub Actions mode. */
void gc_gha_append_summary(struct gc_cmd_ctx *ctx, const struct gc_buf *text);

/* ---- formatting (pure) ------------------------------------------------------------ */

/* A workflow command's message, escaped (% \r \n). */
void gc_gha_escape_data(struct gc_buf *out, const char *s);
/* A workflow command's property value, escaped (% \r \n : ,). */
void gc_gha_escape_property(struct gc_buf *out, const char *s);

/* "::error file=F,line=L,col=C::MSG\n"; line 0 leaves out line and col, file NULL all. */
void gc_gha_format_annotation(struct gc_buf *out, const char *level, const char *file,
			      unsigned line, unsigned col, const char *message);

/* "::add-mask::VALUE\n", one per non-empty line of secret. */
void gc_gha_format_mask(struct gc_buf *out, const char *secret);

/* One $GITHUB_OUTPUT entry: "name=value\n", or for a value with a line break
 * "name<<DELIM\nvalue\nDELIM\n" with a delimiter that does not occur in the value. */
void gc_gha_format_output(struct gc_buf *out, const char *name, const char *value);

/* One node of an apply's summary. */
struct gc_gha_node {
	const char *label; /* "workers/0" */
	const char *id;
	const char *type;
	const char *zone;
	bool spot;
	const char *public_ip; /* NULL: none */
	const char *private_ip;
	double usd_per_hour; /* < 0: unknown */
	bool smoke_ran;	     /* the bootstrap reported on this node */
	bool smoke_ok;
	bool simulated;
	int gpus;	       /* < 0: unknown */
	const char *gpu_model; /* NULL: none */
	double gemm_tflops;    /* < 0: none */
	const char *detail;    /* why it failed; NULL when ok */
};

struct gc_gha_apply {
	const char *command; /* "apply", "scale" */
	const char *cluster;
	const char *cloud;
	const char *region;
	bool have_plan;
	unsigned create, replace, terminate, keep;
	const struct gc_gha_node *nodes;
	size_t n_nodes;
	bool bootstrapped;	/* a bootstrap ran: the smoke table is shown */
	double cost;		/* per hour of the nodes; < 0: unknown */
	const char *currency;	/* of cost and the nodes' prices; NULL: USD */
	const char *expires_at; /* RFC 3339, NULL without a TTL */
	const char *error;	/* NULL when the command succeeded */
};

/* The outputs: cluster, node-count, ips (public addresses, comma-separated), hourly-cost
 * (USD, "" when a price is unknown). */
void gc_gha_format_apply_outputs(struct gc_buf *out, const struct gc_gha_apply *a);
/* The Markdown summary. */
void gc_gha_format_apply_summary(struct gc_buf *out, const struct gc_gha_apply *a);

#endif
