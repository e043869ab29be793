/*
 * cvm-hpc.c: CVM high-performance computing clusters (CreateHpcCluster, DescribeHpcClusters,
 * DeleteHpcClusters) for placement: cluster (docs/internals/fabric.md), and the check
 * RunInstances makes of HpcClusterId. Runs with the world lock held (see cvm.c).
 * https://cloud.tencent.com/document/api/213/83222 (create),
 * https://cloud.tencent.com/document/api/213/83220 (describe),
 * https://cloud.tencent.com/document/api/213/83221 (delete); error codes from
 * tencentcloud-sdk-go cvm/v20170312/errors.go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tencent/cvm.h"

static json_t *hpc_json(struct tc_call *c, const struct sim_placement *pl)
{
	struct sim_world *w = c->sim->world;
	json_t *ids = json_array();
	char created[32];

	for (size_t i = 0; i < w->n_instances; i++) {
		const struct sim_instance *in = w->instances[i];

		if (in->cloud == SIM_TENCENT && in->state != SIM_TERMINATED &&
		    !strcmp(in->placement, pl->id))
			json_array_append_new(ids, json_string(in->id));
	}
	tc_format_time(pl->created_wall, true, created);
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:s, s:o, s:s, s:s, s:o}", "HpcClusterId",
			 pl->id, "Name", pl->name, "Remark", pl->description, "CvmQuotaTotal",
			 SIM_PLACEMENT_CAPACITY, "Zone", pl->zone, "CurrentNum",
			 (int)json_array_size(ids), "CreateTime", created, "InstanceIds", ids,
			 "HpcClusterType", "STANDARD", "HpcClusterBusinessId", "", "Tags",
			 tc_tags_json(&pl->tags));
}

static int create_hpc_cluster(struct tc_call *c)
{
	const char *zone, *name, *remark = tc_str(c, "Remark");
	const char *type = tc_str(c, "HpcClusterType");
	struct sim_tags tags = { 0 };
	struct sim_placement *pl;

	if (tc_need_str(c, "Zone", &zone) || tc_need_str(c, "Name", &name))
		return -1;
	if (!sim_catalog_zone_ok(sim_catalog_region(SIM_TENCENT, c->region), zone))
		return tc_fail(c, "InvalidZone.MismatchRegion", "The zone `%s` does not exist.",
			       zone);
	if (!*name || strlen(name) > 60)
		return tc_fail(c, "InvalidParameterValue",
			       "The HPC cluster name must be 1 to 60 characters.");
	if (remark && (!*remark || strlen(remark) > 256))
		return tc_fail(c, "InvalidParameterValue",
			       "The HPC cluster remark must be 1 to 256 characters.");
	if (type && strcmp(type, "STANDARD") && strcmp(type, "CDC") && strcmp(type, "CHC"))
		return tc_fail(c, "InvalidParameterValue",
			       "The HpcClusterType `%s` is not one of CDC, CHC, STANDARD.", type);
	tc_tag_spec(c, "hpc", &tags);
	pl = sim_world_create_placement(c->sim->world, SIM_TENCENT, c->region, zone, "hpc-", name,
					"STANDARD", &tags);
	sim_tags_release(&tags);
	snprintf(pl->description, sizeof(pl->description), "%s", remark ? remark : "");
	c->out = json_pack("{s:[o]}", "HpcClusterSet", hpc_json(c, pl));
	return 0;
}

static int describe_hpc_clusters(struct tc_call *c)
{
	static const char *const names[] = { "tag-key", "tag-value", "tag:", NULL };
	const char *name = tc_str(c, "Name"), *zone = tc_str(c, "Zone");
	json_t *ids = tc_get(c, "HpcClusterIds"), *list;
	struct sim_placement **all = NULL;
	int64_t offset, limit;
	size_t n, total = 0;

	if (json_array_size(ids) > 100)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most 100 HpcClusterIds are allowed.");
	if (tc_check_filters(c, names, 10, 5) || tc_paging(c, 20, 100, &offset, &limit))
		return -1;
	list = json_array();
	n = sim_world_list_placements(c->sim->world, SIM_TENCENT, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		bool wanted = !ids;
		size_t pos;

		for (size_t k = 0; k < json_array_size(ids); k++)
			wanted |= !strcmp(json_string_value(json_array_get(ids, k)), all[i]->id);
		if (!wanted || (name && strcmp(name, all[i]->name)) ||
		    (zone && strcmp(zone, all[i]->zone)) || !tc_filter_tags(c, &all[i]->tags))
			continue;
		pos = total++;
		if (pos >= (size_t)offset && pos < (size_t)(offset + limit))
			json_array_append_new(list, hpc_json(c, all[i]));
	}
	free(all);
	c->out = json_pack("{s:i, s:o}", "TotalCount", (int)total, "HpcClusterSet", list);
	return 0;
}

static int delete_hpc_clusters(struct tc_call *c)
{
	json_t *ids = tc_get(c, "HpcClusterIds");
	size_t n = json_array_size(ids);

	if (!n)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `HpcClusterIds`.");
	/* all or nothing: every cluster is checked before any is deleted */
	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(ids, i));
		struct sim_placement *pl =
			id ? sim_world_placement(c->sim->world, SIM_TENCENT, c->region, id) : NULL;

		if (!pl || strcmp(pl->id, id))
			return tc_fail(c, "ResourceNotFound.HpcCluster",
				       "The HPC cluster `%s` does not exist.", id ? id : "");
		if (sim_world_placement_members(c->sim->world, pl))
			return tc_fail(c, "ResourceInUse.HpcCluster",
				       "The HPC cluster `%s` still has instances.", id);
	}
	for (size_t i = 0; i < n; i++)
		sim_world_delete_placement(
			c->sim->world,
			sim_world_placement(c->sim->world, SIM_TENCENT, c->region,
					    json_string_value(json_array_get(ids, i))));
	c->out = json_object();
	return 0;
}

int tc_run_placement(struct tc_call *c, const char *zone, const struct sim_itype *itype,
		     unsigned count, const struct sim_placement **out)
{
	const char *id = tc_str(c, "HpcClusterId");
	const struct sim_placement *pl;

	*out = NULL;
	if ((!id || !*id) && itype && !strncmp(itype->family, "HCC", 3))
		return tc_fail(c, "InvalidParameterValue.InstanceTypeRequiredHpcCluster",
			       "The instance type `%s` must be launched in an HPC cluster "
			       "(HpcClusterId).",
			       itype->name);
	if (!id || !*id)
		return 0;
	pl = sim_world_placement(c->sim->world, SIM_TENCENT, c->region, id);
	if (!pl || strcmp(pl->id, id))
		return tc_fail(c, "ResourceNotFound.HpcCluster",
			       "The HPC cluster `%s` does not exist.", id);
	if (!itype || strncmp(itype->family, "HCC", 3))
		return tc_fail(c, "InvalidParameterValue.InstanceTypeNotSupportHpcCluster",
			       "The instance type `%s` cannot join an HPC cluster.",
			       itype ? itype->name : "");
	if (zone && strcmp(zone, pl->zone))
		return tc_fail(c, "InvalidParameterValue.HpcClusterIdZoneIdNotMatch",
			       "The HPC cluster `%s` is in `%s`, not in `%s`.", id, pl->zone, zone);
	/* CVM documents no code of its own for a full cluster: the type's stock-out */
	if (sim_world_placement_members(c->sim->world, pl) + count > SIM_PLACEMENT_CAPACITY)
		return tc_fail(c, "ResourceInsufficient.SpecifiedInstanceType",
			       "The specified instance type `%s` is sold out in HPC cluster `%s`.",
			       itype->name, id);
	*out = pl;
	return 0;
}

static const struct tc_field f_tag_spec[] = {
	{ "ResourceType", TC_STR, NULL },
	{ "Tags", TC_ARR_OBJ, tc_tag_schema },
	{ NULL, 0, NULL },
};
static const struct tc_field s_create[] = {
	{ "Zone", TC_STR, NULL },
	{ "Name", TC_STR, NULL },
	{ "Remark", TC_STR, NULL },
	{ "HpcClusterType", TC_STR, NULL },
	{ "HpcClusterBusinessId", TC_STR, NULL },
	{ "TagSpecification", TC_ARR_OBJ, f_tag_spec },
	{ NULL, 0, NULL },
};
static const struct tc_field s_describe[] = {
	{ "HpcClusterIds", TC_ARR_STR, NULL },
	{ "Name", TC_STR, NULL },
	{ "Zone", TC_STR, NULL },
	{ "Offset", TC_INT, NULL },
	{ "Limit", TC_INT, NULL },
	{ "HpcClusterType", TC_STR, NULL },
	{ "HpcClusterBusinessId", TC_STR, NULL },
	{ "InstanceType", TC_STR, NULL },
	{ "Filters", TC_ARR_OBJ, tc_filter_schema },
	{ NULL, 0, NULL },
};
static const struct tc_field s_delete[] = {
	{ "HpcClusterIds", TC_ARR_STR, NULL },
	{ NULL, 0, NULL },
};

const struct tc_action tc_hpc_actions[] = {
	{ "CreateHpcCluster", create_hpc_cluster, s_create, true },
	{ "DescribeHpcClusters", describe_hpc_clusters, s_describe, true },
	{ "DeleteHpcClusters", delete_hpc_clusters, s_delete, true },
	{ NULL, NULL, NULL, false },
};
