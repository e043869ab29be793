/*
 * quota.c: plan's quota preflight on CVM (core/quotacheck.h). DescribeAccountQuota gives
 * the account's instance-count quotas per zone and market (PostPaidQuotaSet,
 * SpotPaidQuotaSet: TotalQuota, UsedQuota); DescribeZoneInstanceConfigInfos gives the
 * stock (Status SOLD_OUT). docs/internals/quota.md cites the pages.
 */
#include <stdio.h>
#include <string.h>

#include "core/driver.h"
#include "providers/tencent/cvm.h"

static json_t *filter(const char *name, const char *value)
{
	return json_pack("{s:s, s:[s]}", "Name", name, "Values", value);
}

static int bad(struct gc_provider *p, const char *action, const char *what, struct gc_error *err)
{
	return gc_error_set(err, GC_EBADRESPONSE, "cannot read the %s answer from '%s': %s", action,
			    tc_driver(p)->cvm_host, what);
}

static bool count_ok(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0;
}

/* The market's quota in zone (NULL: the region's zones summed) into out. */
static int account_quota(struct gc_provider *p, const char *zone, bool spot, struct gc_quota *out,
			 struct gc_error *err)
{
	static const char action[] = "DescribeAccountQuota";
	const char *set_name = spot ? "SpotPaidQuotaSet" : "PostPaidQuotaSet";
	json_t *filters = json_pack("[o]", filter("quota-type", set_name)), *resp = NULL, *set,
	       *row;
	json_t *params;
	size_t i, rows = 0;
	int ret;

	if (zone)
		json_array_append_new(filters, filter("zone", zone));
	params = json_pack("{s:o}", "Filters", filters);
	ret = tc_call(p, TC_CVM, action, params, false, &resp, err);
	json_decref(params);
	if (ret != 0)
		return -1;
	set = json_object_get(
		json_object_get(json_object_get(resp, "AccountQuotaOverview"), "AccountQuota"),
		set_name);
	ret = -1;
	if (!json_is_array(set)) {
		bad(p, action, "no AccountQuotaOverview.AccountQuota list", err);
		goto out;
	}
	json_array_foreach(set, i, row)
	{
		const char *z = gc_jstr(row, "Zone");

		if (!z || !count_ok(json_object_get(row, "TotalQuota")) ||
		    !count_ok(json_object_get(row, "UsedQuota"))) {
			bad(p, action, "a quota row without Zone, TotalQuota or UsedQuota", err);
			goto out;
		}
		if (zone && strcmp(z, zone) != 0)
			continue;
		out->limit += json_integer_value(json_object_get(row, "TotalQuota"));
		out->used += json_integer_value(json_object_get(row, "UsedQuota"));
		rows++;
	}
	if (!rows) {
		bad(p, action, "no quota row for the zone", err);
		goto out;
	}
	snprintf(out->name, sizeof(out->name), "%s in %s", set_name, zone ? zone : p->region);
	snprintf(out->unit, sizeof(out->unit), "instances");
	snprintf(out->where, sizeof(out->where),
		 "the CVM console's quota page (Quotas), or a ticket to Tencent Cloud");
	out->per_node = 1;
	ret = 0;
out:
	json_decref(resp);
	return ret;
}

/* Whether every zone (or zone) that sells type in the market says SOLD_OUT. */
static int sold_out(struct gc_provider *p, const char *type, const char *zone, bool spot, bool *out,
		    struct gc_error *err)
{
	static const char action[] = "DescribeZoneInstanceConfigInfos";
	json_t *filters =
		json_pack("[o, o]", filter("instance-type", type),
			  filter("instance-charge-type", spot ? "SPOTPAID" : "POSTPAID_BY_HOUR"));
	json_t *params, *resp = NULL, *set, *row;
	size_t i, sold = 0, rows = 0;
	int ret;

	if (zone)
		json_array_append_new(filters, filter("zone", zone));
	params = json_pack("{s:o}", "Filters", filters);
	ret = tc_call(p, TC_CVM, action, params, false, &resp, err);
	json_decref(params);
	if (ret != 0)
		return -1;
	ret = -1;
	if (!json_is_array(set = json_object_get(resp, "InstanceTypeQuotaSet"))) {
		bad(p, action, "no InstanceTypeQuotaSet", err);
		goto out;
	}
	json_array_foreach(set, i, row)
	{
		const char *status = gc_jstr(row, "Status"), *t = gc_jstr(row, "InstanceType");

		if (!status || !t) {
			bad(p, action, "a row without Status or InstanceType", err);
			goto out;
		}
		if (strcmp(t, type) != 0)
			continue;
		rows++;
		sold += strcmp(status, "SOLD_OUT") == 0;
	}
	*out = rows > 0 && sold == rows;
	ret = 0;
out:
	json_decref(resp);
	return ret;
}

int tc_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
	     struct gc_quota *out, struct gc_error *err)
{
	if (account_quota(p, zone, spot, out, err) != 0)
		return -1;
	return sold_out(p, type, zone, spot, &out->sold_out, err);
}
