/*
 * test-world.c: the emulator's state and life cycle, without any wire format: launch,
 * pending -> running -> shutting-down -> terminated -> forgotten on a fake clock, the
 * Tencent recycle bin, cloud-side release timers, tokens, key pairs, security groups,
 * and the catalogue's facts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/keygen.h"
#include "fake-clock.h"
#include "sim/catalog.h"
#include "sim/quota.h"
#include "sim/world.h"

static const struct sim_timing timing = { 1000, 500, 60000 };

static struct sim_world *new_world(void)
{
	fc.now = 1000 * MS;
	return sim_world_new(&timing, 42, &fake);
}

static struct sim_instance **launch(struct sim_world *w, enum sim_cloud c, unsigned count,
				    size_t *n)
{
	struct sim_tags tags = { 0 };
	struct sim_instance **out = NULL;
	char res[SIM_ID_MAX];
	struct sim_launch l = { 0 };

	sim_tags_set(&tags, "gpucluster:cluster", "demo");
	l.cloud = c;
	l.region = c == SIM_AWS ? "us-east-1" : c == SIM_ALIBABA ? "cn-hangzhou" : "ap-guangzhou";
	l.zone = "z";
	l.type = c == SIM_AWS ? "g5.xlarge" : "x";
	l.image = "img";
	l.tags = &tags;
	l.count = count;
	*n = 0;
	sim_world_launch(w, &l, &out, n, res);
	sim_tags_release(&tags);
	return out;
}

/* sim_quota_launch's verdict for count more of type in zone, of the market */
static enum sim_fault_kind at_launch(struct sim_world *w, enum sim_cloud c, const char *region,
				     const char *zone, const char *type, bool spot, unsigned count)
{
	struct sim_fault_hit hit = { 0 };

	sim_quota_launch(w, c, region, zone, type, spot, count, &hit);
	assert_true(hit.kind == SIM_FAULT_NONE || hit.kind == SIM_FAULT_QUOTA ||
		    hit.kind == SIM_FAULT_CAPACITY);
	assert_true(hit.kind != SIM_FAULT_QUOTA || hit.spot == spot);
	return hit.kind;
}

/* The account's quota and stock at launch: each cloud's unit and scope (sim/quota.h). */
static void test_quota_at_launch(void **state)
{
	struct sim_world *w = new_world();
	struct gc_error err;
	size_t n;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(sim_quota_set("aws:on-demand=8", &err), 0);
	free(launch(w, SIM_AWS, 1, &n)); /* a g5.xlarge: 4 of the G and VT group's 8 vCPUs */
	assert_int_equal(at_launch(w, SIM_AWS, "us-east-1", "z", "g5.xlarge", false, 1),
			 SIM_FAULT_NONE);
	assert_int_equal(at_launch(w, SIM_AWS, "us-east-1", "z", "g5.xlarge", false, 2),
			 SIM_FAULT_QUOTA);
	assert_int_equal(at_launch(w, SIM_AWS, "us-east-1", "z", "g5.xlarge", true, 2),
			 SIM_FAULT_NONE); /* the spot quota is apart */
	assert_int_equal(at_launch(w, SIM_AWS, "eu-west-1", "z", "g5.xlarge", false, 2),
			 SIM_FAULT_NONE); /* so is another region's */
	/* Tencent counts instances per zone */
	assert_int_equal(sim_quota_set("tencent:on-demand=1", &err), 0);
	free(launch(w, SIM_TENCENT, 1, &n));
	assert_int_equal(at_launch(w, SIM_TENCENT, "ap-guangzhou", "z", "x", false, 1),
			 SIM_FAULT_QUOTA);
	assert_int_equal(at_launch(w, SIM_TENCENT, "ap-guangzhou", "y", "x", false, 1),
			 SIM_FAULT_NONE);
	/* a sold-out pair is a stock-out, whatever the quota */
	assert_int_equal(sim_quota_set("tencent:sold-out=y/x", &err), 0);
	assert_int_equal(at_launch(w, SIM_TENCENT, "ap-guangzhou", "y", "x", false, 1),
			 SIM_FAULT_CAPACITY);
	sim_quota_clear();
	assert_int_equal(at_launch(w, SIM_AWS, "us-east-1", "z", "g5.xlarge", false, 2),
			 SIM_FAULT_NONE);
	sim_world_free(w);
}

static void test_life_cycle(void **state)
{
	struct sim_world *w = new_world();
	struct sim_instance **got, **list;
	size_t n;
	char id[SIM_ID_MAX];

	(void)state;
	sim_world_lock(w);
	got = launch(w, SIM_AWS, 3, &n);
	assert_int_equal(n, 3);
	assert_true(strncmp(got[0]->id, "i-", 2) == 0);
	assert_int_equal(strlen(got[0]->id), 2 + 17);
	assert_string_not_equal(got[0]->id, got[1]->id);
	assert_string_equal(sim_tags_get(&got[2]->tags, "gpucluster:cluster"), "demo");
	assert_string_equal(got[0]->reservation, got[2]->reservation);
	assert_int_equal(got[0]->state, SIM_PENDING);
	snprintf(id, sizeof(id), "%s", got[0]->id);

	fc.now += 999 * MS;
	sim_world_tick(w);
	assert_int_equal(got[0]->state, SIM_PENDING);
	fc.now += 1 * MS;
	sim_world_tick(w);
	assert_int_equal(got[0]->state, SIM_RUNNING);
	assert_string_equal(sim_state_name(SIM_AWS, got[0]->state), "running");

	sim_world_terminate(w, got[0]);
	assert_int_equal(got[0]->state, SIM_SHUTTING_DOWN);
	sim_world_terminate(w, got[0]); /* idempotent, as EC2's is */
	assert_int_equal(got[0]->state, SIM_SHUTTING_DOWN);
	fc.now += 500 * MS;
	sim_world_tick(w);
	assert_int_equal(got[0]->state, SIM_TERMINATED);
	/* EC2 keeps it listed for terminated_visible_ms, then forgets it */
	assert_non_null(sim_world_instance(w, SIM_AWS, id));
	fc.now += 60000 * MS;
	sim_world_tick(w);
	assert_null(sim_world_instance(w, SIM_AWS, id));
	assert_int_equal(sim_world_list(w, SIM_AWS, "us-east-1", &list), 2);
	assert_true(list[0]->seq < list[1]->seq);
	free(list);
	assert_int_equal(sim_world_list(w, SIM_AWS, "eu-west-1", &list), 0);
	free(list);
	free(got);
	sim_world_unlock(w);
	sim_world_free(w);
}

static void test_other_clouds_forget_at_once(void **state)
{
	struct sim_world *w = new_world();
	struct sim_instance **got;
	size_t n;

	(void)state;
	got = launch(w, SIM_TENCENT, 1, &n);
	assert_true(strncmp(got[0]->id, "ins-", 4) == 0);
	assert_int_equal(strlen(got[0]->id), 4 + 8);
	sim_world_terminate(w, got[0]);
	free(got);
	fc.now += 500 * MS;
	sim_world_tick(w);
	assert_int_equal(w->n_instances, 0);
	sim_world_free(w);
}

static void test_recycle_bin(void **state)
{
	struct sim_world *w = new_world();
	struct sim_instance **got;
	size_t n;

	(void)state;
	w->tencent_recycle = true;
	got = launch(w, SIM_TENCENT, 1, &n);
	sim_world_terminate(w, got[0]);
	assert_int_equal(got[0]->state, SIM_RECYCLED);
	assert_string_equal(sim_state_name(SIM_TENCENT, got[0]->state), "SHUTDOWN");
	fc.now += 10000 * MS;
	sim_world_tick(w);
	assert_int_equal(got[0]->state, SIM_RECYCLED); /* stays in the bin */
	sim_world_terminate(w, got[0]);
	assert_int_equal(got[0]->state, SIM_SHUTTING_DOWN);
	free(got);
	/* other clouds ignore the bin */
	got = launch(w, SIM_ALIBABA, 1, &n);
	sim_world_terminate(w, got[0]);
	assert_int_equal(got[0]->state, SIM_SHUTTING_DOWN);
	free(got);
	sim_world_free(w);
}

static void test_release_timer(void **state)
{
	struct sim_world *w = new_world();
	struct sim_instance **got;
	size_t n;

	(void)state;
	w->tencent_recycle = true; /* a release timer destroys even with the bin on */
	got = launch(w, SIM_TENCENT, 1, &n);
	got[0]->release_at_wall = sim_world_wall(w) + 3600;
	fc.now += 2000 * MS;
	sim_world_tick(w);
	assert_int_equal(got[0]->state, SIM_RUNNING);
	w->wall_offset_s = 3600;
	sim_world_tick(w);
	assert_int_equal(got[0]->state, SIM_SHUTTING_DOWN);
	assert_non_null(strstr(got[0]->state_reason, "ScheduledRelease"));
	free(got);
	sim_world_free(w);
}

static void test_tokens(void **state)
{
	struct sim_world *w = new_world();
	struct sim_instance **got;
	struct sim_token *t;
	size_t n;

	(void)state;
	got = launch(w, SIM_AWS, 2, &n);
	assert_null(sim_world_token(w, SIM_AWS, "us-east-1", "tok"));
	sim_world_remember_token(w, SIM_AWS, "us-east-1", "tok", "fp", got[0]->reservation, got, n);
	t = sim_world_token(w, SIM_AWS, "us-east-1", "tok");
	assert_non_null(t);
	assert_int_equal(t->n_ids, 2);
	assert_string_equal(t->ids[1], got[1]->id);
	/* tokens are per cloud and region */
	assert_null(sim_world_token(w, SIM_AWS, "us-west-2", "tok"));
	assert_null(sim_world_token(w, SIM_TENCENT, "us-east-1", "tok"));
	free(got);
	sim_world_reset(w);
	assert_null(sim_world_token(w, SIM_AWS, "us-east-1", "tok"));
	assert_int_equal(w->n_instances, 0);
	sim_world_free(w);
}

static void test_keys_and_groups(void **state)
{
	struct sim_world *w = new_world();
	struct gc_keypair kp;
	struct gc_buf line = GC_BUF_INIT(4096);
	struct gc_error err;
	struct sim_keypair *k;
	struct sim_secgroup *sg;
	struct sim_rule rule = { .protocol = "tcp",
				 .from_port = 22,
				 .to_port = 22,
				 .cidr = "203.0.113.7/32",
				 .description = "ssh" };
	struct sim_rule members = { .protocol = "-1", .from_port = -1, .to_port = -1 };
	struct sim_instance **got;
	char sgid[SIM_ID_MAX];
	size_t n;

	(void)state;
	gc_keypair_init(&kp);
	assert_int_equal(gc_keypair_generate(&kp, "test", &err), 0);
	assert_int_equal(gc_keypair_public_line(&line, &kp), 0);
	k = sim_world_import_key(w, SIM_TENCENT, "ap-guangzhou", "demo_key", line.data, NULL, &err);
	assert_non_null(k);
	assert_true(strncmp(k->id, "skey-", 5) == 0);
	assert_true(strncmp(k->fingerprint, "SHA256:", 7) == 0);
	assert_ptr_equal(sim_world_keypair(w, SIM_TENCENT, "ap-guangzhou", k->id), k);
	assert_ptr_equal(sim_world_keypair(w, SIM_TENCENT, NULL, "demo_key"), k);
	assert_null(sim_world_keypair(w, SIM_TENCENT, "ap-shanghai", "demo_key"));
	assert_null(sim_world_import_key(w, SIM_AWS, "us-east-1", "bad", "ssh-ed25519 !!!", NULL,
					 &err));
	sim_world_delete_key(w, k);
	assert_null(sim_world_keypair(w, SIM_TENCENT, NULL, "demo_key"));

	sg = sim_world_create_sg(w, SIM_AWS, "us-east-1", "demo", "d", "vpc-1", NULL);
	assert_true(sim_world_add_rule(sg, &rule));
	assert_false(sim_world_add_rule(sg, &rule));
	assert_int_equal(sg->n_rules, 1);
	/* a rule whose source is a group differs from one of another group */
	snprintf(members.source_group, sizeof(members.source_group), "%s", sg->id);
	assert_true(sim_world_add_rule(sg, &members));
	assert_false(sim_world_add_rule(sg, &members));
	snprintf(members.source_group, sizeof(members.source_group), "sg-other");
	assert_true(sim_world_add_rule(sg, &members));
	assert_int_equal(sg->n_rules, 3);
	got = launch(w, SIM_AWS, 1, &n);
	got[0]->security_groups = calloc(1, sizeof(char *));
	got[0]->security_groups[0] = strdup(sg->id);
	got[0]->n_security_groups = 1;
	assert_true(sim_world_sg_in_use(w, sg));
	sim_world_terminate(w, got[0]);
	fc.now += 500 * MS;
	sim_world_tick(w);
	assert_false(sim_world_sg_in_use(w, sg));
	snprintf(sgid, sizeof(sgid), "%s", sg->id);
	assert_ptr_equal(sim_world_sg(w, SIM_AWS, "us-east-1", sgid), sg);
	sim_world_delete_sg(w, sg);
	assert_null(sim_world_sg(w, SIM_AWS, NULL, sgid));
	free(got);
	gc_buf_release(&line);
	gc_keypair_release(&kp);
	sim_world_free(w);
}

static void test_catalog(void **state)
{
	const struct sim_itype *t;
	const struct sim_image *imgs;
	const struct sim_region *r;
	size_t n, gpu_ready = 0;

	(void)state;
	t = sim_catalog_itype(SIM_AWS, "p4d.24xlarge");
	assert_non_null(t);
	assert_int_equal(t->gpus, 8);
	assert_string_equal(t->gpu_model, "A100");
	assert_int_equal(t->gpu_memory_mib, 40960);
	assert_true(t->nvswitch);
	assert_null(sim_catalog_itype(SIM_AWS, "GN7.2XLARGE32"));
	t = sim_catalog_itype(SIM_TENCENT, "GN7.2XLARGE32");
	assert_non_null(t);
	assert_string_equal(t->gpu_model, "NVIDIA T4");
	assert_true(sim_catalog_price(t, true) < sim_catalog_price(t, false));
	r = sim_catalog_region(SIM_ALIBABA, "cn-hangzhou");
	assert_true(sim_catalog_zone_ok(r, "cn-hangzhou-i"));
	assert_false(sim_catalog_zone_ok(r, "cn-beijing-f"));
	for (int c = 0; c < SIM_NCLOUDS; c++) {
		n = sim_catalog_images((enum sim_cloud)c, &imgs);
		assert_true(n >= 3);
		for (size_t i = 0; i < n; i++)
			gpu_ready += imgs[i].gpu_ready;
	}
	assert_true(gpu_ready >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_life_cycle),
		cmocka_unit_test(test_other_clouds_forget_at_once),
		cmocka_unit_test(test_recycle_bin),
		cmocka_unit_test(test_release_timer),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_keys_and_groups),
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_quota_at_launch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
