/*
 * quota.c: plan's quota preflight on ECS (core/quotacheck.h). DescribeAccountAttributes
 * gives the account's vCPU quotas per market (max-/used-postpaid-instance-vcpu-count,
 * max-/used-spot-instance-vcpu-count); DescribeAvailableResource gives the stock (Status
 * SoldOut). docs/internals/quota.md cites the pages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/driver.h"
#include "providers/alibaba/ecs.h"

static int bad(const char *action, const char *what, struct gc_error *err)
{
	return gc_error_set(err, GC_EBADRESPONSE, "cannot read the %s answer: %s", action, what);
}

static json_t *answer(const struct gc_buf *body)
{
	json_t *j = json_loadb(body->data, body->len, 0, NULL);

	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* A count as ECS writes it: a decimal string. */
static bool count_of(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0)
		return false;
	*out = v;
	return true;
}

static int attributes(struct gc_provider *p, bool spot, struct gc_quota *out, struct gc_error *err)
{
	static const char action[] = "DescribeAccountAttributes";
	const char *market = spot ? "spot" : "postpaid";
	char max_name[64], used_name[64];
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *item;
	bool have_max = false, have_used = false;
	size_t i;
	int ret;

	snprintf(max_name, sizeof(max_name), "max-%s-instance-vcpu-count", market);
	snprintf(used_name, sizeof(used_name), "used-%s-instance-vcpu-count", market);
	gc_params_add(&params, "AttributeName.1", max_name);
	gc_params_add(&params, "AttributeName.2", used_name);
	ret = ali_ecs_call(p, action, &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret != 0)
		return -1;
	ret = -1;
	if (!(j = answer(&body))) {
		bad(action, "not a JSON object", err);
		goto out;
	}
	json_array_foreach(json_object_get(json_object_get(j, "AccountAttributeItems"),
					   "AccountAttributeItem"),
			   i, item)
	{
		const char *name = gc_jstr(item, "AttributeName");
		json_t *v = json_array_get(
			json_object_get(json_object_get(item, "AttributeValues"), "ValueItem"), 0);
		bool is_max = name && !strcmp(name, max_name);

		if (!name || (!is_max && strcmp(name, used_name) != 0))
			continue;
		if (!count_of(gc_jstr(v, "Value"), is_max ? &out->limit : &out->used)) {
			bad(action, "an attribute without a count in Value", err);
			goto out;
		}
		*(is_max ? &have_max : &have_used) = true;
	}
	if (!have_max || !have_used) {
		bad(action, "no AccountAttributeItems for the vCPU quota", err);
		goto out;
	}
	snprintf(out->name, sizeof(out->name), "%s", max_name);
	snprintf(out->unit, sizeof(out->unit), "vCPUs");
	snprintf(out->where, sizeof(out->where),
		 "Alibaba Cloud's Quota Center (ECS, %s vCPUs in %s)",
		 spot ? "spot instance" : "pay-as-you-go instance", p->region);
	ret = 0;
out:
	json_decref(j);
	gc_buf_release(&body);
	return ret;
}

/* Whether every zone (or zone) selling type says SoldOut for it. */
static int sold_out(struct gc_provider *p, const char *type, const char *zone, bool spot, bool *out,
		    struct gc_error *err)
{
	static const char action[] = "DescribeAvailableResource";
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	json_t *j = NULL, *z, *r, *s;
	size_t i, k, m, rows = 0, sold = 0;
	int ret;

	gc_params_add(&params, "DestinationResource", "InstanceType");
	gc_params_add(&params, "InstanceType", type);
	gc_params_add(&params, "InstanceChargeType", "PostPaid");
	if (spot)
		gc_params_add(&params, "SpotStrategy", "SpotAsPriceGo");
	if (zone)
		gc_params_add(&params, "ZoneId", zone);
	ret = ali_ecs_call(p, action, &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret != 0)
		return -1;
	if (!(j = answer(&body))) {
		gc_buf_release(&body);
		return bad(action, "not a JSON object", err);
	}
	json_array_foreach(json_object_get(json_object_get(j, "AvailableZones"), "AvailableZone"),
			   i, z){ json_array_foreach(
		json_object_get(json_object_get(z, "AvailableResources"), "AvailableResource"), k,
		r){ json_array_foreach(
		json_object_get(json_object_get(r, "SupportedResources"), "SupportedResource"), m,
		s){ const char *value = gc_jstr(s, "Value"), *status = gc_jstr(s, "Status");

	if (!value || strcmp(value, type) != 0)
		continue;
	rows++;
	sold += status && !strcmp(status, "SoldOut");
}
}
}
*out = rows > 0 && sold == rows;
json_decref(j);
gc_buf_release(&body);
return 0;
}

int ali_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
	      struct gc_quota *out, struct gc_error *err)
{
	struct gc_type_facts facts;

	if (attributes(p, spot, out, err) != 0 ||
	    gc_provider_instance_type(p, type, &facts, err) != 0)
		return -1;
	out->per_node = facts.vcpus;
	return sold_out(p, type, zone, spot, &out->sold_out, err);
}
