/*
 * progress.c: the one progress printer: the bootstrapper's and the engine's progress on
 * stderr (stdout stays the command's result), and ssh's wait for a node. What it looks
 * like is in docs/cli.md ("bootstrap", Output) and docs/ci.md (groups).
 *
 * Live lines only on a terminal without -v (log lines would tear them), and at most
 * MAX_LIVE_NODES node lines so a large cluster does not scroll the screen away. The
 * runner calls back only on transitions, so elapsed times are brought up to date from
 * its cancel poll (at least every 100 ms). In a log, an unchanged wait is repeated at
 * most every WAIT_REPEAT_MS, so a CI log has no line per poll.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/clock.h"

#define MAX_LIVE_NODES 20
#define REDRAW_MS      250
#define WAIT_REPEAT_MS 30000
#define STATE_TEXT_MAX 96
#define GROUP_LOG_MAX  ((size_t)256 << 10) /* one node's held-back lines */

enum pstate {
	P_QUEUED,
	P_WAITING, /* for SSH */
	P_CONNECTED,
	P_UPLOADING,
	P_STEP,
	P_REBOOTING,
	P_RECONNECTING,
	P_DONE,
	P_FAILED,
};

struct gc_cmd_progress_node {
	enum pstate st;
	size_t step;
	uint64_t since_ns; /* the current state's start */
	uint64_t last_wait_note_ns;
	unsigned ran, skipped;
	bool stepped;	     /* a step started */
	uint64_t elapsed_ms; /* the node's, once done */
	struct gc_buf log;   /* GitHub Actions: lines held back for the node's group */
	bool log_full;
	bool grouped; /* its group was printed */
};

static uint64_t now_ns(void)
{
	return gc_clock_now_ns(NULL);
}

void gc_cmd_progress_begin(struct gc_cmd_progress *p, struct gc_cmd_ctx *ctx,
			   const struct gc_boot *boot, const char *verb)
{
	size_t n_steps = 0;

	memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->boot = boot;
	p->verb = verb;
	p->show = !ctx->out->quiet;
	p->live = p->show && gc_cmd_is_tty(ctx->io->err, ctx->io->err_tty) &&
		ctx->globals.verbose == 0;
	/* exec's result is the output itself: a log gets only what went wrong */
	p->terse = strcmp(verb, "exec") == 0;
	p->start_ns = now_ns();
	p->nodes = gc_xcalloc(boot->n_nodes + 1, sizeof(*p->nodes));
	for (size_t i = 0; i < boot->n_nodes; i++) {
		p->nodes[i].since_ns = p->start_ns;
		gc_buf_init(&p->nodes[i].log, GROUP_LOG_MAX);
	}
	/* undo steps run only where there is something to undo: not counted here */
	for (size_t k = 0; k < boot->n_steps; k++)
		n_steps += !boot->steps[k].undoes;
	if (p->show && !p->live && !p->terse)
		gc_out_printf(ctx->out, ctx->out->err, "%s: %zu node%s, %zu step%s\n", verb,
			      boot->n_nodes, boot->n_nodes == 1 ? "" : "s", n_steps,
			      n_steps == 1 ? "" : "s");
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static const char *step_name(const struct gc_cmd_progress *p, size_t step)
{
	return step < p->boot->n_steps ? p->boot->steps[step].name : "?";
}

/* The text after a node's label on a live line. */
static void node_text(const struct gc_cmd_progress *p, size_t i, char *out, size_t size,
		      uint64_t now)
{
	const struct gc_cmd_progress_node *n = &p->nodes[i];
	double el = secs(now - n->since_ns);
	size_t total = p->boot->n_steps;
	const char *pause = n->st == P_REBOOTING ? ": rebooting" : "";

	if (n->st == P_RECONNECTING)
		pause = ": reconnecting";
	switch (n->st) {
	case P_QUEUED: snprintf(out, size, "queued"); break;
	case P_WAITING: snprintf(out, size, "waiting for SSH (%.0fs)", el); break;
	case P_CONNECTED: snprintf(out, size, "connected"); break;
	case P_UPLOADING: snprintf(out, size, "uploading the scripts"); break;
	case P_STEP:
	case P_REBOOTING:
	case P_RECONNECTING:
		snprintf(out, size, "[%zu/%zu] %s%s (%.0fs)", n->step + 1, total,
			 step_name(p, n->step), pause, el);
		break;
	case P_DONE:
		snprintf(out, size, "done: %u ran, %u skipped (%.1fs)", n->ran, n->skipped,
			 (double)n->elapsed_ms / 1000.0);
		break;
	case P_FAILED:
		if (n->stepped)
			snprintf(out, size, "FAILED at %s (%.1fs)", step_name(p, n->step),
				 (double)n->elapsed_ms / 1000.0);
		else
			snprintf(out, size, "FAILED before any step (%.1fs)",
				 (double)n->elapsed_ms / 1000.0);
		break;
	}
}

static void redraw(struct gc_cmd_progress *p, bool final)
{
	struct gc_output *o = p->ctx->out;
	FILE *s = o->err;
	uint64_t now = now_ns();
	size_t n = p->boot->n_nodes;
	bool per_node = n <= MAX_LIVE_NODES;
	char text[STATE_TEXT_MAX];

	if (!final && p->lines && now - p->last_draw_ns < (uint64_t)REDRAW_MS * GC_NS_PER_MS)
		return;
	p->last_draw_ns = now;
	if (p->lines)
		gc_out_printf(o, s, "\x1b[%zuA", p->lines);
	p->lines = 0;
	for (size_t i = 0; per_node && i < n; i++) {
		const struct gc_boot_node *bn = &p->boot->info[i];
		bool done = p->nodes[i].st == P_DONE, failed = p->nodes[i].st == P_FAILED;
		const char *on = done ? gc_out_style(o, s, GC_STYLE_GREEN)
			: failed      ? gc_out_style(o, s, GC_STYLE_RED)
				      : "";

		node_text(p, i, text, sizeof(text), now);
		gc_out_printf(o, s, "\r  %-14s %-20s %s%s%s\x1b[K\n", bn->label, bn->id, on, text,
			      *on ? gc_out_style(o, s, GC_STYLE_RESET) : "");
		p->lines++;
	}
	gc_out_printf(o, s, "\r  %s: %zu of %zu node%s done, %zu failed (%.0fs)\x1b[K\n", p->verb,
		      p->done, n, n == 1 ? "" : "s", p->failed, secs(now - p->start_ns));
	p->lines++;
	fflush(s);
}

/* Whether plain lines are held back per node for a GitHub Actions group (decided at each
 * line: boot.c may turn live off after begin). */
static bool grouping(const struct gc_cmd_progress *p)
{
	return p->ctx->out->gha && !p->live && !p->terse;
}

/* Node i's held-back lines as one group, titled with its outcome. */
static void print_group(struct gc_cmd_progress *p, size_t i)
{
	struct gc_output *o = p->ctx->out;
	struct gc_cmd_progress_node *n = &p->nodes[i];
	const struct gc_boot_node *bn = &p->boot->info[i];
	struct gc_buf title = GC_BUF_INIT(0), cmd = GC_BUF_INIT(0);
	const char *outcome = n->st == P_DONE ? "ok"
		: n->st == P_FAILED	      ? "FAILED"
					      : "not finished";

	if (n->grouped || (!n->log.len && n->st != P_DONE && n->st != P_FAILED))
		return;
	n->grouped = true;
	gc_buf_addf(&title, "%s %s: %s", bn->label, bn->id, outcome);
	gc_buf_addstr(&cmd, "::group::");
	gc_gha_escape_data(&cmd, title.data);
	gc_buf_addch(&cmd, '\n');
	gc_out_puts(o, o->err, cmd.data);
	gc_out_puts_clean(o, o->err, n->log.data);
	if (n->log_full)
		gc_out_puts(o, o->err, "  (more lines left out)\n");
	gc_out_puts(o, o->err, "::endgroup::\n");
	gc_buf_release(&title);
	gc_buf_release(&cmd);
}

/* One plain line about node i. */
static void plain(struct gc_cmd_progress *p, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void plain(struct gc_cmd_progress *p, size_t i, const char *fmt, ...)
{
	struct gc_output *o = p->ctx->out;
	const struct gc_boot_node *bn = &p->boot->info[i];
	char msg[GC_ERROR_MSG_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (grouping(p)) {
		if (gc_buf_addf(&p->nodes[i].log, "  %s %s: %s\n", bn->label, bn->id, msg) < 0)
			p->nodes[i].log_full = true;
		return;
	}
	gc_out_printf(o, o->err, "  %s %s: ", bn->label, bn->id);
	gc_out_puts_clean(o, o->err, msg);
	gc_out_puts(o, o->err, "\n");
}

static void plain_step_done(struct gc_cmd_progress *p, const struct gc_runner_event *ev)
{
	const struct gc_runner_step_result *r = ev->result;
	double el = (double)ev->step_elapsed_ms / 1000.0;
	const char *undoes = ev->step < p->boot->n_steps ? p->boot->steps[ev->step].undoes : NULL;

	switch (r->state) {
	case GC_STEP_OK:
		if (undoes)
			plain(p, ev->node, "%s removed: the spec no longer wants it (%.1fs)",
			      undoes, el);
		else if (r->reboots)
			plain(p, ev->node, "%s ok (%.1fs, %u reboot%s)", ev->step_name, el,
			      r->reboots, r->reboots == 1 ? "" : "s");
		else
			plain(p, ev->node, "%s ok (%.1fs)", ev->step_name, el);
		break;
	case GC_STEP_SKIPPED: plain(p, ev->node, "%s skipped: done before", ev->step_name); break;
	case GC_STEP_NOT_NEEDED: break; /* an undo step where its step never ran: no news */
	case GC_STEP_FAILED:
		if (r->exit_signal[0])
			plain(p, ev->node, "%s FAILED (signal %s, %.1fs)", ev->step_name,
			      r->exit_signal, el);
		else
			plain(p, ev->node, "%s FAILED (exit %d, %.1fs)", ev->step_name,
			      r->exit_status, el);
		break;
	default: plain(p, ev->node, "%s %s", ev->step_name, gc_step_state_name(r->state)); break;
	}
}

void gc_cmd_progress_event(void *arg, const struct gc_runner_event *ev)
{
	struct gc_cmd_progress *p = arg;
	struct gc_cmd_progress_node *n;
	uint64_t now = now_ns();

	if (!p->show || ev->node >= p->boot->n_nodes)
		return;
	n = &p->nodes[ev->node];
	if (ev->step != SIZE_MAX)
		n->step = ev->step;
	switch (ev->phase) {
	case GC_RUN_WAITING_SSH:
		if (n->st != P_WAITING) {
			n->st = P_WAITING;
			n->since_ns = now;
		}
		if (!p->live &&
		    (!n->last_wait_note_ns ||
		     now - n->last_wait_note_ns >= (uint64_t)WAIT_REPEAT_MS * GC_NS_PER_MS)) {
			n->last_wait_note_ns = now;
			plain(p, ev->node, "waiting for SSH (%s)",
			      ev->err ? ev->err->message : "no answer yet");
		}
		break;
	case GC_RUN_CONNECTED: n->st = P_CONNECTED; break;
	case GC_RUN_UPLOADING: n->st = P_UPLOADING; break;
	case GC_RUN_STEP_START:
		n->st = P_STEP;
		n->stepped = true;
		n->since_ns = now;
		break;
	case GC_RUN_STEP_DONE:
		if (ev->result && ev->result->state == GC_STEP_SKIPPED)
			n->skipped++;
		else if (ev->result && ev->result->state == GC_STEP_OK)
			n->ran++;
		if (!p->live && !p->terse && ev->result)
			plain_step_done(p, ev);
		break;
	case GC_RUN_REBOOTING:
		n->st = P_REBOOTING;
		n->since_ns = now;
		if (!p->live)
			plain(p, ev->node, "%s asked for a reboot: rebooting", ev->step_name);
		break;
	case GC_RUN_RECONNECTING:
		n->st = P_RECONNECTING;
		n->since_ns = now;
		if (!p->live)
			plain(p, ev->node, "connection lost during %s; reconnecting (%s)",
			      ev->step_name ? ev->step_name : "a step",
			      ev->err ? ev->err->message : "");
		break;
	case GC_RUN_NODE_DONE:
		n->elapsed_ms = ev->node_elapsed_ms;
		if (ev->err && ev->err->code != GC_OK) {
			n->st = P_FAILED;
			p->failed++;
			if (!p->live && !p->terse)
				plain(p, ev->node, "FAILED after %.1fs",
				      (double)n->elapsed_ms / 1000.0);
		} else {
			n->st = P_DONE;
			if (!p->live && !p->terse)
				plain(p, ev->node, "done in %.1fs (%u ran, %u skipped)",
				      (double)n->elapsed_ms / 1000.0, n->ran, n->skipped);
		}
		p->done++;
		if (grouping(p))
			print_group(p, ev->node);
		break;
	}
	if (p->live)
		redraw(p, false);
}

bool gc_cmd_progress_tick(void *arg)
{
	struct gc_cmd_progress *p = arg;

	if (p && p->live)
		redraw(p, false);
	return gc_cmd_interrupted();
}

void gc_cmd_progress_end(struct gc_cmd_progress *p)
{
	if (p->live)
		redraw(p, true);
	for (size_t i = 0; p->nodes && i < p->boot->n_nodes; i++) {
		/* a cancelled run: the nodes that never finished still show what they did */
		if (grouping(p))
			print_group(p, i);
		gc_buf_release(&p->nodes[i].log);
	}
	free(p->nodes);
	p->nodes = NULL;
}

/* ---- the engine's progress ------------------------------------------------------ */

struct engine_progress {
	struct gc_cmd_ctx *ctx;
	bool tty;
	bool line_open; /* a \r line is on screen */
	unsigned last_done;
	uint64_t last_ms;
};

static struct engine_progress progress_state;

static const char *market_word(bool spot)
{
	return spot ? "spot" : "on-demand";
}

static void close_line(struct engine_progress *pr)
{
	if (pr->line_open) {
		gc_out_puts(pr->ctx->out, pr->ctx->out->err, "\n");
		pr->line_open = false;
	}
}

void gc_cmd_engine_progress_done(void)
{
	if (progress_state.ctx)
		close_line(&progress_state);
}

static void on_progress(void *arg, const struct gc_engine_event *ev)
{
	struct engine_progress *pr = arg;
	struct gc_output *o = pr->ctx->out;
	FILE *s = o->err;

	if (o->quiet)
		return;
	if (ev->kind != GC_EV_WAITING)
		close_line(pr); /* every other event is a line of its own */
	switch (ev->kind) {
	case GC_EV_WAITING:
		/* in a log: a changed count, or the same one again after WAIT_REPEAT_MS */
		if (!pr->tty && ev->done == pr->last_done && pr->last_ms != 0 &&
		    ev->elapsed_ms < pr->last_ms + WAIT_REPEAT_MS)
			return;
		gc_out_printf(o, s, "%s  waiting: %u/%u %s (%llus)%s", pr->tty ? "\r" : "",
			      ev->done, ev->total, ev->message ? ev->message : "running",
			      (unsigned long long)(ev->elapsed_ms / 1000),
			      pr->tty ? "\x1b[K" : "\n");
		pr->line_open = pr->tty;
		pr->last_done = ev->done;
		pr->last_ms = ev->elapsed_ms ? ev->elapsed_ms : 1;
		return;
	case GC_EV_CREATE_START:
		gc_out_printf(o, s, "  creating %u in group '%s': %s, %s, %s\n", ev->count,
			      ev->group ? ev->group : "?", ev->type ? ev->type : "?",
			      ev->zone ? ev->zone : "any zone", market_word(ev->spot));
		return;
	case GC_EV_CREATED:
		gc_out_printf(o, s, "  %screated%s %u in group '%s'\n",
			      gc_out_style(o, s, GC_STYLE_GREEN),
			      gc_out_style(o, s, GC_STYLE_RESET), ev->count,
			      ev->group ? ev->group : "?");
		return;
	case GC_EV_CREATE_FAILED:
		/* a launch that gives up is told once, by the command's error at the end */
		if (!ev->err || ev->err->code != GC_ECAPACITY)
			return;
		gc_out_printf(o, s, "  %sno capacity%s in %s/%s/%s: %s\n",
			      gc_out_style(o, s, GC_STYLE_YELLOW),
			      gc_out_style(o, s, GC_STYLE_RESET), ev->zone ? ev->zone : "any zone",
			      ev->type ? ev->type : "?", market_word(ev->spot),
			      ev->err ? ev->err->message : "failed");
		return;
	case GC_EV_TERMINATING:
	case GC_EV_TERMINATED:
		gc_out_printf(o, s, "  %s %u instance%s\n",
			      ev->kind == GC_EV_TERMINATING ? "terminating" : "terminated",
			      ev->count, ev->count == 1 ? "" : "s");
		return;
	case GC_EV_INFO:
		if (ev->message)
			gc_out_printf(o, s, "  %s\n", ev->message);
		return;
	}
}

void gc_cmd_engine_progress_begin(struct gc_cmd_ctx *ctx, struct gc_engine_opts *opts)
{
	memset(&progress_state, 0, sizeof(progress_state));
	progress_state.ctx = ctx;
	progress_state.tty = gc_cmd_is_tty(ctx->io->err, ctx->io->err_tty);
	opts->progress = on_progress;
	opts->progress_ctx = &progress_state;
}

/* ---- ssh's wait ------------------------------------------------------------------ */

void gc_cmd_progress_wait(void *arg, const struct gc_runner_event *ev)
{
	struct gc_cmd_ctx *ctx = arg;

	if (ev->phase == GC_RUN_WAITING_SSH && ev->err && !ctx->out->quiet)
		gc_out_printf(ctx->out, ctx->out->err, "waiting for SSH on %s: %s\n", ev->node_name,
			      ev->err->message);
}
