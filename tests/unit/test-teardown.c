/*
 * test-teardown.c: the one teardown (core/teardown.c) against a small fake cloud that
 * writes down every call: the order of the steps (terminate in batches, wait, key pairs,
 * security groups), a refused batch for destroy and for gc, gc's last look before a
 * resource goes, the deadline on a fake clock, a cancel while waiting, and no deletion
 * at all after a listing failed (the wait's, a resource listing, gc's check; issue 19).
 * test-engine.c and test-sweep.c check the messages destroy and gc make of it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/teardown.h"
#include "fake-clock.h"

/* ---- the fake cloud -------------------------------------------------------------- */

struct fake_inst {
	const char *id;
	const char *cluster;
	enum gc_instance_state st;
	int looks; /* Describes until a terminating one is terminated */
};

struct fake_res {
	enum gc_resource_kind kind;
	const char *id;
	const char *cluster;
};

static struct {
	struct fake_inst inst[8];
	size_t n;
	struct fake_res res[4];
	size_t n_res;
	const char *refuse; /* a terminate call naming this id fails */
	int settle;	    /* Describes until terminated; -1: never */
	struct gc_buf calls;
	struct gc_buf fates;
	unsigned cancel_after_looks; /* 0: never */
	unsigned looks;
	unsigned fail_from;    /* this Describe and every later one fails (0: none) */
	bool twice;	       /* Describe lists its first instance twice */
	const char *fail_list; /* "keypair" or "secgroup": that listing fails */
	/* eventual consistency: the first `swallow` terminates of inst[0] are taken (a
	 * driver that read NotFound as gone) and do nothing; inst[0] is missing from the
	 * first `hide` Describes, and from every one with `vanish` once terminated */
	unsigned swallow, hide;
	bool vanish;
} F;

#define BAD_PAGE "DescribeInstances: the NextToken of page 1 came back on page 2"

static int fake_discover(struct gc_provider *p, const struct gc_discover_query *q,
			 struct gc_instance_list *out, struct gc_error *err)
{
	const char *want = q->tags[0].value;

	(void)p;
	(void)err;
	F.looks++;
	gc_buf_addf(&F.calls, "discover %s;", want ? want : "*");
	if (F.fail_from && F.looks >= F.fail_from)
		return gc_error_set(err, GC_EINVALID, BAD_PAGE);
	for (size_t i = 0; i < F.n; i++) {
		struct fake_inst *fi = &F.inst[i];
		struct gc_instance *in;

		if (want && strcmp(want, fi->cluster) != 0)
			continue;
		if (fi->st == GC_STATE_TERMINATING && fi->looks > 0 && --fi->looks == 0)
			fi->st = GC_STATE_TERMINATED;
		if (i == 0 && (F.hide ? F.hide-- > 0 : F.vanish && fi->st == GC_STATE_TERMINATED))
			continue;
		if (fi->st == GC_STATE_TERMINATED && !q->include_terminated)
			continue;
		in = gc_instance_list_push(out);
		in->id = gc_xstrdup(fi->id);
		in->cluster = gc_xstrdup(fi->cluster);
		in->state = fi->st;
	}
	if (F.twice && out->n) {
		struct gc_instance *in = gc_instance_list_push(out);

		in->id = gc_xstrdup(out->items[0].id);
		in->cluster = gc_xstrdup(out->items[0].cluster);
		in->state = out->items[0].state;
	}
	return 0;
}

static int fake_terminate(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err)
{
	(void)p;
	gc_buf_addstr(&F.calls, "terminate");
	for (size_t i = 0; i < n; i++)
		gc_buf_addf(&F.calls, "%s%s", i ? "," : " ", ids[i]);
	gc_buf_addstr(&F.calls, ";");
	for (size_t i = 0; i < n; i++)
		if (F.refuse && strcmp(ids[i], F.refuse) == 0)
			return gc_error_set(err, GC_EGENERIC, "refused");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < F.n; k++)
			if (k == 0 && F.swallow && strcmp(F.inst[k].id, ids[i]) == 0)
				F.swallow--;
			else if (strcmp(F.inst[k].id, ids[i]) == 0) {
				F.inst[k].st = GC_STATE_TERMINATING;
				F.inst[k].looks = F.settle;
			}
	return 0;
}

static int fake_list(struct gc_provider *p, enum gc_resource_kind kind,
		     const struct gc_tag_filter *tags, size_t n_tags, struct gc_resource_list *out,
		     struct gc_error *err)
{
	(void)p;
	(void)n_tags;
	(void)err;
	gc_buf_addf(&F.calls, "list %s;", kind == GC_RESOURCE_KEYPAIR ? "keypair" : "secgroup");
	if (F.fail_list &&
	    strcmp(F.fail_list, kind == GC_RESOURCE_KEYPAIR ? "keypair" : "secgroup") == 0)
		return gc_error_set(err, GC_EINVALID,
				    "DescribeKeyPairs: page 4 is empty but carries a NextToken");
	for (size_t i = 0; i < F.n_res; i++) {
		struct gc_resource *r;

		if (F.res[i].kind != kind || strcmp(F.res[i].cluster, tags[0].value) != 0)
			continue;
		r = gc_resource_list_push(out);
		r->id = gc_xstrdup(F.res[i].id);
		r->name = gc_xstrdup(F.res[i].id);
		r->tags = gc_xcalloc(1, sizeof(*r->tags));
		r->tags[0].key = gc_xstrdup(GC_TAG_CLUSTER);
		r->tags[0].value = gc_xstrdup(F.res[i].cluster);
		r->n_tags = 1;
	}
	return 0;
}

static int fake_delkey(struct gc_provider *p, const char *id, struct gc_error *err)
{
	(void)p;
	(void)err;
	gc_buf_addf(&F.calls, "delkey %s;", id);
	return 0;
}

static int fake_delsg(struct gc_provider *p, const char *id, struct gc_error *err)
{
	(void)p;
	(void)err;
	gc_buf_addf(&F.calls, "delsg %s;", id);
	return 0;
}

static const struct gc_provider_ops fake_ops = {
	.name = "fake",
	.caps = GC_CAP_ED25519_KEYPAIR,
	.max_terminate_batch = 2,
	.discover = fake_discover,
	.terminate = fake_terminate,
	.list_resources = fake_list,
	.delete_keypair = fake_delkey,
	.delete_secgroup = fake_delsg,
};

static struct gc_provider prov = { .ops = &fake_ops, .clock = &fake };

/* the same cloud with listings that lag two looks behind (as EC2's and ECS's may) */
static const struct gc_provider_facts lag_facts = { .listing_lag_looks = 2 };
static struct gc_provider_ops lag_ops;
static struct gc_provider lag_prov = { .ops = &lag_ops, .clock = &fake };

/* ---- hooks: every fate, written down ---------------------------------------------- */

static const char *fate_word(enum gc_teardown_fate f)
{
	static const char *const w[] = { "todo",    "asked",  "done",	"kept",
					 "refused", "failed", "stopped" };

	return w[f];
}

static void on_instance(void *ctx, const struct gc_teardown *t, const struct gc_teardown_node *n,
			enum gc_teardown_fate f, const struct gc_error *err)
{
	(void)ctx;
	(void)t;
	gc_buf_addf(&F.fates, "%s:%s%s%s;", n->id, fate_word(f), err ? "=" : "",
		    err ? err->message : "");
}

static void on_resource(void *ctx, const struct gc_teardown *t,
			const struct gc_teardown_resource *r, enum gc_teardown_fate f,
			const struct gc_error *err)
{
	(void)ctx;
	(void)t;
	gc_buf_addf(&F.fates, "%s:%s%s%s;", r ? r->id : "list", fate_word(f), err ? "=" : "",
		    err ? err->message : "");
}

static const struct gc_teardown_hooks hooks = { .instance = on_instance, .resource = on_resource };

static bool cancel_now(void *ctx)
{
	(void)ctx;
	return F.cancel_after_looks && F.looks >= F.cancel_after_looks;
}

static const struct gc_cancel cancel = { cancel_now, NULL };

static void add_inst(const char *id, const char *cluster)
{
	F.inst[F.n++] = (struct fake_inst){ id, cluster, GC_STATE_RUNNING, 0 };
}

static void setup_teardown(struct gc_teardown *t, const char *cluster)
{
	gc_teardown_init(t);
	t->p = &prov;
	t->wait.clock = &fake;
	t->wait.cancel = &cancel;
	t->wait.interval_ms = 2000;
	t->wait.timeout_ms = 10000;
	t->cluster = cluster;
	t->hooks = &hooks;
	for (size_t i = 0; i < F.n; i++)
		if (!cluster || strcmp(F.inst[i].cluster, cluster) == 0)
			gc_teardown_add(t, F.inst[i].id, i, F.inst[i].st, true);
}

static int setup(void **state)
{
	(void)state;
	memset(&F, 0, sizeof(F));
	gc_buf_init(&F.calls, 0);
	gc_buf_init(&F.fates, 0);
	F.settle = 1;
	fc.now = 1000 * MS;
	fc.slept = 0;
	fc.sleeps = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gc_buf_release(&F.calls);
	gc_buf_release(&F.fates);
	return 0;
}

/* ---- cases ------------------------------------------------------------------------- */

/* destroy's shape: batches, one look, then key pairs before security groups */
static void test_order(void **state)
{
	struct gc_teardown t;
	struct gc_error err;

	(void)state;
	add_inst("a", "c");
	add_inst("b", "c");
	add_inst("c", "c");
	add_inst("x", "other");
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_SECGROUP, "sg1", "c" };
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_KEYPAIR, "kp1", "c" };
	setup_teardown(&t, "c");
	gc_error_init(&err);
	gc_teardown_run(&t, &err);
	assert_int_equal(err.code, GC_OK);
	assert_string_equal(F.calls.data,
			    "terminate a,b;terminate c;discover c;list keypair;"
			    "delkey kp1;list secgroup;delsg sg1;");
	assert_string_equal(F.fates.data,
			    "a:asked;b:asked;c:asked;a:done;b:done;c:done;"
			    "kp1:done;sg1:done;");
	assert_int_equal(fc.sleeps, 0);
	gc_teardown_release(&t);
}

/* destroy stops at a refused batch and deletes nothing; gc goes on */
static void test_refused(void **state)
{
	struct gc_teardown t;
	struct gc_error err;

	(void)state;
	add_inst("a", "c");
	add_inst("b", "c");
	add_inst("c", "c");
	add_inst("d", "c");
	add_inst("e", "c");
	F.refuse = "c";
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_KEYPAIR, "kp1", "c" };
	setup_teardown(&t, "c");
	gc_error_init(&err);
	gc_teardown_run(&t, &err);
	assert_string_equal(err.message, "refused");
	assert_string_equal(F.calls.data, "terminate a,b;terminate c,d;");
	assert_string_equal(F.fates.data,
			    "a:asked;b:asked;c:refused=refused;d:refused=refused;"
			    "e:stopped;");
	gc_teardown_release(&t);

	/* gc: the last batch is still tried, the asked ones waited for, resources go */
	teardown(NULL);
	setup(NULL);
	add_inst("a", "c");
	add_inst("b", "c");
	add_inst("c", "c");
	F.refuse = "a";
	{
		const struct gc_teardown_resource res[] = {
			{ GC_RESOURCE_KEYPAIR, "kp1", "kp1", "gone", 0, NULL },
		};

		setup_teardown(&t, NULL);
		t.resources = res;
		t.n_resources = 1;
		gc_teardown_run(&t, NULL);
	}
	assert_string_equal(F.calls.data,
			    "terminate a,b;terminate c;discover *;discover gone;delkey kp1;");
	assert_string_equal(F.fates.data,
			    "a:refused=refused;b:refused=refused;c:asked;c:done;kp1:done;");
	gc_teardown_release(&t);
}

/* gc looks at a resource's cluster once more: an instance that appeared keeps it */
static void test_recheck(void **state)
{
	const struct gc_teardown_resource res[] = {
		{ GC_RESOURCE_KEYPAIR, "kp-live", NULL, "live", 0, NULL },
		{ GC_RESOURCE_SECGROUP, "sg-gone", NULL, "gone", 1, NULL },
	};
	struct gc_teardown t;

	(void)state;
	add_inst("i-1", "live");
	gc_teardown_init(&t);
	t.p = &prov;
	t.wait.clock = &fake;
	t.resources = res;
	t.n_resources = 2;
	t.hooks = &hooks;
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data, "discover live;discover gone;delsg sg-gone;");
	assert_string_equal(F.fates.data,
			    "kp-live:kept=cluster 'live' has 1 live instance now "
			    "(i-1): left alone;sg-gone:done;");
	gc_teardown_release(&t);
}

/* instances that never go: one look per poll interval up to the deadline, then FAILED */
static void test_deadline(void **state)
{
	struct gc_teardown t;

	(void)state;
	F.settle = -1;
	add_inst("a", "c");
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_KEYPAIR, "kp1", "c" };
	setup_teardown(&t, "c");
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data,
			    "terminate a;discover c;discover c;discover c;"
			    "discover c;discover c;discover c;");
	assert_string_equal(F.fates.data,
			    "a:asked;a:failed=timed out after 10 s waiting for "
			    "instances to terminate;");
	assert_int_equal(t.elapsed_ms, 10000);
	assert_int_equal(t.left, 1);
	assert_int_equal(t.total, 1);
	gc_teardown_release(&t);
}

/* a cancel while waiting: the rest are stopped, not failed, and nothing is deleted */
static void test_cancel(void **state)
{
	struct gc_teardown t;
	struct gc_error err;

	(void)state;
	F.settle = -1;
	F.cancel_after_looks = 2;
	add_inst("a", "c");
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_KEYPAIR, "kp1", "c" };
	setup_teardown(&t, "c");
	gc_error_init(&err);
	assert_int_equal(gc_teardown_terminate(&t, &err), 1);
	assert_int_equal(gc_teardown_wait(&t, &err), 0);
	assert_int_equal(err.code, GC_OK);
	gc_teardown_run(&t, NULL); /* nothing left to do, and cancelled: no listing */
	assert_string_equal(F.calls.data, "terminate a;discover c;discover c;");
	assert_string_equal(F.fates.data, "a:asked;a:stopped;");
	gc_teardown_release(&t);
}

/* ---- no destruction on doubt ------------------------------------------------------- */

#define NOT_DELETING "not deleting the key pair and security group: "

/* destroy: the wait's look fails (a pager stop): no key pair or security group is listed
 * or deleted, and the error says so */
static void test_doubt_wait(void **state)
{
	struct gc_teardown t;

	(void)state;
	add_inst("a", "c");
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_KEYPAIR, "kp1", "c" };
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_SECGROUP, "sg1", "c" };
	F.fail_from = 1;
	setup_teardown(&t, "c");
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data, "terminate a;discover c;");
	assert_string_equal(F.fates.data,
			    "a:asked;a:failed=" NOT_DELETING "while waiting for instances to "
			    "terminate: cannot list the instances of cluster 'c': " BAD_PAGE ";");
	assert_true(t.doubt);
	gc_teardown_release(&t);
}

/* destroy: the key pairs cannot be listed: the security groups are not even listed */
static void test_doubt_resource_listing(void **state)
{
	struct gc_teardown t;

	(void)state;
	add_inst("a", "c");
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_SECGROUP, "sg1", "c" };
	F.fail_list = "keypair";
	setup_teardown(&t, "c");
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data, "terminate a;discover c;list keypair;");
	assert_string_equal(F.fates.data,
			    "a:asked;a:done;list:failed=" NOT_DELETING "cannot list the key "
			    "pairs of cluster 'c': DescribeKeyPairs: page 4 is empty but carries "
			    "a NextToken;");
	gc_teardown_release(&t);
}

/* gc: the check of the first resource's cluster fails: no resource goes after it */
static void test_doubt_gc_check(void **state)
{
	const struct gc_teardown_resource res[] = {
		{ GC_RESOURCE_KEYPAIR, "kp1", NULL, "x", 0, NULL },
		{ GC_RESOURCE_SECGROUP, "sg1", NULL, "y", 1, NULL },
		{ GC_RESOURCE_SECGROUP, "sg2", NULL, "x", 2, NULL },
	};
	struct gc_teardown t;
	const char *why = NOT_DELETING "cannot check cluster 'x' for live instances: " BAD_PAGE;
	char want[512];

	(void)state;
	F.fail_from = 1;
	setup_teardown(&t, NULL);
	t.resources = res;
	t.n_resources = 3;
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data, "discover x;");
	snprintf(want, sizeof(want), "kp1:failed=%s;sg1:failed=%s;sg2:failed=%s;", why, why, why);
	assert_string_equal(F.fates.data, want);
	gc_teardown_release(&t);
}

/* gc: the wait's look fails: its resources are not deleted either */
static void test_doubt_gc_wait(void **state)
{
	const struct gc_teardown_resource res[] = {
		{ GC_RESOURCE_KEYPAIR, "kp1", NULL, "gone", 0, NULL },
	};
	struct gc_teardown t;

	(void)state;
	add_inst("a", "c");
	F.fail_from = 1;
	setup_teardown(&t, NULL);
	t.resources = res;
	t.n_resources = 1;
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data, "terminate a;discover *;");
	assert_non_null(strstr(F.fates.data, "kp1:failed=" NOT_DELETING "while waiting"));
	gc_teardown_release(&t);
}

/* a listing that names an instance twice is not acted on */
static void test_listed_twice(void **state)
{
	struct gc_instance_list got;
	struct gc_error err;

	(void)state;
	add_inst("a", "c");
	add_inst("b", "c");
	F.twice = true;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	assert_int_equal(gc_teardown_discover(&prov, NULL, "c", false, &got, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_string_equal(err.message,
			    "cannot list the instances of cluster 'c': "
			    "DescribeInstances: instance 'a' is listed twice");
	assert_int_equal(got.n, 0);
	assert_int_equal(gc_teardown_discover(&prov, NULL, NULL, false, &got, &err), -1);
	F.twice = false;
	assert_int_equal(gc_teardown_discover(&prov, NULL, "c", false, &got, &err), 0);
	assert_int_equal(got.n, 2);
	gc_instance_list_release(&got);
}

/*
 * EC2's eventual consistency (docs/internals/executor.md): a terminate answered NotFound
 * for an instance just seen is taken by the driver, yet the instance runs on. The wait
 * sends it again while Describe lists it alive, backing off (after 1, 2, 4... looks), and
 * only Describe's word makes it done.
 */
static void test_notfound_resend(void **state)
{
	struct gc_teardown t;
	struct gc_error err;

	(void)state;
	add_inst("a", "c");
	add_inst("b", "c");
	F.swallow = 3;
	F.res[F.n_res++] = (struct fake_res){ GC_RESOURCE_KEYPAIR, "kp1", "c" };
	setup_teardown(&t, "c");
	t.wait.timeout_ms = 60000;
	gc_error_init(&err);
	gc_teardown_run(&t, &err);
	assert_int_equal(err.code, GC_OK);
	/* looks 1, 3 and 7 send it again (1, 2, 4 looks apart); the third one takes */
	assert_string_equal(F.calls.data,
			    "terminate a,b;discover c;terminate a;discover c;discover c;"
			    "terminate a;discover c;discover c;discover c;discover c;"
			    "terminate a;discover c;list keypair;delkey kp1;list secgroup;");
	assert_string_equal(F.fates.data, "a:asked;b:asked;b:done;a:done;kp1:done;");
	assert_true(t.nodes[0].sent);
	assert_int_equal(t.nodes[0].resends, 3);
	gc_teardown_release(&t);
}

/* one that never goes: sent again until the deadline, never counted done */
static void test_notfound_never(void **state)
{
	struct gc_teardown t;

	(void)state;
	add_inst("a", "c");
	F.swallow = 100;
	setup_teardown(&t, "c");
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data,
			    "terminate a;discover c;terminate a;discover c;discover c;"
			    "terminate a;discover c;discover c;discover c;");
	assert_string_equal(F.fates.data,
			    "a:asked;a:failed=timed out after 10 s waiting for "
			    "instances to terminate;");
	gc_teardown_release(&t);
}

/* a listing that lags: missing for two looks is not gone; the third makes it so */
static void test_listing_lag(void **state)
{
	struct gc_teardown t;

	(void)state;
	lag_ops = fake_ops;
	lag_ops.facts = &lag_facts;
	add_inst("a", "c");
	/* missing from the first two looks, then listed running: sent again */
	F.hide = 2;
	F.swallow = 1;
	setup_teardown(&t, "c");
	t.p = &lag_prov;
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data,
			    "terminate a;discover c;discover c;discover c;"
			    "terminate a;discover c;list keypair;list secgroup;");
	assert_string_equal(F.fates.data, "a:asked;a:done;");
	gc_teardown_release(&t);

	/* terminated and then missing for good: done on the third look without it */
	teardown(NULL);
	setup(NULL);
	add_inst("a", "c");
	F.vanish = true;
	setup_teardown(&t, "c");
	t.p = &lag_prov;
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data,
			    "terminate a;discover c;discover c;discover c;"
			    "list keypair;list secgroup;");
	assert_string_equal(F.fates.data, "a:asked;a:done;");
	gc_teardown_release(&t);

	/* seen on its way out, then missing: gone at once, whatever the lag */
	teardown(NULL);
	setup(NULL);
	add_inst("a", "c");
	F.vanish = true;
	F.settle = 2;
	setup_teardown(&t, "c");
	t.p = &lag_prov;
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data,
			    "terminate a;discover c;discover c;"
			    "list keypair;list secgroup;");
	assert_string_equal(F.fates.data, "a:asked;a:done;");
	gc_teardown_release(&t);

	/* without a lag (the fake's plain cloud), missing is gone at once */
	teardown(NULL);
	setup(NULL);
	add_inst("a", "c");
	F.vanish = true;
	setup_teardown(&t, "c");
	gc_teardown_run(&t, NULL);
	assert_string_equal(F.calls.data, "terminate a;discover c;list keypair;list secgroup;");
	gc_teardown_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recheck, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doubt_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doubt_resource_listing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doubt_gc_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doubt_gc_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listed_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notfound_resend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notfound_never, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listing_lag, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
