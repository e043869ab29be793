/*
 * session.c: one bootstrap session: nodes, steps, keys, pins, the run and its reports
 * (see session.h).
 *
 * Everything a node prints is untrusted: the smoke document reaches the report only
 * through gc_smoke_report_parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/session.h"
#include "bootstrap/mesh.h"
#include "core/alloc.h"
#include "core/state.h"

void gc_session_init(struct gc_session *s)
{
	memset(s, 0, sizeof(*s));
	gc_instance_list_init(&s->found);
	gc_boot_init(&s->boot);
	gc_keypair_init(&s->key);
	gc_runner_report_init(&s->report);
}

void gc_session_release(struct gc_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->smoke && i < s->boot.n_nodes; i++)
		gc_smoke_report_release(&s->smoke[i]);
	free(s->smoke);
	for (size_t i = 0; s->console && i < s->boot.n_nodes; i++)
		free(s->console[i]);
	free(s->console);
	gc_runner_report_release(&s->report);
	if (s->kh_open)
		gc_known_hosts_release(&s->kh);
	free(s->kh_path);
	gc_keypair_release(&s->key);
	gc_boot_release(&s->boot);
	gc_instance_list_release(&s->found);
	gc_session_init(s);
}

/* The nodes: live's running instances (or a discovery's), those asked for. */
static int open_nodes(struct gc_session *s, const struct gc_instance_list *live,
		      const struct gc_session_opts *o, struct gc_error *err)
{
	struct gc_engine *e = s->engine;
	/* ssh needs no instance type facts: it would only cost API calls */
	struct gc_provider *facts = o->mode == GC_BOOT_LOGIN ? NULL : e->provider;

	s->stage = GC_SESSION_NODES;
	if (!live && gc_engine_discover(e, &s->found, err) < 0)
		return -1;
	s->live = live ? live : &s->found;
	if (gc_boot_add_nodes(&s->boot, e->spec, s->live, facts, e->log, err) < 0)
		return -1;
	if (o->ids)
		gc_boot_keep_ids(&s->boot, o->ids, o->n_ids);
	s->stage = GC_SESSION_SELECT;
	if (o->n_names && gc_boot_select(&s->boot, o->names, o->n_names, err) < 0)
		return -1;
	return 0;
}

/* The steps of the mode, the caller's inputs, and --from among them. */
static int open_steps(struct gc_session *s, const struct gc_session_opts *o, struct gc_error *err)
{
	s->stage = GC_SESSION_STEPS;
	if (gc_boot_set_steps(&s->boot, s->engine->spec, o->mode, o->command, o->timeout_ms,
			      o->verbose, err) < 0)
		return -1;
	if (o->cb.output && o->mode == GC_BOOT_EXEC)
		for (size_t k = 0; k < s->boot.n_steps; k++)
			s->boot.steps[k].stream = true;
	if (o->prepare && o->prepare(o->prepare_ctx, s, err) < 0)
		return -1;
	s->stage = GC_SESSION_FROM;
	if (o->from && gc_boot_step_index(&s->boot, o->from) == SIZE_MAX)
		return gc_error_set(err, GC_ENOTFOUND, "no step '%s'", o->from);
	return 0;
}

/* The key pair and the pins, every node's host key pinned before any connection. */
static int open_keys(struct gc_session *s, const struct gc_session_opts *o, struct gc_error *err)
{
	struct gc_engine *e = s->engine;
	struct gc_boot_pin_opts po = {
		.console_wait_ms = GC_BOOT_CONSOLE_WAIT_MS,
		.strict = o->strict,
		.cancelled = o->cb.cancelled,
		.cancel_ctx = o->cb.cancel_ctx,
		.log = e->log,
	};

	/* a node that may take ssh_wait to answer may take as long to show its key */
	if (o->ssh_wait_ms && o->ssh_wait_ms < po.console_wait_ms)
		po.console_wait_ms = o->ssh_wait_ms;
	s->stage = GC_SESSION_KEYS;
	if (gc_engine_keypair(e, &s->key, err) < 0)
		return -1;
	s->kh_path = gc_state_path(e->state_dir, GC_STATE_KNOWN_HOSTS);
	if (gc_known_hosts_open(&s->kh, s->kh_path, err) < 0)
		return -1;
	s->kh_open = true;
	s->stage = GC_SESSION_PIN;
	return gc_boot_pin(&s->boot, e->provider, &s->kh, &po, &s->tofu, err);
}

int gc_session_open(struct gc_session *s, struct gc_engine *e, const struct gc_instance_list *live,
		    const struct gc_session_opts *o, struct gc_error *err)
{
	s->engine = e;
	s->mode = o->mode;
	if (open_nodes(s, live, o, err) < 0)
		return -1;
	if (s->boot.n_nodes == 0 || o->mode == GC_BOOT_NODES)
		return 0;
	if (open_steps(s, o, err) < 0 || open_keys(s, o, err) < 0)
		return -1;
	return 0;
}

/* The runner's options for the session's nodes and keys. */
static void runner_opts(struct gc_session *s, const struct gc_session_opts *o,
			struct gc_runner_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->user = s->boot.user;
	ro->key = &s->key;
	ro->known_hosts = &s->kh;
	ro->trust_on_first_use = s->tofu;
	ro->log = s->engine->log;
	if (!o)
		return;
	ro->ssh_wait_ms = o->ssh_wait_ms;
	ro->fail_fast_ms = o->fail_fast_ms;
	ro->cb = o->cb;
	ro->cb.output = NULL;
}

static void parse_smoke(struct gc_session *s)
{
	size_t k = s->boot.smoke_step;

	s->smoke = gc_xcalloc(s->boot.n_nodes + 1, sizeof(*s->smoke));
	for (size_t i = 0; i < s->boot.n_nodes; i++) {
		const struct gc_runner_node_result *nr = &s->report.nodes[i];
		const struct gc_runner_step_result *sr = &nr->steps[k];
		char why[GC_ERROR_MSG_MAX + 32];

		gc_smoke_report_init(&s->smoke[i]);
		if (sr->state == GC_STEP_SKIPPED) {
			gc_smoke_report_earlier(&s->smoke[i]);
			continue;
		}
		if (sr->state == GC_STEP_OK || sr->state == GC_STEP_FAILED) {
			gc_smoke_report_parse(&s->smoke[i], sr->out.data, sr->out.len,
					      sr->exit_status);
			if (!s->smoke[i].ok)
				s->n_unhealthy++;
			continue;
		}
		snprintf(why, sizeof(why), "the smoke test did not run%s%s",
			 nr->err.code != GC_OK ? ": " : "",
			 nr->err.code != GC_OK ? nr->err.message : "");
		gc_smoke_report_not_run(&s->smoke[i], why);
	}
}

/*
 * A node that never answered SSH (or did not come back from a reboot): its console
 * output usually says why (a kernel panic, cloud-init stuck, sshd not starting), so the
 * report shows its end. Only where the cloud has console output; failures to get it are
 * not worth more than a log line.
 */
static void fetch_consoles(struct gc_session *s)
{
	struct gc_engine *e = s->engine;

	if (gc_provider_check_caps(e->provider, GC_CAP_CONSOLE_OUTPUT, NULL) < 0)
		return;
	for (size_t i = 0; i < s->boot.n_nodes; i++) {
		const struct gc_error *ne = &s->report.nodes[i].err;
		struct gc_error err;
		char *text = NULL;

		if (ne->code != GC_ETIMEOUT ||
		    (!strstr(ne->message, "no SSH on") &&
		     !strstr(ne->message, "did not come back")))
			continue;
		gc_error_init(&err);
		if (gc_provider_console_output(e->provider, s->boot.info[i].id, &text, &err) < 0) {
			gc_log_info(e->log, "no console output of %s: %s", s->boot.info[i].id,
				    err.message);
			continue;
		}
		if (!s->console)
			s->console = gc_xcalloc(s->boot.n_nodes + 1, sizeof(*s->console));
		s->console[i] = text;
	}
}

int gc_session_run(struct gc_session *s, const struct gc_session_opts *o, struct gc_error *err)
{
	struct gc_runner_opts ro;

	s->stage = GC_SESSION_RUN;
	runner_opts(s, o, &ro);
	gc_boot_runner_opts(&s->boot, &ro);
	ro.force_from = o->from;
	if (o->mode == GC_BOOT_EXEC)
		ro.cb.output = o->cb.output;
	gc_runner_run(&ro, s->boot.nodes, s->boot.n_nodes, &s->report, err);
	if (s->report.n_nodes != s->boot.n_nodes)
		return -1; /* the runner refused its options before running anything */
	s->ran = true;
	if (s->boot.smoke_step != SIZE_MAX)
		parse_smoke(s);
	if (err->code != GC_ECANCELLED)
		fetch_consoles(s);
	for (size_t i = 0; i < s->boot.n_nodes; i++)
		if (s->report.nodes[i].err.code != GC_OK || (s->smoke && !s->smoke[i].ok))
			s->n_failed++;
	if (err->code != GC_OK || s->n_failed)
		return -1;
	/* a bootstrapped cluster reaches itself: the mesh on every node, old ones too */
	if (o->mode == GC_BOOT_FULL && gc_mesh_run(s->engine, s->live, err) < 0)
		return -1;
	return 0;
}

int gc_session_run_steps(struct gc_session *s, const struct gc_runner_step *steps, size_t n_steps,
			 const struct gc_runner_var *vars, size_t n_vars,
			 const struct gc_session_opts *o, struct gc_runner_report *report,
			 struct gc_error *err)
{
	struct gc_runner_opts ro;

	runner_opts(s, o, &ro);
	ro.steps = steps;
	ro.n_steps = n_steps;
	ro.vars = vars;
	ro.n_vars = n_vars;
	return gc_runner_run(&ro, s->boot.nodes, s->boot.n_nodes, report, err);
}
