/*
 * ecs.h: the pieces the Alibaba ECS frontend's files share (private to sim/alibaba).
 *
 * ecs.c verifies the request (ACS3-HMAC-SHA256 or RPC HMAC-SHA1), checks the parameter
 * names strictly against the action's table, consults the faults, takes the world lock
 * and calls the action; ecs-instances.c, ecs-resources.c and ecs-catalog.c hold the
 * actions. An action runs with the world lock held and either fills call->out (the
 * success body, RequestId is added afterwards) or answers an error with ecs_fail.
 *
 * The same port also serves two more Alibaba products, told apart by the API version the
 * request names: VPC 2016-04-28 (vpc.c: the default VPC and its vSwitches, read only)
 * and STS 2015-04-01 (sts.c: AssumeRole, whose temporary keys every product accepts).
 *
 * A struct ecs_call lives on sim_ecs_handle's stack for one request.
 */
#ifndef GC_SIM_ECS_H
#define GC_SIM_ECS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"

struct ecs_call {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	const char *action;
	const char *product;	 /* "ecs", "vpc" or "sts": what the version names */
	char caller[128];	 /* the access key id that signed, once verified */
	bool caller_temporary;	 /* an STS key (sts.c) */
	struct gc_params params; /* the action's parameters, common ones left out */
	const char *region;	 /* RegionId, checked against the catalogue; NULL if none */
	char request_id[37];
	json_t *out; /* the success body, NULL until an action sets it */
	bool failed;
};

/* A parameter-name pattern (see sim_param_match) and the largest N it allows. */
struct ecs_param {
	const char *pattern;
	unsigned max;
};

struct ecs_action {
	const char *name;
	int (*run)(struct ecs_call *c);
	const struct ecs_param *params; /* terminated by a NULL pattern */
	bool region_required;
};

/* Every action, terminated by a NULL name (ecs-actions tables live with the actions). */
extern const struct ecs_action ecs_instance_actions[];
extern const struct ecs_action ecs_resource_actions[];
extern const struct ecs_action ecs_catalog_actions[];
extern const struct ecs_action ecs_placement_actions[];
extern const struct ecs_action ecs_vpc_actions[]; /* version 2016-04-28 */
extern const struct ecs_action ecs_sts_actions[]; /* version 2015-04-01 */

#define ECS_VERSION "2014-05-26"
#define VPC_VERSION "2016-04-28"
#define STS_VERSION "2015-04-01"

/* --- vpc.c: every region's default VPC, one default vSwitch per zone ------------------ */

#define ECS_DEFAULT_VPC "vpc-gpuclustersim"

/* Whether id is a VPC of the call's region: the default one (unless --no-default-vpc) or
 * the user's (sim/network.h). */
bool ecs_vpc_exists(const struct ecs_call *c, const char *id);
/* The zone of vSwitch id in the call's region, or NULL when there is no such vSwitch; its
 * VPC into vpc. */
const char *ecs_vswitch_zone(const struct ecs_call *c, const char *id, char vpc[SIM_ID_MAX]);

/* --- sts.c: temporary credentials ----------------------------------------------------- */

/* The identity provider the emulator's Alibaba account has for its OIDC issuer. */
#define SIM_OIDC_ALIBABA_PROVIDER "acs:ram::5123456789012345:oidc-provider/gpucluster-sim"

#define ECS_STS_SECRET_MAX 64

/*
 * The secret of an STS key id ("STS.…") when token is the security token issued with it
 * and has not expired at now (unix seconds); NULL otherwise, with *code set to the
 * error ECS answers (MissingSecurityToken, InvalidSecurityToken.Malformed,
 * InvalidSecurityToken.MismatchWithAccessKey, InvalidSecurityToken.Expired).
 */
const char *ecs_sts_secret(const struct sim *sim, const char *key_id, const char *token,
			   int64_t now, char out[ECS_STS_SECRET_MAX], const char **code);

/* Answers the ECS error: HTTP status and {"RequestId","HostId","Code","Message",
 * "Recommend"}. Returns -1 so actions can `return ecs_fail(...)`. */
int ecs_fail(struct ecs_call *c, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The parameter's value, or NULL. */
const char *ecs_get(const struct ecs_call *c, const char *name);
/* A required parameter: MissingParameter when absent or empty. */
int ecs_need(struct ecs_call *c, const char *name, const char **out);
/* An unsigned parameter in min..max (def when absent): InvalidParameter otherwise. */
int ecs_uint(struct ecs_call *c, const char *name, uint64_t min, uint64_t max, uint64_t def,
	     uint64_t *out);
/* A boolean "true"/"false" (def when absent). */
int ecs_bool(struct ecs_call *c, const char *name, bool def, bool *out);
/* Tag.N.Key / Tag.N.Value (prefix "Tag") into tags. */
int ecs_tags(struct ecs_call *c, const char *prefix, struct sim_tags *tags);
/* A JSON-array-of-strings parameter (InstanceIds, KeyPairNames) with at most max items;
 * *out is NULL when the parameter is absent, else a new reference. */
int ecs_json_ids(struct ecs_call *c, const char *name, size_t max, json_t **out);
/* The values of an indexed list "Prefix.N" (1..max) in index order; a new array. */
json_t *ecs_list(const struct ecs_call *c, const char *prefix, unsigned max);

/* yyyy-MM-ddTHH:mm:ssZ (seconds may be absent) to Unix seconds; -1 when malformed. */
int ecs_parse_time(const char *s, int64_t *out);
/* Unix seconds to yyyy-MM-ddTHH:mmZ (minutes) or yyyy-MM-ddTHH:mm:ssZ (seconds). */
void ecs_format_time(int64_t t, bool seconds, char out[32]);
/* ECS's rule for a name: 2-128 characters, a letter first, not a URL; letters, digits and
 * the characters of punct. */
bool ecs_name_ok(const char *s, const char *punct);
/* '*' wildcard match (any run of characters), case-sensitive. */
bool ecs_wildcard(const char *pattern, const char *s);

/* {"Tag":[{"TagKey","TagValue"}...]} */
json_t *ecs_tags_json(const struct sim_tags *t);
/* Whether t carries every Tag.N.Key (and Tag.N.Value when given) of the request. */
bool ecs_tags_match(const struct ecs_call *c, const struct sim_tags *t);

/* An opaque NextToken for a listing position, and back. */
void ecs_next_token(uint64_t seq, char out[40]);
int ecs_parse_next_token(struct ecs_call *c, uint64_t *seq);

/* ecs-placement.c: RunInstances' DeploymentSetId: the set (*out; NULL when none is named),
 * or DeploymentSet.InvalidId, or DeploymentSet.InstanceLimitExceeded when count more do not
 * fit in it (-1). */
int ecs_run_placement(struct ecs_call *c, unsigned count, const struct sim_placement **out);

/* What the cloud sells (offer.c), for its row of the frontend table. */
extern const struct sim_catalog sim_alibaba_offer;

#endif
