/*
 * teardown.c: terminate in batches, wait until gone, delete key pairs and security groups
 * (see teardown.h).
 *
 * This is the half of the product that stops the bill, shared by destroy and gc so that a
 * fix to one (a batch limit, a Describe that lags, a security group that refuses while its
 * interfaces detach) is a fix to both. It never decides what goes: the caller hands in the
 * instances and, for gc, the resources; every destructive call is scoped by what the
 * caller checked, and what the listings return is checked again against the tags.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/teardown.h"

#define DEFAULT_WAIT_MS (15ull * 60 * 1000)
#define DEFAULT_POLL_MS 2000ull
#define MAX_POLL_ERRORS 3 /* failed Describe polls in a row before the wait gives up */

void gc_teardown_init(struct gc_teardown *t)
{
	memset(t, 0, sizeof(*t));
	gc_error_init(&t->fatal_err);
	gc_error_init(&t->doubt_err);
}

void gc_teardown_release(struct gc_teardown *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->nodes[i].id);
	free(t->nodes);
	t->nodes = NULL;
	t->n = t->alloc = 0;
}

void gc_teardown_add(struct gc_teardown *t, const char *id, size_t tag,
		     enum gc_instance_state state, bool terminate)
{
	struct gc_teardown_node *n;

	GC_ALLOC_GROW(t->nodes, t->n + 1, t->alloc);
	n = &t->nodes[t->n++];
	memset(n, 0, sizeof(*n));
	n->id = gc_xstrdup(id);
	n->tag = tag;
	n->state = state;
	n->fate = terminate ? GC_TEARDOWN_TODO : GC_TEARDOWN_ASKED;
}

void gc_teardown_counts(const struct gc_teardown *t, size_t *total, size_t *left)
{
	size_t all = 0, waiting = 0;

	for (size_t i = 0; i < t->n; i++) {
		waiting += t->nodes[i].fate == GC_TEARDOWN_ASKED;
		all += t->nodes[i].fate == GC_TEARDOWN_ASKED ||
			t->nodes[i].fate == GC_TEARDOWN_DONE;
	}
	if (total)
		*total = all;
	if (left)
		*left = waiting;
}

/* An error that stops every further call: credentials do not heal within a run. */
static void note_fatal(struct gc_teardown *t, const struct gc_error *err)
{
	if (err && err->code == GC_EAUTH && !t->fatal) {
		t->fatal = true;
		t->fatal_err = *err;
	}
}

static bool stopped(struct gc_teardown *t)
{
	return gc_cancelled(t->wait.cancel) || t->fatal;
}

static void node_fate(struct gc_teardown *t, struct gc_teardown_node *n, enum gc_teardown_fate fate,
		      const struct gc_error *err)
{
	n->fate = fate;
	if (t->hooks && t->hooks->instance)
		t->hooks->instance(t->ctx, t, n, fate, err);
}

/* Every node whose fate is still from: to fate. */
static void give_up(struct gc_teardown *t, enum gc_teardown_fate from, enum gc_teardown_fate fate,
		    const struct gc_error *err)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].fate == from)
			node_fate(t, &t->nodes[i], fate, err);
}

/* A listing that names an instance twice is not one to act on (whatever the driver's
 * pager caught already): fails with err naming it. */
static int listed_once(const struct gc_instance_list *l, struct gc_error *err)
{
	char *twice = gc_instance_list_twice(l);

	if (!twice)
		return 0;
	gc_error_set(err, GC_EBADRESPONSE, "DescribeInstances: %s", twice);
	free(twice);
	return -1;
}

int gc_teardown_discover(struct gc_provider *p, struct gc_log *log, const char *cluster,
			 bool include_terminated, struct gc_instance_list *out,
			 struct gc_error *err)
{
	struct gc_tag_filter f = { GC_TAG_CLUSTER, cluster };
	struct gc_discover_query q = { &f, 1, include_terminated };
	struct gc_instance_list got;
	size_t dropped = 0;

	gc_instance_list_init(&got);
	if (gc_provider_discover(p, &q, &got, err) < 0 || listed_once(&got, err) < 0) {
		gc_instance_list_release(&got);
		/* a driver's "cannot list instances in REGION" says it already */
		if (!cluster || (err && strncmp(err->message, "cannot list instances", 21) == 0))
			return -1;
		return gc_error_prefix(err, "cannot list the instances of cluster '%s'", cluster);
	}
	if (!cluster) {
		gc_instance_list_take(out, &got);
		gc_instance_list_release(&got);
		return 0;
	}
	/* the filter is the driver's promise; the tag on what came back is ours to see */
	for (size_t i = 0; i < got.n; i++) {
		struct gc_instance *inst = &got.items[i];

		if (!inst->cluster || strcmp(inst->cluster, cluster) != 0) {
			dropped++;
			continue;
		}
		if (!include_terminated && inst->state == GC_STATE_TERMINATED)
			continue;
		*gc_instance_list_push(out) = *inst;
		memset(inst, 0, sizeof(*inst));
	}
	if (dropped)
		gc_log_warn(log,
			    "%s: discover returned %zu instances without the tag %s=%s; ignored",
			    p->ops->name, dropped, GC_TAG_CLUSTER, cluster);
	gc_instance_list_release(&got);
	return 0;
}

/* ---- 1. terminate ---------------------------------------------------------------- */

size_t gc_teardown_terminate(struct gc_teardown *t, struct gc_error *err)
{
	size_t batch = t->p->ops->max_terminate_batch ? t->p->ops->max_terminate_batch : 1;
	const char **ids = gc_xcalloc(batch, sizeof(*ids));
	size_t *idx = gc_xcalloc(t->n + 1, sizeof(*idx));
	size_t n = 0, asked = 0;
	bool refused = false;

	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].fate == GC_TEARDOWN_TODO)
			idx[n++] = i;
	for (size_t done = 0; done < n;) {
		size_t k = n - done < batch ? n - done : batch;
		struct gc_error e;

		if (stopped(t))
			break;
		for (size_t i = 0; i < k; i++)
			ids[i] = t->nodes[idx[done + i]].id;
		gc_error_init(&e);
		if (gc_provider_terminate(t->p, ids, k, &e) < 0) {
			note_fatal(t, &e);
			if (err && !refused)
				*err = e;
			refused = true;
			for (size_t i = done; i < done + k; i++)
				node_fate(t, &t->nodes[idx[i]], GC_TEARDOWN_REFUSED, &e);
			done += k;
			if (t->cluster) /* destroy stops at a refused batch; gc tries the rest */
				break;
			continue;
		}
		for (size_t i = done; i < done + k; i++) {
			t->nodes[idx[i]].sent = true;
			node_fate(t, &t->nodes[idx[i]], GC_TEARDOWN_ASKED, NULL);
		}
		gc_log_info(t->log, "%s%sterminating %s%s", t->label ? t->label : "",
			    t->label ? ": " : "", ids[0], k > 1 ? " and others" : "");
		asked += k;
		done += k;
	}
	/* what a cancel, an auth error or a refusal left untried */
	give_up(t, GC_TEARDOWN_TODO, GC_TEARDOWN_STOPPED, NULL);
	free(idx);
	free(ids);
	return asked;
}

/* ---- 2. wait --------------------------------------------------------------------- */

static const struct gc_instance *find(const struct gc_instance_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].id && strcmp(l->items[i].id, id) == 0)
			return &l->items[i];
	return NULL;
}

/* Listed alive after our terminate: due for it again? After 1, 2, 4, 8, then every 16
 * looks (the exponential backoff the clouds' guides ask for, in looks of the wait). */
static bool resend_due(struct gc_teardown_node *n)
{
	unsigned every = 1u << (n->resends < 4 ? n->resends : 4);

	return n->sent && ++n->since >= every;
}

/*
 * The terminate again for the instances Describe still lists alive after the cloud took
 * it: a NotFound (or a lost terminate) is no proof it is gone, the clouds' guides say, and
 * such an instance may still be running. A failure is logged and the wait goes on; an
 * auth error ends it.
 */
static int resend(struct gc_teardown *t, const char **ids, size_t n, struct gc_error *err)
{
	size_t batch = t->p->ops->max_terminate_batch ? t->p->ops->max_terminate_batch : 1;

	for (size_t done = 0; done < n && !stopped(t); done += batch) {
		size_t k = n - done < batch ? n - done : batch;
		struct gc_error e;

		gc_error_init(&e);
		gc_log_info(t->log,
			    "%s%sstill listed alive after its terminate: terminating %s%s again",
			    t->label ? t->label : "", t->label ? ": " : "", ids[done],
			    k > 1 ? " and others" : "");
		if (gc_provider_terminate(t->p, ids + done, k, &e) == 0)
			continue;
		note_fatal(t, &e);
		if (t->fatal) {
			if (err)
				*err = e;
			return gc_error_prefix(err, "cannot terminate %s again", ids[done]);
		}
		gc_log_warn(t->log, "cannot terminate %s again: %s", ids[done], e.message);
	}
	return 0;
}

/* A state an instance shows once a terminate took (some clouds show stopping while they
 * release it). */
static bool leaving(enum gc_instance_state s)
{
	return s == GC_STATE_TERMINATING || s == GC_STATE_STOPPING || s == GC_STATE_TERMINATED;
}

/* How many looks a missing instance may stay missing before it counts as gone. */
static unsigned lag_looks(const struct gc_teardown *t)
{
	const struct gc_provider_facts *f = t->p->ops->facts;

	return f ? f->listing_lag_looks : 0;
}

static int look(void *ctx, struct gc_error *err)
{
	struct gc_teardown *t = ctx;
	struct gc_instance_list now;
	const char **again = NULL;
	size_t n_again = 0;
	int rc = 0;

	gc_instance_list_init(&now);
	if (gc_teardown_discover(t->p, t->log, t->cluster, true, &now, err) < 0) {
		gc_instance_list_release(&now);
		t->elapsed_ms = (gc_clock_now_ns(t->wait.clock) - t->since_ns) / GC_NS_PER_MS;
		note_fatal(t, err);
		if (t->fatal || !gc_error_is_retryable(err ? err->code : 0) ||
		    ++t->poll_errors >= MAX_POLL_ERRORS) {
			t->look_failed = true;
			return gc_error_prefix(err, "while waiting for instances to terminate");
		}
		gc_error_init(err);
		return 1;
	}
	t->poll_errors = 0;
	again = gc_xcalloc(t->n + 1, sizeof(*again));
	for (size_t i = 0; i < t->n; i++) {
		struct gc_teardown_node *n = &t->nodes[i];
		const struct gc_instance *inst;

		if (n->fate != GC_TEARDOWN_ASKED)
			continue;
		inst = find(&now, n->id);
		/* missing after it was seen on its way out: gone; else the listing may lag */
		if (!inst && !leaving(n->state) && ++n->absent <= lag_looks(t))
			continue;
		if (!inst || inst->state == GC_STATE_TERMINATED) {
			n->state = GC_STATE_TERMINATED;
			node_fate(t, n, GC_TEARDOWN_DONE, NULL);
			continue;
		}
		n->absent = 0;
		n->state = inst->state;
		if (!leaving(inst->state) && inst->state != GC_STATE_UNKNOWN && resend_due(n)) {
			n->since = 0;
			n->resends++;
			again[n_again++] = n->id;
		}
	}
	t->elapsed_ms = (gc_clock_now_ns(t->wait.clock) - t->since_ns) / GC_NS_PER_MS;
	if (n_again && resend(t, again, n_again, err) < 0) {
		t->look_failed = true;
		rc = -1;
	} else if (t->hooks && t->hooks->look && t->hooks->look(t->ctx, t, &now, err) < 0) {
		note_fatal(t, err);
		t->look_failed = true;
		rc = -1;
	}
	gc_instance_list_release(&now);
	free(again);
	if (rc < 0)
		return -1;
	gc_teardown_counts(t, &t->total, &t->left);
	return t->left ? 1 : 0;
}

/* The wait; deleting: the key pairs and security groups would go next, and a failed look
 * stops them, which its error says. */
static int wait_gone(struct gc_teardown *t, bool deleting, struct gc_error *err)
{
	struct gc_wait w = t->wait;
	struct gc_error e;

	if (!w.timeout_ms)
		w.timeout_ms = DEFAULT_WAIT_MS;
	if (!w.interval_ms)
		w.interval_ms = DEFAULT_POLL_MS;
	if (!w.what)
		w.what = "instances to terminate";
	t->poll_errors = 0;
	t->look_failed = false;
	t->elapsed_ms = 0;
	gc_teardown_counts(t, &t->total, &t->left);
	t->since_ns = gc_clock_now_ns(t->wait.clock);
	gc_error_init(&e);
	if (gc_wait_until(&w, look, t, &e) == 0)
		return 0;
	if (e.code == GC_ECANCELLED && !t->look_failed) {
		/* the caller knows it cancelled: not a failure of the wait */
		give_up(t, GC_TEARDOWN_ASKED, GC_TEARDOWN_STOPPED, NULL);
		return 0;
	}
	if (t->look_failed) {
		t->doubt = true;
		if (deleting)
			gc_teardown_doubt(t->p, false, &e);
	}
	give_up(t, GC_TEARDOWN_ASKED, GC_TEARDOWN_FAILED, &e);
	if (err)
		*err = e;
	return -1;
}

int gc_teardown_wait(struct gc_teardown *t, struct gc_error *err)
{
	return wait_gone(t, false, err);
}

/* ---- 3. delete ------------------------------------------------------------------- */

const char *gc_teardown_kind_text(enum gc_resource_kind kind)
{
	return kind == GC_RESOURCE_KEYPAIR	? "key pair"
		: kind == GC_RESOURCE_SECGROUP	? "security group"
		: kind == GC_RESOURCE_PLACEMENT ? "placement group"
						: "public address";
}

int gc_teardown_doubt(const struct gc_provider *p, bool instances, struct gc_error *err)
{
	bool keys = p && p->ops && (p->ops->caps & GC_CAP_ED25519_KEYPAIR);

	return gc_error_prefix(err, "not %s%s",
			       instances ? "terminating instances or deleting" : "deleting",
			       keys ? " the key pair and security group" : " the security group");
}

/* A listing failed: every later deletion is refused with err, prefixed as doubt says. */
static void set_doubt(struct gc_teardown *t, struct gc_error *err)
{
	if (!t->doubt) {
		t->doubt = true;
		gc_teardown_doubt(t->p, false, err);
		t->doubt_err = *err;
	}
}

static void res_fate(struct gc_teardown *t, const struct gc_teardown_resource *r,
		     enum gc_teardown_fate fate, const struct gc_error *err)
{
	if (t->hooks && t->hooks->resource)
		t->hooks->resource(t->ctx, t, r, fate, err);
}

/*
 * gc's last look before a resource goes: the instances of its cluster now (only the one
 * with id only, unless NULL), whatever the scan said. Returns how many are alive (not
 * terminated), or -1 on error.
 */
static long alive(struct gc_teardown *t, const char *cluster, const char *only, char *first,
		  size_t size, struct gc_error *err)
{
	const struct gc_tag_filter f = { GC_TAG_CLUSTER, cluster };
	const struct gc_discover_query q = { &f, 1, false };
	struct gc_instance_list now;
	long n = 0;

	gc_instance_list_init(&now);
	if (gc_provider_discover(t->p, &q, &now, err) < 0) {
		gc_instance_list_release(&now);
		return -1;
	}
	for (size_t i = 0; i < now.n; i++) {
		if (now.items[i].state == GC_STATE_TERMINATED || !now.items[i].cluster ||
		    strcmp(now.items[i].cluster, cluster) != 0 ||
		    (only && (!now.items[i].id || strcmp(now.items[i].id, only) != 0)))
			continue;
		if (n++ == 0)
			snprintf(first, size, "%s", now.items[i].id ? now.items[i].id : "?");
	}
	gc_instance_list_release(&now);
	return n;
}

static void delete_one(struct gc_teardown *t, const struct gc_teardown_resource *r)
{
	struct gc_error e;
	int rc;

	gc_error_init(&e);
	if (stopped(t)) {
		res_fate(t, r, GC_TEARDOWN_STOPPED, NULL);
		return;
	}
	if (t->doubt) {
		/* an instance listing failed before: nothing more is deleted in this run */
		e = t->doubt_err;
		res_fate(t, r, GC_TEARDOWN_FAILED, &e);
		return;
	}
	if (!t->cluster) {
		char first[128] = "";
		const char *only = r->kind == GC_RESOURCE_ADDRESS ? r->instance : NULL;
		long n = alive(t, r->cluster, only, first, sizeof(first), &e);

		if (n < 0) {
			note_fatal(t, &e);
			gc_error_prefix(&e, "cannot check cluster '%s' for live instances",
					r->cluster);
			set_doubt(t, &e);
			res_fate(t, r, GC_TEARDOWN_FAILED, &e);
			return;
		}
		if (n > 0 && only) {
			gc_error_set(&e, GC_EGENERIC, "its instance %s is alive now: left alone",
				     only);
			res_fate(t, r, GC_TEARDOWN_KEPT, &e);
			return;
		}
		if (n > 0) {
			gc_error_set(&e, GC_EGENERIC,
				     "cluster '%s' has %ld live instance%s now (%s%s): left alone",
				     r->cluster, n, n == 1 ? "" : "s", first, n > 1 ? ", ..." : "");
			res_fate(t, r, GC_TEARDOWN_KEPT, &e);
			return;
		}
	}
	rc = r->kind == GC_RESOURCE_KEYPAIR	   ? gc_provider_delete_keypair(t->p, r->id, &e)
		: r->kind == GC_RESOURCE_SECGROUP  ? gc_provider_delete_secgroup(t->p, r->id, &e)
		: r->kind == GC_RESOURCE_PLACEMENT ? gc_provider_delete_placement(t->p, r->id, &e)
						   : gc_provider_delete_address(t->p, r->id, &e);
	if (rc < 0) {
		note_fatal(t, &e);
		res_fate(t, r, GC_TEARDOWN_REFUSED, &e);
		return;
	}
	res_fate(t, r, GC_TEARDOWN_DONE, NULL);
}

/* destroy: what carries the cluster tag and the selectors, listed now and checked again */
static void delete_listed(struct gc_teardown *t, enum gc_resource_kind kind)
{
	struct gc_tag_filter *f = gc_xcalloc(t->n_sel + 1, sizeof(*f));
	struct gc_resource_list found;
	struct gc_error e;

	if (stopped(t)) {
		free(f);
		return;
	}
	f[0].key = GC_TAG_CLUSTER;
	f[0].value = t->cluster;
	for (size_t i = 0; i < t->n_sel; i++)
		f[i + 1] = t->sel[i];
	gc_resource_list_init(&found);
	gc_error_init(&e);
	if (gc_provider_list_resources(t->p, kind, f, t->n_sel + 1, &found, &e) < 0) {
		note_fatal(t, &e);
		gc_error_prefix(&e, "cannot list the %ss of cluster '%s'",
				gc_teardown_kind_text(kind), t->cluster);
		set_doubt(t, &e);
		res_fate(t, NULL, GC_TEARDOWN_FAILED, &e);
		goto out;
	}
	for (size_t i = 0; i < found.n; i++) {
		const struct gc_resource *res = &found.items[i];
		struct gc_teardown_resource r = { kind, res->id, res->name, t->cluster, i, NULL };

		if (!res->id || !gc_tags_match(res->tags, res->n_tags, f, t->n_sel + 1)) {
			gc_log_warn(t->log, "%s '%s' came back without the tag %s=%s%s; left alone",
				    gc_teardown_kind_text(kind), res->name ? res->name : "?",
				    GC_TAG_CLUSTER, t->cluster,
				    t->n_sel ? " or the selector's" : "");
			continue;
		}
		delete_one(t, &r);
	}
out:
	free(f);
	gc_resource_list_release(&found);
}

static void delete_kind(struct gc_teardown *t, enum gc_resource_kind kind)
{
	if (t->cluster && t->doubt)
		return; /* the listing that failed was reported: nothing more goes */
	if (t->cluster) {
		delete_listed(t, kind);
		return;
	}
	for (size_t i = 0; i < t->n_resources; i++)
		if (t->resources[i].kind == kind)
			delete_one(t, &t->resources[i]);
}

/* ---- the routine ----------------------------------------------------------------- */

void gc_teardown_run(struct gc_teardown *t, struct gc_error *err)
{
	struct gc_error e;
	size_t total;
	bool settled;

	gc_teardown_terminate(t, err);
	/* destroy deletes nothing unless every instance was asked and gone */
	gc_teardown_counts(t, &total, NULL);
	settled = total == t->n;
	if (t->cluster && !settled)
		return;
	if (!t->no_wait && (total || (t->hooks && t->hooks->look)) && wait_gone(t, true, &e) < 0) {
		settled = false;
		if (t->doubt) /* the wait's error says nothing is deleted */
			t->doubt_err = e;
	}
	if (t->cluster && (!settled || stopped(t) || t->doubt))
		return;
	if (t->hooks && t->hooks->may_delete && !t->hooks->may_delete(t->ctx, t))
		return;
	/* public addresses once their instances are gone, which detaches them (fabric.md) */
	if (!t->no_wait)
		delete_kind(t, GC_RESOURCE_ADDRESS);
	/* key pairs first: a security group may still refuse while interfaces detach */
	delete_kind(t, GC_RESOURCE_KEYPAIR);
	/* placement groups once their instances are gone (docs/internals/fabric.md) */
	if (!t->no_wait)
		delete_kind(t, GC_RESOURCE_PLACEMENT);
	if (!t->no_wait)
		delete_kind(t, GC_RESOURCE_SECGROUP);
}
