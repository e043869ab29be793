/*
 * cvm.h: the pieces the Tencent Cloud frontend's files share (private to sim/tencent).
 *
 * cvm.c reads the request (JSON POST, or GET with 0-based flattened parameters),
 * verifies TC3-HMAC-SHA256, checks the body against the action's schema (unknown keys
 * are UnknownParameter, wrong JSON types InvalidParameter), consults the faults and runs
 * the action with the world locked. cvm-actions.c holds the CVM actions, vpc.c the VPC
 * actions (security groups, the default VPC and its subnets) and sts.c STS's
 * AssumeRoleWithWebIdentity, all served on the same port.
 *
 * Every answer, errors included, is HTTP 200 with {"Response":{...,"RequestId"}}. A
 * struct tc_call lives on sim_cvm_handle's stack for one request.
 */
#ifndef GC_SIM_CVM_H
#define GC_SIM_CVM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/catalog.h"
#include "sim/sim.h"

enum tc_type {
	TC_STR,
	TC_INT,
	TC_FLOAT,
	TC_BOOL,
	TC_OBJ,
	TC_ARR_STR,
	TC_ARR_OBJ,
	TC_INTSTR, /* the VPC API's Offset/Limit: an integer sent as a string or a number */
};

/* One key of a request object; sub is the schema of an object or of array items. */
struct tc_field {
	const char *name;
	enum tc_type type;
	const struct tc_field *sub; /* terminated by a NULL name */
};

/* The schemas of a Filters item ({Name, Values}) and a Tags item ({Key, Value}). */
extern const struct tc_field tc_filter_schema[];
extern const struct tc_field tc_tag_schema[];

struct tc_call {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	const char *action;
	const char *region; /* X-TC-Region, checked against the catalogue; NULL if none */
	bool intl;	    /* the key is an international-site account's (prices in USD) */
	json_t *body;	    /* the request parameters (an object), owned */
	char request_id[37];
	json_t *out; /* the success Response object without RequestId */
	bool failed;
};

struct tc_action {
	const char *name;
	int (*run)(struct tc_call *c);
	const struct tc_field *schema;
	bool region_required;
};

extern const struct tc_action tc_cvm_actions[];
extern const struct tc_action tc_hpc_actions[]; /* cvm-hpc.c */
extern const struct tc_action tc_vpc_actions[];
/* STS 2018-08-13 (sts.c), told apart by the version; its AssumeRoleWithWebIdentity comes
 * unsigned (Authorization: SKIP) */
extern const struct tc_action tc_sts_actions[];
/* The Tag service, also 2018-08-13 (cvm-actions.c) */
extern const struct tc_action tc_tag_actions[];
#define TC_STS_VERSION "2018-08-13"

/* The identity provider the emulator's Tencent account has for its OIDC issuer. */
#define SIM_OIDC_TENCENT_PROVIDER "gpucluster-sim"

/*
 * The secret of a temporary key STS issued when token (X-TC-Token) is the one issued with
 * it and has not expired at now (unix seconds); NULL otherwise, with *code the error CVM
 * answers (AuthFailure.SecretIdNotFound, AuthFailure.TokenFailure).
 */
#define TC_STS_SECRET_MAX 64
const char *tc_sts_secret(const struct sim *sim, const char *key_id, const char *token, int64_t now,
			  char out[TC_STS_SECRET_MAX], const char **code);

/* Answers {"Response":{"Error":{"Code","Message"},"RequestId"}}; returns -1. */
int tc_fail(struct tc_call *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Typed access to the (schema-checked) body. A path is dotted: "Placement.Zone". */
const char *tc_str(const struct tc_call *c, const char *path);
json_t *tc_get(const struct tc_call *c, const char *path);
int tc_need_str(struct tc_call *c, const char *path, const char **out);
/* An integer in min..max, def when absent: InvalidParameterValue otherwise. */
int tc_int(struct tc_call *c, const char *path, int64_t min, int64_t max, int64_t def,
	   int64_t *out);
bool tc_bool(const struct tc_call *c, const char *path);

/* Filters: checks names against allowed (a NULL-terminated list; "tag:" allows tag:KEY),
 * at most max_filters filters of at most max_values values. */
int tc_check_filters(struct tc_call *c, const char *const *allowed, size_t max_filters,
		     size_t max_values);
/* Whether value passes filter `name` (every filter of that name must contain it); true
 * when there is no such filter. */
bool tc_filter_ok(const struct tc_call *c, const char *name, const char *value);
/* Whether tags satisfy every tag:KEY, tag-key and tag-value filter. */
bool tc_filter_tags(const struct tc_call *c, const struct sim_tags *tags);
/* Offset/Limit into *offset and *limit (Limit 1..max, default def). */
int tc_paging(struct tc_call *c, int64_t def, int64_t max, int64_t *offset, int64_t *limit);

/* [{"Key","Value"}...] */
json_t *tc_tags_json(const struct sim_tags *t);
/* Tags of TagSpecification entries for resource type rtype ("instance", "keypair"). */
void tc_tag_spec(const struct tc_call *c, const char *rtype, struct sim_tags *out);
/* The region's default VPC (one per region, the same id everywhere: it is not a
 * resource anyone makes) and its default subnet in each zone (vpc.c). */
#define TC_DEFAULT_VPC "vpc-gpucsim0"
/* The default subnet of zone: "subnet-" and 8 characters derived from the zone name. */
void tc_default_subnet(const char *zone, char out[SIM_ID_MAX]);
/* The zone of a subnet of region reg's default VPC, or NULL when there is no such subnet. */
const char *tc_subnet_zone(const struct sim_region *reg, const char *subnet);
/* Whether vpc is a VPC of the call's region: the default one (unless --no-default-vpc) or
 * the user's (sim/network.h). */
bool tc_vpc_exists(const struct tc_call *c, const char *vpc);

/* Unix seconds as 2006-01-02T15:04:05Z, or with space and no Z when iso is false. */
void tc_format_time(int64_t t, bool iso, char out[32]);
/* Parses YYYY-MM-DD hh:mm:ss (offset_s added: Beijing time is UTC+8) or
 * YYYY-MM-DDThh:mm:ssZ; -1 when malformed. */
int tc_parse_time(const char *s, int64_t *out);

/* What the cloud sells (offer.c), for its row of the frontend table. */
/* cvm-hpc.c: RunInstances' HpcClusterId: the cluster (*out; NULL when none is named), or
 * ResourceNotFound.HpcCluster, InstanceTypeNotSupportHpcCluster, HpcClusterIdZoneIdNotMatch,
 * or the type's stock-out when count more do not fit in it (-1); an HCC type without one is
 * InstanceTypeRequiredHpcCluster. */
int tc_run_placement(struct tc_call *c, const char *zone, const struct sim_itype *itype,
		     unsigned count, const struct sim_placement **out);

extern const struct sim_catalog sim_tencent_offer;

#endif
