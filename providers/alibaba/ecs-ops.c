/*
 * ecs-ops.c: the Alibaba driver's operations on ECS 2014-05-26 and VPC 2016-04-28; the
 * mapping is tabulated in docs/internals/alibaba.md. Each checks what the cloud answered
 * where a mistake would cost money or touch what is not ours: discover keeps only
 * instances carrying every filter tag, whatever the server's filtering did. A launch's
 * client token also travels as a tag of ours (ALI_TAG_CLIENT_TOKEN), as ECS does not
 * report it (docs/internals/alibaba.md, "Client tokens").
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/cloudinit.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/rules.h"
#include "core/str.h"
#include "providers/alibaba/ecs.h"

#define ALI_KEYPAIR_PAGE  50	/* DescribeKeyPairs PageSize limit */
#define ALI_SET_PAGE	  50	/* DescribeDeploymentSets PageSize limit */
#define ALI_VSWITCH_PAGE  50	/* DescribeVSwitches / DescribeVpcs PageSize limit */
#define ALI_BANDWIDTH_OUT "100" /* Mbit/s, paid by traffic: a public address, idle costs nothing */
#define ALI_RULE_BATCH	  100	/* AuthorizeSecurityGroup Permissions.N */

/* ---- small helpers ---------------------------------------------------------------------- */

static void addf(struct gc_params *p, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void addf(struct gc_params *p, const char *value, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	gc_params_add(p, name, value);
}

static void addu(struct gc_params *p, const char *name, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	gc_params_add(p, name, buf);
}

/* Tag.N.Key / Tag.N.Value filters (a key alone matches any value). */
static int add_tag_filters(struct gc_params *p, const struct gc_tag_filter *tags, size_t n,
			   struct gc_error *err)
{
	if (n > ALI_MAX_TAGS)
		return gc_error_set(err, GC_EINVALID, "%zu tag filters; Alibaba takes %d", n,
				    ALI_MAX_TAGS);
	for (size_t i = 0; i < n; i++) {
		addf(p, tags[i].key, "Tag.%zu.Key", i + 1);
		if (tags[i].value)
			addf(p, tags[i].value, "Tag.%zu.Value", i + 1);
	}
	return 0;
}

static void add_tags(struct gc_params *p, const struct gc_tag *tags, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		addf(p, tags[i].key, "Tag.%zu.Key", i + 1);
		addf(p, tags[i].value ? tags[i].value : "", "Tag.%zu.Value", i + 1);
	}
}

/* The list under a wrapper object: {"Instances":{"Instance":[...]}} -> the array. */
static json_t *jlist(json_t *o, const char *outer, const char *inner)
{
	json_t *v = json_object_get(json_object_get(o, outer), inner);

	return json_is_array(v) ? v : NULL;
}

static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* A well-formed answer we could not read: name the action and the endpoint. */
static int bad_answer(struct gc_provider *p, const char *action, struct gc_error *err)
{
	return gc_error_prefix(err, "cannot read the %s answer from '%s'", action,
			       ali_driver(p)->ecs_host);
}

/* An answer of the wrong shape (GC_EBADRESPONSE, never "nothing there"): -1, err saying
 * what was wrong and naming the action. */
static int refuse(struct gc_provider *p, const char *action, struct gc_error *err, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));
static int refuse(struct gc_provider *p, const char *action, struct gc_error *err, const char *fmt,
		  ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	gc_error_set(err, GC_EBADRESPONSE, "%s: %s", action, what);
	return bad_answer(p, action, err);
}

/* The answer's JSON object, or -1 with err naming the action. */
static int parse_answer(struct gc_provider *p, const struct gc_buf *body, const char *action,
			json_t **out, struct gc_error *err)
{
	json_error_t jerr;

	*out = json_loadb(body->data, body->len, 0, &jerr);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return refuse(p, action, err, "the answer is not a JSON object");
	}
	return 0;
}

/* The answer's object and its outer.inner list, which must be there (an empty listing
 * says so with an empty list), or -1 with err. */
static int parse_list(struct gc_provider *p, const struct gc_buf *body, const char *action,
		      const char *outer, const char *inner, json_t **out, json_t **list,
		      struct gc_error *err)
{
	if (parse_answer(p, body, action, out, err) != 0)
		return -1;
	if (!(*list = jlist(*out, outer, inner)))
		return refuse(p, action, err, "the answer has no %s.%s list", outer, inner);
	return 0;
}

/* A PageNumber listing's TotalCount, which must be there: without it, paging cannot end. */
static int need_total(struct gc_provider *p, json_t *j, const char *action, struct gc_error *err)
{
	if (!json_is_integer(json_object_get(j, "TotalCount")))
		return refuse(p, action, err, "the answer has no TotalCount");
	return 0;
}

/* The next page's token, or NULL (an empty one too). */
static char *next_token(json_t *j)
{
	const char *t = gc_jstr(j, "NextToken");

	return t && *t ? gc_xstrdup(t) : NULL;
}

/* A PageNumber page's count and the listing's TotalCount into pg. */
static void page_count(json_t *j, json_t *list, struct gc_page *pg)
{
	pg->items = json_array_size(list);
	pg->total = (int64_t)jnum(j, "TotalCount");
}

/* Tags.Tag[] ({TagKey, TagValue}) into tags. */
static void read_tags(json_t *o, struct gc_tag **tags, size_t *n)
{
	json_t *list = jlist(o, "Tags", "Tag"), *t;
	size_t i;

	json_array_foreach(list, i, t)
	{
		const char *k = gc_jstr(t, "TagKey"), *v = gc_jstr(t, "TagValue");

		if (!k)
			continue;
		*tags = gc_xreallocarray(*tags, *n + 1, sizeof(**tags));
		(*tags)[*n].key = gc_xstrdup(k);
		(*tags)[*n].value = gc_xstrdup(v ? v : "");
		(*n)++;
	}
}

/* One call whose answer says nothing beyond its success; params are released. */
static int call_only(struct gc_provider *p, const char *action, struct gc_params *params,
		     struct gc_error *err)
{
	struct gc_buf body;
	int ret = ali_ecs_call(p, action, params, 0, false, &body, err);

	gc_params_release(params);
	gc_buf_release(&body);
	return ret;
}

/* ---- the default VPC and its vSwitches ------------------------------------------------- */

static int default_vpc(struct gc_provider *p, const char **out, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *v, *list;
	size_t i;
	int ret = -1;

	if (d->vpc_id) {
		*out = d->vpc_id;
		return 0;
	}
	gc_params_add(&params, "IsDefault", "true");
	addu(&params, "PageSize", ALI_VSWITCH_PAGE);
	if (ali_vpc_call(p, "DescribeVpcs", &params, &body, err) != 0 ||
	    parse_list(p, &body, "DescribeVpcs", "Vpcs", "Vpc", &j, &list, err) != 0)
		goto out;
	json_array_foreach(list, i, v)
	{
		const char *id = gc_jstr(v, "VpcId"), *status = gc_jstr(v, "Status");

		if (!id || !*id) {
			refuse(p, "DescribeVpcs", err, "a VPC without VpcId");
			goto out;
		}
		if (json_is_true(json_object_get(v, "IsDefault")) &&
		    (!status || strcmp(status, "Available") == 0)) {
			d->vpc_id = gc_xstrdup(id);
			break;
		}
	}
	if (!d->vpc_id) {
		gc_error_set(err, GC_EINVALID,
			     "region %s has no default VPC: set provider.network (the VPC and a "
			     "vSwitch for each zone; docs/spec.md), or create a default VPC (the "
			     "VPC console, or 'aliyun vpc CreateDefaultVpc --RegionId %s')",
			     p->region, p->region);
		goto out;
	}
	*out = d->vpc_id;
	ret = 0;
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

struct vswitch_ctx {
	const char *zone, *vpc;
	char *best_id, *best_zone;
	bool best_default;
};

static int vswitches_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			  struct gc_buf *body, struct gc_error *err)
{
	const struct vswitch_ctx *c = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "VpcId", c->vpc);
	if (c->zone)
		gc_params_add(&params, "ZoneId", c->zone);
	addu(&params, "PageNumber", pg->number + 1);
	addu(&params, "PageSize", ALI_VSWITCH_PAGE);
	ret = ali_vpc_call(p, "DescribeVSwitches", &params, body, err);
	gc_params_release(&params);
	return ret;
}

static int vswitches_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			   struct gc_page *pg, struct gc_error *err)
{
	struct vswitch_ctx *c = ctx;
	json_t *j = NULL, *v, *list;
	size_t i;

	if (parse_list(p, body, "DescribeVSwitches", "VSwitches", "VSwitch", &j, &list, err) != 0 ||
	    need_total(p, j, "DescribeVSwitches", err) != 0) {
		json_decref(j);
		return -1;
	}
	json_array_foreach(list, i, v)
	{
		const char *id = gc_jstr(v, "VSwitchId"), *z = gc_jstr(v, "ZoneId");
		const char *status = gc_jstr(v, "Status");
		bool dflt = json_is_true(json_object_get(v, "IsDefault"));

		if (!id || !*id || !z || !*z) {
			json_decref(j);
			return refuse(p, "DescribeVSwitches", err,
				      "a vSwitch without VSwitchId or ZoneId");
		}
		if ((c->zone && strcmp(z, c->zone)) || (status && strcmp(status, "Available")))
			continue;
		if (!c->best_id || (dflt && !c->best_default)) {
			free(c->best_id);
			free(c->best_zone);
			c->best_id = gc_xstrdup(id);
			c->best_zone = gc_xstrdup(z);
			c->best_default = dflt;
		}
	}
	page_count(j, list, pg);
	pg->done = c->best_default;
	json_decref(j);
	return 0;
}

/*
 * The vSwitch to launch into in zone (NULL: any zone; *out_zone then says which): the
 * default VPC's default vSwitch there, else its first available one. Cached per zone.
 */
static int vswitch_for(struct gc_provider *p, const char *zone, const char **out_id,
		       const char **out_zone, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct ali_vswitch *hit;
	const char *vpc;
	static const struct gc_pager pager = { "DescribeVSwitches", NULL, vswitches_send,
					       vswitches_parse };
	struct vswitch_ctx c = { .zone = zone };
	int ret = -1;

	for (size_t i = 0; i < d->n_vswitches; i++) {
		hit = &d->vswitches[i];
		if ((!zone && !hit->want) || (zone && hit->want && strcmp(zone, hit->want) == 0)) {
			*out_id = hit->id;
			*out_zone = hit->zone;
			return 0;
		}
	}
	if (default_vpc(p, &vpc, err) != 0)
		return -1;
	c.vpc = vpc;
	if (gc_driver_pages(p, &pager, &c, err) != 0)
		goto out;
	if (!c.best_id) {
		gc_error_set(err, GC_EINVALID,
			     "the default VPC '%s' of %s has no available vSwitch in %s; create "
			     "one there or leave the zone out of the spec",
			     vpc, p->region, zone ? zone : "any zone");
		goto out;
	}
	GC_ALLOC_GROW(d->vswitches, d->n_vswitches + 1, d->alloc_vswitches);
	hit = &d->vswitches[d->n_vswitches++];
	hit->want = zone ? gc_xstrdup(zone) : NULL;
	hit->zone = c.best_zone;
	hit->id = c.best_id;
	c.best_id = c.best_zone = NULL;
	*out_id = hit->id;
	*out_zone = hit->zone;
	ret = 0;
out:
	free(c.best_id);
	free(c.best_zone);
	return ret;
}

/* ---- discover ------------------------------------------------------------------------------- */

static enum gc_instance_state state_of(const char *status)
{
	if (!status)
		return GC_STATE_UNKNOWN;
	if (strcmp(status, "Pending") == 0 || strcmp(status, "Starting") == 0)
		return GC_STATE_PENDING;
	if (strcmp(status, "Running") == 0)
		return GC_STATE_RUNNING;
	/* also what a released instance shows on its way out: destroy asks again and waits */
	if (strcmp(status, "Stopping") == 0)
		return GC_STATE_STOPPING;
	if (strcmp(status, "Stopped") == 0)
		return GC_STATE_STOPPED;
	return GC_STATE_UNKNOWN;
}

/* The first address of {"IpAddress":[...]} under key, or NULL. */
static const char *first_ip(json_t *o, const char *key)
{
	json_t *v = json_object_get(json_object_get(o, key), "IpAddress");

	if (json_is_array(v) && json_array_size(v) && json_is_string(json_array_get(v, 0)) &&
	    json_string_length(json_array_get(v, 0)))
		return json_string_value(json_array_get(v, 0));
	if (json_is_string(v) && json_string_length(v)) /* EipAddress.IpAddress is a string */
		return json_string_value(v);
	return NULL;
}

/* The first lock's reason ({"OperationLocks": {"LockReason": [{"LockReason": "Recycling"}]}});
 * Recycling: a preemptible instance about to be released (docs/internals/spot.md). */
static void lock_reason(json_t *o, struct gc_instance *inst)
{
	json_t *locks = json_object_get(json_object_get(o, "OperationLocks"), "LockReason");
	size_t i;
	json_t *l;

	json_array_foreach(locks, i, l)
	{
		const char *v = gc_jstr(l, "LockReason");

		if (v && *v) {
			inst->reason = gc_xstrdup(v);
			/* "Recycling" in DescribeInstances, "recycling" in the OperationLock type */
			inst->preempted = strcasecmp(v, "Recycling") == 0;
			return;
		}
	}
}

static int parse_instance(json_t *o, struct gc_instance *inst)
{
	const char *id = gc_jstr(o, "InstanceId"), *v;
	struct gc_tag *tags = NULL;
	size_t n_tags = 0;

	if (!id || !*id || !(v = gc_jstr(o, "Status")) || !*v)
		return -1;
	memset(inst, 0, sizeof(*inst));
	inst->id = gc_xstrdup(id);
	if ((v = gc_jstr(o, "InstanceType")))
		inst->type = gc_xstrdup(v);
	if ((v = gc_jstr(o, "ZoneId")))
		inst->zone = gc_xstrdup(v);
	if ((v = gc_jstr(o, "ImageId")))
		inst->image = gc_xstrdup(v);
	v = gc_jstr(o, "Status");
	inst->state = state_of(v);
	inst->state_name = gc_xstrdup(v ? v : "unknown");
	v = gc_jstr(o, "SpotStrategy");
	inst->spot = v && *v && strcmp(v, "NoSpot") != 0;
	if ((v = first_ip(json_object_get(o, "VpcAttributes"), "PrivateIpAddress")) ||
	    (v = first_ip(o, "InnerIpAddress")))
		inst->private_ip = gc_xstrdup(v);
	if ((v = first_ip(o, "PublicIpAddress")) ||
	    (v = gc_jstr(json_object_get(o, "EipAddress"), "IpAddress"), v && *v))
		inst->public_ip = gc_xstrdup(v);
	if ((v = gc_jstr(o, "CreationTime")) && ali_parse_time(v, &inst->launch_time) != 0)
		inst->launch_time = 0;
	lock_reason(o, inst);
	read_tags(o, &tags, &n_tags);
	for (size_t i = 0; i < n_tags; i++) {
		gc_instance_set_tag(inst, tags[i].key, tags[i].value);
		if (strcmp(tags[i].key, ALI_TAG_CLIENT_TOKEN) == 0 && *tags[i].value) {
			free(inst->client_token);
			inst->client_token = gc_xstrdup(tags[i].value);
		}
		free(tags[i].key);
		free(tags[i].value);
	}
	free(tags);
	return 0;
}

static int discover_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			 struct gc_buf *body, struct gc_error *err)
{
	const struct gc_discover_query *q = ((struct gc_driver_discover *)ctx)->q;
	struct gc_params params = GC_PARAMS_INIT;
	int ret = add_tag_filters(&params, q->tags, q->n_tags, err);

	addu(&params, "MaxResults", ALI_PAGE_SIZE);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	if (ret == 0)
		ret = ali_ecs_call(p, "DescribeInstances", &params, 0, false, body, err);
	gc_params_release(&params);
	if (ret != 0)
		gc_error_prefix(err, "cannot list instances in '%s'", p->region);
	return ret;
}

static int discover_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			  struct gc_page *pg, struct gc_error *err)
{
	json_t *j = NULL, *o, *list;
	size_t i;
	int ret = 0;

	if (parse_list(p, body, "DescribeInstances", "Instances", "Instance", &j, &list, err) !=
	    0) {
		json_decref(j);
		return gc_error_prefix(err, "cannot list instances in '%s'", p->region);
	}
	json_array_foreach(list, i, o)
	{
		struct gc_instance inst;

		if (parse_instance(o, &inst) != 0) {
			ret = refuse(p, "DescribeInstances", err,
				     "an instance without InstanceId or Status");
			break;
		}
		/* an instance listed twice: gc_driver_discover_keep says so, for every cloud */
		gc_driver_discover_keep(ctx, &inst);
	}
	if (ret == 0)
		pg->next = next_token(j);
	json_decref(j);
	return ret;
}

int ali_discover(struct gc_provider *p, const struct gc_discover_query *q,
		 struct gc_instance_list *out, struct gc_error *err)
{
	static const struct gc_pager hooks = { NULL, NULL, discover_send, discover_parse };

	return gc_driver_discover(p, &hooks, q, out, err);
}

/* ---- create ---------------------------------------------------------------------------------- */

/* The cluster's name, from the request's tags. */
static const char *tag_value(const struct gc_create_request *req, const char *key)
{
	for (size_t i = 0; i < req->n_tags; i++)
		if (strcmp(req->tags[i].key, key) == 0)
			return req->tags[i].value;
	return NULL;
}

/*
 * A name for ECS from "gpucluster-CLUSTER-GROUP": InstanceName takes letters, digits,
 * '.', '_', '-' and ':' (2-128, a letter first); a Linux HostName letters, digits, '.'
 * and '-' (2-64, neither first nor last nor doubled). Both get UniqueSuffix's three
 * digits in batches, so the host name stops at 60.
 */
static void make_names(const struct gc_create_request *req, char name[129], char host[61])
{
	const char *cluster = tag_value(req, GC_TAG_CLUSTER);
	char raw[160];
	size_t n = 0, h = 0;

	snprintf(raw, sizeof(raw), "gpucluster-%s-%s", cluster ? cluster : "node",
		 req->group ? req->group : "node");
	for (const char *s = raw; *s && n < 120; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == ':'))
			c = '-';
		name[n++] = c;
	}
	name[n] = '\0';
	for (const char *s = raw + strlen("gpucluster-"); *s && h < 60; s++) {
		char c = *s;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '-';
		if (c == '-' && (h == 0 || host[h - 1] == '-'))
			continue;
		host[h++] = c;
	}
	while (h && host[h - 1] == '-')
		h--;
	if (h < 2)
		h = (size_t)snprintf(host, 61, "gpucluster");
	host[h] = '\0';
}

/* AutoReleaseTime for expires_at: ECS takes the start of the minute, so the cloud's timer
 * fires at expires_at or just before, never after. */
static int release_time(int64_t expires_at, char out[32], struct gc_error *err)
{
	int64_t at = expires_at - expires_at % 60, now = (int64_t)time(NULL);
	time_t t = (time_t)at;
	struct tm tm;

	if (at - now < ALI_RELEASE_MIN_S)
		return gc_error_set(
			err, GC_EINVALID,
			"expires_at is %lld s away; Alibaba's AutoReleaseTime must be "
			"at least %d minutes ahead, so the lifecycle ttl must be longer "
			"(about 35m or more)",
			(long long)(expires_at - now), ALI_RELEASE_MIN_S / 60);
	if (at - now > ALI_RELEASE_MAX_S)
		return gc_error_set(err, GC_EINVALID,
				    "expires_at is more than three years ahead, which "
				    "AutoReleaseTime does not take");
	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:00Z", &tm))
		return gc_error_set(err, GC_EINVALID, "cannot format expires_at %lld",
				    (long long)expires_at);
	return 0;
}

/*
 * ERIs (docs/internals/fabric.md): secondary ENIs (NetworkInterface.2 on) in
 * HighPerformance traffic mode, in the instance's vSwitch and security group, as
 * https://www.alibabacloud.com/help/doc-detail/2856980.html describes; at most the type's
 * EriQuantity, which plan checked.
 */
static void add_eris(struct gc_params *params, const struct gc_create_request *req, const char *vsw)
{
	for (unsigned i = 0; i < req->rdma_interfaces; i++) {
		char key[64];

		snprintf(key, sizeof(key), "NetworkInterface.%u.InstanceType", i + 2);
		gc_params_add(params, key, "Secondary");
		snprintf(key, sizeof(key), "NetworkInterface.%u.VSwitchId", i + 2);
		gc_params_add(params, key, vsw);
		if (req->security_group_id) {
			snprintf(key, sizeof(key), "NetworkInterface.%u.SecurityGroupId", i + 2);
			gc_params_add(params, key, req->security_group_id);
		}
		snprintf(key, sizeof(key), "NetworkInterface.%u.NetworkInterfaceTrafficMode",
			 i + 2);
		gc_params_add(params, key, "HighPerformance");
	}
}

static int create_params(struct gc_provider *p, const struct gc_create_request *req,
			 const char **zone_out, struct gc_params *params, struct gc_error *err)
{
	const char *vsw, *zone = NULL;
	char name[129], host[61];

	/* provider.network: the zone's vSwitch (plan checked it); else the default VPC's */
	if (req->subnet_id && req->zone) {
		vsw = req->subnet_id;
		zone = req->zone;
	} else if (vswitch_for(p, req->zone, &vsw, &zone, err) != 0) {
		return -1;
	}
	*zone_out = zone;
	make_names(req, name, host);
	gc_params_add(params, "ZoneId", zone);
	gc_params_add(params, "VSwitchId", vsw);
	gc_params_add(params, "ImageId", req->image_id);
	gc_params_add(params, "InstanceType", req->type);
	addu(params, "Amount", req->count);
	addu(params, "MinAmount", req->count);
	if (req->client_token)
		gc_params_add(params, "ClientToken", req->client_token);
	gc_params_add(params, "InstanceChargeType", "PostPaid");
	if (req->security_group_id)
		gc_params_add(params, "SecurityGroupId", req->security_group_id);
	add_eris(params, req, vsw);
	/* node_groups[].role: the RAM role (docs/internals/mounts.md) */
	if (req->instance_role)
		gc_params_add(params, "RamRoleName", req->instance_role);
	if (req->placement_id) /* placement: cluster (docs/internals/fabric.md) */
		gc_params_add(params, "DeploymentSetId", req->placement_id);
	if (req->key_name)
		gc_params_add(params, "KeyPairName", req->key_name);
	gc_params_add(params, "InstanceName", name);
	gc_params_add(params, "HostName", host);
	gc_params_add(params, "UniqueSuffix", "true");
	gc_params_add(params, "InternetChargeType", "PayByTraffic");
	gc_params_add(params, "InternetMaxBandwidthOut", ALI_BANDWIDTH_OUT);
	gc_params_add(params, "SystemDisk.Category", "cloud_essd");
	gc_params_add(params, "SystemDisk.Encrypted",
		      "true"); /* as on EC2: at rest, the default key */
	if (req->disk_gb)
		addu(params, "SystemDisk.Size", req->disk_gb);
	if (req->spot) {
		gc_params_add(params, "SpotInterruptionBehavior", "Terminate");
		if (req->spot_max_price > 0) {
			char limit[32];

			/* SpotPriceLimit takes three decimals */
			if (gc_format_bid(req->spot_max_price, 3, limit, err) != 0)
				return -1;
			gc_params_add(params, "SpotStrategy", "SpotWithPriceLimit");
			gc_params_add(params, "SpotPriceLimit", limit);
		} else {
			gc_params_add(params, "SpotStrategy", "SpotAsPriceGo");
		}
	}
	if (req->expires_at > 0) {
		char when[32];

		if (release_time(req->expires_at, when, err) != 0)
			return -1;
		gc_params_add(params, "AutoReleaseTime", when);
	}
	{
		/* the login key (ECS imports no Ed25519 key pairs) for cloud-init */
		char *ud = gc_cloud_config(req);

		if (ud) {
			struct gc_buf b64 = GC_BUF_INIT(64 << 10);
			int bad = strlen(ud) > ALI_USER_DATA_MAX ||
				gc_base64_encode(&b64, ud, strlen(ud)) != 0;

			gc_cloud_config_free(ud);
			if (bad) {
				gc_keypair_wipe_buf(&b64);
				return gc_error_set(err, GC_ETOOBIG,
						    "the user-data is over ECS's %d KB",
						    ALI_USER_DATA_MAX / 1024);
			}
			gc_params_add(params, "UserData", b64.data);
			gc_keypair_wipe_buf(&b64);
		}
	}
	add_tags(params, req->tags, req->n_tags);
	if (req->client_token) {
		addf(params, ALI_TAG_CLIENT_TOKEN, "Tag.%zu.Key", req->n_tags + 1);
		addf(params, req->client_token, "Tag.%zu.Value", req->n_tags + 1);
	}
	return 0;
}

/*
 * A launch refused for a quota: which one, and where to ask. ECS answers both markets'
 * quotas with QuotaExceed.ElasticQuota (API reference, RunInstances), yet they are apart
 * (DescribeAccountAttributes: max-postpaid-instance-vcpu-count beside
 * max-spot-instance-vcpu-count), so the market is the request's.
 */
static void name_quota(struct gc_provider *p, const struct gc_create_request *req,
		       struct gc_error *err)
{
	if (!err || err->code != GC_EQUOTA ||
	    strcmp(err->cloud_code, "QuotaExceed.ElasticQuota") != 0)
		return;
	if (req->spot) {
		err->code = GC_ESPOTQUOTA;
		gc_error_prefix(err,
				"the vCPU quota of preemptible (spot) instances of region '%s' "
				"(max-spot-instance-vcpu-count) is used up (ask for more in Quota "
				"Center, ECS)",
				p->region);
	} else {
		gc_error_prefix(
			err,
			"the quota of pay-as-you-go instances of region '%s' (its vCPUs, "
			"max-postpaid-instance-vcpu-count, or type '%s') is used up (ask for "
			"more in Quota Center, ECS)",
			p->region, req->type);
	}
}

/* a security group just made may be NotFound for a while ("ECS OpenAPI eventual
 * consistency"); gc_driver_retry_unseen waits that out for ours */
static const char *const unseen_group[] = { "InvalidSecurityGroupId.NotFound", NULL };

int ali_create(struct gc_provider *p, const struct gc_create_request *req,
	       struct gc_instance_list *out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_instance_list got;
	struct gc_buf body = GC_BUF_INIT(1);
	const char *where = req->zone ? req->zone : p->region, *zone = NULL;
	json_t *j = NULL, *id, *ids;
	struct gc_driver_call rc = {
		ali_ecs_call, "RunInstances", &params, req->count, req->client_token == NULL, &body
	};
	size_t i;
	int ret = -1;

	gc_instance_list_init(&got);
	if (!req->type || !req->image_id || req->count == 0 || req->count > ALI_CREATE_BATCH)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: a type, an image and 1 to %u instances are "
				    "needed",
				    ALI_CREATE_BATCH);
	if (req->n_tags + (req->client_token ? 1 : 0) > ALI_MAX_TAGS)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: %zu tags, Alibaba takes %d (one of them is "
				    "gpucluster's client-token tag)",
				    req->n_tags, ALI_MAX_TAGS - 1);
	if (req->disk_gb > ALI_MAX_DISK_GB)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: disk_gb %u is above the %d GiB an Alibaba "
				    "system disk takes",
				    req->disk_gb, ALI_MAX_DISK_GB);
	if (create_params(p, req, &zone, &params, err) != 0)
		goto fail;
	where = zone;
	/* with a client token a repeat is answered with the first launch; without one a
	 * repeat after a lost answer could launch twice, so only throttling is retried (a
	 * NotFound launched nothing: that one is repeated either way) */
	if (gc_driver_retry_unseen(p, gc_driver_call_attempt, &rc, &req->security_group_id, 1,
				   unseen_group, "the new security group is not known to ECS yet",
				   err) != 0)
		goto fail;
	if (parse_list(p, &body, "RunInstances", "InstanceIdSets", "InstanceIdSet", &j, &ids,
		       err) != 0)
		goto fail;
	json_array_foreach(ids, i, id)
	{
		struct gc_instance *in;

		if (!json_is_string(id) || !json_string_length(id)) {
			refuse(p, "RunInstances", err, "an instance id that is not a string");
			goto fail;
		}
		in = gc_instance_list_push(&got);
		in->id = gc_xstrdup(json_string_value(id));
		in->type = gc_xstrdup(req->type);
		in->zone = gc_xstrdup(zone);
		in->image = gc_xstrdup(req->image_id);
		in->spot = req->spot;
		in->state = GC_STATE_PENDING;
		in->state_name = gc_xstrdup("Pending");
		for (size_t k = 0; k < req->n_tags; k++)
			gc_instance_set_tag(in, req->tags[k].key,
					    req->tags[k].value ? req->tags[k].value : "");
		if (req->client_token) {
			gc_instance_set_tag(in, ALI_TAG_CLIENT_TOKEN, req->client_token);
			in->client_token = gc_xstrdup(req->client_token);
		}
	}
	if (got.n == 0) {
		refuse(p, "RunInstances", err, "the answer has no instance ids");
		goto fail;
	}
	gc_log_debug(p->log, "alibaba: launched %zu '%s' in '%s'%s", got.n, req->type, zone,
		     req->spot ? " (spot)" : "");
	gc_instance_list_take(out, &got);
	ret = 0;
	goto out;
fail:
	name_quota(p, req, err);
	gc_error_prefix(err, "cannot launch %u '%s' instance%s in '%s'", req->count, req->type,
			req->count == 1 ? "" : "s", where);
out:
	json_decref(j);
	gc_instance_list_release(&got);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/* ---- terminate ----------------------------------------------------------------------------------- */

struct delete_ids {
	const char *const *ids;
	size_t n;
};

/* One DeleteInstances; an instance still initialising (IncorrectInstanceStatus, also
 * ".Initializing") cannot be released yet: 1, a wait. */
static int delete_once(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	const struct delete_ids *d = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	int rc;

	for (size_t i = 0; i < d->n; i++)
		addf(&params, d->ids[i], "InstanceId.%zu", i + 1);
	gc_params_add(&params, "Force", "true");
	rc = call_only(p, "DeleteInstances", &params, err);
	if (rc != 0 && gc_starts_with(err->cloud_code, "IncorrectInstanceStatus"))
		return 1;
	return rc;
}

/* DeleteInstances, an instance still initialising waited out (about two minutes). */
static int delete_call(struct gc_provider *p, const char *const *ids, size_t n,
		       struct gc_error *err)
{
	struct delete_ids d = { ids, n };

	return gc_driver_wait_busy(p, delete_once, &d, "an instance cannot be released yet", err);
}

int ali_terminate(struct gc_provider *p, const char *const *ids, size_t n, struct gc_error *err)
{
	/* an unknown id fails the whole call with InvalidInstanceId.NotFound naming it: gone,
	 * or too new to be known here (eventual consistency); the teardown's Describe is the
	 * judge (executor.md) */
	return gc_driver_terminate_dropping_gone(p, ids, n, ALI_TERMINATE_BATCH, delete_call,
						 "InvalidInstanceId.NotFound", err);
}

/* ---- expiry ------------------------------------------------------------------------------------ */

/* TagResources / UntagResources take at most 50 ResourceId.N (ECS API reference). */
#define ALI_TAG_BATCH 50

/* A tag of ids set by TagResources or, without a value, removed by UntagResources. */
int ali_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
		const char *value, struct gc_error *err)
{
	for (size_t i = 0; i < n; i += ALI_TAG_BATCH) {
		struct gc_params params = GC_PARAMS_INIT;
		struct gc_buf body;
		int rc;

		gc_params_add(&params, "ResourceType", "instance");
		for (size_t k = i; k < n && k < i + ALI_TAG_BATCH; k++)
			addf(&params, ids[k], "ResourceId.%zu", k - i + 1);
		if (value) {
			gc_params_add(&params, "Tag.1.Key", key);
			gc_params_add(&params, "Tag.1.Value", value);
		} else {
			gc_params_add(&params, "TagKey.1", key);
		}
		rc = ali_ecs_call(p, value ? "TagResources" : "UntagResources", &params, 0, false,
				  &body, err);
		gc_params_release(&params);
		gc_buf_release(&body);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* ECS's own timer, AutoReleaseTime, by ModifyInstanceAutoReleaseTime (one instance a call;
 * without AutoReleaseTime it is cancelled), then the tag. */
int ali_set_expiry(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		   struct gc_error *err)
{
	char when[32], tag[21];

	if (expires_at && release_time(expires_at, when, err) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct gc_params params = GC_PARAMS_INIT;
		struct gc_buf body;
		int rc;

		gc_params_add(&params, "InstanceId", ids[i]);
		if (expires_at)
			gc_params_add(&params, "AutoReleaseTime", when);
		rc = ali_ecs_call(p, "ModifyInstanceAutoReleaseTime", &params, 0, false, &body,
				  err);
		gc_params_release(&params);
		gc_buf_release(&body);
		if (rc != 0)
			return -1;
	}
	if (expires_at)
		gc_format_rfc3339(expires_at, tag);
	return ali_set_tag(p, ids, n, GC_TAG_EXPIRES_AT, expires_at ? tag : NULL, err);
}

/* ---- key pairs and security groups ------------------------------------------------------------ */

/* A deployment set takes no tags: its Description carries our own, as "key=value" words
 * (docs/internals/fabric.md). The cluster's and created-at first, so gc always has them. */
static void set_description(const struct gc_tag *tags, size_t n, char out[257])
{
	size_t len = 0;

	out[0] = '\0';
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			bool first = !strcmp(tags[i].key, GC_TAG_CLUSTER) ||
				!strcmp(tags[i].key, GC_TAG_CREATED_AT);
			const char *v = tags[i].value ? tags[i].value : "";
			int w;

			if (first != (pass == 0) || !gc_starts_with(tags[i].key, GC_TAG_PREFIX) ||
			    strpbrk(v, " =") || !*v)
				continue;
			w = snprintf(out + len, 257 - len, "%s%s=%s", len ? " " : "", tags[i].key,
				     v);
			if (w < 0 || (size_t)w >= 257 - len) {
				out[len] = '\0'; /* what does not fit is left out */
				continue;
			}
			len += (size_t)w;
		}
	if (len < 2)
		snprintf(out, 257, "gpucluster");
}

/* set_description's words back into tags; other words are not ours and are skipped. */
static void description_tags(const char *s, struct gc_tag **tags, size_t *n)
{
	while (s && *s) {
		const char *end = strchr(s, ' '), *eq;
		size_t len = end ? (size_t)(end - s) : strlen(s);

		eq = memchr(s, '=', len);
		if (eq && (size_t)(eq - s) > strlen(GC_TAG_PREFIX) &&
		    !strncmp(s, GC_TAG_PREFIX, strlen(GC_TAG_PREFIX))) {
			*tags = gc_xreallocarray(*tags, *n + 1, sizeof(**tags));
			(*tags)[*n].key = gc_xstrndup(s, (size_t)(eq - s));
			(*tags)[*n].value = gc_xstrndup(eq + 1, len - (size_t)(eq - s) - 1);
			(*n)++;
		}
		s = end ? end + 1 : NULL;
	}
}

static void push_resource(struct gc_resource_list *out, json_t *o, const char *id_key,
			  const char *name_key, const char *fpr_key, const char *tags_key,
			  const struct gc_tag_filter *want, size_t n_want)
{
	struct gc_resource r;
	const char *v = gc_jstr(o, id_key);

	memset(&r, 0, sizeof(r));
	if (tags_key)
		description_tags(gc_jstr(o, tags_key), &r.tags, &r.n_tags);
	else
		read_tags(o, &r.tags, &r.n_tags);
	if (!gc_tags_match(r.tags, r.n_tags, want, n_want)) {
		for (size_t i = 0; i < r.n_tags; i++) {
			free(r.tags[i].key);
			free(r.tags[i].value);
		}
		free(r.tags);
		return;
	}
	r.id = gc_xstrdup(v);
	if ((v = gc_jstr(o, name_key)))
		r.name = gc_xstrdup(v);
	if (fpr_key && (v = gc_jstr(o, fpr_key)) && *v)
		r.fingerprint = gc_xstrdup(v);
	*gc_resource_list_push(out) = r;
}

/* A listing of the resources carrying every filter tag: key pairs (known by name: the id is
 * the name), by PageNumber, security groups, by NextToken, or deployment sets, by
 * PageNumber, whose tags are in their description (filtered here, not by ECS). */
struct listing {
	const char *action, *outer, *inner, *id_key, *name_key, *fpr_key;
	unsigned page_size;   /* PageNumber paging; 0: NextToken */
	const char *tags_key; /* tags from this field (set_description); NULL: Tags.Tag */
};

static const struct listing keypairs = { "DescribeKeyPairs", "KeyPairs",    "KeyPair",
					 "KeyPairName",	     "KeyPairName", "KeyPairFingerPrint",
					 ALI_KEYPAIR_PAGE,   NULL },
			    secgroups = { "DescribeSecurityGroups",
					  "SecurityGroups",
					  "SecurityGroup",
					  "SecurityGroupId",
					  "SecurityGroupName",
					  NULL,
					  0,
					  NULL },
			    deploymentsets = { "DescribeDeploymentSets",
					       "DeploymentSets",
					       "DeploymentSet",
					       "DeploymentSetId",
					       "DeploymentSetName",
					       NULL,
					       ALI_SET_PAGE,
					       "DeploymentSetDescription" };

struct listing_ctx {
	const struct listing *l;
	const struct gc_tag_filter *tags;
	size_t n_tags;
	struct gc_resource_list *out;
};

static int listing_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			struct gc_buf *body, struct gc_error *err)
{
	const struct listing_ctx *c = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	int ret = c->l->tags_key ? 0 : add_tag_filters(&params, c->tags, c->n_tags, err);

	if (c->l->page_size) {
		addu(&params, "PageNumber", pg->number + 1);
		addu(&params, "PageSize", c->l->page_size);
	} else {
		addu(&params, "MaxResults", ALI_PAGE_SIZE);
		if (pg->token)
			gc_params_add(&params, "NextToken", pg->token);
	}
	if (ret == 0)
		ret = ali_ecs_call(p, c->l->action, &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int listing_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			 struct gc_page *pg, struct gc_error *err)
{
	const struct listing_ctx *c = ctx;
	json_t *j = NULL, *o, *list;
	size_t i;

	if (parse_list(p, body, c->l->action, c->l->outer, c->l->inner, &j, &list, err) != 0 ||
	    (c->l->page_size && need_total(p, j, c->l->action, err) != 0)) {
		json_decref(j);
		return -1;
	}
	json_array_foreach(list, i, o)
	{
		const char *id = gc_jstr(o, c->l->id_key);

		if (!id || !*id) {
			json_decref(j);
			return refuse(p, c->l->action, err, "an item without %s", c->l->id_key);
		}
	}
	json_array_foreach(list, i, o)
		push_resource(c->out, o, c->l->id_key, c->l->name_key, c->l->fpr_key,
			      c->l->tags_key, c->tags, c->n_tags);
	if (c->l->page_size)
		page_count(j, list, pg);
	else
		pg->next = next_token(j);
	json_decref(j);
	return 0;
}

int ali_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
		       const struct gc_tag_filter *tags, size_t n_tags,
		       struct gc_resource_list *out, struct gc_error *err)
{
	struct gc_resource_list got;
	struct listing_ctx c = { kind == GC_RESOURCE_KEYPAIR		? &keypairs
					 : kind == GC_RESOURCE_SECGROUP ? &secgroups
									: &deploymentsets,
				 tags, n_tags, &got };
	struct gc_pager pager = { c.l->action, NULL, listing_send, listing_parse };
	int rc;

	gc_resource_list_init(&got);
	if (kind == GC_RESOURCE_KEYPAIR || kind == GC_RESOURCE_SECGROUP ||
	    kind == GC_RESOURCE_PLACEMENT)
		rc = gc_driver_pages(p, &pager, &c, err);
	else
		rc = gc_error_set(err, GC_EINVALID, "unknown resource kind %d", (int)kind);
	if (rc != 0) {
		gc_resource_list_release(&got);
		return gc_error_prefix(err, "cannot list %s in '%s'",
				       kind == GC_RESOURCE_KEYPAIR	      ? "key pairs"
					       : kind == GC_RESOURCE_SECGROUP ? "security groups"
									      : "deployment sets",
				       p->region);
	}
	for (size_t i = 0; i < got.n; i++)
		*gc_resource_list_push(out) = got.items[i];
	free(got.items);
	return 0;
}

static int lookup_keypair(struct gc_provider *p, const char *name, char **line, char **id,
			  struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *o, *list;
	size_t i;
	int ret = -1;

	gc_params_add(&params, "KeyPairName", name);
	gc_params_add(&params, "IncludePublicKey", "true");
	if (ali_ecs_call(p, "DescribeKeyPairs", &params, 0, false, &body, err) != 0 ||
	    parse_list(p, &body, "DescribeKeyPairs", "KeyPairs", "KeyPair", &j, &list, err) != 0)
		goto out;
	json_array_foreach(list, i, o)
	{
		const char *have = gc_jstr(o, "KeyPairName"), *pub = gc_jstr(o, "PublicKey");

		if (!have || !*have) {
			refuse(p, "DescribeKeyPairs", err, "a key pair without KeyPairName");
			free(*line);
			*line = NULL;
			goto out;
		}

		if (have && pub && strcmp(have, name) == 0) {
			free(*line);
			*line = gc_xstrdup(pub);
		}
	}
	*id = *line ? gc_xstrdup(name) : NULL; /* Alibaba key pairs have no id but their name */
	ret = 0;
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

static int import_keypair(struct gc_provider *p, const struct gc_keypair_request *req,
			  char **out_id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	json_t *j = NULL;
	const char *name;
	int ret = -1;

	if (req->n_tags > ALI_MAX_TAGS)
		return gc_error_set(err, GC_EINVALID, "%zu tags", req->n_tags);
	gc_params_add(&params, "KeyPairName", req->name);
	gc_params_add(&params, "PublicKeyBody", req->public_key_line);
	add_tags(&params, req->tags, req->n_tags);
	if (ali_ecs_call(p, "ImportKeyPair", &params, 0, false, &body, err) != 0 ||
	    parse_answer(p, &body, "ImportKeyPair", &j, err) != 0)
		goto out;
	name = gc_jstr(j, "KeyPairName");
	if (!name || strcmp(name, req->name) != 0) {
		refuse(p, "ImportKeyPair", err, "the answer names another KeyPairName ('%s')",
		       name ? name : "");
		goto out;
	}
	*out_id = gc_xstrdup(name);
	ret = 0;
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

static const struct gc_driver_keypair keypair_import = {
	import_keypair,
	lookup_keypair,
	(const char *const[]){ "KeyPair.AlreadyExist", NULL },
	NULL,
	400,
};

int ali_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		       struct gc_error *err)
{
	return gc_driver_import_keypair(p, &keypair_import, req, out_id, err);
}

int ali_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *names = json_pack("[s]", id);
	char *text = json_dumps(names, JSON_COMPACT);
	int ret;

	/* names that do not exist are skipped by ECS: a key already gone is no error */
	gc_params_add(&params, "KeyPairNames", text);
	ret = ali_ecs_call(p, "DeleteKeyPairs", &params, 0, false, &body, err);
	free(text);
	json_decref(names);
	gc_params_release(&params);
	gc_buf_release(&body);
	if (ret != 0)
		return gc_error_prefix(err, "cannot delete key pair '%s'", id);
	return 0;
}

/* TCP port (SSH's, the exporter's) from each of cidrs, in batches of ALI_RULE_BATCH rules a
 * call, described description. */
static int authorize_ssh(struct gc_provider *p, const char *group_id, unsigned port,
			 const char *const *cidrs, size_t n_cidrs, const char *description,
			 struct gc_error *err)
{
	char range[32];

	snprintf(range, sizeof(range), "%u/%u", port, port);
	for (size_t first = 0; first < n_cidrs; first += ALI_RULE_BATCH) {
		struct gc_params params = GC_PARAMS_INIT;
		int rc;

		gc_params_add(&params, "SecurityGroupId", group_id);
		for (size_t i = first; i < n_cidrs && i < first + ALI_RULE_BATCH; i++) {
			size_t n = i - first + 1;

			addf(&params, "TCP", "Permissions.%zu.IpProtocol", n);
			addf(&params, range, "Permissions.%zu.PortRange", n);
			/* an IPv6 block has a field of its own: SourceCidrIp refuses it */
			addf(&params, cidrs[i],
			     gc_cidr_text_is_ipv6(cidrs[i]) ? "Permissions.%zu.Ipv6SourceCidrIp"
							    : "Permissions.%zu.SourceCidrIp",
			     n);
			addf(&params, "Accept", "Permissions.%zu.Policy", n);
			addf(&params, "intranet", "Permissions.%zu.NicType", n);
			addf(&params, "1", "Permissions.%zu.Priority", n);
			addf(&params, description, "Permissions.%zu.Description", n);
		}
		/* a rule that is already there is accepted again without a copy (ECS API
		 * reference, AuthorizeSecurityGroup), so a re-run needs no special case */
		rc = call_only(p, "AuthorizeSecurityGroup", &params, err);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* One ingress permission of DescribeSecurityGroupAttribute as the diff sees it. */
static void permission_rule(json_t *perm, struct gc_rule *r)
{
	const char *proto = gc_jstr(perm, "IpProtocol"), *range = gc_jstr(perm, "PortRange");
	const char *policy = gc_jstr(perm, "Policy");
	bool accept = policy && strcasecmp(policy, "accept") == 0;
	char want[32];

	memset(r, 0, sizeof(*r));
	r->all = accept && proto && strcasecmp(proto, "all") == 0;
	if (accept && proto && strcasecmp(proto, "tcp") == 0 && range) {
		const char *slash = strchr(range, '/');
		int64_t port;

		if (slash && gc_parse_i64(slash + 1, 1, 65535, &port) == 0) {
			snprintf(want, sizeof(want), "%lld/%lld", (long long)port, (long long)port);
			if (strcmp(want, range) == 0)
				r->port = (unsigned)port;
		}
	}
	/* ECS lists both source fields, the unused one empty */
	r->cidr = gc_jstr(perm, "SourceCidrIp");
	if (!r->cidr || !*r->cidr)
		r->cidr = gc_jstr(perm, "Ipv6SourceCidrIp");
	r->group = gc_jstr(perm, "SourceGroupId");
	r->ours = gc_rule_is_ours(gc_jstr(perm, "Description"));
}

/* One RevokeSecurityGroup by Permissions (protocol, ports, source, policy as listed): a
 * permission that matches nothing is no error (ECS API reference, RevokeSecurityGroup). */
static int revoke(struct gc_provider *p, const char *group_id, json_t *perms, const bool *drop,
		  struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	size_t i, n = 0;
	json_t *perm;
	int rc = 0;

	gc_params_add(&params, "SecurityGroupId", group_id);
	json_array_foreach(perms, i, perm)
	{
		static const char *const fields[] = { "IpProtocol",    "PortRange",
						      "SourceCidrIp",  "Ipv6SourceCidrIp",
						      "SourceGroupId", "Policy",
						      "NicType" };

		if (!drop[i])
			continue;
		n++;
		for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
			if (gc_jstr(perm, fields[k]) && *gc_jstr(perm, fields[k]))
				addf(&params, gc_jstr(perm, fields[k]), "Permissions.%zu.%s", n,
				     fields[k]);
		if (n < ALI_RULE_BATCH)
			continue;
		rc = call_only(p, "RevokeSecurityGroup", &params, err);
		gc_params_add(&params, "SecurityGroupId", group_id);
		n = 0;
		if (rc != 0)
			break;
	}
	if (rc == 0 && n)
		rc = call_only(p, "RevokeSecurityGroup", &params, err);
	gc_params_release(&params);
	return rc;
}

/* The group's ingress rules: DescribeSecurityGroupAttribute's answer into *out, in one
 * page of the most it takes (1000, above any group's rule quota); an answer that still
 * has a next page is refused rather than read in part. */
static int list_rules(struct gc_provider *p, const char *group_id, json_t **out,
		      struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	const char *next;
	int ret;

	gc_params_add(&params, "SecurityGroupId", group_id);
	gc_params_add(&params, "Direction", "ingress");
	gc_params_add(&params, "MaxResults", "1000");
	ret = ali_ecs_call(p, "DescribeSecurityGroupAttribute", &params, 0, false, &body, err);
	if (ret == 0)
		ret = parse_answer(p, &body, "DescribeSecurityGroupAttribute", out, err);
	if (ret == 0 && !jlist(*out, "Permissions", "Permission"))
		ret = refuse(p, "DescribeSecurityGroupAttribute", err,
			     "the answer has no Permissions.Permission list");
	if (ret == 0 && (next = gc_jstr(*out, "NextToken")) && *next)
		ret = gc_error_set(err, GC_EINVALID,
				   "DescribeSecurityGroupAttribute answered more than one page of "
				   "rules for security group '%s'",
				   group_id);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/*
 * The group's rules made to match the request (core/rules.h): SSH from each CIDR added
 * when missing, ours no longer wanted revoked, foreign ones left. No members' rule: a
 * basic group lets its members in by itself (docs/internals/alibaba.md).
 */
static int ensure_rules(struct gc_provider *p, const struct gc_secgroup_request *req,
			const char *group_id, bool fresh, struct gc_error *err)
{
	json_t *j = NULL, *perms;
	struct gc_rule *have = NULL, *want = NULL;
	const char **cidrs = NULL;
	bool *add = NULL, *drop = NULL;
	size_t n_have, n_want, n_cidrs = 0, n_mon = 0, i;
	json_t *perm;
	int ret = -1;

	if (fresh) /* a group this call made: nothing to list yet */
		j = json_pack("{s:{s:[]}}", "Permissions", "Permission");
	else if (list_rules(p, group_id, &j, err) != 0)
		goto out;
	perms = json_object_get(json_object_get(j, "Permissions"), "Permission");
	if (!json_is_array(perms)) {
		refuse(p, "DescribeSecurityGroupAttribute", err, "the answer has no Permissions");
		goto out;
	}
	n_have = json_array_size(perms);
	have = gc_xcalloc(n_have + 1, sizeof(*have));
	json_array_foreach(perms, i, perm) permission_rule(perm, &have[i]);
	n_want = gc_rules_wanted(req, group_id, false, &want);
	add = gc_xcalloc(n_want + 1, sizeof(*add));
	drop = gc_xcalloc(n_have + 1, sizeof(*drop));
	gc_rules_diff(want, n_want, have, n_have, add, drop);
	cidrs = gc_xcalloc(n_want + 1, sizeof(*cidrs));
	n_cidrs = gc_rules_cidrs(want, add, n_want, req->ssh_port, cidrs);
	if (authorize_ssh(p, group_id, req->ssh_port, cidrs, n_cidrs, GC_RULE_SSH, err) != 0)
		goto out;
	if (req->monitoring_port != req->ssh_port)
		n_mon = gc_rules_cidrs(want, add, n_want, req->monitoring_port, cidrs);
	if (authorize_ssh(p, group_id, req->monitoring_port, cidrs, n_mon, GC_RULE_MONITORING,
			  err) != 0 ||
	    revoke(p, group_id, perms, drop, err) != 0)
		goto out;
	ret = 0;
out:
	free(cidrs);
	free(add);
	free(drop);
	free(want);
	free(have);
	json_decref(j);
	return ret;
}

struct rules_call {
	const struct gc_secgroup_request *req;
	const char *group_id;
};

static int rules_call(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	const struct rules_call *rc = ctx;

	return ensure_rules(p, rc->req, rc->group_id, true, err);
}

/* The rules of a group just made, which AuthorizeSecurityGroup may not know yet. */
static int fresh_rules(struct gc_provider *p, const struct gc_secgroup_request *req,
		       const char *group_id, struct gc_error *err)
{
	struct rules_call rc = { req, group_id };

	return gc_driver_retry_unseen(p, rules_call, &rc, &group_id, 1, unseen_group,
				      "the new security group is not known to ECS yet", err);
}

int ali_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
			struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	json_t *j = NULL;
	const char *vpc, *id;
	const char *desc = req->description && strlen(req->description) >= 2 &&
			!gc_starts_with(req->description, "http")
		? req->description
		: "gpucluster";
	unsigned char rnd[16];
	char token[33], *gid = NULL;
	int ret = -1;

	if (!req->name || !req->n_allow_from || req->ssh_port == 0 || req->ssh_port > 65535)
		return gc_error_set(err, GC_EINVALID,
				    "cannot create a security group without a name, a port and an "
				    "address to allow");
	if (req->n_tags > ALI_MAX_TAGS)
		return gc_error_set(err, GC_EINVALID, "cannot create security group '%s': %zu tags",
				    req->name, req->n_tags);
	if (req->id) {
		if (ensure_rules(p, req, req->id, false, err) != 0)
			goto fail;
		*out_id = gc_xstrdup(req->id);
		ret = 0;
		goto out;
	}
	if (req->vpc_id)
		vpc = req->vpc_id;
	else if (default_vpc(p, &vpc, err) != 0)
		goto fail;
	/* security group names need not be unique on ECS: a lost answer retried without a
	 * token would make a second group, so each call carries one of its own */
	if (gc_random_bytes(rnd, sizeof(rnd)) != 0) {
		gc_error_set(err, GC_EGENERIC, "no random bytes for a client token");
		goto fail;
	}
	gc_hex(rnd, sizeof(rnd), token);
	gc_params_add(&params, "VpcId", vpc);
	gc_params_add(&params, "SecurityGroupName", req->name);
	gc_params_add(&params, "Description", desc);
	/* a basic group, whose members reach each other with no rule: that is allow_members,
	 * and without it they still do (the engine always asks for it); why never an
	 * advanced one: docs/internals/alibaba.md */
	gc_params_add(&params, "SecurityGroupType", "normal");
	gc_params_add(&params, "ClientToken", token);
	add_tags(&params, req->tags, req->n_tags);
	if (ali_ecs_call(p, "CreateSecurityGroup", &params, 0, false, &body, err) != 0)
		goto fail;
	if (parse_answer(p, &body, "CreateSecurityGroup", &j, err) != 0)
		goto fail;
	if (!(id = gc_jstr(j, "SecurityGroupId")) || !*id) {
		refuse(p, "CreateSecurityGroup", err, "the answer has no SecurityGroupId");
		goto fail;
	}
	gid = gc_xstrdup(id);
	gc_driver_made(p, gid);
	if (fresh_rules(p, req, gid, err) != 0) {
		gc_driver_discard_secgroup(p, gid, ali_delete_secgroup);
		goto fail;
	}
	*out_id = gid;
	gid = NULL;
	ret = 0;
	goto out;
fail:
	gc_driver_secgroup_failed(req, err);
out:
	free(gid);
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/*
 * One DeleteSecurityGroup. DependencyViolation while instances that used the group are
 * still being released is a wait, not a failure: gc_driver_delete_secgroup waits it out.
 */
static int delete_secgroup_once(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "SecurityGroupId", id);
	ret = call_only(p, "DeleteSecurityGroup", &params, err);
	if (ret != 0 && strcmp(err->cloud_code, "DependencyViolation") == 0)
		return 1;
	return ret;
}

int ali_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return gc_driver_delete_secgroup(p, id, delete_secgroup_once, err);
}

/* ---- deployment sets (placement: cluster, docs/internals/fabric.md) ---------------------- */

/* A deployment set with the network low-latency strategy, its tags in its description. A
 * token per call: set names need not be unique, and a lost answer is retried. */
int ali_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
			 char **out_id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	json_t *j = NULL;
	const char *id;
	unsigned char rnd[16];
	char token[33], desc[257];
	int ret = -1;

	if (gc_random_bytes(rnd, sizeof(rnd)) != 0)
		return gc_error_set(err, GC_EGENERIC, "no random bytes for a client token");
	gc_hex(rnd, sizeof(rnd), token);
	set_description(req->tags, req->n_tags, desc);
	gc_params_add(&params, "DeploymentSetName", req->name);
	gc_params_add(&params, "Strategy", "LowLatency");
	gc_params_add(&params, "Description", desc);
	gc_params_add(&params, "ClientToken", token);
	if (ali_ecs_call(p, "CreateDeploymentSet", &params, 0, false, &body, err) != 0 ||
	    parse_answer(p, &body, "CreateDeploymentSet", &j, err) != 0)
		goto out;
	if (!(id = gc_jstr(j, "DeploymentSetId")) || !*id) {
		refuse(p, "CreateDeploymentSet", err, "the answer has no DeploymentSetId");
		goto out;
	}
	*out_id = gc_xstrdup(id);
	ret = 0;
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/* ECS refuses a set that still holds instances (DependencyViolation.NotEmpty): teardown
 * asks once every instance is gone. A set already gone is not an error. */
int ali_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "DeploymentSetId", id);
	ret = call_only(p, "DeleteDeploymentSet", &params, err);
	if (ret != 0 && err && strcmp(err->cloud_code, "DeploymentSet.InvalidId") == 0) {
		gc_error_init(err);
		return 0;
	}
	return ret;
}

/* ---- images ------------------------------------------------------------------------------------ */

struct ali_alias_def {
	const char *alias;
	const char *owner;    /* ImageOwnerAlias */
	const char *search;   /* ImageName, a fuzzy search on ECS */
	const char *prefix;   /* the name must start with this (NULL: no check) */
	const char *contains; /* and hold this, any case (NULL: no check) */
};

/* The aliases of docs/spec.md (image:); how each is found, and why gpu-ready is a
 * Marketplace image, is in docs/internals/alibaba.md. */
static const struct ali_alias_def alias_defs[] = {
	{ "ubuntu-22.04", "system", "ubuntu_22_04_x64", "ubuntu_22_04_x64", NULL },
	{ "ubuntu-24.04", "system", "ubuntu_24_04_x64", "ubuntu_24_04_x64", NULL },
	{ "gpu-ready", "marketplace", "GPU", NULL, "ubuntu 22.04" },
};

static bool contains_ci(const char *s, const char *what)
{
	size_t n = strlen(what);

	for (; *s; s++)
		if (strncasecmp(s, what, n) == 0)
			return true;
	return false;
}

struct alias_ctx {
	const struct ali_alias_def *def;
	char *best; /* the newest image's id */
	int64_t best_at;
};

static int images_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
		       struct gc_buf *body, struct gc_error *err)
{
	const struct ali_alias_def *def = ((const struct alias_ctx *)ctx)->def;
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "ImageOwnerAlias", def->owner);
	gc_params_add(&params, "ImageName", def->search);
	gc_params_add(&params, "OSType", "linux");
	gc_params_add(&params, "Architecture", "x86_64");
	gc_params_add(&params, "Status", "Available");
	addu(&params, "PageNumber", pg->number + 1);
	addu(&params, "PageSize", ALI_PAGE_SIZE);
	ret = ali_ecs_call(p, "DescribeImages", &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int images_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			struct gc_page *pg, struct gc_error *err)
{
	struct alias_ctx *c = ctx;
	json_t *j = NULL, *o, *list;
	size_t i;

	if (parse_list(p, body, "DescribeImages", "Images", "Image", &j, &list, err) != 0 ||
	    need_total(p, j, "DescribeImages", err) != 0) {
		json_decref(j);
		return -1;
	}
	json_array_foreach(list, i, o)
	{
		const char *id = gc_jstr(o, "ImageId"), *name = gc_jstr(o, "ImageName");
		const char *created = gc_jstr(o, "CreationTime"), *status = gc_jstr(o, "Status");
		int64_t at = 0;

		if (!id || !*id || !name || !status) {
			json_decref(j);
			return refuse(p, "DescribeImages", err,
				      "an image without ImageId, ImageName or Status");
		}
		/* every image seen exists: a literal id among them needs no call of its own */
		if (!strcmp(status, "Available") && !gc_params_get(&ali_driver(p)->aliases, id))
			gc_params_add(&ali_driver(p)->aliases, id, id);
		if ((status && strcmp(status, "Available")) ||
		    (c->def->prefix && !gc_starts_with(name, c->def->prefix)) ||
		    (c->def->contains && !contains_ci(name, c->def->contains)))
			continue;
		if (!created || ali_parse_time(created, &at) != 0)
			at = 0;
		/* the newest build; ids break a tie so the answer does not depend on list order */
		if (!c->best || at > c->best_at || (at == c->best_at && strcmp(id, c->best) > 0)) {
			free(c->best);
			c->best = gc_xstrdup(id);
			c->best_at = at;
		}
	}
	page_count(j, list, pg);
	json_decref(j);
	return 0;
}

static int resolve_alias(struct gc_provider *p, const char *alias, char **out_id,
			 struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	static const struct gc_pager pager = { "DescribeImages", NULL, images_send, images_parse };
	const struct ali_alias_def *def = NULL;
	struct alias_ctx c = { .best_at = -1 };
	const char *cached;
	int ret = -1;

	if ((cached = gc_params_get(&d->aliases, alias))) {
		*out_id = gc_xstrdup(cached);
		return 0;
	}
	for (size_t i = 0; i < sizeof(alias_defs) / sizeof(alias_defs[0]); i++)
		if (strcmp(alias_defs[i].alias, alias) == 0)
			c.def = def = &alias_defs[i];
	if (!def)
		return gc_error_set(err, GC_EINVALID,
				    "unknown image alias '%s' (alibaba has ubuntu-22.04, "
				    "ubuntu-24.04, gpu-ready, or an image id: m-... or "
				    "NAME.vhd)",
				    alias);
	if (gc_driver_pages(p, &pager, &c, err) != 0)
		goto out;
	if (!c.best) {
		gc_error_set(err, GC_ENOTFOUND,
			     "image alias '%s': no %s image named like '%s' in %s", alias,
			     def->owner, def->prefix ? def->prefix : def->search, p->region);
		goto out;
	}
	gc_params_add(&d->aliases, alias, c.best);
	*out_id = c.best;
	c.best = NULL;
	ret = 0;
out:
	if (ret != 0 && err && err->code != GC_ENOTFOUND)
		gc_error_prefix(err, "cannot resolve image alias '%s'", alias);
	free(c.best);
	return ret;
}

/* A literal id the region has: DescribeImages by ImageId (one page; ids are regional, so an
 * id of another region is not found), remembered with the aliases, as is every image an
 * alias's search came across. */
static int image_exists(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *o, *list;
	size_t i;
	bool found = false;
	int ret;

	if (gc_params_get(&d->aliases, id))
		return 0;
	gc_params_add(&params, "ImageId", id);
	ret = ali_ecs_call(p, "DescribeImages", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 &&
	    (ret = parse_list(p, &body, "DescribeImages", "Images", "Image", &j, &list, err)) == 0)
		json_array_foreach(list, i, o)
		{
			const char *got = gc_jstr(o, "ImageId");

			found |= got && strcmp(got, id) == 0;
		}
	json_decref(j);
	gc_buf_release(&body);
	if (ret != 0)
		return gc_error_prefix(err, "cannot look up image '%s'", id);
	if (!found)
		return gc_error_set(err, GC_ENOTFOUND, "image '%s' not found in %s", id, p->region);
	gc_params_add(&d->aliases, id, id);
	return 0;
}

int ali_resolve_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		      struct gc_error *err)
{
	if (!image || !*image)
		return gc_error_set(err, GC_EINVALID, "no image given");
	if (is_alias)
		return resolve_alias(p, image, out_id, err);
	/* custom, shared and Marketplace images are m-..., public ones NAME.vhd */
	if (!(gc_starts_with(image, "m-") && strlen(image) > 2) &&
	    !(gc_ends_with(image, ".vhd") && strlen(image) > 4))
		return gc_error_set(err, GC_EINVALID,
				    "'%s' is not an Alibaba image id (m-... or NAME.vhd)", image);
	if (image_exists(p, image, err) != 0)
		return -1;
	*out_id = gc_xstrdup(image);
	return 0;
}

/* ---- catalogue: types, prices, zones, regions -------------------------------------------------- */

/* "NVIDIA A100 80G" -> "A100", "NVIDIA T4" -> "T4". */
static void short_model(const char *spec, char out[64])
{
	const char *s = spec;
	size_t n;

	if (strncasecmp(s, "NVIDIA ", 7) == 0)
		s += 7;
	while (*s == ' ')
		s++;
	n = strcspn(s, " ");
	snprintf(out, 64, "%.*s", (int)(n < 63 ? n : 63), s);
}

/* A DescribeInstanceTypes item into facts. */
static void type_facts(json_t *o, const char *id, struct gc_type_facts *f)
{
	const char *spec = gc_jstr(o, "GPUSpec");

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", id);
	f->vcpus = (unsigned)jnum(o, "CpuCoreCount");
	f->memory_mib = (unsigned)lround(jnum(o, "MemorySize") * 1024.0);
	f->gpus = (unsigned)jnum(o, "GPUAmount");
	f->rdma_interfaces = (unsigned)jnum(o, "EriQuantity"); /* 0: no ERI */
	if (f->gpus && spec && *spec) {
		short_model(spec, f->gpu_model);
		/* GPUMemorySize is GiB per GPU */
		f->gpu_memory_mib = (unsigned)lround(jnum(o, "GPUMemorySize") * 1024.0);
	}
}

int ali_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		      struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	struct gc_type_facts f;
	json_t *j = NULL, *o, *list;
	size_t i;
	bool found = false;
	int ret = -1;

	for (size_t k = 0; k < d->n_types; k++)
		if (strcmp(d->types[k].name, type) == 0) {
			*out = d->types[k];
			return 0;
		}
	gc_params_add(&params, "InstanceTypes.1", type);
	if (ali_ecs_call(p, "DescribeInstanceTypes", &params, 0, false, &body, err) != 0 ||
	    parse_list(p, &body, "DescribeInstanceTypes", "InstanceTypes", "InstanceType", &j,
		       &list, err) != 0)
		goto fail;
	json_array_foreach(list, i, o)
	{
		const char *id = gc_jstr(o, "InstanceTypeId");

		if (!id || !*id) {
			refuse(p, "DescribeInstanceTypes", err, "a type without InstanceTypeId");
			goto fail;
		}
		if (strcmp(id, type) != 0)
			continue;
		type_facts(o, id, &f);
		found = true;
	}
	if (!found) {
		gc_error_set(err, GC_ENOTFOUND, "instance type '%s' is not offered in %s", type,
			     p->region);
		goto out;
	}
	GC_ALLOC_GROW(d->types, d->n_types + 1, d->alloc_types);
	d->types[d->n_types++] = f;
	*out = f;
	ret = 0;
	goto out;
fail:
	gc_error_prefix(err, "cannot look up instance type '%s'", type);
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/*
 * DescribePrice for one instance of type, in the account's currency
 * (PriceInfo.Price.Currency): per hour for pay-as-you-go and spot (unit "Hour"), or the
 * total of a subscription of period units ("Year", "1"), which PriceUnit selects
 * (docs/internals/gpus.md, "Reserved prices").
 */
static int describe_price(struct gc_provider *p, const char *type, const char *zone, bool spot,
			  const char *unit, const char *period, double *out,
			  char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *price, *o;
	const char *currency;
	double amount = -1;
	size_t i;
	int ret = -1;

	gc_params_add(&params, "ResourceType", "instance");
	gc_params_add(&params, "InstanceType", type);
	if (zone)
		gc_params_add(&params, "ZoneId", zone);
	gc_params_add(&params, "PriceUnit", unit);
	if (period)
		gc_params_add(&params, "Period", period);
	gc_params_add(&params, "Amount", "1");
	if (spot)
		gc_params_add(&params, "SpotStrategy", "SpotAsPriceGo");
	if (ali_ecs_call(p, "DescribePrice", &params, 0, false, &body, err) != 0) {
		if (err && gc_starts_with(err->cloud_code, "InvalidInstanceType"))
			err->code = GC_ENOTFOUND;
		goto out;
	}
	if (parse_answer(p, &body, "DescribePrice", &j, err) != 0)
		goto out;
	price = json_object_get(json_object_get(j, "PriceInfo"), "Price");
	/* the instance's own line: the total would include a default system disk */
	json_array_foreach(jlist(price, "DetailInfos", "DetailInfo"), i, o)
	{
		const char *res = gc_jstr(o, "Resource");

		if (res && strcasecmp(res, "instanceType") == 0 &&
		    json_is_number(json_object_get(o, "TradePrice")))
			amount = jnum(o, "TradePrice");
	}
	if (amount < 0 && json_is_number(json_object_get(price, "TradePrice")))
		amount = jnum(price, "TradePrice");
	if (amount < 0) {
		refuse(p, "DescribePrice", err, "the answer has no TradePrice");
		goto out;
	}
	currency = gc_jstr(price, "Currency");
	if (!gc_currency_code_ok(currency)) {
		refuse(p, "DescribePrice", err, "the answer has no Currency code");
		goto out;
	}
	*out = amount;
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", currency);
	ret = 0;
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

int ali_price(struct gc_provider *p, const char *type, const char *zone, bool spot, double *out,
	      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	const struct gc_price_entry *c;
	char currency[GC_CURRENCY_SIZE];
	double amount;

	if ((c = gc_price_cache_find(&d->prices, type, zone, spot))) {
		*out = c->amount;
		snprintf(out_currency, GC_CURRENCY_SIZE, "%s", c->currency);
		return 0;
	}
	if (describe_price(p, type, zone, spot, "Hour", NULL, &amount, currency, err) != 0)
		return gc_error_prefix(err, "cannot get the %s price of '%s' in %s",
				       spot ? "spot" : "on-demand", type, zone ? zone : p->region);
	gc_price_cache_add(&d->prices, type, zone, spot, amount, currency);
	*out = amount;
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", currency);
	return 0;
}

/* A 1- and a 3-year subscription (PriceUnit Year, Period 1 and 3) in the region, each
 * total spread over the hours of its term: 365 days a year. */
int ali_reserved_price(struct gc_provider *p, const char *type, double out[2],
		       char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	static const char *const years[2] = { "1", "3" };
	char currency[2][GC_CURRENCY_SIZE];
	double total[2];

	for (int y = 0; y < 2; y++)
		if (describe_price(p, type, NULL, false, "Year", years[y], &total[y], currency[y],
				   err) != 0)
			return gc_error_prefix(err,
					       "cannot get the %s-year subscription price of '%s' "
					       "in %s",
					       years[y], type, p->region);
	if (strcmp(currency[0], currency[1]) != 0)
		return refuse(p, "DescribePrice", err, "the terms answer in %s and %s", currency[0],
			      currency[1]);
	out[0] = total[0] / (365.0 * 24);
	out[1] = total[1] / (3 * 365.0 * 24);
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", currency[0]);
	return 0;
}

/* A list of strings at wrapper/inner[].key of an answer, in order. */
static int id_list(struct gc_provider *p, const char *action, const char *outer, const char *inner,
		   const char *key, const char *status_ok, char ***out, size_t *n_out,
		   struct gc_error *err)
{
	struct gc_buf body;
	json_t *j = NULL, *o, *list;
	char **v = NULL;
	size_t n = 0, i;
	int ret = -1;

	if (ali_ecs_call(p, action, NULL, 0, false, &body, err) != 0 ||
	    parse_list(p, &body, action, outer, inner, &j, &list, err) != 0)
		goto out;
	json_array_foreach(list, i, o)
	{
		const char *id = gc_jstr(o, key), *status = gc_jstr(o, "Status");

		if (!id || !*id) {
			refuse(p, action, err, "an item without %s", key);
			goto out;
		}
		if ((status_ok && status && strcmp(status, status_ok)))
			continue;
		v = gc_xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = gc_xstrdup(id);
	}
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	ret = 0;
out:
	gc_strv_free(v, n);
	json_decref(j);
	gc_buf_release(&body);
	return ret;
}

int ali_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	if (id_list(p, "DescribeZones", "Zones", "Zone", "ZoneId", NULL, out, n_out, err) != 0)
		return gc_error_prefix(err, "cannot list the zones of %s", p->region);
	return 0;
}

/*
 * provider.network at plan time: DescribeVpcs by VpcId (a VPC that is not there is an
 * empty list), then DescribeVSwitches by VSwitchId, one call per vSwitch (the action takes
 * one id).
 */
int ali_network(struct gc_provider *p, const char *vpc, const char *const *vsws, size_t n,
		bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	json_t *j = NULL, *v, *list;
	size_t i;
	int ret = -1;

	gc_params_add(&params, "VpcId", vpc);
	if (ali_vpc_call(p, "DescribeVpcs", &params, &body, err) != 0 ||
	    parse_list(p, &body, "DescribeVpcs", "Vpcs", "Vpc", &j, &list, err) != 0)
		goto out;
	*vpc_found = false;
	json_array_foreach(list, i, v)
	{
		*vpc_found |= gc_jstr(v, "VpcId") && strcmp(gc_jstr(v, "VpcId"), vpc) == 0;
	}
	for (size_t k = 0; k < n; k++) {
		json_decref(j);
		j = NULL;
		gc_params_release(&params);
		gc_buf_release(&body);
		gc_params_add(&params, "VSwitchId", vsws[k]);
		if (ali_vpc_call(p, "DescribeVSwitches", &params, &body, err) != 0 ||
		    parse_list(p, &body, "DescribeVSwitches", "VSwitches", "VSwitch", &j, &list,
			       err) != 0)
			goto out;
		json_array_foreach(list, i, v)
		{
			const char *id = gc_jstr(v, "VSwitchId");

			if (!id || strcmp(id, vsws[k]) != 0)
				continue;
			out[k].found = true;
			snprintf(out[k].vpc, sizeof(out[k].vpc), "%s",
				 gc_jstr(v, "VpcId") ? gc_jstr(v, "VpcId") : "");
			snprintf(out[k].zone, sizeof(out[k].zone), "%s",
				 gc_jstr(v, "ZoneId") ? gc_jstr(v, "ZoneId") : "");
		}
	}
	ret = 0;
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/*
 * The zones offering type: DescribeAvailableResource for DestinationResource=InstanceType
 * answers, per zone (AvailableZones.AvailableZone), the types it sells
 * (AvailableResources.AvailableResource[].SupportedResources.SupportedResource[].Value),
 * sold out or not. No AvailableZones: no zone sells it.
 */
int ali_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
		   struct gc_error *err)
{
	static const char action[] = "DescribeAvailableResource";
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *z, *r, *s, *list;
	char **v = NULL;
	size_t n = 0, i, k, m;
	int ret = -1;

	gc_params_add(&params, "DestinationResource", "InstanceType");
	gc_params_add(&params, "InstanceType", type);
	ret = ali_ecs_call(p, action, &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret != 0 || (ret = parse_answer(p, &body, action, &j, err)) != 0)
		goto out;
	ret = -1;
	list = json_object_get(json_object_get(j, "AvailableZones"), "AvailableZone");
	json_array_foreach(list, i, z)
	{
		const char *zone = gc_jstr(z, "ZoneId");
		bool sells = false;

		if (!zone || !*zone) {
			refuse(p, action, err, "a zone without ZoneId");
			goto out;
		}
		json_array_foreach(jlist(z, "AvailableResources", "AvailableResource"), k, r)
		{
			json_array_foreach(jlist(r, "SupportedResources", "SupportedResource"), m,
					   s)
			{
				const char *value = gc_jstr(s, "Value");

				sells |= value && strcmp(value, type) == 0;
			}
		}
		if (!sells)
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
	json_decref(j);
	gc_buf_release(&body);
	if (ret != 0)
		gc_error_prefix(err, "cannot list the zones offering '%s' in %s", type, p->region);
	return ret;
}

/*
 * show-gpus live: the types with GPUs (DescribeInstanceTypes with MinimumGPUAmount, every
 * NextToken page) and, per zone, the types it sells (DescribeAvailableResource for
 * InstanceType without one named), folded into each GPU type's zones.
 */
#define ALI_GPU_TYPES_MAX_PAGES 20

int ali_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
		  struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	struct gc_type_facts *types = NULL;
	struct gc_gpu_type *v = NULL;
	size_t n_types = 0, alloc = 0, n = 0, i, k, m, z;
	char *token = NULL;
	const char *action = "DescribeInstanceTypes";
	json_t *j = NULL, *o, *list, *r, *s;
	int ret = -1;

	for (unsigned page = 0;; page++) {
		gc_params_add(&params, "MinimumGPUAmount", "1");
		gc_params_add(&params, "MaxResults", "1600");
		if (token)
			gc_params_add(&params, "NextToken", token);
		gc_buf_release(&body);
		if (ali_ecs_call(p, action, &params, 0, false, &body, err) != 0 ||
		    parse_list(p, &body, action, "InstanceTypes", "InstanceType", &j, &list, err) !=
			    0)
			goto out;
		gc_params_release(&params);
		json_array_foreach(list, i, o)
		{
			const char *id = gc_jstr(o, "InstanceTypeId");

			if (!id || !*id) {
				refuse(p, action, err, "a type without InstanceTypeId");
				goto out;
			}
			GC_ALLOC_GROW(types, n_types + 1, alloc);
			type_facts(o, id, &types[n_types]);
			n_types += types[n_types].gpus > 0;
		}
		free(token);
		token = next_token(j);
		json_decref(j);
		j = NULL;
		if (!token)
			break;
		if (page + 1 == ALI_GPU_TYPES_MAX_PAGES) {
			refuse(p, action, err, "more than %d pages", ALI_GPU_TYPES_MAX_PAGES);
			goto out;
		}
	}
	action = "DescribeAvailableResource";
	gc_params_add(&params, "DestinationResource", "InstanceType");
	gc_buf_release(&body);
	if (ali_ecs_call(p, action, &params, 0, false, &body, err) != 0 ||
	    parse_answer(p, &body, action, &j, err) != 0)
		goto out;
	/* the types' order, each with the zones selling it */
	for (size_t t = 0; t < n_types; t++)
		json_array_foreach(jlist(j, "AvailableZones", "AvailableZone"), z, o)
		{
			const char *zone = gc_jstr(o, "ZoneId");

			if (!zone || !*zone) {
				refuse(p, action, err, "a zone without ZoneId");
				goto out;
			}
			json_array_foreach(jlist(o, "AvailableResources", "AvailableResource"), k,
					   r)
			{
				json_array_foreach(
					jlist(r, "SupportedResources", "SupportedResource"), m, s)
				{
					const char *value = gc_jstr(s, "Value");

					if (value && strcmp(value, types[t].name) == 0)
						gc_gpu_types_add(&v, &n, &types[t], zone);
				}
			}
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
	free(types);
	free(token);
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

int ali_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	if (id_list(p, "DescribeRegions", "Regions", "Region", "RegionId", "available", out, n_out,
		    err) != 0)
		return gc_error_prefix(err, "cannot list the Alibaba Cloud regions");
	return 0;
}

int ali_console_output(struct gc_provider *p, const char *id, char **out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body, text = GC_BUF_INIT(ALI_CONSOLE_MAX);
	json_t *j = NULL;
	const char *b64;
	int ret = -1;

	gc_params_add(&params, "InstanceId", id);
	if (ali_ecs_call(p, "GetInstanceConsoleOutput", &params, 0, false, &body, err) != 0 ||
	    parse_answer(p, &body, "GetInstanceConsoleOutput", &j, err) != 0)
		goto fail;
	b64 = gc_jstr(j, "ConsoleOutput");
	if (!b64) {
		refuse(p, "GetInstanceConsoleOutput", err, "the answer has no ConsoleOutput");
		goto fail;
	}
	if (gc_base64_decode(&text, b64, strlen(b64)) != 0) {
		refuse(p, "GetInstanceConsoleOutput", err,
		       "the output is not base64 or over %zu bytes", (size_t)ALI_CONSOLE_MAX);
		goto fail;
	}
	/* NUL-terminated by the buffer; a NUL inside would only cut the text short */
	*out = gc_buf_detach(&text, NULL);
	ret = 0;
	goto out;
fail:
	gc_error_prefix(err, "cannot read the console of '%s'", id);
out:
	json_decref(j);
	gc_params_release(&params);
	gc_buf_release(&body);
	gc_buf_release(&text);
	return ret;
}
