/*
 * cvm-ops.c: the Tencent driver's operations on CVM and VPC API 3.0; the mapping is
 * tabulated in docs/internals/tencent.md. Each checks what the cloud answered where a
 * mistake would cost money or touch what is not ours: discover and list_resources keep
 * only what carries every filter tag exactly, whatever the server's filtering did.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/cloudinit.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/rules.h"
#include "core/str.h"
#include "providers/tencent/cvm.h"

#define TC_INTERNET_BANDWIDTH 100 /* Mbps cap, billed by traffic: the cap costs nothing */
#define TC_TIMER_LEAD_S	      300 /* ActionTime must be 5 minutes ahead */
#define TC_NAME_MAX	      60  /* InstanceName */
#define TC_SG_NAME_MAX	      60
#define TC_SG_DESC_MAX	      100
#define TC_SETTLE_POLLS	      30 /* terminate: waits of 2 s for the first call to show */
#define TC_SETTLE_WAIT_MS     2000

/* ---- JSON helpers ------------------------------------------------------------------- */

static json_t *tags_json(const struct gc_tag *tags, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      json_pack("{s:s, s:s}", "Key", tags[i].key, "Value",
						tags[i].value ? tags[i].value : ""));
	return a;
}

/* TagSpecification: tags for a resource of type at its creation (none: no key). */
static void add_tag_spec(json_t *params, const char *type, const struct gc_tag *tags, size_t n)
{
	if (n)
		json_object_set_new(params, "TagSpecification",
				    json_pack("[{s:s, s:o}]", "ResourceType", type, "Tags",
					      tags_json(tags, n)));
}

static json_t *filter(const char *name, const char *value)
{
	return json_pack("{s:s, s:[s]}", "Name", name, "Values", value);
}

/*
 * A listing's base params for tag filters: Filters tag:KEY = VALUE, or tag-key = KEY when
 * the value is NULL; no Filters when there are none. The APIs take at most 10 filters; the
 * rest are checked on our side only (every answer is checked against all of them anyway).
 */
static json_t *tag_filters(const struct gc_tag_filter *tags, size_t n)
{
	json_t *base = json_object(), *filters = json_array();

	for (size_t i = 0; i < n && json_array_size(filters) < TC_MAX_FILTERS; i++) {
		if (tags[i].value) {
			char *name = gc_xasprintf("tag:%s", tags[i].key);
			json_array_append_new(filters, filter(name, tags[i].value));
			free(name);
		} else {
			json_array_append_new(filters, filter("tag-key", tags[i].key));
		}
	}
	if (json_array_size(filters))
		json_object_set(base, "Filters", filters);
	json_decref(filters);
	return base;
}

/* [{Key, Value}] into a tag array (owned strings); returns the count. */
static size_t parse_tags(json_t *arr, struct gc_tag **out)
{
	size_t i, n = 0;
	json_t *t;

	*out = NULL;
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return 0;
	*out = gc_xcalloc(json_array_size(arr), sizeof(**out));
	json_array_foreach(arr, i, t)
	{
		const char *k = gc_jstr(t, "Key"), *v = gc_jstr(t, "Value");

		if (!k)
			continue;
		(*out)[n].key = gc_xstrdup(k);
		(*out)[n].value = gc_xstrdup(v ? v : "");
		n++;
	}
	return n;
}

/* A well-formed answer we could not read: name the action. */
static int bad_answer(struct gc_provider *p, enum tc_service svc, const char *action,
		      const char *what, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);

	return gc_error_set(err, GC_EBADRESPONSE, "cannot read the %s answer from '%s': %s", action,
			    svc == TC_VPC	    ? d->vpc_host
				    : svc == TC_TAG ? d->tag_host
						    : d->cvm_host,
			    what);
}

/* One call whose answer is only a RequestId. */
static int plain_call(struct gc_provider *p, enum tc_service svc, const char *action,
		      json_t *params, struct gc_error *err)
{
	json_t *resp = NULL;
	int rc = tc_call(p, svc, action, params, false, &resp, err);

	json_decref(params);
	json_decref(resp);
	return rc;
}

/* ---- listings ------------------------------------------------------------------------------ */

/*
 * One Offset/Limit listing: base's params, each item of the answer's set handed to item.
 * A page must carry its set and TotalCount, and every item its key strings (need, the id
 * first) with no id twice on the page: anything else is a bad answer, never "nothing
 * there" (docs/internals/tencent.md, "Answers we refuse").
 */
struct tc_listing {
	enum tc_service svc;
	const char *action, *set;
	const char *need[3]; /* the strings each item must carry, its id first; NULL ends */
	json_t *base;
	void (*item)(struct gc_provider *p, void *ctx, json_t *o);
	void *ctx;
	json_t *resp; /* the page's answer, from send to parse */
};

static int listing_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			struct gc_buf *body, struct gc_error *err)
{
	struct tc_listing *l = ctx;
	json_t *params = json_deep_copy(l->base);
	char num[24];
	int ret;

	(void)body; /* tc_call hands back the document */
	/* Offset and Limit are strings in the VPC API */
	if (l->svc == TC_VPC) {
		snprintf(num, sizeof(num), "%zu", pg->seen);
		json_object_set_new(params, "Offset", json_string(num));
		json_object_set_new(params, "Limit", json_string("100"));
	} else {
		json_object_set_new(params, "Offset", json_integer((json_int_t)pg->seen));
		json_object_set_new(params, "Limit", json_integer(TC_PAGE_SIZE));
	}
	ret = tc_call(p, l->svc, l->action, params, false, &l->resp, err);
	json_decref(params);
	return ret;
}

/* Why the page's set is not one to read, written into why; false when it is. */
static bool bad_items(const struct tc_listing *l, json_t *set, char *why, size_t len)
{
	const char *id_key = l->need[0];
	json_t *o;
	size_t i;

	json_array_foreach(set, i, o)
	{
		for (size_t k = 0; k < 3 && l->need[k]; k++) {
			const char *v = gc_jstr(o, l->need[k]);

			if (!v || !*v) {
				snprintf(why, len, "item %zu of %s has no %s", i, l->set,
					 l->need[k]);
				return true;
			}
		}
		for (size_t j = 0; j < i; j++) {
			const char *a = gc_jstr(o, id_key);

			if (strcmp(a, gc_jstr(json_array_get(set, j), id_key)) == 0) {
				snprintf(why, len, "%s '%.64s' is listed twice", id_key, a);
				return true;
			}
		}
	}
	return false;
}

static int listing_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			 struct gc_page *pg, struct gc_error *err)
{
	struct tc_listing *l = ctx;
	json_t *set = json_object_get(l->resp, l->set), *o;
	json_t *total = json_object_get(l->resp, "TotalCount");
	char why[160];
	size_t i;
	int ret = 0;

	(void)body;
	if (!json_is_array(set) || !json_is_integer(total) || json_integer_value(total) < 0) {
		snprintf(why, sizeof(why), "no %s", json_is_array(set) ? "TotalCount" : l->set);
		ret = bad_answer(p, l->svc, l->action, why, err);
	} else if (bad_items(l, set, why, sizeof(why))) {
		ret = bad_answer(p, l->svc, l->action, why, err);
	} else {
		json_array_foreach(set, i, o) l->item(p, l->ctx, o);
		pg->items = json_array_size(set);
		pg->total = json_integer_value(total);
	}
	json_decref(l->resp);
	l->resp = NULL;
	return ret;
}

/* Every page of l: Offset grows by each page's items until TotalCount or an empty page. */
static int tc_list(struct gc_provider *p, struct tc_listing *l, struct gc_error *err)
{
	struct gc_pager pager = { l->action, NULL, listing_send, listing_parse };
	int ret = gc_driver_pages(p, &pager, l, err);

	json_decref(l->resp);
	l->resp = NULL;
	return ret;
}

/* ---- states and instances ------------------------------------------------------------- */

enum gc_instance_state tc_state(const char *w)
{
	static const struct {
		const char *word;
		enum gc_instance_state state;
	} map[] = {
		{ "PENDING", GC_STATE_PENDING },
		{ "STARTING", GC_STATE_PENDING },
		{ "RUNNING", GC_STATE_RUNNING },
		{ "REBOOTING", GC_STATE_RUNNING },
		{ "ENTER_SERVICE_LIVE_MIGRATE", GC_STATE_RUNNING },
		{ "SERVICE_LIVE_MIGRATE", GC_STATE_RUNNING },
		{ "EXIT_SERVICE_LIVE_MIGRATE", GC_STATE_RUNNING },
		{ "STOPPING", GC_STATE_STOPPING },
		{ "STOPPED", GC_STATE_STOPPED },
		/*
		 * The recycle bin ("stopped, to be destroyed") and a failed launch: both are
		 * still listed, cost nothing to run, and go only when terminated (again).
		 * Stopped, not terminating: destroy sends TerminateInstances to stopped
		 * instances but waits on terminating ones without asking again, and only a
		 * second call empties the bin.
		 */
		{ "SHUTDOWN", GC_STATE_STOPPED },
		{ "LAUNCH_FAILED", GC_STATE_STOPPED },
		{ "TERMINATING", GC_STATE_TERMINATING },
		{ "TERMINATED", GC_STATE_TERMINATED },
	};

	for (size_t i = 0; w && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(w, map[i].word) == 0)
			return map[i].state;
	return GC_STATE_UNKNOWN; /* the rescue-mode states */
}

static const char *first_string(json_t *arr)
{
	const char *v = json_is_array(arr) ? json_string_value(json_array_get(arr, 0)) : NULL;

	return v && *v ? v : NULL;
}

/* One InstanceSet item into inst (zeroed); -1 when it has no InstanceId. */
static int parse_instance(json_t *o, struct gc_instance *inst)
{
	const char *id = gc_jstr(o, "InstanceId"), *v;
	struct gc_tag *tags;
	size_t n;
	int64_t t;

	if (!id || !*id)
		return -1;
	inst->id = gc_xstrdup(id);
	v = gc_jstr(o, "InstanceState");
	inst->state = tc_state(v);
	inst->state_name = gc_xstrdup(v ? v : "");
	if ((v = gc_jstr(o, "InstanceType")))
		inst->type = gc_xstrdup(v);
	if ((v = gc_jstr(json_object_get(o, "Placement"), "Zone")))
		inst->zone = gc_xstrdup(v);
	if ((v = gc_jstr(o, "ImageId")))
		inst->image = gc_xstrdup(v);
	v = gc_jstr(o, "InstanceChargeType");
	inst->spot = v && strcmp(v, "SPOTPAID") == 0;
	if ((v = first_string(json_object_get(o, "PrivateIpAddresses"))))
		inst->private_ip = gc_xstrdup(v);
	if ((v = first_string(json_object_get(o, "PublicIpAddresses"))))
		inst->public_ip = gc_xstrdup(v);
	if ((v = gc_jstr(o, "CreatedTime")) && gc_parse_rfc3339(v, &t) == 0)
		inst->launch_time = t;
	n = parse_tags(json_object_get(o, "Tags"), &tags);
	for (size_t i = 0; i < n; i++) {
		gc_instance_set_tag(inst, tags[i].key, tags[i].value);
		free(tags[i].key);
		free(tags[i].value);
	}
	free(tags);
	return 0;
}

/* ---- discover -------------------------------------------------------------------------- */

struct instances_ctx {
	bool (*keep)(const struct gc_instance *, const void *);
	const void *ctx;
	struct gc_instance_list found;
};

static void instance_item(struct gc_provider *p, void *ctx, json_t *o)
{
	struct instances_ctx *c = ctx;
	struct gc_instance inst;

	(void)p;
	memset(&inst, 0, sizeof(inst));
	if (parse_instance(o, &inst) == 0 && c->keep(&inst, c->ctx))
		*gc_instance_list_push(&c->found) = inst;
	else
		gc_instance_release(&inst);
}

/*
 * DescribeInstances over every page of params (InstanceIds or Filters), each instance
 * for which keep() is true appended to out. Pages until Offset reaches TotalCount; a
 * page that brings nothing new ends it too, so a count that shrinks under us cannot
 * loop.
 */
static int describe_instances(struct gc_provider *p, json_t *base,
			      bool (*keep)(const struct gc_instance *, const void *),
			      const void *ctx, struct gc_instance_list *out, struct gc_error *err)
{
	struct instances_ctx c = { keep, ctx, { 0 } };
	struct tc_listing l = { TC_CVM,
				"DescribeInstances",
				"InstanceSet",
				{ "InstanceId", "InstanceState", NULL },
				base,
				instance_item,
				&c,
				NULL };
	char *twice = NULL;
	int ret;

	gc_instance_list_init(&c.found);
	ret = tc_list(p, &l, err);
	/* the same instance on two pages (a listing that shifted or started over) */
	if (ret == 0 && (twice = gc_instance_list_twice(&c.found)))
		ret = bad_answer(p, TC_CVM, "DescribeInstances", twice, err);
	free(twice);
	if (ret == 0)
		gc_instance_list_take(out, &c.found);
	gc_instance_list_release(&c.found);
	return ret;
}

static bool keep_discovered(const struct gc_instance *in, const void *ctx)
{
	const struct gc_discover_query *q = ctx;

	return gc_tags_match(in->tags, in->n_tags, q->tags, q->n_tags) &&
		(q->include_terminated || in->state != GC_STATE_TERMINATED);
}

int tc_discover(struct gc_provider *p, const struct gc_discover_query *q,
		struct gc_instance_list *out, struct gc_error *err)
{
	/* no state filter: CVM drops terminated instances from its listings by itself */
	json_t *base = tag_filters(q->tags, q->n_tags);
	int ret;

	ret = describe_instances(p, base, keep_discovered, q, out, err);
	json_decref(base);
	if (ret != 0)
		return gc_error_prefix(err, "cannot list instances in '%s'", p->region);
	return 0;
}

/* ---- zones, the default VPC and its subnets --------------------------------------------- */

/* The names (key) of the items of the answer's set whose state (key + "State") is
 * AVAILABLE or not given; NULL after bad_answer when the answer has no such list. */
static char **available(struct gc_provider *p, json_t *resp, const char *action,
			const char *set_key, const char *key, size_t *n, struct gc_error *err)
{
	json_t *set = json_object_get(resp, set_key), *o;
	char **names, state_key[32], missing[64];
	size_t i;

	*n = 0;
	if (!json_is_array(set)) {
		snprintf(missing, sizeof(missing), "no %s", set_key);
		bad_answer(p, TC_CVM, action, missing, err);
		return NULL;
	}
	snprintf(state_key, sizeof(state_key), "%sState", key);
	names = gc_xcalloc(json_array_size(set) + 1, sizeof(*names));
	json_array_foreach(set, i, o)
	{
		const char *name = gc_jstr(o, key), *state = gc_jstr(o, state_key);

		if (!name || !*name) {
			snprintf(missing, sizeof(missing), "item %zu of %s has no %s", i, set_key,
				 key);
			bad_answer(p, TC_CVM, action, missing, err);
			gc_strv_free(names, *n);
			*n = 0;
			return NULL;
		}
		if (!state || strcmp(state, "AVAILABLE") == 0)
			names[(*n)++] = gc_xstrdup(name);
	}
	return names;
}

static int load_zones(struct gc_provider *p, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	json_t *resp = NULL;

	if (d->zones)
		return 0;
	if (tc_call(p, TC_CVM, "DescribeZones", NULL, false, &resp, err) != 0)
		return -1;
	d->zones = available(p, resp, "DescribeZones", "ZoneSet", "Zone", &d->n_zones, err);
	json_decref(resp);
	return d->zones ? 0 : -1;
}

int tc_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	char **zones;

	if (load_zones(p, err) != 0)
		return gc_error_prefix(err, "cannot list the zones of %s", p->region);
	zones = gc_xcalloc(d->n_zones + 1, sizeof(*zones));
	for (size_t i = 0; i < d->n_zones; i++)
		zones[i] = gc_xstrdup(d->zones[i]);
	*out = zones;
	*n_out = d->n_zones;
	return 0;
}

/* The zones offering type: DescribeZoneInstanceConfigInfos filtered by instance-type
 * answers one row per (zone, type, charge type) CVM sells, sold out (SOLD_OUT) or not. */
int tc_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
		  struct gc_error *err)
{
	static const char action[] = "DescribeZoneInstanceConfigInfos";
	json_t *params, *resp = NULL, *set, *o;
	char **v = NULL;
	size_t n = 0, i;
	int ret = -1;

	params = json_pack("{s:[o, o]}", "Filters", filter("instance-type", type),
			   filter("instance-charge-type", "POSTPAID_BY_HOUR"));
	ret = tc_call(p, TC_CVM, action, params, false, &resp, err);
	json_decref(params);
	if (ret != 0)
		goto out;
	ret = -1;
	if (!json_is_array(set = json_object_get(resp, "InstanceTypeQuotaSet"))) {
		bad_answer(p, TC_CVM, action, "no InstanceTypeQuotaSet", err);
		goto out;
	}
	json_array_foreach(set, i, o)
	{
		const char *zone = gc_jstr(o, "Zone"), *t = gc_jstr(o, "InstanceType");
		bool seen = false;

		if (!zone || !*zone) {
			bad_answer(p, TC_CVM, action, "a row without Zone", err);
			goto out;
		}
		for (size_t k = 0; k < n && !seen; k++)
			seen = strcmp(v[k], zone) == 0;
		if (seen || !t || strcmp(t, type) != 0)
			continue;
		v = gc_xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = gc_xstrdup(zone);
	}
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	ret = 0;
out:
	gc_strv_free(v, n);
	json_decref(resp);
	if (ret != 0)
		gc_error_prefix(err, "cannot list the zones offering '%s' in %s", type, p->region);
	return ret;
}

int tc_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	json_t *resp = NULL;

	if (tc_call(p, TC_CVM, "DescribeRegions", NULL, false, &resp, err) != 0)
		return gc_error_prefix(err, "cannot list the regions of Tencent Cloud");
	*out = available(p, resp, "DescribeRegions", "RegionSet", "Region", n_out, err);
	json_decref(resp);
	return *out ? 0 : -1;
}

/* The zone a launch goes to: the request's, else the region's first. */
static int launch_zone(struct gc_provider *p, const char *zone, const char **out,
		       struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);

	if (zone) {
		*out = zone;
		return 0;
	}
	if (load_zones(p, err) != 0)
		return gc_error_prefix(err, "cannot pick a zone in %s", p->region);
	if (!d->n_zones)
		return gc_error_set(err, GC_ECAPACITY, "%s has no zone that is available",
				    p->region);
	*out = d->zones[0];
	return 0;
}

/* A VPC API listing (Offset and Limit are strings there) with filters, first page; its
 * set must be there (an answer without is a bad one, not an empty listing). */
static int vpc_list(struct gc_provider *p, const char *action, const char *set, json_t *filters,
		    json_t **out, struct gc_error *err)
{
	json_t *params =
		json_pack("{s:o, s:s, s:s}", "Filters", filters, "Offset", "0", "Limit", "100");
	int ret = tc_call(p, TC_VPC, action, params, false, out, err);
	char why[48];

	json_decref(params);
	if (ret == 0 && !json_is_array(json_object_get(*out, set))) {
		snprintf(why, sizeof(why), "no %s", set);
		json_decref(*out);
		*out = NULL;
		ret = bad_answer(p, TC_VPC, action, why, err);
	}
	return ret;
}

/*
 * provider.network at plan time: DescribeVpcs and DescribeSubnets by filter (vpc-id,
 * subnet-id), where an id that is not there is an empty set, not an error.
 */
int tc_network(struct gc_provider *p, const char *vpc, const char *const *subnets, size_t n,
	       bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err)
{
	json_t *resp = NULL, *set, *s, *values = json_array();
	size_t i;

	if (vpc_list(p, "DescribeVpcs", "VpcSet", json_pack("[o]", filter("vpc-id", vpc)), &resp,
		     err) != 0) {
		json_decref(values);
		return -1;
	}
	*vpc_found = false;
	set = json_object_get(resp, "VpcSet");
	json_array_foreach(set, i, s)
	{
		*vpc_found |= gc_jstr(s, "VpcId") && strcmp(gc_jstr(s, "VpcId"), vpc) == 0;
	}
	json_decref(resp);
	resp = NULL;
	for (size_t k = 0; k < n; k++)
		json_array_append_new(values, json_string(subnets[k]));
	if (vpc_list(p, "DescribeSubnets", "SubnetSet",
		     json_pack("[{s:s, s:o}]", "Name", "subnet-id", "Values", values), &resp,
		     err) != 0)
		return -1;
	set = json_object_get(resp, "SubnetSet");
	json_array_foreach(set, i, s)
	{
		const char *id = gc_jstr(s, "SubnetId");

		for (size_t k = 0; id && k < n; k++) {
			if (strcmp(subnets[k], id) != 0)
				continue;
			out[k].found = true;
			snprintf(out[k].vpc, sizeof(out[k].vpc), "%s",
				 gc_jstr(s, "VpcId") ? gc_jstr(s, "VpcId") : "");
			snprintf(out[k].zone, sizeof(out[k].zone), "%s",
				 gc_jstr(s, "Zone") ? gc_jstr(s, "Zone") : "");
		}
	}
	json_decref(resp);
	return 0;
}

/*
 * The subnet a launch in zone uses: the region's default VPC (DescribeVpcs is-default) and
 * its subnet in the zone, the zone's default first (why: docs/internals/tencent.md, "The
 * network").
 */
static int launch_subnet(struct gc_provider *p, const char *zone, const char **vpc,
			 const char **subnet, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	json_t *resp = NULL, *set, *s, *pick = NULL;
	size_t i;

	for (i = 0; d->vpc_id && i < d->n_subnets; i++)
		if (strcmp(d->subnets[i].zone, zone) == 0) {
			*vpc = d->vpc_id;
			*subnet = d->subnets[i].id;
			return 0;
		}
	if (!d->vpc_id) {
		if (vpc_list(p, "DescribeVpcs", "VpcSet",
			     json_pack("[o]", filter("is-default", "true")), &resp, err) != 0)
			return gc_error_prefix(err, "cannot find the default VPC of %s", p->region);
		set = json_object_get(resp, "VpcSet");
		json_array_foreach(set, i, s)
		{
			if (json_is_true(json_object_get(s, "IsDefault")) && gc_jstr(s, "VpcId") &&
			    !d->vpc_id)
				d->vpc_id = gc_xstrdup(gc_jstr(s, "VpcId"));
		}
		json_decref(resp);
		resp = NULL;
		if (!d->vpc_id)
			return gc_error_set(
				err, GC_EINVALID,
				"%s has no default VPC to launch into: set provider.network (the "
				"VPC and a subnet for each zone; docs/spec.md), or create a default "
				"VPC in the console or with the VPC API's CreateDefaultVpc",
				p->region);
	}
	if (vpc_list(p, "DescribeSubnets", "SubnetSet",
		     json_pack("[o, o]", filter("vpc-id", d->vpc_id), filter("zone", zone)), &resp,
		     err) != 0)
		return gc_error_prefix(err, "cannot list the subnets of VPC '%s'", d->vpc_id);
	set = json_object_get(resp, "SubnetSet");
	json_array_foreach(set, i, s)
	{
		const char *z = gc_jstr(s, "Zone"), *v = gc_jstr(s, "VpcId");

		if (!gc_jstr(s, "SubnetId") || !z || strcmp(z, zone) != 0 || !v ||
		    strcmp(v, d->vpc_id) != 0)
			continue;
		if (!pick ||
		    (json_is_true(json_object_get(s, "IsDefault")) &&
		     !json_is_true(json_object_get(pick, "IsDefault"))))
			pick = s;
	}
	if (!pick) {
		json_decref(resp);
		return gc_error_set(err, GC_EINVALID,
				    "the default VPC '%s' has no subnet in zone '%s': add one (the "
				    "console, or the VPC API's CreateSubnet)",
				    d->vpc_id, zone);
	}
	GC_ALLOC_GROW(d->subnets, d->n_subnets + 1, d->alloc_subnets);
	d->subnets[d->n_subnets].zone = gc_xstrdup(zone);
	d->subnets[d->n_subnets].id = gc_xstrdup(gc_jstr(pick, "SubnetId"));
	*vpc = d->vpc_id;
	*subnet = d->subnets[d->n_subnets++].id;
	json_decref(resp);
	return 0;
}

/* ---- images ------------------------------------------------------------------------------- */

static const struct tc_image *image_cached(struct tc_driver *d, const char *id)
{
	for (size_t i = 0; i < d->n_images; i++)
		if (strcmp(d->images[i].id, id) == 0)
			return &d->images[i];
	return NULL;
}

struct images_ctx {
	struct tc_image *fresh;
	size_t n, alloc;
};

static void image_item(struct gc_provider *p, void *ctx, json_t *o)
{
	struct tc_driver *d = tc_driver(p);
	struct images_ctx *c = ctx;
	const char *id = gc_jstr(o, "ImageId"), *created = gc_jstr(o, "CreatedTime");
	struct tc_image im;

	if (!id || !*id)
		return;
	memset(&im, 0, sizeof(im));
	im.id = gc_xstrdup(id);
	im.name = gc_xstrdup(gc_jstr(o, "ImageName") ? gc_jstr(o, "ImageName") : "");
	im.arch = gc_xstrdup(gc_jstr(o, "Architecture") ? gc_jstr(o, "Architecture") : "");
	if (created && gc_parse_rfc3339(created, &im.created_at) != 0)
		im.created_at = 0;
	if (!image_cached(d, id)) {
		GC_ALLOC_GROW(d->images, d->n_images + 1, d->alloc_images);
		d->images[d->n_images] = im;
		d->images[d->n_images].id = gc_xstrdup(im.id);
		d->images[d->n_images].name = gc_xstrdup(im.name);
		d->images[d->n_images].arch = gc_xstrdup(im.arch);
		d->n_images++;
	}
	GC_ALLOC_GROW(c->fresh, c->n + 1, c->alloc);
	c->fresh[c->n++] = im;
}

/* DescribeImages over every page of base; each image not yet known is cached. With
 * fresh, the images of these answers (cached or not) are listed into it too. */
static int describe_images(struct gc_provider *p, json_t *base, struct tc_image **fresh,
			   size_t *n_fresh, struct gc_error *err)
{
	struct images_ctx c = { 0 };
	struct tc_listing l = { TC_CVM, "DescribeImages", "ImageSet", { "ImageId", NULL },
				base,	image_item,	  &c,	      NULL };
	int ret = tc_list(p, &l, err);

	*fresh = c.fresh;
	*n_fresh = c.n;
	return ret;
}

static void images_free(struct tc_image *ims, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(ims[i].id);
		free(ims[i].name);
		free(ims[i].arch);
	}
	free(ims);
}

struct tc_alias_def {
	const char *alias;
	const char *name; /* image-name filter (a substring match) */
	const char *also; /* a second word the name must hold, or NULL */
};

/* The aliases of docs/spec.md (image:), as Tencent names its public images. */
static const struct tc_alias_def alias_defs[] = {
	{ "ubuntu-22.04", "Ubuntu Server 22.04 LTS 64bit", NULL },
	{ "ubuntu-24.04", "Ubuntu Server 24.04 LTS 64bit", NULL },
	{ "gpu-ready", "GPU", "22.04" },
};

static int resolve_alias(struct gc_provider *p, const char *alias, char **out_id,
			 struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	const struct tc_alias_def *def = NULL;
	const char *cached;
	struct tc_image *ims = NULL;
	const struct tc_image *best = NULL;
	size_t n = 0;
	json_t *base;
	int rc;

	if ((cached = gc_params_get(&d->aliases, alias))) {
		*out_id = gc_xstrdup(cached);
		return 0;
	}
	for (size_t i = 0; i < sizeof(alias_defs) / sizeof(alias_defs[0]); i++)
		if (strcmp(alias_defs[i].alias, alias) == 0)
			def = &alias_defs[i];
	if (!def)
		return gc_error_set(err, GC_EINVALID,
				    "unknown image alias '%s' (tencent has ubuntu-22.04, "
				    "ubuntu-24.04, gpu-ready, or an img-... id)",
				    alias);
	base = json_pack("{s:[o, o, o]}", "Filters", filter("image-type", "PUBLIC_IMAGE"),
			 filter("platform", "Ubuntu"), filter("image-name", def->name));
	rc = describe_images(p, base, &ims, &n, err);
	json_decref(base);
	if (rc != 0) {
		images_free(ims, n);
		return gc_error_prefix(err, "cannot resolve image alias '%s'", alias);
	}
	/* x86_64 only; an exact name beats a longer one; then the newest, ids breaking ties */
	for (size_t i = 0; i < n; i++) {
		const struct tc_image *im = &ims[i];
		bool exact, best_exact;

		if (strcmp(im->arch, "x86_64") != 0 || !strstr(im->name, def->name) ||
		    (def->also && !strstr(im->name, def->also)))
			continue;
		if (!best) {
			best = im;
			continue;
		}
		exact = strcmp(im->name, def->name) == 0;
		best_exact = strcmp(best->name, def->name) == 0;
		if (exact != best_exact) {
			if (exact)
				best = im;
			continue;
		}
		if (im->created_at > best->created_at ||
		    (im->created_at == best->created_at && strcmp(im->id, best->id) > 0))
			best = im;
	}
	if (!best) {
		images_free(ims, n);
		return gc_error_set(err, GC_ENOTFOUND,
				    "image alias '%s': no public x86_64 Ubuntu image named like "
				    "'%s' in %s",
				    alias, def->name, p->region);
	}
	*out_id = gc_xstrdup(best->id);
	gc_params_add(&d->aliases, alias, best->id);
	images_free(ims, n);
	return 0;
}

static int image_by_id(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct tc_image *ims = NULL;
	size_t n = 0;
	json_t *base;
	int rc;

	if (image_cached(d, id))
		return 0;
	if (!gc_starts_with(id, "img-") || strlen(id) < 5)
		return gc_error_set(err, GC_EINVALID, "'%s' is not a CVM image id (img-...)", id);
	base = json_pack("{s:[s]}", "ImageIds", id);
	rc = describe_images(p, base, &ims, &n, err);
	json_decref(base);
	images_free(ims, n);
	if (rc != 0 && err && err->code != GC_ENOTFOUND &&
	    strcmp(err->cloud_code, "InvalidImageId.Malformed") != 0)
		return -1;
	if (rc != 0 || !image_cached(d, id)) {
		struct gc_error was;

		gc_error_init(&was);
		if (err)
			was = *err;
		gc_error_set(err, GC_ENOTFOUND, "image '%s' not found in %s", id, p->region);
		if (rc != 0 && err)
			gc_error_set_cloud(err, was.cloud_code, was.request_id, was.http_status);
		return -1;
	}
	return 0;
}

int tc_resolve_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		     struct gc_error *err)
{
	if (!image || !*image)
		return gc_error_set(err, GC_EINVALID, "no image given");
	if (is_alias)
		return resolve_alias(p, image, out_id, err);
	if (image_by_id(p, image, err) != 0)
		return -1;
	*out_id = gc_xstrdup(image);
	return 0;
}

/* ---- create -------------------------------------------------------------------------------- */

/* "gpucluster-CLUSTER-GROUP", at most 60 characters: a name for the console. */
static char *instance_name(const struct gc_create_request *req)
{
	const char *cluster = NULL;
	char *name;

	for (size_t i = 0; i < req->n_tags; i++)
		if (strcmp(req->tags[i].key, GC_TAG_CLUSTER) == 0)
			cluster = req->tags[i].value;
	name = gc_xasprintf("gpucluster-%s-%s", cluster ? cluster : "node",
			    req->group ? req->group : "nodes");
	if (strlen(name) > TC_NAME_MAX)
		name[TC_NAME_MAX] = '\0';
	return name;
}

/*
 * A launch refused for a quota: which one, and where to ask. CVM counts pay-as-you-go and
 * spot instances apart, per zone (DescribeAccountQuota: PostPaidQuotaSet,
 * SpotPaidQuotaSet).
 */
static void name_quota(const char *where, struct gc_error *err)
{
	if (!err || (err->code != GC_EQUOTA && err->code != GC_ESPOTQUOTA) ||
	    (strcmp(err->cloud_code, "LimitExceeded.InstanceQuota") != 0 &&
	     strcmp(err->cloud_code, "LimitExceeded.SpotQuota") != 0 &&
	     strcmp(err->cloud_code, "LimitExceeded.UserSpotQuota") != 0))
		return;
	gc_error_prefix(err,
			"the %s instance quota of '%s' (%s of DescribeAccountQuota) is used up "
			"(ask for more through a quota ticket in the CVM console)",
			err->code == GC_ESPOTQUOTA ? "spot" : "pay-as-you-go", where,
			err->code == GC_ESPOTQUOTA ? "SpotPaidQuotaSet" : "PostPaidQuotaSet");
}

static int create_params(struct gc_provider *p, const struct gc_create_request *req,
			 const char *zone, bool min_count, json_t **out, struct gc_error *err)
{
	const char *vpc = NULL, *subnet = NULL;
	json_t *o;
	char *name, *ud;

	/* provider.network: the spec's VPC and the zone's subnet (plan checked them) */
	if (req->vpc_id && req->subnet_id) {
		vpc = req->vpc_id;
		subnet = req->subnet_id;
	} else if (launch_subnet(p, zone, &vpc, &subnet, err) != 0) {
		return -1;
	}
	o = json_object();
	json_object_set_new(o, "InstanceChargeType",
			    json_string(req->spot ? "SPOTPAID" : "POSTPAID_BY_HOUR"));
	if (req->spot && req->spot_max_price > 0) {
		char price[32];

		if (gc_format_bid(req->spot_max_price, 5, price, err) != 0) {
			json_decref(o);
			return -1;
		}
		json_object_set_new(o, "InstanceMarketOptions",
				    json_pack("{s:s, s:{s:s, s:s}}", "MarketType", "spot",
					      "SpotOptions", "MaxPrice", price, "SpotInstanceType",
					      "one-time"));
	}
	json_object_set_new(o, "Placement", json_pack("{s:s, s:i}", "Zone", zone, "ProjectId", 0));
	json_object_set_new(o, "ImageId", json_string(req->image_id));
	json_object_set_new(o, "InstanceType", json_string(req->type));
	/* the premium cloud disk: a system disk every GPU family takes */
	/* encrypted at rest with the default key, as on EC2 and ECS */
	json_object_set_new(o, "SystemDisk",
			    json_pack("{s:s, s:i, s:b}", "DiskType", "CLOUD_PREMIUM", "DiskSize",
				      (int)(req->disk_gb ? req->disk_gb : 50), "Encrypt", 1));
	json_object_set_new(o, "VirtualPrivateCloud",
			    json_pack("{s:s, s:s}", "VpcId", vpc, "SubnetId", subnet));
	json_object_set_new(o, "InternetAccessible",
			    json_pack("{s:s, s:i, s:b}", "InternetChargeType",
				      "TRAFFIC_POSTPAID_BY_HOUR", "InternetMaxBandwidthOut",
				      TC_INTERNET_BANDWIDTH, "PublicIpAssigned", 1));
	json_object_set_new(o, "InstanceCount", json_integer(req->count));
	if (min_count)
		json_object_set_new(o, "MinCount", json_integer(req->count));
	name = instance_name(req);
	json_object_set_new(o, "InstanceName", json_string(name));
	free(name);
	if (req->key_id)
		json_object_set_new(o, "LoginSettings",
				    json_pack("{s:[s]}", "KeyIds", req->key_id));
	if (req->security_group_id)
		json_object_set_new(o, "SecurityGroupIds",
				    json_pack("[s]", req->security_group_id));
	if (req->client_token)
		json_object_set_new(o, "ClientToken", json_string(req->client_token));
	/* node_groups[].role: the CAM role (docs/internals/mounts.md) */
	if (req->instance_role)
		json_object_set_new(o, "CamRoleName", json_string(req->instance_role));
	/* placement: cluster: an HPC cluster takes HCC types only (docs/internals/fabric.md) */
	if (req->placement_id && strncmp(req->type, "HCC", 3) == 0)
		json_object_set_new(o, "HpcClusterId", json_string(req->placement_id));
	add_tag_spec(o, "instance", req->tags, req->n_tags);
	if (req->expires_at > 0) {
		char when[21];

		gc_format_rfc3339(req->expires_at, when); /* ISO 8601, UTC, as documented */
		json_object_set_new(o, "ActionTimer",
				    json_pack("{s:s, s:s}", "TimerAction", "TerminateInstances",
					      "ActionTime", when));
	}
	if ((ud = gc_cloud_config(req))) {
		struct gc_buf b64 = GC_BUF_INIT(32 << 10);

		if (gc_base64_encode(&b64, ud, strlen(ud)) != 0 || b64.len > 16384) {
			gc_keypair_wipe_buf(&b64);
			gc_cloud_config_free(ud);
			json_decref(o);
			return gc_error_set(err, GC_ETOOBIG,
					    "the user-data is over CVM's 16 KB of base64");
		}
		json_object_set_new(o, "UserData", json_string(b64.data));
		gc_keypair_wipe_buf(&b64);
		gc_cloud_config_free(ud);
	}
	*out = o;
	return 0;
}

static int run_instances(struct gc_provider *p, const struct gc_create_request *req,
			 const char *zone, json_t **resp, struct gc_error *err)
{
	bool min_count = true;

	for (;;) {
		json_t *params = NULL;
		int rc;

		if (create_params(p, req, zone, min_count, &params, err) != 0)
			return -1;
		/* with a client token a repeat is answered with the first launch; without one
		 * a repeat after a lost answer could launch twice */
		rc = tc_call(p, TC_CVM, "RunInstances", params, req->client_token == NULL, resp,
			     err);
		json_decref(params);
		if (rc == 0)
			return 0;
		/*
		 * MinCount is honoured only "for accounts, regions and billing modes that
		 * support partial delivery"; the others refuse it, and for them a launch is
		 * all or nothing anyway, so it is sent again without.
		 */
		if (min_count && err &&
		    gc_starts_with(err->cloud_code, "UnsupportedOperation.MinCountUnsupported")) {
			min_count = false;
			gc_error_init(err);
			continue;
		}
		return -1;
	}
}

int tc_create(struct gc_provider *p, const struct gc_create_request *req,
	      struct gc_instance_list *out, struct gc_error *err)
{
	struct gc_instance_list got;
	json_t *resp = NULL, *ids, *v;
	const char *zone = req->zone;
	int64_t now = (int64_t)time(NULL);
	size_t i;
	int ret = -1;

	gc_instance_list_init(&got);
	if (!req->type || !req->image_id || req->count == 0 || req->count > TC_CREATE_BATCH)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: a type, an image and 1 to %u instances are "
				    "needed",
				    TC_CREATE_BATCH);
	if (req->n_tags > TC_MAX_TAGS)
		return gc_error_set(err, GC_EINVALID, "cannot launch: %zu tags, CVM takes %d",
				    req->n_tags, TC_MAX_TAGS);
	if (req->disk_gb > TC_SYSTEM_DISK_MAX)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: a %u GB system disk, CVM's hold at most %d GB",
				    req->disk_gb, TC_SYSTEM_DISK_MAX);
	if (req->expires_at > 0 && req->expires_at < now + TC_TIMER_LEAD_S)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: the expiry time is less than 5 minutes away, "
				    "and CVM's termination timer needs at least that");
	if (image_by_id(p, req->image_id, err) != 0 || launch_zone(p, zone, &zone, err) != 0)
		goto fail;
	if (run_instances(p, req, zone, &resp, err) != 0) {
		/* CVM documents no code for a reused token with other parameters; the emulator
		 * (and the API, as far as it says anything) answers InvalidParameter naming it */
		if (err && gc_starts_with(err->cloud_code, "InvalidParameter") &&
		    strstr(err->message, "ClientToken"))
			err->code = GC_EIDEMPOTENCY;
		goto fail;
	}
	ids = json_object_get(resp, "InstanceIdSet");
	if (!json_is_array(ids) || json_array_size(ids) == 0) {
		bad_answer(p, TC_CVM, "RunInstances", "no InstanceIdSet", err);
		goto fail;
	}
	if (json_array_size(ids) != req->count)
		gc_log_warn(p->log, "tencent: RunInstances answered %zu ids for %u instances",
			    json_array_size(ids), req->count);
	json_array_foreach(ids, i, v)
	{
		if (!json_string_value(v) || !*json_string_value(v)) {
			bad_answer(p, TC_CVM, "RunInstances", "an InstanceIdSet item is no id",
				   err);
			goto fail;
		}
	}
	json_array_foreach(ids, i, v)
	{
		struct gc_instance *in = gc_instance_list_push(&got);

		in->id = gc_xstrdup(json_string_value(v));
		in->state = GC_STATE_PENDING;
		in->state_name = gc_xstrdup("PENDING");
		in->type = gc_xstrdup(req->type);
		in->zone = gc_xstrdup(zone);
		in->image = gc_xstrdup(req->image_id);
		in->spot = req->spot;
		in->launch_time = now;
		in->client_token = req->client_token ? gc_xstrdup(req->client_token) : NULL;
		for (size_t k = 0; k < req->n_tags; k++)
			gc_instance_set_tag(in, req->tags[k].key,
					    req->tags[k].value ? req->tags[k].value : "");
	}
	gc_log_debug(p->log, "tencent: launched %zu '%s' in '%s'%s", got.n, req->type, zone,
		     req->spot ? " (spot)" : "");
	gc_instance_list_take(out, &got);
	ret = 0;
	goto out;
fail:
	name_quota(zone ? zone : p->region, err);
	gc_error_prefix(err, "cannot launch %u '%s' instance%s in '%s'", req->count, req->type,
			req->count == 1 ? "" : "s", zone ? zone : p->region);
out:
	json_decref(resp);
	gc_instance_list_release(&got);
	return ret;
}

/* ---- terminate ----------------------------------------------------------------------------- */

static int terminate_call(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err)
{
	json_t *params = json_object(), *arr = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_string(ids[i]));
	json_object_set_new(params, "InstanceIds", arr);
	return plain_call(p, TC_CVM, "TerminateInstances", params, err);
}

/* Errors that mean "this one needs nothing more from us": gone, or already going. */
static bool already_done(const char *code)
{
	return strcmp(code, "InvalidInstanceId.NotFound") == 0 ||
		strcmp(code, "UnsupportedOperation.InstanceStateTerminating") == 0 ||
		strcmp(code, "UnsupportedOperation.InstanceStateTerminated") == 0;
}

/*
 * TerminateInstances for left[0..*n): one id that is gone (or already terminating) fails
 * the whole call and is named in the message; such ids are dropped and the call repeated
 * for the rest (each round drops one at least; a message naming none of ours falls back
 * to one id per call). On return left[0..*n) holds the ids the cloud accepted.
 */
static int terminate_some(struct gc_provider *p, const char **left, size_t *n, struct gc_error *err)
{
	while (*n) {
		struct gc_error e;
		size_t kept = 0;

		gc_error_init(&e);
		if (terminate_call(p, left, *n, &e) == 0)
			return 0;
		if (!already_done(e.cloud_code)) {
			if (err)
				*err = e;
			return -1;
		}
		for (size_t i = 0; i < *n; i++) {
			if (gc_names_id(e.message, left[i]))
				gc_log_debug(p->log, "tencent: '%s' is gone or going", left[i]);
			else
				left[kept++] = left[i];
		}
		if (kept == *n) {
			/* the message named none of ours: one at a time */
			kept = 0;
			for (size_t i = 0; i < *n; i++) {
				gc_error_init(&e);
				if (terminate_call(p, &left[i], 1, &e) == 0) {
					left[kept++] = left[i];
					continue;
				}
				if (!already_done(e.cloud_code)) {
					if (err)
						*err = e;
					return -1;
				}
			}
			*n = kept;
			return 0;
		}
		*n = kept;
	}
	return 0;
}

struct id_set {
	const char *const *ids;
	size_t n;
};

static bool keep_listed(const struct gc_instance *in, const void *ctx)
{
	const struct id_set *s = ctx;

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->ids[i], in->id) == 0)
			return true;
	return false;
}

struct recycle {
	struct gc_provider *p;
	const char **ids;
	size_t n;
	size_t n_busy; /* after the last look */
	unsigned looks;
};

/* The caller's cancel, from the second look on: the first one always empties the bin. */
static bool recycle_cancelled(void *ctx)
{
	const struct recycle *rc = ctx;

	return rc->looks > 0 && gc_provider_cancelled(rc->p);
}

/* One look: empties the bin of what is in it; 0 when nothing is still changing state. */
static int recycle_poll(void *ctx, struct gc_error *err)
{
	struct recycle *rc = ctx;
	struct gc_provider *p = rc->p;
	struct gc_instance_list now;
	json_t *base = json_object(), *arr = json_array();
	struct id_set set = { rc->ids, rc->n };
	const char **bin = gc_xcalloc(rc->n, sizeof(*bin));
	size_t n_bin = 0;
	int ret = -1;

	rc->looks++;
	rc->n_busy = 0;
	for (size_t i = 0; i < rc->n; i++)
		json_array_append_new(arr, json_string(rc->ids[i]));
	json_object_set_new(base, "InstanceIds", arr);
	gc_instance_list_init(&now);
	if (describe_instances(p, base, keep_listed, &set, &now, err) != 0)
		goto out;
	for (size_t i = 0; i < now.n; i++) {
		const char *w = now.items[i].state_name;

		if (strcmp(w, "SHUTDOWN") == 0)
			bin[n_bin++] = now.items[i].id;
		else if (now.items[i].state != GC_STATE_TERMINATING &&
			 now.items[i].state != GC_STATE_TERMINATED &&
			 strcmp(w, "LAUNCH_FAILED") != 0)
			rc->n_busy++;
	}
	if (n_bin && terminate_some(p, bin, &n_bin, err) != 0)
		goto out;
	if (n_bin)
		gc_log_debug(p->log, "tencent: %zu instance%s out of the recycle bin", n_bin,
			     n_bin == 1 ? "" : "s");
	ret = rc->n_busy ? 1 : 0;
out:
	json_decref(base);
	free(bin);
	gc_instance_list_release(&now);
	return ret;
}

/*
 * After the first TerminateInstances, the recycle bin (docs/internals/tencent.md):
 * instances in it (SHUTDOWN) get the second call; ones still changing state are polled
 * TC_SETTLE_POLLS looks TC_SETTLE_WAIT_MS apart; terminating or vanished ones are done.
 * Running out of looks or a cancel is not a failure: destroy asks again.
 */
static int empty_recycle_bin(struct gc_provider *p, const char **ids, size_t n,
			     struct gc_error *err)
{
	struct recycle rc = { p, ids, n, 0, 0 };
	struct gc_cancel cancel = { recycle_cancelled, &rc };
	struct gc_wait w = {
		.clock = p->clock,
		.cancel = &cancel,
		.interval_ms = TC_SETTLE_WAIT_MS,
		.timeout_ms = (TC_SETTLE_POLLS - 1) * (uint64_t)TC_SETTLE_WAIT_MS,
		.what = "terminated instances to settle",
	};
	struct gc_error e;

	if (n == 0)
		return 0;
	gc_error_init(&e);
	if (gc_wait_until(&w, recycle_poll, &rc, &e) == 0)
		return 0;
	if (e.code == GC_ETIMEOUT) {
		gc_log_warn(p->log,
			    "tencent: %zu instance%s did not leave their state after "
			    "TerminateInstances; destroy will ask again",
			    rc.n_busy, rc.n_busy == 1 ? "" : "s");
		return 0;
	}
	if (e.code == GC_ECANCELLED)
		return 0;
	if (err)
		*err = e;
	return -1;
}

int tc_terminate(struct gc_provider *p, const char *const *ids, size_t n, struct gc_error *err)
{
	const char **left;
	size_t n_left = n;
	int ret = -1;

	if (n == 0)
		return 0;
	if (n > TC_TERMINATE_BATCH)
		return gc_error_set(err, GC_EINVALID,
				    "cannot terminate %zu instances in one call (at most %u)", n,
				    TC_TERMINATE_BATCH);
	left = gc_xcalloc(n, sizeof(*left));
	memcpy(left, ids, n * sizeof(*left));
	if (terminate_some(p, left, &n_left, err) != 0 ||
	    empty_recycle_bin(p, left, n_left, err) != 0) {
		gc_error_prefix(err, "cannot terminate %zu instance%s", n, n == 1 ? "" : "s");
		goto out;
	}
	ret = 0;
out:
	free(left);
	return ret;
}

/* ---- expiry ------------------------------------------------------------------------------- */

/* The Tag service's batch calls take at most 50 ResourceIds (Tag API reference,
 * AttachResourcesTag). */
#define TC_TAG_BATCH 50

static json_t *ids_json(const char *const *ids, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(ids[i]));
	return a;
}

/* CVM's own timer: the instances' pending (UNDO) timers go, then one for expires_at is
 * imported (CVM API reference: DescribeInstancesActionTimer, DeleteInstancesActionTimer,
 * ImportInstancesActionTimer). */
static int move_timers(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		       struct gc_error *err)
{
	json_t *params, *resp = NULL, *old = json_array(), *v;
	char when[21];
	size_t i;

	params = json_pack("{s:o, s:[s]}", "InstanceIds", ids_json(ids, n), "StatusList", "UNDO");
	if (tc_call(p, TC_CVM, "DescribeInstancesActionTimer", params, false, &resp, err) != 0)
		goto fail;
	json_array_foreach(json_object_get(resp, "ActionTimers"), i,
			   v) if (gc_jstr(v, "ActionTimerId"))
		json_array_append_new(old, json_string(gc_jstr(v, "ActionTimerId")));
	json_decref(params);
	json_decref(resp);
	params = resp = NULL;
	if (json_array_size(old) &&
	    plain_call(p, TC_CVM, "DeleteInstancesActionTimer",
		       json_pack("{s:O}", "ActionTimerIds", old), err) != 0)
		goto fail;
	json_decref(old);
	if (!expires_at)
		return 0;
	gc_format_rfc3339(expires_at, when);
	return plain_call(p, TC_CVM, "ImportInstancesActionTimer",
			  json_pack("{s:o, s:{s:s, s:s}}", "InstanceIds", ids_json(ids, n),
				    "ActionTimer", "TimerAction", "TerminateInstances",
				    "ActionTime", when),
			  err);
fail:
	json_decref(params);
	json_decref(resp);
	json_decref(old);
	return -1;
}

/* A tag, by the Tag service: unbound (DetachResourcesTag), then bound to value
 * (AttachResourcesTag) unless it is NULL, 50 instances a call. */
int tc_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
	       const char *value, struct gc_error *err)
{
	for (size_t i = 0; i < n; i += TC_TAG_BATCH) {
		size_t k = n - i < TC_TAG_BATCH ? n - i : TC_TAG_BATCH;

		if (plain_call(p, TC_TAG, "DetachResourcesTag",
			       json_pack("{s:s, s:o, s:s, s:s, s:s}", "ServiceType", "cvm",
					 "ResourceIds", ids_json(ids + i, k), "TagKey", key,
					 "ResourceRegion", p->region, "ResourcePrefix", "instance"),
			       err) != 0)
			return -1;
		if (value &&
		    plain_call(p, TC_TAG, "AttachResourcesTag",
			       json_pack("{s:s, s:o, s:s, s:s, s:s, s:s}", "ServiceType", "cvm",
					 "ResourceIds", ids_json(ids + i, k), "TagKey", key,
					 "TagValue", value, "ResourceRegion", p->region,
					 "ResourcePrefix", "instance"),
			       err) != 0)
			return -1;
	}
	return 0;
}

int tc_set_expiry(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		  struct gc_error *err)
{
	char when[21];

	if (expires_at && expires_at < (int64_t)time(NULL) + TC_TIMER_LEAD_S)
		return gc_error_set(err, GC_EINVALID,
				    "the expiry time is less than 5 minutes away, and CVM's "
				    "termination timer needs at least that");
	if (n == 0)
		return 0;
	if (move_timers(p, ids, n, expires_at, err) != 0)
		return -1;
	if (expires_at)
		gc_format_rfc3339(expires_at, when);
	return tc_set_tag(p, ids, n, GC_TAG_EXPIRES_AT, expires_at ? when : NULL, err);
}

/* ---- key pairs ----------------------------------------------------------------------------- */

/* The listing's key pairs into out; with name, the first of that name's id and public key
 * into *id and *line too. */
struct keypairs_ctx {
	struct gc_resource_list *out;
	const char *name;
	char **line, **id;
};

static void keypair_item(struct gc_provider *p, void *ctx, json_t *o)
{
	struct keypairs_ctx *c = ctx;
	const char *id = gc_jstr(o, "KeyId"), *pub = gc_jstr(o, "PublicKey");
	char fpr[GC_SSH_FINGERPRINT_SIZE];
	struct gc_resource *r;

	(void)p;
	if (!id || !*id)
		return;
	r = gc_resource_list_push(c->out);
	r->id = gc_xstrdup(id);
	r->name = gc_xstrdup(gc_jstr(o, "KeyName") ? gc_jstr(o, "KeyName") : "");
	/* CVM reports no fingerprint: ssh-keygen's, from the public key */
	if (pub && gc_ssh_fingerprint(fpr, pub, NULL) == 0)
		r->fingerprint = gc_xstrdup(fpr);
	r->n_tags = parse_tags(json_object_get(o, "Tags"), &r->tags);
	if (c->name && !*c->id && strcmp(r->name, c->name) == 0) {
		*c->line = gc_xstrdup(pub ? pub : "");
		*c->id = gc_xstrdup(id);
	}
}

/* DescribeKeyPairs over every page of base. */
static int describe_keypairs(struct gc_provider *p, json_t *base, struct keypairs_ctx *c,
			     struct gc_error *err)
{
	struct tc_listing l = { TC_CVM,
				"DescribeKeyPairs",
				"KeyPairSet",
				{ "KeyId", "KeyName", NULL },
				base,
				keypair_item,
				c,
				NULL };

	return tc_list(p, &l, err);
}

static int lookup_keypair(struct gc_provider *p, const char *name, char **line, char **id,
			  struct gc_error *err)
{
	struct gc_resource_list got;
	struct keypairs_ctx c = { &got, name, line, id };
	json_t *base = json_pack("{s:[o]}", "Filters", filter("key-name", name));
	int ret;

	gc_resource_list_init(&got);
	ret = describe_keypairs(p, base, &c, err);
	json_decref(base);
	gc_resource_list_release(&got);
	return ret;
}

static int import_keypair(struct gc_provider *p, const struct gc_keypair_request *req,
			  char **out_id, struct gc_error *err)
{
	json_t *params, *resp = NULL;
	const char *id;
	int ret = -1;

	params = json_pack("{s:s, s:i, s:s}", "KeyName", req->name, "ProjectId", 0, "PublicKey",
			   req->public_key_line);
	add_tag_spec(params, "keypair", req->tags, req->n_tags);
	if (tc_call(p, TC_CVM, "ImportKeyPair", params, false, &resp, err) != 0)
		goto out;
	id = gc_jstr(resp, "KeyId");
	if (!id || !*id) {
		bad_answer(p, TC_CVM, "ImportKeyPair", "no KeyId", err);
		goto out;
	}
	*out_id = gc_xstrdup(id);
	ret = 0;
out:
	json_decref(params);
	json_decref(resp);
	return ret;
}

static const struct gc_driver_keypair keypair_import = {
	import_keypair,
	lookup_keypair,
	(const char *const[]){ "InvalidKeyPairName.Duplicate", "InvalidPublicKey.Duplicate", NULL },
	"InvalidPublicKey.Duplicate",
	200,
};

int tc_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		      struct gc_error *err)
{
	return gc_driver_import_keypair(p, &keypair_import, req, out_id, err);
}

int tc_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err)
{
	int ret = plain_call(p, TC_CVM, "DeleteKeyPairs", json_pack("{s:[s]}", "KeyIds", id), err);

	if (ret != 0 && err && err->code == GC_ENOTFOUND)
		return 0; /* already gone: what we wanted */
	if (ret != 0)
		return gc_error_prefix(err, "cannot delete key pair '%s'", id);
	return 0;
}

/* ---- security groups (the VPC product) ------------------------------------------------------ */

static void secgroup_item(struct gc_provider *p, void *ctx, json_t *o)
{
	const char *id = gc_jstr(o, "SecurityGroupId");
	struct gc_resource *r;

	(void)p;
	if (!id || !*id)
		return;
	r = gc_resource_list_push(ctx);
	r->id = gc_xstrdup(id);
	r->name =
		gc_xstrdup(gc_jstr(o, "SecurityGroupName") ? gc_jstr(o, "SecurityGroupName") : "");
	r->n_tags = parse_tags(json_object_get(o, "TagSet"), &r->tags);
}

static int describe_secgroups(struct gc_provider *p, json_t *base, struct gc_resource_list *out,
			      struct gc_error *err)
{
	struct tc_listing l = { TC_VPC,
				"DescribeSecurityGroups",
				"SecurityGroupSet",
				{ "SecurityGroupId", NULL },
				base,
				secgroup_item,
				out,
				NULL };

	return tc_list(p, &l, err);
}

static void hpc_item(struct gc_provider *p, void *ctx, json_t *o)
{
	struct gc_resource *r = gc_resource_list_push(ctx);

	(void)p;
	r->id = gc_xstrdup(gc_jstr(o, "HpcClusterId"));
	r->name = gc_xstrdup(gc_jstr(o, "Name") ? gc_jstr(o, "Name") : "");
	r->n_tags = parse_tags(json_object_get(o, "Tags"), &r->tags);
}

/* DescribeHpcClusters takes the tag filters of the other listings (tag:KEY, tag-key). */
static int describe_hpc_clusters(struct gc_provider *p, json_t *base, struct gc_resource_list *out,
				 struct gc_error *err)
{
	struct tc_listing l = { TC_CVM,
				"DescribeHpcClusters",
				"HpcClusterSet",
				{ "HpcClusterId", NULL },
				base,
				hpc_item,
				out,
				NULL };

	return tc_list(p, &l, err);
}

int tc_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
		      const struct gc_tag_filter *tags, size_t n_tags, struct gc_resource_list *out,
		      struct gc_error *err)
{
	struct gc_resource_list got;
	json_t *base = tag_filters(tags, n_tags);
	int ret = -1;

	gc_resource_list_init(&got);
	switch (kind) {
	case GC_RESOURCE_KEYPAIR: {
		struct keypairs_ctx c = { &got, NULL, NULL, NULL };

		ret = describe_keypairs(p, base, &c, err);
		if (ret != 0)
			gc_error_prefix(err, "cannot list key pairs in '%s'", p->region);
		break;
	}
	case GC_RESOURCE_SECGROUP:
		ret = describe_secgroups(p, base, &got, err);
		if (ret != 0)
			gc_error_prefix(err, "cannot list security groups in '%s'", p->region);
		break;
	case GC_RESOURCE_PLACEMENT:
		ret = describe_hpc_clusters(p, base, &got, err);
		if (ret != 0)
			gc_error_prefix(err, "cannot list HPC clusters in '%s'", p->region);
		break;
	default: ret = gc_error_set(err, GC_EINVALID, "unknown resource kind %d", (int)kind);
	}
	json_decref(base);
	if (ret == 0)
		gc_resource_list_take_tagged(out, &got, tags, n_tags);
	gc_resource_list_release(&got);
	return ret;
}

/* Our group of this name, found by name and every tag of the request; NULL into *out_id
 * when there is none. */
static int find_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req,
			 char **out_id, struct gc_error *err)
{
	struct gc_tag_filter *want = gc_xcalloc(req->n_tags + 1, sizeof(*want));
	struct gc_resource_list got, mine;
	json_t *base = json_pack("{s:[o]}", "Filters", filter("security-group-name", req->name));
	int ret;

	*out_id = NULL;
	for (size_t i = 0; i < req->n_tags; i++) {
		want[i].key = req->tags[i].key;
		want[i].value = req->tags[i].value;
	}
	gc_resource_list_init(&got);
	gc_resource_list_init(&mine);
	ret = describe_secgroups(p, base, &got, err);
	if (ret == 0) {
		gc_resource_list_take_tagged(&mine, &got, want, req->n_tags);
		for (size_t i = 0; i < mine.n && !*out_id; i++)
			if (strcmp(mine.items[i].name, req->name) == 0)
				*out_id = gc_xstrdup(mine.items[i].id);
	}
	json_decref(base);
	gc_resource_list_release(&got);
	gc_resource_list_release(&mine);
	free(want);
	return ret;
}

/* One Ingress policy of DescribeSecurityGroupPolicies as the diff sees it. */
static void policy_rule(json_t *pol, struct gc_rule *r)
{
	const char *proto = gc_jstr(pol, "Protocol"), *port = gc_jstr(pol, "Port");
	const char *act = gc_jstr(pol, "Action");
	bool accept = act && strcasecmp(act, "ACCEPT") == 0;
	int64_t n;

	memset(r, 0, sizeof(*r));
	r->all = accept && proto && strcasecmp(proto, "ALL") == 0;
	if (accept && proto && strcasecmp(proto, "TCP") == 0 && port &&
	    gc_parse_i64(port, 1, 65535, &n) == 0)
		r->port = (unsigned)n;
	r->cidr = gc_jstr(pol, "CidrBlock");
	if (!r->cidr || !*r->cidr)
		r->cidr = gc_jstr(pol, "Ipv6CidrBlock");
	r->group = gc_jstr(pol, "SecurityGroupId");
	r->ours = gc_rule_is_ours(gc_jstr(pol, "PolicyDescription"));
}

/*
 * The Ingress entries to add and to delete so that the group's rules match the request
 * (core/rules.h): the TCP port from each CIDR and, with allow_members, every protocol and
 * port from the group itself (the policy's SecurityGroupId in place of a CidrBlock: the
 * group's members, whatever their addresses; Protocol ALL takes Port ALL). Deletion is by
 * content (protocol, port, source, action as listed), never by PolicyIndex, which a
 * change made meanwhile would shift onto another rule.
 */
static int rules_diff(struct gc_provider *p, const struct gc_secgroup_request *req, const char *id,
		      json_t **out_add, json_t **out_drop, struct gc_error *err)
{
	json_t *params = json_pack("{s:s}", "SecurityGroupId", id), *resp = NULL, *have, *r;
	struct gc_rule *rules, *want;
	bool *add, *drop;
	size_t k, n_have, n_want;
	char port[16];

	if (tc_call(p, TC_VPC, "DescribeSecurityGroupPolicies", params, false, &resp, err) != 0) {
		json_decref(params);
		return -1;
	}
	json_decref(params);
	have = json_object_get(json_object_get(resp, "SecurityGroupPolicySet"), "Ingress");
	if (!json_is_array(have)) {
		json_decref(resp);
		return bad_answer(p, TC_VPC, "DescribeSecurityGroupPolicies",
				  "no SecurityGroupPolicySet.Ingress list", err);
	}
	n_have = json_array_size(have);
	rules = gc_xcalloc(n_have + 1, sizeof(*rules));
	json_array_foreach(have, k, r) policy_rule(r, &rules[k]);
	n_want = gc_rules_wanted(req, id, true, &want);
	add = gc_xcalloc(n_want + 1, sizeof(*add));
	drop = gc_xcalloc(n_have + 1, sizeof(*drop));
	gc_rules_diff(want, n_want, rules, n_have, add, drop);
	*out_add = json_array();
	*out_drop = json_array();
	for (size_t i = 0; i < n_want; i++) {
		if (!add[i])
			continue;
		snprintf(port, sizeof(port), "%u", want[i].port);
		if (want[i].all)
			json_array_append_new(*out_add,
					      json_pack("{s:s, s:s, s:s, s:s, s:s}", "Protocol",
							"ALL", "Port", "ALL", "SecurityGroupId", id,
							"Action", "ACCEPT", "PolicyDescription",
							GC_RULE_MEMBERS));
		else
			json_array_append_new(*out_add,
					      json_pack("{s:s, s:s, s:s, s:s, s:s}", "Protocol",
							"TCP", "Port", port,
							/* v6: its own field */
							gc_cidr_text_is_ipv6(want[i].cidr)
								? "Ipv6CidrBlock"
								: "CidrBlock",
							want[i].cidr, "Action", "ACCEPT",
							"PolicyDescription", want[i].description));
	}
	json_array_foreach(have, k, r)
	{
		static const char *const fields[] = { "Protocol",	 "Port",
						      "CidrBlock",	 "Ipv6CidrBlock",
						      "SecurityGroupId", "Action" };
		json_t *o;

		if (!drop[k])
			continue;
		o = json_object();
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			if (gc_jstr(r, fields[f]) && *gc_jstr(r, fields[f]))
				json_object_set_new(o, fields[f],
						    json_string(gc_jstr(r, fields[f])));
		json_array_append_new(*out_drop, o);
	}
	free(add);
	free(drop);
	free(want);
	free(rules);
	json_decref(resp);
	return 0;
}

/* One CreateSecurityGroupPolicies or DeleteSecurityGroupPolicies for the Ingress entries
 * (none: no call); takes entries. */
static int change_policies(struct gc_provider *p, const char *action, const char *id,
			   json_t *entries, struct gc_error *err)
{
	if (json_array_size(entries) == 0) {
		json_decref(entries);
		return 0;
	}
	return plain_call(p, TC_VPC, action,
			  json_pack("{s:s, s:{s:o}}", "SecurityGroupId", id,
				    "SecurityGroupPolicySet", "Ingress", entries),
			  err);
}

/*
 * Adds the rules the group lacks (SSH, members) and deletes ours that are no longer
 * wanted; foreign rules stay. After a retry that added them twice over (Duplicate) or a
 * rule gone meanwhile (NotFound), one more pass over the group's own list is the judge.
 */
static int ensure_rules(struct gc_provider *p, const struct gc_secgroup_request *req,
			const char *id, struct gc_error *err)
{
	for (int pass = 0;; pass++) {
		json_t *add = NULL, *drop = NULL;
		int ret;

		if (rules_diff(p, req, id, &add, &drop, err) != 0)
			return -1;
		ret = change_policies(p, "CreateSecurityGroupPolicies", id, add, err);
		if (ret == 0)
			ret = change_policies(p, "DeleteSecurityGroupPolicies", id, drop, err);
		else
			json_decref(drop);
		if (ret == 0 || pass > 0 || !err ||
		    (!strstr(err->cloud_code, "Duplicate") && !strstr(err->cloud_code, "NotFound")))
			return ret;
		gc_error_init(err);
	}
}

/*
 * CreateSecurityGroup is not idempotent (names need not be unique), so a lost answer is
 * not simply retried: after a transient failure the group is looked for by its name and
 * our tags first, and created again only when it is not there.
 */
static int create_group(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
			bool *created, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	json_t *params, *resp = NULL;
	struct gc_retry r;
	char desc[TC_SG_DESC_MAX + 1];
	const char *id;
	int ret = -1;

	snprintf(desc, sizeof(desc), "%s",
		 req->description && *req->description ? req->description : "gpucluster");
	params = json_pack("{s:s, s:s, s:s}", "GroupName", req->name, "GroupDescription", desc,
			   "ProjectId", "0");
	if (req->n_tags)
		json_object_set_new(params, "Tags", tags_json(req->tags, req->n_tags));
	gc_retry_begin(&r, &d->base.policy);
	for (;;) {
		struct gc_error e;

		gc_error_init(&e);
		if (tc_call(p, TC_VPC, "CreateSecurityGroup", params, true, &resp, &e) == 0) {
			gc_retry_succeeded(&r);
			break;
		}
		/* a lost answer (a timeout, a page not the cloud's) may hide a group made */
		if (e.code != GC_ETRANSIENT && e.code != GC_ETIMEOUT && e.code != GC_EBADRESPONSE) {
			if (err)
				*err = e;
			goto out;
		}
		if (gc_retry_pause(&r, &e, -1) != 0) {
			if (err)
				*err = e;
			goto out;
		}
		if (find_secgroup(p, req, out_id, err) != 0)
			goto out;
		if (*out_id) {
			gc_log_debug(p->log, "tencent: security group '%s' was made after all",
				     req->name);
			*created = true;
			ret = 0;
			goto out;
		}
	}
	id = gc_jstr(json_object_get(resp, "SecurityGroup"), "SecurityGroupId");
	if (!id || !*id) {
		bad_answer(p, TC_VPC, "CreateSecurityGroup", "no SecurityGroup.SecurityGroupId",
			   err);
		goto out;
	}
	*out_id = gc_xstrdup(id);
	*created = true;
	ret = 0;
out:
	json_decref(params);
	json_decref(resp);
	return ret;
}

int tc_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
		       struct gc_error *err)
{
	char *id = NULL;
	bool created = false;
	int ret = -1;

	if (!req->name || !req->n_allow_from || req->ssh_port == 0 || req->ssh_port > 65535)
		return gc_error_set(err, GC_EINVALID,
				    "cannot create a security group without a name, a port and "
				    "an address to allow");
	if (strlen(req->name) > TC_SG_NAME_MAX)
		return gc_error_set(err, GC_EINVALID,
				    "security group name '%s' is longer than %d characters",
				    req->name, TC_SG_NAME_MAX);
	if (req->id)
		id = gc_xstrdup(req->id);
	else if (create_group(p, req, &id, &created, err) != 0)
		goto fail;
	if (ensure_rules(p, req, id, err) != 0) {
		if (created)
			gc_driver_discard_secgroup(p, id, tc_delete_secgroup);
		goto fail;
	}
	*out_id = id;
	id = NULL;
	ret = 0;
	goto out;
fail:
	gc_driver_secgroup_failed(req, err);
out:
	free(id);
	return ret;
}

/*
 * One DeleteSecurityGroup. ResourceInUse while instances that used the group are still
 * terminating is a wait, not a failure: gc_driver_delete_secgroup waits it out.
 */
static int delete_secgroup_once(struct gc_provider *p, const char *id, struct gc_error *err)
{
	int ret = plain_call(p, TC_VPC, "DeleteSecurityGroup",
			     json_pack("{s:s}", "SecurityGroupId", id), err);

	if (ret != 0 && gc_starts_with(err->cloud_code, "ResourceInUse"))
		return 1;
	return ret;
}

int tc_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return gc_driver_delete_secgroup(p, id, delete_secgroup_once, err);
}

/* ---- HPC clusters (placement: cluster, docs/internals/fabric.md) --------------------------- */

/* An HPC cluster in the group's zone, tagged at creation (TagSpecification of type hpc).
 * CreateHpcCluster takes no client token: sent once (unsafe), and a lost answer leaves a
 * tagged cluster the next apply finds by its tag and name. */
int tc_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
			char **out_id, struct gc_error *err)
{
	json_t *params, *resp = NULL;
	const char *id, *zone;
	int ret = -1;

	if (req->type && strncmp(req->type, "HCC", 3) != 0)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "instance type '%s' is not an HCC type: no HPC cluster",
				    req->type);
	/* a group without zones launches where tc_create does: the same pick */
	if (launch_zone(p, req->zone, &zone, err) != 0)
		return -1;
	if (strlen(req->name) > TC_HPC_NAME_MAX)
		return gc_error_set(err, GC_EINVALID,
				    "HPC cluster name '%s' is longer than %d characters", req->name,
				    TC_HPC_NAME_MAX);
	params = json_pack("{s:s, s:s, s:s}", "Zone", zone, "Name", req->name, "Remark",
			   "gpucluster");
	add_tag_spec(params, "hpc", req->tags, req->n_tags);
	if (tc_call(p, TC_CVM, "CreateHpcCluster", params, true, &resp, err) != 0)
		goto out;
	id = gc_jstr(json_array_get(json_object_get(resp, "HpcClusterSet"), 0), "HpcClusterId");
	if (!id || !*id) {
		bad_answer(p, TC_CVM, "CreateHpcCluster", "no HpcClusterSet[0].HpcClusterId", err);
		goto out;
	}
	*out_id = gc_xstrdup(id);
	ret = 0;
out:
	json_decref(params);
	json_decref(resp);
	return ret;
}

/* CVM refuses a cluster that still holds instances (ResourceInUse.HpcCluster): teardown
 * asks once every instance is gone. A cluster already gone is not an error. */
int tc_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err)
{
	int ret = plain_call(p, TC_CVM, "DeleteHpcClusters",
			     json_pack("{s:[s]}", "HpcClusterIds", id), err);

	if (ret != 0 && err && strcmp(err->cloud_code, "ResourceNotFound.HpcCluster") == 0) {
		gc_error_init(err);
		return 0;
	}
	return ret;
}

/* ---- catalogue: types and prices ----------------------------------------------------------- */

/* GPU models by family, for answers without GpuType (DescribeInstanceTypeConfigs' older
 * shape): Tencent's published specifications. Memory per GPU in GiB. */
static const struct {
	const char *family;
	const char *model;
	unsigned gib;
} family_gpus[] = {
	{ "GN6", "P4", 8 },    { "GN6S", "P4", 8 },	{ "GN7", "T4", 16 },
	{ "GN8", "P40", 24 },  { "GN10X", "V100", 32 }, { "GN10Xp", "V100", 32 },
	{ "GT4", "A100", 40 }, { "GNV4", "A10", 24 },	{ "PNV4", "A10", 24 },
};

/* "NVIDIA A100 80G" -> "A100": the model word without the vendor. */
static void short_model(const char *s, char out[64])
{
	size_t n;

	for (;;) {
		while (*s == ' ')
			s++;
		if (gc_starts_with(s, "NVIDIA ") || gc_starts_with(s, "Nvidia "))
			s += 7;
		else if (gc_starts_with(s, "Tesla "))
			s += 6;
		else
			break;
	}
	n = strcspn(s, " ");
	if (n > 63)
		n = 63;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* A DescribeInstanceTypeConfigs row into facts; -1 when it has no CPU or Memory. */
static int row_facts(json_t *row, const char *type, struct gc_type_facts *f)
{
	const char *family, *model;
	json_int_t gpus;

	if (!json_is_integer(json_object_get(row, "CPU")) ||
	    !json_is_integer(json_object_get(row, "Memory")))
		return -1;
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", type);
	f->vcpus = (unsigned)json_integer_value(json_object_get(row, "CPU"));
	f->memory_mib = (unsigned)json_integer_value(json_object_get(row, "Memory")) * 1024;
	gpus = json_integer_value(json_object_get(row, "GPU"));
	if (!gpus && json_is_number(json_object_get(row, "GpuCount")))
		gpus = (json_int_t)json_number_value(json_object_get(row, "GpuCount"));
	f->gpus = gpus > 0 ? (unsigned)gpus : 0;
	family = gc_jstr(row, "InstanceFamily");
	model = gc_jstr(row, "GpuType");
	if (f->gpus && model && *model)
		short_model(model, f->gpu_model);
	if (f->gpus)
		f->gpu_memory_mib =
			(unsigned)json_integer_value(json_object_get(row, "GpuMemory")) * 1024;
	for (size_t i = 0; f->gpus && family && i < sizeof(family_gpus) / sizeof(family_gpus[0]);
	     i++) {
		if (strcmp(family, family_gpus[i].family) != 0)
			continue;
		if (!f->gpu_model[0])
			snprintf(f->gpu_model, sizeof(f->gpu_model), "%s", family_gpus[i].model);
		if (!f->gpu_memory_mib)
			f->gpu_memory_mib = family_gpus[i].gib * 1024;
	}
	/* HCC families come with their RDMA network; the API has no count of it (fabric.md) */
	if (family && strncmp(family, "HCC", 3) == 0)
		f->rdma_interfaces = 1;
	return 0;
}

int tc_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		     struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	json_t *params, *resp = NULL, *set, *o, *row = NULL;
	struct gc_type_facts f;
	size_t i;

	for (i = 0; i < d->n_types; i++)
		if (strcmp(d->types[i].name, type) == 0) {
			*out = d->types[i];
			return 0;
		}
	params = json_pack("{s:[o]}", "Filters", filter("instance-type", type));
	if (tc_call(p, TC_CVM, "DescribeInstanceTypeConfigs", params, false, &resp, err) != 0) {
		json_decref(params);
		return gc_error_prefix(err, "cannot look up instance type '%s'", type);
	}
	json_decref(params);
	/* "not offered" only from an answer that says so: the set there, and empty */
	set = json_object_get(resp, "InstanceTypeConfigSet");
	if (!json_is_array(set)) {
		json_decref(resp);
		return bad_answer(p, TC_CVM, "DescribeInstanceTypeConfigs",
				  "no InstanceTypeConfigSet", err);
	}
	json_array_foreach(set, i, o)
	{
		if (!row && gc_jstr(o, "InstanceType") &&
		    strcmp(gc_jstr(o, "InstanceType"), type) == 0)
			row = o;
	}
	if (row && row_facts(row, type, &f) != 0) {
		json_decref(resp);
		return bad_answer(p, TC_CVM, "DescribeInstanceTypeConfigs",
				  "the type's item has no CPU or Memory", err);
	}
	json_decref(resp);
	if (!row)
		return gc_error_set(err, GC_ENOTFOUND, "instance type '%s' is not offered in %s",
				    type, p->region);
	GC_ALLOC_GROW(d->types, d->n_types + 1, d->alloc_types);
	d->types[d->n_types++] = f;
	*out = f;
	return 0;
}

/* show-gpus live: every row of DescribeInstanceTypeConfigs (one per zone and type, with
 * the GPU facts), the GPU types' folded with the zones offering them. */
int tc_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
		 struct gc_error *err)
{
	json_t *resp = NULL, *set, *o;
	struct gc_gpu_type *v = NULL;
	struct gc_type_facts f;
	size_t n = 0, i;
	int ret = -1;

	if (tc_call(p, TC_CVM, "DescribeInstanceTypeConfigs", NULL, false, &resp, err) != 0)
		goto out;
	if (!json_is_array(set = json_object_get(resp, "InstanceTypeConfigSet"))) {
		bad_answer(p, TC_CVM, "DescribeInstanceTypeConfigs", "no InstanceTypeConfigSet",
			   err);
		goto out;
	}
	json_array_foreach(set, i, o)
	{
		const char *type = gc_jstr(o, "InstanceType"), *zone = gc_jstr(o, "Zone");

		if (!type || !*type || !zone || !*zone || row_facts(o, type, &f) != 0) {
			bad_answer(p, TC_CVM, "DescribeInstanceTypeConfigs",
				   "a row without InstanceType, Zone, CPU or Memory", err);
			goto out;
		}
		if (f.gpus)
			gc_gpu_types_add(&v, &n, &f, zone);
	}
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	ret = 0;
out:
	if (ret != 0)
		gc_error_prefix(err, "cannot list the GPU instance types of %s", p->region);
	gc_gpu_types_free(v, n);
	json_decref(resp);
	return ret;
}

/*
 * InquiryPriceRunInstances for one instance of type in zone (the region's first when
 * NULL), on an Ubuntu image. charge POSTPAID_BY_HOUR or SPOTPAID: the price per hour,
 * Price.InstancePrice.UnitPriceDiscount; PREPAID for months (InstanceChargePrepaid.Period):
 * the subscription's total, DiscountPrice (docs/internals/gpus.md, "Reserved prices");
 * what names the price in an error ("spot", "1-year subscription"). The answer carries no
 * currency: it is the account's site's, learnt at open (tencent.c, site_currency).
 */
static int inquiry_price(struct gc_provider *p, const char *type, const char *zone,
			 const char *charge, int months, const char *what, double *out,
			 struct gc_error *err)
{
	const char *where = zone;
	bool prepaid = strcmp(charge, "PREPAID") == 0;
	json_t *params, *resp = NULL, *ip, *v;
	char *image = NULL;

	if (launch_zone(p, zone, &where, err) != 0 ||
	    resolve_alias(p, "ubuntu-22.04", &image, err) != 0)
		return gc_error_prefix(err, "cannot price '%s' in %s", type, p->region);
	params = json_pack("{s:{s:s, s:i}, s:s, s:s, s:s, s:i}", "Placement", "Zone", where,
			   "ProjectId", 0, "ImageId", image, "InstanceType", type,
			   "InstanceChargeType", charge, "InstanceCount", 1);
	free(image);
	if (prepaid)
		json_object_set_new(params, "InstanceChargePrepaid",
				    json_pack("{s:i}", "Period", months));
	if (tc_call(p, TC_CVM, "InquiryPriceRunInstances", params, false, &resp, err) != 0) {
		json_decref(params);
		if (err &&
		    (strcmp(err->cloud_code, "InvalidParameterValue.InstanceTypeNotFound") == 0 ||
		     err->code == GC_ENOTFOUND))
			err->code = GC_ENOTFOUND;
		return gc_error_prefix(err, "cannot get the %s price of '%s' in %s", what, type,
				       where);
	}
	json_decref(params);
	ip = json_object_get(json_object_get(resp, "Price"), "InstancePrice");
	v = json_object_get(ip, prepaid ? "DiscountPrice" : "UnitPriceDiscount");
	if (!json_is_number(v))
		v = json_object_get(ip, prepaid ? "OriginalPrice" : "UnitPrice");
	if (!json_is_number(v) || json_number_value(v) < 0) {
		json_decref(resp);
		return bad_answer(p, TC_CVM, "InquiryPriceRunInstances",
				  prepaid ? "no Price.InstancePrice.DiscountPrice"
					  : "no Price.InstancePrice.UnitPriceDiscount",
				  err);
	}
	*out = json_number_value(v);
	json_decref(resp);
	return 0;
}

int tc_price(struct gc_provider *p, const char *type, const char *zone, bool spot, double *out,
	     char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	const struct gc_price_entry *c;
	double amount;

	if ((c = gc_price_cache_find(&d->prices, type, zone, spot))) {
		*out = c->amount;
		snprintf(out_currency, GC_CURRENCY_SIZE, "%s", c->currency);
		return 0;
	}
	if (inquiry_price(p, type, zone, spot ? "SPOTPAID" : "POSTPAID_BY_HOUR", 0,
			  spot ? "spot" : "pay-as-you-go", &amount, err) != 0)
		return -1;
	gc_price_cache_add(&d->prices, type, zone, spot, amount, d->currency);
	*out = amount;
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", d->currency);
	return 0;
}

/* A 1- and a 3-year subscription (PREPAID for 12 and 36 months) in the region's first
 * zone, each total spread over the hours of its term: 365 days a year. */
int tc_reserved_price(struct gc_provider *p, const char *type, double out[2],
		      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	double total[2];

	for (int y = 0; y < 2; y++)
		if (inquiry_price(p, type, NULL, "PREPAID", y ? 36 : 12,
				  y ? "3-year subscription" : "1-year subscription", &total[y],
				  err) != 0)
			return -1;
	out[0] = total[0] / (365.0 * 24);
	out[1] = total[1] / (3 * 365.0 * 24);
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", tc_driver(p)->currency);
	return 0;
}
