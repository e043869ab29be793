/*
 * sweep.c: selectors and the garbage collector behind `gpucluster gc` (see sweep.h).
 *
 * gc runs where nobody remembers what was made: a nightly job, a teardown after a
 * cancelled workflow. So it trusts tags alone, and only the ones it can check on what the
 * cloud returned: the scan asks the cloud for the gpucluster:cluster tag and then drops
 * anything that came back without it; classification is a pure function of those tags,
 * the clock and the options, so tests can pin every decision; and execution looks once
 * more for live instances of a cluster before deleting its key pair or security group,
 * because an apply may have launched since the scan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/sweep.h"

#define DEFAULT_WAIT_MS (15ull * 60 * 1000)
#define DEFAULT_POLL_MS 2000ull
#define WAIT_SLICE_MS	200ull
#define MAX_POLL_ERRORS 3

/* ---- selectors ------------------------------------------------------------------- */

void gc_selectors_init(struct gc_selectors *s)
{
	memset(s, 0, sizeof(*s));
}

void gc_selectors_release(struct gc_selectors *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->tags[i].key);
		free(s->tags[i].value);
	}
	free(s->tags);
	free(s->filters);
	gc_selectors_init(s);
}

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

int gc_selectors_add(struct gc_selectors *s, const char *text, struct gc_error *err)
{
	const char *eq = strchr(text, '=');
	const char *key = text, *value;
	size_t klen;

	if (!eq)
		return gc_error_set(err, GC_EINVALID,
				    "selector '%s' is not KEY=VALUE (say 'run-id=123')", text);
	if (strncmp(key, GC_TAG_PREFIX, strlen(GC_TAG_PREFIX)) == 0)
		key += strlen(GC_TAG_PREFIX);
	klen = (size_t)(eq - key);
	value = eq + 1;
	if (klen == 0 || klen > GC_SELECTOR_KEY_MAX)
		return gc_error_set(err, GC_EINVALID, "selector '%s' has no key before '='", text);
	for (size_t i = 0; i < klen; i++)
		if (!key_char(key[i]))
			return gc_error_set(err, GC_EINVALID,
					    "selector '%s': the key may hold lowercase letters, "
					    "digits and '-' only (the part after 'gpucluster:')",
					    text);
	if (!*value)
		return gc_error_set(err, GC_EINVALID, "selector '%s' has no value after '='", text);
	if (strlen(value) > GC_SELECTOR_VALUE_MAX)
		return gc_error_set(err, GC_EINVALID, "selector '%.40s...': the value is too long",
				    text);
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return gc_error_set(
				err, GC_EINVALID,
				"selector '%.*s=...': the value has a control character", (int)klen,
				key);
	for (size_t i = 0; i < s->n; i++) {
		const char *have = s->tags[i].key + strlen(GC_TAG_PREFIX);

		if (strlen(have) != klen || strncmp(have, key, klen) != 0)
			continue;
		if (strcmp(s->tags[i].value, value) == 0)
			return 0;
		return gc_error_set(err, GC_EINVALID,
				    "selectors '%s=%s' and '%s' cannot both hold: a tag has one "
				    "value",
				    have, s->tags[i].value, text);
	}
	if (s->n >= GC_SELECTORS_MAX)
		return gc_error_set(err, GC_EINVALID, "at most %d selectors", GC_SELECTORS_MAX);
	s->tags = gc_xreallocarray(s->tags, s->n + 1, sizeof(*s->tags));
	s->filters = gc_xreallocarray(s->filters, s->n + 1, sizeof(*s->filters));
	s->tags[s->n].key = gc_xasprintf("%s%.*s", GC_TAG_PREFIX, (int)klen, key);
	s->tags[s->n].value = gc_xstrdup(value);
	s->n++;
	/* realloc may have moved the strings' holders, not the strings: refresh every view */
	for (size_t i = 0; i < s->n; i++) {
		s->filters[i].key = s->tags[i].key;
		s->filters[i].value = s->tags[i].value;
	}
	return 0;
}

bool gc_selectors_match(const struct gc_selectors *s, const struct gc_tag *tags, size_t n_tags)
{
	for (size_t i = 0; s && i < s->n; i++) {
		bool found = false;

		for (size_t k = 0; k < n_tags && !found; k++)
			found = strcmp(tags[k].key, s->tags[i].key) == 0 && tags[k].value &&
				strcmp(tags[k].value, s->tags[i].value) == 0;
		if (!found)
			return false;
	}
	return true;
}

void gc_selectors_format(const struct gc_selectors *s, struct gc_buf *out)
{
	for (size_t i = 0; s && i < s->n; i++)
		gc_buf_addf(out, "%s%s=%s", i ? " " : "", s->tags[i].key + strlen(GC_TAG_PREFIX),
			    s->tags[i].value);
}

/* ---- items ----------------------------------------------------------------------- */

const char *gc_sweep_kind_name(enum gc_sweep_kind k)
{
	switch (k) {
	case GC_SWEEP_INSTANCE: return "instance";
	case GC_SWEEP_KEYPAIR: return "key-pair";
	case GC_SWEEP_SECGROUP: return "security-group";
	}
	return "?";
}

void gc_sweep_why_text(unsigned why, char out[32])
{
	static const char *const words[] = { "expired", "orphaned", "selected" };
	size_t len = 0;

	out[0] = '\0';
	for (unsigned b = 0; b < 3; b++) {
		if (!(why & (1u << b)))
			continue;
		len += (size_t)snprintf(out + len, 32 - len, "%s%s", len ? "," : "", words[b]);
	}
}

void gc_sweep_init(struct gc_sweep *s)
{
	memset(s, 0, sizeof(*s));
}

static void item_release(struct gc_sweep_item *it)
{
	free(it->region);
	free(it->id);
	free(it->name);
	free(it->cluster);
	for (size_t i = 0; i < it->n_tags; i++) {
		free(it->tags[i].key);
		free(it->tags[i].value);
	}
	free(it->tags);
}

void gc_sweep_release(struct gc_sweep *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		item_release(&s->items[i]);
	free(s->items);
	gc_sweep_init(s);
}

static const char *tag_of(const struct gc_tag *tags, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tags[i].key, key) == 0)
			return tags[i].value;
	return NULL;
}

static struct gc_sweep_item *push(struct gc_sweep *s, enum gc_sweep_kind kind, const char *region,
				  const char *id, const char *name, const char *cluster,
				  const struct gc_tag *tags, size_t n_tags)
{
	struct gc_sweep_item *it;

	GC_ALLOC_GROW(s->items, s->n + 1, s->alloc);
	it = &s->items[s->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->region = gc_xstrdup(region ? region : "");
	it->id = gc_xstrdup(id);
	it->name = name ? gc_xstrdup(name) : NULL;
	it->cluster = gc_xstrdup(cluster);
	it->state = GC_STATE_UNKNOWN;
	it->tags = gc_xcalloc(n_tags + 1, sizeof(*it->tags));
	for (size_t i = 0; i < n_tags; i++) {
		it->tags[i].key = gc_xstrdup(tags[i].key);
		it->tags[i].value = gc_xstrdup(tags[i].value ? tags[i].value : "");
	}
	it->n_tags = n_tags;
	gc_error_init(&it->err);
	return it;
}

/* ---- scan ------------------------------------------------------------------------ */

static int scan_resources(struct gc_sweep *s, struct gc_provider *p, enum gc_resource_kind kind,
			  struct gc_error *err)
{
	const struct gc_tag_filter f = { GC_TAG_CLUSTER, NULL };
	struct gc_resource_list found;
	size_t dropped = 0;

	gc_resource_list_init(&found);
	if (gc_provider_list_resources(p, kind, &f, 1, &found, err) < 0) {
		gc_resource_list_release(&found);
		return -1;
	}
	for (size_t i = 0; i < found.n; i++) {
		const struct gc_resource *r = &found.items[i];
		const char *cluster = tag_of(r->tags, r->n_tags, GC_TAG_CLUSTER);
		const char *made = tag_of(r->tags, r->n_tags, GC_TAG_CREATED_AT);
		struct gc_sweep_item *it;
		int64_t t;

		if (!cluster || !*cluster || !r->id) {
			dropped++;
			continue;
		}
		it = push(s, kind == GC_RESOURCE_KEYPAIR ? GC_SWEEP_KEYPAIR : GC_SWEEP_SECGROUP,
			  p->region, r->id, r->name, cluster, r->tags, r->n_tags);
		if (made && gc_parse_rfc3339(made, &t) == 0)
			it->created = t;
	}
	if (dropped)
		gc_log_warn(p->log, "%s: %zu resources came back without the tag %s; ignored",
			    p->ops->name, dropped, GC_TAG_CLUSTER);
	gc_resource_list_release(&found);
	return 0;
}

int gc_sweep_scan(struct gc_sweep *s, struct gc_provider *p, struct gc_error *err)
{
	const struct gc_tag_filter f = { GC_TAG_CLUSTER, NULL };
	const struct gc_discover_query q = { &f, 1, false };
	struct gc_instance_list found;
	size_t dropped = 0;

	gc_instance_list_init(&found);
	if (gc_provider_discover(p, &q, &found, err) < 0) {
		gc_instance_list_release(&found);
		return gc_error_prefix(err, "cannot list the instances in %s", p->region);
	}
	for (size_t i = 0; i < found.n; i++) {
		const struct gc_instance *in = &found.items[i];
		struct gc_sweep_item *it;

		if (!in->cluster || !*in->cluster || !in->id) {
			dropped++;
			continue;
		}
		if (in->state == GC_STATE_TERMINATED)
			continue;
		it = push(s, GC_SWEEP_INSTANCE, p->region, in->id, gc_instance_tag(in, "Name"),
			  in->cluster, in->tags, in->n_tags);
		it->state = in->state;
		it->created = in->launch_time;
		it->expires_at = in->expires_at;
	}
	if (dropped)
		gc_log_warn(p->log, "%s: %zu instances came back without the tag %s; ignored",
			    p->ops->name, dropped, GC_TAG_CLUSTER);
	gc_instance_list_release(&found);
	if (scan_resources(s, p, GC_RESOURCE_KEYPAIR, err) < 0)
		return gc_error_prefix(err, "cannot list the key pairs in %s", p->region);
	if (scan_resources(s, p, GC_RESOURCE_SECGROUP, err) < 0)
		return gc_error_prefix(err, "cannot list the security groups in %s", p->region);
	return 0;
}

/* ---- classify -------------------------------------------------------------------- */

static bool going(enum gc_instance_state st)
{
	return st == GC_STATE_TERMINATING || st == GC_STATE_TERMINATED;
}

void gc_sweep_classify(struct gc_sweep *s, const struct gc_sweep_opts *o)
{
	/* instances first: a resource's fate depends on whether any of its cluster stays */
	for (size_t i = 0; i < s->n; i++) {
		struct gc_sweep_item *it = &s->items[i];

		it->why = 0;
		if (it->kind != GC_SWEEP_INSTANCE || going(it->state) ||
		    !gc_selectors_match(o->sel, it->tags, it->n_tags))
			continue;
		if ((o->want & GC_SWEEP_EXPIRED) && it->expires_at && it->expires_at <= o->now)
			it->why |= GC_SWEEP_EXPIRED;
		if (o->want & GC_SWEEP_SELECTED)
			it->why |= GC_SWEEP_SELECTED;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct gc_sweep_item *it = &s->items[i];
		bool stays = false;

		if (it->kind == GC_SWEEP_INSTANCE)
			continue;
		it->why = 0;
		if (!gc_selectors_match(o->sel, it->tags, it->n_tags))
			continue;
		for (size_t k = 0; k < s->n && !stays; k++) {
			const struct gc_sweep_item *in = &s->items[k];

			stays = in->kind == GC_SWEEP_INSTANCE && in->state != GC_STATE_TERMINATED &&
				in->why == 0 && strcmp(in->region, it->region) == 0 &&
				strcmp(in->cluster, it->cluster) == 0;
		}
		if (stays)
			continue;
		if ((o->want & GC_SWEEP_ORPHANED) && it->created &&
		    o->now - it->created >= o->grace_s)
			it->why |= GC_SWEEP_ORPHANED;
		if (o->want & GC_SWEEP_SELECTED)
			it->why |= GC_SWEEP_SELECTED;
	}
}

size_t gc_sweep_count(const struct gc_sweep *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->items[i].why != 0;
	return n;
}

/* ---- execute --------------------------------------------------------------------- */

struct exec {
	struct gc_sweep *s;
	struct gc_provider *p;
	const struct gc_sweep_exec_opts *o;
	bool cancelled;
	bool fatal;
	struct gc_error fatal_err;
};

static bool ex_cancelled(struct exec *x)
{
	if (!x->cancelled && x->o->cancelled && x->o->cancelled(x->o->cancel_ctx))
		x->cancelled = true;
	return x->cancelled;
}

static void nap(struct exec *x, uint64_t ms)
{
	while (ms && !ex_cancelled(x)) {
		uint64_t k = ms < WAIT_SLICE_MS ? ms : WAIT_SLICE_MS;

		gc_clock_sleep_ms(x->o->clock, k);
		ms -= k;
	}
}

static bool mine(const struct exec *x, const struct gc_sweep_item *it)
{
	return it->why && strcmp(it->region, x->p->region ? x->p->region : "") == 0;
}

static void finish(struct exec *x, struct gc_sweep_item *it, enum gc_sweep_outcome outcome,
		   const struct gc_error *err)
{
	it->outcome = outcome;
	if (err)
		it->err = *err;
	if (outcome == GC_SWEEP_FAILED && err && err->code == GC_EAUTH && !x->fatal) {
		x->fatal = true;
		x->fatal_err = *err;
	}
	if (x->o->progress)
		x->o->progress(x->o->progress_ctx, it);
}

static void fail_cancelled(struct exec *x, struct gc_sweep_item *it)
{
	struct gc_error e;

	gc_error_init(&e);
	if (x->fatal)
		e = x->fatal_err;
	else
		gc_error_set(&e, GC_ECANCELLED, "cancelled before %s '%s' was deleted",
			     gc_sweep_kind_name(it->kind), it->id);
	finish(x, it, GC_SWEEP_FAILED, &e);
}

/* Terminates the region's collected instances in the cloud's batch size; the items of a
 * refused batch fail, the others are left for the wait. Returns how many were asked. */
static size_t terminate_all(struct exec *x, size_t *idx, size_t n)
{
	size_t batch = x->p->ops->max_terminate_batch ? x->p->ops->max_terminate_batch : 1;
	const char **ids = gc_xcalloc(batch, sizeof(*ids));
	size_t asked = 0;

	for (size_t done = 0; done < n;) {
		size_t k = n - done < batch ? n - done : batch;
		struct gc_error e;

		if (ex_cancelled(x) || x->fatal) {
			for (size_t i = done; i < n; i++) {
				fail_cancelled(x, &x->s->items[idx[i]]);
				idx[i] = SIZE_MAX;
			}
			break;
		}
		for (size_t i = 0; i < k; i++)
			ids[i] = x->s->items[idx[done + i]].id;
		gc_error_init(&e);
		if (gc_provider_terminate(x->p, ids, k, &e) < 0) {
			gc_error_prefix(&e, "cannot terminate");
			for (size_t i = done; i < done + k; i++) {
				finish(x, &x->s->items[idx[i]], GC_SWEEP_FAILED, &e);
				idx[i] = SIZE_MAX;
			}
		} else {
			gc_log_info(x->o->log, "%s: terminating %s%s", x->p->region, ids[0],
				    k > 1 ? " and others" : "");
			asked += k;
		}
		done += k;
	}
	free(ids);
	return asked;
}

/* Polls until every asked instance is terminated (or gone from Describe). */
static void wait_terminated(struct exec *x, size_t *idx, size_t n)
{
	const struct gc_tag_filter f = { GC_TAG_CLUSTER, NULL };
	const struct gc_discover_query q = { &f, 1, true };
	uint64_t timeout = x->o->wait_timeout_ms ? x->o->wait_timeout_ms : DEFAULT_WAIT_MS;
	uint64_t poll = x->o->poll_ms ? x->o->poll_ms : DEFAULT_POLL_MS;
	uint64_t since = gc_clock_now_ns(x->o->clock);
	unsigned poll_errors = 0;

	for (;;) {
		struct gc_instance_list now;
		struct gc_error e;
		size_t left = 0;
		uint64_t el;

		if (ex_cancelled(x))
			break;
		gc_instance_list_init(&now);
		gc_error_init(&e);
		if (gc_provider_discover(x->p, &q, &now, &e) < 0) {
			gc_instance_list_release(&now);
			if (e.code == GC_EAUTH || !gc_error_is_retryable(e.code) ||
			    ++poll_errors >= MAX_POLL_ERRORS) {
				gc_error_prefix(&e, "while waiting for instances to terminate");
				for (size_t i = 0; i < n; i++)
					if (idx[i] != SIZE_MAX) {
						finish(x, &x->s->items[idx[i]], GC_SWEEP_FAILED,
						       &e);
						idx[i] = SIZE_MAX;
					}
				return;
			}
			nap(x, poll);
			continue;
		}
		poll_errors = 0;
		for (size_t i = 0; i < n; i++) {
			struct gc_sweep_item *it;
			const struct gc_instance *in = NULL;

			if (idx[i] == SIZE_MAX)
				continue;
			it = &x->s->items[idx[i]];
			for (size_t k = 0; k < now.n && !in; k++)
				if (now.items[k].id && strcmp(now.items[k].id, it->id) == 0)
					in = &now.items[k];
			if (!in || in->state == GC_STATE_TERMINATED) {
				it->state = GC_STATE_TERMINATED;
				finish(x, it, GC_SWEEP_DONE, NULL);
				idx[i] = SIZE_MAX;
				continue;
			}
			it->state = in->state;
			left++;
		}
		gc_instance_list_release(&now);
		if (left == 0)
			return;
		el = (gc_clock_now_ns(x->o->clock) - since) / GC_NS_PER_MS;
		if (el >= timeout) {
			gc_error_set(&e, GC_ETIMEOUT,
				     "still not terminated after %llu s; run gc again to check",
				     (unsigned long long)(el / 1000));
			for (size_t i = 0; i < n; i++)
				if (idx[i] != SIZE_MAX) {
					finish(x, &x->s->items[idx[i]], GC_SWEEP_FAILED, &e);
					idx[i] = SIZE_MAX;
				}
			return;
		}
		nap(x, timeout - el < poll ? timeout - el : poll);
	}
	for (size_t i = 0; i < n; i++)
		if (idx[i] != SIZE_MAX)
			fail_cancelled(x, &x->s->items[idx[i]]);
}

/*
 * The last look before a key pair or security group goes: the cluster's instances now,
 * whatever the scan said. Returns how many are alive (not terminated), or -1 on error.
 */
static long cluster_alive(struct exec *x, const char *cluster, char *first, size_t size,
			  struct gc_error *err)
{
	const struct gc_tag_filter f = { GC_TAG_CLUSTER, cluster };
	const struct gc_discover_query q = { &f, 1, false };
	struct gc_instance_list now;
	long n = 0;

	gc_instance_list_init(&now);
	if (gc_provider_discover(x->p, &q, &now, err) < 0) {
		gc_instance_list_release(&now);
		return -1;
	}
	for (size_t i = 0; i < now.n; i++) {
		if (now.items[i].state == GC_STATE_TERMINATED || !now.items[i].cluster ||
		    strcmp(now.items[i].cluster, cluster) != 0)
			continue;
		if (n++ == 0)
			snprintf(first, size, "%s", now.items[i].id ? now.items[i].id : "?");
	}
	gc_instance_list_release(&now);
	return n;
}

static void delete_resources(struct exec *x, enum gc_sweep_kind kind)
{
	for (size_t i = 0; i < x->s->n; i++) {
		struct gc_sweep_item *it = &x->s->items[i];
		struct gc_error e;
		char first[128] = "";
		long alive;
		int rc;

		if (it->kind != kind || !mine(x, it) || it->outcome != GC_SWEEP_LISTED)
			continue;
		if (ex_cancelled(x) || x->fatal) {
			fail_cancelled(x, it);
			continue;
		}
		gc_error_init(&e);
		alive = cluster_alive(x, it->cluster, first, sizeof(first), &e);
		if (alive < 0) {
			gc_error_prefix(&e, "cannot check cluster '%s' for live instances",
					it->cluster);
			finish(x, it, GC_SWEEP_FAILED, &e);
			continue;
		}
		if (alive > 0) {
			gc_error_set(&e, GC_EGENERIC,
				     "cluster '%s' has %ld live instance%s now (%s%s): left alone",
				     it->cluster, alive, alive == 1 ? "" : "s", first,
				     alive > 1 ? ", ..." : "");
			finish(x, it, GC_SWEEP_KEPT, &e);
			continue;
		}
		rc = kind == GC_SWEEP_KEYPAIR ? gc_provider_delete_keypair(x->p, it->id, &e)
					      : gc_provider_delete_secgroup(x->p, it->id, &e);
		if (rc < 0) {
			gc_error_prefix(&e, "cannot delete %s '%s'", gc_sweep_kind_name(kind),
					it->name ? it->name : it->id);
			finish(x, it, GC_SWEEP_FAILED, &e);
			continue;
		}
		finish(x, it, GC_SWEEP_DONE, NULL);
	}
}

int gc_sweep_execute(struct gc_sweep *s, struct gc_provider *p, const struct gc_sweep_exec_opts *o,
		     struct gc_error *err)
{
	struct exec x = { .s = s, .p = p, .o = o };
	size_t *idx = gc_xcalloc(s->n + 1, sizeof(*idx)), n_idx = 0, failed = 0, total = 0;

	gc_error_init(&x.fatal_err);
	for (size_t i = 0; i < s->n; i++) {
		if (!mine(&x, &s->items[i]))
			continue;
		total++;
		if (s->items[i].kind == GC_SWEEP_INSTANCE && s->items[i].outcome == GC_SWEEP_LISTED)
			idx[n_idx++] = i;
	}
	if (n_idx && terminate_all(&x, idx, n_idx) > 0)
		wait_terminated(&x, idx, n_idx);
	free(idx);
	/* key pairs first: a security group may still refuse while interfaces detach */
	delete_resources(&x, GC_SWEEP_KEYPAIR);
	delete_resources(&x, GC_SWEEP_SECGROUP);

	for (size_t i = 0; i < s->n; i++)
		if (mine(&x, &s->items[i]) && s->items[i].outcome == GC_SWEEP_FAILED)
			failed++;
	if (x.fatal) {
		if (err)
			*err = x.fatal_err;
		return -1;
	}
	if (x.cancelled)
		return gc_error_set(err, GC_ECANCELLED,
				    "cancelled: %zu of %zu resources in %s not "
				    "deleted",
				    failed, total, p->region);
	if (failed)
		return gc_error_set(err, GC_EGENERIC,
				    "%zu of %zu resources in %s could not be deleted; run gc again",
				    failed, total, p->region);
	return 0;
}
