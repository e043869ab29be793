/*
 * boot.c: a bootstrap session run from the commands (see boot.h): its errors worded for
 * the terminal, the runner's live progress, the per-node report and the smoke table, and
 * apply's bootstrap with its one round of replacing unhealthy nodes.
 *
 * Everything a node prints is untrusted: it reaches the terminal only through
 * gc_out_puts_clean (control characters escaped), and the smoke document only through
 * gc_smoke_report_parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bootstrap/cluster.h"
#include "bootstrap/runner.h"
#include "cmd/boot.h"
#include "cmd/ci-key.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/plan.h"
#include "core/suggest.h"

#define TAIL_LINES 8 /* of a failed step's output, shown under its error */

static const char *mode_verb(enum gc_boot_mode m)
{
	switch (m) {
	case GC_BOOT_SMOKE: return "smoke";
	case GC_BOOT_EXEC: return "exec";
	default: return "bootstrap";
	}
}

/* A bad --from: the error, with a suggestion and the list of steps. */
static void bad_from(struct gc_cmd_ctx *ctx, const struct gc_boot *b, const char *from)
{
	const char **names = gc_xcalloc(b->n_steps + 1, sizeof(*names));
	struct gc_buf list = GC_BUF_INIT(0);
	const char *best;

	for (size_t i = 0; i < b->n_steps; i++) {
		names[i] = b->steps[i].name;
		gc_buf_addf(&list, "%s%s", i ? ", " : "", names[i]);
	}
	best = gc_suggest(from, names, b->n_steps);
	if (best)
		gc_out_error(ctx->out, "no step '%s' (did you mean '%s'?)", from, best);
	else
		gc_out_error(ctx->out, "no step '%s'", from);
	gc_out_hint(ctx->out, "the steps, in order: %s", list.data);
	gc_buf_release(&list);
	free(names);
}

int gc_cmd_boot_run(struct gc_cmd_ctx *ctx, struct gc_engine *e,
		    const struct gc_instance_list *live, const struct gc_session_opts *o,
		    struct gc_session *out)
{
	struct gc_session_opts so = *o;
	struct gc_cmd_progress prog;
	struct gc_error err;

	gc_error_init(&err);
	/* a caller's own wait (status's idle read) stands unless the user gave one */
	if (!so.ssh_wait_ms || gc_cmd_opt_given(ctx, "ssh-wait"))
		so.ssh_wait_ms = (uint64_t)gc_cmd_opt_int(ctx, "ssh-wait") * 1000;
	so.strict = gc_cmd_opt_given(ctx, "strict-host-keys");
	so.verbose = ctx->globals.verbose >= 2;
	so.cb.cancelled = gc_cmd_progress_tick;
	if (gc_session_open(out, e, live, &so, &err) < 0) {
		switch (out->stage) {
		case GC_SESSION_FROM: bad_from(ctx, &out->boot, o->from); return GC_EXIT_USAGE;
		case GC_SESSION_PIN:
			gc_cmd_report_error(ctx, "host keys", &err);
			if (err.code == GC_EAUTH && !so.strict)
				gc_out_hint(ctx->out,
					    "a changed key on a known instance is never accepted: "
					    "if the instance really was rebuilt, delete its lines "
					    "from %s",
					    out->kh_path);
			break;
		case GC_SESSION_SELECT:
			gc_cmd_report_error(ctx, NULL, &err);
			gc_out_hint(ctx->out, "'%s status' lists the cluster's nodes", GC_PROGRAM);
			break;
		default: gc_cmd_report_error(ctx, NULL, &err); break;
		}
		return gc_cmd_exit_for(&err);
	}
	if (out->boot.n_nodes == 0)
		return GC_EXIT_OK;

	gc_cmd_progress_begin(&prog, ctx, &out->boot, mode_verb(o->mode));
	/* lines rewritten in place would tear the streamed ones */
	if (o->cb.output && o->mode == GC_BOOT_EXEC)
		prog.live = false;
	so.cb.progress = gc_cmd_progress_event;
	so.cb.progress_ctx = &prog;
	so.cb.cancel_ctx = &prog;
	gc_session_run(out, &so, &err);
	gc_cmd_progress_end(&prog);
	if (!out->ran) {
		gc_cmd_report_error(ctx, mode_verb(o->mode), &err);
		return GC_EXIT_FAILURE;
	}
	if (ctx->gha) /* the smoke results, for the step summary (cmd/gha.h) */
		gc_gha_note_boot(ctx->gha, gc_cmd_boot_json(out));
	if (err.code == GC_ECANCELLED)
		return GC_EXIT_INTERRUPTED;
	return out->n_failed ? GC_EXIT_FAILURE : GC_EXIT_OK;
}

/* ---- text reports ---------------------------------------------------------------- */

/* The last n lines of text, each as "    | LINE" on err, control characters escaped. */
static void print_tail(struct gc_cmd_ctx *ctx, const struct gc_buf *text, unsigned n)
{
	struct gc_output *o = ctx->out;
	const char *start = text->data, *end = text->data + text->len;
	const char *p = end;
	unsigned lines = 0;

	while (p > start && (p[-1] == '\n' || p[-1] == '\r'))
		p--;
	end = p;
	while (p > start && lines < n) {
		p--;
		if (*p == '\n' && ++lines == n) {
			p++;
			break;
		}
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = gc_xstrndup(p, len);

		gc_out_puts(o, o->err, "    | ");
		gc_out_puts_clean(o, o->err, line);
		gc_out_puts(o, o->err, "\n");
		free(line);
		p += len + (nl ? 1 : 0);
	}
}

/* The runner's message without a leading "ID: ", which the report line already shows. */
static const char *without_id(const char *msg, const char *id)
{
	size_t n = strlen(id);

	if (strncmp(msg, id, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

static void print_node_failure(struct gc_cmd_ctx *ctx, const struct gc_session *b, size_t i)
{
	const struct gc_boot_node *bn = &b->boot.info[i];
	const struct gc_runner_node_result *nr = &b->report.nodes[i];
	const struct gc_smoke_report *sm = b->smoke ? &b->smoke[i] : NULL;
	const struct gc_runner_step_result *failed = NULL;
	size_t fs = SIZE_MAX;

	for (size_t k = 0; k < nr->n_steps; k++) {
		if (nr->steps[k].state == GC_STEP_FAILED) {
			failed = &nr->steps[k];
			fs = k;
		}
	}
	if (sm &&
	    ((fs == b->boot.smoke_step && fs != SIZE_MAX) || (nr->err.code == GC_OK && !sm->ok))) {
		gc_out_error(ctx->out, "%s (%s): smoke test failed: %s", bn->id, bn->label,
			     sm->reason);
		return;
	}
	gc_out_error(ctx->out, "%s (%s): %s", bn->id, bn->label,
		     without_id(nr->err.message, bn->id));
	if (failed && (failed->err.len || failed->out.len))
		print_tail(ctx, failed->err.len ? &failed->err : &failed->out, TAIL_LINES);
	if (b->console && b->console[i] && b->console[i][0]) {
		struct gc_buf text = GC_BUF_INIT(0);

		gc_buf_addstr(&text, b->console[i]);
		gc_out_printf(ctx->out, ctx->out->err, "  the end of its console output:\n");
		print_tail(ctx, &text, TAIL_LINES);
		gc_buf_release(&text);
	}
	if (nr->err.code == GC_EAUTH && strstr(nr->err.message, "refused"))
		gc_ci_key_refused_hint(ctx);
}

/* The slowest GPU's figure (the health view: one bad GPU is the node's), or -1. */
static double slowest(const struct gc_smoke_report *r, size_t field)
{
	double best = -1;

	for (size_t i = 0; i < r->n_gpus; i++) {
		const struct gc_smoke_gpu *g = &r->gpus[i];
		double v = field == 0 ? g->h2d_gbps
			: field == 1  ? g->d2h_gbps
			: field == 2  ? g->d2d_gbps
				      : g->gemm_tflops;

		if (v >= 0 && (best < 0 || v < best))
			best = v;
	}
	return best;
}

static void figure_text(char *out, size_t size, double v, const char *unit)
{
	if (v < 0)
		snprintf(out, size, "-");
	else
		snprintf(out, size, "%.1f %s", v, unit);
}

static void result_text(char *out, size_t size, const struct gc_smoke_report *r)
{
	struct gc_buf b = GC_BUF_INIT(size - 1);

	if (r->ok && r->earlier) {
		snprintf(out, size,
			 "ok (passed earlier this boot; run 'gpucluster smoke' to re-test)");
	} else if (r->ok) {
		snprintf(out, size, "ok%s", r->simulated ? " (simulated)" : "");
	} else if (!r->ran) {
		snprintf(out, size, "FAILED: did not run");
	} else if (!r->parsed) {
		snprintf(out, size, "FAILED: no valid report");
	} else {
		for (size_t i = 0; i < r->n_checks; i++)
			if (!r->checks[i].ok)
				gc_buf_addf(&b, "%s%s", b.len ? ", " : "", r->checks[i].name);
		snprintf(out, size, "FAILED: %s%s", b.len ? b.data : "see above",
			 r->simulated ? " (simulated)" : "");
	}
	gc_buf_release(&b);
}

/* The smoke table alone, on stdout: node, GPUs, model, bandwidths, GEMM, result. */
static void print_smoke(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	static const char *const units[] = { "GB/s", "GB/s", "GB/s", "TFLOPS" };
	struct gc_output *o = ctx->out;
	FILE *s = o->out;
	int wl = 4, wi = 2, wm = 5;
	bool simulated = false;

	if (!b->smoke || !b->boot.n_nodes)
		return;
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_smoke_report *r = &b->smoke[i];
		int l = (int)strlen(b->boot.info[i].label), d = (int)strlen(b->boot.info[i].id);
		int m = r->n_gpus ? (int)strlen(r->gpus[0].name) : 1;

		wl = l > wl ? l : wl;
		wi = d > wi ? d : wi;
		wm = m > wm ? m : wm;
		simulated |= r->simulated;
	}
	gc_out_printf(o, s, "\n%s%-*s  %-*s  %4s  %-*s  %11s  %11s  %11s  %13s  %s%s\n",
		      gc_out_style(o, s, GC_STYLE_BOLD), wl, "NODE", wi, "ID", "GPUS", wm, "MODEL",
		      "H2D", "D2H", "D2D", "GEMM", "RESULT", gc_out_style(o, s, GC_STYLE_RESET));
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_smoke_report *r = &b->smoke[i];
		char fig[4][32], res[GC_SMOKE_DETAIL_MAX], gpus[16];
		bool mixed = false;

		for (size_t k = 0; k < 4; k++)
			figure_text(fig[k], sizeof(fig[k]), slowest(r, k), units[k]);
		for (size_t k = 1; k < r->n_gpus; k++)
			mixed |= strcmp(r->gpus[k].name, r->gpus[0].name) != 0;
		if (r->parsed)
			snprintf(gpus, sizeof(gpus), "%zu", r->n_gpus);
		else
			snprintf(gpus, sizeof(gpus), "-");
		result_text(res, sizeof(res), r);
		gc_out_printf(o, s, "%-*s  %-*s  %4s  %-*s  %11s  %11s  %11s  %13s  %s%s%s\n", wl,
			      b->boot.info[i].label, wi, b->boot.info[i].id, gpus, wm,
			      mixed		  ? "(mixed)"
				      : r->n_gpus ? r->gpus[0].name
						  : "-",
			      fig[0], fig[1], fig[2], fig[3],
			      gc_out_style(o, s, r->ok ? GC_STYLE_GREEN : GC_STYLE_RED), res,
			      gc_out_style(o, s, GC_STYLE_RESET));
	}
	if (simulated)
		gc_out_printf(o, s,
			      "(simulated): figures from gpucluster-sim's simulated GPUs, not "
			      "measurements\n");
}

/* Text: each failed node with its reason and the failed step's last lines (stderr), a
 * summary line (stderr), then the smoke table (stdout). */
static void boot_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	struct gc_output *o = ctx->out;
	unsigned ran = 0, skipped = 0;

	if (!b->ran)
		return;
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_runner_node_result *nr = &b->report.nodes[i];

		for (size_t k = 0; k < nr->n_steps; k++) {
			ran += nr->steps[k].state == GC_STEP_OK;
			skipped += nr->steps[k].state == GC_STEP_SKIPPED;
		}
		if (nr->err.code != GC_OK || (b->smoke && !b->smoke[i].ok))
			print_node_failure(ctx, b, i);
	}
	if (!o->quiet)
		gc_out_printf(o, o->err,
			      "%s: %zu of %zu node%s ok; %u step%s ran, %u skipped (done before), "
			      "in %.1fs\n",
			      mode_verb(b->mode), b->boot.n_nodes - b->n_failed, b->boot.n_nodes,
			      b->boot.n_nodes == 1 ? "" : "s", ran, ran == 1 ? "" : "s", skipped,
			      (double)b->report.wall_ms / 1000.0);
	if (b->smoke)
		print_smoke(ctx, b);
}

/* ---- JSON -------------------------------------------------------------------------- */

/* The runner's word for a state, but "skipped" alone (docs/cli.md's JSON). */
static const char *step_state_word(enum gc_step_state s)
{
	return s == GC_STEP_SKIPPED ? "skipped" : gc_step_state_name(s);
}

static const char *pin_word(enum gc_boot_pin_source s)
{
	switch (s) {
	case GC_BOOT_PIN_KNOWN: return "pinned";
	case GC_BOOT_PIN_CONSOLE: return "console";
	case GC_BOOT_PIN_TAG: return "launch-key";
	case GC_BOOT_PIN_TOFU: return "first-use";
	default: return "none";
	}
}

static json_t *figure_json(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

static json_t *smoke_json(const struct gc_smoke_report *r)
{
	json_t *checks = json_array(), *gpus = json_array();

	for (size_t i = 0; i < r->n_checks; i++)
		json_array_append_new(checks,
				      json_pack("{s:s, s:b, s:s}", "name", r->checks[i].name, "ok",
						r->checks[i].ok, "detail", r->checks[i].detail));
	for (size_t i = 0; i < r->n_gpus; i++) {
		const struct gc_smoke_gpu *g = &r->gpus[i];

		json_array_append_new(
			gpus,
			json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "index", g->index, "name",
				  g->name, "memory_mib",
				  g->memory_mib < 0 ? json_null() : json_integer(g->memory_mib),
				  "h2d_gbps", figure_json(g->h2d_gbps), "d2h_gbps",
				  figure_json(g->d2h_gbps), "d2d_gbps", figure_json(g->d2d_gbps),
				  "gemm_tflops", figure_json(g->gemm_tflops)));
	}
	return json_pack("{s:b, s:b, s:b, s:b, s:b, s:s, s:o, s:o, s:s, s:s}", "ok", r->ok, "ran",
			 r->ran, "earlier", r->earlier, "valid", r->parsed, "simulated",
			 r->simulated, "reason", r->reason, "checks", checks, "gpus", gpus,
			 "driver", r->driver, "cuda_runtime", r->cuda_runtime);
}

json_t *gc_cmd_boot_json(const struct gc_session *b)
{
	json_t *nodes = json_array();

	for (size_t i = 0; b->ran && i < b->boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &b->boot.info[i];
		const struct gc_runner_node_result *nr = &b->report.nodes[i];
		json_t *steps = json_array(), *node;
		bool ok = nr->err.code == GC_OK && (!b->smoke || b->smoke[i].ok);

		for (size_t k = 0; k < nr->n_steps; k++) {
			const struct gc_runner_step_result *sr = &nr->steps[k];

			if (sr->state == GC_STEP_NOT_NEEDED) /* an undo step with nothing to undo */
				continue;
			json_array_append_new(
				steps,
				json_pack("{s:s, s:s, s:o, s:I, s:i, s:i}", "name",
					  b->boot.steps[k].name, "state",
					  step_state_word(sr->state), "exit_status",
					  sr->exit_status < 0 ? json_null()
							      : json_integer(sr->exit_status),
					  "elapsed_ms", (json_int_t)sr->elapsed_ms, "attempts",
					  (int)sr->attempts, "reboots", (int)sr->reboots));
		}
		node = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:I, s:o}", "id", bn->id,
				 "group", bn->group, "node", bn->label, "host", bn->host, "type",
				 bn->type, "ok", ok, "host_key", pin_word(bn->pin), "elapsed_ms",
				 (json_int_t)nr->elapsed_ms, "steps", steps);
		json_object_set_new(node, "error",
				    nr->err.code == GC_OK ? json_null()
							  : json_pack("{s:s, s:s}", "code",
								      gc_strerror(nr->err.code),
								      "message", nr->err.message));
		json_object_set_new(node, "smoke",
				    b->smoke ? smoke_json(&b->smoke[i]) : json_null());
		json_array_append_new(nodes, node);
	}
	return json_pack("{s:o, s:I, s:I, s:I, s:I}", "nodes", nodes, "ok",
			 (json_int_t)(b->ran ? b->boot.n_nodes - b->n_failed : 0), "failed",
			 (json_int_t)b->n_failed, "unhealthy", (json_int_t)b->n_unhealthy,
			 "wall_ms", (json_int_t)b->report.wall_ms);
}

int gc_cmd_boot_command(struct gc_cmd_ctx *ctx, const struct gc_session_opts *o, const char *hint,
			json_t *(*to_json)(const struct gc_session *),
			void (*print)(struct gc_cmd_ctx *, const struct gc_session *))
{
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_session b;
	int rc;

	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_session_init(&b);
	rc = gc_cmd_boot_run(ctx, &e, NULL, o, &b);
	if (rc == GC_EXIT_OK && !b.ran) {
		gc_out_error(ctx->out, "cluster '%s' has no running nodes", ctx->spec->name);
		if (hint)
			gc_out_hint(ctx->out, "%s", hint);
		rc = GC_EXIT_FAILURE;
	} else if (b.ran && ctx->out->format == GC_OUTPUT_JSON) {
		json_t *doc = (to_json ? to_json : gc_cmd_boot_json)(&b);

		gc_out_json(ctx->out, doc);
		json_decref(doc);
	} else if (b.ran) {
		(print ? print : boot_print)(ctx, &b);
	}
	gc_session_release(&b);
	gc_engine_release(&e);
	return rc;
}

/* ---- apply ------------------------------------------------------------------------- */

/* The ids of the nodes whose smoke test ran and failed. */
static size_t unhealthy_ids(const struct gc_session *b, const char ***out)
{
	size_t n = 0;

	*out = gc_xcalloc(b->boot.n_nodes + 1, sizeof(**out));
	for (size_t i = 0; b->smoke && i < b->boot.n_nodes; i++) {
		const struct gc_runner_step_result *sr =
			&b->report.nodes[i].steps[b->boot.smoke_step];

		if ((sr->state == GC_STEP_OK || sr->state == GC_STEP_FAILED) && !b->smoke[i].ok)
			(*out)[n++] = b->boot.info[i].id;
	}
	return n;
}

/*
 * The one round of --replace-unhealthy: terminate ids, plan and apply again (the same
 * overrides as the first time), bootstrap what was created. Returns an exit code.
 */
static int replace_round(struct gc_cmd_ctx *ctx, struct gc_engine *e,
			 const struct gc_engine_opts *eopts, const char *const *ids, size_t n,
			 const char *const *names, const unsigned *counts, size_t n_over,
			 json_t *doc)
{
	struct gc_engine_report term, rep;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_session b;
	struct gc_session_opts o = { .mode = GC_BOOT_FULL };
	struct gc_error err;
	const char **created = NULL;
	bool json = doc != NULL;
	json_t *jr = json ? json_object() : NULL;
	int rc = GC_EXIT_FAILURE;

	gc_error_init(&err);
	gc_engine_report_init(&term);
	gc_engine_report_init(&rep);
	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	gc_session_init(&b);
	if (!json) {
		gc_out_printf(ctx->out, ctx->out->err, "\nreplacing %zu unhealthy node%s:", n,
			      n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			gc_out_printf(ctx->out, ctx->out->err, " %s", ids[i]);
		gc_out_puts(ctx->out, ctx->out->err, "\n");
	}
	if (jr) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_string(ids[i]));
		json_object_set_new(jr, "terminated", a);
		json_object_set_new(doc, "replaced", jr);
	}
	if (gc_engine_terminate(e, ids, n, eopts, &term, &err) < 0) {
		gc_cmd_report_error(ctx, "cannot replace the unhealthy nodes", &err);
		rc = gc_cmd_exit_for(&err);
		goto out;
	}
	if (gc_engine_plan(e, &plan, &live, names, counts, n_over, &err) < 0) {
		gc_cmd_report_error(ctx, "plan", &err);
		rc = gc_cmd_exit_for(&err);
		goto out;
	}
	if (!json)
		gc_cmd_show_plan(ctx, &plan);
	if (gc_engine_apply(e, &plan, eopts, &rep, &err) < 0) {
		if (!json)
			gc_cmd_print_report(ctx, "apply", &rep);
		gc_cmd_report_error(ctx, NULL, &err);
		rc = gc_cmd_exit_for(&err);
		if (err.code == GC_ECANCELLED)
			goto out;
	} else if (!json) {
		gc_cmd_print_report(ctx, "apply", &rep);
	}
	if (jr)
		json_object_set_new(jr, "apply", gc_cmd_report_json(&rep));
	created = gc_xcalloc(rep.created.n + 1, sizeof(*created));
	for (size_t i = 0; i < rep.created.n; i++)
		created[i] = rep.created.items[i].id;
	o.ids = created;
	o.n_ids = rep.created.n;
	if (rep.created.n) {
		int brc = gc_cmd_boot_run(ctx, e, NULL, &o, &b);

		if (jr)
			json_object_set_new(jr, "bootstrap", gc_cmd_boot_json(&b));
		else
			boot_print(ctx, &b);
		if (err.code == GC_OK)
			rc = brc;
	}
out:
	free(created);
	gc_session_release(&b);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	gc_engine_report_release(&rep);
	gc_engine_report_release(&term);
	return rc;
}

int gc_cmd_apply_bootstrap(struct gc_cmd_ctx *ctx, struct gc_engine *e,
			   const struct gc_engine_opts *eopts, json_t *doc,
			   const char *const *names, const unsigned *counts, size_t n_over)
{
	struct gc_session b;
	struct gc_session_opts o = { .mode = GC_BOOT_FULL };
	const char **bad = NULL;
	size_t n_bad;
	int rc;

	if (gc_cmd_opt_given(ctx, "no-bootstrap") || gc_cmd_opt_given(ctx, "no-wait") ||
	    gc_cmd_interrupted())
		return GC_EXIT_OK;
	/* asked to replace unhealthy nodes: health is tested now, not taken from this boot's
	 * earlier pass */
	if (gc_cmd_opt_given(ctx, "replace-unhealthy"))
		o.from = GC_STEP_SMOKE;
	gc_session_init(&b);
	rc = gc_cmd_boot_run(ctx, e, NULL, &o, &b);
	if (doc)
		json_object_set_new(doc, "bootstrap", gc_cmd_boot_json(&b));
	else
		boot_print(ctx, &b);
	n_bad = unhealthy_ids(&b, &bad);
	if (rc == GC_EXIT_FAILURE && n_bad && gc_cmd_opt_given(ctx, "replace-unhealthy") &&
	    !gc_cmd_interrupted()) {
		int rrc = replace_round(ctx, e, eopts, bad, n_bad, names, counts, n_over, doc);

		/* other failures than the replaced nodes' still fail the apply */
		rc = b.n_failed > n_bad ? GC_EXIT_FAILURE : rrc;
	} else if (rc == GC_EXIT_FAILURE && n_bad && !gc_cmd_opt_given(ctx, "replace-unhealthy")) {
		gc_out_hint(ctx->out,
			    "'%s %s --replace-unhealthy' terminates the nodes that failed the "
			    "smoke test and creates new ones",
			    GC_PROGRAM, ctx->entry->name);
	}
	free(bad);
	gc_session_release(&b);
	return rc;
}

char *gc_cmd_user_script(const struct gc_cmd_ctx *ctx, const char *before, const char *after_rc)
{
	struct gc_buf s = GC_BUF_INIT(0);

	gc_buf_addf(&s, "%s(\n", before);
	for (size_t i = 0; i < ctx->n_cmd; i++)
		gc_buf_addf(&s, "%s%s", i ? " " : "", ctx->cmd[i]);
	gc_buf_addf(&s,
		    "\n)\ngc_rc=$?\n"
		    "%s"
		    "if [ \"$gc_rc\" = 100 ]; then\n"
		    "\techo 'gpucluster: the command exited 100, reported as 1' >&2\n"
		    "\texit 1\n"
		    "fi\n"
		    "exit \"$gc_rc\"\n",
		    after_rc);
	return gc_buf_detach(&s, NULL);
}

void gc_cmd_boot_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	boot_print(ctx, b);
}
