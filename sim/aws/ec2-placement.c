/*
 * ec2-placement.c: EC2 placement groups (CreatePlacementGroup, DescribePlacementGroups,
 * DeletePlacementGroup) for placement: cluster (docs/internals/fabric.md), and the check
 * RunInstances makes of Placement.GroupName. Called by ec2.c with the world locked.
 * https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreatePlacementGroup.html
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/aws/aws.h"
#include "sim/aws/ec2.h"

static void write_group(struct ec2 *c, const struct sim_placement *pl)
{
	ec2_el(c, "groupName", pl->name);
	ec2_el(c, "state", "available");
	ec2_el(c, "strategy", pl->strategy);
	ec2_el(c, "groupId", pl->id);
	ec2_elf(c, "groupArn", "arn:aws:ec2:%s:123456789012:placement-group/%s", pl->region,
		pl->name);
	ec2_write_tags(c, &pl->tags);
}

static int create_placement_group(struct ec2 *c)
{
	static const char *const types[] = { "placement-group", NULL };
	static const char *const strategies[] = { "cluster", "spread", "partition", NULL };
	const char *name = ec2_param(c, "GroupName"), *strategy = ec2_param(c, "Strategy");
	struct sim_tags tags = { 0 };
	struct sim_placement *pl;
	int ret = -1;

	if (ec2_one_of(c, "Strategy", strategies) ||
	    ec2_tag_specs(c, types, "placement-group", &tags))
		goto out;
	if (name && strlen(name) > 255) {
		ec2_bad_value(c, "GroupName", name);
		goto out;
	}
	if (name && sim_world_placement(c->sim->world, SIM_AWS, c->region, name)) {
		EC2_FAIL400(c, "InvalidPlacementGroup.Duplicate",
			    "The Placement Group '%s' already exists.", name);
		goto out;
	}
	pl = sim_world_create_placement(c->sim->world, SIM_AWS, c->region, NULL, "pg-", name,
					strategy ? strategy : "cluster", &tags);
	if (!name) /* EC2 names an unnamed group after its id */
		snprintf(pl->name, sizeof(pl->name), "%s", pl->id);
	ec2_begin(c);
	ec2_open(c, "placementGroup");
	write_group(c, pl);
	ec2_close(c);
	ret = ec2_finish(c);
out:
	sim_tags_release(&tags);
	return ret;
}

static const char *const pg_filters[] = { "tag:",     "tag-key",  "tag-value", "group-name",
					  "group-id", "strategy", "state",     NULL };

static bool pg_matches(const struct sim_placement *pl, const struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		bool m = false;

		if (ec2_is_tag_filter(f->name))
			m = ec2_tag_filter(f, &pl->tags);
		else if (!strcmp(f->name, "group-name"))
			m = ec2_any_value(f, pl->name);
		else if (!strcmp(f->name, "group-id"))
			m = ec2_any_value(f, pl->id);
		else if (!strcmp(f->name, "strategy"))
			m = ec2_any_value(f, pl->strategy);
		else if (!strcmp(f->name, "state"))
			m = ec2_any_value(f, "available");
		if (!m)
			return false;
	}
	return true;
}

static int describe_placement_groups(struct ec2 *c)
{
	const char **names = NULL, **ids = NULL;
	size_t nn = ec2_list(c, "GroupName", &names), ni = ec2_list(c, "GroupId", &ids), n;
	struct sim_placement **all = NULL;
	struct ec2_filters fs = { 0 };
	int ret = -1;

	if (ec2_get_filters(c, pg_filters, &fs))
		goto out;
	n = sim_world_list_placements(c->sim->world, SIM_AWS, c->region, &all);
	for (size_t i = 0; i < nn + ni; i++) {
		const char *want = i < nn ? names[i] : ids[i - nn];
		bool found = false;

		for (size_t k = 0; k < n && !found; k++)
			found = !strcmp(i < nn ? all[k]->name : all[k]->id, want);
		if (!found) {
			if (i < nn)
				EC2_FAIL400(c, "InvalidPlacementGroup.Unknown",
					    "The Placement Group '%s' is unknown.", want);
			else
				EC2_FAIL400(c, "InvalidPlacementGroup.Unknown",
					    "The Placement Group ID '%s' is unknown.", want);
			goto out;
		}
	}
	ec2_begin(c);
	ec2_open(c, "placementGroupSet");
	for (size_t k = 0; k < n; k++) {
		bool wanted = nn + ni == 0;

		for (size_t i = 0; i < nn; i++)
			wanted = wanted || !strcmp(all[k]->name, names[i]);
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || !strcmp(all[k]->id, ids[i]);
		if (!wanted || !pg_matches(all[k], &fs))
			continue;
		ec2_open(c, "item");
		write_group(c, all[k]);
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(names);
	free(ids);
	free(all);
	ec2_filters_release(&fs);
	return ret;
}

static int delete_placement_group(struct ec2 *c)
{
	const char *name;
	struct sim_placement *pl;

	if (ec2_require(c, "GroupName", &name))
		return -1;
	pl = sim_world_placement(c->sim->world, SIM_AWS, c->region, name);
	if (!pl || strcmp(pl->name, name) != 0)
		return EC2_FAIL400(c, "InvalidPlacementGroup.Unknown",
				   "The Placement Group '%s' is unknown.", name);
	if (sim_world_placement_members(c->sim->world, pl))
		return EC2_FAIL400(c, "InvalidPlacementGroup.InUse",
				   "The placement group '%s' is in use and may not be deleted.",
				   name);
	sim_world_delete_placement(c->sim->world, pl);
	ec2_begin(c);
	ec2_el(c, "return", "true");
	return ec2_finish(c);
}

int ec2_run_placement(struct ec2 *c, const char *zone, unsigned count,
		      const struct sim_placement **out)
{
	const char *name = ec2_param(c, "Placement.GroupName");
	const struct sim_placement *pl;

	*out = NULL;
	if (!name || !*name)
		return 0;
	pl = sim_world_placement(c->sim->world, SIM_AWS, c->region, name);
	if (!pl || strcmp(pl->name, name) != 0)
		return EC2_FAIL400(c, "InvalidPlacementGroup.Unknown",
				   "The Placement Group '%s' is unknown.", name);
	if (!strcmp(pl->strategy, "cluster") &&
	    sim_world_placement_members(c->sim->world, pl) + count > SIM_PLACEMENT_CAPACITY)
		return ec2_fail(c, 500, "InsufficientInstanceCapacity",
				"We currently do not have sufficient capacity to launch your "
				"instances in placement group '%s' in %s. Try again later, or "
				"launch fewer instances in the group.",
				name, zone ? zone : c->region);
	*out = pl;
	return 0;
}

static const char *const p_create[] = { "GroupName",   "Strategy",  "PartitionCount",
					"SpreadLevel", EC2_TAGSPEC, NULL };
static const char *const p_describe[] = { "GroupName.N", "GroupId.N", EC2_FILTERS, NULL };
static const char *const p_delete[] = { "GroupName", NULL };

const struct ec2_action ec2_placement_actions[] = {
	{ "CreatePlacementGroup", create_placement_group, false, p_create, false },
	{ "DeletePlacementGroup", delete_placement_group, false, p_delete, false },
	{ "DescribePlacementGroups", describe_placement_groups, true, p_describe, false },
	{ NULL, NULL, false, NULL, false },
};
