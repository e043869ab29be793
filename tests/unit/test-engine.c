/*
 * test-engine.c: the engine against a fake cloud. The fake keeps instances, key pairs and
 * security groups in memory, counts calls per operation, replays client tokens as EC2
 * does (same token: the same instances; same token with other parameters:
 * GC_EIDEMPOTENCY), answers capacity errors for chosen (zone, type, market), delays
 * pending -> running and terminating -> terminated over a number of Describe polls, can
 * hide new instances from Describe for a while, reclaims spot instances on request, and
 * fails call k of an operation (or of all of them) with a chosen code, before or after
 * the call had its effect. Waits run on the fake clock, so nothing here sleeps.
 *
 * Covered: batching, client tokens (deterministic, stable across an interruption,
 * replayed after an interruption with Describe lagging, next generation after a destroy,
 * parameter mismatch), capacity fallback order and the blocked set, quota and auth
 * errors, the truthful report, wait timeout, spot reclaim, replace after the
 * replacements run, destroy scoped by tags, foreign names, the lock, the state
 * directory, the check-ip fallback, capabilities, cancellation, and a fault sweep. Also
 * the CI run's tags and why they stay out of client tokens, destroy --selector, and gc's
 * scan and execution (core/sweep.h) against the same fake cloud.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/alloc.h"
#include "core/engine.h"
#include "core/keygen.h"
#include "core/plan.h"
#include "core/provider.h"
#include "core/spec.h"
#include "core/str.h"
#include "core/sweep.h"
#include "providers/aws/aws.h"
#include "fake-clock.h"

#define CLUSTER "t1"
#define WALL	1763700000 /* 2025-11-21T04:40:00Z */

/* ---- the fake cloud ------------------------------------------------------------- */

enum op {
	OP_DISCOVER,
	OP_CREATE,
	OP_TERMINATE,
	OP_LIST,
	OP_IMPORT,
	OP_DELKEY,
	OP_MKSG,
	OP_DELSG,
	OP_IMAGE,
	OP_PRICE,
	OP_ZONES,
	OP_ADDR,
	OP_REGIONS,
	OP_TYPE_ZONES,
	OP_MKPL,
	OP_DELPL,
	OP_SET_TAG,
	OP_N,
};

struct finst {
	struct gc_instance in;
	unsigned pend_left, term_left, hidden_left;
	bool reclaim; /* a spot instance taken back at its first poll */
};

struct ftoken {
	char *token, *fp;
	char **ids;
	size_t n;
};

struct fres {
	enum gc_resource_kind kind;
	char *id, *name;
	struct gc_tag *tags;
	size_t n_tags;
};

struct cap_rule {
	const char *zone; /* NULL: the "any zone" request */
	const char *type;
	bool spot;
};

struct create_call {
	char zone[32]; /* "" for any zone */
	char type[32];
	bool spot;
	unsigned count;
	char token[65];
	bool key_name;		  /* the request named a key pair */
	bool authorized_key;	  /* the request carried the login key for cloud-init */
	bool host_key;		  /* and a host key */
	char vpc[32], subnet[32]; /* provider.network's, "" without */
	char placement[32];	  /* the placement group's id, "" without */
};

struct fake {
	struct finst *insts;
	size_t n_insts, alloc_insts;
	struct ftoken *tokens;
	size_t n_tokens, alloc_tokens;
	struct fres *res;
	size_t n_res, alloc_res;
	struct cap_rule caps[8];
	size_t n_caps;
	enum gc_errcode cap_code; /* what the caps answer; GC_OK: GC_ECAPACITY */
	unsigned pending_polls, terminating_polls, hidden_polls;
	unsigned reclaim_next; /* the next N launched instances are reclaimed */
	unsigned calls[OP_N], total;
	int fail_op; /* -1: none; OP_N: the fail_at-th call of any operation */
	unsigned fail_at;
	enum gc_errcode fail_code;
	bool fail_after;	/* the call has its effect, then fails (a lost response) */
	unsigned sg_dependency; /* delete_secgroup answers "dependency" this many times */
	/* eventual consistency: the next N terminate calls are taken and do nothing (a
	 * NotFound a driver read as gone) */
	unsigned swallow_terminates;
	struct create_call *log;
	size_t n_log, alloc_log;
	unsigned running_at_terminate; /* running instances outside the ids, at the last call */
	unsigned next_id;
	char last_allow[64];
	char last_sg_vpc[32];
	unsigned network_calls;
	bool caps_in_placement; /* the caps answer only launches into a placement group */
};

static struct fake F;
/* The currency the fake cloud prices in (a test sets "CNY" for a China-site account). */
static const char *fake_currency = "USD";
/* The bid of the last create request, as the driver would send it. */
static double fake_last_bid;

static void fake_free_tags(struct gc_tag *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].key);
		free(t[i].value);
	}
	free(t);
}

static void fake_reset(void)
{
	for (size_t i = 0; i < F.n_insts; i++)
		gc_instance_release(&F.insts[i].in);
	free(F.insts);
	for (size_t i = 0; i < F.n_tokens; i++) {
		free(F.tokens[i].token);
		free(F.tokens[i].fp);
		for (size_t k = 0; k < F.tokens[i].n; k++)
			free(F.tokens[i].ids[k]);
		free(F.tokens[i].ids);
	}
	free(F.tokens);
	for (size_t i = 0; i < F.n_res; i++) {
		free(F.res[i].id);
		free(F.res[i].name);
		fake_free_tags(F.res[i].tags, F.res[i].n_tags);
	}
	free(F.res);
	free(F.log);
	memset(&F, 0, sizeof(F));
	F.fail_op = -1;
}

/* Counts the call; whether it is the one to fail. */
static bool fault_hit(struct gc_provider *p, enum op op)
{
	bool hit = (F.fail_op == (int)op && F.calls[op] == F.fail_at) ||
		(F.fail_op == OP_N && F.total == F.fail_at);

	F.calls[op]++;
	F.total++;
	p->stats.calls++;
	return hit;
}

static int fault_err(struct gc_error *err)
{
	return gc_error_set(err, F.fail_code, "injected %s", gc_strerror(F.fail_code));
}

static void copy_inst(struct gc_instance *d, const struct gc_instance *s)
{
	memset(d, 0, sizeof(*d));
	d->id = gc_xstrdup(s->id);
	d->type = gc_xstrdup(s->type);
	d->zone = gc_xstrdup(s->zone);
	d->image = gc_xstrdup(s->image);
	d->spot = s->spot;
	d->state = s->state;
	d->state_name = gc_xstrdup(gc_instance_state_name(s->state));
	d->client_token = s->client_token ? gc_xstrdup(s->client_token) : NULL;
	d->launch_time = s->launch_time;
	for (size_t i = 0; i < s->n_tags; i++)
		gc_instance_set_tag(d, s->tags[i].key, s->tags[i].value);
}

static struct finst *fake_find(const char *id)
{
	for (size_t i = 0; i < F.n_insts; i++)
		if (strcmp(F.insts[i].in.id, id) == 0)
			return &F.insts[i];
	return NULL;
}

/* fake_find for assertions: the instance must exist. */
static struct finst *must_find(const char *id)
{
	struct finst *f = fake_find(id);

	if (!f) {
		fail_msg("no fake instance '%s'", id);
		abort(); /* not reached: fail_msg does not return */
	}
	return f;
}

/* An instance put into the world directly, as if an earlier run made it. */
/* The engine's wall clock (unix seconds), which tests move; launches are stamped with it. */
static int64_t wall_now = WALL;

static struct finst *fake_add(const char *cluster, const char *group, const char *hash,
			      const char *type, enum gc_instance_state state)
{
	struct finst *f;
	char id[32];

	GC_ALLOC_GROW(F.insts, F.n_insts + 1, F.alloc_insts);
	f = &F.insts[F.n_insts++];
	memset(f, 0, sizeof(*f));
	snprintf(id, sizeof(id), "i-%05u", ++F.next_id);
	f->in.id = gc_xstrdup(id);
	f->in.type = gc_xstrdup(type);
	f->in.zone = gc_xstrdup("z-a");
	f->in.image = gc_xstrdup("ami-old");
	f->in.state = state;
	f->in.launch_time = WALL - 3600 + F.next_id;
	if (cluster)
		gc_instance_set_tag(&f->in, GC_TAG_CLUSTER, cluster);
	if (group)
		gc_instance_set_tag(&f->in, GC_TAG_GROUP, group);
	if (hash)
		gc_instance_set_tag(&f->in, GC_TAG_SPEC_HASH, hash);
	return f;
}

static bool tags_match(const struct gc_tag *tags, size_t n, const struct gc_tag_filter *f,
		       size_t nf)
{
	for (size_t i = 0; i < nf; i++) {
		bool ok = false;

		for (size_t k = 0; k < n && !ok; k++)
			ok = strcmp(tags[k].key, f[i].key) == 0 &&
				(!f[i].value || strcmp(tags[k].value, f[i].value) == 0);
		if (!ok)
			return false;
	}
	return true;
}

static int fake_discover(struct gc_provider *p, const struct gc_discover_query *q,
			 struct gc_instance_list *out, struct gc_error *err)
{
	bool hit = fault_hit(p, OP_DISCOVER);

	if (hit)
		return fault_err(err); /* reads have no effect to keep */
	for (size_t i = 0; i < F.n_insts; i++) {
		struct finst *f = &F.insts[i];

		if (f->in.state == GC_STATE_PENDING) {
			if (f->reclaim)
				f->in.state = GC_STATE_TERMINATED;
			else if (f->pend_left == 0)
				f->in.state = GC_STATE_RUNNING;
			else
				f->pend_left--;
		} else if (f->in.state == GC_STATE_TERMINATING) {
			if (f->term_left == 0)
				f->in.state = GC_STATE_TERMINATED;
			else
				f->term_left--;
		}
		if (f->hidden_left) {
			f->hidden_left--;
			continue;
		}
		if (!tags_match(f->in.tags, f->in.n_tags, q->tags, q->n_tags))
			continue;
		if (!q->include_terminated && f->in.state == GC_STATE_TERMINATED)
			continue;
		copy_inst(gc_instance_list_push(out), &f->in);
	}
	return 0;
}

static char *create_fingerprint(const struct gc_create_request *req)
{
	struct gc_buf b = GC_BUF_INIT(0);

	/* every parameter but the token and the zone, as EC2 compares them */
	gc_buf_addf(&b, "%s|%s|%d|%g|%u|%u|%s|%s|%lld", req->type, req->image_id, req->spot,
		    req->spot_max_price, req->count, req->disk_gb, req->key_name,
		    req->security_group_id, (long long)req->expires_at);
	for (size_t i = 0; i < req->n_tags; i++)
		gc_buf_addf(&b, "|%s=%s", req->tags[i].key, req->tags[i].value);
	return gc_buf_detach(&b, NULL);
}

static int fake_create(struct gc_provider *p, const struct gc_create_request *req,
		       struct gc_instance_list *out, struct gc_error *err)
{
	bool hit = fault_hit(p, OP_CREATE);
	struct create_call *c;
	struct ftoken *tok = NULL;
	char *fp;

	GC_ALLOC_GROW(F.log, F.n_log + 1, F.alloc_log);
	c = &F.log[F.n_log++];
	memset(c, 0, sizeof(*c));
	snprintf(c->zone, sizeof(c->zone), "%s", req->zone ? req->zone : "");
	snprintf(c->type, sizeof(c->type), "%s", req->type);
	snprintf(c->token, sizeof(c->token), "%s", req->client_token ? req->client_token : "");
	c->spot = req->spot;
	c->count = req->count;
	snprintf(c->vpc, sizeof(c->vpc), "%s", req->vpc_id ? req->vpc_id : "");
	snprintf(c->subnet, sizeof(c->subnet), "%s", req->subnet_id ? req->subnet_id : "");
	snprintf(c->placement, sizeof(c->placement), "%s",
		 req->placement_id ? req->placement_id : "");
	c->key_name = req->key_name != NULL;
	c->authorized_key =
		req->authorized_key && gc_starts_with(req->authorized_key, "ssh-ed25519 ");
	c->host_key = req->host_key_private && req->host_key_public;
	if (hit && !F.fail_after)
		return fault_err(err);
	for (size_t i = 0; i < F.n_caps && (!F.caps_in_placement || req->placement_id); i++)
		if ((F.caps[i].zone ? req->zone && !strcmp(F.caps[i].zone, req->zone)
				    : !req->zone) &&
		    !strcmp(F.caps[i].type, req->type) && F.caps[i].spot == req->spot)
			return F.cap_code
				? gc_error_set(err, F.cap_code, "over a quota")
				: gc_error_set(err, GC_ECAPACITY, "InsufficientInstanceCapacity");

	fp = create_fingerprint(req);
	fake_last_bid = req->spot_max_price;
	for (size_t i = 0; req->client_token && i < F.n_tokens; i++)
		if (!strcmp(F.tokens[i].token, req->client_token))
			tok = &F.tokens[i];
	if (tok) {
		if (strcmp(tok->fp, fp) != 0) {
			free(fp);
			return gc_error_set(err, GC_EIDEMPOTENCY, "IdempotentParameterMismatch");
		}
		free(fp);
		for (size_t i = 0; i < tok->n; i++)
			copy_inst(gc_instance_list_push(out), &must_find(tok->ids[i])->in);
		return hit ? fault_err(err) : 0;
	}
	if (req->client_token) {
		GC_ALLOC_GROW(F.tokens, F.n_tokens + 1, F.alloc_tokens);
		tok = &F.tokens[F.n_tokens++];
		memset(tok, 0, sizeof(*tok));
		tok->token = gc_xstrdup(req->client_token);
		tok->fp = fp;
		tok->ids = gc_xcalloc(req->count, sizeof(*tok->ids));
	} else {
		free(fp);
	}
	for (unsigned k = 0; k < req->count; k++) {
		struct finst *f = fake_add(NULL, NULL, NULL, req->type, GC_STATE_PENDING);

		free(f->in.zone);
		f->in.zone = gc_xstrdup(req->zone ? req->zone : "z-a");
		free(f->in.image);
		f->in.image = gc_xstrdup(req->image_id);
		f->in.spot = req->spot;
		f->in.launch_time = wall_now + F.next_id; /* a cloud's launch time: now */
		f->in.client_token = req->client_token ? gc_xstrdup(req->client_token) : NULL;
		for (size_t i = 0; i < req->n_tags; i++)
			gc_instance_set_tag(&f->in, req->tags[i].key, req->tags[i].value);
		f->pend_left = F.pending_polls;
		f->hidden_left = F.hidden_polls;
		if (F.reclaim_next) {
			F.reclaim_next--;
			f->reclaim = true;
		}
		if (tok)
			tok->ids[tok->n++] = gc_xstrdup(f->in.id);
		copy_inst(gc_instance_list_push(out), &f->in);
	}
	return hit ? fault_err(err) : 0;
}

static int fake_terminate(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err)
{
	bool hit = fault_hit(p, OP_TERMINATE);

	if (hit && !F.fail_after)
		return fault_err(err);
	if (F.swallow_terminates) {
		F.swallow_terminates--;
		return 0;
	}
	F.running_at_terminate = 0;
	for (size_t i = 0; i < F.n_insts; i++) {
		bool listed = false;

		for (size_t k = 0; k < n; k++)
			listed |= strcmp(ids[k], F.insts[i].in.id) == 0;
		if (!listed && F.insts[i].in.state == GC_STATE_RUNNING)
			F.running_at_terminate++;
	}
	for (size_t k = 0; k < n; k++) {
		struct finst *f = fake_find(ids[k]);

		if (!f || f->in.state == GC_STATE_TERMINATED || f->in.state == GC_STATE_TERMINATING)
			continue;
		f->in.state = GC_STATE_TERMINATING;
		f->term_left = F.terminating_polls;
	}
	return hit ? fault_err(err) : 0;
}

/* set_tag: the tag set (or removed: gone from the tags, and idle_s read as none) */
static int fake_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
			const char *value, struct gc_error *err)
{
	if (fault_hit(p, OP_SET_TAG))
		return fault_err(err);
	for (size_t k = 0; k < n; k++) {
		struct gc_instance *in = &must_find(ids[k])->in;

		if (value) {
			gc_instance_set_tag(in, key, value);
			continue;
		}
		for (size_t i = 0; i < in->n_tags; i++)
			if (strcmp(in->tags[i].key, key) == 0) {
				free(in->tags[i].key);
				free(in->tags[i].value);
				in->tags[i] = in->tags[--in->n_tags];
				break;
			}
		if (strcmp(key, GC_TAG_IDLE) == 0)
			in->idle_s = 0;
	}
	return 0;
}

static struct fres *fake_res_add(enum gc_resource_kind kind, const char *name, const char *cluster)
{
	struct fres *r;
	char id[32];

	GC_ALLOC_GROW(F.res, F.n_res + 1, F.alloc_res);
	r = &F.res[F.n_res++];
	memset(r, 0, sizeof(*r));
	snprintf(id, sizeof(id), "%s-%05u", kind == GC_RESOURCE_KEYPAIR ? "key" : "sg",
		 ++F.next_id);
	r->kind = kind;
	r->id = gc_xstrdup(id);
	r->name = gc_xstrdup(name);
	if (cluster) {
		r->tags = gc_xcalloc(1, sizeof(*r->tags));
		r->tags[0].key = gc_xstrdup(GC_TAG_CLUSTER);
		r->tags[0].value = gc_xstrdup(cluster);
		r->n_tags = 1;
	}
	return r;
}

static struct fres *fake_res_find(enum gc_resource_kind kind, const char *name)
{
	for (size_t i = 0; i < F.n_res; i++)
		if (F.res[i].kind == kind && !strcmp(F.res[i].name, name))
			return &F.res[i];
	return NULL;
}

static int fake_list(struct gc_provider *p, enum gc_resource_kind kind,
		     const struct gc_tag_filter *tags, size_t n_tags, struct gc_resource_list *out,
		     struct gc_error *err)
{
	if (fault_hit(p, OP_LIST))
		return fault_err(err);
	for (size_t i = 0; i < F.n_res; i++) {
		struct gc_resource *r;

		if (F.res[i].kind != kind ||
		    !tags_match(F.res[i].tags, F.res[i].n_tags, tags, n_tags))
			continue;
		r = gc_resource_list_push(out);
		r->id = gc_xstrdup(F.res[i].id);
		r->name = gc_xstrdup(F.res[i].name);
		r->tags = gc_xcalloc(F.res[i].n_tags + 1, sizeof(*r->tags));
		for (size_t k = 0; k < F.res[i].n_tags; k++) {
			r->tags[k].key = gc_xstrdup(F.res[i].tags[k].key);
			r->tags[k].value = gc_xstrdup(F.res[i].tags[k].value);
		}
		r->n_tags = F.res[i].n_tags;
	}
	return 0;
}

static int fake_make_res(struct gc_provider *p, enum op op, enum gc_resource_kind kind,
			 const char *name, const struct gc_tag *tags, size_t n_tags, char **out_id,
			 struct gc_error *err)
{
	bool hit = fault_hit(p, op);
	struct fres *r;

	if (hit && !F.fail_after)
		return fault_err(err);
	if (fake_res_find(kind, name))
		return gc_error_set(err, GC_EINVALID, "%s.Duplicate: '%s' already exists",
				    kind == GC_RESOURCE_KEYPAIR ? "InvalidKeyPair" : "InvalidGroup",
				    name);
	r = fake_res_add(kind, name, NULL);
	r->tags = gc_xcalloc(n_tags + 1, sizeof(*r->tags));
	for (size_t i = 0; i < n_tags; i++) {
		r->tags[i].key = gc_xstrdup(tags[i].key);
		r->tags[i].value = gc_xstrdup(tags[i].value);
	}
	r->n_tags = n_tags;
	if (hit)
		return fault_err(err);
	*out_id = gc_xstrdup(r->id);
	return 0;
}

static int fake_import(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		       struct gc_error *err)
{
	assert_true(gc_starts_with(req->public_key_line, "ssh-ed25519 "));
	return fake_make_res(p, OP_IMPORT, GC_RESOURCE_KEYPAIR, req->name, req->tags, req->n_tags,
			     out_id, err);
}

static int fake_mksg(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
		     struct gc_error *err)
{
	snprintf(F.last_allow, sizeof(F.last_allow), "%s", req->allow_from[0]);
	snprintf(F.last_sg_vpc, sizeof(F.last_sg_vpc), "%s", req->vpc_id ? req->vpc_id : "");
	if (req->id) { /* an existing group: its rules reconciled, nothing made */
		*out_id = gc_xstrdup(req->id);
		return 0;
	}
	return fake_make_res(p, OP_MKSG, GC_RESOURCE_SECGROUP, req->name, req->tags, req->n_tags,
			     out_id, err);
}

static int fake_delete(struct gc_provider *p, enum op op, const char *id, struct gc_error *err)
{
	bool hit = fault_hit(p, op);

	if (hit && !F.fail_after)
		return fault_err(err);
	if (op == OP_DELSG && F.sg_dependency) {
		F.sg_dependency--;
		return gc_error_set(err, GC_EGENERIC,
				    "DependencyViolation: resource %s has a "
				    "dependent object",
				    id);
	}
	for (size_t i = 0; i < F.n_res; i++) {
		if (strcmp(F.res[i].id, id) != 0)
			continue;
		free(F.res[i].id);
		free(F.res[i].name);
		fake_free_tags(F.res[i].tags, F.res[i].n_tags);
		F.res[i] = F.res[--F.n_res];
		break;
	}
	return hit ? fault_err(err) : 0;
}

static int fake_delkey(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return fake_delete(p, OP_DELKEY, id, err);
}

static int fake_delsg(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return fake_delete(p, OP_DELSG, id, err);
}

static int fake_mkpl(struct gc_provider *p, const struct gc_placement_request *req, char **out_id,
		     struct gc_error *err)
{
	if (req->type && req->type[0] == 'u') { /* a type the placement resource does not take */
		(void)fault_hit(p, OP_MKPL);
		return gc_error_set(err, GC_EUNSUPPORTED, "type '%s' takes no placement group",
				    req->type);
	}
	return fake_make_res(p, OP_MKPL, GC_RESOURCE_PLACEMENT, req->name, req->tags, req->n_tags,
			     out_id, err);
}

static int fake_delpl(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return fake_delete(p, OP_DELPL, id, err);
}

static int fake_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		      struct gc_error *err)
{
	(void)is_alias;
	if (fault_hit(p, OP_IMAGE))
		return fault_err(err);
	*out_id = gc_xasprintf("ami-%s", image);
	return 0;
}

static int fake_price(struct gc_provider *p, const char *type, const char *zone, bool spot,
		      double *out, char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	(void)zone;
	if (fault_hit(p, OP_PRICE))
		return fault_err(err);
	*out = spot ? 0.3 : 1.0;
	if (type && strcmp(type, "t9") == 0) /* the dear one, for the cost cap */
		*out *= 10;
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", fake_currency);
	return 0;
}

static int fake_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	if (fault_hit(p, OP_ZONES))
		return fault_err(err);
	*out = gc_xcalloc(3, sizeof(**out));
	(*out)[0] = gc_xstrdup("z-a");
	(*out)[1] = gc_xstrdup("z-b");
	(*out)[2] = gc_xstrdup("z-c");
	*n_out = 3;
	return 0;
}

static int fake_addr(struct gc_provider *p, char **out, struct gc_error *err)
{
	if (fault_hit(p, OP_ADDR))
		return fault_err(err);
	*out = gc_xstrdup(" 198.51.100.7\n");
	return 0;
}

#define FAKE_FUNCS                                                                                 \
	.discover = fake_discover, .create = fake_create, .terminate = fake_terminate,             \
	.list_resources = fake_list, .import_keypair = fake_import, .delete_keypair = fake_delkey, \
	.create_secgroup = fake_mksg, .delete_secgroup = fake_delsg, .resolve_image = fake_image,  \
	.price = fake_price, .zones = fake_zones, .set_tag = fake_set_tag

static const struct gc_provider_ops fake_ops = {
	.name = "fake",
	.facts = &aws_facts,
	.caps = GC_CAP_SPOT | GC_CAP_SPOT_MAX_PRICE | GC_CAP_CLOUD_TTL | GC_CAP_CLIENT_TOKEN |
		GC_CAP_PRICE | GC_CAP_ED25519_KEYPAIR,
	.max_create_batch = 2,
	.max_terminate_batch = 3,
	.client_token_max = 64,
	FAKE_FUNCS,
	.caller_address = fake_addr,
};

/* A cloud without spot, TTL or a caller-address call: capability checks, check-ip. */
static const struct gc_provider_ops plain_ops = {
	.name = "plain",
	.facts = &aws_facts,
	.caps = GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE,
	.max_create_batch = 2,
	.max_terminate_batch = 3,
	.client_token_max = 40,
	FAKE_FUNCS,
};

static int fake_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	if (fault_hit(p, OP_REGIONS))
		return fault_err(err);
	*out = gc_xcalloc(2, sizeof(**out));
	(*out)[0] = gc_xstrdup("us-east-1");
	(*out)[1] = gc_xstrdup("eu-west-1");
	*n_out = 2;
	return 0;
}

/* every type in every zone, but "g5.gap" only in z-a and "nope.type" nowhere */
static int fake_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
			   struct gc_error *err)
{
	size_t n = strcmp(type, "nope.type") == 0 ? 0 : strcmp(type, "g5.gap") == 0 ? 1 : 3;

	if (fault_hit(p, OP_TYPE_ZONES))
		return fault_err(err);
	*out = gc_xcalloc(3, sizeof(**out));
	for (size_t i = 0; i < n; i++)
		(*out)[i] = gc_xasprintf("z-%c", (char)('a' + i));
	*n_out = n;
	return 0;
}

/* A cloud that also lists its regions and the zones offering each type: plan's checks. */
static const struct gc_provider_ops offer_ops = {
	.name = "offer",
	.facts = &aws_facts,
	.caps = GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE | GC_CAP_ED25519_KEYPAIR,
	.max_create_batch = 2,
	.max_terminate_batch = 3,
	.client_token_max = 64,
	FAKE_FUNCS,
	.caller_address = fake_addr,
	.regions = fake_regions,
	.type_zones = fake_type_zones,
};

/* A cloud with placement groups (docs/internals/fabric.md). */
static const struct gc_provider_ops placement_ops = {
	.name = "placed",
	.facts = &aws_facts,
	.caps = GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE | GC_CAP_ED25519_KEYPAIR,
	.max_create_batch = 2,
	.max_terminate_batch = 3,
	.client_token_max = 64,
	FAKE_FUNCS,
	.caller_address = fake_addr,
	.create_placement = fake_mkpl,
	.delete_placement = fake_delpl,
};

/* ---- fixture -------------------------------------------------------------------- */

struct kv {
	const char *name;
	const char *value;
};

struct events {
	unsigned n[GC_EV_TERMINATED + 1];
	unsigned cancel_after_created; /* cancel once this many CREATED events came; 0 never */
	unsigned cancel_after_waiting;
	bool cancel;
	uint64_t last_elapsed;
	char failed[8][96];   /* "zone/type/market" of CREATE_FAILED events */
	char skipped[4][256]; /* INFO events that skip a candidate for the cost cap */
	unsigned n_skipped;
	char fallback[256]; /* the INFO event of a fallback inside a placement group */
};

struct t {
	char dir[64];
	char state_dir[96], home[96];
	char checkip[96];
	struct kv vars[10]; /* 3 fixed, then set_var's, then a NULL name */
	struct gc_spec_env env;
	struct gc_spec *spec;
	struct gc_provider prov;
	struct gc_engine e;
	bool engine_up;
	struct events ev;
	struct gc_engine_opts opts;
};

static const char *kv_lookup(void *ctx, const char *name)
{
	for (const struct kv *p = ctx; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p->value;
	return NULL;
}

static int64_t fixed_wall(void *ctx)
{
	return *(int64_t *)ctx;
}

static void on_event(void *ctx, const struct gc_engine_event *ev)
{
	struct events *e = ctx;

	e->n[ev->kind]++;
	if (ev->kind == GC_EV_WAITING)
		e->last_elapsed = ev->elapsed_ms;
	if (ev->kind == GC_EV_CREATE_FAILED && e->n[ev->kind] <= 8)
		snprintf(e->failed[e->n[ev->kind] - 1], sizeof(e->failed[0]), "%s/%s/%s",
			 ev->zone ? ev->zone : "any", ev->type, ev->spot ? "spot" : "on-demand");
	if (ev->kind == GC_EV_INFO && ev->message && !strncmp(ev->message, "skipped ", 8) &&
	    e->n_skipped < 4)
		snprintf(e->skipped[e->n_skipped++], sizeof(e->skipped[0]), "%s", ev->message);
	if (ev->kind == GC_EV_INFO && ev->message &&
	    (strstr(ev->message, "no room for ") || strstr(ev->message, "cannot launch in")))
		snprintf(e->fallback, sizeof(e->fallback), "%s", ev->message);
	if (e->cancel_after_created && ev->kind == GC_EV_CREATED &&
	    e->n[GC_EV_CREATED] >= e->cancel_after_created)
		e->cancel = true;
	if (e->cancel_after_waiting && ev->kind == GC_EV_WAITING &&
	    e->n[GC_EV_WAITING] >= e->cancel_after_waiting)
		e->cancel = true;
}

static bool is_cancelled(void *ctx)
{
	return ((struct events *)ctx)->cancel;
}

/* rm -r of what the tests made: directories and plain files only, no symlinks followed */
static void rm_tree(const char *path)
{
	struct stat st;
	struct dirent *d;
	DIR *dir;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode) && (dir = opendir(path))) {
		while ((d = readdir(dir))) {
			char *sub;

			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			sub = gc_xasprintf("%s/%s", path, d->d_name);
			rm_tree(sub);
			free(sub);
		}
		closedir(dir);
	}
	remove(path);
}

static int setup(void **state)
{
	struct t *t = gc_xcalloc(1, sizeof(*t));

	snprintf(t->dir, sizeof(t->dir), "/tmp/gc-engine-XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->state_dir, sizeof(t->state_dir), "%s/state", t->dir);
	snprintf(t->home, sizeof(t->home), "%s/home", t->dir);
	mkdir(t->home, 0700);
	setenv("HOME", t->home, 1);
	setenv("XDG_STATE_HOME", t->home, 1);
	t->vars[0] = (struct kv){ "GPUCLUSTER_STATE_DIR", t->state_dir };
	t->vars[1] = (struct kv){ "HOME", t->home };
	t->vars[2] = (struct kv){ "GPUCLUSTER_CHECKIP_URL", t->checkip };
	t->env.lookup = kv_lookup;
	t->env.ctx = t->vars;
	t->ev = (struct events){ 0 };
	t->opts.progress = on_event;
	t->opts.progress_ctx = &t->ev;
	t->opts.cancelled = is_cancelled;
	t->opts.cancel_ctx = &t->ev;
	t->opts.poll_ms = 1000;
	t->opts.wait_timeout_ms = 600000;
	fake_reset();
	fc.now = 1000 * MS;
	fc.slept = 0;
	fc.sleeps = 0;
	wall_now = WALL;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	if (t->engine_up)
		gc_engine_release(&t->e);
	gc_spec_free(t->spec);
	fake_reset();
	rm_tree(t->dir);
	free(t);
	return 0;
}

static void up_with(struct t *t, const struct gc_provider_ops *ops, const char *yaml)
{
	struct gc_diags diags;
	struct gc_error err;

	gc_diags_init(&diags, "t.yaml");
	gc_error_init(&err);
	gc_spec_free(t->spec);
	t->spec = NULL;
	assert_int_equal(
		gc_spec_load_buffer(&t->spec, "t.yaml", yaml, strlen(yaml), NULL, &diags, &err), 0);
	gc_diags_release(&diags);
	if (t->engine_up)
		gc_engine_release(&t->e);
	memset(&t->prov, 0, sizeof(t->prov));
	t->prov.ops = ops;
	t->prov.clock = &fake;
	t->prov.region = t->spec->provider.region;
	assert_int_equal(gc_engine_init(&t->e, t->spec, &t->prov, &t->env, NULL, &err), 0);
	t->e.clock = &fake;
	t->e.wall = fixed_wall;
	t->e.wall_ctx = &wall_now;
	t->engine_up = true;
}

static void up(struct t *t, const char *yaml)
{
	up_with(t, &fake_ops, yaml);
}

/* plan + apply, as cmd/ does it */
static int apply(struct t *t, struct gc_engine_report *rep, struct gc_error *err)
{
	struct gc_instance_list live;
	struct gc_plan plan;
	int r;

	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	gc_engine_report_init(rep);
	gc_error_init(err);
	r = gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, err);
	if (r == 0)
		r = gc_engine_apply(&t->e, &plan, &t->opts, rep, err);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	return r;
}

static int apply_quiet(struct t *t, struct gc_error *err)
{
	struct gc_engine_report rep;
	int r = apply(t, &rep, err);

	gc_engine_report_release(&rep);
	return r;
}

/* Instances of a cluster that cost money: pending or running. */
static unsigned alive(const char *cluster)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_insts; i++) {
		const struct gc_instance *in = &F.insts[i].in;

		if (in->cluster && !strcmp(in->cluster, cluster) &&
		    (in->state == GC_STATE_PENDING || in->state == GC_STATE_RUNNING))
			n++;
	}
	return n;
}

static unsigned in_state(const char *cluster, enum gc_instance_state s)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_insts; i++)
		if (F.insts[i].in.cluster && !strcmp(F.insts[i].in.cluster, cluster) &&
		    F.insts[i].in.state == s)
			n++;
	return n;
}

static const struct gc_engine_group_report *group_of(const struct gc_engine_report *r,
						     const char *name)
{
	for (size_t i = 0; i < r->n_groups; i++)
		if (!strcmp(r->groups[i].group, name))
			return &r->groups[i];
	fail_msg("no report for group '%s'", name);
	abort(); /* not reached: fail_msg does not return */
}

static void reset_calls(void)
{
	memset(F.calls, 0, sizeof(F.calls));
	F.total = 0;
	F.n_log = 0;
}

#define HEAD                       \
	"name: " CLUSTER "\n"      \
	"provider:\n"              \
	"  name: aws\n"            \
	"  region: us-east-1\n"    \
	"tags: {team: research}\n" \
	"node_groups:\n"

static const char *const SPEC5 = HEAD "  - name: workers\n"
				      "    count: 5\n"
				      "    instance_types: [g5.xlarge]\n"
				      "    zones: [z-a]\n";

/* ---- tests ---------------------------------------------------------------------- */

static void test_client_token(void **state)
{
	char a[65], b[65];

	(void)state;
	gc_engine_client_token(a, 64, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 64);
	assert_true(gc_starts_with(a, "gc-"));
	for (const char *s = a + 3; *s; s++)
		assert_true((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'));

	/* every input matters */
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 1, 2, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 1, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, "z-b", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, NULL, "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, "z-a", "u", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, "z-a", "t", false, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 1);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "i", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", "cty", 0, 2, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "g", "h", NULL, 0, 2, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "c", "h", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	gc_engine_client_token(b, 64, "d", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_string_not_equal(a, b);
	/* no ambiguity between fields: "ab"+"c" is not "a"+"bc" */
	gc_engine_client_token(a, 64, "ab", "c", "h", "ctx", 0, 2, NULL, "t", true, 0);
	gc_engine_client_token(b, 64, "a", "bc", "h", "ctx", 0, 2, NULL, "t", true, 0);
	assert_string_not_equal(a, b);
	/* an empty zone is not "any zone" */
	gc_engine_client_token(a, 64, "c", "g", "h", "ctx", 0, 2, "", "t", true, 0);
	gc_engine_client_token(b, 64, "c", "g", "h", "ctx", 0, 2, NULL, "t", true, 0);
	assert_string_not_equal(a, b);

	/* cut to the cloud's limit, as a prefix of the full one */
	gc_engine_client_token(a, 64, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	gc_engine_client_token(b, 40, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_int_equal(strlen(b), 40);
	assert_memory_equal(a, b, 40);
	gc_engine_client_token(b, 0, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_string_equal(a, b);
	gc_engine_client_token(b, 1000, "c", "g", "h", "ctx", 0, 2, "z-a", "t", true, 0);
	assert_string_equal(a, b);
}

/* lifecycle.idle goes on every instance as gpucluster:idle, in seconds, and reads back */
static void test_idle_tag(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"lifecycle: {idle: 30m}\n");
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.n_insts, 2);
	for (size_t i = 0; i < F.n_insts; i++) {
		assert_string_equal(gc_instance_tag(&F.insts[i].in, GC_TAG_IDLE), "1800");
		assert_int_equal(F.insts[i].in.idle_s, 1800);
		assert_int_equal(F.insts[i].in.expires_at, 0);
	}
	gc_engine_report_release(&rep);

	/* a value that is not seconds is no idle stop */
	gc_instance_set_tag(&F.insts[0].in, GC_TAG_IDLE, "30m");
	assert_int_equal(F.insts[0].in.idle_s, 0);
	gc_instance_set_tag(&F.insts[0].in, GC_TAG_IDLE, "600");
	assert_int_equal(F.insts[0].in.idle_s, 600);
	gc_instance_set_tag(&F.insts[0].in, GC_TAG_IDLE, "-5");
	assert_int_equal(F.insts[0].in.idle_s, 0);
	gc_instance_set_tag(&F.insts[0].in, GC_TAG_IDLE, "1800");

	/* lifecycle.idle changed: the kept nodes are retagged in place, one call for both
	 * (max_terminate_batch 3), nothing launched or terminated */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"lifecycle: {idle: 45m}\n");
	memset(F.calls, 0, sizeof(F.calls));
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_SET_TAG], 1);
	assert_int_equal(F.calls[OP_CREATE] + F.calls[OP_TERMINATE], 0);
	assert_int_equal(F.n_insts, 2);
	for (size_t i = 0; i < F.n_insts; i++) {
		assert_string_equal(gc_instance_tag(&F.insts[i].in, GC_TAG_IDLE), "2700");
		assert_int_equal(F.insts[i].in.idle_s, 2700);
	}
	gc_engine_report_release(&rep);
	/* again: nothing to retag */
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_SET_TAG], 1);
	gc_engine_report_release(&rep);

	/* one node retagged by hand: only it is sent */
	gc_instance_set_tag(&F.insts[1].in, GC_TAG_IDLE, "600");
	F.fail_op = OP_SET_TAG;
	F.fail_at = 1;
	F.fail_code = GC_ETHROTTLED;
	assert_int_equal(apply(t, &rep, &err), -1); /* the run's error, told once */
	assert_int_equal(err.code, GC_ETHROTTLED);
	assert_non_null(strstr(err.message, "cannot set the idle stop of 1 node: injected"));
	gc_engine_report_release(&rep);
	F.fail_op = -1;
	assert_int_equal(F.calls[OP_SET_TAG], 2);
	assert_int_equal(F.insts[1].in.idle_s, 600);

	/* lifecycle.idle dropped: the tag is removed from both */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n");
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_SET_TAG], 3);
	assert_int_equal(F.calls[OP_CREATE] + F.calls[OP_TERMINATE], 0);
	for (size_t i = 0; i < F.n_insts; i++) {
		assert_null(gc_instance_tag(&F.insts[i].in, GC_TAG_IDLE));
		assert_int_equal(F.insts[i].in.idle_s, 0);
	}
	gc_engine_report_release(&rep);
}

static void test_create_in_batches(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	struct stat st;
	char key[160];

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 5\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n"
		"lifecycle: {ttl: 2h}\n");
	F.pending_polls = 3;
	assert_int_equal(apply(t, &rep, &err), 0);

	/* ceil(5 / 2) create calls, each with its own token */
	assert_int_equal(F.calls[OP_CREATE], 3);
	assert_int_equal(F.log[0].count, 2);
	assert_int_equal(F.log[1].count, 2);
	assert_int_equal(F.log[2].count, 1);
	assert_string_not_equal(F.log[0].token, F.log[1].token);
	assert_string_not_equal(F.log[1].token, F.log[2].token);
	assert_int_equal(alive(CLUSTER), 5);
	assert_int_equal(in_state(CLUSTER, GC_STATE_RUNNING), 5);
	assert_int_equal(rep.created.n, 5);
	for (size_t i = 0; i < rep.created.n; i++)
		assert_int_equal(rep.created.items[i].state, GC_STATE_RUNNING);
	assert_int_equal(group_of(&rep, "workers")->wanted, 5);
	assert_int_equal(group_of(&rep, "workers")->created, 5);
	assert_int_equal(group_of(&rep, "workers")->running, 5);
	assert_int_equal(group_of(&rep, "workers")->err.code, GC_OK);
	/* the apply's own calls: all but the plan's zone listing, image lookup (its checks
	 * against the cloud), discover and price lookup */
	assert_int_equal(rep.api_calls, F.total - 4);

	/* every instance is tagged at creation */
	for (size_t i = 0; i < F.n_insts; i++) {
		const struct gc_instance *in = &F.insts[i].in;

		assert_string_equal(gc_instance_tag(in, GC_TAG_CLUSTER), CLUSTER);
		assert_string_equal(gc_instance_tag(in, GC_TAG_GROUP), "workers");
		assert_int_equal(strlen(gc_instance_tag(in, GC_TAG_SPEC_HASH)), GC_SPEC_HASH_LEN);
		assert_string_equal(gc_instance_tag(in, GC_TAG_EXPIRES_AT), "2025-11-21T06:40:00Z");
		assert_null(gc_instance_tag(in, GC_TAG_IDLE)); /* no lifecycle.idle */
		assert_string_equal(gc_instance_tag(in, "Name"), CLUSTER "-workers");
		assert_string_equal(gc_instance_tag(in, "team"), "research");
		assert_string_equal(in->image, "ami-ubuntu-22.04");
	}
	/* the waits polled on the fake clock and said how long they took */
	assert_true(F.calls[OP_DISCOVER] >= 4);
	assert_true(t->ev.n[GC_EV_WAITING] >= 3);
	assert_int_equal(t->ev.last_elapsed, 3000);
	assert_int_equal(t->ev.n[GC_EV_CREATE_START], 3);
	assert_int_equal(t->ev.n[GC_EV_CREATED], 3);

	/* one key pair and one security group, tagged, the key on disk private */
	assert_int_equal(F.calls[OP_IMPORT], 1);
	for (size_t i = 0; i < F.n_log; i++)
		assert_true(F.log[i].key_name && !F.log[i].authorized_key);
	assert_int_equal(F.calls[OP_MKSG], 1);
	assert_string_equal(F.last_allow, "198.51.100.7/32");
	assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER));
	snprintf(key, sizeof(key), "%s/clusters/aws/us-east-1/%s/id_ed25519", t->state_dir,
		 CLUSTER);
	assert_int_equal(stat(key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	gc_engine_report_release(&rep);

	/* converged: the next run changes nothing and creates nothing */
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 0);
	assert_int_equal(F.calls[OP_IMPORT], 0);
	assert_int_equal(F.calls[OP_MKSG], 0);
	assert_int_equal(alive(CLUSTER), 5);
	gc_engine_report_release(&rep);
}

/* The tokens a clean run of SPEC6 uses, batch by batch. */
static void reference_tokens(struct t *t, char tokens[3][65])
{
	struct gc_error err;

	fake_reset();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.n_log, 3);
	for (size_t i = 0; i < 3; i++)
		snprintf(tokens[i], 65, "%s", F.log[i].token);
	fake_reset();
}

static const char *const SPEC6 = HEAD "  - name: workers\n"
				      "    count: 6\n"
				      "    instance_types: [g5.xlarge]\n"
				      "    zones: [z-a]\n";

static void test_interrupted_apply_resumes(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	char ref[3][65];

	up(t, SPEC6);
	reference_tokens(t, ref);

	/* "crash" after the first batch */
	t->ev.cancel_after_created = 1;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(err.code, GC_ECANCELLED);
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_string_equal(F.log[0].token, ref[0]);
	assert_int_equal(rep.created.n, 2);
	assert_int_equal(group_of(&rep, "workers")->created, 2);
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_non_null(strstr(err.message, "cancelled"));
	assert_non_null(strstr(err.message, "2 of 6 instances created in group 'workers'"));
	gc_engine_report_release(&rep);

	/* the re-run fills the missing slots with the tokens the first run would have used */
	t->ev = (struct events){ 0 };
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 2);
	assert_string_equal(F.log[0].token, ref[1]);
	assert_string_equal(F.log[1].token, ref[2]);
	assert_int_equal(alive(CLUSTER), 6);
	assert_int_equal(F.n_insts, 6);
	gc_engine_report_release(&rep);
}

static void test_interrupted_apply_describe_lag(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	char ref[3][65];

	up(t, SPEC6);
	reference_tokens(t, ref);

	/* the first batch launches, then the run dies; Describe does not show it yet */
	F.hidden_polls = 1000;
	t->ev.cancel_after_created = 1;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(F.n_insts, 2);

	/* the re-run plans from slot 0 again: the cloud replays the first batch */
	F.hidden_polls = 0;
	t->ev = (struct events){ 0 };
	t->opts.wait_timeout_ms = 20000;
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 3);
	assert_string_equal(F.log[0].token, ref[0]);
	assert_string_equal(F.log[1].token, ref[1]);
	assert_string_equal(F.log[2].token, ref[2]);
	/* six instances, not eight; the replayed ones reported as this run's */
	assert_int_equal(F.n_insts, 6);
	assert_int_equal(alive(CLUSTER), 6);
	assert_int_equal(rep.created.n, 6);
	assert_int_equal(group_of(&rep, "workers")->running, 6);
	gc_engine_report_release(&rep);

	/* once Describe catches up, everything is there and nothing more is launched */
	for (size_t i = 0; i < F.n_insts; i++)
		F.insts[i].hidden_left = 0;
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 0);
	assert_int_equal(F.n_insts, 6);
}

static const char *const SPEC2 = HEAD "  - name: workers\n"
				      "    count: 2\n"
				      "    instance_types: [g5.xlarge]\n"
				      "    zones: [z-a]\n";

static const char *const SPEC0 = HEAD "  - name: workers\n"
				      "    count: 0\n"
				      "    instance_types: [g5.xlarge]\n"
				      "    zones: [z-a]\n";

static void test_token_of_earlier_instances(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	char first[65];

	up(t, SPEC2);
	assert_int_equal(apply_quiet(t, &err), 0);
	snprintf(first, sizeof(first), "%s", F.log[0].token);

	/* scaled to zero and back: the same plan, the same token, answered with the
	 * terminated instances; the next generation launches */
	up(t, SPEC0);
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(alive(CLUSTER), 0);
	up(t, SPEC2);
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 2);
	assert_string_equal(F.log[0].token, first);
	assert_string_not_equal(F.log[1].token, first);
	assert_int_equal(alive(CLUSTER), 2);
	assert_int_equal(rep.created.n, 2);
	for (size_t i = 0; i < rep.created.n; i++)
		assert_int_equal(rep.created.items[i].state, GC_STATE_RUNNING);
	gc_engine_report_release(&rep);

	/* a third life walks two dead generations, the same way each time */
	up(t, SPEC0);
	assert_int_equal(apply_quiet(t, &err), 0);
	up(t, SPEC2);
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 3);
	assert_string_equal(F.log[0].token, first);
	assert_int_equal(alive(CLUSTER), 2);

	/* destroyed and created again: a new security group, new tokens, one call */
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	gc_engine_report_release(&rep);
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_string_not_equal(F.log[0].token, first);
	assert_int_equal(alive(CLUSTER), 2);
}

static void test_capacity_fallback_order(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 4\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    market: spot-then-on-demand\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", true };
	F.caps[F.n_caps++] = (struct cap_rule){ "z-b", "t1", true };
	assert_int_equal(apply(t, &rep, &err), 0);
	/* types outer, zones inner, spot first; batch 2 skips the blocked ones unasked */
	assert_int_equal(F.n_log, 4);
	assert_string_equal(F.log[0].zone, "z-a");
	assert_string_equal(F.log[0].type, "t1");
	assert_true(F.log[0].spot);
	assert_string_equal(F.log[1].zone, "z-b");
	assert_string_equal(F.log[1].type, "t1");
	assert_string_equal(F.log[2].zone, "z-a");
	assert_string_equal(F.log[2].type, "t2");
	assert_true(F.log[2].spot);
	assert_string_equal(F.log[3].zone, "z-a");
	assert_string_equal(F.log[3].type, "t2");
	assert_int_equal(t->ev.n[GC_EV_CREATE_FAILED], 2);
	assert_string_equal(t->ev.failed[0], "z-a/t1/spot");
	assert_string_equal(t->ev.failed[1], "z-b/t1/spot");
	assert_int_equal(alive(CLUSTER), 4);
	gc_engine_report_release(&rep);
}

/* No room in the group's placement group for t1 (docs/internals/fabric.md): t2, the next
 * of instance_types, launches in the same group and zone, and t1 stays a candidate for a
 * group without a placement group in that zone. */
static void test_placement_full_falls_back(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up_with(t, &placement_ops,
		HEAD "  - name: workers\n"
		     "    count: 2\n"
		     "    instance_types: [t1, t2]\n"
		     "    zones: [z-a]\n"
		     "    placement: cluster\n"
		     "  - name: other\n"
		     "    count: 1\n"
		     "    instance_types: [t1]\n"
		     "    zones: [z-a]\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	F.caps_in_placement = true;
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_MKPL], 1);
	assert_int_equal(F.n_log, 3);
	assert_string_equal(F.log[0].type, "t1");
	assert_string_not_equal(F.log[0].placement, "");
	assert_string_equal(F.log[1].type, "t2");
	assert_string_equal(F.log[1].zone, "z-a");
	assert_string_equal(F.log[1].placement, F.log[0].placement);
	assert_string_equal(F.log[2].type, "t1"); /* the other group: the zone is not blocked */
	assert_string_equal(F.log[2].placement, "");
	assert_string_equal(t->ev.failed[0], "z-a/t1/on-demand");
	assert_string_equal(t->ev.fallback,
			    "group 'workers': no room for t1 in placement group "
			    "'gpucluster-t1-workers'; trying t2, the next of instance_types");
	assert_int_equal(alive(CLUSTER), 3);
	gc_engine_report_release(&rep);
}

/* No type left: the group fails naming the full placement group, and a first apply that
 * launched nothing removes the placement group it made. */
static void test_placement_full_no_type_left(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up_with(t, &placement_ops,
		HEAD "  - name: workers\n"
		     "    count: 2\n"
		     "    instance_types: [t1]\n"
		     "    zones: [z-a]\n"
		     "    placement: cluster\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	assert_int_not_equal(apply(t, &rep, &err), 0);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_non_null(strstr(err.message,
			       "capacity exhausted in placement group "
			       "'gpucluster-t1-workers' in z-a/t1/on-demand"));
	assert_int_equal(F.calls[OP_MKPL], 1);
	assert_int_equal(F.calls[OP_DELPL], 1);
	assert_null(fake_res_find(GC_RESOURCE_PLACEMENT, "gpucluster-t1-workers"));
	assert_int_equal(alive(CLUSTER), 0);
	gc_engine_report_release(&rep);
}

/* The placement group does not take t1 (GC_ENOTHERE, docs/internals/fabric.md): t1 is
 * blocked for this group, t2 launches in the same group and zone, the apply line says why,
 * and a group without a placement group still launches t1 there. */
static void test_placement_not_here_falls_back(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up_with(t, &placement_ops,
		HEAD "  - name: workers\n"
		     "    count: 2\n"
		     "    instance_types: [t1, t2]\n"
		     "    zones: [z-a]\n"
		     "    placement: cluster\n"
		     "  - name: other\n"
		     "    count: 1\n"
		     "    instance_types: [t1]\n"
		     "    zones: [z-a]\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	F.caps_in_placement = true;
	F.cap_code = GC_ENOTHERE;
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_MKPL], 1);
	assert_int_equal(F.n_log, 3);
	assert_string_equal(F.log[0].type, "t1");
	assert_string_not_equal(F.log[0].placement, "");
	assert_string_equal(F.log[1].type, "t2");
	assert_string_equal(F.log[1].zone, "z-a");
	assert_string_equal(F.log[1].placement, F.log[0].placement);
	assert_string_equal(F.log[2].type, "t1");
	assert_string_equal(F.log[2].placement, "");
	assert_string_equal(t->ev.fallback,
			    "group 'workers': t1 cannot launch in placement group "
			    "'gpucluster-t1-workers': over a quota; trying t2, the next of "
			    "instance_types");
	assert_int_equal(alive(CLUSTER), 3);
	gc_engine_report_release(&rep);
}

/* No type the placement group takes: the group fails naming it, the first apply removes
 * the placement group it made. */
static void test_placement_not_here_no_type_left(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up_with(t, &placement_ops,
		HEAD "  - name: workers\n"
		     "    count: 2\n"
		     "    instance_types: [t1, t2]\n"
		     "    zones: [z-a]\n"
		     "    placement: cluster\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t2", false };
	F.cap_code = GC_ENOTHERE;
	assert_int_not_equal(apply(t, &rep, &err), 0);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_non_null(strstr(err.message,
			       "capacity exhausted in placement group "
			       "'gpucluster-t1-workers' in z-a/t1/on-demand"));
	assert_non_null(strstr(err.message, "z-a/t2/on-demand"));
	assert_int_equal(F.n_log, 2);
	assert_int_equal(F.calls[OP_DELPL], 1);
	assert_int_equal(alive(CLUSTER), 0);
	gc_engine_report_release(&rep);
}

/* Outside a placement group a type the zone does not sell is the zone's stock-out: the
 * next type is tried, as before GC_ENOTHERE. */
static void test_not_here_outside_placement(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up_with(t, &placement_ops,
		HEAD "  - name: workers\n"
		     "    count: 1\n"
		     "    instance_types: [t1, t2]\n"
		     "    zones: [z-a]\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	F.cap_code = GC_ENOTHERE;
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.n_log, 2);
	assert_string_equal(F.log[1].type, "t2");
	assert_string_equal(t->ev.failed[0], "z-a/t1/on-demand");
	assert_int_equal(alive(CLUSTER), 1);
	gc_engine_report_release(&rep);
}

/* A type the cloud's placement resource does not take (a Tencent HPC cluster and a type
 * that is not HCC): the group launches pinned to its zone, with no placement group. */
static void test_placement_type_takes_none(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up_with(t, &placement_ops,
		HEAD "  - name: workers\n"
		     "    count: 2\n"
		     "    instance_types: [u1]\n"
		     "    zones: [z-a]\n"
		     "    placement: cluster\n");
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_MKPL], 1);
	assert_int_equal(F.n_log, 1);
	assert_string_equal(F.log[0].zone, "z-a");
	assert_string_equal(F.log[0].placement, "");
	assert_null(fake_res_find(GC_RESOURCE_PLACEMENT, "gpucluster-t1-workers"));
	assert_int_equal(alive(CLUSTER), 2);
	gc_engine_report_release(&rep);
}

static void test_capacity_spot_to_on_demand(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    market: spot-then-on-demand\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", true };
	F.caps[F.n_caps++] = (struct cap_rule){ "z-b", "t1", true };
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t2", true };
	F.caps[F.n_caps++] = (struct cap_rule){ "z-b", "t2", true };
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.n_log, 5);
	assert_string_equal(F.log[4].zone, "z-a");
	assert_string_equal(F.log[4].type, "t1");
	assert_false(F.log[4].spot);
	for (size_t i = 0; i < F.n_insts; i++)
		assert_false(F.insts[i].in.spot);
	gc_engine_report_release(&rep);
}

/* The spot quota is the account's: one spot try, then on-demand for this and every later
 * batch (no spot try in the other zone or type), and the user is told why. A spot-only
 * group stops there, with the spot quota's code. */
static void test_spot_quota_to_on_demand(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 4\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    market: spot-then-on-demand\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", true };
	F.cap_code = GC_ESPOTQUOTA;
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.n_log, 3); /* batches of 2: one spot try, then two on-demand */
	assert_true(F.log[0].spot);
	assert_false(F.log[1].spot);
	assert_string_equal(F.log[1].zone, "z-a");
	assert_string_equal(F.log[1].type, "t1");
	assert_false(F.log[2].spot);
	for (size_t i = 0; i < F.n_insts; i++)
		assert_false(F.insts[i].in.spot);
	assert_int_equal(alive(CLUSTER), 4);
	assert_int_equal(rep.groups[0].err.code, GC_OK);
	gc_engine_report_release(&rep);

	fake_reset();
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    market: spot\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", true };
	F.cap_code = GC_ESPOTQUOTA;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(F.n_log, 1);
	assert_int_equal(err.code, GC_ESPOTQUOTA);
	assert_null(strstr(err.message, "capacity"));
	assert_int_equal(alive(CLUSTER), 0);
	gc_engine_report_release(&rep);
}

static void test_capacity_any_zone_then_cloud_zones(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 4\n"
		"    instance_types: [t1]\n");
	F.caps[F.n_caps++] = (struct cap_rule){ NULL, "t1", false };
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	assert_int_equal(apply(t, &rep, &err), 0);
	/* any zone, then the cloud's zones in order; the second batch goes straight to z-b */
	assert_int_equal(F.n_log, 4);
	assert_string_equal(F.log[0].zone, "");
	assert_string_equal(F.log[1].zone, "z-a");
	assert_string_equal(F.log[2].zone, "z-b");
	assert_string_equal(F.log[3].zone, "z-b");
	assert_int_equal(F.calls[OP_ZONES], 1);
	gc_engine_report_release(&rep);
}

static void test_same_zone_pins_batches(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 6\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    placement: same-zone\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.n_log, 4);
	assert_string_equal(F.log[1].zone, "z-b");
	assert_string_equal(F.log[2].zone, "z-b");
	assert_string_equal(F.log[3].zone, "z-b");
	gc_engine_report_release(&rep);

	/* grown later, with z-b out of t1: the group runs t1 and does not mix in t2 */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 8\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    placement: same-zone\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-b", "t1", false };
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_non_null(strstr(err.message,
			       "does not mix in the others of instance_types "
			       "(set mixed_types: true to allow it)"));
	for (size_t i = 0; i < F.n_log; i++)
		assert_string_equal(F.log[i].type, "t1");
	gc_engine_report_release(&rep);

	/* with mixed_types: the group stays in z-b with the next type, although z-a has t2 */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 8\n"
		"    instance_types: [t1, t2]\n"
		"    zones: [z-a, z-b]\n"
		"    placement: same-zone\n"
		"    mixed_types: true\n");
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.n_log, 2);
	assert_string_equal(F.log[0].zone, "z-b");
	assert_string_equal(F.log[1].zone, "z-b");
	assert_string_equal(F.log[1].type, "t2");
	for (size_t i = 0; i < F.n_insts; i++)
		assert_string_equal(F.insts[i].in.zone, "z-b");
	gc_engine_report_release(&rep);
}

static const char *const TWO_GROUPS = HEAD "  - name: a\n"
					   "    count: 3\n"
					   "    instance_types: [t1]\n"
					   "    zones: [z-a]\n"
					   "  - name: b\n"
					   "    count: 2\n"
					   "    instance_types: [t1]\n"
					   "    zones: [z-a]\n";

static void test_quota_stops_the_group(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, TWO_GROUPS);
	F.fail_op = OP_CREATE;
	F.fail_at = 0;
	F.fail_code = GC_EQUOTA;
	assert_int_equal(apply(t, &rep, &err), -1);
	/* one try for group a, none after it; group b goes on */
	assert_int_equal(F.calls[OP_CREATE], 2);
	assert_int_equal(group_of(&rep, "a")->created, 0);
	assert_int_equal(group_of(&rep, "a")->err.code, GC_EQUOTA);
	assert_int_equal(group_of(&rep, "b")->created, 2);
	assert_int_equal(group_of(&rep, "b")->running, 2);
	assert_int_equal(group_of(&rep, "b")->err.code, GC_OK);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_non_null(strstr(err.message, "0 of 3 instances created in group 'a'"));
	assert_null(strstr(err.message, "group 'b'"));
	assert_int_equal(alive(CLUSTER), 2);
	gc_engine_report_release(&rep);
}

/* The cost cap holds for every fallback candidate: a dear fallback over the cap is
 * skipped, said in an event, and the group fails with GC_EQUOTA launching nothing. */
static void test_cap_skips_dear_fallback(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [t1, t9]\n"
		"    zones: [z-a]\n"
		"lifecycle: {max_hourly_cost: 15}\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(F.n_log, 1); /* t1 tried, t9 never asked for */
	assert_int_equal(alive(CLUSTER), 0);
	assert_int_equal(t->ev.n_skipped, 1);
	assert_string_equal(t->ev.skipped[0],
			    "skipped t9 on-demand in z-a: 2 \xc3\x97 10.00 USD/h would take the "
			    "cluster to 20.00 USD/h, over max_hourly_cost 15.00");
	assert_int_equal(err.code, GC_EQUOTA);
	assert_string_equal(group_of(&rep, "workers")->err.message,
			    "skipped t9 on-demand: 2 \xc3\x97 10.00 USD/h would take the cluster "
			    "to 20.00 USD/h, over max_hourly_cost 15.00; the other candidates are "
			    "out of capacity");
	gc_engine_report_release(&rep);
}

/* What this run already launched counts: group a's t1 (1.00) leaves 9.50 under a 10.50
 * cap, too little for group b's fallback t9 (10.00), which alone would fit. */
static void test_cap_counts_this_run(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: a\n"
		"    count: 1\n"
		"    instance_types: [t1]\n"
		"    zones: [z-b]\n"
		"  - name: b\n"
		"    count: 1\n"
		"    instance_types: [t1, t9]\n"
		"    zones: [z-a]\n"
		"lifecycle: {max_hourly_cost: 10.5}\n");
	F.caps[F.n_caps++] = (struct cap_rule){ "z-a", "t1", false };
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(group_of(&rep, "a")->created, 1);
	assert_int_equal(group_of(&rep, "b")->created, 0);
	assert_int_equal(group_of(&rep, "b")->err.code, GC_EQUOTA);
	assert_string_equal(t->ev.skipped[0],
			    "skipped t9 on-demand in z-a: 1 \xc3\x97 10.00 USD/h would take the "
			    "cluster to 11.00 USD/h, over max_hourly_cost 10.50");
	assert_int_equal(alive(CLUSTER), 1);
	gc_engine_report_release(&rep);

	/* with room for it, the fallback launches */
	up(t,
	   HEAD "  - name: b\n"
		"    count: 1\n"
		"    instance_types: [t1, t9]\n"
		"    zones: [z-a]\n"
		"lifecycle: {max_hourly_cost: 12}\n");
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(group_of(&rep, "b")->created, 1);
	gc_engine_report_release(&rep);
}

static void test_auth_stops_everything(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	unsigned discovers;

	up(t, TWO_GROUPS);
	F.fail_op = OP_CREATE;
	F.fail_at = 0;
	F.fail_code = GC_EAUTH;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_int_equal(group_of(&rep, "b")->created, 0);
	discovers = F.calls[OP_DISCOVER];
	assert_int_equal(discovers, 1); /* the plan's; no waiting after an auth error */
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_int_equal(alive(CLUSTER), 0);
	gc_engine_report_release(&rep);
}

static void test_partial_failure_report(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 4\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n"
		"    market: spot\n");
	F.fail_op = OP_CREATE;
	F.fail_at = 1;
	F.fail_code = GC_ECAPACITY;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_string_equal(err.message,
			    "2 of 4 instances created in group 'workers': capacity "
			    "exhausted in z-a/g5.xlarge/spot");
	assert_int_equal(group_of(&rep, "workers")->wanted, 4);
	assert_int_equal(group_of(&rep, "workers")->created, 2);
	assert_int_equal(group_of(&rep, "workers")->running, 2);
	assert_int_equal(rep.created.n, 2);
	assert_int_equal(alive(CLUSTER), 2);
	gc_engine_report_release(&rep);
}

/* Plan checks the spec against the cloud before anything is made (issue 18, item 5): each
 * refusal names the value's t.yaml:LINE:COL, and nothing is listed or created. */
static void test_plan_checks_the_cloud(void **state)
{
	static const struct {
		const char *region, *types, *zones, *image, *says;
	} cases[] = {
		{ "us-esat-1", "g5.xlarge", "z-a", "ubuntu-22.04",
		  "t.yaml:4:11: unknown region 'us-esat-1' for aws; did you mean 'us-east-1'?" },
		{ "us-east-1", "g5.xlarge", "z-a, z-q", "ubuntu-22.04",
		  "t.yaml:9:18: zone 'z-q' is not in region 'us-east-1'; did you mean 'z-a'? (its "
		  "zones: z-a, z-b, z-c)" },
		{ "us-east-1", "g5.xlarge, nope.type", "z-a", "ubuntu-22.04",
		  "t.yaml:8:33: instance type 'nope.type' does not exist in region 'us-east-1'" },
		{ "us-east-1", "g5.gap", "z-b", "ubuntu-22.04",
		  "t.yaml:8:22: instance type 'g5.gap' is not offered in zone 'z-b' of group "
		  "'workers' (it is in z-a)" },
	};
	struct t *t = *state;
	struct gc_error err;
	char yaml[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml),
			 "name: " CLUSTER "\nprovider:\n  name: aws\n  region: %s\nnode_groups:\n"
			 "  - name: workers\n    count: 1\n    instance_types: [%s]\n"
			 "    zones: [%s]\n    image: %s\n",
			 cases[i].region, cases[i].types, cases[i].zones, cases[i].image);
		up_with(t, &offer_ops, yaml);
		reset_calls();
		assert_int_equal(apply_quiet(t, &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		if (!strstr(err.message, cases[i].says))
			fail_msg("case %zu: %s", i, err.message);
		assert_int_equal(F.calls[OP_DISCOVER], 0);
		assert_int_equal(F.total,
				 F.calls[OP_REGIONS] + F.calls[OP_ZONES] + F.calls[OP_TYPE_ZONES] +
					 F.calls[OP_IMAGE]);
	}
	/* the image too, at the line that names it */
	up_with(t, &offer_ops,
		HEAD "  - name: workers\n    count: 1\n    instance_types: [g5.gap]\n"
		     "    zones: [z-a]\n    image: ami-0123456789abcdef0\n");
	F.fail_op = OP_IMAGE;
	F.fail_at = 0;
	F.fail_code = GC_ENOTFOUND;
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_string_equal(err.message, "t.yaml:11:12: injected not-found");
	assert_int_equal(F.calls[OP_DISCOVER], 0);
	/* fixed, it applies; an offering listing that fails (a region without the API, a
	 * policy without its permission) leaves the type to the launch */
	F.fail_op = OP_TYPE_ZONES;
	F.fail_at = 0;
	F.fail_code = GC_EAUTH;
	up_with(t, &offer_ops,
		HEAD "  - name: workers\n    count: 1\n    instance_types: [g5.gap]\n"
		     "    zones: [z-b]\n");
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_TYPE_ZONES], 1);
	assert_int_equal(alive(CLUSTER), 1);
}

/* A first apply that launches nothing takes back the key pair and security group it made,
 * unless a launch may have landed unseen (a transient error); and an image that fails at
 * apply stops it before either is made. */
static void test_failed_first_apply_undone(void **state)
{
	struct t *t = *state;
	struct gc_error err;

	up(t, SPEC5);
	F.fail_op = OP_CREATE;
	F.fail_at = 0;
	F.fail_code = GC_EQUOTA;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_int_equal(F.calls[OP_IMPORT], 1);
	assert_int_equal(F.calls[OP_MKSG], 1);
	assert_int_equal(F.calls[OP_DELKEY], 1);
	assert_int_equal(F.calls[OP_DELSG], 1);
	assert_int_equal(F.n_res, 0);
	assert_int_equal(alive(CLUSTER), 0);

	/* a launch refused without a class (its instances may exist): the resources stay for
	 * the re-run */
	reset_calls();
	F.fail_op = OP_CREATE;
	F.fail_at = 0;
	F.fail_code = GC_EGENERIC;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_EGENERIC);
	assert_int_equal(F.calls[OP_DELKEY] + F.calls[OP_DELSG], 0);
	assert_int_equal(F.n_res, 2);

	/* the image, refused at apply (after plan's look): nothing more is made */
	fake_reset();
	up(t, SPEC5);
	F.fail_op = OP_IMAGE;
	F.fail_at = 1;
	F.fail_code = GC_ENOTFOUND;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_int_equal(F.calls[OP_IMPORT] + F.calls[OP_MKSG] + F.calls[OP_CREATE], 0);
	assert_int_equal(F.n_res, 0);
}

static void test_wait_timeout(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	uint64_t start = fc.now;

	up(t, SPEC5);
	F.pending_polls = 1000000;
	t->opts.wait_timeout_ms = 10000;
	t->opts.poll_ms = 1000;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_non_null(strstr(err.message, "0 of 5 instances running in group 'workers'"));
	assert_non_null(strstr(err.message, "timed out after 10.0s"));
	assert_int_equal(group_of(&rep, "workers")->created, 5);
	assert_int_equal(group_of(&rep, "workers")->running, 0);
	assert_int_equal(group_of(&rep, "workers")->err.code, GC_ETIMEOUT);
	assert_int_equal(rep.created.n, 5);
	/* bounded: about one poll per second of the timeout, all on the fake clock */
	assert_true(F.calls[OP_DISCOVER] >= 10 && F.calls[OP_DISCOVER] <= 13);
	assert_int_equal((fc.now - start) / MS, 10000);
	gc_engine_report_release(&rep);
}

static void test_spot_reclaimed_while_waiting(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 3\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n"
		"    market: spot\n");
	F.pending_polls = 2;
	F.reclaim_next = 1;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(group_of(&rep, "workers")->created, 3);
	assert_int_equal(group_of(&rep, "workers")->running, 2);
	assert_int_equal(group_of(&rep, "workers")->failed, 1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_non_null(strstr(err.message, "2 of 3 instances running in group 'workers'"));
	assert_non_null(strstr(err.message, "spot capacity reclaimed"));
	assert_non_null(strstr(err.message, "i-"));
	gc_engine_report_release(&rep);

	/* the next run replaces it: slots renumber, so the first token it computes is the
	 * one of the second batch, whose instance the plan counted already */
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 2);
	assert_string_not_equal(F.log[0].token, F.log[1].token);
	assert_int_equal(alive(CLUSTER), 3);
	assert_int_equal(F.n_insts, 4);
}

static void test_replace_after_replacements_run(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	struct finst *old[2];
	char old_ids[2][32];

	/* two instances of an older spec: both are replaced */
	for (size_t i = 0; i < 2; i++) {
		old[i] = fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge",
				  GC_STATE_RUNNING);
		snprintf(old_ids[i], sizeof(old_ids[i]), "%s", old[i]->in.id);
	}
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n");
	F.pending_polls = 3;
	F.terminating_polls = 2;
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_int_equal(F.calls[OP_TERMINATE], 1);
	/* the old ones went only when both new ones ran */
	assert_int_equal(F.running_at_terminate, 2);
	assert_int_equal(rep.n_terminated, 2);
	assert_int_equal(must_find(old_ids[0])->in.state, GC_STATE_TERMINATED);
	assert_int_equal(must_find(old_ids[1])->in.state, GC_STATE_TERMINATED);
	assert_int_equal(group_of(&rep, "workers")->terminated, 2);
	assert_int_equal(alive(CLUSTER), 2);
	gc_engine_report_release(&rep);
}

static void test_replace_held_back_on_failure(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n");
	fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	/* one replacement comes up, the other is reclaimed: one old one may go, not two */
	F.reclaim_next = 1;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(group_of(&rep, "workers")->running, 1);
	assert_int_equal(rep.n_terminated, 1);
	assert_int_equal(alive(CLUSTER), 2);
	assert_non_null(strstr(err.message, "not replaced yet"));
	gc_engine_report_release(&rep);

	/* nothing runs at all: none goes */
	fake_reset();
	fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	F.pending_polls = 1000000;
	t->opts.wait_timeout_ms = 5000;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_int_equal(rep.n_terminated, 0);
	gc_engine_report_release(&rep);
}

static void test_surplus_terminated(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, SPEC5);
	assert_int_equal(apply_quiet(t, &err), 0);
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n");
	F.terminating_polls = 3;
	reset_calls();
	assert_int_equal(apply(t, &rep, &err), 0);
	/* four ids in batches of three */
	assert_int_equal(F.calls[OP_TERMINATE], 2);
	assert_int_equal(rep.n_terminated, 4);
	assert_int_equal(in_state(CLUSTER, GC_STATE_TERMINATED), 4);
	assert_int_equal(alive(CLUSTER), 1);
	assert_int_equal(t->ev.n[GC_EV_TERMINATED], 1);
	gc_engine_report_release(&rep);
}

static void test_destroy_scoped_by_tags(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	struct finst *other, *untagged;
	char other_id[32], untagged_id[32];

	up(t, SPEC5);
	assert_int_equal(apply_quiet(t, &err), 0);
	other = fake_add("t10", "workers", "x", "g5.xlarge", GC_STATE_RUNNING);
	snprintf(other_id, sizeof(other_id), "%s", other->in.id);
	untagged = fake_add(NULL, NULL, NULL, "g5.xlarge", GC_STATE_RUNNING);
	snprintf(untagged_id, sizeof(untagged_id), "%s", untagged->in.id);
	/* same names, not ours: another cluster's and an untagged group and key pair */
	fake_res_add(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER "-copy", "t10");
	fake_res_add(GC_RESOURCE_KEYPAIR, "gpucluster-" CLUSTER "-untagged", NULL);

	F.terminating_polls = 3;
	reset_calls();
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_int_equal(rep.n_terminated, 5);
	for (size_t i = 0; i < rep.n_terminated; i++) {
		assert_string_not_equal(rep.terminated_ids[i], other_id);
		assert_string_not_equal(rep.terminated_ids[i], untagged_id);
	}
	assert_int_equal(group_of(&rep, "workers")->terminated, 5);
	assert_int_equal(in_state(CLUSTER, GC_STATE_TERMINATED), 5);
	assert_int_equal(must_find(other_id)->in.state, GC_STATE_RUNNING);
	assert_int_equal(must_find(untagged_id)->in.state, GC_STATE_RUNNING);
	/* waited until terminated before deleting the security group */
	assert_true(F.calls[OP_DISCOVER] >= 5);
	assert_int_equal(F.calls[OP_DELKEY], 1);
	assert_int_equal(F.calls[OP_DELSG], 1);
	assert_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER));
	assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER "-copy"));
	assert_non_null(fake_res_find(GC_RESOURCE_KEYPAIR, "gpucluster-" CLUSTER "-untagged"));
	assert_int_equal(F.n_res, 2);
	gc_engine_report_release(&rep);

	/* nothing left: a second destroy is a no-op that succeeds */
	reset_calls();
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_int_equal(rep.n_terminated, 0);
	gc_engine_report_release(&rep);
}

/*
 * Eventual consistency (docs/internals/executor.md): a terminate the cloud "took" while the
 * instances run on is sent again until Describe says they are gone, and the report counts
 * only what it confirmed: a destroy that times out terminated nothing, as far as it knows.
 */
static void test_destroy_confirmed_only(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, SPEC5);
	assert_int_equal(apply_quiet(t, &err), 0);
	F.swallow_terminates = 2; /* both batches of the first round */
	F.terminating_polls = 1;
	reset_calls();
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_true(F.calls[OP_TERMINATE] >= 4);
	assert_int_equal(in_state(CLUSTER, GC_STATE_TERMINATED), 5);
	assert_int_equal(rep.n_terminated, 5);
	assert_int_equal(group_of(&rep, "workers")->terminated, 5);
	gc_engine_report_release(&rep);

	/* instances that never finish going within the wait: none counted, destroy fails */
	fake_reset();
	assert_int_equal(apply_quiet(t, &err), 0);
	F.terminating_polls = 1000000;
	t->opts.wait_timeout_ms = 5000;
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), -1);
	assert_int_equal(err.code, GC_ETIMEOUT);
	assert_int_equal(rep.n_terminated, 0);
	assert_int_equal(group_of(&rep, "workers")->terminated, 0);
	assert_int_equal(in_state(CLUSTER, GC_STATE_TERMINATING), 5);
	gc_engine_report_release(&rep);
}

static void test_destroy_secgroup_dependency(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, SPEC5);
	assert_int_equal(apply_quiet(t, &err), 0);
	F.sg_dependency = 1;
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), -1);
	assert_non_null(strstr(err.message, "cannot delete security group 'gpucluster-" CLUSTER));
	assert_non_null(strstr(err.message, "DependencyViolation"));
	assert_non_null(strstr(err.message, "run destroy again"));
	assert_int_equal(alive(CLUSTER), 0);
	gc_engine_report_release(&rep);
	assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER));

	/* a re-run finishes */
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER));
	assert_int_equal(F.n_res, 0);
	gc_engine_report_release(&rep);
}

/* Issue 19: a listing that failed (a pager's stop: GC_EINVALID) stops destroy before it
 * terminates or deletes anything, or (in the wait) before any key pair or security group,
 * and the error says so; with a good listing again, destroy converges. */
static void test_destroy_stops_on_listing_error(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, SPEC5);
	assert_int_equal(apply_quiet(t, &err), 0);
	F.terminating_polls = 2;

	/* the first listing: nothing is touched */
	reset_calls();
	F.fail_op = OP_DISCOVER;
	F.fail_at = 0;
	F.fail_code = GC_EINVALID;
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message,
			       "not terminating instances or deleting the key pair "
			       "and security group: cannot list the instances"));
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_int_equal(F.calls[OP_DELKEY] + F.calls[OP_DELSG], 0);
	assert_int_equal(alive(CLUSTER), 5);
	gc_engine_report_release(&rep);

	/* the wait's first look: the instances go, the key pair and security group stay */
	reset_calls();
	F.fail_at = 1;
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), -1);
	assert_non_null(strstr(err.message,
			       "not deleting the key pair and security group: "
			       "while waiting for instances to terminate"));
	assert_true(F.calls[OP_TERMINATE] > 0);
	assert_int_equal(F.calls[OP_DELKEY] + F.calls[OP_DELSG], 0);
	assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER));
	gc_engine_report_release(&rep);

	/* a good listing again: destroy converges */
	F.fail_op = -1;
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_int_equal(alive(CLUSTER), 0);
	assert_int_equal(F.n_res, 0);
	gc_engine_report_release(&rep);
}

/* apply: the plan's listing was whole, the wait's was not: no surplus or replaced
 * instance goes (a group gone from the spec, and an older spec's instances) */
static void test_replace_stops_on_listing_error(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	for (size_t i = 0; i < 2; i++)
		fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	fake_add(CLUSTER, "gone", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n");
	F.pending_polls = 1;
	F.fail_op = OP_DISCOVER;
	F.fail_at = 1; /* 0 is the plan's */
	F.fail_code = GC_EINVALID;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_int_equal(rep.n_terminated, 0);
	assert_int_equal(alive(CLUSTER), 5);
	if (!strstr(err.message, "not terminating 3 surplus or replaced instances"))
		fail_msg("%s", err.message);
	gc_engine_report_release(&rep);
}

static void test_foreign_names_refused(void **state)
{
	struct t *t = *state;
	struct gc_error err;
	struct gc_keypair kp;
	char name[128];

	up(t, TWO_GROUPS);
	/* a user's own security group with our name, without our tag */
	fake_res_add(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER, NULL);
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(F.calls[OP_CREATE], 0);
	/* told once, for both groups it stopped */
	assert_non_null(strstr(err.message,
			       "0 of 3 instances created in group 'a': cannot "
			       "create security group 'gpucluster-" CLUSTER "'"));
	assert_non_null(strstr(err.message, "; 0 of 2 instances created in group 'b': the same"));
	assert_non_null(strstr(err.message,
			       "a security group named 'gpucluster-" CLUSTER
			       "' already exists without the tag " GC_TAG_CLUSTER "=" CLUSTER));
	/* theirs, untouched; ours (the key pair) went again: this first apply made nothing */
	assert_int_equal(F.n_res, 1);
	assert_null(F.res[0].tags);
	assert_int_equal(F.calls[OP_DELKEY], 1);
	assert_int_equal(F.calls[OP_DELSG], 0);

	/* and a key pair with our very name */
	fake_reset();
	assert_int_equal(gc_engine_keypair(&t->e, &kp, &err), 0);
	gc_engine_keypair_name(name, sizeof(name), gc_provider_by_name("aws"), CLUSTER, &kp);
	assert_true(gc_starts_with(name, "gpucluster-" CLUSTER "-"));
	assert_int_equal(strlen(name), strlen("gpucluster-" CLUSTER "-") + 8);
	{
		/* a cloud whose names take letters, digits and '_' only, 25 at most */
		char tc[64];

		gc_engine_keypair_name(tc, sizeof(tc), gc_provider_by_name("tencent"),
				       "a-very-long-cluster-name", &kp);
		assert_true(gc_starts_with(tc, "gc_a_very_long_c_"));
		assert_int_equal(strlen(tc), 25);
		assert_string_equal(tc + 17, name + strlen(name) - 8); /* the same fingerprint */
	}
	gc_keypair_release(&kp);
	fake_res_add(GC_RESOURCE_KEYPAIR, name, NULL);
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_non_null(strstr(err.message, "a key pair named"));
	assert_non_null(strstr(err.message, "already exists without the tag"));
	assert_int_equal(F.calls[OP_CREATE], 0);

	/* destroy leaves it alone */
	{
		struct gc_engine_report rep;

		gc_engine_report_init(&rep);
		assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
		gc_engine_report_release(&rep);
	}
	assert_non_null(fake_res_find(GC_RESOURCE_KEYPAIR, name));
	assert_int_equal(F.calls[OP_DELKEY], 0);
}

static void test_lock(void **state)
{
	struct t *t = *state;
	struct gc_lock lock;
	struct gc_error err;
	int ready[2], hold[2];
	char c, expect[64];
	pid_t pid;

	up(t, SPEC5);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gc_lock mine;

		close(ready[0]);
		close(hold[1]);
		if (gc_lock_acquire(&mine, t->e.state_dir, "apply", NULL) < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		/* hold it until the parent closes its end */
		if (read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);

	gc_error_init(&err);
	assert_int_equal(gc_lock_acquire(&lock, t->e.state_dir, "destroy", &err), -1);
	assert_int_equal(err.code, GC_ELOCKED);
	snprintf(expect, sizeof(expect),
		 "cluster '" CLUSTER "' is locked by pid %ld (apply, since ", (long)pid);
	assert_non_null(strstr(err.message, expect));
	assert_non_null(strstr(err.message,
			       "); if that process is gone the lock is released automatically"));

	/* the holder goes: the lock goes with it */
	close(hold[1]);
	{
		int status;

		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(ready[0]);
	assert_int_equal(gc_lock_acquire(&lock, t->e.state_dir, "destroy", &err), 0);
	/* a second holder in this process is refused too (the lock is per open file) */
	{
		struct gc_lock again;

		assert_int_equal(gc_lock_acquire(&again, t->e.state_dir, "scale", &err), -1);
		assert_non_null(strstr(err.message, "(destroy, since "));
	}
	gc_lock_release(&lock);
	assert_int_equal(gc_lock_acquire(&lock, t->e.state_dir, "scale", &err), 0);
	gc_lock_release(&lock);
	gc_lock_release(&lock); /* twice is harmless */
}

static void test_state_dir(void **state)
{
	struct t *t = *state;
	struct gc_error err;
	struct kv vars[3] = { { "HOME", "/home/u" }, { NULL, NULL }, { NULL, NULL } };
	struct gc_spec_env env = { kv_lookup, vars };
	struct stat st;
	char *d;

	up(t, SPEC5);
	d = gc_engine_state_dir(t->spec, &env, &err);
	assert_string_equal(d, "/home/u/.local/state/gpucluster/clusters/aws/us-east-1/" CLUSTER);
	free(d);
	vars[1] = (struct kv){ "XDG_STATE_HOME", "/x/state" };
	d = gc_engine_state_dir(t->spec, &env, &err);
	assert_string_equal(d, "/x/state/gpucluster/clusters/aws/us-east-1/" CLUSTER);
	free(d);
	vars[1] = (struct kv){ "XDG_STATE_HOME", "relative" }; /* not absolute: ignored */
	d = gc_engine_state_dir(t->spec, &env, &err);
	assert_string_equal(d, "/home/u/.local/state/gpucluster/clusters/aws/us-east-1/" CLUSTER);
	free(d);
	vars[0] = (struct kv){ "GPUCLUSTER_STATE_DIR", "/s" };
	d = gc_engine_state_dir(t->spec, &env, &err);
	assert_string_equal(d, "/s/clusters/aws/us-east-1/" CLUSTER);
	free(d);
	vars[0] = (struct kv){ "NOTHING", "x" };
	vars[1] = (struct kv){ NULL, NULL };
	gc_error_init(&err);
	assert_null(gc_engine_state_dir(t->spec, &env, &err));
	assert_non_null(strstr(err.message, "HOME is not set"));

	/* init made it, private, with its parents */
	assert_int_equal(stat(t->e.state_dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(t->state_dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* nothing under HOME, ~/.ssh least of all */
	assert_int_equal(stat(t->home, &st), 0);
	{
		char *ssh = gc_xasprintf("%s/.ssh", t->home);

		assert_int_equal(stat(ssh, &st), -1);
		free(ssh);
	}
}

/* A one-shot HTTP server on loopback answering with a fixed body. */
struct one_shot {
	int fd;
	const char *body;
	pthread_t th;
};

static void *serve_once(void *arg)
{
	struct one_shot *s = arg;
	char req[2048], resp[512];
	size_t got = 0;
	int c = accept(s->fd, NULL, NULL);

	if (c < 0)
		return NULL;
	while (got < sizeof(req) - 1) {
		ssize_t n = read(c, req + got, sizeof(req) - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 strlen(s->body), s->body);
	if (write(c, resp, strlen(resp)) < 0)
		got = 0;
	close(c);
	return NULL;
}

static void one_shot_start(struct one_shot *s, const char *body, char *url, size_t size)
{
	struct sockaddr_in a = { 0 };
	socklen_t len = sizeof(a);

	s->body = body;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 1), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
	snprintf(url, size, "http://127.0.0.1:%u/", ntohs(a.sin_port));
	assert_int_equal(pthread_create(&s->th, NULL, serve_once, s), 0);
}

static void one_shot_stop(struct one_shot *s)
{
	pthread_join(s->th, NULL);
	close(s->fd);
}

static void test_checkip_fallback(void **state)
{
	struct t *t = *state;
	struct one_shot srv;
	struct gc_error err;

	/* the cloud cannot tell our address: ask GPUCLUSTER_CHECKIP_URL */
	up_with(t, &plain_ops, SPEC5);
	one_shot_start(&srv, "203.0.113.9\n", t->checkip, sizeof(t->checkip));
	assert_int_equal(apply_quiet(t, &err), 0);
	one_shot_stop(&srv);
	assert_string_equal(F.last_allow, "203.0.113.9/32");
	assert_int_equal(F.calls[OP_ADDR], 0);
	assert_int_equal(alive(CLUSTER), 5);
	/* plain_ops takes 40-character tokens */
	for (size_t i = 0; i < F.n_log; i++)
		assert_int_equal(strlen(F.log[i].token), 40);
	/* and no Ed25519 key pairs, nor console output: nothing imported, every launch
	 * carries the login key and a host key for cloud-init instead */
	assert_int_equal(F.calls[OP_IMPORT], 0);
	assert_true(F.n_log > 0);
	for (size_t i = 0; i < F.n_log; i++) {
		assert_false(F.log[i].key_name);
		assert_true(F.log[i].authorized_key);
		assert_true(F.log[i].host_key);
	}

	/* an IPv6 answer is one host too: its /128, written canonically */
	fake_reset();
	one_shot_start(&srv, "2001:DB8::7\n", t->checkip, sizeof(t->checkip));
	assert_int_equal(apply_quiet(t, &err), 0);
	one_shot_stop(&srv);
	assert_string_equal(F.last_allow, "2001:db8::7/128");

	/* an answer that is not an address stops before anything is created */
	fake_reset();
	one_shot_start(&srv, "<html>hello</html>", t->checkip, sizeof(t->checkip));
	assert_int_equal(apply_quiet(t, &err), -1);
	one_shot_stop(&srv);
	assert_non_null(strstr(err.message, "did not answer with an IP address"));
	assert_non_null(strstr(err.message, "ssh.allow_from"));
	assert_int_equal(F.calls[OP_CREATE], 0);
	assert_int_equal(F.calls[OP_MKSG], 0);

	/* an address no single host has would open SSH to nobody, or to everybody */
	fake_reset();
	one_shot_start(&srv, "0.0.0.0\n", t->checkip, sizeof(t->checkip));
	assert_int_equal(apply_quiet(t, &err), -1);
	one_shot_stop(&srv);
	assert_non_null(strstr(err.message, "answered 0.0.0.0, which is not one host's address"));
	assert_int_equal(F.calls[OP_CREATE], 0);
	assert_int_equal(F.calls[OP_MKSG], 0);

	/* allow_from in the spec: no lookup at all */
	fake_reset();
	up_with(t, &plain_ops,
		HEAD "  - name: workers\n"
		     "    count: 1\n"
		     "    instance_types: [g5.xlarge]\n"
		     "ssh: {allow_from: [10.1.0.0/16]}\n");
	snprintf(t->checkip, sizeof(t->checkip), "http://127.0.0.1:1/");
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_string_equal(F.last_allow, "10.1.0.0/16");
}

static void test_capabilities(void **state)
{
	struct t *t = *state;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_error err;

	up_with(t, &plain_ops,
		HEAD "  - name: workers\n"
		     "    count: 1\n"
		     "    instance_types: [g5.xlarge]\n"
		     "    market: spot-then-on-demand\n");
	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "group 'workers'"));
	assert_non_null(strstr(err.message, "the spot market"));
	assert_int_equal(F.total, 0);

	up_with(t, &plain_ops,
		HEAD "  - name: workers\n"
		     "    count: 1\n"
		     "    instance_types: [g5.xlarge]\n"
		     "lifecycle: {ttl: 1h}\n");
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_non_null(strstr(err.message, "a cloud-side TTL"));

	/* a cloud whose timer needs 30 minutes' lead and whose system disks stop at 500 GB */
	{
		static struct gc_provider_ops limited;

		limited = fake_ops;
		limited.min_ttl_s = 1800;
		limited.max_disk_gb = 500;
		up_with(t, &limited,
			HEAD "  - name: workers\n"
			     "    count: 1\n"
			     "    instance_types: [g5.xlarge]\n"
			     "lifecycle: {ttl: 20m}\n");
		gc_error_init(&err);
		assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		assert_non_null(strstr(err.message, "lifecycle.ttl: 1200 s is too short"));
		assert_non_null(strstr(err.message, "35 minutes or more"));
		up_with(t, &limited,
			HEAD "  - name: workers\n"
			     "    count: 1\n"
			     "    instance_types: [g5.xlarge]\n"
			     "    disk_gb: 600\n"
			     "lifecycle: {ttl: 40m}\n");
		gc_error_init(&err);
		assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
		assert_non_null(strstr(err.message, "disk_gb 600 is above the 500 GB"));
		assert_int_equal(F.total, 0);
	}

	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [g5.xlarge]\n"
		"    market: spot\n"
		"    max_spot_price: 0.5\n");
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), 0);
	assert_int_equal(plan.n_create, 1);
	assert_true(plan.cost_known);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
}

/*
 * Money has a currency: a China-site account prices in CNY. A cap or a bid in USD without
 * the rate is refused, naming both currencies, the key and the cap's LINE:COL; with the
 * rate the plan stays in CNY with the cap converted, and the bid goes out in CNY.
 */
static void test_currency(void **state)
{
	struct t *t = *state;
	struct gc_instance_list live;
	struct gc_engine_report rep;
	struct gc_plan plan;
	struct gc_error err;

	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	fake_currency = "CNY";
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"lifecycle:\n"
		"  max_hourly_cost: 1\n");
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(
		err.message,
		"prices on this account are in CNY but lifecycle.max_hourly_cost "
		"(t.yaml:11:20) is in USD: set lifecycle.cny_per_usd (yuan per US dollar) "
		"or lifecycle.currency: CNY");
	gc_instance_list_release(&live);

	/* the rate: 2 x 1.0 CNY against 1 USD = 0.5 CNY is over; against 1.5 USD it fits */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"lifecycle:\n"
		"  max_hourly_cost: 0.2\n"
		"  cny_per_usd: 5\n");
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_non_null(strstr(err.message,
			       "max_hourly_cost 1.00 CNY/h exceeded: the plan costs 2.00 CNY/h"));
	assert_string_equal(plan.currency, "CNY");
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 2\n"
		"    instance_types: [g5.xlarge]\n"
		"lifecycle:\n"
		"  max_hourly_cost: 0.5\n"
		"  cny_per_usd: 5\n");
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), 0);
	assert_string_equal(plan.currency, "CNY");
	assert_true(plan.max_hourly_cost > 2.5 - 1e-9 && plan.max_hourly_cost < 2.5 + 1e-9);
	assert_true(plan.cost_after > 2.0 - 1e-9 && plan.cost_after < 2.0 + 1e-9);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);

	/* a cap in CNY needs no rate; neither cap nor bid: shown in the cloud's currency */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [g5.xlarge]\n"
		"lifecycle: {max_hourly_cost: 3, currency: CNY}\n");
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), 0);
	assert_true(plan.max_hourly_cost == 3);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [g5.xlarge]\n");
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), 0);
	assert_string_equal(plan.currency, "CNY");
	gc_plan_release(&plan);
	gc_instance_list_release(&live);

	/* a bid in USD: refused without the rate, at its own place */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [g5.xlarge]\n"
		"    market: spot\n"
		"    max_spot_price: 0.25\n");
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_non_null(strstr(err.message,
			       "max_spot_price of group 'workers' (t.yaml:11:21) is "
			       "in USD: set lifecycle.cny_per_usd"));
	gc_instance_list_release(&live);
	/* with it, the bid goes out in CNY */
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 1\n"
		"    instance_types: [g5.xlarge]\n"
		"    market: spot\n"
		"    max_spot_price: 0.25\n"
		"lifecycle: {cny_per_usd: 7.2}\n");
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_true(fake_last_bid > 1.8 - 1e-9 && fake_last_bid < 1.8 + 1e-9);
	gc_engine_report_release(&rep);
	fake_currency = "USD";
}

/* provider.network: one lookup at plan time, every problem with its LINE:COL; the VPC and
 * each zone's subnet in the requests. The fake cloud has vpc-0a1b2c3d with subnet-0000000a
 * in z-a and subnet-0000000b in z-b, and subnet-0000000f in z-a of vpc-0f0f0f0f. */
static int fake_network(struct gc_provider *p, const char *vpc, const char *const *subnets,
			size_t n, bool *vpc_found, struct gc_subnet_facts *out,
			struct gc_error *err)
{
	static const struct {
		const char *id, *vpc, *zone;
	} known[] = { { "subnet-0000000a", "vpc-0a1b2c3d", "z-a" },
		      { "subnet-0000000b", "vpc-0a1b2c3d", "z-b" },
		      { "subnet-0000000f", "vpc-0f0f0f0f", "z-a" } };

	(void)p;
	(void)err;
	F.network_calls++;
	*vpc_found = strcmp(vpc, "vpc-0a1b2c3d") == 0 || strcmp(vpc, "vpc-0f0f0f0f") == 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strcmp(subnets[i], known[k].id) == 0) {
				out[i].found = true;
				snprintf(out[i].vpc, sizeof(out[i].vpc), "%s", known[k].vpc);
				snprintf(out[i].zone, sizeof(out[i].zone), "%s", known[k].zone);
			}
	return 0;
}

#define NET_SPEC(vpc, a, b)     \
	"name: " CLUSTER "\n"   \
	"provider:\n"           \
	"  name: aws\n"         \
	"  region: us-east-1\n" \
	"  network:\n"          \
	"    vpc: " vpc "\n"    \
	"    subnets:\n"        \
	"      z-a: " a "\n"    \
	"      z-b: " b "\n"    \
	"node_groups:\n"        \
	"  - name: workers\n"   \
	"    count: 2\n"        \
	"    instance_types: [g5.xlarge]\n"

static void test_network(void **state)
{
	static struct gc_provider_ops net_ops;
	struct t *t = *state;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_engine_report rep;
	struct gc_error err;

	net_ops = fake_ops;
	net_ops.network = fake_network;
	gc_instance_list_init(&live);
	gc_plan_init(&plan);

	/* swapped, of another VPC, missing: each named at its line and column */
	up_with(t, &net_ops, NET_SPEC("vpc-0a1b2c3d", "subnet-0000000b", "subnet-0000000a"));
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message,
			       "t.yaml:8:12: provider.network.subnets.z-a: subnet "
			       "subnet-0000000b is in z-b, not z-a\n"));
	assert_non_null(strstr(err.message,
			       "t.yaml:9:12: provider.network.subnets.z-b: subnet "
			       "subnet-0000000a is in z-a, not z-b"));
	up_with(t, &net_ops, NET_SPEC("vpc-0a1b2c3d", "subnet-0000000f", "subnet-0000000c"));
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_non_null(strstr(err.message,
			       "t.yaml:8:12: provider.network.subnets.z-a: subnet "
			       "subnet-0000000f is in VPC vpc-0f0f0f0f, not in "
			       "vpc-0a1b2c3d"));
	assert_non_null(strstr(err.message,
			       "t.yaml:9:12: provider.network.subnets.z-b: subnet "
			       "subnet-0000000c does not exist in us-east-1"));
	up_with(t, &net_ops, NET_SPEC("vpc-0b0b0b0b", "subnet-0000000a", "subnet-0000000b"));
	gc_error_init(&err);
	assert_int_equal(gc_engine_plan(&t->e, &plan, &live, NULL, NULL, 0, &err), -1);
	assert_string_equal(err.message,
			    "t.yaml:6:10: provider.network.vpc: VPC vpc-0b0b0b0b "
			    "does not exist in us-east-1");
	assert_int_equal(F.calls[OP_CREATE] + F.calls[OP_MKSG] + F.calls[OP_IMPORT], 0);

	/* the right ones: the group spreads over the subnets' zones, each launch names its
	 * zone's subnet, the security group the VPC */
	up_with(t, &net_ops, NET_SPEC("vpc-0a1b2c3d", "subnet-0000000a", "subnet-0000000b"));
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_true(F.n_log >= 1);
	for (size_t i = 0; i < F.n_log; i++) {
		assert_string_equal(F.log[i].vpc, "vpc-0a1b2c3d");
		assert_string_equal(F.log[i].subnet,
				    strcmp(F.log[i].zone, "z-a") == 0 ? "subnet-0000000a"
								      : "subnet-0000000b");
	}
	assert_string_equal(F.last_sg_vpc, "vpc-0a1b2c3d");
	gc_engine_report_release(&rep);

	/* without provider.network: no lookup, nothing named */
	F.network_calls = 0;
	F.n_log = 0;
	up_with(t, &net_ops, SPEC5);
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(F.network_calls, 0);
	for (size_t i = 0; i < F.n_log; i++)
		assert_string_equal(F.log[i].subnet, "");
	gc_engine_report_release(&rep);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
}

static void test_no_wait(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, SPEC2);
	fake_add(CLUSTER, "workers", "000000000000", "g4dn.xlarge", GC_STATE_RUNNING);
	F.pending_polls = 5;
	t->opts.no_wait = true;
	assert_int_equal(apply(t, &rep, &err), 0);
	/* launched and returned: no polls after the plan's, and the old instance stays until
	 * its replacement is known to run */
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_int_equal(F.calls[OP_DISCOVER], 1);
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	assert_int_equal(group_of(&rep, "workers")->created, 2);
	assert_int_equal(group_of(&rep, "workers")->running, 0);
	assert_int_equal(alive(CLUSTER), 3);
	gc_engine_report_release(&rep);

	/* destroy without waiting: terminated, key pair gone, the security group left for a
	 * later destroy (its instances still hold it) */
	reset_calls();
	gc_engine_report_init(&rep);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_int_equal(rep.n_terminated, 3);
	assert_int_equal(F.calls[OP_DISCOVER], 1);
	assert_int_equal(F.calls[OP_DELKEY], 1);
	assert_int_equal(F.calls[OP_DELSG], 0);
	gc_engine_report_release(&rep);
}

static void test_cancel_while_waiting(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;

	up(t, SPEC5);
	F.pending_polls = 1000;
	t->ev.cancel_after_waiting = 2;
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_int_equal(err.code, GC_ECANCELLED);
	/* what exists is reported: all five launched, none running yet */
	assert_int_equal(rep.created.n, 5);
	assert_int_equal(group_of(&rep, "workers")->created, 5);
	assert_int_equal(group_of(&rep, "workers")->running, 0);
	assert_int_equal(t->ev.n[GC_EV_WAITING], 2);
	/* noticed within one slice of the poll interval */
	assert_true(F.calls[OP_DISCOVER] == 3);
	assert_int_equal(F.calls[OP_TERMINATE], 0);
	gc_engine_report_release(&rep);
}

static void test_cancel_before_anything(void **state)
{
	struct t *t = *state;
	struct gc_error err;

	up(t, SPEC5);
	t->ev.cancel = true;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_ECANCELLED);
	assert_int_equal(F.calls[OP_CREATE], 0);
	assert_int_equal(F.calls[OP_IMPORT], 0);
}

static const char *const SPEC4_TTL = HEAD "  - name: workers\n"
					  "    count: 4\n"
					  "    instance_types: [g5.xlarge]\n"
					  "    zones: [z-a]\n"
					  "lifecycle: {ttl: 2h}\n";

static void test_idempotency_mismatch_live(void **state)
{
	struct t *t = *state;
	struct gc_error err;

	up(t, SPEC4_TTL);
	F.hidden_polls = 3;
	t->ev.cancel_after_created = 1;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(F.n_insts, 2);

	/* a minute later the expires-at tag differs, so the token mismatches; the first
	 * batch shows up in Describe within the grace period: nothing is launched on a
	 * guess */
	wall_now += 60;
	t->ev = (struct events){ 0 };
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_EIDEMPOTENCY);
	assert_non_null(strstr(err.message, "still there"));
	assert_non_null(strstr(err.message, "run apply again"));
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_int_equal(F.n_insts, 2);

	/* which the next run counts */
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 1);
	assert_int_equal(alive(CLUSTER), 4);
	assert_int_equal(F.n_insts, 4);
}

static void test_idempotency_mismatch_retired(void **state)
{
	struct t *t = *state;
	struct gc_error err;
	uint64_t before;

	/* with a TTL, scaled to zero and back later: the old token mismatches (another
	 * expires-at), its instances are terminated, so the next generation launches */
	up(t, SPEC4_TTL);
	assert_int_equal(apply_quiet(t, &err), 0);
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 0\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n"
		"lifecycle: {ttl: 2h}\n");
	assert_int_equal(apply_quiet(t, &err), 0);
	up(t, SPEC4_TTL);
	wall_now += 3600;
	reset_calls();
	before = fc.now;
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.calls[OP_CREATE], 4); /* two mismatches, two launches */
	assert_int_equal(alive(CLUSTER), 4);
	/* found terminated at once: no grace period spent */
	assert_true((fc.now - before) / MS < 10000);

	/* the same, once Describe has forgotten them: the grace period, then launch */
	for (size_t i = 0; i < F.n_insts; i++)
		if (F.insts[i].in.state == GC_STATE_TERMINATED)
			F.insts[i].hidden_left = 1000000;
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 0\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n"
		"lifecycle: {ttl: 2h}\n");
	assert_int_equal(apply_quiet(t, &err), 0);
	for (size_t i = 0; i < F.n_insts; i++)
		if (F.insts[i].in.state != GC_STATE_PENDING &&
		    F.insts[i].in.state != GC_STATE_RUNNING)
			F.insts[i].hidden_left = 1000000;
	up(t, SPEC4_TTL);
	wall_now += 3600;
	reset_calls();
	before = fc.now;
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(alive(CLUSTER), 4);
	assert_true((fc.now - before) / MS >= 60000);
}

/* Issue 18: a 2-node group with a TTL loses one node (terminated from outside), apply
 * replaces it; then it loses the other: the replacement's slot token comes back with
 * another expires-at, carried by a live instance the plan counts already. That token is
 * retired (never a "run apply again" forever): back to 2 with no error, no duplicate. */
static void test_ttl_lose_nodes_one_by_one(void **state)
{
	static const char *const spec = HEAD "  - name: workers\n"
					     "    count: 2\n"
					     "    instance_types: [g5.xlarge]\n"
					     "    zones: [z-a]\n"
					     "lifecycle: {ttl: 2h}\n";
	struct t *t = *state;
	struct gc_error err;

	up(t, spec);
	assert_int_equal(apply_quiet(t, &err), 0);
	for (unsigned round = 0; round < 12; round++) {
		size_t victim = (size_t)-1;

		/* the oldest live instance goes, from outside */
		for (size_t i = 0; i < F.n_insts && victim == (size_t)-1; i++)
			if (F.insts[i].in.state == GC_STATE_RUNNING)
				victim = i;
		assert_true(victim != (size_t)-1);
		F.insts[victim].in.state = GC_STATE_TERMINATED;
		wall_now += 60;
		assert_int_equal(apply_quiet(t, &err), 0);
		assert_int_equal(alive(CLUSTER), 2);
	}
}

/* Fail each call of a clean run in turn, before and after its effect: the run fails
 * cleanly or succeeds, never leaves more than asked, and a second run converges. */
static void test_fault_sweep(void **state)
{
	struct t *t = *state;
	struct gc_error err;
	unsigned total;
	static const enum gc_errcode codes[] = { GC_ETRANSIENT, GC_ETHROTTLED, GC_EGENERIC };

	up(t, SPEC5);
	F.pending_polls = 1;
	assert_int_equal(apply_quiet(t, &err), 0);
	total = F.total;
	assert_true(total > 10);

	for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); c++) {
		for (int after = 0; after < 2; after++) {
			for (unsigned k = 0; k < total; k++) {
				int r;

				fake_reset();
				t->ev = (struct events){ 0 };
				F.pending_polls = 1;
				F.fail_op = OP_N;
				F.fail_at = k;
				F.fail_code = codes[c];
				F.fail_after = after;
				r = apply_quiet(t, &err);
				if (r < 0)
					assert_int_not_equal(err.code, GC_OK);
				assert_true(alive(CLUSTER) <= 5);

				F.fail_op = -1;
				r = apply_quiet(t, &err);
				if (r != 0)
					fail_msg("k=%u after=%d code=%s: second apply: %s", k,
						 after, gc_strerror(codes[c]), err.message);
				/* instances the first run made and left pending are kept, not
				 * waited for: the second run only waits for what it creates */
				if (alive(CLUSTER) != 5 || F.n_insts != 5)
					fail_msg("k=%u after=%d code=%s: %u alive of %zu after the "
						 "second apply",
						 k, after, gc_strerror(codes[c]), alive(CLUSTER),
						 F.n_insts);
				reset_calls();
				assert_int_equal(apply_quiet(t, &err), 0);
				assert_int_equal(F.calls[OP_CREATE], 0);
				assert_int_equal(in_state(CLUSTER, GC_STATE_RUNNING), 5);
			}
		}
	}
}

/* The same for destroy: whatever call fails, a second destroy leaves nothing of ours and
 * everything of others. */
static void test_fault_sweep_destroy(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	unsigned total;

	up(t, SPEC5);
	for (unsigned k = 0;; k++) {
		fake_reset();
		F.terminating_polls = 1;
		assert_int_equal(apply_quiet(t, &err), 0);
		fake_add("other", "workers", "x", "g5.xlarge", GC_STATE_RUNNING);
		fake_res_add(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER "-x", NULL);
		reset_calls();
		F.fail_op = OP_N;
		F.fail_at = k;
		F.fail_code = GC_ETRANSIENT;
		F.fail_after = k % 2;
		gc_engine_report_init(&rep);
		if (gc_engine_destroy(&t->e, &t->opts, &rep, &err) < 0)
			assert_int_not_equal(err.code, GC_OK);
		gc_engine_report_release(&rep);
		total = F.total;

		F.fail_op = -1;
		gc_engine_report_init(&rep);
		assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
		gc_engine_report_release(&rep);
		assert_int_equal(alive(CLUSTER), 0);
		assert_int_equal(alive("other"), 1);
		assert_int_equal(F.n_res, 1);
		assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER "-x"));
		if (k >= total)
			break; /* the fault came after the last call: every call was covered */
	}
}

/* ---- CI runs, destroy --selector, gc -------------------------------------------- */

/* Sets a variable of the fake environment (replacing one of that name). */
static void set_var(struct t *t, const char *name, const char *value)
{
	size_t i;

	for (i = 3; i < 9 && t->vars[i].name; i++)
		if (strcmp(t->vars[i].name, name) == 0)
			break;
	assert_true(i < 9);
	t->vars[i].name = name;
	t->vars[i].value = value;
}

static void github_run(struct t *t, const char *id, const char *attempt)
{
	set_var(t, "GITHUB_ACTIONS", "true");
	set_var(t, "GITHUB_RUN_ID", id);
	set_var(t, "GITHUB_RUN_ATTEMPT", attempt);
	set_var(t, "GITHUB_REPOSITORY", "acme/train");
}

static const char *res_tag(const struct fres *r, const char *key)
{
	for (size_t i = 0; i < r->n_tags; i++)
		if (!strcmp(r->tags[i].key, key))
			return r->tags[i].value;
	return NULL;
}

static void test_run_tags(void **state)
{
	struct t *t = *state;
	struct gc_error err;

	/* outside Actions: no run tags, even with the variables set */
	set_var(t, "GITHUB_RUN_ID", "41");
	up(t, SPEC2);
	assert_int_equal(apply_quiet(t, &err), 0);
	for (size_t i = 0; i < F.n_insts; i++)
		assert_null(gc_instance_tag(&F.insts[i].in, GC_TAG_RUN_ID));
	fake_reset();

	github_run(t, "42", "3");
	set_var(t, "GITHUB_REPOSITORY", "acme/bad\tname"); /* not a usable tag value */
	up(t, SPEC2);
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(F.n_insts, 2);
	for (size_t i = 0; i < F.n_insts; i++) {
		const struct gc_instance *in = &F.insts[i].in;

		assert_string_equal(gc_instance_tag(in, GC_TAG_RUN_ID), "42");
		assert_string_equal(gc_instance_tag(in, GC_TAG_RUN_ATTEMPT), "3");
		assert_null(gc_instance_tag(in, GC_TAG_REPOSITORY));
		/* never a creation time on an instance: it would change the replayed request */
		assert_null(gc_instance_tag(in, GC_TAG_CREATED_AT));
	}
	assert_int_equal(F.n_res, 2);
	for (size_t i = 0; i < F.n_res; i++) {
		assert_string_equal(res_tag(&F.res[i], GC_TAG_RUN_ID), "42");
		assert_string_equal(res_tag(&F.res[i], GC_TAG_RUN_ATTEMPT), "3");
		assert_string_equal(res_tag(&F.res[i], GC_TAG_CREATED_AT), "2025-11-21T04:40:00Z");
		assert_string_equal(res_tag(&F.res[i], GC_TAG_CLUSTER), CLUSTER);
	}
}

static void test_run_attempt_replays_tokens(void **state)
{
	struct t *t = *state;
	struct gc_error err;
	char first[65];

	/* attempt 1 launches the first batch and is cancelled before Describe shows it */
	github_run(t, "7", "1");
	up(t, SPEC6);
	F.hidden_polls = 3;
	t->ev.cancel_after_created = 1;
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(F.n_insts, 2);
	snprintf(first, sizeof(first), "%s", F.log[0].token);

	/* attempt 2 sends the same token (run tags are not part of it); the tags differ, so
	 * the cloud refuses, and the instances behind the token are found: no second launch */
	github_run(t, "7", "2");
	up(t, SPEC6);
	t->ev = (struct events){ 0 };
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), -1);
	assert_int_equal(err.code, GC_EIDEMPOTENCY);
	assert_string_equal(F.log[0].token, first);
	assert_int_equal(F.n_insts, 2);

	/* attempt 3 counts them and launches only what is missing */
	github_run(t, "7", "3");
	up(t, SPEC6);
	reset_calls();
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(alive(CLUSTER), 6);
	assert_int_equal(F.n_insts, 6);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(gc_instance_tag(&F.insts[i].in, GC_TAG_RUN_ATTEMPT), "1");
}

static unsigned alive_run(const char *run)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_insts; i++) {
		const char *v = gc_instance_tag(&F.insts[i].in, GC_TAG_RUN_ID);

		if (v && !strcmp(v, run) &&
		    (F.insts[i].in.state == GC_STATE_PENDING ||
		     F.insts[i].in.state == GC_STATE_RUNNING))
			n++;
	}
	return n;
}

static void test_destroy_selector(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	struct gc_selectors sel;

	/* run 1 makes two nodes and the resources, run 2 grows the cluster by two */
	github_run(t, "1", "1");
	up(t, SPEC2);
	assert_int_equal(apply_quiet(t, &err), 0);
	github_run(t, "2", "1");
	up(t,
	   HEAD "  - name: workers\n"
		"    count: 4\n"
		"    instance_types: [g5.xlarge]\n"
		"    zones: [z-a]\n");
	assert_int_equal(apply_quiet(t, &err), 0);
	assert_int_equal(alive_run("1"), 2);
	assert_int_equal(alive_run("2"), 2);
	assert_int_equal(F.n_res, 2);

	/* run 2's teardown: its nodes only; the resources stay for run 1's */
	gc_selectors_init(&sel);
	assert_int_equal(gc_selectors_add(&sel, "run-id=2", &err), 0);
	F.terminating_polls = 2;
	reset_calls();
	gc_engine_report_init(&rep);
	assert_int_equal(
		gc_engine_destroy_selected(&t->e, sel.filters, sel.n, &t->opts, &rep, &err), 0);
	assert_int_equal(rep.n_terminated, 2);
	assert_int_equal(alive_run("2"), 0);
	assert_int_equal(alive_run("1"), 2);
	assert_int_equal(F.calls[OP_DELKEY], 0);
	assert_int_equal(F.calls[OP_DELSG], 0);
	assert_int_equal(F.n_res, 2);
	gc_engine_report_release(&rep);
	gc_selectors_release(&sel);

	/* run 1's: the rest, and then the resources (they carry run 1's tags) */
	gc_selectors_init(&sel);
	assert_int_equal(gc_selectors_add(&sel, "run-id=1", &err), 0);
	reset_calls();
	gc_engine_report_init(&rep);
	assert_int_equal(
		gc_engine_destroy_selected(&t->e, sel.filters, sel.n, &t->opts, &rep, &err), 0);
	assert_int_equal(rep.n_terminated, 2);
	assert_int_equal(alive(CLUSTER), 0);
	assert_int_equal(F.calls[OP_DELKEY], 1);
	assert_int_equal(F.calls[OP_DELSG], 1);
	assert_int_equal(F.n_res, 0);
	gc_engine_report_release(&rep);
	gc_selectors_release(&sel);
}

static struct finst *add_run_instance(const char *run, enum gc_instance_state st)
{
	struct finst *f = fake_add(CLUSTER, "workers", "h", "g5.xlarge", st);

	gc_instance_set_tag(&f->in, GC_TAG_RUN_ID, run);
	return f;
}

static void test_destroy_selector_late_instances(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	struct gc_selectors sel;
	struct finst *late, *other_late;
	char late_id[32], other_id[32];

	/* a cancelled start job: one launch pending, one Describe shows only later; and a
	 * late node of another run */
	up(t, SPEC2);
	add_run_instance("9", GC_STATE_PENDING);
	late = add_run_instance("9", GC_STATE_PENDING);
	late->hidden_left = 2;
	snprintf(late_id, sizeof(late_id), "%s", late->in.id);
	other_late = add_run_instance("10", GC_STATE_RUNNING);
	other_late->hidden_left = 2;
	snprintf(other_id, sizeof(other_id), "%s", other_late->in.id);
	F.terminating_polls = 4;

	gc_selectors_init(&sel);
	assert_int_equal(gc_selectors_add(&sel, "run-id=9", &err), 0);
	gc_engine_report_init(&rep);
	assert_int_equal(
		gc_engine_destroy_selected(&t->e, sel.filters, sel.n, &t->opts, &rep, &err), 0);
	/* the late one was swept while waiting; the other run's was not */
	assert_int_equal(must_find(late_id)->in.state, GC_STATE_TERMINATED);
	assert_int_equal(alive_run("9"), 0);
	assert_int_equal(must_find(other_id)->in.state, GC_STATE_RUNNING);
	gc_engine_report_release(&rep);
	gc_selectors_release(&sel);
}

/* ---- gc against the fake cloud ---------------------------------------------------- */

static void scan(struct t *t, struct gc_sweep *s, const struct gc_sweep_opts *o)
{
	struct gc_error err;

	gc_sweep_init(s);
	gc_error_init(&err);
	assert_int_equal(gc_sweep_scan(s, &t->prov, &err), 0);
	gc_sweep_classify(s, o);
}

static const struct gc_sweep_item *item(const struct gc_sweep *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->items[i].id, id))
			return &s->items[i];
	fail_msg("no item '%s'", id);
	abort(); /* not reached */
}

static unsigned progress_calls;

static void count_progress(void *ctx, const struct gc_sweep_item *it)
{
	(void)ctx;
	assert_int_not_equal(it->outcome, GC_SWEEP_LISTED);
	progress_calls++;
}

static void test_gc_sweep(void **state)
{
	struct t *t = *state;
	struct gc_sweep s;
	struct gc_sweep_opts o = { .want = GC_SWEEP_EXPIRED | GC_SWEEP_ORPHANED,
				   .now = WALL + 3 * 3600,
				   .grace_s = 3600 };
	struct gc_sweep_exec_opts eo = { .clock = &fake,
					 .poll_ms = 1000,
					 .progress = count_progress };
	struct gc_error err;
	struct finst *untagged, *keep;
	struct fres *orphan_key, *keep_sg, *foreign;
	char untagged_id[32], keep_id[32];
	size_t expired = 0;

	/* a cluster with a TTL of 2h, made at WALL: expired three hours on */
	up(t, SPEC4_TTL);
	assert_int_equal(apply_quiet(t, &err), 0);
	/* an untagged instance and key pair, an orphaned key pair of a gone cluster, a
	 * running cluster without TTL and its security group */
	untagged = fake_add(NULL, "workers", NULL, "g5.xlarge", GC_STATE_RUNNING);
	snprintf(untagged_id, sizeof(untagged_id), "%s", untagged->in.id);
	foreign = fake_res_add(GC_RESOURCE_KEYPAIR, "gpucluster-gone-x", NULL);
	orphan_key = fake_res_add(GC_RESOURCE_KEYPAIR, "gpucluster-gone", "gone");
	keep = fake_add("kept", "workers", "h", "g5.xlarge", GC_STATE_RUNNING);
	snprintf(keep_id, sizeof(keep_id), "%s", keep->in.id);
	keep_sg = fake_res_add(GC_RESOURCE_SECGROUP, "gpucluster-kept", "kept");
	for (size_t i = 0; i < F.n_res; i++) {
		/* the created-at tag gc_sweep reads, as apply writes it, on ours */
		if (F.res[i].n_tags && !res_tag(&F.res[i], GC_TAG_CREATED_AT)) {
			F.res[i].tags = gc_xreallocarray(F.res[i].tags, F.res[i].n_tags + 1,
							 sizeof(*F.res[i].tags));
			F.res[i].tags[F.res[i].n_tags].key = gc_xstrdup(GC_TAG_CREATED_AT);
			F.res[i].tags[F.res[i].n_tags++].value = gc_xstrdup("2025-11-21T04:00:00Z");
		}
	}

	scan(t, &s, &o);
	/* never listed: what carries no cluster tag */
	for (size_t i = 0; i < s.n; i++) {
		assert_string_not_equal(s.items[i].id, untagged_id);
		assert_string_not_equal(s.items[i].id, foreign->id);
	}
	for (size_t i = 0; i < s.n; i++)
		if (s.items[i].kind == GC_SWEEP_INSTANCE && s.items[i].why == GC_SWEEP_EXPIRED)
			expired++;
	assert_int_equal(expired, 4);
	assert_int_equal(item(&s, orphan_key->id)->why, GC_SWEEP_ORPHANED);
	assert_int_equal(item(&s, keep_id)->why, 0);
	assert_int_equal(item(&s, keep_sg->id)->why, 0);
	/* the expired cluster's own key pair and security group go with it */
	assert_int_equal(gc_sweep_count(&s), 4 + 1 + 2);

	/* an apply launches into cluster t1 between the scan and the deletion: its key pair
	 * and security group must stay */
	fake_add(CLUSTER, "workers", "h", "g5.xlarge", GC_STATE_PENDING);
	F.terminating_polls = 2;
	reset_calls();
	progress_calls = 0;
	assert_int_equal(gc_sweep_execute(&s, &t->prov, &eo, &err), 0);
	assert_int_equal(progress_calls, 7);
	assert_int_equal(in_state(CLUSTER, GC_STATE_TERMINATED), 4);
	assert_int_equal(alive(CLUSTER), 1);
	for (size_t i = 0; i < s.n; i++) {
		const struct gc_sweep_item *it = &s.items[i];

		if (!it->why)
			continue;
		if (it->kind != GC_SWEEP_INSTANCE && !strcmp(it->cluster, CLUSTER)) {
			assert_int_equal(it->outcome, GC_SWEEP_KEPT);
			assert_non_null(strstr(it->err.message, "live instance"));
		} else {
			assert_int_equal(it->outcome, GC_SWEEP_DONE);
		}
	}
	assert_null(fake_res_find(GC_RESOURCE_KEYPAIR, "gpucluster-gone"));
	assert_non_null(fake_res_find(GC_RESOURCE_KEYPAIR, "gpucluster-gone-x"));
	assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-kept"));
	assert_non_null(fake_res_find(GC_RESOURCE_SECGROUP, "gpucluster-" CLUSTER));
	assert_int_equal(must_find(untagged_id)->in.state, GC_STATE_RUNNING);
	assert_int_equal(must_find(keep_id)->in.state, GC_STATE_RUNNING);
	/* waited for the terminations before touching the resources */
	assert_true(F.calls[OP_DISCOVER] >= 3);
	assert_int_equal(F.calls[OP_DELSG], 0);
	gc_sweep_release(&s);
}

/* A region whose scan fails (instances, key pairs or security groups) is dropped whole:
 * nothing of it is listed, so nothing of it can be deleted (issue 19, item 3). */
static void test_gc_sweep_scan_doubt(void **state)
{
	struct t *t = *state;
	static const struct {
		int op;
		unsigned at;
		const char *what;
	} cases[] = {
		{ OP_DISCOVER, 0, "cannot list the instances in " },
		{ OP_LIST, 0, "cannot list the key pairs in " },
		{ OP_LIST, 1, "cannot list the security groups in " },
	};
	struct gc_error err;

	up(t, SPEC4_TTL);
	assert_int_equal(apply_quiet(t, &err), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gc_sweep s;

		gc_sweep_init(&s);
		gc_error_init(&err);
		reset_calls();
		F.fail_op = cases[i].op;
		F.fail_at = cases[i].at;
		F.fail_code = GC_EBADRESPONSE;
		assert_int_equal(gc_sweep_scan(&s, &t->prov, &err), -1);
		assert_int_equal(err.code, GC_EBADRESPONSE);
		assert_non_null(strstr(err.message, "not deleting anything in "));
		assert_non_null(strstr(err.message, cases[i].what));
		assert_int_equal(s.n, 0);
		gc_sweep_release(&s);
	}
	F.fail_op = -1;
	assert_int_equal(alive(CLUSTER), 4);
}

static void test_gc_sweep_auth_stops(void **state)
{
	struct t *t = *state;
	struct gc_sweep s;
	struct gc_sweep_opts o = { .want = GC_SWEEP_EXPIRED | GC_SWEEP_ORPHANED,
				   .now = WALL + 3 * 3600,
				   .grace_s = 3600 };
	struct gc_sweep_exec_opts eo = { .clock = &fake, .poll_ms = 1000 };
	struct gc_error err;

	up(t, SPEC4_TTL);
	assert_int_equal(apply_quiet(t, &err), 0);
	scan(t, &s, &o);
	assert_int_equal(gc_sweep_count(&s), 4 + 2);
	/* the credentials are refused at the first terminate: nothing else is tried */
	F.fail_op = OP_TERMINATE;
	F.fail_at = 0;
	F.fail_code = GC_EAUTH;
	reset_calls();
	assert_int_equal(gc_sweep_execute(&s, &t->prov, &eo, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_int_equal(F.calls[OP_TERMINATE], 1);
	assert_int_equal(F.calls[OP_DELKEY] + F.calls[OP_DELSG], 0);
	for (size_t i = 0; i < s.n; i++)
		if (s.items[i].why)
			assert_int_equal(s.items[i].outcome, GC_SWEEP_FAILED);
	assert_int_equal(alive(CLUSTER), 4);
	gc_sweep_release(&s);
}

/* ---- public addresses (docs/internals/fabric.md, "A reachable address") -------- */

static bool addr_refuse;       /* attach_address fails */
static unsigned addr_attaches; /* attach_address calls that succeeded */

static int fake_efa_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
			 struct gc_error *err)
{
	(void)p;
	(void)err;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", type);
	out->vcpus = 96;
	out->gpus = 8;
	out->rdma_interfaces = 4;
	return 0;
}

static int fake_mkaddr(struct gc_provider *p, const struct gc_tag *tags, size_t n_tags,
		       char **out_id, char **out_ip, struct gc_error *err)
{
	char ip[32];
	struct fres *r;

	(void)p;
	(void)err;
	snprintf(ip, sizeof(ip), "198.51.100.%u", F.next_id + 10);
	r = fake_res_add(GC_RESOURCE_ADDRESS, ip, NULL);
	r->tags = gc_xcalloc(n_tags + 1, sizeof(*r->tags));
	for (size_t i = 0; i < n_tags; i++) {
		r->tags[i].key = gc_xstrdup(tags[i].key);
		r->tags[i].value = gc_xstrdup(tags[i].value);
	}
	r->n_tags = n_tags;
	*out_id = gc_xstrdup(r->id);
	*out_ip = gc_xstrdup(ip);
	return 0;
}

static int fake_attach(struct gc_provider *p, const char *id, const char *instance_id,
		       struct gc_error *err)
{
	(void)p;
	if (addr_refuse)
		return gc_error_set(err, GC_EQUOTA, "injected refusal of %s for %s", id,
				    instance_id);
	addr_attaches++;
	return 0;
}

static int fake_deladdr(struct gc_provider *p, const char *id, struct gc_error *err)
{
	(void)p;
	(void)err;
	for (size_t i = 0; i < F.n_res; i++) {
		if (strcmp(F.res[i].id, id) != 0)
			continue;
		free(F.res[i].id);
		free(F.res[i].name);
		fake_free_tags(F.res[i].tags, F.res[i].n_tags);
		F.res[i] = F.res[--F.n_res];
		break;
	}
	return 0;
}

/* A cloud that gives no public address to a node with several interfaces. */
static const struct gc_provider_ops efa_ops = {
	.name = "efa",
	.facts = &aws_facts,
	.caps = GC_CAP_CLIENT_TOKEN | GC_CAP_PRICE | GC_CAP_ED25519_KEYPAIR,
	.max_create_batch = 2,
	.max_terminate_batch = 3,
	.client_token_max = 64,
	FAKE_FUNCS,
	.caller_address = fake_addr,
	.instance_type = fake_efa_type,
	.create_address = fake_mkaddr,
	.attach_address = fake_attach,
	.delete_address = fake_deladdr,
};

/* The addresses of the fake world, and how many are for instance id (NULL: any). */
static unsigned addresses_for(const char *id)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_res; i++) {
		const char *of = NULL;

		if (F.res[i].kind != GC_RESOURCE_ADDRESS)
			continue;
		for (size_t k = 0; k < F.res[i].n_tags; k++)
			if (!strcmp(F.res[i].tags[k].key, GC_TAG_INSTANCE))
				of = F.res[i].tags[k].value;
		n += !id || (of && !strcmp(of, id));
	}
	return n;
}

#define EFA_SPEC(n)                                 \
	HEAD "  - name: workers\n"                  \
	     "    count: " #n "\n"                  \
	     "    instance_types: [p4d.24xlarge]\n" \
	     "    zones: [z-a]\n"                   \
	     "    interconnect: rdma\n"

/* Each node of a group with several interfaces gets an address tagged for it at
 * allocation; a run stopped before attaching leaves it for the next run, which attaches
 * it instead of allocating another; a scale-down releases the terminated node's, destroy
 * the rest. */
static void test_addresses(void **state)
{
	struct t *t = *state;
	struct gc_engine_report rep;
	struct gc_error err;
	const char *kept = NULL;

	addr_refuse = true;
	addr_attaches = 0;
	up_with(t, &efa_ops, EFA_SPEC(2));
	assert_int_equal(apply(t, &rep, &err), -1);
	assert_non_null(strstr(err.message, "cannot attach public address 198.51.100."));
	assert_int_equal(addresses_for(NULL), 2);
	for (size_t i = 0; i < rep.created.n; i++) {
		assert_int_equal(addresses_for(rep.created.items[i].id), 1);
		assert_null(rep.created.items[i].public_ip);
	}
	gc_engine_report_release(&rep);

	/* the re-run attaches what the first run allocated */
	addr_refuse = false;
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(addresses_for(NULL), 2);
	assert_int_equal(addr_attaches, 2);
	gc_engine_report_release(&rep);

	/* a scale-down releases the terminated node's address only */
	up_with(t, &efa_ops, EFA_SPEC(1));
	assert_int_equal(apply(t, &rep, &err), 0);
	assert_int_equal(rep.n_terminated, 1);
	assert_int_equal(addresses_for(rep.terminated_ids[0]), 0);
	assert_int_equal(addresses_for(NULL), 1);
	for (size_t i = 0; i < F.n_insts; i++)
		if (F.insts[i].in.state == GC_STATE_RUNNING)
			kept = F.insts[i].in.id;
	assert_non_null(kept);
	assert_int_equal(addresses_for(kept), 1);
	gc_engine_report_release(&rep);

	/* destroy releases the rest once the nodes are gone */
	gc_engine_report_init(&rep);
	gc_error_init(&err);
	assert_int_equal(gc_engine_destroy(&t->e, &t->opts, &rep, &err), 0);
	assert_int_equal(addresses_for(NULL), 0);
	gc_engine_report_release(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_token),
		cmocka_unit_test_setup_teardown(test_create_in_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted_apply_resumes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted_apply_describe_lag, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_of_earlier_instances, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity_fallback_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity_spot_to_on_demand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_full_falls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_full_no_type_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_not_here_falls_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_placement_not_here_no_type_left, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_here_outside_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_type_takes_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spot_quota_to_on_demand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity_any_zone_then_cloud_zones, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_same_zone_pins_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_stops_the_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_skips_dear_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_counts_this_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_stops_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_failure_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_checks_the_cloud, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_first_apply_undone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spot_reclaimed_while_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_after_replacements_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replace_held_back_on_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_surplus_terminated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_scoped_by_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_confirmed_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_secgroup_dependency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_names_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkip_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capabilities, setup, teardown),
		cmocka_unit_test_setup_teardown(test_currency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_network, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_while_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_before_anything, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idempotency_mismatch_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idempotency_mismatch_retired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ttl_lose_nodes_one_by_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_sweep_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_attempt_replays_tokens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_selector, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_selector_late_instances, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gc_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_stops_on_listing_error, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replace_stops_on_listing_error, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gc_sweep_auth_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_sweep_scan_doubt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_addresses, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
