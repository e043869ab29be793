/*
 * test-runner.c: the parallel step runner (bootstrap/runner.c) against gpucluster-sim's
 * real sshd nodes.
 *
 * Markers (a second run skips everything, a changed input reruns from that step, an
 * unhashed variable reruns nothing, --from, a failed step is not skipped later); the
 * reboot flow with a new boot id (and its bound); a connection dropped mid-step,
 * reconnected and retried; the bounded wait for SSH on a node that never comes up, next
 * to an unpinned node, a node whose host key changed and a good one; step timeouts; 16 nodes (GC_TEST_NODES) in parallel
 * under a concurrency bound with their output kept apart; cancellation; the embedded
 * detect and driver scripts end to end, reboot included; a streamed step's output line by
 * line as it comes (whole lines only, more than the cap in all, nothing kept, not run
 * again after a dropped connection).
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <sys/resource.h>

#include "bootstrap/runner.h"
#include "bootstrap/scripts.h"
#include "bootstrap/ssh.h"
#include "core/str.h"
#include "node-fixture.h"

struct events {
	unsigned n[GC_RUN_NODE_DONE + 1];
	unsigned step_starts;
	double cancel_after; /* cancel this long after every node started its step; 0: never */
	double all_started_at;
	size_t nodes;
};

static void on_event(void *ctx, const struct gc_runner_event *ev)
{
	struct events *e = ctx;

	e->n[ev->phase]++;
	if (ev->phase == GC_RUN_STEP_START && ++e->step_starts == e->nodes)
		e->all_started_at = nfx_now();
	/* every event names its node; step events name their step and carry its result */
	assert_non_null(ev->node_name);
	if (ev->phase == GC_RUN_STEP_DONE)
		assert_non_null(ev->result);
	if (ev->phase == GC_RUN_STEP_START || ev->phase == GC_RUN_STEP_DONE)
		assert_non_null(ev->step_name);
}

static bool on_cancel(void *ctx)
{
	struct events *e = ctx;

	return e->cancel_after > 0 && e->all_started_at > 0 &&
		nfx_now() - e->all_started_at >= e->cancel_after;
}

static void opts_init(struct gc_runner_opts *o, struct nfx *f, struct events *ev)
{
	memset(o, 0, sizeof(*o));
	o->user = "ubuntu";
	o->key = &f->key;
	o->known_hosts = &f->kh;
	o->ssh_wait_ms = 20000;
	o->ssh_retry_ms = 200;
	o->reboot_wait_ms = 20000;
	o->connect_timeout_ms = 8000;
	o->cb.progress = on_event;
	o->cb.progress_ctx = ev;
	o->cb.cancelled = on_cancel;
	o->cb.cancel_ctx = ev;
}

static struct gc_runner_node *nodes_for(struct nfx *f, size_t first, size_t n)
{
	struct gc_runner_node *v = gc_xcalloc(n, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		struct sim_instance *inst = f->inst[first + i];

		v[i].name = inst->id;
		v[i].host = inst->public_ip;
		v[i].port = (unsigned)inst->ssh_port;
		v[i].instance_id = inst->id;
	}
	return v;
}

static struct sim_instance *pinned_node(struct nfx *f, const char *faults)
{
	struct sim_instance *inst = nfx_node(f, faults, true);

	assert_int_equal(nfx_pin(f, inst), 0);
	return inst;
}

/* Runs cmd on a node with a fresh connection; its stdout in out. */
static void node_run(struct nfx *f, const struct sim_instance *inst, const char *cmd,
		     struct gc_ssh_result *out)
{
	struct gc_ssh_opts o = { .host = inst->public_ip,
				 .port = (unsigned)inst->ssh_port,
				 .user = "ubuntu",
				 .key = &f->key,
				 .known_hosts = &f->kh };
	struct gc_ssh_cmd c = { .command = cmd };
	struct gc_error err;
	struct gc_ssh *s;

	gc_error_init(&err);
	s = gc_ssh_new(&o, &err);
	if (gc_ssh_connect(s, &err) < 0 || gc_ssh_exec(s, &c, out, &err) < 0)
		fail_msg("%s: %s", cmd, err.message);
	gc_ssh_free(s);
}

static void print_failure(const struct gc_runner_report *rep)
{
	for (size_t i = 0; i < rep->n_nodes; i++) {
		const struct gc_runner_node_result *nr = &rep->nodes[i];

		if (nr->err.code == GC_OK)
			continue;
		print_message("node %zu: %s\n", i, nr->err.message);
		for (size_t k = 0; k < nr->n_steps; k++)
			if (nr->steps[k].out.len || nr->steps[k].err.len ||
			    nr->steps[k].history.len)
				print_message("  step %zu %s: out=%s err=%s history=%s\n", k,
					      gc_step_state_name(nr->steps[k].state),
					      nr->steps[k].out.data, nr->steps[k].err.data,
					      nr->steps[k].history.data);
	}
}

#define RUN_OK(o, nodes, n, rep)                                  \
	do {                                                      \
		struct gc_error err_;                             \
		gc_error_init(&err_);                             \
		if (gc_runner_run(o, nodes, n, rep, &err_) < 0) { \
			print_failure(rep);                       \
			fail_msg("runner: %s", err_.message);     \
		}                                                 \
	} while (0)

static void expect_states(const struct gc_runner_node_result *nr, const char *want)
{
	char got[64] = "";

	for (size_t k = 0; k < nr->n_steps && k + 1 < sizeof(got); k++) {
		switch (nr->steps[k].state) {
		case GC_STEP_OK: got[k] = 'o'; break;
		case GC_STEP_SKIPPED: got[k] = 's'; break;
		case GC_STEP_FAILED: got[k] = 'F'; break;
		case GC_STEP_PENDING: got[k] = '-'; break;
		case GC_STEP_CANCELLED: got[k] = 'C'; break;
		case GC_STEP_RUNNING: got[k] = 'R'; break;
		case GC_STEP_NOT_NEEDED: got[k] = 'n'; break;
		}
	}
	if (strcmp(got, want) != 0)
		for (size_t k = 0; k < nr->n_steps; k++)
			print_message("  step %zu %s: exit %d out=[%s] err=[%s] history=[%s]\n", k,
				      gc_step_state_name(nr->steps[k].state),
				      nr->steps[k].exit_status, nr->steps[k].out.data,
				      nr->steps[k].err.data, nr->steps[k].history.data);
	assert_string_equal(got, want);
}

static void test_markers(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 1 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_ssh_result res;
	struct gc_error err;
	char *marker;
	static const char lib[] = "LIB=from-lib\n";
	struct gc_runner_file files[] = { { "lib.sh", lib, sizeof(lib) - 1 } };
	struct gc_runner_step steps[] = {
		{ .name = "a", .script = "echo \"a ran $X\"; echo 'a err' >&2; echo a >> ~/a.log" },
		{ .name = "b",
		  .script =
			  ". \"$(dirname \"${BASH_SOURCE[0]}\")/lib.sh\"; echo \"b ran $Y $LIB\"; "
			  "wc -l < ~/a.log" },
		{ .name = "c", .script = "echo c ran" },
		{ .name = "report", .script = "echo report", .always = true },
	};
	struct gc_runner_var vars[] = {
		{ .name = "X", .value = "x1" },
		{ .step = "b", .name = "Y", .value = "y1" },
		{ .name = "GC_VERBOSE", .value = "0", .unhashed = true },
	};

	(void)state;
	NFX_SKIP_IF_NONE(f);
	pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 1);

	opts_init(&o, f, &ev);
	o.files = files;
	o.n_files = 1;
	o.steps = steps;
	o.n_steps = 4;
	o.vars = vars;
	o.n_vars = 3;
	gc_runner_report_init(&rep);
	gc_ssh_result_init(&res);
	gc_error_init(&err);

	/* first run: everything runs, files uploaded, outputs per step */
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "oooo");
	assert_true(rep.nodes[0].uploaded);
	assert_string_equal(rep.nodes[0].steps[0].out.data, "a ran x1\n");
	assert_string_equal(rep.nodes[0].steps[0].err.data, "a err\n");
	assert_string_equal(rep.nodes[0].steps[1].out.data, "b ran y1 from-lib\n1\n");
	assert_string_equal(rep.nodes[0].steps[3].out.data, "report\n");
	assert_int_equal(rep.nodes[0].steps[0].exit_status, 0);
	assert_int_equal(strlen(rep.nodes[0].boot_id), 36);
	/* the marker on the node holds the step's hash */
	marker = gc_xasprintf("cat " GC_RUNNER_MARKER_DIR "/a.done " GC_RUNNER_MARKER_DIR
			      "/c.done; ls " GC_RUNNER_MARKER_DIR);
	node_run(f, f->inst[0], marker, &res);
	free(marker);
	marker = gc_xasprintf("%s\n%s\na.done\nb.done\nc.done\n", rep.nodes[0].steps[0].hash,
			      rep.nodes[0].steps[2].hash);
	assert_string_equal(res.out.data, marker);
	free(marker);
	char hash_b[GC_SHA256_HEX_LEN], hash_c[GC_SHA256_HEX_LEN];
	snprintf(hash_b, sizeof(hash_b), "%s", rep.nodes[0].steps[1].hash);
	snprintf(hash_c, sizeof(hash_c), "%s", rep.nodes[0].steps[2].hash);

	/* second run: skipped, nothing uploaded; the always step runs */
	double t0 = nfx_now();
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "ssso");
	assert_false(rep.nodes[0].uploaded);
	assert_string_equal(rep.nodes[0].steps[0].out.data, "");
	assert_string_equal(rep.nodes[0].steps[0].err.data, "");
	print_message("second run, all skipped: %.2f s\n", nfx_now() - t0);
	node_run(f, f->inst[0], "wc -l < ~/a.log", &res);
	assert_string_equal(res.out.data, "1\n");

	/* an input of b changed: a is skipped, b and everything after it rerun */
	vars[1].value = "y2";
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "sooo");
	assert_string_equal(rep.nodes[0].steps[1].out.data, "b ran y2 from-lib\n1\n");
	assert_string_not_equal(rep.nodes[0].steps[1].hash, hash_b);
	assert_string_not_equal(rep.nodes[0].steps[2].hash, hash_c);
	/* an unhashed variable changes nothing */
	vars[2].value = "1";
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "ssso");
	/* --from c */
	o.force_from = "c";
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "ssoo");
	o.force_from = NULL;
	/* a changed file reruns everything */
	files[0].data = "LIB=changed\n";
	files[0].len = strlen("LIB=changed\n");
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "oooo");
	assert_true(rep.nodes[0].uploaded);
	assert_string_equal(rep.nodes[0].steps[1].out.data, "b ran y2 changed\n2\n");

	/* b fails: c is not run, the node says why */
	steps[1].script = "echo partial; echo 'b: error: broken' >&2; exit 3";
	assert_int_equal(gc_runner_run(&o, nodes, 1, &rep, &err), -1);
	expect_states(&rep.nodes[0], "sF--");
	assert_int_equal(rep.nodes[0].steps[1].exit_status, 3);
	assert_string_equal(rep.nodes[0].steps[1].out.data, "partial\n");
	assert_non_null(
		strstr(rep.nodes[0].err.message, "step 'b' failed (exit 3): b: error: broken"));
	assert_non_null(strstr(err.message, "bootstrap failed on 1 of 1 node; first: "));
	assert_int_equal(rep.n_failed, 1);
	/* b back as it was: its marker was dropped when the failed run started, so it runs
	 * again; c's inputs are what they were, so c stays done */
	steps[1].script = ". \"$(dirname \"${BASH_SOURCE[0]}\")/lib.sh\"; echo \"b ran $Y $LIB\"; "
			  "wc -l < ~/a.log";
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "soso");
	assert_true(ev.n[GC_RUN_STEP_DONE] >= 28);
	assert_int_equal(ev.n[GC_RUN_NODE_DONE], 8);

	gc_runner_report_release(&rep);
	gc_ssh_result_release(&res);
	free(nodes);
	nfx_free(f);
}

/* An undo step runs only where the step it undoes left its marker, removes that marker,
 * and leaves the chain of hashes as if it were not there. */
static void test_undo(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 1 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_ssh_result res;
	struct gc_runner_step steps[] = {
		{ .name = "a", .script = "echo a" },
		{ .name = "b", .script = "touch ~/b.installed; echo b" },
		{ .name = "c", .script = "echo c" },
	};
	struct gc_runner_step undo = { .name = "b-undo",
				       .script = "rm ~/b.installed; echo \"undone $UNDO\"",
				       .undoes = "b" };
	struct gc_runner_var var = { .step = "b-undo", .name = "UNDO", .value = "1" };
	struct gc_error err;
	char hash_a[GC_SHA256_HEX_LEN], hash_c[GC_SHA256_HEX_LEN];

	(void)state;
	NFX_SKIP_IF_NONE(f);
	pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 1);

	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 3;
	gc_runner_report_init(&rep);
	gc_ssh_result_init(&res);
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "ooo");
	snprintf(hash_c, sizeof(hash_c), "%s", rep.nodes[0].steps[2].hash);

	/* the spec no longer wants b: b-undo runs in its place (b's marker is there) */
	steps[1] = undo;
	o.vars = &var;
	o.n_vars = 1;
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "soo");
	assert_string_equal(rep.nodes[0].steps[1].out.data, "undone 1\n");
	snprintf(hash_a, sizeof(hash_a), "%s", rep.nodes[0].steps[0].hash);
	assert_string_equal(rep.nodes[0].steps[1].hash, hash_a); /* the chain goes through */
	assert_string_not_equal(rep.nodes[0].steps[2].hash, hash_c);
	node_run(f, f->inst[0], "ls " GC_RUNNER_MARKER_DIR "; ls ~/b.installed 2>&1 || true", &res);
	assert_non_null(strstr(res.out.data, "a.done\nc.done\n"));
	assert_null(strstr(res.out.data, "b.done"));
	assert_null(strstr(res.out.data, "b-undo"));

	/* nothing left to undo: not needed, no output, the others skipped */
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "sns");
	assert_string_equal(rep.nodes[0].steps[1].out.data, "");
	assert_string_equal(rep.nodes[0].steps[1].err.data, "");

	/* wanted again: b runs (no marker), and c after it */
	steps[1] = (struct gc_runner_step){ .name = "b", .script = "touch ~/b.installed; echo b" };
	o.n_vars = 0;
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "soo");
	assert_string_equal(rep.nodes[0].steps[2].hash, hash_c);

	/* an undo step that fails keeps the marker: the next run tries again */
	steps[1] = undo;
	steps[1].script = "echo 'b-undo: error: stuck' >&2; exit 2";
	o.n_vars = 1;
	gc_error_init(&err);
	assert_int_equal(gc_runner_run(&o, nodes, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "step 'b-undo' failed (exit 2): b-undo: error: stuck"));
	expect_states(&rep.nodes[0], "sF-");
	steps[1] = undo;
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "soo");

	gc_runner_report_release(&rep);
	gc_ssh_result_release(&res);
	free(nodes);
	nfx_free(f);
}

static void test_reboot(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 2 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_error err;
	struct gc_runner_step steps[] = {
		{ .name = "boot", .script = "cat /proc/sys/kernel/random/boot_id" },
		{ .name = "driver",
		  .script =
			  "if [ \"$MODE\" = loop ] || [ ! -f ~/rebooted ]; then touch ~/rebooted; "
			  "echo 'reboot needed: test'; exit 100; fi; "
			  "echo \"after $(cat /proc/sys/kernel/random/boot_id)\"" },
		{ .name = "next", .script = "echo next" },
	};
	struct gc_runner_var loop = { .name = "MODE", .value = "loop" };

	(void)state;
	NFX_SKIP_IF_NONE(f);
	pinned_node(f, NULL);
	pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 2);

	/* node 1's step asks for a reboot every time */
	nodes[1].vars = &loop;
	nodes[1].n_vars = 1;
	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 3;
	o.max_reboots = 1;
	gc_runner_report_init(&rep);
	gc_error_init(&err);
	double t0 = nfx_now();

	assert_int_equal(gc_runner_run(&o, nodes, 2, &rep, &err), -1);
	print_message("two nodes rebooting: %.2f s\n", nfx_now() - t0);
	if (rep.nodes[0].err.code != GC_OK)
		print_failure(&rep);
	/* node 0: rebooted once, the step ran again on the new boot, and the next one ran */
	const struct gc_runner_node_result *nr = &rep.nodes[0];
	char before[64], want[160];

	expect_states(nr, "ooo");
	snprintf(before, sizeof(before), "%.36s", nr->steps[0].out.data);
	assert_int_equal(nr->steps[1].reboots, 1);
	assert_int_equal(nr->steps[1].attempts, 2);
	assert_string_not_equal(nr->boot_id, before);
	snprintf(want, sizeof(want), "after %s\n", nr->boot_id);
	assert_string_equal(nr->steps[1].out.data, want);
	assert_non_null(strstr(nr->steps[1].history.data, "reboot needed: test"));
	snprintf(want, sizeof(want), "rebooted (boot id %s -> %s)", before, nr->boot_id);
	assert_non_null(strstr(nr->steps[1].history.data, want));
	assert_int_equal(nr->connects, 2);
	/* the same pinned key both times: the pin did not change */
	assert_string_equal(nr->host_key, f->inst[0]->host_key_fpr);
	assert_int_equal(f->kh.n, 2);
	/* node 1: one reboot allowed, then the second request fails the node */
	expect_states(&rep.nodes[1], "oF-");
	assert_int_equal(rep.nodes[1].steps[1].reboots, 1);
	assert_int_equal(rep.nodes[1].steps[1].exit_status, 100);
	assert_non_null(strstr(rep.nodes[1].err.message,
			       "step 'driver' asked for a reboot again after 1 reboot"));
	assert_int_equal(ev.n[GC_RUN_REBOOTING], 2);

	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

/* A per-boot step (smoke in a full bootstrap): skipped while the boot and everything
 * before it are unchanged, run again after a reboot, and forced by force_from. */
static void test_per_boot(void **state)
{
	struct nfx *f = nfx_new(500, 0);
	struct events ev = { .nodes = 1 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_ssh_result res;
	struct gc_runner_step steps[] = {
		{ .name = "setup", .script = "echo setup" },
		{ .name = "check", .script = "echo checked", .per_boot = true },
	};

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *inst = pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 1);

	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 2;
	gc_runner_report_init(&rep);
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "oo");
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "ss");

	/* forced: runs although it passed this boot */
	o.force_from = "check";
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "so");
	o.force_from = NULL;

	/* a reboot behind the runner's back (the session drops with it, so its outcome is
	 * not checked): the boot id changed, so the step runs again */
	{
		struct gc_ssh_opts so = { .host = inst->public_ip,
					  .port = (unsigned)inst->ssh_port,
					  .user = "ubuntu",
					  .key = &f->key,
					  .known_hosts = &f->kh };
		struct gc_ssh_cmd c = { .command = "sudo -n reboot", .timeout_ms = 5000 };
		struct gc_error err;
		struct gc_ssh *s;

		gc_error_init(&err);
		gc_ssh_result_init(&res);
		s = gc_ssh_new(&so, &err);
		assert_non_null(s);
		assert_int_equal(gc_ssh_connect(s, &err), 0);
		(void)gc_ssh_exec(s, &c, &res, &err);
		gc_ssh_free(s);
		gc_ssh_result_release(&res);
	}
	nfx_sleep_ms(200);
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "so");
	assert_string_equal(rep.nodes[0].steps[1].out.data, "checked\n");
	RUN_OK(&o, nodes, 1, &rep);
	expect_states(&rep.nodes[0], "ss");

	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

static void test_drop(void **state)
{
	struct nfx *f = nfx_new(1000, 1500);
	struct events ev = { .nodes = 1 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_runner_step steps[] = {
		{ .name = "slow", .script = "echo start; sleep 2.5; echo done" },
	};

	(void)state;
	NFX_SKIP_IF_NONE(f);
	/* the node cuts the first session 1.5 s in, in the middle of the step */
	pinned_node(f, "drop");
	struct gc_runner_node *nodes = nodes_for(f, 0, 1);

	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 1;
	gc_runner_report_init(&rep);
	RUN_OK(&o, nodes, 1, &rep);
	const struct gc_runner_step_result *sr = &rep.nodes[0].steps[0];

	expect_states(&rep.nodes[0], "o");
	assert_int_equal(sr->attempts, 2);
	assert_int_equal(rep.nodes[0].connects, 2);
	assert_string_equal(sr->out.data, "start\ndone\n");
	assert_non_null(strstr(sr->history.data, "[attempt 1, standard output]\nstart\n"));
	assert_non_null(strstr(sr->history.data, "connection lost during 'slow' on 127.77."));
	assert_non_null(strstr(sr->history.data, "reconnecting (1 of 3)"));
	assert_int_equal(ev.n[GC_RUN_RECONNECTING], 1);
	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

static void test_wait_for_ssh(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 4 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_error err;
	struct gc_runner_step steps[] = { { .name = "hello", .script = "echo hello" } };
	char *want;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	struct sim_instance *good = pinned_node(f, NULL);
	struct sim_instance *never = pinned_node(f, "no-ssh");
	struct sim_instance *unpinned = nfx_node(f, NULL, true);
	struct sim_instance *changed = nfx_node(f, NULL, true);
	struct gc_runner_node *nodes = nodes_for(f, 0, 4);

	/* the fourth node's address pinned with another node's key: refused at once */
	gc_error_init(&err);
	assert_int_equal(gc_known_hosts_pin_console(&f->kh, changed->public_ip, 2222, changed->id,
						    good->console, NULL, &err),
			 0);

	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 1;
	/* long enough that "refused at once" below is told apart from a wait even when a
	 * loaded CI machine takes a second to start a node's sshd */
	o.ssh_wait_ms = 5000;
	o.ssh_retry_ms = 250;
	gc_runner_report_init(&rep);
	gc_error_init(&err);
	double t0 = nfx_now();

	assert_int_equal(gc_runner_run(&o, nodes, 4, &rep, &err), -1);
	double took = nfx_now() - t0;

	/* the good node is unaffected */
	expect_states(&rep.nodes[0], "o");
	assert_string_equal(rep.nodes[0].steps[0].out.data, "hello\n");
	assert_string_equal(rep.nodes[0].host_key, good->host_key_fpr);
	/* the node that never listens: a bounded wait, then a clear error */
	assert_int_equal(rep.nodes[1].err.code, GC_ETIMEOUT);
	want = gc_xasprintf("no SSH on %s:2222 after 5 s (", never->public_ip);
	assert_non_null(strstr(rep.nodes[1].err.message, want));
	free(want);
	want = gc_xasprintf("attempts); last error: cannot connect to %s:2222: connection refused",
			    never->public_ip);
	assert_non_null(strstr(rep.nodes[1].err.message, want));
	free(want);
	assert_true(rep.nodes[1].elapsed_ms >= 4700 && rep.nodes[1].elapsed_ms < 9000);
	assert_true(took < 12);
	assert_true(ev.n[GC_RUN_WAITING_SSH] >= 5);
	expect_states(&rep.nodes[1], "-");
	/* the unpinned node with trust on first use off: refused at once, not waited on */
	assert_int_equal(rep.nodes[2].err.code, GC_EAUTH);
	assert_non_null(strstr(rep.nodes[2].err.message, "is not pinned"));
	assert_non_null(strstr(rep.nodes[2].err.message, unpinned->host_key_fpr));
	assert_true(rep.nodes[2].elapsed_ms < 3500);
	/* the changed host key: refused at once, naming both keys */
	assert_int_equal(rep.nodes[3].err.code, GC_EAUTH);
	want = gc_xasprintf("host key for %s:2222 changed (expected %s, got %s)",
			    changed->public_ip, good->host_key_fpr, changed->host_key_fpr);
	assert_non_null(strstr(rep.nodes[3].err.message, want));
	free(want);
	assert_true(rep.nodes[3].elapsed_ms < 3500);
	assert_int_equal(rep.n_ok, 1);
	assert_int_equal(rep.n_failed, 3);
	assert_non_null(strstr(err.message, "bootstrap failed on 3 of 4 nodes"));

	/* with trust on first use, it is pinned (with its instance id) and runs */
	o.trust_on_first_use = true;
	RUN_OK(&o, &nodes[2], 1, &rep);
	expect_states(&rep.nodes[0], "o");
	assert_int_equal(f->kh.n, 4);
	assert_string_equal(f->kh.v[3].instance, unpinned->id);

	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

static void test_timeout_and_cancel(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 3 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_error err;
	struct gc_runner_step steps[] = {
		{ .name = "long", .script = "echo going; sleep 30; echo never" },
		{ .name = "after", .script = "echo after" },
	};

	(void)state;
	NFX_SKIP_IF_NONE(f);
	for (int i = 0; i < 3; i++)
		pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 3);

	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 2;
	gc_runner_report_init(&rep);
	gc_error_init(&err);

	/* cancelled 1.5 s after every node started the long step: time for its first line to
	 * arrive even on a loaded machine */
	ev.cancel_after = 1.5;
	double t0 = nfx_now();

	assert_int_equal(gc_runner_run(&o, nodes, 3, &rep, &err), -1);
	assert_int_equal(err.code, GC_ECANCELLED);
	assert_true(nfx_now() - t0 < 12);
	assert_true(nfx_now() - ev.all_started_at < 3);
	for (int i = 0; i < 3; i++) {
		expect_states(&rep.nodes[i], "C-");
		assert_int_equal(rep.nodes[i].err.code, GC_ECANCELLED);
		assert_string_equal(rep.nodes[i].steps[0].out.data, "going\n");
	}

	/* a step timeout: the node fails with GC_ETIMEOUT, later steps do not run */
	ev = (struct events){ .nodes = 1 };
	steps[0].timeout_ms = 700;
	t0 = nfx_now();
	assert_int_equal(gc_runner_run(&o, nodes, 1, &rep, &err), -1);
	assert_true(nfx_now() - t0 < 5);
	expect_states(&rep.nodes[0], "F-");
	assert_int_equal(rep.nodes[0].err.code, GC_ETIMEOUT);
	assert_non_null(strstr(rep.nodes[0].err.message, "'long' timed out after 1 s"));
	assert_string_equal(rep.nodes[0].steps[0].out.data, "going\n");

	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

/* Fail-fast: node 1 fails at once; after the grace the others, still sleeping, are stopped
 * (GC_ECANCELLED, naming node 1), and the report says node 1 stopped them. */
static void test_fail_fast(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 3 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_error err;
	struct gc_runner_step step = { .name = "job",
				       .script = "if [ \"$R\" = 1 ]; then exit 3; fi; sleep 30",
				       .always = true };
	struct gc_runner_var vars[3] = { { .name = "R", .value = "0" },
					 { .name = "R", .value = "1" },
					 { .name = "R", .value = "2" } };

	(void)state;
	NFX_SKIP_IF_NONE(f);
	for (int i = 0; i < 3; i++)
		pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 3);

	for (int i = 0; i < 3; i++) {
		nodes[i].vars = &vars[i];
		nodes[i].n_vars = 1;
	}
	opts_init(&o, f, &ev);
	o.steps = &step;
	o.n_steps = 1;
	o.fail_fast_ms = 300;
	gc_runner_report_init(&rep);
	gc_error_init(&err);
	double t0 = nfx_now();

	assert_int_equal(gc_runner_run(&o, nodes, 3, &rep, &err), -1);
	assert_true(nfx_now() - t0 < 12);
	assert_int_equal(err.code, GC_EGENERIC);
	assert_int_equal(rep.first_failed, 1);
	assert_int_equal(rep.n_stopped, 2);
	assert_int_equal(rep.n_failed, 3);
	expect_states(&rep.nodes[1], "F");
	assert_int_equal(rep.nodes[1].steps[0].exit_status, 3);
	for (int i = 0; i < 3; i += 2) {
		char want[128];

		snprintf(want, sizeof(want), "%s: stopped: %s failed", nodes[i].name,
			 nodes[1].name);
		/* cancelled in its step, or still connecting when node 1 failed */
		assert_true(rep.nodes[i].steps[0].state == GC_STEP_CANCELLED ||
			    rep.nodes[i].steps[0].state == GC_STEP_PENDING);
		assert_int_equal(rep.nodes[i].err.code, GC_ECANCELLED);
		assert_string_equal(rep.nodes[i].err.message, want);
	}

	/* off (0): every node runs to its end, none is stopped */
	step.script = "exit $R";
	o.fail_fast_ms = 0;
	ev = (struct events){ .nodes = 3 };
	assert_int_equal(gc_runner_run(&o, nodes, 3, &rep, &err), -1);
	assert_int_equal(rep.first_failed, SIZE_MAX);
	assert_int_equal(rep.n_stopped, 0);
	assert_int_equal(rep.nodes[2].steps[0].exit_status, 2);

	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

/* ---- streamed output -------------------------------------------------------------------- */

struct lines {
	struct gc_buf text[2][2]; /* [node][stderr]: every line, '\n'-ended, partial ones '|' */
	unsigned n[2][2];
	double first_at[2]; /* when each node's first stdout line arrived */
	bool bad;	    /* a line arrived for a node or step out of range */
};

static void on_line(void *ctx, const struct gc_runner_line *l)
{
	struct lines *ls = ctx;

	if (l->node > 1 || strcmp(l->step_name, "job") != 0 || l->step != 0 ||
	    l->text[l->len] != '\0' || memchr(l->text, '\n', l->len)) {
		ls->bad = true;
		return;
	}
	if (!l->is_stderr && !ls->n[l->node][0])
		ls->first_at[l->node] = nfx_now();
	ls->n[l->node][l->is_stderr]++;
	gc_buf_add(&ls->text[l->node][l->is_stderr], l->text, l->len);
	gc_buf_addch(&ls->text[l->node][l->is_stderr], l->partial ? '|' : '\n');
}

static void lines_reset(struct lines *ls)
{
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			gc_buf_release(&ls->text[i][k]);
	memset(ls, 0, sizeof(*ls));
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			gc_buf_init(&ls->text[i][k], 16 << 20);
}

/* 88 characters: with the id and the number, lines of about 110 bytes */
#define DOTS                                           \
	"............................................" \
	"............................................"

static void test_stream(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 2 };
	struct lines ls = { 0 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_buf want = GC_BUF_INIT(16 << 20);
	struct gc_runner_var vars[2];
	/* a line written in two halves a moment apart arrives whole; the last one has no
	 * newline; the first line comes long before the step ends */
	struct gc_runner_step steps[] = {
		{ .name = "job",
		  .script = "echo \"$NODE one\"; printf 'half'; sleep 0.3; printf ' line\\n'; "
			    "echo \"$NODE err\" >&2; sleep 1.5; echo \"$NODE late\"; "
			    "printf 'no newline'",
		  .always = true,
		  .stream = true },
	};

	(void)state;
	NFX_SKIP_IF_NONE(f);
	for (int i = 0; i < 2; i++)
		pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 2);

	for (size_t i = 0; i < 2; i++) {
		vars[i] = (struct gc_runner_var){ .name = "NODE", .value = nodes[i].name };
		nodes[i].vars = &vars[i];
		nodes[i].n_vars = 1;
	}
	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 1;
	o.cb.output = on_line;
	o.cb.output_ctx = &ls;
	gc_runner_report_init(&rep);
	lines_reset(&ls);
	RUN_OK(&o, nodes, 2, &rep);
	double end = nfx_now();

	assert_false(ls.bad);
	for (size_t i = 0; i < 2; i++) {
		const struct gc_runner_step_result *sr = &rep.nodes[i].steps[0];

		gc_buf_reset(&want);
		gc_buf_addf(&want, "%s one\nhalf line\n%s late\nno newline|", nodes[i].name,
			    nodes[i].name);
		assert_string_equal(ls.text[i][0].data, want.data);
		gc_buf_reset(&want);
		gc_buf_addf(&want, "%s err\n", nodes[i].name);
		assert_string_equal(ls.text[i][1].data, want.data);
		/* as it came: a second and a half before the step was over */
		assert_true(end - ls.first_at[i] > 1.2);
		/* nothing kept */
		expect_states(&rep.nodes[i], "o");
		assert_string_equal(sr->out.data, "");
		assert_string_equal(sr->err.data, "");
		assert_false(sr->out_truncated);
		assert_int_equal(sr->exit_status, 0);
	}

	/* 2 MB of lines through a 256 KiB cap, in bursts below it: every line arrives, in
	 * order, and the step never reads as truncated */
	steps[0].script = "for b in $(seq 1 20); do seq -f \"$NODE %06g " DOTS "\" "
			  "$(((b - 1) * 1000 + 1)) $((b * 1000)); sleep 0.05; done";
	o.max_output = 256 << 10;
	lines_reset(&ls);
	RUN_OK(&o, nodes, 2, &rep);
	assert_false(ls.bad);
	for (size_t i = 0; i < 2; i++) {
		gc_buf_reset(&want);
		for (int k = 1; k <= 20000; k++)
			gc_buf_addf(&want, "%s %06d " DOTS "\n", nodes[i].name, k);
		assert_true(want.len > 2000000);
		assert_int_equal(ls.n[i][0], 20000);
		assert_string_equal(ls.text[i][0].data, want.data);
		assert_false(rep.nodes[i].steps[0].out_truncated);
		assert_string_equal(rep.nodes[i].steps[0].out.data, "");
	}

	/* a failing job: its lines, then the node fails as any step would */
	steps[0].script = "echo \"$NODE bye\"; exit 3";
	lines_reset(&ls);
	struct gc_error err;

	gc_error_init(&err);
	assert_int_equal(gc_runner_run(&o, nodes, 2, &rep, &err), -1);
	expect_states(&rep.nodes[0], "F");
	assert_int_equal(rep.nodes[0].steps[0].exit_status, 3);
	gc_buf_reset(&want);
	gc_buf_addf(&want, "%s bye\n", nodes[0].name);
	assert_string_equal(ls.text[0][0].data, want.data);

	lines_reset(&ls);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			gc_buf_release(&ls.text[i][k]);
	gc_buf_release(&want);
	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

/* A dropped connection does not start a streamed job a second time. */
static void test_stream_drop(void **state)
{
	struct nfx *f = nfx_new(1000, 1500);
	struct events ev = { .nodes = 1 };
	struct lines ls = { 0 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_error err;
	struct gc_runner_step steps[] = {
		{ .name = "job",
		  .script = "echo start; sleep 2.5; echo done",
		  .always = true,
		  .stream = true },
	};

	(void)state;
	NFX_SKIP_IF_NONE(f);
	/* the node cuts the first session 1.5 s in, in the middle of the job */
	pinned_node(f, "drop");
	struct gc_runner_node *nodes = nodes_for(f, 0, 1);

	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 1;
	o.cb.output = on_line;
	o.cb.output_ctx = &ls;
	gc_runner_report_init(&rep);
	gc_error_init(&err);
	lines_reset(&ls);
	assert_int_equal(gc_runner_run(&o, nodes, 1, &rep, &err), -1);
	expect_states(&rep.nodes[0], "F");
	assert_int_equal(rep.nodes[0].err.code, GC_ETRANSIENT);
	assert_non_null(strstr(rep.nodes[0].err.message, "not run again"));
	assert_int_equal(rep.nodes[0].steps[0].attempts, 1);
	assert_int_equal(ev.n[GC_RUN_RECONNECTING], 0);
	assert_string_equal(ls.text[0][0].data, "start\n");

	/* validation: a streamed step must be `always`, and needs the callback */
	steps[0].always = false;
	assert_int_equal(gc_runner_run(&o, nodes, 1, &rep, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "step 'job' streams its output"));
	steps[0].always = true;
	o.cb.output = NULL;
	assert_int_equal(gc_runner_run(&o, nodes, 1, &rep, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);

	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			gc_buf_release(&ls.text[i][k]);
	gc_runner_report_release(&rep);
	free(nodes);
	nfx_free(f);
}

static long rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* CPU seconds of this thread: the runner's loop (the emulator's own thread is apart) */
static double thread_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void test_parallel(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_buf want = GC_BUF_INIT(1 << 20);
	const char *env_n = getenv("GC_TEST_NODES");
	uint64_t n = 16;
	struct gc_runner_step steps[] = {
		{ .name = "chatter",
		  .script =
			  "for i in $(seq 1 300); do echo \"$NODE out $i\"; echo \"$NODE err $i\" >&2; "
			  "done",
		  .always = true },
	};
	struct gc_runner_var *vars;

	(void)state;
	NFX_SKIP_IF_NONE(f);
	if (env_n && gc_parse_u64(env_n, 1000, &n) < 0)
		n = 16;
	for (size_t i = 0; i < n; i++)
		pinned_node(f, NULL);
	/* every sshd up first: a node still refusing would wait outside its slot, and the peak
	 * below would measure the host's load rather than the runner's cap */
	for (size_t i = 0; i < n; i++)
		assert_true(nfx_wait_listening(f->inst[i], 60));
	struct gc_runner_node *nodes = nodes_for(f, 0, n);
	struct events ev = { .nodes = n };

	vars = gc_xcalloc(n, sizeof(*vars));
	for (size_t i = 0; i < n; i++) {
		vars[i].name = "NODE";
		vars[i].value = nodes[i].name;
		nodes[i].vars = &vars[i];
		nodes[i].n_vars = 1;
	}
	opts_init(&o, f, &ev);
	o.steps = steps;
	o.n_steps = 1;
	o.concurrency = 8;
	gc_runner_report_init(&rep);
	long rss0 = rss_kib();
	double t0 = nfx_now();

	RUN_OK(&o, nodes, n, &rep);
	print_message("%zu nodes, concurrency 8: %.2f s, peak %zu sessions\n", (size_t)n,
		      nfx_now() - t0, rep.peak_sessions);
	assert_int_equal(rep.peak_sessions, n < 8 ? n : 8);
	for (size_t i = 0; i < n; i++) {
		const struct gc_runner_step_result *sr = &rep.nodes[i].steps[0];

		gc_buf_reset(&want);
		for (int k = 1; k <= 300; k++)
			gc_buf_addf(&want, "%s out %d\n", nodes[i].name, k);
		assert_string_equal(sr->out.data, want.data);
		gc_buf_reset(&want);
		for (int k = 1; k <= 300; k++)
			gc_buf_addf(&want, "%s err %d\n", nodes[i].name, k);
		assert_string_equal(sr->err.data, want.data);
	}

	/* every node at once: the throughput figure */
	o.concurrency = 0;
	t0 = nfx_now();
	double cpu0 = thread_cpu_s();
	RUN_OK(&o, nodes, n, &rep);
	print_message("%zu nodes, concurrency 64: %.2f s, runner thread CPU %.2f s, peak %zu "
		      "sessions, max RSS %ld -> %ld KiB\n",
		      (size_t)n, nfx_now() - t0, thread_cpu_s() - cpu0, rep.peak_sessions, rss0,
		      rss_kib());
	assert_int_equal(rep.n_ok, n);
	assert_int_equal(rep.peak_sessions, n < 64 ? n : 64);

	gc_runner_report_release(&rep);
	gc_buf_release(&want);
	free(vars);
	free(nodes);
	nfx_free(f);
}

/* The embedded scripts as the runner will drive them: detect, then the driver with its
 * reboot, on a fresh Ubuntu node; a second run skips both. */
static void test_embedded(void **state)
{
	struct nfx *f = nfx_new(1000, 0);
	struct events ev = { .nodes = 1 };
	struct gc_runner_opts o;
	struct gc_runner_report rep;
	struct gc_runner_file *files;
	const struct gc_bootstrap_file *detect = gc_bootstrap_file_find("detect.sh");
	const struct gc_bootstrap_file *driver = gc_bootstrap_file_find("driver.sh");
	struct gc_runner_var vars[] = { { .step = "driver", .name = "DRIVER", .value = "570" } };

	(void)state;
	NFX_SKIP_IF_NONE(f);
	assert_non_null(detect);
	assert_non_null(driver);
	struct gc_runner_step steps[] = {
		{ .name = "detect",
		  .script = (const char *)detect->data,
		  .script_len = detect->len },
		{ .name = "driver",
		  .script = (const char *)driver->data,
		  .script_len = driver->len },
	};

	files = gc_xcalloc(gc_bootstrap_nfiles, sizeof(*files));
	for (size_t i = 0; i < gc_bootstrap_nfiles; i++) {
		files[i].name = gc_bootstrap_files[i].name;
		files[i].data = gc_bootstrap_files[i].data;
		files[i].len = gc_bootstrap_files[i].len;
	}
	pinned_node(f, NULL);
	struct gc_runner_node *nodes = nodes_for(f, 0, 1);

	opts_init(&o, f, &ev);
	o.files = files;
	o.n_files = gc_bootstrap_nfiles;
	o.steps = steps;
	o.n_steps = 2;
	o.vars = vars;
	o.n_vars = 1;
	gc_runner_report_init(&rep);
	double t0 = nfx_now();

	RUN_OK(&o, nodes, 1, &rep);
	print_message("detect + driver with a reboot: %.2f s\n", nfx_now() - t0);
	expect_states(&rep.nodes[0], "oo");
	assert_int_equal(strncmp(rep.nodes[0].steps[0].out.data, "OS_ID=ubuntu\n", 13), 0);
	assert_non_null(strstr(rep.nodes[0].steps[0].out.data, "\nNOUVEAU_LOADED=1\n"));
	assert_int_equal(rep.nodes[0].steps[1].reboots, 1);
	assert_non_null(strstr(rep.nodes[0].steps[1].history.data, "reboot needed: nouveau"));
	assert_non_null(strstr(rep.nodes[0].steps[1].out.data, "(open) already works"));

	t0 = nfx_now();
	RUN_OK(&o, nodes, 1, &rep);
	print_message("again, skipped: %.2f s\n", nfx_now() - t0);
	expect_states(&rep.nodes[0], "ss");
	assert_false(rep.nodes[0].uploaded);

	gc_runner_report_release(&rep);
	free(files);
	free(nodes);
	nfx_free(f);
}

static void test_validation(void **state)
{
	struct gc_keypair kp;
	struct gc_known_hosts kh = { 0 };
	struct gc_runner_opts o = { 0 };
	struct gc_runner_report rep;
	struct gc_error err;
	struct gc_runner_step steps[2] = { { .name = "a", .script = "true" },
					   { .name = "b", .script = "true" } };
	struct gc_runner_file file = { "a.sh", "false", 5 };
	struct gc_runner_var var = { .step = "zz", .name = "X", .value = "1" };
	struct gc_runner_node node = { .name = "n", .host = "127.0.0.1" };

	(void)state;
	gc_keypair_init(&kp);
	gc_error_init(&err);
	gc_runner_report_init(&rep);
	o.user = "ubuntu";
	o.key = &kp;
	o.known_hosts = &kh;
	o.steps = steps;
	o.n_steps = 2;
	steps[1].name = "a";
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "step 'a' is listed twice"));
	steps[1].name = "B!";
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	steps[1].name = "b";
	o.files = &file;
	o.n_files = 1;
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "file 'a.sh' differs from the script of step 'a'"));
	o.n_files = 0;
	o.vars = &var;
	o.n_vars = 1;
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "variable 'X' is for step 'zz'"));
	o.n_vars = 0;
	o.force_from = "nope";
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "no step 'nope'"));
	o.force_from = NULL;
	steps[1].undoes = "a";
	steps[1].always = true;
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "step 'b' undoes a step"));
	steps[1].always = false;
	steps[1].undoes = "B!";
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_non_null(strstr(err.message, "step 'b' undoes a step"));
	steps[1].undoes = NULL;
	o.remote_dir = "../etc";
	assert_int_equal(gc_runner_run(&o, &node, 1, &rep, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(rep.n_nodes, 0);
	assert_string_equal(gc_step_state_name(GC_STEP_SKIPPED), "skipped: done");
	assert_string_equal(gc_step_state_name(GC_STEP_NOT_NEEDED), "not needed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validation),
		cmocka_unit_test_teardown(test_markers, nfx_teardown),
		cmocka_unit_test_teardown(test_undo, nfx_teardown),
		cmocka_unit_test_teardown(test_reboot, nfx_teardown),
		cmocka_unit_test_teardown(test_per_boot, nfx_teardown),
		cmocka_unit_test_teardown(test_drop, nfx_teardown),
		cmocka_unit_test_teardown(test_wait_for_ssh, nfx_teardown),
		cmocka_unit_test_teardown(test_timeout_and_cancel, nfx_teardown),
		cmocka_unit_test_teardown(test_parallel, nfx_teardown),
		cmocka_unit_test_teardown(test_embedded, nfx_teardown),
		cmocka_unit_test_teardown(test_stream, nfx_teardown),
		cmocka_unit_test_teardown(test_stream_drop, nfx_teardown),
		cmocka_unit_test_teardown(test_fail_fast, nfx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
