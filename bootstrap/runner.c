/*
 * runner.c: the parallel step runner (see runner.h for the contract, and
 * docs/internals/ssh-runner.md, "The runner" and "Step markers", for the poll loop, the
 * node's state machine, the slot queue and the marker wrapper built in step_command).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/runner.h"
#include "bootstrap/scripts.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/shape.h"
#include "core/str.h"

#define PROBE_TIMEOUT_MS  60000
#define UPLOAD_TIMEOUT_MS 120000
#define REBOOT_TIMEOUT_MS 30000
#define REMOTE_GRACE_S	  5   /* `timeout` on the node fires this much after our own */
#define POLL_MAX_MS	  100 /* how often cancellation is polled at least */
#define STEP_NAME_MAX	  64
#define SKIP_SENTINEL	  "gpucluster: skipped: done "
#define UNNEEDED_SENTINEL "gpucluster: not needed: never ran\n"
#define FILES_STAMP	  ".gc-files"

enum nstate {
	N_QUEUED,     /* wants a slot to connect */
	N_CONNECTING, /* TCP, handshake, host key, authentication */
	N_PROBE,      /* reading the boot id and the files' stamp */
	N_UPLOAD,     /* uploading file `file` */
	N_STEP,	      /* running step `step` */
	N_REBOOT_CMD, /* sudo reboot */
	N_SLEEP,      /* no connection: waiting until wake_ns */
	N_DONE,
};

enum purpose {
	P_FIRST,     /* the first connection: waiting for SSH after launch */
	P_RECONNECT, /* after a dropped connection */
	P_REBOOT,    /* after a reboot: a new boot id is required */
};

struct node {
	size_t idx;
	const struct gc_runner_node *spec;
	struct gc_runner_node_result *res;
	enum nstate st;
	enum purpose purpose;
	struct gc_ssh *ssh;
	bool active; /* holds a slot */
	bool started;
	uint64_t start_ns;
	uint64_t wake_ns;
	uint64_t wait_start_ns, wait_deadline_ns;
	unsigned wait_attempts;
	struct gc_error last_err;
	size_t step, file;
	unsigned reconnects; /* for the step in progress */
	uint64_t step_start_ns;
	struct gc_ssh_result cur;
	struct gc_buf cmd;
	char boot_before[GC_RUNNER_BOOT_ID_MAX];
	char (*hash)[GC_SHA256_HEX_LEN];
	struct gc_ssh_env *env; /* the current step's merged inputs */
	size_t n_env;
	bool cut[2]; /* a streamed step's output / error stream passed the cap this attempt */
};

struct run {
	const struct gc_runner_opts *o;
	unsigned conc, max_reboots, max_reconnects;
	uint64_t ssh_wait_ms, retry_ms, reboot_wait_ms, step_timeout_ms;
	size_t max_output;
	const char *rdir, *mdir;
	size_t force_from; /* index; n_steps: none */
	char stamp[GC_SHA256_HEX_LEN];
	struct node *nodes;
	size_t n;
	size_t *queue; /* a deque of node indices, capacity n */
	size_t qhead, qlen;
	size_t active, done;
	struct gc_runner_report *rep;
	bool cancelled;
	uint64_t stop_at_ns; /* fail-fast: when the nodes still running are stopped; 0: never */
};

const char *gc_step_state_name(enum gc_step_state s)
{
	switch (s) {
	case GC_STEP_PENDING: return "pending";
	case GC_STEP_RUNNING: return "running";
	case GC_STEP_OK: return "ok";
	case GC_STEP_SKIPPED: return "skipped: done";
	case GC_STEP_FAILED: return "failed";
	case GC_STEP_CANCELLED: return "cancelled";
	case GC_STEP_NOT_NEEDED: return "not needed";
	}
	return "?";
}

static uint64_t now_ns(void)
{
	return gc_clock_now_ns(NULL);
}

static uint64_t ms_since(uint64_t t)
{
	uint64_t n = now_ns();

	return n > t ? (n - t) / GC_NS_PER_MS : 0;
}

/* ---- the report ------------------------------------------------------------------------ */

void gc_runner_report_init(struct gc_runner_report *r)
{
	memset(r, 0, sizeof(*r));
}

void gc_runner_report_release(struct gc_runner_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_nodes; i++) {
		struct gc_runner_node_result *nr = &r->nodes[i];

		for (size_t k = 0; k < nr->n_steps; k++) {
			gc_buf_release(&nr->steps[k].out);
			gc_buf_release(&nr->steps[k].err);
			gc_buf_release(&nr->steps[k].history);
		}
		free(nr->steps);
	}
	free(r->nodes);
	memset(r, 0, sizeof(*r));
}

/* ---- validation and hashes --------------------------------------------------------------- */

static bool step_name_ok(const char *s)
{
	return s && *s && strlen(s) <= STEP_NAME_MAX && gc_shape_chars(s, strlen(s), false, "_-");
}

static bool file_name_ok(const char *s)
{
	return gc_word_of(s, "._-") && s[0] != '.' && strlen(s) <= 255;
}

static bool dir_ok(const char *s)
{
	return gc_word_of(s, "._/-") && !strstr(s, "..");
}

static size_t step_index(const struct gc_runner_opts *o, const char *name)
{
	for (size_t k = 0; k < o->n_steps; k++)
		if (strcmp(o->steps[k].name, name) == 0)
			return k;
	return o->n_steps;
}

static size_t script_len(const struct gc_runner_step *s)
{
	return s->script_len ? s->script_len : strlen(s->script);
}

static int check_vars(const struct gc_runner_opts *o, const struct gc_runner_var *v, size_t n,
		      const char *whose, struct gc_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!gc_sh_name_ok(v[i].name))
			return gc_error_set(err, GC_EINVALID, "%s: bad variable name '%s'", whose,
					    v[i].name ? v[i].name : "(null)");
		if (v[i].step && step_index(o, v[i].step) == o->n_steps)
			return gc_error_set(err, GC_EINVALID,
					    "%s: variable '%s' is for step '%s', "
					    "which is not a step",
					    whose, v[i].name, v[i].step);
	}
	return 0;
}

static int validate(const struct gc_runner_opts *o, const struct gc_runner_node *nodes, size_t n,
		    struct gc_error *err)
{
	if (!o->user || !o->key || !o->known_hosts)
		return gc_error_set(err, GC_EINVALID,
				    "runner: user, key and known_hosts are required");
	if ((o->remote_dir && !dir_ok(o->remote_dir)) || (o->marker_dir && !dir_ok(o->marker_dir)))
		return gc_error_set(err, GC_EINVALID, "runner: bad remote or marker directory");
	for (size_t k = 0; k < o->n_steps; k++) {
		const struct gc_runner_step *s = &o->steps[k];

		if (!step_name_ok(s->name))
			return gc_error_set(err, GC_EINVALID,
					    "bad step name '%s' (want [a-z0-9_-], 1-64 characters)",
					    s->name ? s->name : "(null)");
		if (!s->script)
			return gc_error_set(err, GC_EINVALID, "step '%s' has no script", s->name);
		if (step_index(o, s->name) != k)
			return gc_error_set(err, GC_EINVALID, "step '%s' is listed twice", s->name);
		if (s->undoes && (!step_name_ok(s->undoes) || s->always || s->stream))
			return gc_error_set(err, GC_EINVALID,
					    "step '%s' undoes a step: it needs a good step name "
					    "and cannot be `always` or stream",
					    s->name);
		if (s->stream && (!s->always || !o->cb.output))
			return gc_error_set(err, GC_EINVALID,
					    "step '%s' streams its output: it must be `always` "
					    "and the runner needs an output callback",
					    s->name);
	}
	for (size_t i = 0; i < o->n_files; i++) {
		const struct gc_runner_file *f = &o->files[i];

		if (!file_name_ok(f->name) || (!f->data && f->len))
			return gc_error_set(err, GC_EINVALID, "bad file name '%s' to upload",
					    f->name ? f->name : "(null)");
		for (size_t j = 0; j < i; j++)
			if (strcmp(o->files[j].name, f->name) == 0)
				return gc_error_set(err, GC_EINVALID, "file '%s' is listed twice",
						    f->name);
		/* a step's script lands in NAME.sh next to the files: the same name must hold
		 * the same text */
		for (size_t k = 0; k < o->n_steps; k++) {
			const struct gc_runner_step *s = &o->steps[k];
			size_t sl = script_len(s), nl = strlen(s->name);

			if (strlen(f->name) == nl + 3 && !strncmp(f->name, s->name, nl) &&
			    !strcmp(f->name + nl, ".sh") &&
			    (f->len != sl || memcmp(f->data, s->script, sl) != 0))
				return gc_error_set(
					err, GC_EINVALID,
					"file '%s' differs from the script of step '%s'", f->name,
					s->name);
		}
	}
	if (o->force_from && step_index(o, o->force_from) == o->n_steps)
		return gc_error_set(err, GC_EINVALID, "no step '%s' to start from", o->force_from);
	if (check_vars(o, o->vars, o->n_vars, "runner", err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].name || !nodes[i].host)
			return gc_error_set(err, GC_EINVALID, "node %zu has no name or host",
					    i + 1);
		if (check_vars(o, nodes[i].vars, nodes[i].n_vars, nodes[i].name, err) < 0)
			return -1;
	}
	return 0;
}

static void files_stamp(const struct gc_runner_opts *o, char out[GC_SHA256_HEX_LEN])
{
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	gc_buf_addstr(&b, "gpucluster-files-v1\n");
	for (size_t i = 0; i < o->n_files; i++) {
		gc_buf_addf(&b, "file %s %zu\n", o->files[i].name, o->files[i].len);
		gc_buf_add(&b, o->files[i].data, o->files[i].len);
		gc_buf_addch(&b, '\n');
	}
	gc_sha256_hex(b.data, b.len, out);
	gc_buf_release(&b);
}

static int env_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gc_ssh_env *)a)->name, ((const struct gc_ssh_env *)b)->name);
}

/* The inputs of step k on a node: the runner's, then the node's, the step-specific ones
 * after the general ones; a later one of the same name wins. Sorted by name. Entries of
 * unhashed variables get their flag in hashed[i] = false (may be NULL). */
static size_t merge_env(const struct run *r, const struct node *nd, size_t k,
			struct gc_ssh_env **out, bool **hashed)
{
	const struct gc_runner_var *lists[2] = { r->o->vars, nd->spec->vars };
	size_t counts[2] = { r->o->n_vars, nd->spec->n_vars };
	size_t cap = counts[0] + counts[1], n = 0;
	struct gc_ssh_env *env = gc_xcalloc(cap ? cap : 1, sizeof(*env));
	bool *h = gc_xcalloc(cap ? cap : 1, sizeof(*h));
	const char *step = r->o->steps[k].name;

	for (int l = 0; l < 2; l++) {
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < counts[l]; i++) {
				const struct gc_runner_var *v = &lists[l][i];
				size_t j;

				if ((pass == 0) != (v->step == NULL))
					continue;
				if (v->step && strcmp(v->step, step) != 0)
					continue;
				for (j = 0; j < n && strcmp(env[j].name, v->name) != 0; j++)
					;
				env[j].name = v->name;
				env[j].value = v->value ? v->value : "";
				h[j] = !v->unhashed;
				if (j == n)
					n++;
			}
		}
	}
	/* sort env and its flags together */
	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j > 0 && env_cmp(&env[j - 1], &env[j]) > 0; j--) {
			struct gc_ssh_env t = env[j];
			bool tb = h[j];

			env[j] = env[j - 1];
			env[j - 1] = t;
			h[j] = h[j - 1];
			h[j - 1] = tb;
		}
	}
	*out = env;
	if (hashed)
		*hashed = h;
	else
		free(h);
	return n;
}

static void step_hashes(const struct run *r, struct node *nd)
{
	const char *prev = r->stamp;

	nd->hash = gc_xcalloc(r->o->n_steps ? r->o->n_steps : 1, sizeof(*nd->hash));
	for (size_t k = 0; k < r->o->n_steps; k++) {
		const struct gc_runner_step *s = &r->o->steps[k];
		struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
		struct gc_ssh_env *env;
		bool *hashed;
		size_t n;

		if (s->undoes) { /* the chain goes on as if it were not there */
			snprintf(nd->hash[k], sizeof(nd->hash[k]), "%s", prev);
			snprintf(nd->res->steps[k].hash, sizeof(nd->res->steps[k].hash), "%s",
				 prev);
			continue;
		}
		n = merge_env(r, nd, k, &env, &hashed);
		gc_buf_addf(&b, "gpucluster-step-v1\nstep %s\nscript %zu\n", s->name,
			    script_len(s));
		gc_buf_add(&b, s->script, script_len(s));
		for (size_t i = 0; i < n; i++)
			if (hashed[i])
				gc_buf_addf(&b, "\nvar %s %zu\n%s", env[i].name,
					    strlen(env[i].value), env[i].value);
		gc_buf_addf(&b, "\nprev %s\n", prev);
		gc_sha256_hex(b.data, b.len, nd->hash[k]);
		snprintf(nd->res->steps[k].hash, sizeof(nd->res->steps[k].hash), "%s", nd->hash[k]);
		prev = nd->hash[k];
		gc_buf_release(&b);
		free(env);
		free(hashed);
	}
}

/* ---- events, slots, the queue ---------------------------------------------------------- */

static void emit(struct run *r, struct node *nd, enum gc_runner_phase phase, bool with_step,
		 const struct gc_error *err)
{
	struct gc_runner_event ev = { 0 };

	if (!r->o->cb.progress)
		return;
	ev.phase = phase;
	ev.node = nd->idx;
	ev.node_name = nd->spec->name;
	ev.step = SIZE_MAX;
	ev.node_elapsed_ms = nd->started ? ms_since(nd->start_ns) : 0;
	if (with_step && nd->step < r->o->n_steps) {
		ev.step = nd->step;
		ev.step_name = r->o->steps[nd->step].name;
		ev.step_elapsed_ms = ms_since(nd->step_start_ns);
		ev.result = &nd->res->steps[nd->step];
	}
	ev.err = err;
	r->o->cb.progress(r->o->cb.progress_ctx, &ev);
}

static void push(struct run *r, struct node *nd, bool front)
{
	size_t cap = r->n;

	if (front) {
		r->qhead = (r->qhead + cap - 1) % cap;
		r->queue[r->qhead] = nd->idx;
	} else {
		r->queue[(r->qhead + r->qlen) % cap] = nd->idx;
	}
	r->qlen++;
	nd->st = N_QUEUED;
}

static struct node *pop(struct run *r)
{
	struct node *nd;

	if (!r->qlen)
		return NULL;
	nd = &r->nodes[r->queue[r->qhead]];
	r->qhead = (r->qhead + 1) % r->n;
	r->qlen--;
	return nd;
}

static void release_slot(struct run *r, struct node *nd)
{
	if (nd->ssh)
		gc_ssh_disconnect(nd->ssh);
	if (nd->active) {
		nd->active = false;
		r->active--;
	}
}

/* ---- output -------------------------------------------------------------------------------- */

static void note(struct gc_runner_step_result *sr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct gc_runner_step_result *sr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gc_buf_addstr(&sr->history, "--- gpucluster: ");
	gc_buf_vaddf(&sr->history, fmt, ap);
	gc_buf_addstr(&sr->history, " ---\n");
	va_end(ap);
}

/*
 * A streamed step: hands the complete lines of one stream to opts->cb.output and drops them
 * from the capture, so the cap only ever holds one unfinished line. At the end of an
 * attempt (end) what is left goes too, as a partial line; so does a line that filled the
 * cap, after which capture resumes (ssh.c keeps nothing more once a stream is marked
 * truncated).
 */
static void stream_buf(struct run *r, struct node *nd, int which, bool end)
{
	struct gc_buf *b = which ? &nd->cur.err : &nd->cur.out;
	bool *truncated = which ? &nd->cur.err_truncated : &nd->cur.out_truncated;
	struct gc_runner_line l = {
		.node = nd->idx,
		.node_name = nd->spec->name,
		.step = nd->step,
		.step_name = r->o->steps[nd->step].name,
		.is_stderr = which != 0,
	};
	size_t start = 0;

	for (;;) {
		char *nl = memchr(b->data + start, '\n', b->len - start);

		if (!nl)
			break;
		*nl = '\0';
		l.text = b->data + start;
		l.len = (size_t)(nl - l.text);
		l.partial = false;
		r->o->cb.output(r->o->cb.output_ctx, &l);
		*nl = '\n';
		start = (size_t)(nl - b->data) + 1;
	}
	if (start < b->len && (end || *truncated)) {
		l.text = b->data + start;
		l.len = b->len - start;
		l.partial = true;
		r->o->cb.output(r->o->cb.output_ctx, &l);
		start = b->len;
	}
	if (*truncated) {
		nd->cut[which] = true;
		*truncated = false;
	}
	if (start) {
		memmove(b->data, b->data + start, b->len - start);
		gc_buf_truncate(b, b->len - start);
	}
	if (end) {
		/* the result says the output was cut, as it does for a captured step */
		*truncated = nd->cut[which];
		nd->cut[which] = false;
	}
}

static void stream_out(struct run *r, struct node *nd, bool end)
{
	if (nd->st != N_STEP || nd->step >= r->o->n_steps || !r->o->steps[nd->step].stream)
		return;
	stream_buf(r, nd, 0, end);
	stream_buf(r, nd, 1, end);
}

/* Moves an attempt's output into the history, labelled. */
static void keep_attempt(struct gc_runner_step_result *sr, struct gc_ssh_result *cur)
{
	const struct {
		const char *label;
		struct gc_buf *b;
	} streams[2] = { { "standard output", &cur->out }, { "standard error", &cur->err } };

	for (int i = 0; i < 2; i++) {
		const struct gc_buf *b = streams[i].b;

		if (!b->len)
			continue;
		gc_buf_addf(&sr->history, "[attempt %u, %s]\n", sr->attempts, streams[i].label);
		gc_buf_add(&sr->history, b->data, b->len);
		if (b->data[b->len - 1] != '\n')
			gc_buf_addch(&sr->history, '\n');
	}
	gc_buf_reset(&cur->out);
	gc_buf_reset(&cur->err);
}

/* Hands the final attempt's output to the step result. */
static void take_output(struct run *r, struct gc_runner_step_result *sr, struct gc_ssh_result *cur)
{
	gc_buf_release(&sr->out);
	gc_buf_release(&sr->err);
	sr->out = cur->out;
	sr->err = cur->err;
	sr->out_truncated = cur->out_truncated;
	sr->err_truncated = cur->err_truncated;
	sr->exit_status = cur->exit_status;
	snprintf(sr->exit_signal, sizeof(sr->exit_signal), "%s", cur->exit_signal);
	gc_buf_init(&cur->out, r->max_output);
	gc_buf_init(&cur->err, r->max_output);
}

/* The last non-empty line of a stream, for one-line error messages. */
static void last_line(char *out, size_t size, const struct gc_buf *b)
{
	size_t end = b->len, start;

	while (end && (b->data[end - 1] == '\n' || b->data[end - 1] == '\r'))
		end--;
	start = end;
	while (start && b->data[start - 1] != '\n')
		start--;
	snprintf(out, size, "%.*s", (int)(end - start > 300 ? 300 : end - start), b->data + start);
}

/* ---- ending a node ---------------------------------------------------------------------- */

static void finish(struct run *r, struct node *nd)
{
	release_slot(r, nd);
	gc_ssh_free(nd->ssh);
	nd->ssh = NULL;
	nd->st = N_DONE;
	nd->res->elapsed_ms = nd->started ? ms_since(nd->start_ns) : 0;
	r->done++;
	if (nd->res->err.code == GC_OK)
		r->rep->n_ok++;
	else
		r->rep->n_failed++;
	if (r->o->fail_fast_ms && !r->stop_at_ns && nd->res->err.code != GC_OK &&
	    nd->res->err.code != GC_ECANCELLED) {
		r->stop_at_ns = now_ns() + r->o->fail_fast_ms * GC_NS_PER_MS;
		r->rep->first_failed = nd->idx;
	}
	emit(r, nd, GC_RUN_NODE_DONE, false, &nd->res->err);
}

static void fail(struct run *r, struct node *nd, enum gc_errcode code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail(struct run *r, struct node *nd, enum gc_errcode code, const char *fmt, ...)
{
	va_list ap;

	if (nd->step < r->o->n_steps && nd->res->steps[nd->step].state == GC_STEP_RUNNING) {
		struct gc_runner_step_result *sr = &nd->res->steps[nd->step];

		sr->state = GC_STEP_FAILED;
		sr->elapsed_ms = ms_since(nd->step_start_ns);
		if (!sr->out.len && !sr->err.len)
			take_output(r, sr, &nd->cur);
		emit(r, nd, GC_RUN_STEP_DONE, true, NULL);
	}
	va_start(ap, fmt);
	gc_error_vset(&nd->res->err, code, fmt, ap);
	va_end(ap);
	finish(r, nd);
}

/* ---- connecting ----------------------------------------------------------------------------- */

static void begin_wait(struct run *r, struct node *nd, enum purpose p)
{
	uint64_t wait = p == P_REBOOT ? r->reboot_wait_ms : r->ssh_wait_ms;

	nd->purpose = p;
	nd->wait_start_ns = now_ns();
	nd->wait_deadline_ns = nd->wait_start_ns + wait * GC_NS_PER_MS;
	nd->wait_attempts = 0;
	gc_error_init(&nd->last_err);
}

static void sleep_until(struct run *r, struct node *nd, uint64_t wake)
{
	release_slot(r, nd);
	nd->st = N_SLEEP;
	nd->wake_ns = wake;
}

/* A connection attempt failed (or a rebooting node still shows its old boot id). */
static void connect_failed(struct run *r, struct node *nd, const struct gc_error *e)
{
	uint64_t now = now_ns(), waited;
	char ep[300];

	nd->wait_attempts++;
	nd->last_err = *e;
	release_slot(r, nd);
	if (e->code != GC_ETRANSIENT && e->code != GC_ETIMEOUT) {
		fail(r, nd, e->code, "%s", e->message);
		return;
	}
	if (now + r->retry_ms * GC_NS_PER_MS < nd->wait_deadline_ns) {
		emit(r, nd, GC_RUN_WAITING_SSH, nd->purpose != P_FIRST, e);
		sleep_until(r, nd, now + r->retry_ms * GC_NS_PER_MS);
		return;
	}
	waited = (now - nd->wait_start_ns + GC_NS_PER_S / 2) / GC_NS_PER_S;
	gc_ssh_endpoint(ep, sizeof(ep), nd->spec->host, nd->spec->port ? nd->spec->port : 22);
	if (nd->purpose == P_REBOOT)
		fail(r, nd, GC_ETIMEOUT,
		     "%s did not come back within %llu s of the reboot for step '%s' (%u attempts); "
		     "last error: %s",
		     ep, (unsigned long long)waited, r->o->steps[nd->step].name, nd->wait_attempts,
		     e->message);
	else
		fail(r, nd, GC_ETIMEOUT, "no SSH on %s after %llu s (%u attempts); last error: %s",
		     ep, (unsigned long long)waited, nd->wait_attempts, e->message);
}

static void start_connect(struct run *r, struct node *nd)
{
	struct gc_error e;

	gc_error_init(&e);
	if (!nd->started) {
		/* the wait for SSH starts with the first attempt, not while queued for a slot */
		nd->started = true;
		nd->start_ns = now_ns();
		begin_wait(r, nd, P_FIRST);
	}
	if (!nd->ssh) {
		struct gc_ssh_opts so = {
			.host = nd->spec->host,
			.port = nd->spec->port,
			.user = r->o->user,
			.key = r->o->key,
			.known_hosts = r->o->known_hosts,
			.trust_on_first_use = r->o->trust_on_first_use,
			.instance_id = nd->spec->instance_id,
			.connect_timeout_ms = r->o->connect_timeout_ms,
			.keepalive_s = r->o->keepalive_s,
			.log = r->o->log,
		};

		nd->ssh = gc_ssh_new(&so, &e);
		if (!nd->ssh) {
			fail(r, nd, e.code, "%s", e.message);
			return;
		}
	}
	nd->active = true;
	r->active++;
	if (r->active > r->rep->peak_sessions)
		r->rep->peak_sessions = r->active;
	nd->st = N_CONNECTING;
	if (gc_ssh_connect_start(nd->ssh, &e) < 0)
		connect_failed(r, nd, &e);
}

/* ---- commands --------------------------------------------------------------------------- */

static void exec(struct run *r, struct node *nd, enum nstate st, const char *what, const void *in,
		 size_t in_len, uint64_t timeout_ms)
{
	struct gc_ssh_cmd c = {
		.command = nd->cmd.data,
		.env = st == N_STEP ? nd->env : NULL,
		.n_env = st == N_STEP ? nd->n_env : 0,
		.stdin_data = in,
		.stdin_len = in_len,
		.timeout_ms = timeout_ms,
		.max_output = r->max_output,
		.what = what,
	};
	struct gc_error e;

	gc_error_init(&e);
	nd->st = st;
	if (gc_ssh_exec_start(nd->ssh, &c, &nd->cur, &e) < 0)
		fail(r, nd, e.code, "%s: %s", nd->spec->name, e.message);
}

static void start_probe(struct run *r, struct node *nd)
{
	gc_buf_reset(&nd->cmd);
	gc_buf_addstr(&nd->cmd, "cat /proc/sys/kernel/random/boot_id && { cat ");
	gc_sh_quote(&nd->cmd, r->rdir);
	gc_buf_addstr(&nd->cmd, "/" FILES_STAMP " 2>/dev/null || true; }");
	exec(r, nd, N_PROBE, "probe", NULL, 0, PROBE_TIMEOUT_MS);
}

static void start_upload(struct run *r, struct node *nd)
{
	const struct gc_runner_file *f = &r->o->files[nd->file];
	struct gc_buf *c = &nd->cmd;

	gc_buf_reset(c);
	gc_buf_addstr(c, "gc_d=");
	gc_sh_quote(c, r->rdir);
	gc_buf_addstr(c, "; gc_f=");
	gc_sh_quote(c, f->name);
	gc_buf_addstr(c,
		      "; mkdir -p \"$gc_d\" && cat >\"$gc_d/.$gc_f.tmp\" && "
		      "mv -f \"$gc_d/.$gc_f.tmp\" \"$gc_d/$gc_f\"");
	if (nd->file + 1 == r->o->n_files)
		gc_buf_addf(c, " && printf '%%s\\n' %s >\"$gc_d/" FILES_STAMP "\"", r->stamp);
	if (nd->file == 0)
		emit(r, nd, GC_RUN_UPLOADING, false, NULL);
	exec(r, nd, N_UPLOAD, "upload", f->data, f->len, UPLOAD_TIMEOUT_MS);
}

/*
 * The wrapper every step runs through (POSIX sh; the step's script is its stdin):
 * skip when the marker holds the hash, else store the script, take the step's lock
 * (an orphaned earlier run of the step, cut off by a dropped connection, finishes
 * first), drop the marker, run the script under `timeout`, and write the marker on
 * success. The lock's descriptor is not inherited by the script (9>&-), so a daemon
 * the step starts cannot hold it.
 */
/* What the step's marker holds: its hash, and for a per-boot step the boot id too. */
static void marker_value(const struct run *r, const struct node *nd, char *out, size_t size)
{
	if (r->o->steps[nd->step].per_boot)
		snprintf(out, size, "%s@%s", nd->hash[nd->step], nd->res->boot_id);
	else
		snprintf(out, size, "%s", nd->hash[nd->step]);
}

static void step_command(struct run *r, struct node *nd, struct gc_buf *c)
{
	const struct gc_runner_step *s = &r->o->steps[nd->step];
	uint64_t t = s->timeout_ms ? s->timeout_ms : r->step_timeout_ms;
	bool marker = !s->always && !s->undoes, force = nd->step >= r->force_from;
	char value[GC_SHA256_HEX_LEN + GC_RUNNER_BOOT_ID_MAX + 2];

	gc_buf_reset(c);
	gc_buf_addstr(c, "gc_d=");
	gc_sh_quote(c, r->rdir);
	gc_buf_addstr(c, "; gc_m=");
	gc_sh_quote(c, r->mdir);
	marker_value(r, nd, value, sizeof(value));
	gc_buf_addstr(c, "; gc_h=");
	gc_sh_quote(c, value);
	gc_buf_addf(c, "; gc_n=%s; gc_k=%d; gc_f=%d; gc_t=%llu; gc_u=%s\n", s->name, marker, force,
		    (unsigned long long)((t + 999) / 1000 + REMOTE_GRACE_S),
		    s->undoes ? s->undoes : "");
	gc_buf_addstr(
		c,
		/* an undo step: only where the step it undoes left its marker */
		"if [ -n \"$gc_u\" ] && [ ! -f \"$gc_m/$gc_u.done\" ]; then\n"
		"  cat >/dev/null; printf '" UNNEEDED_SENTINEL "' >&2; exit 0\n"
		"fi\n"
		"if [ \"$gc_k\" = 1 ] && [ \"$gc_f\" = 0 ] && "
		"[ \"$(cat \"$gc_m/$gc_n.done\" 2>/dev/null)\" = \"$gc_h\" ]; then\n"
		"  cat >/dev/null; echo \"" SKIP_SENTINEL "$gc_h\" >&2; exit 0\n"
		"fi\n"
		"if [ \"$(id -u)\" = 0 ]; then gc_s=; else gc_s='sudo -n'; fi\n"
		/* an always step (exec, run, logs) may run beside another of its name: its
		 * script is its own (mktemp), and it waits for no lock */
		"if mkdir -p \"$gc_d\" && [ \"$gc_k\" = 1 ]; then gc_p=\"$gc_d/$gc_n.sh\"; "
		"cat >\"$gc_d/.$gc_n.sh.tmp\" && mv -f \"$gc_d/.$gc_n.sh.tmp\" \"$gc_p\"\n"
		"else gc_p=$(mktemp \"$gc_d/$gc_n.XXXXXXXX\") && cat >\"$gc_p\"; fi ||\n"
		"{ echo \"gpucluster: cannot write $gc_d/$gc_n.sh\" >&2; exit 1; }\n"
		"if [ \"$gc_k\" = 1 ] && command -v flock >/dev/null 2>&1; then "
		"exec 9>\"$gc_d/.$gc_n.lock\"; flock 9; fi\n"
		"if [ \"$gc_k\" = 1 ]; then $gc_s rm -f \"$gc_m/$gc_n.done\" 2>/dev/null; fi\n"
		"if command -v timeout >/dev/null 2>&1; then\n"
		"  timeout -k 10 \"$gc_t\" bash \"$gc_p\" </dev/null 9>&-\n"
		"else\n"
		"  bash \"$gc_p\" </dev/null 9>&-\n"
		"fi\n"
		"gc_rc=$?\n"
		"[ \"$gc_k\" = 1 ] || rm -f \"$gc_p\"\n"
		"if [ \"$gc_rc\" = 0 ] && [ \"$gc_k\" = 1 ]; then\n"
		"  { $gc_s mkdir -p \"$gc_m\" && printf '%s\\n' \"$gc_h\" | "
		"$gc_s tee \"$gc_m/.$gc_n.tmp\" >/dev/null && "
		"$gc_s mv -f \"$gc_m/.$gc_n.tmp\" \"$gc_m/$gc_n.done\"; } 2>/dev/null ||\n"
		"    echo \"gpucluster: warning: cannot write the step marker $gc_m/$gc_n.done\" >&2\n"
		"fi\n"
		"if [ \"$gc_rc\" = 0 ] && [ -n \"$gc_u\" ]; then\n"
		"  $gc_s rm -f \"$gc_m/$gc_u.done\" 2>/dev/null ||\n"
		"    echo \"gpucluster: warning: cannot remove the step marker $gc_m/$gc_u.done\" >&2\n"
		"fi\n"
		"exit \"$gc_rc\"\n");
}

static void start_step(struct run *r, struct node *nd)
{
	struct gc_runner_step_result *sr;
	const struct gc_runner_step *s;

	if (nd->step >= r->o->n_steps) {
		finish(r, nd);
		return;
	}
	s = &r->o->steps[nd->step];
	sr = &nd->res->steps[nd->step];
	if (sr->state != GC_STEP_RUNNING) {
		sr->state = GC_STEP_RUNNING;
		nd->step_start_ns = now_ns();
		nd->reconnects = 0;
	}
	sr->attempts++;
	free(nd->env);
	nd->n_env = merge_env(r, nd, nd->step, &nd->env, NULL);
	step_command(r, nd, &nd->cmd);
	emit(r, nd, GC_RUN_STEP_START, true, NULL);
	exec(r, nd, N_STEP, s->name, s->script, script_len(s),
	     s->timeout_ms ? s->timeout_ms : r->step_timeout_ms);
}

static void start_reboot(struct run *r, struct node *nd)
{
	gc_buf_reset(&nd->cmd);
	gc_buf_addstr(&nd->cmd, "if [ \"$(id -u)\" = 0 ]; then reboot; else sudo -n reboot; fi");
	snprintf(nd->boot_before, sizeof(nd->boot_before), "%s", nd->res->boot_id);
	exec(r, nd, N_REBOOT_CMD, "reboot", NULL, 0, REBOOT_TIMEOUT_MS);
}

/* The reboot is under way (or the connection went with it): wait for the node. */
static void await_reboot(struct run *r, struct node *nd)
{
	begin_wait(r, nd, P_REBOOT);
	/* give it time to go down; a too-early login shows the old boot id and is retried */
	sleep_until(r, nd, now_ns() + r->retry_ms * GC_NS_PER_MS);
}

/* ---- completions ------------------------------------------------------------------------- */

static void on_connected(struct run *r, struct node *nd)
{
	nd->res->connects++;
	snprintf(nd->res->host_key, sizeof(nd->res->host_key), "%s",
		 gc_ssh_host_fingerprint(nd->ssh));
	emit(r, nd, GC_RUN_CONNECTED, nd->purpose != P_FIRST, NULL);
	start_probe(r, nd);
}

static void on_probe(struct run *r, struct node *nd)
{
	const char *out = nd->cur.out.data;
	size_t l1 = strcspn(out, "\n");
	char boot[GC_RUNNER_BOOT_ID_MAX], err_line[320];
	const char *stamp = out[l1] ? out + l1 + 1 : "";

	if (nd->cur.exit_status != 0 || l1 == 0 || l1 >= sizeof(boot)) {
		last_line(err_line, sizeof(err_line), &nd->cur.err);
		fail(r, nd, GC_EGENERIC, "%s: cannot read the boot id (exit %d): %s",
		     nd->spec->name, nd->cur.exit_status, err_line);
		return;
	}
	snprintf(boot, sizeof(boot), "%.*s", (int)l1, out);
	if (nd->purpose == P_REBOOT) {
		if (strcmp(boot, nd->boot_before) == 0) {
			struct gc_error e;

			/* logged in before the node went down: not rebooted yet */
			gc_error_set(&e, GC_ETRANSIENT,
				     "the node answers but has not rebooted yet "
				     "(same boot id %s)",
				     boot);
			connect_failed(r, nd, &e);
			return;
		}
		note(&nd->res->steps[nd->step], "rebooted (boot id %s -> %s), running '%s' again",
		     nd->boot_before, boot, r->o->steps[nd->step].name);
	}
	nd->purpose = P_FIRST;
	snprintf(nd->res->boot_id, sizeof(nd->res->boot_id), "%s", boot);
	if (r->o->n_files && strncmp(stamp, r->stamp, strlen(r->stamp)) != 0) {
		nd->file = 0;
		start_upload(r, nd);
		return;
	}
	start_step(r, nd);
}

static void on_upload(struct run *r, struct node *nd)
{
	char line[320];

	if (nd->cur.exit_status != 0) {
		last_line(line, sizeof(line), &nd->cur.err);
		fail(r, nd, GC_EGENERIC, "%s: cannot upload '%s' into '%s' (exit %d): %s",
		     nd->spec->name, r->o->files[nd->file].name, r->rdir, nd->cur.exit_status,
		     line);
		return;
	}
	if (++nd->file < r->o->n_files) {
		start_upload(r, nd);
		return;
	}
	nd->res->uploaded = true;
	start_step(r, nd);
}

static bool skipped(const struct run *r, const struct node *nd)
{
	const struct gc_ssh_result *c = &nd->cur;
	char value[GC_SHA256_HEX_LEN + GC_RUNNER_BOOT_ID_MAX + 2];
	size_t sl = strlen(SKIP_SENTINEL), hl;

	marker_value(r, nd, value, sizeof(value));
	hl = strlen(value);
	return c->exit_status == 0 && c->out.len == 0 && c->err.len == sl + hl + 1 &&
		memcmp(c->err.data, SKIP_SENTINEL, sl) == 0 &&
		memcmp(c->err.data + sl, value, hl) == 0 && c->err.data[sl + hl] == '\n';
}

/* An undo step on a node where the step it undoes never ran (the wrapper said so). */
static bool not_needed(const struct run *r, const struct node *nd)
{
	const struct gc_ssh_result *c = &nd->cur;
	size_t sl = strlen(UNNEEDED_SENTINEL);

	return r->o->steps[nd->step].undoes && c->exit_status == 0 && c->out.len == 0 &&
		c->err.len == sl && memcmp(c->err.data, UNNEEDED_SENTINEL, sl) == 0;
}

static void on_step(struct run *r, struct node *nd)
{
	struct gc_runner_step_result *sr = &nd->res->steps[nd->step];
	const char *name = r->o->steps[nd->step].name;
	int rc = nd->cur.exit_status;
	bool skip = skipped(r, nd), unneeded = not_needed(r, nd);
	char line[320];

	if (rc == GC_BOOTSTRAP_EXIT_REBOOT) {
		if (sr->reboots >= r->max_reboots) {
			take_output(r, sr, &nd->cur);
			fail(r, nd, GC_EGENERIC,
			     "%s: step '%s' asked for a reboot again after %u reboot%s",
			     nd->spec->name, name, sr->reboots, sr->reboots == 1 ? "" : "s");
			return;
		}
		sr->reboots++;
		keep_attempt(sr, &nd->cur);
		note(sr, "'%s' exited %d: rebooting %s", name, rc, nd->spec->name);
		emit(r, nd, GC_RUN_REBOOTING, true, NULL);
		start_reboot(r, nd);
		return;
	}
	take_output(r, sr, &nd->cur);
	sr->elapsed_ms = ms_since(nd->step_start_ns);
	if (rc != 0) {
		last_line(line, sizeof(line), &sr->err);
		if (sr->exit_signal[0])
			fail(r, nd, GC_EGENERIC, "%s: step '%s' was killed by signal %s%s%s",
			     nd->spec->name, name, sr->exit_signal, line[0] ? ": " : "", line);
		else
			fail(r, nd, GC_EGENERIC, "%s: step '%s' failed (exit %d)%s%s",
			     nd->spec->name, name, rc, line[0] ? ": " : "", line);
		return;
	}
	if (skip || unneeded) {
		sr->state = skip ? GC_STEP_SKIPPED : GC_STEP_NOT_NEEDED;
		gc_buf_reset(&sr->err);
	} else {
		sr->state = GC_STEP_OK;
	}
	emit(r, nd, GC_RUN_STEP_DONE, true, NULL);
	nd->step++;
	start_step(r, nd);
}

static void on_done(struct run *r, struct node *nd)
{
	switch (nd->st) {
	case N_CONNECTING: on_connected(r, nd); break;
	case N_PROBE: on_probe(r, nd); break;
	case N_UPLOAD: on_upload(r, nd); break;
	case N_STEP: on_step(r, nd); break;
	case N_REBOOT_CMD:
		if (nd->cur.exit_status != 0) {
			char line[320];

			last_line(line, sizeof(line), &nd->cur.err);
			fail(r, nd, GC_EGENERIC,
			     "%s: cannot reboot for step '%s': "
			     "'sudo -n reboot' exited %d%s%s",
			     nd->spec->name, r->o->steps[nd->step].name, nd->cur.exit_status,
			     line[0] ? ": " : "", line);
			break;
		}
		await_reboot(r, nd);
		break;
	default: break;
	}
}

static void on_error(struct run *r, struct node *nd, const struct gc_error *e)
{
	switch (nd->st) {
	case N_CONNECTING: connect_failed(r, nd, e); return;
	case N_REBOOT_CMD:
		/* the node went down under the command: that is the reboot */
		if (e->code == GC_ETRANSIENT || e->code == GC_ETIMEOUT) {
			await_reboot(r, nd);
			return;
		}
		break;
	case N_PROBE:
	case N_UPLOAD:
	case N_STEP:
		if (e->code != GC_ETRANSIENT)
			break;
		/* a streamed step is a job: running it again would start it twice (the first
		 * run goes on on the node, and the step's lock would only queue the second) */
		if (nd->st == N_STEP && r->o->steps[nd->step].stream) {
			fail(r, nd, e->code,
			     "%s: %s (not run again: the command may still be "
			     "running on the node)",
			     nd->spec->name, e->message);
			return;
		}
		if (nd->reconnects >= r->max_reconnects) {
			fail(r, nd, e->code, "%s: %s (gave up after %u reconnects)", nd->spec->name,
			     e->message, nd->reconnects);
			return;
		}
		nd->reconnects++;
		if (nd->st == N_STEP) {
			struct gc_runner_step_result *sr = &nd->res->steps[nd->step];

			keep_attempt(sr, &nd->cur);
			note(sr, "%s; reconnecting (%u of %u)", e->message, nd->reconnects,
			     r->max_reconnects);
		}
		emit(r, nd, GC_RUN_RECONNECTING, nd->st == N_STEP, e);
		release_slot(r, nd);
		begin_wait(r, nd, nd->purpose == P_REBOOT ? P_REBOOT : P_RECONNECT);
		push(r, nd, true);
		return;
	default: break;
	}
	fail(r, nd, e->code, "%s: %s", nd->spec->name, e->message);
}

/* Runs a node's connection as far as it goes without blocking. */
static void drive(struct run *r, struct node *nd, short revents)
{
	while (nd->active && nd->ssh) {
		struct gc_error e;
		int rc;

		gc_error_init(&e);
		rc = gc_ssh_advance(nd->ssh, revents, &e);
		revents = 0;
		stream_out(r, nd, rc != 1);
		if (rc == 1)
			return;
		if (rc == 0)
			on_done(r, nd);
		else
			on_error(r, nd, &e);
		if (!nd->active || !nd->ssh || !gc_ssh_busy(nd->ssh))
			return;
	}
}

/* ---- the loop --------------------------------------------------------------------------- */

/* Ends every node still running; failed: the node that stopped them (fail-fast), or NULL
 * for a cancel. */
static void cancel_all(struct run *r, const struct node *failed)
{
	for (size_t i = 0; i < r->n; i++) {
		struct node *nd = &r->nodes[i];

		if (nd->st == N_DONE)
			continue;
		if (nd->step < r->o->n_steps && nd->res->steps[nd->step].state == GC_STEP_RUNNING) {
			struct gc_runner_step_result *sr = &nd->res->steps[nd->step];

			sr->state = GC_STEP_CANCELLED;
			sr->elapsed_ms = ms_since(nd->step_start_ns);
			stream_out(r, nd, true);
			take_output(r, sr, &nd->cur);
		}
		if (failed) {
			gc_error_set(&nd->res->err, GC_ECANCELLED, "%s: stopped: %s failed",
				     nd->spec->name, failed->spec->name);
			r->rep->n_stopped++;
		} else {
			gc_error_set(&nd->res->err, GC_ECANCELLED, "%s: cancelled", nd->spec->name);
		}
		finish(r, nd);
	}
}

static int loop(struct run *r)
{
	struct pollfd *pfd = gc_xcalloc(r->n, sizeof(*pfd));
	size_t *who = gc_xcalloc(r->n, sizeof(*who));

	while (r->done < r->n) {
		uint64_t now = now_ns(), next = now + POLL_MAX_MS * GC_NS_PER_MS;
		size_t np = 0;
		int timeout, rc;

		if (r->o->cb.cancelled && r->o->cb.cancelled(r->o->cb.cancel_ctx)) {
			r->cancelled = true;
			cancel_all(r, NULL);
			break;
		}
		if (r->stop_at_ns && r->stop_at_ns <= now) {
			cancel_all(r, &r->nodes[r->rep->first_failed]);
			break;
		}
		for (size_t i = 0; i < r->n; i++) {
			struct node *nd = &r->nodes[i];

			if (nd->st == N_SLEEP && nd->wake_ns <= now)
				push(r, nd, true);
		}
		while (r->active < r->conc && r->qlen) {
			struct node *nd = pop(r);

			start_connect(r, nd);
			if (nd->active)
				drive(r, nd, 0);
		}
		for (size_t i = 0; i < r->n; i++) {
			struct node *nd = &r->nodes[i];
			uint64_t d;

			if (nd->st == N_SLEEP && nd->wake_ns < next)
				next = nd->wake_ns;
			if (!nd->active || !nd->ssh || gc_ssh_fd(nd->ssh) < 0)
				continue;
			d = gc_ssh_deadline_ns(nd->ssh);
			if (d && d < next)
				next = d;
			pfd[np].fd = gc_ssh_fd(nd->ssh);
			pfd[np].events = gc_ssh_events(nd->ssh);
			pfd[np].revents = 0;
			who[np++] = i;
		}
		if (r->done >= r->n)
			break;
		now = now_ns();
		timeout = next > now ? (int)((next - now + GC_NS_PER_MS - 1) / GC_NS_PER_MS) : 0;
		if (r->qlen && r->active < r->conc)
			timeout = 0;
		rc = poll(pfd, np, timeout);
		if (rc < 0 && errno != EINTR) {
			free(pfd);
			free(who);
			return -1;
		}
		now = now_ns();
		for (size_t j = 0; j < np; j++) {
			struct node *nd = &r->nodes[who[j]];
			uint64_t d;

			if (!nd->active || !nd->ssh)
				continue;
			d = gc_ssh_deadline_ns(nd->ssh);
			if (pfd[j].revents || (d && d <= now))
				drive(r, nd, rc > 0 ? pfd[j].revents : 0);
		}
	}
	free(pfd);
	free(who);
	return 0;
}

int gc_runner_run(const struct gc_runner_opts *o, const struct gc_runner_node *nodes,
		  size_t n_nodes, struct gc_runner_report *report, struct gc_error *err)
{
	struct run r = { 0 };
	uint64_t t0 = now_ns();
	const struct node *first_failed = NULL;
	int ret = -1;

	if (validate(o, nodes, n_nodes, err) < 0)
		return -1;
	r.o = o;
	r.conc = o->concurrency ? o->concurrency : GC_RUNNER_CONCURRENCY;
	r.ssh_wait_ms = o->ssh_wait_ms ? o->ssh_wait_ms : GC_RUNNER_SSH_WAIT_MS;
	r.retry_ms = o->ssh_retry_ms ? o->ssh_retry_ms : GC_RUNNER_SSH_RETRY_MS;
	r.reboot_wait_ms = o->reboot_wait_ms ? o->reboot_wait_ms : GC_RUNNER_REBOOT_WAIT_MS;
	r.step_timeout_ms = o->step_timeout_ms ? o->step_timeout_ms : GC_RUNNER_STEP_TIMEOUT_MS;
	r.max_reboots = o->max_reboots ? o->max_reboots : GC_RUNNER_MAX_REBOOTS;
	r.max_reconnects = o->max_reconnects ? o->max_reconnects : GC_RUNNER_MAX_RECONNECTS;
	r.max_output = o->max_output ? o->max_output : GC_SSH_OUTPUT_MAX;
	r.rdir = o->remote_dir ? o->remote_dir : GC_RUNNER_REMOTE_DIR;
	r.mdir = o->marker_dir ? o->marker_dir : GC_RUNNER_MARKER_DIR;
	r.force_from = o->force_from ? step_index(o, o->force_from) : o->n_steps;
	r.rep = report;
	r.n = n_nodes;
	files_stamp(o, r.stamp);

	gc_runner_report_release(report);
	report->first_failed = SIZE_MAX;
	report->nodes = gc_xcalloc(n_nodes ? n_nodes : 1, sizeof(*report->nodes));
	report->n_nodes = n_nodes;
	r.nodes = gc_xcalloc(n_nodes ? n_nodes : 1, sizeof(*r.nodes));
	r.queue = gc_xcalloc(n_nodes ? n_nodes : 1, sizeof(*r.queue));
	for (size_t i = 0; i < n_nodes; i++) {
		struct node *nd = &r.nodes[i];
		struct gc_runner_node_result *nr = &report->nodes[i];

		nr->steps = gc_xcalloc(o->n_steps ? o->n_steps : 1, sizeof(*nr->steps));
		nr->n_steps = o->n_steps;
		gc_error_init(&nr->err);
		for (size_t k = 0; k < o->n_steps; k++) {
			nr->steps[k].exit_status = -1;
			gc_buf_init(&nr->steps[k].out, r.max_output);
			gc_buf_init(&nr->steps[k].err, r.max_output);
			gc_buf_init(&nr->steps[k].history, 2 * r.max_output);
		}
		nd->idx = i;
		nd->spec = &nodes[i];
		nd->res = nr;
		gc_ssh_result_init(&nd->cur);
		nd->cur.out.max = nd->cur.err.max = r.max_output;
		gc_buf_init(&nd->cmd, (size_t)1 << 20);
		step_hashes(&r, nd);
		push(&r, nd, false);
	}

	if (loop(&r) < 0) {
		gc_error_set(err, GC_EIO, "runner: poll failed: %s", strerror(errno));
		for (size_t i = 0; i < n_nodes; i++)
			if (r.nodes[i].st != N_DONE) {
				gc_error_set(&r.nodes[i].res->err, GC_EIO, "poll failed");
				finish(&r, &r.nodes[i]);
			}
		goto out;
	}
	for (size_t i = 0; i < n_nodes && !first_failed; i++)
		if (report->nodes[i].err.code != GC_OK &&
		    (r.cancelled || report->nodes[i].err.code != GC_ECANCELLED))
			first_failed = &r.nodes[i];
	if (r.cancelled) {
		gc_error_set(err, GC_ECANCELLED,
			     "bootstrap cancelled (%zu of %zu nodes had finished)", report->n_ok,
			     n_nodes);
	} else if (first_failed) {
		gc_error_set(err, first_failed->res->err.code,
			     "bootstrap failed on %zu of %zu node%s; "
			     "first: %s",
			     report->n_failed, n_nodes, n_nodes == 1 ? "" : "s",
			     first_failed->res->err.message);
	} else {
		ret = 0;
	}
out:
	report->wall_ms = ms_since(t0);
	for (size_t i = 0; i < n_nodes; i++) {
		struct node *nd = &r.nodes[i];

		gc_ssh_free(nd->ssh);
		gc_ssh_result_release(&nd->cur);
		gc_buf_release(&nd->cmd);
		free(nd->hash);
		free(nd->env);
	}
	free(r.nodes);
	free(r.queue);
	return ret;
}
