/*
 * quota.c: plan's quota preflight on EC2 (core/quotacheck.h). EC2's instance quotas are
 * vCPUs per region, one per family group and market; Service Quotas' GetServiceQuota
 * (JSON 1.1) gives the limit, the running instances of the group and market (through
 * DescribeInstances) the use. EC2 has no stock API: sold_out stays false.
 * docs/internals/quota.md cites the pages.
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "providers/aws/ec2.h"

#define QUOTAS_TARGET "ServiceQuotasV20190624.GetServiceQuota"
#define QUOTAS_TYPE   "application/x-amz-json-1.1"

/* A family group: its prefixes, its quota codes and names per market. */
struct aws_quota_group {
	const char *prefixes[3];
	const char *od_code, *od_name;
	const char *spot_code, *spot_name;
};

static const struct aws_quota_group groups[] = {
	{ { "p", NULL },
	  "L-417A185B",
	  "Running On-Demand P instances",
	  "L-7212CCBC",
	  "All P Spot Instance Requests" },
	{ { "g", "vt", NULL },
	  "L-DB2E81BA",
	  "Running On-Demand G and VT instances",
	  "L-3819A6DF",
	  "All G and VT Spot Instance Requests" },
};

static const struct aws_quota_group standard = {
	{ NULL },
	"L-1216C47A",
	"Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
	"L-34B43A08",
	"All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests"
};

/* The standard family letters; any other family (inf, trn, dl, f, x, ...) has a quota of
 * its own that the preflight does not read. */
static const char standard_letters[] = "acdhimrtz";

/* The group of an instance type by its family (the letters before the generation's
 * digit), or NULL when its quota is not one of those above. */
const struct aws_quota_group *aws_quota_group_of(const char *type)
{
	size_t n = 0;

	while (type[n] && isalpha((unsigned char)type[n]))
		n++;
	if (n == 0 || !isdigit((unsigned char)type[n]))
		return NULL;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		for (size_t k = 0; groups[i].prefixes[k]; k++)
			if (strlen(groups[i].prefixes[k]) == n &&
			    strncmp(type, groups[i].prefixes[k], n) == 0)
				return &groups[i];
	/* standard: one family letter, maybe with its attribute letters (m5, c6i, r7g, z1d
	 * are "m", "c", "r", "z"; the letters after the digit are not the family) */
	if (n == 1 && strchr(standard_letters, type[0]))
		return &standard;
	return NULL;
}

/* The limit in the GetServiceQuota answer: Quota.Value (a JSON number, vCPUs). */
int aws_quota_parse(const char *body, size_t len, const char *code, int64_t *limit, char *name,
		    size_t name_size, struct gc_error *err)
{
	json_t *doc = json_loadb(body, len, 0, NULL), *q, *v;
	const char *have;
	double d;
	int ret = -1;

	if (!json_is_object(doc)) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "cannot read the GetServiceQuota answer: not a JSON object");
		goto out;
	}
	q = json_object_get(doc, "Quota");
	v = json_object_get(q, "Value");
	have = gc_jstr(q, "QuotaCode");
	if (!json_is_object(q) || !json_is_number(v) || (have && strcmp(have, code) != 0)) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "cannot read the GetServiceQuota answer: no Quota.Value for %s", code);
		goto out;
	}
	d = json_number_value(v);
	if (!isfinite(d) || d < 0 || d > 1e15) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "cannot read the GetServiceQuota answer: Quota.Value is not a count");
		goto out;
	}
	*limit = (int64_t)floor(d);
	if (name && gc_jstr(q, "QuotaName"))
		snprintf(name, name_size, "%s", gc_jstr(q, "QuotaName"));
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

static int get_quota(struct gc_provider *p, const char *code, int64_t *limit, char *name,
		     size_t name_size, struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	json_t *req = json_pack("{s:s, s:s}", "ServiceCode", "ec2", "QuotaCode", code);
	char *text = json_dumps(req, JSON_COMPACT);
	struct gc_buf body = GC_BUF_INIT(1);
	struct aws_call c;
	int ret;

	json_decref(req);
	memset(&c, 0, sizeof(c));
	c.proto = AWS_PROTO_JSON;
	c.service = "servicequotas";
	c.region = d->cfg.region;
	c.url = d->cfg.quotas_endpoint;
	c.host = d->quotas_host;
	c.action = "GetServiceQuota";
	c.target = QUOTAS_TARGET;
	c.content_type = QUOTAS_TYPE;
	c.body = text;
	c.body_len = text ? strlen(text) : 0;
	ret = aws_send(p, &c, &body, err);
	free(text);
	if (ret == 0)
		ret = aws_quota_parse(body.data, body.len, code, limit, name, name_size, err);
	gc_buf_release(&body);
	return ret;
}

/* The vCPUs the running (and pending) instances of group g and the market take. */
static int use_of(struct gc_provider *p, const struct aws_quota_group *g, bool spot, int64_t *out,
		  struct gc_error *err)
{
	struct gc_discover_query q = { NULL, 0, false };
	struct gc_instance_list list;
	int ret = -1;

	*out = 0;
	gc_instance_list_init(&list);
	if (aws_discover(p, &q, &list, err) != 0)
		goto out;
	for (size_t i = 0; i < list.n; i++) {
		const struct gc_instance *inst = &list.items[i];
		struct gc_type_facts facts;

		if ((inst->state != GC_STATE_PENDING && inst->state != GC_STATE_RUNNING) ||
		    inst->spot != spot || !inst->type || aws_quota_group_of(inst->type) != g)
			continue;
		if (gc_provider_instance_type(p, inst->type, &facts, err) != 0) {
			gc_error_prefix(err, "cannot count the vCPUs of instance '%s'", inst->id);
			goto out;
		}
		*out += facts.vcpus;
	}
	ret = 0;
out:
	gc_instance_list_release(&list);
	return ret;
}

int aws_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
	      struct gc_quota *out, struct gc_error *err)
{
	const struct aws_quota_group *g = aws_quota_group_of(type);
	const char *code, *name;
	char cloud_name[96] = "";
	struct gc_type_facts facts;

	(void)zone; /* EC2's vCPU quotas are the region's */
	if (!g)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "the vCPU quota of instance type '%s' is not read", type);
	code = spot ? g->spot_code : g->od_code;
	name = spot ? g->spot_name : g->od_name;
	if (get_quota(p, code, &out->limit, cloud_name, sizeof(cloud_name), err) != 0 ||
	    use_of(p, g, spot, &out->used, err) != 0 ||
	    gc_provider_instance_type(p, type, &facts, err) != 0)
		return -1;
	snprintf(out->name, sizeof(out->name), "%s (%s)", cloud_name[0] ? cloud_name : name, code);
	snprintf(out->unit, sizeof(out->unit), "vCPUs");
	snprintf(out->where, sizeof(out->where),
		 "Service Quotas, Amazon EC2, quota %s in %s (request a quota increase)", code,
		 p->region);
	out->per_node = facts.vcpus;
	out->sold_out = false;
	return 0;
}
