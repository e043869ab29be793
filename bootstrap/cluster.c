/*
 * cluster.c: turns a cluster (its spec, its running instances, its instance types) into
 * the runner's nodes, steps and inputs; pins host keys (the key given at launch, else the
 * cloud's console output) before anything connects; and reads the smoke step's JSON back
 * into plain structs (see cluster.h).
 *
 * The smoke document comes from a machine we are checking because we do not trust it
 * yet, so its parser assumes nothing: every field's type is checked, sizes and counts are
 * capped, and anything off makes the node's smoke fail with a reason rather than pass.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bootstrap/cluster.h"
#include "bootstrap/scripts.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/fabric.h"
#include "core/steps.h"
#include "core/wait.h"

/* The GPU steps turn into no-ops on a node whose instance type has no GPU. */
static const char gpu_guard[] = "if [ \"${GC_NODE_GPUS:-}\" = 0 ]; then\n"
				"\techo \"%.*s: skipped: the instance type has no GPU\"\n"
				"\texit 0\n"
				"fi\n";
static const char smoke_guard[] =
	"if [ \"${GC_NODE_GPUS:-}\" = 0 ]; then\n"
	"\techo '{\"ok\":true,\"simulated\":false,\"checks\":[{\"name\":\"gpu\",\"ok\":true,"
	"\"detail\":\"the instance type has no GPU: nothing to check\"}],\"gpus\":[]}'\n"
	"\texit 0\n"
	"fi\n";

void gc_boot_init(struct gc_boot *b)
{
	memset(b, 0, sizeof(*b));
	b->smoke_step = SIZE_MAX;
}

static void node_info_release(struct gc_boot_node *n)
{
	free(n->id);
	free(n->group);
	free(n->label);
	free(n->host);
	free(n->type);
	free(n->host_key);
}

void gc_boot_release(struct gc_boot *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_nodes; i++)
		node_info_release(&b->info[i]);
	free(b->info);
	free(b->nodes);
	free(b->files);
	free(b->steps);
	free(b->vars);
	for (size_t i = 0; i < b->n_owned; i++)
		free(b->owned[i]);
	free(b->owned);
	gc_boot_init(b);
}

/* Takes p (a string or an array) into b's pool, freed with b, and returns it. */
static void *own(struct gc_boot *b, void *p)
{
	GC_ALLOC_GROW(b->owned, b->n_owned + 1, b->alloc_owned);
	b->owned[b->n_owned++] = p;
	return p;
}

static void add_var(struct gc_boot *b, const char *step, const char *name, const char *value,
		    bool unhashed)
{
	GC_ALLOC_GROW(b->vars, b->n_vars + 1, b->alloc_vars);
	b->vars[b->n_vars++] =
		(struct gc_runner_var){ step, name, own(b, gc_xstrdup(value ? value : "")),
					unhashed };
}

/* ---- nodes ------------------------------------------------------------------------- */

static size_t group_rank(const struct gc_spec *spec, const char *group)
{
	for (size_t i = 0; i < spec->n_groups; i++)
		if (group && strcmp(spec->groups[i].name, group) == 0)
			return i;
	return spec->n_groups;
}

struct sortable {
	const struct gc_instance *inst;
	size_t rank;
};

static int by_group_then_launch(const void *pa, const void *pb)
{
	const struct sortable *a = pa, *b = pb;
	const char *ga = a->inst->group ? a->inst->group : "";
	const char *gb = b->inst->group ? b->inst->group : "";
	int c;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if ((c = strcmp(ga, gb)) != 0)
		return c;
	if (a->inst->launch_time != b->inst->launch_time)
		return a->inst->launch_time < b->inst->launch_time ? -1 : 1;
	return strcmp(a->inst->id, b->inst->id);
}

struct facts_cache {
	const char *type;
	bool ok;
	struct gc_type_facts facts;
};

static const struct facts_cache *facts_for(struct facts_cache *cache, size_t *n,
					   struct gc_provider *p, const char *type,
					   struct gc_log *log)
{
	struct gc_error err;

	for (size_t i = 0; i < *n; i++)
		if (strcmp(cache[i].type, type) == 0)
			return &cache[i];
	cache[*n].type = type;
	gc_error_init(&err);
	cache[*n].ok = p && gc_provider_instance_type(p, type, &cache[*n].facts, &err) == 0;
	if (p && !cache[*n].ok)
		gc_log_warn(log,
			    "no facts for instance type '%s' (%s): the smoke test counts the "
			    "GPUs on the PCI bus instead",
			    type, err.message);
	return &cache[(*n)++];
}

int gc_boot_add_nodes(struct gc_boot *b, const struct gc_spec *spec,
		      const struct gc_instance_list *live, struct gc_provider *p,
		      struct gc_log *log, struct gc_error *err)
{
	struct sortable *v = gc_xcalloc(live->n + 1, sizeof(*v));
	struct facts_cache *cache = gc_xcalloc(live->n + 1, sizeof(*cache));
	size_t n = 0, n_cache = 0;
	unsigned index = 0;

	(void)err;
	if (!b->user)
		b->user = own(b, gc_xstrdup(spec->ssh.user));
	b->port = spec->ssh.port ? spec->ssh.port : 22;
	for (size_t i = 0; i < live->n; i++) {
		const struct gc_instance *in = &live->items[i];

		if (in->state != GC_STATE_RUNNING || !in->id)
			continue;
		if (!(in->public_ip && *in->public_ip) && !(in->private_ip && *in->private_ip)) {
			gc_log_warn(log, "instance '%s' is running but has no address yet: skipped",
				    in->id);
			continue;
		}
		v[n].inst = in;
		v[n++].rank = group_rank(spec, in->group);
	}
	qsort(v, n, sizeof(*v), by_group_then_launch);
	b->info = gc_xreallocarray(b->info, b->n_nodes + n, sizeof(*b->info));
	b->nodes = gc_xreallocarray(b->nodes, b->n_nodes + n, sizeof(*b->nodes));
	for (size_t i = 0; i < n; i++) {
		const struct gc_instance *in = v[i].inst;
		struct gc_boot_node *bn = &b->info[b->n_nodes];
		const char *group = in->group ? in->group : "";
		const struct facts_cache *fc;

		if (i > 0 && strcmp(group, v[i - 1].inst->group ? v[i - 1].inst->group : "") == 0)
			index++;
		else
			index = 0;
		memset(bn, 0, sizeof(*bn));
		bn->id = gc_xstrdup(in->id);
		bn->group = gc_xstrdup(group);
		bn->index = index;
		bn->label = gc_xasprintf("%s/%u", *group ? group : "-", index);
		bn->host = gc_xstrdup(in->public_ip && *in->public_ip ? in->public_ip
								      : in->private_ip);
		bn->type = gc_xstrdup(in->type ? in->type : "");
		{
			const char *hk = gc_instance_tag(in, GC_TAG_HOST_KEY);

			bn->host_key = hk && *hk ? gc_xstrdup(hk) : NULL;
		}
		if (in->type && *in->type) {
			fc = facts_for(cache, &n_cache, p, in->type, log);
			bn->have_facts = fc->ok;
			if (fc->ok)
				bn->facts = fc->facts;
		}
		b->nodes[b->n_nodes] = (struct gc_runner_node){
			.name = bn->id, .host = bn->host, .port = b->port, .instance_id = bn->id
		};
		b->n_nodes++;
	}
	free(v);
	free(cache);
	return 0;
}

/* Whether name is GROUP/N; fills the group's length and N. */
static bool parse_slot(const char *name, size_t *group_len, unsigned *index)
{
	const char *slash = strrchr(name, '/');
	unsigned long n = 0;

	if (!slash || slash == name || !slash[1] || strlen(slash + 1) > 6)
		return false;
	for (const char *s = slash + 1; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		n = n * 10 + (unsigned long)(*s - '0');
	}
	*group_len = (size_t)(slash - name);
	*index = (unsigned)n;
	return true;
}

int gc_boot_find(const struct gc_boot *b, const char *name, size_t *out, struct gc_error *err)
{
	size_t group_len, found = SIZE_MAX, matches = 0;
	unsigned index;
	struct gc_buf cands = GC_BUF_INIT(512);

	for (size_t i = 0; i < b->n_nodes; i++) {
		if (strcmp(b->info[i].id, name) == 0) {
			*out = i;
			gc_buf_release(&cands);
			return 0;
		}
	}
	if (parse_slot(name, &group_len, &index)) {
		for (size_t i = 0; i < b->n_nodes; i++) {
			const struct gc_boot_node *n = &b->info[i];

			if (strlen(n->group) == group_len &&
			    strncmp(n->group, name, group_len) == 0 && n->index == index) {
				*out = i;
				gc_buf_release(&cands);
				return 0;
			}
		}
		gc_buf_release(&cands);
		return gc_error_set(err, GC_ENOTFOUND,
				    "no running node '%s': group '%.*s' has no running node %u",
				    name, (int)group_len, name, index);
	}
	for (size_t i = 0; *name && i < b->n_nodes; i++) {
		if (strncmp(b->info[i].id, name, strlen(name)) != 0)
			continue;
		if (matches++ < 4)
			gc_buf_addf(&cands, "%s%s", matches > 1 ? ", " : "", b->info[i].id);
		found = i;
	}
	if (matches == 1) {
		*out = found;
		gc_buf_release(&cands);
		return 0;
	}
	if (matches > 1) {
		gc_error_set(err, GC_EINVALID, "node '%s' is ambiguous: it could be %s%s", name,
			     cands.data, matches > 4 ? ", ..." : "");
		gc_buf_release(&cands);
		return -1;
	}
	gc_buf_release(&cands);
	return gc_error_set(err, GC_ENOTFOUND,
			    "no running node '%s' (name an instance id, a prefix of one, or "
			    "GROUP/N)",
			    name);
}

/* Keeps the nodes whose keep[] is set, in their order. */
static void compact(struct gc_boot *b, const bool *keep_it)
{
	size_t k = 0;

	for (size_t i = 0; i < b->n_nodes; i++) {
		if (!keep_it[i]) {
			node_info_release(&b->info[i]);
			continue;
		}
		b->info[k] = b->info[i];
		b->nodes[k] = b->nodes[i];
		k++;
	}
	b->n_nodes = k;
}

int gc_boot_select(struct gc_boot *b, const char *const *names, size_t n, struct gc_error *err)
{
	bool *want = gc_xcalloc(b->n_nodes + 1, sizeof(*want));

	for (size_t i = 0; i < n; i++) {
		size_t at;

		if (gc_boot_find(b, names[i], &at, err) < 0) {
			free(want);
			return -1;
		}
		want[at] = true;
	}
	compact(b, want);
	free(want);
	return 0;
}

void gc_boot_keep_ids(struct gc_boot *b, const char *const *ids, size_t n)
{
	bool *want = gc_xcalloc(b->n_nodes + 1, sizeof(*want));

	for (size_t i = 0; i < b->n_nodes; i++)
		for (size_t k = 0; k < n && !want[i]; k++)
			want[i] = ids[k] && strcmp(ids[k], b->info[i].id) == 0;
	compact(b, want);
	free(want);
}

/* ---- steps ------------------------------------------------------------------------- */

static void add_step(struct gc_boot *b, const char *name, const char *script, uint64_t timeout_ms,
		     enum gc_step_rerun rerun)
{
	b->steps = gc_xreallocarray(b->steps, b->n_steps + 1, sizeof(*b->steps));
	b->steps[b->n_steps++] =
		(struct gc_runner_step){ .name = name,
					 .script = script,
					 .timeout_ms = timeout_ms,
					 .always = rerun == GC_STEP_RERUN_ALWAYS,
					 .per_boot = rerun == GC_STEP_RERUN_PER_BOOT };
}

/* The guard in front of a step's script (file is NAME.sh), or NULL for the other files. */
static const char *guard_of(const char *file, char *buf, size_t size)
{
	size_t len = strlen(file);
	char name[64];
	const struct gc_step_def *d;

	if (len < 4 || len - 3 >= sizeof(name) || strcmp(file + len - 3, ".sh") != 0)
		return NULL;
	snprintf(name, sizeof(name), "%.*s", (int)(len - 3), file);
	if (!(d = gc_step_find(name)))
		return NULL;
	switch (d->guard) {
	case GC_STEP_GUARD_GPU: snprintf(buf, size, gpu_guard, (int)(len - 3), file); return buf;
	case GC_STEP_GUARD_SMOKE: return smoke_guard;
	case GC_STEP_GUARD_NONE: break;
	}
	return NULL;
}

/*
 * Every embedded file, the steps' scripts with their guard in front: the runner puts
 * a step's script in NAME.sh next to the files, so the two must be the same text. Both
 * the full bootstrap and smoke alone upload exactly this set, so they share one stamp.
 */
static void add_files(struct gc_boot *b)
{
	b->files = gc_xcalloc(gc_bootstrap_nfiles + 1, sizeof(*b->files));
	for (size_t i = 0; i < gc_bootstrap_nfiles; i++) {
		const struct gc_bootstrap_file *f = &gc_bootstrap_files[i];
		char buf[sizeof(gpu_guard) + 64];
		const char *guard = guard_of(f->name, buf, sizeof(buf));
		struct gc_runner_file *rf = &b->files[i];

		rf->name = f->name;
		rf->data = f->data;
		rf->len = f->len;
		if (guard) {
			struct gc_buf t = GC_BUF_INIT(0);

			gc_buf_addstr(&t, guard);
			gc_buf_add(&t, f->data, f->len);
			rf->data = own(b, gc_buf_detach(&t, &rf->len));
		}
	}
	b->n_files = gc_bootstrap_nfiles;
}

/* The script of a step: its file, as add_files set it up. */
static const char *script_of(struct gc_boot *b, const char *step, struct gc_error *err)
{
	char file[64];

	snprintf(file, sizeof(file), "%s.sh", step);
	for (size_t i = 0; i < b->n_files; i++)
		if (strcmp(b->files[i].name, file) == 0)
			return b->files[i].data;
	gc_error_set(err, GC_EGENERIC, "the embedded script '%s' is missing", file);
	return NULL;
}

/* The interconnect of node n's group: rdma or standard (gc_fabric_interconnect; a type
 * without facts has no RDMA interfaces as far as auto goes). */
static const char *node_fabric(const struct gc_spec *spec, const struct gc_boot_node *n)
{
	static const struct gc_type_facts none;

	for (size_t i = 0; i < spec->n_groups; i++)
		if (strcmp(spec->groups[i].name, n->group) == 0)
			return gc_fabric_interconnect(&spec->groups[i],
						      n->have_facts ? &n->facts : &none) ==
					GC_INTERCONNECT_RDMA
				? "rdma"
				: "standard";
	return "standard";
}

bool gc_boot_step_wanted(const struct gc_boot *b, const struct gc_spec *spec,
			 const struct gc_step_def *d)
{
	if (d->wanted && !d->wanted(spec))
		return false;
	if (!d->node_fabric)
		return true;
	for (size_t i = 0; i < b->n_nodes; i++)
		if (strcmp(node_fabric(spec, &b->info[i]), "rdma") == 0)
			return true;
	return false;
}

/*
 * A row of the step table with its inputs from the spec. At the end of a full bootstrap
 * smoke runs when anything before it ran or the node rebooted since it last passed, so
 * re-applying to a ready cluster costs seconds (bench/README.md). The smoke command and
 * --replace-unhealthy force it; a forced run removes the marker first, so a failure
 * there makes the next apply test again.
 */
static int add_table_step(struct gc_boot *b, const struct gc_spec *spec,
			  const struct gc_step_def *d, struct gc_error *err)
{
	const char *script = script_of(b, d->name, err);
	const char *name = d->name;
	bool undo = false;

	if (!gc_boot_step_wanted(b, spec, d)) {
		/* not wanted: where it ran before, NAME-undo removes what it installed (the
		 * runner runs it only where the step's marker is, and says nothing elsewhere) */
		if (!d->undo)
			return 0;
		undo = true;
		name = own(b, gc_xasprintf("%s" GC_STEP_UNDO_SUFFIX, d->name));
	}
	if (!script)
		return -1;
	if (strcmp(d->name, GC_STEP_SMOKE) == 0)
		b->smoke_step = b->n_steps;
	add_step(b, name, script, 0, undo ? GC_STEP_RERUN_ON_CHANGE : d->rerun);
	if (undo) {
		b->steps[b->n_steps - 1].undoes = d->name;
		add_var(b, name, "UNDO", "1", true);
	}
	for (size_t k = 0; k < GC_STEP_MAX_INPUTS && d->inputs[k].var; k++) {
		char *value = d->inputs[k].value(spec);

		add_var(b, name, d->inputs[k].var, value, d->inputs[k].unhashed);
		free(value);
	}
	return 0;
}

/* The per-node inputs: the instance type's GPU count and model (for the steps spec wants),
 * and in a full bootstrap the group's fabric. */
static void add_node_vars(struct gc_boot *b, const struct gc_spec *spec, bool full)
{
	bool *fabric = gc_xcalloc(gc_n_steps, sizeof(*fabric));

	for (size_t s = 0; s < gc_n_steps; s++)
		fabric[s] = full && gc_steps[s].node_fabric &&
			gc_boot_step_wanted(b, spec, &gc_steps[s]);
	/* each node's variables live in one block, so the runner's pointers stay valid when
	 * nodes are compacted later */
	for (size_t i = 0; i < b->n_nodes; i++) {
		const struct gc_boot_node *n = &b->info[i];
		struct gc_runner_var *v;
		size_t k = 0;
		const char *gpus, *model;

		v = own(b, gc_xcalloc(1 + 3 * gc_n_steps, sizeof(*v)));
		for (size_t s = 0; s < gc_n_steps; s++)
			if (fabric[s])
				v[k++] = (struct gc_runner_var){ gc_steps[s].name, "FABRIC",
								 node_fabric(spec, n), false };
		b->nodes[i].vars = k ? v : NULL;
		b->nodes[i].n_vars = k;
		if (!n->have_facts)
			continue;
		gpus = own(b, gc_xasprintf("%u", n->facts.gpus));
		model = own(b, gc_xstrdup(n->facts.gpu_model));
		v[k++] = (struct gc_runner_var){ NULL, "GC_NODE_GPUS", gpus, false };
		for (size_t s = 0; s < gc_n_steps; s++) {
			if (!gc_steps[s].node_facts ||
			    (gc_steps[s].wanted && !gc_steps[s].wanted(spec)))
				continue;
			v[k++] = (struct gc_runner_var){ gc_steps[s].name, "EXPECT_GPUS", gpus,
							 false };
			if (model[0])
				v[k++] = (struct gc_runner_var){ gc_steps[s].name,
								 "EXPECT_GPU_MODEL", model, false };
		}
		b->nodes[i].vars = v;
		b->nodes[i].n_vars = k;
	}
	free(fabric);
}

int gc_boot_set_steps(struct gc_boot *b, const struct gc_spec *spec, enum gc_boot_mode mode,
		      const char *command, uint64_t timeout_ms, bool verbose, struct gc_error *err)
{
	if (b->n_steps)
		return gc_error_set(err, GC_EINVALID, "the steps are set already");
	if (mode == GC_BOOT_LOGIN || mode == GC_BOOT_NODES) /* ssh, hosts: no steps */
		return 0;
	if (verbose)
		add_var(b, NULL, "GC_VERBOSE", "1", true);
	if (mode == GC_BOOT_EXEC) {
		if (!command || !*command)
			return gc_error_set(err, GC_EINVALID, "no command to run");
		add_step(b, GC_BOOT_EXEC_STEP, own(b, gc_xstrdup(command)), timeout_ms,
			 GC_STEP_RERUN_ALWAYS);
		return 0;
	}
	add_files(b);
	add_node_vars(b, spec, mode != GC_BOOT_SMOKE);
	if (mode == GC_BOOT_SMOKE) /* the smoke command forces it (force_from) */
		return add_table_step(b, spec, gc_step_find(GC_STEP_SMOKE), err);

	for (size_t i = 0; i < gc_n_steps; i++)
		if (!gc_steps[i].after_user_steps && add_table_step(b, spec, &gc_steps[i], err) < 0)
			return -1;
	for (size_t i = 0; i < spec->bootstrap.n_steps; i++) {
		const struct gc_spec_step *st = &spec->bootstrap.steps[i];
		const char *name = own(b, gc_xasprintf(GC_STEP_USER_PREFIX "%s", st->name));
		const char *script = own(b, gc_xasprintf("set -euo pipefail\n%s\n", st->run));

		add_step(b, name, script, (uint64_t)st->timeout_s * 1000, GC_STEP_RERUN_ON_CHANGE);
	}
	for (size_t i = 0; i < gc_n_steps; i++)
		if (gc_steps[i].after_user_steps && add_table_step(b, spec, &gc_steps[i], err) < 0)
			return -1;
	return 0;
}

size_t gc_boot_step_index(const struct gc_boot *b, const char *name)
{
	for (size_t i = 0; i < b->n_steps; i++)
		if (strcmp(b->steps[i].name, name) == 0)
			return i;
	return SIZE_MAX;
}

void gc_boot_runner_opts(const struct gc_boot *b, struct gc_runner_opts *o)
{
	o->user = b->user;
	o->files = b->files;
	o->n_files = b->n_files;
	o->steps = b->steps;
	o->n_steps = b->n_steps;
	o->vars = b->vars;
	o->n_vars = b->n_vars;
}

/* ---- host keys --------------------------------------------------------------------- */

/*
 * One attempt for one node. Returns 1 when pinned, 0 to try again later, -1 on a hard
 * error (err set), -2 when this node's console will not give a key (fall back).
 */
static int pin_one(struct gc_boot *b, size_t i, struct gc_provider *p, struct gc_known_hosts *kh,
		   struct gc_error *last, struct gc_error *err)
{
	struct gc_boot_node *n = &b->info[i];
	char *console = NULL;
	enum gc_pin_outcome outcome;
	int rc;

	gc_error_init(last);
	if (gc_provider_console_output(p, n->id, &console, last) < 0) {
		if (last->code == GC_ENOTFOUND || gc_error_is_retryable(last->code))
			return 0;
		return -2;
	}
	rc = gc_known_hosts_pin_console(kh, n->host, b->port, n->id, console ? console : "",
					&outcome, last);
	free(console);
	if (rc == 0) {
		n->pin = GC_BOOT_PIN_CONSOLE;
		return 1;
	}
	if (last->code == GC_ENOTFOUND)
		return 0;
	if (last->code == GC_EAUTH || last->code == GC_EIO) {
		*err = *last;
		return gc_error_prefix(err, "%s (%s)", n->id, n->label);
	}
	return -2;
}

/*
 * Pins the key the instance was given at launch (clouds without console output: the
 * engine derived it, cloud-init installed it, our own tag on the instance says which).
 * The tag is only as trustworthy as the cloud's API, like the console output. Returns 1
 * when pinned, 0 when the tag holds no usable key (left to the other ways), -1 on a hard
 * error: a changed key, or the file.
 */
static int pin_tag(struct gc_boot *b, size_t i, struct gc_known_hosts *kh,
		   const struct gc_boot_pin_opts *o, struct gc_error *err)
{
	struct gc_boot_node *n = &b->info[i];
	char *block = gc_xasprintf("-----BEGIN SSH HOST KEY KEYS-----\n%s\n"
				   "-----END SSH HOST KEY KEYS-----\n",
				   n->host_key);
	struct gc_error e;
	int rc;

	gc_error_init(&e);
	rc = gc_known_hosts_pin_console(kh, n->host, b->port, n->id, block, NULL, &e);
	free(block);
	if (rc == 0) {
		n->pin = GC_BOOT_PIN_TAG;
		return 1;
	}
	if (e.code == GC_EAUTH || e.code == GC_EIO) {
		*err = e;
		return gc_error_prefix(err, "%s (%s)", n->id, n->label);
	}
	gc_log_warn(o->log, "%s (%s): the %s tag holds no usable key: %s", n->id, n->label,
		    GC_TAG_HOST_KEY, e.message);
	return 0;
}

/* The console pinning's state between two looks (gc_wait_until). */
struct pin_wait {
	struct gc_boot *b;
	struct gc_provider *p;
	struct gc_known_hosts *kh;
	const struct gc_boot_pin_opts *o;
	struct gc_error *last; /* per node: why its console gave no key yet */
	bool *given_up;	       /* per node: its console will not give a key */
	size_t pending;
	uint64_t start, wait_ms, retry_ms;
};

/* One look at every pending node's console: 0 when none is left to try or another look
 * would end past the wait, 1 to look again after retry_ms, -1 on a hard error. */
static int pin_look(void *arg, struct gc_error *err)
{
	struct pin_wait *w = arg;
	struct gc_cancel cancel = { w->o->cancelled, w->o->cancel_ctx };
	uint64_t el;

	for (size_t i = 0; i < w->b->n_nodes; i++) {
		int rc;

		if (w->b->info[i].pin != GC_BOOT_PIN_NONE || w->given_up[i])
			continue;
		if (gc_cancelled(&cancel))
			return gc_error_set(err, GC_ECANCELLED,
					    "cancelled while pinning host keys");
		rc = pin_one(w->b, i, w->p, w->kh, &w->last[i], err);
		if (rc == -1)
			return -1;
		if (rc == 1 || rc == -2) {
			w->given_up[i] = rc == -2;
			w->pending--;
		}
	}
	el = (gc_clock_now_ns(w->o->clock) - w->start) / GC_NS_PER_MS;
	return w->pending && el + w->retry_ms <= w->wait_ms ? 1 : 0;
}

int gc_boot_pin(struct gc_boot *b, struct gc_provider *p, struct gc_known_hosts *kh,
		const struct gc_boot_pin_opts *o, bool *out_tofu, struct gc_error *err)
{
	struct gc_cancel cancel = { o->cancelled, o->cancel_ctx };
	struct pin_wait w = {
		.b = b,
		.p = p,
		.kh = kh,
		.o = o,
		.wait_ms = o->console_wait_ms ? o->console_wait_ms : GC_BOOT_CONSOLE_WAIT_MS,
		.retry_ms = o->console_retry_ms ? o->console_retry_ms : GC_BOOT_CONSOLE_RETRY_MS,
		.start = gc_clock_now_ns(o->clock),
	};
	/* pin_look decides when to stop, so the wait itself has no deadline */
	struct gc_wait wait = { .clock = o->clock,
				.cancel = &cancel,
				.interval_ms = w.retry_ms,
				.what = "host keys in the console output" };
	bool console = p && gc_provider_check_caps(p, GC_CAP_CONSOLE_OUTPUT, NULL) == 0;
	uint64_t start = w.start;
	struct gc_error *last = gc_xcalloc(b->n_nodes + 1, sizeof(*last));
	size_t n_tofu = 0;
	int ret = -1;

	w.last = last;
	w.given_up = gc_xcalloc(b->n_nodes + 1, sizeof(*w.given_up));
	for (size_t i = 0; i < b->n_nodes; i++) {
		b->info[i].pin = GC_BOOT_PIN_NONE;
		if (gc_known_hosts_pinned(kh, b->info[i].host, b->port, b->info[i].id, false)) {
			b->info[i].pin = GC_BOOT_PIN_KNOWN;
			continue;
		}
		if (b->info[i].host_key) {
			int rc = pin_tag(b, i, kh, o, err);

			if (rc < 0)
				goto out;
			if (rc == 1)
				continue;
		}
		w.pending++;
	}
	if (console && w.pending && gc_wait_until(&wait, pin_look, &w, err) < 0)
		goto out;

	for (size_t i = 0; i < b->n_nodes; i++) {
		struct gc_boot_node *n = &b->info[i];
		char why[GC_ERROR_MSG_MAX + 64];

		if (n->pin != GC_BOOT_PIN_NONE)
			continue;
		if (!console)
			snprintf(why, sizeof(why),
				 "the cloud has no console output to pin it from");
		else if (last[i].code != GC_OK)
			snprintf(why, sizeof(why),
				 "no host key in its console output after %llu s (%s)",
				 (unsigned long long)((gc_clock_now_ns(o->clock) - start) /
						      GC_NS_PER_MS / 1000),
				 last[i].message);
		else
			snprintf(why, sizeof(why), "no host key in its console output");
		if (o->strict) {
			gc_error_set(err, GC_EAUTH,
				     "cannot pin the host key of %s (%s): %s, and strict host key "
				     "checking is on",
				     n->id, n->label, why);
			goto out;
		}
		n->pin = GC_BOOT_PIN_TOFU;
		n_tofu++;
		if (console)
			gc_log_warn(o->log,
				    "%s (%s): %s; trusting the key it shows on first connection "
				    "(--strict-host-keys refuses instead)",
				    n->id, n->label, why);
		else
			gc_log_info(o->log, "%s (%s): %s; trusting its key on first use", n->id,
				    n->label, why);
	}
	*out_tofu = n_tofu > 0;
	ret = 0;
out:
	free(last);
	free(w.given_up);
	return ret;
}

/* ---- the smoke report -------------------------------------------------------------- */

void gc_smoke_report_init(struct gc_smoke_report *r)
{
	memset(r, 0, sizeof(*r));
}

void gc_smoke_report_release(struct gc_smoke_report *r)
{
	if (!r)
		return;
	free(r->checks);
	free(r->gpus);
	gc_smoke_report_init(r);
}

/* Copies an untrusted string, cut to size, control characters as '?'. */
static void copy_clean(char *out, size_t size, const char *s)
{
	size_t i = 0;

	for (; s[i] && i + 1 < size; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
}

static int garbage(struct gc_smoke_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int garbage(struct gc_smoke_report *r, const char *fmt, ...)
{
	va_list ap;

	free(r->checks);
	free(r->gpus);
	r->checks = NULL;
	r->gpus = NULL;
	r->n_checks = r->n_gpus = 0;
	r->parsed = false;
	r->ok = false;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	return -1;
}

/* A figure: absent gives -1; otherwise a finite number >= 0. */
static int figure(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_object_get(obj, key);
	double d;

	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return -1;
	d = json_number_value(v);
	if (!isfinite(d) || d < 0 || d > 1e9)
		return -1;
	*out = d;
	return 0;
}

static int parse_checks(struct gc_smoke_report *r, const json_t *checks)
{
	size_t i;
	const json_t *c;

	if (!json_is_array(checks))
		return garbage(r, "the smoke report's 'checks' is not an array");
	if (json_array_size(checks) > GC_SMOKE_MAX_CHECKS)
		return garbage(r, "the smoke report has %zu checks, more than %d",
			       json_array_size(checks), GC_SMOKE_MAX_CHECKS);
	r->checks = gc_xcalloc(json_array_size(checks) + 1, sizeof(*r->checks));
	json_array_foreach(checks, i, c)
	{
		const json_t *name = json_object_get(c, "name");
		const json_t *ok = json_object_get(c, "ok");
		const json_t *detail = json_object_get(c, "detail");
		struct gc_smoke_check *k = &r->checks[r->n_checks];

		if (!json_is_object(c) || !json_is_string(name) || !json_is_boolean(ok) ||
		    (detail && !json_is_string(detail)))
			return garbage(r,
				       "check %zu of the smoke report is not {\"name\": string, "
				       "\"ok\": boolean, \"detail\": string}",
				       i);
		copy_clean(k->name, sizeof(k->name), json_string_value(name));
		k->ok = json_is_true(ok);
		copy_clean(k->detail, sizeof(k->detail), detail ? json_string_value(detail) : "");
		r->n_checks++;
	}
	return 0;
}

static int parse_gpus(struct gc_smoke_report *r, const json_t *gpus)
{
	size_t i;
	const json_t *g;

	if (!gpus || json_is_null(gpus))
		return 0;
	if (!json_is_array(gpus))
		return garbage(r, "the smoke report's 'gpus' is not an array");
	if (json_array_size(gpus) > GC_SMOKE_MAX_GPUS)
		return garbage(r, "the smoke report lists %zu GPUs, more than %d",
			       json_array_size(gpus), GC_SMOKE_MAX_GPUS);
	r->gpus = gc_xcalloc(json_array_size(gpus) + 1, sizeof(*r->gpus));
	json_array_foreach(gpus, i, g)
	{
		struct gc_smoke_gpu *out = &r->gpus[r->n_gpus];
		const json_t *index, *name, *mem;
		double m;

		if (!json_is_object(g))
			return garbage(r, "GPU %zu of the smoke report is not an object", i);
		index = json_object_get(g, "index");
		name = json_object_get(g, "name");
		mem = json_object_get(g, "memory_mib");
		if ((index && !json_is_integer(index)) || (name && !json_is_string(name)) ||
		    (mem && !json_is_number(mem)))
			return garbage(
				r, "GPU %zu of the smoke report has a field of the wrong type", i);
		out->index = (int)i;
		if (index) {
			json_int_t x = json_integer_value(index);

			if (x < 0 || x > 1023)
				return garbage(r, "GPU %zu of the smoke report has index %lld", i,
					       (long long)x);
			out->index = (int)x;
		}
		copy_clean(out->name, sizeof(out->name), name ? json_string_value(name) : "");
		if (figure(g, "memory_mib", &m) < 0 || figure(g, "h2d_gbps", &out->h2d_gbps) < 0 ||
		    figure(g, "d2h_gbps", &out->d2h_gbps) < 0 ||
		    figure(g, "d2d_gbps", &out->d2d_gbps) < 0 ||
		    figure(g, "gemm_tflops", &out->gemm_tflops) < 0)
			return garbage(r,
				       "GPU %zu of the smoke report has a figure that is not a "
				       "finite number from 0 to 1e9",
				       i);
		out->memory_mib = m < 0 ? -1 : (int64_t)m;
		r->n_gpus++;
	}
	return 0;
}

/* The failed checks, "ecc: GPU 0: ...; xid: ...", as the reason. */
static void failed_reason(struct gc_smoke_report *r)
{
	struct gc_buf s = GC_BUF_INIT(sizeof(r->reason) - 1);

	for (size_t i = 0; i < r->n_checks; i++) {
		if (r->checks[i].ok)
			continue;
		if (gc_buf_addf(&s, "%s%s: %s", s.len ? "; " : "", r->checks[i].name,
				r->checks[i].detail) < 0)
			break;
	}
	snprintf(r->reason, sizeof(r->reason), "%s", s.data);
	gc_buf_release(&s);
}

int gc_smoke_report_parse(struct gc_smoke_report *r, const char *text, size_t len, int exit_status)
{
	json_t *doc = NULL, *v;
	json_error_t jerr;
	bool all_ok = true;
	int ret = -1;

	free(r->checks);
	free(r->gpus);
	gc_smoke_report_init(r);
	r->ran = true;
	if (!text || len == 0)
		return garbage(r, "the smoke test printed nothing (exit %d)", exit_status);
	if (len > GC_SMOKE_OUTPUT_MAX)
		return garbage(r, "the smoke test printed %zu bytes, more than a report can be",
			       len);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return garbage(r, "the smoke test printed no valid JSON document (line %d: %s)",
			       jerr.line, jerr.text);
	if (!json_is_object(doc)) {
		garbage(r, "the smoke report is not a JSON object");
		goto out;
	}
	v = json_object_get(doc, "simulated");
	if (v && !json_is_boolean(v)) {
		garbage(r, "the smoke report's 'simulated' is not a boolean");
		goto out;
	}
	r->simulated = json_is_true(v);
	v = json_object_get(doc, "error");
	if (v) {
		char msg[400];

		copy_clean(msg, sizeof(msg), json_is_string(v) ? json_string_value(v) : "?");
		garbage(r, "the smoke program failed: %s", msg);
		goto out;
	}
	v = json_object_get(doc, "ok");
	if (!json_is_boolean(v)) {
		garbage(r, "the smoke report has no boolean 'ok'");
		goto out;
	}
	if (parse_checks(r, json_object_get(doc, "checks")) < 0 ||
	    parse_gpus(r, json_object_get(doc, "gpus")) < 0)
		goto out;
	if ((v = json_object_get(doc, "driver")) && json_is_string(v))
		copy_clean(r->driver, sizeof(r->driver), json_string_value(v));
	if ((v = json_object_get(doc, "cuda_runtime")) && json_is_string(v))
		copy_clean(r->cuda_runtime, sizeof(r->cuda_runtime), json_string_value(v));
	r->parsed = true;
	for (size_t i = 0; i < r->n_checks; i++)
		all_ok &= r->checks[i].ok;
	r->ok = json_is_true(json_object_get(doc, "ok")) && all_ok && r->n_checks > 0 &&
		exit_status == 0;
	if (!r->ok) {
		failed_reason(r);
		if (!r->reason[0] && r->n_checks == 0)
			snprintf(r->reason, sizeof(r->reason), "the smoke report has no checks");
		else if (!r->reason[0] && exit_status != 0)
			snprintf(r->reason, sizeof(r->reason),
				 "the smoke test exited %d although its report says ok",
				 exit_status);
		else if (!r->reason[0])
			snprintf(r->reason, sizeof(r->reason), "the smoke report says not ok");
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

void gc_smoke_report_earlier(struct gc_smoke_report *r)
{
	free(r->checks);
	free(r->gpus);
	gc_smoke_report_init(r);
	r->ok = true;
	r->earlier = true;
}

void gc_smoke_report_not_run(struct gc_smoke_report *r, const char *reason)
{
	free(r->checks);
	free(r->gpus);
	gc_smoke_report_init(r);
	copy_clean(r->reason, sizeof(r->reason), reason);
}
