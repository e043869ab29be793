/*
 * test-boot.c: the cluster side of the bootstrapper (bootstrap/cluster.c) and the engine's
 * terminate-by-id, against a small fake cloud (instances, instance types, console output).
 *
 * Covered: nodes in group and launch order with GROUP/N labels, finding a node by id,
 * prefix and GROUP/N (and the ambiguous and unknown cases); the steps of each mode, their
 * inputs and the no-GPU guard, the user steps; host key pinning from the console
 * (immediately, after the console lagged, never: trust on first use or, strict, an error;
 * a changed key is an error; nodes pinned before cost no call; no console at all); the
 * smoke report parser on the documented example and on hostile documents; terminate by
 * id touching only the cluster's instances; every row of the step table in a full
 * bootstrap; a session (bootstrap/session.c) opened for the nodes alone, on one node, on a
 * name that matches none, with a bad --from, and on no node.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bootstrap/cluster.h"
#include "bootstrap/known_hosts.h"
#include "bootstrap/session.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/keygen.h"
#include "core/spec.h"
#include "core/state.h"
#include "core/steps.h"
#include "fake-clock.h"

/* ---- the fake cloud ------------------------------------------------------------- */

struct fake {
	struct gc_instance_list insts;
	char *console[8]; /* per instance index: the console text, NULL: empty */
	unsigned lag[8];  /* console calls answered empty before the text shows */
	unsigned console_calls, type_calls, terminate_calls;
	char state_dir[64];
};

static struct fake F;

static struct gc_instance *add_inst(const char *id, const char *cluster, const char *group,
				    const char *type, int64_t launch, const char *ip)
{
	struct gc_instance *in = gc_instance_list_push(&F.insts);

	in->id = gc_xstrdup(id);
	in->type = gc_xstrdup(type);
	in->state = GC_STATE_RUNNING;
	in->launch_time = launch;
	if (ip)
		in->public_ip = gc_xstrdup(ip);
	if (cluster)
		gc_instance_set_tag(in, "gpucluster:cluster", cluster);
	if (group)
		gc_instance_set_tag(in, "gpucluster:group", group);
	return in;
}

static int fake_discover(struct gc_provider *p, const struct gc_discover_query *q,
			 struct gc_instance_list *out, struct gc_error *err)
{
	(void)p;
	(void)err;
	for (size_t i = 0; i < F.insts.n; i++) {
		const struct gc_instance *in = &F.insts.items[i];
		struct gc_instance *c;

		if (q->n_tags && (!in->cluster || strcmp(in->cluster, q->tags[0].value) != 0))
			continue;
		c = gc_instance_list_push(out);
		c->id = gc_xstrdup(in->id);
		c->type = gc_xstrdup(in->type);
		c->state = in->state;
		for (size_t k = 0; k < in->n_tags; k++)
			gc_instance_set_tag(c, in->tags[k].key, in->tags[k].value);
	}
	return 0;
}

static int fake_terminate(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err)
{
	(void)p;
	(void)err;
	F.terminate_calls++;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < F.insts.n; i++)
			if (strcmp(F.insts.items[i].id, ids[k]) == 0)
				F.insts.items[i].state = GC_STATE_TERMINATED;
	return 0;
}

static int fake_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		     struct gc_error *err)
{
	(void)p;
	F.type_calls++;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", type);
	if (strcmp(type, "g5.xlarge") == 0) {
		out->gpus = 1;
		snprintf(out->gpu_model, sizeof(out->gpu_model), "A10G");
	} else if (strcmp(type, "g5.12xlarge") == 0) {
		out->gpus = 4;
		snprintf(out->gpu_model, sizeof(out->gpu_model), "A10G");
	} else if (strcmp(type, "t3.medium") != 0) {
		return gc_error_set(err, GC_ENOTFOUND, "no instance type '%s'", type);
	}
	return 0;
}

static int fake_console(struct gc_provider *p, const char *id, char **out, struct gc_error *err)
{
	(void)p;
	F.console_calls++;
	for (size_t i = 0; i < F.insts.n; i++) {
		if (strcmp(F.insts.items[i].id, id) != 0)
			continue;
		if (F.lag[i]) {
			F.lag[i]--;
			*out = gc_xstrdup("");
		} else {
			*out = gc_xstrdup(F.console[i] ? F.console[i] : "");
		}
		return 0;
	}
	return gc_error_set(err, GC_ENOTFOUND, "no instance '%s'", id);
}

static const struct gc_provider_ops fake_ops = {
	.name = "fake",
	.caps = GC_CAP_CONSOLE_OUTPUT,
	.max_terminate_batch = 10,
	.discover = fake_discover,
	.terminate = fake_terminate,
	.instance_type = fake_type,
	.console_output = fake_console,
};

static const struct gc_provider_ops blind_ops = {
	.name = "blind",
	.discover = fake_discover,
	.instance_type = fake_type,
};

static struct gc_provider prov;

static const char *env_lookup(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "GPUCLUSTER_STATE_DIR") == 0 ? F.state_dir : NULL;
}

static const struct gc_spec_env test_env = { env_lookup, NULL };

static const char spec_yaml[] = "name: t1\n"
				"provider: {name: aws, region: us-east-1}\n"
				"ssh: {user: ubuntu, port: 2222}\n"
				"node_groups:\n"
				"  - name: workers\n"
				"    count: 2\n"
				"    instance_types: [g5.xlarge]\n"
				"  - name: head\n"
				"    count: 1\n"
				"    instance_types: [t3.medium]\n"
				"bootstrap:\n"
				"  driver: \"570\"\n"
				"  cuda: \"12.8\"\n"
				"  cudnn: \"9\"\n"
				"  steps:\n"
				"    - name: pull\n"
				"      run: docker pull x\n"
				"      timeout: 5m\n";

static struct gc_spec *spec;

/* A host key line, as cloud-init prints it. */
static char *host_key_line(void)
{
	struct gc_keypair kp;
	struct gc_buf b = GC_BUF_INIT(0);

	assert_int_equal(gc_keypair_generate(&kp, "root@node", NULL), 0);
	assert_int_equal(gc_keypair_public_line(&b, &kp), 0);
	gc_keypair_release(&kp);
	return gc_buf_detach(&b, NULL);
}

static char *console_with(const char *key_line)
{
	return gc_xasprintf("ci-info: boot\n-----BEGIN SSH HOST KEY KEYS-----\n%s\n"
			    "-----END SSH HOST KEY KEYS-----\n",
			    key_line);
}

static int setup(void **state)
{
	struct gc_diags d;
	struct gc_error err;

	(void)state;
	memset(&F, 0, sizeof(F));
	gc_instance_list_init(&F.insts);
	snprintf(F.state_dir, sizeof(F.state_dir), "/tmp/gc-test-boot.XXXXXX");
	assert_non_null(mkdtemp(F.state_dir));
	gc_diags_init(&d, "t.yaml");
	gc_error_init(&err);
	assert_int_equal(
		gc_spec_load_buffer(&spec, "t.yaml", spec_yaml, strlen(spec_yaml), NULL, &d, &err),
		0);
	gc_diags_release(&d);
	memset(&prov, 0, sizeof(prov));
	prov.ops = &fake_ops;
	prov.clock = &fake;
	prov.region = spec->provider.region;
	/* launch order differs from list order; one instance of another cluster */
	add_inst("i-0bbb", "t1", "workers", "g5.xlarge", 200, "127.0.0.2");
	add_inst("i-0aaa", "t1", "workers", "g5.xlarge", 100, "127.0.0.1");
	add_inst("i-0ccc", "t1", "head", "t3.medium", 50, "127.0.0.3");
	add_inst("i-0ddd", "t1", "workers", "g5.xlarge", 300, NULL); /* no address yet */
	add_inst("i-0eee", "other", "workers", "g5.xlarge", 10, "127.0.0.5");
	return 0;
}

static int teardown(void **state)
{
	char *cmd = gc_xasprintf("rm -rf '%s'", F.state_dir);

	(void)state;
	assert_int_equal(system(cmd), 0);
	free(cmd);
	for (size_t i = 0; i < 8; i++)
		free(F.console[i]);
	gc_instance_list_release(&F.insts);
	gc_spec_free(spec);
	spec = NULL;
	return 0;
}

/* The cluster's running instances, with their addresses. */
static void cluster_live(struct gc_instance_list *l)
{
	gc_instance_list_init(l);
	for (size_t i = 0; i < F.insts.n; i++) {
		const struct gc_instance *in = &F.insts.items[i];
		struct gc_instance *c;

		if (!in->cluster || strcmp(in->cluster, "t1") != 0)
			continue;
		c = gc_instance_list_push(l);
		c->id = gc_xstrdup(in->id);
		c->type = gc_xstrdup(in->type);
		c->state = in->state;
		c->launch_time = in->launch_time;
		c->public_ip = in->public_ip ? gc_xstrdup(in->public_ip) : NULL;
		for (size_t k = 0; k < in->n_tags; k++)
			gc_instance_set_tag(c, in->tags[k].key, in->tags[k].value);
	}
}

/* The cluster's instances as the engine would discover them. */
static void cluster_nodes(struct gc_boot *b)
{
	struct gc_instance_list l;
	struct gc_error err;

	cluster_live(&l);
	gc_error_init(&err);
	gc_boot_init(b);
	assert_int_equal(gc_boot_add_nodes(b, spec, &l, &prov, NULL, &err), 0);
	gc_instance_list_release(&l);
}

/* ---- nodes ----------------------------------------------------------------------- */

static void test_nodes_in_order(void **state)
{
	struct gc_boot b;
	struct gc_error err;
	size_t at;

	(void)state;
	cluster_nodes(&b);
	/* the spec's group order, then launch order; no address: left out */
	assert_int_equal(b.n_nodes, 3);
	assert_string_equal(b.info[0].id, "i-0aaa");
	assert_string_equal(b.info[0].label, "workers/0");
	assert_string_equal(b.info[1].id, "i-0bbb");
	assert_string_equal(b.info[1].label, "workers/1");
	assert_string_equal(b.info[2].label, "head/0");
	assert_int_equal(b.port, 2222);
	assert_string_equal(b.user, "ubuntu");
	assert_string_equal(b.nodes[1].host, "127.0.0.2");
	assert_int_equal(b.nodes[1].port, 2222);
	assert_true(b.info[0].have_facts);
	assert_int_equal(b.info[0].facts.gpus, 1);
	assert_int_equal(F.type_calls, 2); /* once per type */

	gc_error_init(&err);
	assert_int_equal(gc_boot_find(&b, "i-0bbb", &at, &err), 0);
	assert_int_equal(at, 1);
	assert_int_equal(gc_boot_find(&b, "i-0c", &at, &err), 0);
	assert_int_equal(at, 2);
	assert_int_equal(gc_boot_find(&b, "workers/1", &at, &err), 0);
	assert_int_equal(at, 1);
	assert_int_equal(gc_boot_find(&b, "i-0", &at, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "ambiguous"));
	assert_int_equal(gc_boot_find(&b, "workers/2", &at, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_int_equal(gc_boot_find(&b, "i-0eee", &at, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);

	{
		const char *names[] = { "head/0", "i-0aaa" };

		assert_int_equal(gc_boot_select(&b, names, 2, &err), 0);
		assert_int_equal(b.n_nodes, 2);
		assert_string_equal(b.info[0].id, "i-0aaa");
		assert_string_equal(b.info[1].id, "i-0ccc");
		assert_string_equal(b.nodes[1].name, "i-0ccc");
	}
	gc_boot_release(&b);
}

/* ---- steps ----------------------------------------------------------------------- */

static const char *var_of(const struct gc_boot *b, const char *step, const char *name)
{
	for (size_t i = 0; i < b->n_vars; i++)
		if (strcmp(b->vars[i].name, name) == 0 &&
		    (!b->vars[i].step || !step || strcmp(b->vars[i].step, step) == 0))
			return b->vars[i].value;
	return NULL;
}

static const char *node_var(const struct gc_runner_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_vars; i++)
		if (strcmp(n->vars[i].name, name) == 0)
			return n->vars[i].value;
	return NULL;
}

/* The table's steps this spec wants on b's nodes (preempt only with a spot group, fabric
 * only with an RDMA group). */
static size_t wanted_steps(const struct gc_boot *b, const struct gc_spec *sp)
{
	size_t n = 0;

	/* the wanted rows, and the undo steps of the others that have one */
	for (size_t i = 0; i < gc_n_steps; i++)
		n += gc_boot_step_wanted(b, sp, &gc_steps[i]) || gc_steps[i].undo;
	return n;
}

static void test_full_steps(void **state)
{
	static const char *const names[] = { "detect",	  "driver",	     "cuda",
					     "cudnn",	  "container",	     "preempt-undo",
					     "idle-undo", "monitoring-undo", "step-pull",
					     "smoke" };
	struct gc_boot b;
	struct gc_error err;
	struct gc_runner_opts o;

	(void)state;
	cluster_nodes(&b);
	gc_error_init(&err);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	assert_int_equal(b.n_steps, 10);
	for (size_t i = 0; i < 10; i++)
		assert_string_equal(b.steps[i].name, names[i]);
	assert_int_equal(b.smoke_step, 9);
	/* no spot group, lifecycle.idle or bootstrap.monitoring: those steps are undone where
	 * they ran (the runner runs them only there), their scripts with UNDO=1; the steps
	 * that want nothing undone have no undoes */
	assert_string_equal(b.steps[5].undoes, "preempt");
	assert_string_equal(b.steps[6].undoes, "idle");
	assert_string_equal(b.steps[7].undoes, "monitoring");
	assert_false(b.steps[6].always);
	assert_string_equal(var_of(&b, "idle-undo", "UNDO"), "1");
	assert_non_null(strstr(b.steps[6].script, "GC_STEP=idle"));
	assert_non_null(strstr(b.steps[7].script, "GC_NODE_GPUS")); /* monitoring's guard */
	assert_null(b.steps[4].undoes);
	assert_null(b.steps[8].undoes);
	assert_null(b.steps[9].undoes);
	/* smoke per boot (skipped on a re-apply of a node that passed since it booted), the
	 * others by their markers alone */
	assert_true(b.steps[9].per_boot);
	assert_false(b.steps[9].always);
	assert_false(b.steps[1].always);
	assert_false(b.steps[1].per_boot);
	assert_int_equal(gc_boot_step_index(&b, "cudnn"), 3);
	assert_int_equal(gc_boot_step_index(&b, "nope"), SIZE_MAX);
	/* the user step runs under set -euo pipefail, with its own timeout */
	assert_string_equal(b.steps[8].script, "set -euo pipefail\ndocker pull x\n");
	assert_int_equal(b.steps[8].timeout_ms, 300000);
	/* GPU steps carry the no-GPU guard; detect does not; a step's file is its script */
	assert_non_null(strstr(b.steps[1].script, "GC_NODE_GPUS"));
	assert_non_null(strstr(b.steps[9].script, "nothing to check"));
	assert_null(strstr(b.steps[0].script, "GC_NODE_GPUS"));
	for (size_t i = 0; i < b.n_files; i++)
		if (strcmp(b.files[i].name, "driver.sh") == 0)
			assert_ptr_equal(b.files[i].data, b.steps[1].script);
	assert_string_equal(var_of(&b, "driver", "DRIVER"), "570");
	assert_string_equal(var_of(&b, "cudnn", "CUDA"), "12.8");
	assert_string_equal(var_of(&b, "container", "CONTAINER"), "docker");
	assert_string_equal(var_of(&b, "container", "DOCKER_USER"), "ubuntu");
	assert_string_equal(var_of(&b, "smoke", "SMOKE"), "driver,cuda,container");
	assert_null(var_of(&b, NULL, "GC_VERBOSE"));
	/* per node: the instance type's facts */
	assert_string_equal(node_var(&b.nodes[0], "EXPECT_GPUS"), "1");
	assert_string_equal(node_var(&b.nodes[0], "EXPECT_GPU_MODEL"), "A10G");
	assert_string_equal(node_var(&b.nodes[2], "GC_NODE_GPUS"), "0");
	assert_null(node_var(&b.nodes[2], "EXPECT_GPU_MODEL"));

	memset(&o, 0, sizeof(o));
	gc_boot_runner_opts(&b, &o);
	assert_int_equal(o.n_steps, 10);
	assert_string_equal(o.user, "ubuntu");
	assert_true(o.n_files > 5);
	/* steps are set once */
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_SMOKE, NULL, 0, false, &err), -1);
	gc_boot_release(&b);
}

/* The fabric step: left out where no group has an RDMA network; with one, it runs before
 * the spec's steps with the cloud's setup from its facts, and each node gets its group's
 * interconnect (the standard group's node skips it on the node). */
static void test_fabric_step(void **state)
{
	static const char yaml[] = "name: t1\n"
				   "provider: {name: aws, region: us-east-1}\n"
				   "ssh: {user: ubuntu}\n"
				   "node_groups:\n"
				   "  - name: workers\n"
				   "    count: 2\n"
				   "    instance_types: [g5.xlarge]\n"
				   "    interconnect: rdma\n"
				   "  - name: head\n"
				   "    count: 1\n"
				   "    instance_types: [t3.medium]\n"
				   "bootstrap:\n"
				   "  steps:\n"
				   "    - name: pull\n"
				   "      run: docker pull x\n";
	struct gc_spec *sp = NULL;
	struct gc_diags d;
	struct gc_boot b;
	struct gc_error err;
	size_t at;

	(void)state;
	/* the setup's spec: auto on a type without RDMA interfaces */
	cluster_nodes(&b);
	gc_error_init(&err);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	assert_int_equal(gc_boot_step_index(&b, "fabric"), SIZE_MAX);
	assert_false(gc_boot_step_wanted(&b, spec, gc_step_find("fabric")));
	assert_null(node_var(&b.nodes[0], "FABRIC"));
	gc_boot_release(&b);

	gc_diags_init(&d, "f.yaml");
	assert_int_equal(gc_spec_load_buffer(&sp, "f.yaml", yaml, strlen(yaml), NULL, &d, &err), 0);
	gc_diags_release(&d);
	cluster_nodes(&b);
	assert_int_equal(gc_boot_set_steps(&b, sp, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	at = gc_boot_step_index(&b, "fabric");
	assert_int_not_equal(at, SIZE_MAX);
	assert_int_equal(gc_boot_step_index(&b, "step-pull"), at + 1);
	assert_false(b.steps[at].per_boot);
	assert_string_equal(var_of(&b, "fabric", "FABRIC_URL"),
			    "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz");
	assert_non_null(strstr(var_of(&b, "fabric", "FABRIC_CHECK"), "fi_info -p efa"));
	assert_string_equal(var_of(&b, "fabric", "FABRIC_PACKAGES"), "");
	assert_string_equal(node_var(&b.nodes[0], "FABRIC"), "rdma");
	assert_string_equal(node_var(&b.nodes[1], "FABRIC"), "rdma");
	assert_string_equal(node_var(&b.nodes[2], "FABRIC"), "standard");
	for (size_t i = 0; i < b.nodes[0].n_vars; i++)
		if (strcmp(b.nodes[0].vars[i].name, "FABRIC") == 0)
			assert_string_equal(b.nodes[0].vars[i].step, "fabric");
	/* the node facts stay */
	assert_string_equal(node_var(&b.nodes[0], "EXPECT_GPUS"), "1");
	gc_boot_release(&b);
	/* smoke alone has no fabric step, so no node variable for it */
	cluster_nodes(&b);
	assert_int_equal(gc_boot_set_steps(&b, sp, GC_BOOT_SMOKE, NULL, 0, false, &err), 0);
	assert_null(node_var(&b.nodes[0], "FABRIC"));
	gc_boot_release(&b);
	gc_spec_free(sp);
}

static void test_smoke_and_exec_steps(void **state)
{
	struct gc_boot b, f;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	cluster_nodes(&b);
	cluster_nodes(&f);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_SMOKE, NULL, 0, true, &err), 0);
	assert_int_equal(gc_boot_set_steps(&f, spec, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	assert_int_equal(b.n_steps, 1);
	assert_string_equal(b.steps[0].name, "smoke");
	/* the smoke command forces it (force_from); per boot, so its outcome sets the marker */
	assert_true(b.steps[0].per_boot);
	assert_int_equal(b.smoke_step, 0);
	assert_string_equal(var_of(&b, NULL, "GC_VERBOSE"), "1");
	/* smoke alone uploads what the full bootstrap uploads: one stamp, no re-upload */
	assert_int_equal(b.n_files, f.n_files);
	for (size_t i = 0; i < b.n_files; i++) {
		assert_string_equal(b.files[i].name, f.files[i].name);
		assert_int_equal(b.files[i].len, f.files[i].len);
		assert_memory_equal(b.files[i].data, f.files[i].data, b.files[i].len);
	}
	gc_boot_release(&b);
	gc_boot_release(&f);

	cluster_nodes(&b);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_EXEC, "", 0, false, &err), -1);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_EXEC, "uname -r", 7000, false, &err),
			 0);
	assert_int_equal(b.n_steps, 1);
	assert_string_equal(b.steps[0].name, "exec");
	assert_true(b.steps[0].always);
	assert_int_equal(b.steps[0].timeout_ms, 7000);
	assert_int_equal(b.n_files, 0);
	assert_int_equal(b.smoke_step, SIZE_MAX);
	gc_boot_release(&b);
}

/* Every row of the step table (core/steps.h) is in a full bootstrap, in the table's
 * order around the spec's steps, with its script, its guard, its rerun rule and its
 * inputs from the spec: adding a row needs no change here. */
static void test_table_steps(void **state)
{
	struct gc_boot b;
	struct gc_error err;
	size_t at = 0;

	(void)state;
	cluster_nodes(&b);
	gc_error_init(&err);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	assert_int_equal(b.n_steps, wanted_steps(&b, spec) + spec->bootstrap.n_steps);
	for (int after = 0; after < 2; after++) {
		for (size_t i = 0; i < gc_n_steps; i++) {
			const struct gc_step_def *d = &gc_steps[i];
			const struct gc_runner_step *st = &b.steps[at];
			char file[64];

			if (d->after_user_steps != (after == 1))
				continue;
			if (!gc_boot_step_wanted(&b, spec, d)) {
				/* not wanted: left out, or NAME-undo where the row has an undo */
				if (!d->undo)
					continue;
				snprintf(file, sizeof(file), "%s" GC_STEP_UNDO_SUFFIX, d->name);
				assert_string_equal(st->name, file);
				assert_string_equal(st->undoes, d->name);
				assert_false(st->always);
				assert_string_equal(var_of(&b, file, "UNDO"), "1");
				at++;
				continue;
			}
			assert_string_equal(st->name, d->name);
			assert_null(st->undoes);
			assert_int_equal(st->per_boot, d->rerun == GC_STEP_RERUN_PER_BOOT);
			assert_int_equal(st->always, d->rerun == GC_STEP_RERUN_ALWAYS);
			/* the script is the embedded NAME.sh behind the row's guard */
			snprintf(file, sizeof(file), "%s.sh", d->name);
			for (size_t f = 0; f < b.n_files; f++)
				if (strcmp(b.files[f].name, file) == 0)
					assert_ptr_equal(b.files[f].data, st->script);
			assert_int_equal(strstr(st->script, "GC_NODE_GPUS") != NULL,
					 d->guard != GC_STEP_GUARD_NONE);
			for (size_t k = 0; k < GC_STEP_MAX_INPUTS && d->inputs[k].var; k++) {
				char *want = d->inputs[k].value(spec);
				const char *got = var_of(&b, d->name, d->inputs[k].var);

				assert_non_null(got);
				assert_string_equal(got, want);
				free(want);
			}
			if (strcmp(d->name, GC_STEP_SMOKE) == 0)
				assert_int_equal(b.smoke_step, at);
			at++;
		}
		for (size_t i = 0; !after && i < spec->bootstrap.n_steps; i++, at++)
			assert_string_equal(b.steps[at].name + strlen(GC_STEP_USER_PREFIX),
					    spec->bootstrap.steps[i].name);
	}
	assert_int_equal(at, b.n_steps);
	assert_non_null(gc_step_find(GC_STEP_SMOKE));
	assert_null(gc_step_find("nope"));
	gc_boot_release(&b);
}

/* A spec with mounts gets the mounts step after the table's others and before the spec's
 * own steps, its inputs from the spec and the cloud's facts; smoke gets MOUNTS, unhashed. */
static void test_mounts_step(void **state)
{
	static const char yaml[] = "name: t1\n"
				   "provider: {name: aws, region: us-east-1}\n"
				   "node_groups:\n"
				   "  - {name: workers, count: 1, instance_types: [g5.xlarge],"
				   " role: reader}\n"
				   "bootstrap:\n"
				   "  steps: [{name: pull, run: \"true\"}]\n"
				   "mounts:\n"
				   "  - {bucket: my-data, path: /data}\n"
				   "  - {bucket: my-results, path: /mnt/results, mode: rw}\n";
	struct gc_spec *sp = NULL;
	struct gc_diags d;
	struct gc_boot b;
	struct gc_error err;
	size_t at = SIZE_MAX;

	(void)state;
	gc_diags_init(&d, "m.yaml");
	gc_error_init(&err);
	assert_int_equal(gc_spec_load_buffer(&sp, "m.yaml", yaml, strlen(yaml), NULL, &d, &err), 0);
	gc_diags_release(&d);
	cluster_nodes(&b);
	assert_int_equal(gc_boot_set_steps(&b, sp, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	for (size_t i = 0; i < b.n_steps; i++)
		if (strcmp(b.steps[i].name, "mounts") == 0)
			at = i;
	assert_true(at != SIZE_MAX);
	/* then the undo steps of the later rows (monitoring), then the spec's own */
	assert_string_equal(b.steps[at + 1].name, "monitoring-undo");
	assert_string_equal(b.steps[at + 2].name, "step-pull");
	assert_true(b.steps[at].per_boot);
	assert_string_equal(var_of(&b, "mounts", "MOUNTS"),
			    "my-data:/data:ro my-results:/mnt/results:rw");
	assert_string_equal(var_of(&b, "mounts", "MOUNT_TOOL"),
			    "mount-s3 https://s3.amazonaws.com/mountpoint-s3-release/latest/x86_64/"
			    "mount-s3.deb us-east-1 "
			    "http://169.254.169.254/latest/meta-data/iam/security-credentials/ "
			    "http://169.254.169.254/latest/api/token X-aws-ec2-metadata-token");
	assert_string_equal(var_of(&b, "mounts", "MOUNT_COMMAND"),
			    "mount-s3 --region {region} --allow-other {mode} {bucket} {path}\n"
			    "--read-only\n--allow-delete --allow-overwrite");
	assert_string_equal(var_of(&b, "mounts", "MOUNT_CREDS"), "");
	assert_string_equal(var_of(&b, GC_STEP_SMOKE, "MOUNTS"), var_of(&b, "mounts", "MOUNTS"));
	for (size_t i = 0; i < b.n_vars; i++)
		if (!strcmp(b.vars[i].name, "MOUNTS") && b.vars[i].step &&
		    !strcmp(b.vars[i].step, GC_STEP_SMOKE))
			assert_true(b.vars[i].unhashed);
	gc_boot_release(&b);
	/* without mounts: no mounts step, and smoke's MOUNTS is empty */
	cluster_nodes(&b);
	assert_int_equal(gc_boot_set_steps(&b, spec, GC_BOOT_FULL, NULL, 0, false, &err), 0);
	for (size_t i = 0; i < b.n_steps; i++)
		assert_string_not_equal(b.steps[i].name, "mounts");
	assert_string_equal(var_of(&b, GC_STEP_SMOKE, "MOUNTS"), "");
	gc_boot_release(&b);
	gc_spec_free(sp);
}

/* ---- the session ------------------------------------------------------------------ */

static struct gc_session_opts session_opts(enum gc_boot_mode mode)
{
	struct gc_session_opts o = { .mode = mode, .ssh_wait_ms = 1000 };
	return o;
}

static void test_session_open(void **state)
{
	static const char *const one[] = { "workers/1" }, *const bad[] = { "nope" };
	struct gc_engine e;
	struct gc_instance_list live;
	struct gc_session s;
	struct gc_session_opts o;
	struct gc_error err;
	char *key = NULL, *kh = NULL, *line = host_key_line();

	(void)state;
	gc_error_init(&err);
	cluster_live(&live);
	assert_int_equal(gc_engine_init(&e, spec, &prov, &test_env, NULL, &err), 0);
	kh = gc_state_path(e.state_dir, GC_STATE_KNOWN_HOSTS);
	key = gc_state_path(e.state_dir, GC_STATE_KEY);
	/* hosts: the nodes alone, from the caller's list; no key made, nothing pinned */
	o = session_opts(GC_BOOT_NODES);
	gc_session_init(&s);
	assert_int_equal(gc_session_open(&s, &e, &live, &o, &err), 0);
	assert_int_equal(s.boot.n_nodes, 3);
	assert_ptr_equal(s.live, &live);
	assert_int_equal(s.boot.n_steps, 0);
	assert_int_equal(access(key, F_OK), -1);
	gc_session_release(&s);
	F.type_calls = 0;
	/* ssh: one node by name, its key from the console, no instance type looked up */
	F.console[0] = console_with(line);
	o = session_opts(GC_BOOT_LOGIN);
	o.names = one;
	o.n_names = 1;
	gc_session_init(&s);
	assert_int_equal(gc_session_open(&s, &e, &live, &o, &err), 0);
	assert_int_equal(s.boot.n_nodes, 1);
	assert_string_equal(s.boot.info[0].id, "i-0bbb");
	assert_int_equal(s.boot.n_steps, 0);
	assert_int_equal(s.boot.info[0].pin, GC_BOOT_PIN_CONSOLE);
	assert_false(s.tofu);
	assert_int_equal(F.type_calls, 0);
	/* the state files are where core/state.h says */
	assert_string_equal(s.kh_path, kh);
	assert_int_equal(access(key, R_OK), 0);
	assert_int_equal(access(kh, R_OK), 0);
	gc_session_release(&s);

	/* a name that matches nothing: stopped at the selection */
	o.names = bad;
	gc_session_init(&s);
	assert_int_equal(gc_session_open(&s, &e, &live, &o, &err), -1);
	assert_int_equal(s.stage, GC_SESSION_SELECT);
	assert_int_equal(err.code, GC_ENOTFOUND);
	gc_session_release(&s);

	/* a full bootstrap with a --from that names no step: stopped there, steps set */
	o = session_opts(GC_BOOT_FULL);
	o.from = "cuda-toolkit";
	gc_error_init(&err);
	gc_session_init(&s);
	assert_int_equal(gc_session_open(&s, &e, &live, &o, &err), -1);
	assert_int_equal(s.stage, GC_SESSION_FROM);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_int_equal(s.boot.n_steps, wanted_steps(&s.boot, spec) + 1);
	assert_true(F.type_calls > 0);
	gc_session_release(&s);

	/* no running node: nothing to do, and no error */
	gc_instance_list_release(&live);
	gc_instance_list_init(&live);
	o.from = NULL;
	gc_error_init(&err);
	gc_session_init(&s);
	assert_int_equal(gc_session_open(&s, &e, &live, &o, &err), 0);
	assert_int_equal(s.boot.n_nodes, 0);
	gc_session_release(&s);

	gc_instance_list_release(&live);
	gc_engine_release(&e);
	free(line);
	free(key);
	free(kh);
}

/* ---- host keys ------------------------------------------------------------------- */

static struct gc_boot_pin_opts pin_opts(bool strict)
{
	struct gc_boot_pin_opts o = {
		.console_wait_ms = 20000, .console_retry_ms = 5000, .strict = strict, .clock = &fake
	};
	return o;
}

static void open_kh(struct gc_known_hosts *kh)
{
	char *path = gc_state_path(F.state_dir, GC_STATE_KNOWN_HOSTS);
	struct gc_error err;

	gc_error_init(&err);
	assert_int_equal(gc_known_hosts_open(kh, path, &err), 0);
	free(path);
}

static void test_pin_from_console(void **state)
{
	struct gc_boot b;
	struct gc_known_hosts kh;
	struct gc_boot_pin_opts o = pin_opts(false);
	struct gc_error err;
	char *keys[3];
	bool tofu = true;

	(void)state;
	for (size_t i = 0; i < 3; i++)
		keys[i] = host_key_line();
	F.console[1] = console_with(keys[0]); /* i-0aaa: at once */
	F.console[0] = console_with(keys[1]); /* i-0bbb: after two empty answers */
	F.lag[0] = 2;
	/* i-0ccc: never a key */
	cluster_nodes(&b);
	open_kh(&kh);
	gc_error_init(&err);
	fc.now = 0;
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), 0);
	assert_int_equal(b.info[0].pin, GC_BOOT_PIN_CONSOLE);
	assert_int_equal(b.info[1].pin, GC_BOOT_PIN_CONSOLE);
	assert_int_equal(b.info[2].pin, GC_BOOT_PIN_TOFU);
	assert_true(tofu);
	/* bounded: about the console wait, in retry steps */
	assert_true(fc.now >= 15000 * MS && fc.now <= 20000 * MS);
	assert_int_equal(kh.n, 2);
	assert_non_null(strstr(kh.v[0].text, "gpucluster:instance="));

	/* a second run: both pinned before, no console call for them */
	F.console_calls = 0;
	o.console_wait_ms = 1; /* i-0ccc is asked once more, then left to first use */
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), 0);
	assert_int_equal(b.info[0].pin, GC_BOOT_PIN_KNOWN);
	assert_int_equal(b.info[1].pin, GC_BOOT_PIN_KNOWN);
	assert_int_equal(F.console_calls, 1);

	/* strict: the node without a key in its console is an error */
	o = pin_opts(true);
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "i-0ccc"));
	assert_non_null(strstr(err.message, "strict"));

	/* the same instance showing another key in its console: never accepted */
	free(F.console[2]);
	F.console[2] = console_with(keys[2]);
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), 0);
	assert_int_equal(b.info[2].pin, GC_BOOT_PIN_CONSOLE);
	assert_false(tofu);
	gc_known_hosts_release(&kh);
	/* i-0aaa's console now shows another key than the one pinned for it */
	{
		char *other = host_key_line();

		free(F.console[1]);
		F.console[1] = console_with(other);
		free(other);
	}
	open_kh(&kh);
	b.info[0].pin = GC_BOOT_PIN_NONE;
	/* pinned for i-0aaa, so not asked: the connection would then refuse it */
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), 0);
	assert_int_equal(b.info[0].pin, GC_BOOT_PIN_KNOWN);
	gc_known_hosts_release(&kh);
	/* without the pin's instance id the console is asked, and its other key refused */
	{
		char *path = gc_state_path(F.state_dir, GC_STATE_KNOWN_HOSTS);
		char *cmd = gc_xasprintf("sed -i 's/ gpucluster:instance=i-0aaa//' '%s'", path);

		assert_int_equal(system(cmd), 0);
		free(cmd);
		free(path);
	}
	open_kh(&kh);
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "changed"));
	assert_non_null(strstr(err.message, "i-0aaa"));
	gc_known_hosts_release(&kh);
	for (size_t i = 0; i < 3; i++)
		free(keys[i]);
	gc_boot_release(&b);
}

/* A cloud without console output: the key given at launch (the host-key tag) is pinned
 * before anything connects; a tag without a usable key falls back to first use. */
static void test_pin_from_tag(void **state)
{
	struct gc_boot b;
	struct gc_known_hosts kh;
	struct gc_boot_pin_opts o = pin_opts(false);
	struct gc_error err;
	char *given = host_key_line(), *other = host_key_line();
	bool tofu = false;

	(void)state;
	prov.ops = &blind_ops;
	cluster_nodes(&b);
	b.info[0].host_key = gc_xstrdup(given);
	b.info[1].host_key = gc_xstrdup("ssh-ed25519 bm90LWEta2V5");
	open_kh(&kh);
	gc_error_init(&err);
	fc.now = 0;
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), 0);
	assert_int_equal(b.info[0].pin, GC_BOOT_PIN_TAG);
	assert_int_equal(b.info[1].pin, GC_BOOT_PIN_TOFU);
	assert_int_equal(b.info[2].pin, GC_BOOT_PIN_TOFU);
	assert_true(tofu);
	assert_int_equal(fc.now, 0);
	/* the file pins exactly the given key, for that instance */
	assert_int_equal(kh.n, 1);
	assert_non_null(strstr(given, kh.v[0].base64));
	assert_string_equal(kh.v[0].instance, b.info[0].id);

	/* strict: the tagged node is fine, the others are errors */
	o.strict = true;
	b.info[0].pin = GC_BOOT_PIN_NONE;
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), -1);
	assert_int_equal(b.info[0].pin, GC_BOOT_PIN_KNOWN);
	assert_non_null(strstr(err.message, b.info[1].id));

	/* another key in the tag for an address pinned without its instance id: refused */
	gc_known_hosts_release(&kh);
	{
		char *path = gc_state_path(F.state_dir, GC_STATE_KNOWN_HOSTS);
		char *cmd = gc_xasprintf("sed -i 's/ gpucluster:instance=[^ ]*//' '%s'", path);

		assert_int_equal(system(cmd), 0);
		free(cmd);
		free(path);
	}
	open_kh(&kh);
	free(b.info[0].host_key);
	b.info[0].host_key = gc_xstrdup(other);
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "changed"));
	assert_non_null(strstr(err.message, b.info[0].id));
	gc_known_hosts_release(&kh);
	gc_boot_release(&b);
	free(given);
	free(other);
	prov.ops = &fake_ops;
}

static void test_pin_without_console(void **state)
{
	struct gc_boot b;
	struct gc_known_hosts kh;
	struct gc_boot_pin_opts o = pin_opts(false);
	struct gc_error err;
	bool tofu = false;

	(void)state;
	prov.ops = &blind_ops;
	cluster_nodes(&b);
	open_kh(&kh);
	gc_error_init(&err);
	fc.now = 0;
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), 0);
	assert_true(tofu);
	for (size_t i = 0; i < b.n_nodes; i++)
		assert_int_equal(b.info[i].pin, GC_BOOT_PIN_TOFU);
	assert_int_equal(fc.now, 0); /* nothing to wait for */
	o.strict = true;
	assert_int_equal(gc_boot_pin(&b, &prov, &kh, &o, &tofu, &err), -1);
	assert_non_null(strstr(err.message, "no console output"));
	gc_known_hosts_release(&kh);
	gc_boot_release(&b);
	prov.ops = &fake_ops;
}

/* ---- the smoke report ------------------------------------------------------------ */

static const char good_doc[] =
	"{\"ok\":true,\"simulated\":true,\n"
	" \"checks\":[{\"name\":\"nvidia-smi\",\"ok\":true,\"detail\":\"driver 570.133.20, 1 GPU\"},\n"
	"            {\"name\":\"ecc\",\"ok\":true,\"detail\":\"no uncorrectable ECC errors\"}],\n"
	" \"gpus\":[{\"index\":0,\"name\":\"NVIDIA A10G\",\"uuid\":\"GPU-1\",\"memory_mib\":24576,"
	"\"h2d_gbps\":24.5,\"d2h_gbps\":25.5,\"d2d_gbps\":480,\"gemm_tflops\":70,"
	"\"ecc_uncorrected\":0}],\n"
	" \"cuda_runtime\":\"12.8\",\"driver\":\"570.133.20\"}\n";

static struct gc_smoke_report parse(const char *text, int exit_status)
{
	struct gc_smoke_report r;

	gc_smoke_report_init(&r);
	gc_smoke_report_parse(&r, text, strlen(text), exit_status);
	return r;
}

static void test_smoke_good(void **state)
{
	struct gc_smoke_report r = parse(good_doc, 0);

	(void)state;
	assert_true(r.ran && r.parsed && r.ok && r.simulated);
	assert_string_equal(r.reason, "");
	assert_int_equal(r.n_checks, 2);
	assert_string_equal(r.checks[1].name, "ecc");
	assert_int_equal(r.n_gpus, 1);
	assert_string_equal(r.gpus[0].name, "NVIDIA A10G");
	assert_int_equal(r.gpus[0].memory_mib, 24576);
	assert_true(r.gpus[0].d2d_gbps == 480.0 && r.gpus[0].gemm_tflops == 70.0);
	assert_string_equal(r.driver, "570.133.20");
	assert_string_equal(r.cuda_runtime, "12.8");
	gc_smoke_report_release(&r);

	/* a figure may be absent (no cuda check): it is then -1, not 0 */
	r = parse("{\"ok\":true,\"checks\":[{\"name\":\"gpu-count\",\"ok\":true,\"detail\":\"\"}],"
		  "\"gpus\":[{\"index\":0,\"name\":\"T4\"}]}",
		  0);
	assert_true(r.ok && !r.simulated);
	assert_true(r.gpus[0].h2d_gbps < 0 && r.gpus[0].memory_mib < 0);
	gc_smoke_report_release(&r);
}

static void test_smoke_failed_checks(void **state)
{
	struct gc_smoke_report r;

	(void)state;
	r = parse("{\"ok\":false,\"simulated\":true,\"checks\":["
		  "{\"name\":\"ecc\",\"ok\":false,\"detail\":\"GPU 0: 2 uncorrectable\"},"
		  "{\"name\":\"xid\",\"ok\":false,\"detail\":\"Xid 48\"}],\"gpus\":[]}",
		  1);
	assert_true(r.parsed && !r.ok);
	assert_string_equal(r.reason, "ecc: GPU 0: 2 uncorrectable; xid: Xid 48");
	gc_smoke_report_release(&r);

	/* "ok" is not taken on its word: a failed check or a failed exit wins */
	r = parse("{\"ok\":true,\"checks\":[{\"name\":\"cuda\",\"ok\":false,\"detail\":\"no\"}]}",
		  0);
	assert_false(r.ok);
	assert_string_equal(r.reason, "cuda: no");
	gc_smoke_report_release(&r);
	r = parse("{\"ok\":true,\"checks\":[{\"name\":\"cuda\",\"ok\":true,\"detail\":\"\"}]}", 1);
	assert_false(r.ok);
	assert_non_null(strstr(r.reason, "exited 1"));
	gc_smoke_report_release(&r);
	r = parse("{\"ok\":true,\"checks\":[]}", 0);
	assert_false(r.ok);
	assert_non_null(strstr(r.reason, "no checks"));
	gc_smoke_report_release(&r);
	r = parse("{\"simulated\":true,\"error\":\"no CUDA-capable device\",\"cuda_error\":100}",
		  1);
	assert_false(r.ok || r.parsed);
	assert_non_null(strstr(r.reason, "no CUDA-capable device"));
	gc_smoke_report_release(&r);
}

static void test_smoke_garbage(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[1,2]",
		"{\"ok\":\"yes\",\"checks\":[]}",
		"{\"ok\":true}",
		"{\"ok\":true,\"checks\":{}}",
		"{\"ok\":true,\"checks\":[{\"name\":1,\"ok\":true}]}",
		"{\"ok\":true,\"checks\":[{\"name\":\"a\",\"ok\":1}]}",
		"{\"ok\":true,\"checks\":[{\"name\":\"a\",\"ok\":true,\"detail\":[]}]}",
		"{\"ok\":true,\"simulated\":1,\"checks\":[]}",
		"{\"ok\":true,\"checks\":[],\"gpus\":[{\"index\":0,\"h2d_gbps\":-1}]}",
		"{\"ok\":true,\"checks\":[],\"gpus\":[{\"index\":0,\"h2d_gbps\":\"fast\"}]}",
		"{\"ok\":true,\"checks\":[],\"gpus\":[{\"index\":-3}]}",
		"{\"ok\":true,\"checks\":[],\"gpus\":[7]}",
		"{\"ok\":true,\"checks\":[],\"gpus\":[{\"index\":0,\"gemm_tflops\":1e300}]}",
		"{\"ok\":true,\"ok\":true,\"checks\":[]}",
		"{\"ok\":true,\"checks\":[]} trailing",
	};
	struct gc_smoke_report r;
	struct gc_buf big = GC_BUF_INIT(0);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_smoke_report_init(&r);
		if (gc_smoke_report_parse(&r, bad[i], strlen(bad[i]), 0) != -1)
			fail_msg("parsed: %s", bad[i]);
		if (r.ok || r.parsed || !r.reason[0] || r.n_checks || r.n_gpus)
			fail_msg("not a failed smoke: %s (%s)", bad[i], r.reason);
		gc_smoke_report_release(&r);
	}
	/* too many checks, too many GPUs, too big */
	gc_buf_addstr(&big, "{\"ok\":true,\"checks\":[");
	for (int i = 0; i < GC_SMOKE_MAX_CHECKS + 1; i++)
		gc_buf_addf(&big, "%s{\"name\":\"c\",\"ok\":true,\"detail\":\"\"}", i ? "," : "");
	gc_buf_addstr(&big, "]}");
	r = parse(big.data, 0);
	assert_false(r.ok || r.parsed);
	assert_non_null(strstr(r.reason, "more than"));
	gc_smoke_report_release(&r);
	gc_buf_reset(&big);
	gc_buf_addstr(&big, "{\"ok\":true,\"checks\":[],\"gpus\":[");
	for (int i = 0; i < GC_SMOKE_MAX_GPUS + 1; i++)
		gc_buf_addf(&big, "%s{\"index\":%d}", i ? "," : "", i);
	gc_buf_addstr(&big, "]}");
	r = parse(big.data, 0);
	assert_false(r.ok || r.parsed);
	gc_smoke_report_release(&r);
	gc_buf_reset(&big);
	gc_buf_addstr(&big, "{\"ok\":true,\"checks\":[],\"pad\":\"");
	while (big.len <= GC_SMOKE_OUTPUT_MAX)
		gc_buf_addstr(&big,
			      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	gc_buf_addstr(&big, "\"}");
	r = parse(big.data, 0);
	assert_false(r.ok || r.parsed);
	assert_non_null(strstr(r.reason, "bytes"));
	gc_smoke_report_release(&r);
	gc_buf_release(&big);

	/* control characters from the node never reach a terminal; long text is cut */
	r = parse("{\"ok\":false,\"checks\":[{\"name\":\"x\\u001b[2J\",\"ok\":false,"
		  "\"detail\":\"a\\nb\\u0007\"}]}",
		  1);
	assert_true(r.parsed);
	assert_string_equal(r.checks[0].name, "x?[2J");
	assert_string_equal(r.checks[0].detail, "a?b?");
	gc_smoke_report_release(&r);

	gc_smoke_report_init(&r);
	gc_smoke_report_not_run(&r, "the smoke test did not run: driver failed");
	assert_false(r.ran || r.ok);
	assert_string_equal(r.reason, "the smoke test did not run: driver failed");
	gc_smoke_report_release(&r);
}

/* ---- terminate by id ------------------------------------------------------------- */

static void test_engine_terminate(void **state)
{
	struct gc_engine e;
	struct gc_engine_opts o = { .poll_ms = 10, .wait_timeout_ms = 60000 };
	struct gc_engine_report rep;
	struct gc_error err;
	const char *ids[] = { "i-0bbb", "i-0eee" };

	(void)state;
	gc_error_init(&err);
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_init(&e, spec, &prov, &test_env, NULL, &err), 0);
	e.clock = &fake;
	/* i-0eee belongs to another cluster: left alone, and said so */
	assert_int_equal(gc_engine_terminate(&e, ids, 2, &o, &rep, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_non_null(strstr(err.message, "i-0eee"));
	assert_int_equal(rep.n_terminated, 1);
	assert_string_equal(rep.terminated_ids[0], "i-0bbb");
	assert_int_equal(F.insts.items[0].state, GC_STATE_TERMINATED);
	assert_int_equal(F.insts.items[4].state, GC_STATE_RUNNING);
	assert_int_equal(F.insts.items[1].state, GC_STATE_RUNNING);
	gc_engine_report_release(&rep);

	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_terminate(&e, ids, 0, &o, &rep, &err), 0);
	assert_int_equal(rep.n_terminated, 0);
	gc_engine_report_release(&rep);
	gc_engine_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nodes_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smoke_and_exec_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fabric_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mounts_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pin_from_console, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pin_from_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pin_without_console, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smoke_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smoke_failed_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smoke_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_engine_terminate, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
