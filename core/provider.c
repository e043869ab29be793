/*
 * provider.c: the wrappers around a cloud's ops table, the cloud-neutral instance and
 * resource lists the drivers fill (what drivers share beyond that is core/driver.c).
 *
 * This file is the only place outside a driver that calls through `ops->`: every call
 * checks that the cloud implements the operation (GC_EUNSUPPORTED otherwise, naming the
 * cloud and the operation), enforces the batch limits the ops table declares, and stamps
 * the error with what was being done. Drivers stay free of that bookkeeping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/driver.h"
#include "core/provider.h"
#include "core/str.h"

const char *gc_instance_state_name(enum gc_instance_state s)
{
	switch (s) {
	case GC_STATE_PENDING: return "pending";
	case GC_STATE_RUNNING: return "running";
	case GC_STATE_STOPPING: return "stopping";
	case GC_STATE_STOPPED: return "stopped";
	case GC_STATE_TERMINATING: return "terminating";
	case GC_STATE_TERMINATED: return "terminated";
	case GC_STATE_UNKNOWN: break;
	}
	return "unknown";
}

/* ---- instances ------------------------------------------------------------------ */

static void tags_free(struct gc_tag *tags, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(tags[i].key);
		free(tags[i].value);
	}
	free(tags);
}

void gc_instance_release(struct gc_instance *inst)
{
	if (!inst)
		return;
	free(inst->id);
	free(inst->cluster);
	free(inst->group);
	free(inst->spec_hash);
	free(inst->health);
	free(inst->type);
	free(inst->zone);
	free(inst->image);
	free(inst->state_name);
	free(inst->private_ip);
	free(inst->public_ip);
	free(inst->client_token);
	free(inst->reason);
	tags_free(inst->tags, inst->n_tags);
	memset(inst, 0, sizeof(*inst));
}

void gc_instance_list_init(struct gc_instance_list *l)
{
	memset(l, 0, sizeof(*l));
}

void gc_instance_list_release(struct gc_instance_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		gc_instance_release(&l->items[i]);
	free(l->items);
	gc_instance_list_init(l);
}

struct gc_instance *gc_instance_list_push(struct gc_instance_list *l)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 16;
		l->items = gc_xreallocarray(l->items, l->alloc, sizeof(*l->items));
	}
	memset(&l->items[l->n], 0, sizeof(l->items[0]));
	return &l->items[l->n++];
}

void gc_instance_list_take(struct gc_instance_list *dst, struct gc_instance_list *src)
{
	for (size_t i = 0; i < src->n; i++)
		*gc_instance_list_push(dst) = src->items[i];
	free(src->items);
	gc_instance_list_init(src);
}

static int id_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *gc_instance_list_twice(const struct gc_instance_list *l)
{
	const char **ids = gc_xcalloc(l->n + 1, sizeof(*ids));
	char *twice = NULL;
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].id)
			ids[n++] = l->items[i].id;
	qsort(ids, n, sizeof(*ids), id_order);
	for (size_t i = 1; i < n && !twice; i++)
		if (strcmp(ids[i - 1], ids[i]) == 0)
			twice = gc_xasprintf("instance '%s' is listed twice", ids[i]);
	free(ids);
	return twice;
}

static void set_field(char **field, const char *value)
{
	free(*field);
	*field = gc_xstrdup(value);
}

void gc_instance_set_tag(struct gc_instance *inst, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < inst->n_tags; i++)
		if (strcmp(inst->tags[i].key, key) == 0)
			break;
	if (i == inst->n_tags) {
		inst->tags = gc_xreallocarray(inst->tags, inst->n_tags + 1, sizeof(*inst->tags));
		inst->tags[i].key = gc_xstrdup(key);
		inst->tags[i].value = NULL;
		inst->n_tags++;
	}
	set_field(&inst->tags[i].value, value);

	if (strcmp(key, GC_TAG_CLUSTER) == 0)
		set_field(&inst->cluster, value);
	else if (strcmp(key, GC_TAG_GROUP) == 0)
		set_field(&inst->group, value);
	else if (strcmp(key, GC_TAG_SPEC_HASH) == 0)
		set_field(&inst->spec_hash, value);
	else if (strcmp(key, GC_TAG_HEALTH) == 0)
		set_field(&inst->health, value);
	else if (strcmp(key, GC_TAG_EXPIRES_AT) == 0 && gc_parse_rfc3339(value, &inst->expires_at))
		inst->expires_at = 0; /* not ours to fail on: treated as no deadline */
	else if (strcmp(key, GC_TAG_IDLE) == 0 &&
		 gc_parse_i64(value, 1, 366 * 86400, &inst->idle_s) < 0)
		inst->idle_s = 0; /* likewise: not seconds, no idle stop known */
}

const char *gc_instance_tag(const struct gc_instance *inst, const char *key)
{
	for (size_t i = 0; i < inst->n_tags; i++)
		if (strcmp(inst->tags[i].key, key) == 0)
			return inst->tags[i].value;
	return NULL;
}

bool gc_tags_match(const struct gc_tag *tags, size_t n, const struct gc_tag_filter *f, size_t n_f)
{
	for (size_t i = 0; i < n_f; i++) {
		bool found = false;

		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(tags[k].key, f[i].key) == 0 &&
				(!f[i].value ||
				 (tags[k].value && strcmp(tags[k].value, f[i].value) == 0));
		if (!found)
			return false;
	}
	return true;
}

/* ---- resources ------------------------------------------------------------------ */

void gc_resource_list_init(struct gc_resource_list *l)
{
	memset(l, 0, sizeof(*l));
}

void gc_resource_list_release(struct gc_resource_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].id);
		free(l->items[i].name);
		free(l->items[i].fingerprint);
		tags_free(l->items[i].tags, l->items[i].n_tags);
	}
	free(l->items);
	gc_resource_list_init(l);
}

struct gc_resource *gc_resource_list_push(struct gc_resource_list *l)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 8;
		l->items = gc_xreallocarray(l->items, l->alloc, sizeof(*l->items));
	}
	memset(&l->items[l->n], 0, sizeof(l->items[0]));
	return &l->items[l->n++];
}

void gc_resource_list_take_tagged(struct gc_resource_list *dst, struct gc_resource_list *src,
				  const struct gc_tag_filter *tags, size_t n_tags)
{
	for (size_t i = 0; i < src->n; i++) {
		struct gc_resource *r = &src->items[i];

		if (gc_tags_match(r->tags, r->n_tags, tags, n_tags)) {
			*gc_resource_list_push(dst) = *r;
			memset(r, 0, sizeof(*r));
		}
	}
	gc_resource_list_release(src);
}

/* ---- prices -------------------------------------------------------------------- */

const struct gc_price_entry *gc_price_cache_find(const struct gc_price_cache *c, const char *type,
						 const char *zone, bool spot)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct gc_price_entry *e = &c->items[i];

		if (e->spot == spot && strcmp(e->type, type) == 0 &&
		    ((!zone && !e->zone) || (zone && e->zone && strcmp(zone, e->zone) == 0)))
			return e;
	}
	return NULL;
}

void gc_price_cache_add(struct gc_price_cache *c, const char *type, const char *zone, bool spot,
			double amount, const char *currency)
{
	GC_ALLOC_GROW(c->items, c->n + 1, c->alloc);
	c->items[c->n].type = gc_xstrdup(type);
	c->items[c->n].zone = zone ? gc_xstrdup(zone) : NULL;
	c->items[c->n].spot = spot;
	c->items[c->n].amount = amount;
	snprintf(c->items[c->n].currency, sizeof(c->items[c->n].currency), "%s", currency);
	c->n++;
}

void gc_price_cache_release(struct gc_price_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->items[i].type);
		free(c->items[i].zone);
	}
	free(c->items);
	memset(c, 0, sizeof(*c));
}

bool gc_currency_code_ok(const char *s)
{
	return s && strlen(s) == 3 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 3;
}

void gc_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- time ----------------------------------------------------------------------- */

void gc_format_rfc3339(int64_t t, char out[21])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 21, "1970-01-01T00:00:00Z");
}

int64_t gc_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

static int digits(const char *s, size_t n, unsigned *out)
{
	unsigned v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int gc_parse_rfc3339(const char *s, int64_t *out)
{
	unsigned y, mo, d, h, mi, se;
	size_t len = strlen(s);
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	/* YYYY-MM-DDTHH:MM:SS, optional .fraction, then Z */
	if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
	    s[13] != ':' || s[16] != ':' || (s[len - 1] != 'Z' && s[len - 1] != 'z'))
		return -1;
	if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &se))
		return -1;
	if (len > 20) {
		unsigned frac;

		if (s[19] != '.' || len == 21 || digits(s + 20, len - 21, &frac) < 0)
			return -1;
	}
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60)
		return -1;
	*out = gc_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	return 0;
}

/* ---- the wrappers --------------------------------------------------------------- */

static int unsupported(const struct gc_provider *p, const char *what, struct gc_error *err)
{
	return gc_error_set(err, GC_EUNSUPPORTED, "%s: %s is not supported on this cloud",
			    p->ops->name, what);
}

/* The plain wrapper: the cloud's op, or GC_EUNSUPPORTED naming what it lacks. */
#define CALL_OP(p, op, what, err, ...) \
	((p)->ops->op ? (p)->ops->op((p), __VA_ARGS__, (err)) : unsupported((p), (what), (err)))

int gc_provider_open(struct gc_provider **out, const struct gc_provider_ops *ops,
		     const struct gc_provider_config *cfg, struct gc_error *err)
{
	struct gc_provider *p;

	if (!ops)
		return gc_error_set(err, GC_EUNSUPPORTED, "this cloud has no driver in this build");
	if (!cfg->region || !*cfg->region)
		return gc_error_set(err, GC_EINVALID, "%s: no region given", ops->name);
	p = gc_xcalloc(1, sizeof(*p));
	p->ops = ops;
	p->log = cfg->log;
	p->clock = cfg->clock ? cfg->clock : &gc_clock_monotonic;
	p->env = cfg->env;
	p->cancelled = cfg->cancelled;
	p->cancel_ctx = cfg->cancel_ctx;
	p->region = gc_xstrdup(cfg->region);
	if (gc_driver_open(p, cfg, ops->driver, err) < 0) {
		free(p->region);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int gc_provider_open_region(struct gc_provider **out, const struct gc_provider *p,
			    const struct gc_spec *spec, const char *region, struct gc_error *err)
{
	struct gc_provider_config cfg = {
		.region = region,
		.profile = spec->provider.profile,
		.endpoint = spec->provider.endpoint,
		.oidc = &spec->provider.oidc,
		.env = p->env,
		.log = p->log,
		.clock = p->clock,
		.cancelled = p->cancelled,
		.cancel_ctx = p->cancel_ctx,
	};

	return gc_provider_open(out, p->ops, &cfg, err);
}

bool gc_provider_cancelled(const struct gc_provider *p)
{
	return p->cancelled && p->cancelled(p->cancel_ctx);
}

void gc_provider_close(struct gc_provider *p)
{
	if (!p)
		return;
	if (p->ops->driver) /* not the tests' fakes */
		gc_driver_close(p);
	free(p->region);
	free(p);
}

static const struct {
	unsigned cap;
	const char *what;
} cap_names[] = {
	{ GC_CAP_SPOT, "the spot market" },
	{ GC_CAP_SPOT_MAX_PRICE, "a spot price limit" },
	{ GC_CAP_CLOUD_TTL, "a cloud-side TTL" },
	{ GC_CAP_CONSOLE_OUTPUT, "console output" },
	{ GC_CAP_CLIENT_TOKEN, "idempotent creation (client tokens)" },
	{ GC_CAP_PRICE, "price lookups" },
};

int gc_provider_check_caps(const struct gc_provider *p, unsigned caps, struct gc_error *err)
{
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if ((caps & cap_names[i].cap) && !(p->ops->caps & cap_names[i].cap))
			return gc_error_set(err, GC_EUNSUPPORTED, "%s does not offer %s",
					    p->ops->name, cap_names[i].what);
	return 0;
}

int gc_provider_discover(struct gc_provider *p, const struct gc_discover_query *q,
			 struct gc_instance_list *out, struct gc_error *err)
{
	return CALL_OP(p, discover, "discover", err, q, out);
}

int gc_provider_create(struct gc_provider *p, const struct gc_create_request *req,
		       struct gc_instance_list *out, struct gc_error *err)
{
	if (!p->ops->create)
		return unsupported(p, "create", err);
	if (req->count == 0 || req->count > p->ops->max_create_batch)
		return gc_error_set(err, GC_EINVALID,
				    "%s: cannot create %u instances in one call (1 to %u)",
				    p->ops->name, req->count, p->ops->max_create_batch);
	if (req->client_token && strlen(req->client_token) > p->ops->client_token_max)
		return gc_error_set(err, GC_EINVALID, "%s: client token longer than %u",
				    p->ops->name, p->ops->client_token_max);
	if (req->spot && !(p->ops->caps & GC_CAP_SPOT))
		return unsupported(p, "the spot market", err);
	return p->ops->create(p, req, out, err);
}

/* One batched call over ids: terminate, set_expiry or set_tag. */
enum batch_op { BATCH_TERMINATE, BATCH_EXPIRY, BATCH_TAG };
struct batch_args {
	enum batch_op op;
	int64_t expires_at;
	const char *key, *value;
};

/* a's call over ids, in batches of max_terminate_batch */
static int by_batches(struct gc_provider *p, const char *const *ids, size_t n,
		      const struct batch_args *a, struct gc_error *err)
{
	size_t batch = p->ops->max_terminate_batch ? p->ops->max_terminate_batch : 1;

	for (size_t i = 0; i < n; i += batch) {
		size_t k = n - i < batch ? n - i : batch;
		int rc;

		switch (a->op) {
		case BATCH_EXPIRY:
			rc = p->ops->set_expiry(p, ids + i, k, a->expires_at, err);
			break;
		case BATCH_TAG: rc = p->ops->set_tag(p, ids + i, k, a->key, a->value, err); break;
		default: rc = p->ops->terminate(p, ids + i, k, err); break;
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

int gc_provider_terminate(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err)
{
	const struct batch_args a = { .op = BATCH_TERMINATE };

	if (!p->ops->terminate)
		return unsupported(p, "terminate", err);
	return by_batches(p, ids, n, &a, err);
}

int gc_provider_set_expiry(struct gc_provider *p, const char *const *ids, size_t n,
			   int64_t expires_at, struct gc_error *err)
{
	const struct batch_args a = { .op = BATCH_EXPIRY, .expires_at = expires_at };

	if (!p->ops->set_expiry)
		return unsupported(p, "moving an instance's expiry", err);
	return by_batches(p, ids, n, &a, err);
}

int gc_provider_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
			const char *value, struct gc_error *err)
{
	const struct batch_args a = { .op = BATCH_TAG, .key = key, .value = value };

	if (!p->ops->set_tag)
		return unsupported(p, "retagging an instance", err);
	return by_batches(p, ids, n, &a, err);
}

int gc_provider_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
			       const struct gc_tag_filter *tags, size_t n_tags,
			       struct gc_resource_list *out, struct gc_error *err)
{
	if (kind == GC_RESOURCE_PLACEMENT && !p->ops->create_placement)
		return 0; /* a cloud without placement resources has none to list */
	if (kind == GC_RESOURCE_ADDRESS && !p->ops->create_address)
		return 0; /* nor one whose nodes keep their public address */
	return CALL_OP(p, list_resources, "listing key pairs and security groups", err, kind, tags,
		       n_tags, out);
}

int gc_provider_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req,
			       char **out_id, struct gc_error *err)
{
	return CALL_OP(p, import_keypair, "key pair import", err, req, out_id);
}

int gc_provider_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return CALL_OP(p, delete_keypair, "key pair deletion", err, id);
}

int gc_provider_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req,
				char **out_id, struct gc_error *err)
{
	if (!p->ops->create_secgroup)
		return unsupported(p, "security groups", err);
	if (req->n_allow_from == 0)
		return gc_error_set(err, GC_EINVALID, "security group '%s': no address to allow",
				    req->name);
	return p->ops->create_secgroup(p, req, out_id, err);
}

int gc_provider_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return CALL_OP(p, delete_secgroup, "security group deletion", err, id);
}

int gc_provider_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
				 char **out_id, struct gc_error *err)
{
	return CALL_OP(p, create_placement, "placement groups", err, req, out_id);
}

int gc_provider_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return CALL_OP(p, delete_placement, "placement group deletion", err, id);
}

int gc_provider_create_address(struct gc_provider *p, const struct gc_tag *tags, size_t n_tags,
			       char **out_id, char **out_ip, struct gc_error *err)
{
	return CALL_OP(p, create_address, "public addresses", err, tags, n_tags, out_id, out_ip);
}

int gc_provider_attach_address(struct gc_provider *p, const char *id, const char *instance_id,
			       struct gc_error *err)
{
	return CALL_OP(p, attach_address, "public addresses", err, id, instance_id);
}

int gc_provider_delete_address(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return CALL_OP(p, delete_address, "public address release", err, id);
}

int gc_provider_resolve_image(struct gc_provider *p, const char *image, bool is_alias,
			      char **out_id, struct gc_error *err)
{
	return CALL_OP(p, resolve_image, "image lookup", err, image, is_alias, out_id);
}

int gc_provider_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
			      struct gc_error *err)
{
	return CALL_OP(p, instance_type, "instance type lookup", err, type, out);
}

int gc_provider_price(struct gc_provider *p, const char *type, const char *zone, bool spot,
		      double *out, char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	if (!p->ops->price || !(p->ops->caps & GC_CAP_PRICE))
		return unsupported(p, "price lookup", err);
	return p->ops->price(p, type, zone, spot, out, out_currency, err);
}

int gc_provider_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	return CALL_OP(p, zones, "zone listing", err, out, n_out);
}

int gc_provider_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	return CALL_OP(p, regions, "region listing", err, out, n_out);
}

int gc_provider_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
			   struct gc_error *err)
{
	return CALL_OP(p, type_zones, "instance type offerings", err, type, out, n_out);
}

int gc_provider_console_output(struct gc_provider *p, const char *id, char **out,
			       struct gc_error *err)
{
	if (!p->ops->console_output || !(p->ops->caps & GC_CAP_CONSOLE_OUTPUT))
		return unsupported(p, "console output", err);
	return p->ops->console_output(p, id, out, err);
}

int gc_provider_caller_address(struct gc_provider *p, char **out, struct gc_error *err)
{
	return CALL_OP(p, caller_address, "caller address lookup", err, out);
}

int gc_provider_network(struct gc_provider *p, const char *vpc, const char *const *subnets,
			size_t n, bool *vpc_found, struct gc_subnet_facts *out,
			struct gc_error *err)
{
	return CALL_OP(p, network, "network lookup", err, vpc, subnets, n, vpc_found, out);
}

int gc_provider_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
		      struct gc_quota *out, struct gc_error *err)
{
	return CALL_OP(p, quota, "quota lookup", err, type, zone, spot, out);
}

int gc_provider_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
			  struct gc_error *err)
{
	return CALL_OP(p, gpu_types, "GPU type listing", err, out, n_out);
}

int gc_provider_reserved_price(struct gc_provider *p, const char *type, double out[2],
			       char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	return CALL_OP(p, reserved_price, "reserved price lookup", err, type, out, out_currency);
}

void gc_gpu_types_free(struct gc_gpu_type *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		gc_strv_free(v[i].zones, v[i].n_zones);
	free(v);
}

void gc_gpu_types_add(struct gc_gpu_type **v, size_t *n, const struct gc_type_facts *facts,
		      const char *zone)
{
	struct gc_gpu_type *t = NULL;

	for (size_t i = 0; i < *n && !t; i++)
		if (strcmp((*v)[i].facts.name, facts->name) == 0)
			t = &(*v)[i];
	if (!t) {
		*v = gc_xreallocarray(*v, *n + 1, sizeof(**v));
		t = &(*v)[(*n)++];
		memset(t, 0, sizeof(*t));
		t->facts = *facts;
	}
	for (size_t i = 0; i < t->n_zones; i++)
		if (strcmp(t->zones[i], zone) == 0)
			return;
	t->zones = gc_xreallocarray(t->zones, t->n_zones + 1, sizeof(*t->zones));
	t->zones[t->n_zones++] = gc_xstrdup(zone);
}
