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
#include "core/teardown.h"

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
	case GC_SWEEP_PLACEMENT: return "placement-group";
	case GC_SWEEP_ADDRESS: return "address";
	}
	return "?";
}

void gc_sweep_why_text(unsigned why, char out[32])
{
	static const char *const words[] = { "expired", "orphaned", "selected", "stopped" };
	size_t len = 0;

	out[0] = '\0';
	for (unsigned b = 0; b < 4; b++) {
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
		it = push(s,
			  kind == GC_RESOURCE_KEYPAIR		  ? GC_SWEEP_KEYPAIR
				  : kind == GC_RESOURCE_SECGROUP  ? GC_SWEEP_SECGROUP
				  : kind == GC_RESOURCE_PLACEMENT ? GC_SWEEP_PLACEMENT
								  : GC_SWEEP_ADDRESS,
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
	size_t dropped = 0, first = s->n;

	gc_instance_list_init(&found);
	if (gc_provider_discover(p, &q, &found, err) < 0) {
		gc_instance_list_release(&found);
		gc_error_prefix(err, "cannot list the instances in %s", p->region);
		goto doubt;
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
	if (scan_resources(s, p, GC_RESOURCE_KEYPAIR, err) < 0) {
		gc_error_prefix(err, "cannot list the key pairs in %s", p->region);
		goto doubt;
	}
	if (scan_resources(s, p, GC_RESOURCE_SECGROUP, err) < 0) {
		gc_error_prefix(err, "cannot list the security groups in %s", p->region);
		goto doubt;
	}
	if (scan_resources(s, p, GC_RESOURCE_PLACEMENT, err) < 0) {
		gc_error_prefix(err, "cannot list the placement groups in %s", p->region);
		goto doubt;
	}
	if (scan_resources(s, p, GC_RESOURCE_ADDRESS, err) < 0) {
		gc_error_prefix(err, "cannot list the public addresses in %s", p->region);
		goto doubt;
	}
	return 0;
doubt:
	/* no destruction on doubt (issue 19): nothing of this region is listed or deleted */
	while (s->n > first)
		item_release(&s->items[--s->n]);
	return gc_error_prefix(err, "not deleting anything in %s", p->region);
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
		if ((o->want & GC_SWEEP_EXPIRED) && it->state == GC_STATE_STOPPED)
			it->why |= GC_SWEEP_STOPPED;
		if (o->want & GC_SWEEP_SELECTED)
			it->why |= GC_SWEEP_SELECTED;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct gc_sweep_item *it = &s->items[i];
		/* a public address is kept by its own instance, the rest by any of the cluster */
		const char *only = it->kind == GC_SWEEP_ADDRESS
			? tag_of(it->tags, it->n_tags, GC_TAG_INSTANCE)
			: NULL;
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
				strcmp(in->cluster, it->cluster) == 0 &&
				(!only || strcmp(in->id, only) == 0);
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

/* The teardown (core/teardown.h) does the calls; this says what each outcome means for an
 * item. */
struct exec {
	struct gc_sweep *s;
	const struct gc_sweep_exec_opts *o;
	struct gc_cancel cancel;
	bool cancelled;
	bool fatal; /* the credentials were refused: the first such error, as the item got it */
	struct gc_error fatal_err;
};

static bool ex_cancelled(void *ctx)
{
	struct exec *x = ctx;

	if (!x->cancelled && x->o->cancelled && x->o->cancelled(x->o->cancel_ctx))
		x->cancelled = true;
	return x->cancelled;
}

static bool mine(const struct gc_sweep_item *it, const struct gc_provider *p)
{
	return it->why && strcmp(it->region, p->region ? p->region : "") == 0;
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

/* What the teardown's fate is for the item: every fate but ASKED ends it. */
static void fate(struct exec *x, const struct gc_teardown *t, struct gc_sweep_item *it,
		 enum gc_teardown_fate f, const struct gc_error *err)
{
	struct gc_error e;

	gc_error_init(&e);
	switch (f) {
	case GC_TEARDOWN_TODO:
	case GC_TEARDOWN_ASKED: return;
	case GC_TEARDOWN_DONE: finish(x, it, GC_SWEEP_DONE, NULL); return;
	case GC_TEARDOWN_KEPT: finish(x, it, GC_SWEEP_KEPT, err); return;
	case GC_TEARDOWN_REFUSED:
		e = *err;
		if (it->kind == GC_SWEEP_INSTANCE)
			gc_error_prefix(&e, "cannot terminate");
		else
			gc_error_prefix(&e, "cannot delete %s '%s'", gc_sweep_kind_name(it->kind),
					it->name ? it->name : it->id);
		break;
	case GC_TEARDOWN_FAILED:
		e = *err;
		if (e.code == GC_ETIMEOUT && !t->look_failed)
			gc_error_set(&e, GC_ETIMEOUT,
				     "still not terminated after %llu s; run gc again to check",
				     (unsigned long long)(t->elapsed_ms / 1000));
		break;
	case GC_TEARDOWN_STOPPED:
		if (x->fatal)
			e = x->fatal_err;
		else
			gc_error_set(&e, GC_ECANCELLED, "cancelled before %s '%s' was deleted",
				     gc_sweep_kind_name(it->kind), it->id);
		break;
	}
	finish(x, it, GC_SWEEP_FAILED, &e);
}

static void on_instance(void *ctx, const struct gc_teardown *t, const struct gc_teardown_node *n,
			enum gc_teardown_fate f, const struct gc_error *err)
{
	struct exec *x = ctx;
	struct gc_sweep_item *it = &x->s->items[n->tag];

	it->state = n->state;
	fate(x, t, it, f, err);
}

static void on_resource(void *ctx, const struct gc_teardown *t,
			const struct gc_teardown_resource *r, enum gc_teardown_fate f,
			const struct gc_error *err)
{
	struct exec *x = ctx;

	fate(x, t, &x->s->items[r->tag], f, err);
}

static const struct gc_teardown_hooks exec_hooks = {
	.instance = on_instance,
	.resource = on_resource,
};

int gc_sweep_execute(struct gc_sweep *s, struct gc_provider *p, const struct gc_sweep_exec_opts *o,
		     struct gc_error *err)
{
	struct exec x = { .s = s, .o = o };
	struct gc_teardown t;
	struct gc_teardown_resource *res = gc_xcalloc(s->n + 1, sizeof(*res));
	size_t n_res = 0, failed = 0, total = 0;

	x.cancel.fn = ex_cancelled;
	x.cancel.ctx = &x;
	gc_error_init(&x.fatal_err);
	gc_teardown_init(&t);
	t.p = p;
	t.log = o->log;
	t.wait.clock = o->clock;
	t.wait.cancel = &x.cancel;
	t.wait.interval_ms = o->poll_ms;
	t.wait.timeout_ms = o->wait_timeout_ms;
	t.label = p->region;
	t.hooks = &exec_hooks;
	t.ctx = &x;
	for (size_t i = 0; i < s->n; i++) {
		struct gc_sweep_item *it = &s->items[i];

		if (!mine(it, p))
			continue;
		total++;
		if (it->outcome != GC_SWEEP_LISTED)
			continue;
		if (it->kind == GC_SWEEP_INSTANCE)
			gc_teardown_add(&t, it->id, i, it->state, true);
		else
			res[n_res++] = (struct gc_teardown_resource){
				.kind = it->kind == GC_SWEEP_KEYPAIR	 ? GC_RESOURCE_KEYPAIR
					: it->kind == GC_SWEEP_SECGROUP	 ? GC_RESOURCE_SECGROUP
					: it->kind == GC_SWEEP_PLACEMENT ? GC_RESOURCE_PLACEMENT
									 : GC_RESOURCE_ADDRESS,
				.id = it->id,
				.name = it->name,
				.cluster = it->cluster,
				.tag = i,
				.instance = it->kind == GC_SWEEP_ADDRESS
					? tag_of(it->tags, it->n_tags, GC_TAG_INSTANCE)
					: NULL,
			};
	}
	t.resources = res;
	t.n_resources = n_res;
	gc_teardown_run(&t, NULL);

	for (size_t i = 0; i < s->n; i++)
		if (mine(&s->items[i], p) && s->items[i].outcome == GC_SWEEP_FAILED)
			failed++;
	gc_teardown_release(&t);
	free(res);
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
