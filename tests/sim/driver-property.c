/*
 * driver-property.c: the client-token property test of issue 18 (sim.property.<cloud>).
 * The engine runs in-process against the cloud's real driver and the in-process emulator
 * (driver-fixture.h), on a fake clock that ticks the emulator's world at every sleep, so
 * nothing waits for real. Each sequence is a random mix of what happens to a cluster:
 * nodes lost from outside (a terminate through the emulator: preemption looks the same),
 * `apply --replace-unhealthy` (gc_engine_terminate, then apply), `scale workers=N`
 * (including 0 and back), TTL and tag changes, time passing, an apply interrupted right
 * after its first launch, and plain applies. After every apply that was not interrupted:
 * no error and exactly the wanted count alive (a duplicate launch shows as one more); an
 * interrupted one never leaves more than wanted. Each sequence ends with an apply that must
 * converge, then destroy, after which nothing of the cluster is left in the emulator
 * (instances, key pairs, security groups). docs/internals/executor.md, "Client tokens".
 *
 * GC_PROPERTY_SEED (default 18003) and GC_PROPERTY_SEQUENCES (default 200) choose the run;
 * the seed is printed at the start and with every failure, with the sequence's steps.
 * Usage: driver-property aws|alibaba|tencent
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/engine.h"
#include "core/plan.h"
#include "core/provider.h"
#include "core/spec.h"
#include "driver-alibaba.h"
#include "driver-aws.h"
#include "driver-fixture.h"
#include "driver-tencent.h"
#include "sim/sim.h"

static const struct drv_cloud *const clouds[] = { &drv_aws, &drv_alibaba, &drv_tencent };
static const struct drv_cloud *cloud;

#define PCLUSTER  "prop"
#define MAX_COUNT 3

/* ---- the fake clock the engine sleeps on: each sleep ticks the emulator ------------ */

static void tick_sleep(void *ctx, uint64_t ns)
{
	(void)ctx;
	fc.now += ns;
	sim_world_lock(sim.world);
	sim_world_tick(sim.world);
	sim_world_unlock(sim.world);
}

static const struct gc_clock ticking = { fake_now, tick_sleep, &fc };

/* the engine's wall clock is the emulator's, so expires-at and the cloud timers agree */
static int64_t world_wall(void *ctx)
{
	(void)ctx;
	return sim_world_wall(sim.world);
}

/* ---- the engine's environment: the fixture's, plus its own state directory ---------- */

static char state_dir[160];

static const char *prop_lookup(void *ctx, const char *name)
{
	if (!strcmp(name, "GPUCLUSTER_STATE_DIR"))
		return state_dir;
	return env_lookup(ctx, name);
}

static const struct gc_spec_env prop_env = { prop_lookup, &envv };

/* ---- one sequence ----------------------------------------------------------------- */

static uint64_t rng;

static unsigned dice(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct seq {
	unsigned index;
	unsigned count;	  /* the spec's count */
	unsigned ttl_h;	  /* 0: no lifecycle.ttl */
	unsigned tag;	  /* the value of the spec's tag "rev" */
	bool cancel;	  /* the interrupted apply's cancel flag */
	bool interrupt;	  /* cancel after the first launch */
	char steps[2048]; /* what happened, for a failure's message */
	struct gc_spec *spec;
	struct gc_engine e;
	bool up;
};

struct totals {
	unsigned sequences, applies, duplicates, leaks, wedged;
};

static struct totals tot;
static unsigned long long seed;

static void step(struct seq *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step(struct seq *s, const char *fmt, ...)
{
	size_t len = strlen(s->steps);
	va_list ap;

	if (len + 2 >= sizeof(s->steps))
		return;
	if (len)
		s->steps[len++] = ' ';
	va_start(ap, fmt);
	vsnprintf(s->steps + len, sizeof(s->steps) - len, fmt, ap);
	va_end(ap);
}

static void on_event(void *ctx, const struct gc_engine_event *ev)
{
	struct seq *s = ctx;

	if (s->interrupt && ev->kind == GC_EV_CREATED)
		s->cancel = true;
}

static bool is_cancelled(void *ctx)
{
	return ((struct seq *)ctx)->cancel;
}

static struct gc_engine_opts opts_of(struct seq *s)
{
	struct gc_engine_opts o = { 0 };

	o.cancelled = is_cancelled;
	o.cancel_ctx = s;
	o.progress = on_event;
	o.progress_ctx = s;
	o.poll_ms = 5000;
	o.wait_timeout_ms = 600000;
	return o;
}

/* (Re)loads the spec from the sequence's count, TTL and tag, and the engine on it. */
static void load(struct seq *s)
{
	char yaml[1024], ttl[64] = "";
	struct gc_diags diags;
	struct gc_error err;

	if (s->ttl_h)
		snprintf(ttl, sizeof(ttl), "lifecycle: {ttl: %uh}\n", s->ttl_h);
	snprintf(yaml, sizeof(yaml),
		 "name: " PCLUSTER "\n"
		 "provider: {name: %s, region: %s}\n"
		 "ssh: {user: ubuntu, allow_from: [10.1.2.3/32]}\n"
		 "tags: {rev: r%u}\n"
		 "node_groups:\n"
		 "  - name: workers\n"
		 "    count: %u\n"
		 "    instance_types: [%s]\n"
		 "    zones: [%s]\n"
		 "    image: ubuntu-22.04\n"
		 "%s",
		 cloud->name, cloud->region, s->tag, s->count, cloud->type, cloud->launch_zone,
		 ttl);
	if (s->up)
		gc_engine_release(&s->e);
	s->up = false;
	gc_spec_free(s->spec);
	s->spec = NULL;
	gc_diags_init(&diags, "prop.yaml");
	gc_error_init(&err);
	if (gc_spec_load_buffer(&s->spec, "prop.yaml", yaml, strlen(yaml), NULL, &diags, &err))
		fail_msg("spec: %s", err.message);
	gc_diags_release(&diags);
	if (gc_engine_init(&s->e, s->spec, prov, &prop_env, NULL, &err) != 0)
		fail_msg("engine: %s", err.message);
	s->e.clock = &ticking;
	s->e.wall = world_wall;
	s->up = true;
}

/* The cluster's instances in the emulator that cost money (pending or running). */
static unsigned alive(void)
{
	struct sim_instance **all;
	size_t n = 0;
	unsigned k = 0;

	sim_world_lock(sim.world);
	n = sim_world_list(sim.world, cloud->frontend, NULL, &all);
	for (size_t i = 0; i < n; i++) {
		const char *c = sim_tags_get(&all[i]->tags, GC_TAG_CLUSTER);

		if (c && !strcmp(c, PCLUSTER) &&
		    (all[i]->state == SIM_PENDING || all[i]->state == SIM_RUNNING))
			k++;
	}
	sim_world_unlock(sim.world);
	free(all);
	return k;
}

/* The id of the k-th (mod the number) alive instance of the cluster, or "" for none. */
static void pick(unsigned k, char out[SIM_ID_MAX], bool terminate)
{
	struct sim_instance **all, *live[64];
	size_t n = 0, m = 0;

	out[0] = '\0';
	sim_world_lock(sim.world);
	n = sim_world_list(sim.world, cloud->frontend, NULL, &all);
	for (size_t i = 0; i < n && m < 64; i++) {
		const char *c = sim_tags_get(&all[i]->tags, GC_TAG_CLUSTER);

		if (c && !strcmp(c, PCLUSTER) &&
		    (all[i]->state == SIM_PENDING || all[i]->state == SIM_RUNNING))
			live[m++] = all[i];
	}
	if (m) {
		snprintf(out, SIM_ID_MAX, "%s", live[k % m]->id);
		if (terminate)
			sim_world_terminate(sim.world, live[k % m]);
	}
	sim_world_unlock(sim.world);
	free(all);
}

static bool failed_seq;

static void report(struct seq *s, const char *what, const struct gc_error *err)
{
	print_message("sim.property.%s: FAIL in sequence %u (GC_PROPERTY_SEED=%llu): %s%s%s\n"
		      "  steps: %s\n",
		      cloud->name, s->index, seed, what, err ? ": " : "", err ? err->message : "",
		      s->steps);
	failed_seq = true;
}

/* plan (with a count override when want != the spec's) and apply; checks the outcome */
static void apply(struct seq *s, unsigned want, bool interrupt)
{
	const char *names[1] = { "workers" };
	struct gc_instance_list live;
	struct gc_engine_opts o = opts_of(s);
	struct gc_engine_report rep;
	struct gc_plan plan;
	struct gc_error err;
	unsigned now;
	int rc;

	s->interrupt = interrupt;
	s->cancel = false;
	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	gc_engine_report_init(&rep);
	gc_error_init(&err);
	rc = gc_engine_plan(&s->e, &plan, &live, want != s->count ? names : NULL,
			    want != s->count ? &want : NULL, want != s->count ? 1 : 0, &err);
	if (rc == 0)
		rc = gc_engine_apply(&s->e, &plan, &o, &rep, &err);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	gc_engine_report_release(&rep);
	s->interrupt = false;
	s->cancel = false;
	tot.applies++;
	now = alive();
	if (now > want) {
		tot.duplicates++;
		report(s, "more instances alive than wanted", NULL);
		print_message("  %u alive, %u wanted\n", now, want);
		return;
	}
	if (interrupt)
		return;
	if (rc != 0 || now != want) {
		tot.wedged++;
		report(s, rc ? "apply failed" : "apply did not converge", rc ? &err : NULL);
		print_message("  %u alive, %u wanted\n", now, want);
	}
}

static void terminate_one(struct seq *s)
{
	struct gc_engine_opts o = opts_of(s);
	struct gc_engine_report rep;
	struct gc_error err;
	char id[SIM_ID_MAX];
	const char *ids[1] = { id };

	pick(dice(MAX_COUNT), id, false);
	if (!id[0])
		return;
	gc_engine_report_init(&rep);
	gc_error_init(&err);
	if (gc_engine_terminate(&s->e, ids, 1, &o, &rep, &err) != 0) {
		tot.wedged++;
		report(s, "terminate (--replace-unhealthy) failed", &err);
	}
	gc_engine_report_release(&rep);
}

/* What is left of the cluster in the emulator after destroy: instances not terminated,
 * key pairs and security groups carrying its tag or its name. */
static unsigned leftovers(void)
{
	struct sim_instance **insts;
	struct sim_keypair **kps;
	struct sim_secgroup **sgs;
	size_t n;
	unsigned k = 0;

	sim_world_lock(sim.world);
	n = sim_world_list(sim.world, cloud->frontend, NULL, &insts);
	for (size_t i = 0; i < n; i++) {
		const char *c = sim_tags_get(&insts[i]->tags, GC_TAG_CLUSTER);

		if (c && !strcmp(c, PCLUSTER) && insts[i]->state != SIM_TERMINATED)
			k++;
	}
	free(insts);
	n = sim_world_list_keys(sim.world, cloud->frontend, NULL, &kps);
	for (size_t i = 0; i < n; i++)
		if (strstr(kps[i]->name, "gpucluster-" PCLUSTER) ||
		    sim_tags_get(&kps[i]->tags, GC_TAG_CLUSTER))
			k++;
	free(kps);
	n = sim_world_list_sgs(sim.world, cloud->frontend, NULL, &sgs);
	for (size_t i = 0; i < n; i++)
		if (strstr(sgs[i]->name, "gpucluster-" PCLUSTER) ||
		    sim_tags_get(&sgs[i]->tags, GC_TAG_CLUSTER))
			k++;
	free(sgs);
	sim_world_unlock(sim.world);
	return k;
}

static void destroy(struct seq *s)
{
	struct gc_engine_opts o = opts_of(s);
	struct gc_engine_report rep;
	struct gc_error err;
	unsigned left;

	gc_engine_report_init(&rep);
	gc_error_init(&err);
	if (gc_engine_destroy(&s->e, &o, &rep, &err) != 0) {
		tot.leaks++;
		report(s, "destroy failed", &err);
	}
	gc_engine_report_release(&rep);
	if ((left = leftovers()) != 0) {
		tot.leaks++;
		report(s, "resources left after destroy", NULL);
		print_message("  %u left\n", left);
	}
}

static void run_sequence(unsigned index)
{
	struct seq s;
	unsigned n_ops;

	memset(&s, 0, sizeof(s));
	s.index = index;
	rng = (seed * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)index + 1) * 0xbf58476d1ce4e5b9ull;
	if (!rng)
		rng = 1;
	s.count = 1 + dice(MAX_COUNT);
	s.ttl_h = dice(2) ? 2 + dice(2) : 0;
	load(&s);
	step(&s, "count=%u ttl=%uh apply", s.count, s.ttl_h);
	apply(&s, s.count, false);
	n_ops = 3 + dice(8);
	for (unsigned i = 0; i < n_ops && !failed_seq; i++) {
		char id[SIM_ID_MAX];
		unsigned want;

		switch (dice(9)) {
		case 0: /* a node lost from outside, or preempted */
		case 1:
			pick(dice(MAX_COUNT), id, true);
			step(&s, "lose(%s)", id[0] ? id : "-");
			break;
		case 2: /* apply --replace-unhealthy */
			step(&s, "replace-unhealthy");
			terminate_one(&s);
			apply(&s, s.count, false);
			break;
		case 3: /* scale workers=N, 0 included */
			want = dice(MAX_COUNT + 1);
			step(&s, "scale=%u", want);
			apply(&s, want, false);
			break;
		case 4: /* lifecycle.ttl changed (or added, or removed) */
			s.ttl_h = dice(3) ? 2 + dice(3) : 0;
			step(&s, "ttl=%uh", s.ttl_h);
			load(&s);
			break;
		case 5: /* a tag changed */
			s.tag++;
			step(&s, "tag=r%u", s.tag);
			load(&s);
			break;
		case 6: /* time passes (below any TTL) */
			want = 1 + dice(1800);
			step(&s, "+%us", want);
			fc.now += (uint64_t)want * 1000 * MS;
			sim_world_lock(sim.world);
			sim.world->wall_offset_s += want;
			sim_world_tick(sim.world);
			sim_world_unlock(sim.world);
			break;
		case 7: /* an apply interrupted after its first launch */
			step(&s, "interrupted-apply");
			apply(&s, s.count, true);
			break;
		default:
			step(&s, "apply");
			apply(&s, s.count, false);
			break;
		}
	}
	if (!failed_seq) {
		step(&s, "apply");
		apply(&s, s.count, false);
	}
	step(&s, "destroy");
	destroy(&s);
	if (s.up)
		gc_engine_release(&s.e);
	gc_spec_free(s.spec);
	tot.sequences++;
	/* the next sequence starts from an empty world (the tokens forgotten with it) */
	sim_world_lock(sim.world);
	sim_world_reset(sim.world);
	sim_world_unlock(sim.world);
}

static unsigned long long env_number(const char *name, unsigned long long def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return def;
	n = strtoull(v, &end, 10);
	return *end ? def : n;
}

static int test_setup(void **state)
{
	if (drv_setup(state, cloud) != 0)
		return -1;
	snprintf(state_dir, sizeof(state_dir), "%s/state", tmpdir);
	return 0;
}

/* rm -r of the state directory the engine made (plain files and directories) */
static void rm_state(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		print_message("cannot remove %s\n", path);
}

static int prop_teardown(void **state)
{
	rm_state(state_dir);
	return test_teardown(state);
}

static void test_property(void **state)
{
	unsigned long long n = env_number("GC_PROPERTY_SEQUENCES", 200);

	(void)state;
	seed = env_number("GC_PROPERTY_SEED", 18003);
	print_message("sim.property.%s: GC_PROPERTY_SEED=%llu GC_PROPERTY_SEQUENCES=%llu\n",
		      cloud->name, seed, n);
	memset(&tot, 0, sizeof(tot));
	failed_seq = false;
	for (unsigned i = 0; i < n && !failed_seq; i++)
		run_sequence(i);
	print_message("sim.property.%s: %u sequences, %u applies: %u duplicates, %u leaks, "
		      "%u wedged (seed %llu)\n",
		      cloud->name, tot.sequences, tot.applies, tot.duplicates, tot.leaks,
		      tot.wedged, seed);
	assert_false(failed_seq);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_property, test_setup, prop_teardown),
	};
	char group[64];

	for (size_t i = 0; argc == 2 && i < sizeof(clouds) / sizeof(clouds[0]); i++)
		if (!strcmp(argv[1], clouds[i]->name))
			cloud = clouds[i];
	if (!cloud) {
		fprintf(stderr, "usage: driver-property aws|alibaba|tencent\n");
		return 2;
	}
	snprintf(group, sizeof(group), "sim.property.%s", cloud->name);
	return _cmocka_run_group_tests(group, tests, 1, NULL, NULL);
}
