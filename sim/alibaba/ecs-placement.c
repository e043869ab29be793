/*
 * ecs-placement.c: ECS deployment sets (CreateDeploymentSet, DescribeDeploymentSets,
 * DeleteDeploymentSet) for placement: cluster (docs/internals/fabric.md), and the check
 * RunInstances makes of DeploymentSetId. Runs with the world lock held (see ecs.c).
 * A deployment set takes no tags: it is known by its name and id.
 * https://help.aliyun.com/document_detail/91269.html (create),
 * https://www.alibabacloud.com/help/doc-detail/91311.htm (delete),
 * https://help.aliyun.com/document_detail/91313.html (describe),
 * https://www.alibabacloud.com/help/doc-detail/91677.htm (the set's errors)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/alibaba/ecs.h"

static int create_deployment_set(struct ecs_call *c)
{
	static const char *const strategies[] = { "Availability", "AvailabilityGroup", "LowLatency",
						  NULL };
	const char *name = ecs_get(c, "DeploymentSetName"), *desc = ecs_get(c, "Description");
	const char *strategy = ecs_get(c, "Strategy"), *token = ecs_get(c, "ClientToken");
	struct sim_placement *pl;
	bool known = !strategy;

	for (size_t i = 0; strategies[i] && !known; i++)
		known = !strcmp(strategy, strategies[i]);
	if (!known)
		return ecs_fail(c, 400, "InvalidParameter.Strategy",
				"The specified parameter Strategy is not valid: '%s'.", strategy);
	if (name && !ecs_name_ok(name, ":_-"))
		return ecs_fail(c, 400, "InvalidDeploymentSetName.Malformed",
				"The specified DeploymentSetName is not valid.");
	if (desc &&
	    (strlen(desc) < 2 || strlen(desc) > 256 || gc_starts_with(desc, "http://") ||
	     gc_starts_with(desc, "https://")))
		return ecs_fail(c, 400, "InvalidDescription.Malformed",
				"The specified Description is not valid.");
	/* ClientToken: a retried creation answers the set it made */
	for (size_t i = 0; token && i < c->sim->world->n_placements; i++) {
		pl = c->sim->world->placements[i];
		if (pl->cloud == SIM_ALIBABA && !strcmp(pl->region, c->region) &&
		    !strcmp(pl->token, token)) {
			c->out = json_pack("{s:s}", "DeploymentSetId", pl->id);
			return 0;
		}
	}
	pl = sim_world_create_placement(c->sim->world, SIM_ALIBABA, c->region, NULL, "ds-", name,
					strategy ? strategy : "Availability", NULL);
	snprintf(pl->description, sizeof(pl->description), "%s", desc ? desc : "");
	snprintf(pl->token, sizeof(pl->token), "%s", token ? token : "");
	c->out = json_pack("{s:s}", "DeploymentSetId", pl->id);
	return 0;
}

static json_t *set_json(struct ecs_call *c, const struct sim_placement *pl)
{
	struct sim_world *w = c->sim->world;
	json_t *ids = json_array();
	char created[32];

	for (size_t i = 0; i < w->n_instances; i++) {
		const struct sim_instance *in = w->instances[i];

		if (in->cloud == SIM_ALIBABA && in->state != SIM_TERMINATED &&
		    !strcmp(in->placement, pl->id))
			json_array_append_new(ids, json_string(in->id));
	}
	ecs_format_time(pl->created_wall, false, created);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:{s:o}}", "DeploymentSetId", pl->id,
			 "DeploymentSetName", pl->name, "DeploymentSetDescription", pl->description,
			 "Strategy", pl->strategy, "DeploymentStrategy", pl->strategy,
			 "CreationTime", created, "InstanceAmount", (int)json_array_size(ids),
			 "InstanceIds", "InstanceId", ids);
}

static int describe_deployment_sets(struct ecs_call *c)
{
	const char *name = ecs_get(c, "DeploymentSetName"), *strategy = ecs_get(c, "Strategy");
	struct sim_placement **all = NULL;
	json_t *ids = NULL, *list = json_array();
	uint64_t page, size;
	size_t n, total = 0;
	int rc = -1;

	if (ecs_json_ids(c, "DeploymentSetIds", 100, &ids) ||
	    ecs_uint(c, "PageNumber", 1, UINT32_MAX, 1, &page) ||
	    ecs_uint(c, "PageSize", 1, 50, 10, &size))
		goto out;
	n = sim_world_list_placements(c->sim->world, SIM_ALIBABA, c->region, &all);
	for (size_t i = 0; i < n; i++) {
		bool wanted = !ids;
		size_t k, pos;
		json_t *v;

		json_array_foreach(ids, k, v) wanted =
			wanted || !strcmp(json_string_value(v), all[i]->id);
		if (!wanted || (name && strcmp(name, all[i]->name)) ||
		    (strategy && strcmp(strategy, all[i]->strategy)))
			continue;
		pos = total++;
		if (pos >= (page - 1) * size && pos < page * size)
			json_array_append_new(list, set_json(c, all[i]));
	}
	c->out = json_pack("{s:{s:o}, s:i, s:i, s:i, s:s}", "DeploymentSets", "DeploymentSet", list,
			   "TotalCount", (int)total, "PageNumber", (int)page, "PageSize", (int)size,
			   "RegionId", c->region);
	list = NULL;
	rc = 0;
out:
	json_decref(list);
	json_decref(ids);
	free(all);
	return rc;
}

static int delete_deployment_set(struct ecs_call *c)
{
	const char *id;
	struct sim_placement *pl;

	if (ecs_need(c, "DeploymentSetId", &id))
		return -1;
	pl = sim_world_placement(c->sim->world, SIM_ALIBABA, c->region, id);
	if (!pl || strcmp(pl->id, id) != 0)
		return ecs_fail(c, 400, "DeploymentSet.InvalidId",
				"The specified Deployment Set id doesn't exist.");
	if (sim_world_placement_members(c->sim->world, pl))
		return ecs_fail(c, 403, "DependencyViolation.NotEmpty",
				"There are still instance(s) in the specified DeploymentSetId.");
	sim_world_delete_placement(c->sim->world, pl);
	c->out = json_object();
	return 0;
}

int ecs_run_placement(struct ecs_call *c, unsigned count, const struct sim_placement **out)
{
	const char *id = ecs_get(c, "DeploymentSetId");
	const struct sim_placement *pl;

	*out = NULL;
	if (!id || !*id)
		return 0;
	pl = sim_world_placement(c->sim->world, SIM_ALIBABA, c->region, id);
	if (!pl || strcmp(pl->id, id) != 0)
		return ecs_fail(c, 400, "DeploymentSet.InvalidId",
				"The specified Deployment Set id doesn't exist.");
	if (sim_world_placement_members(c->sim->world, pl) + count > SIM_PLACEMENT_CAPACITY)
		return ecs_fail(c, 403, "DeploymentSet.InstanceLimitExceeded",
				"The number of instances on the specified Deployment Set has "
				"reached the limit.");
	*out = pl;
	return 0;
}

static const struct ecs_param create_params[] = {
	{ "RegionId", 0 },    { "DeploymentSetName", 0 },
	{ "Description", 0 }, { "Strategy", 0 },
	{ "Domain", 0 },      { "Granularity", 0 },
	{ "GroupCount", 0 },  { "OnUnableToRedeployFailedInstance", 0 },
	{ "ClientToken", 0 }, { NULL, 0 },
};

static const struct ecs_param describe_params[] = {
	{ "RegionId", 0 },    { "DeploymentSetIds", 0 }, { "DeploymentSetName", 0 },
	{ "Strategy", 0 },    { "NetworkType", 0 },	 { "Domain", 0 },
	{ "Granularity", 0 }, { "PageNumber", 0 },	 { "PageSize", 0 },
	{ NULL, 0 },
};

static const struct ecs_param delete_params[] = {
	{ "RegionId", 0 },
	{ "DeploymentSetId", 0 },
	{ NULL, 0 },
};

const struct ecs_action ecs_placement_actions[] = {
	{ "CreateDeploymentSet", create_deployment_set, create_params, true },
	{ "DescribeDeploymentSets", describe_deployment_sets, describe_params, true },
	{ "DeleteDeploymentSet", delete_deployment_set, delete_params, true },
	{ NULL, NULL, NULL, false },
};
