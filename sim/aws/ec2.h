/*
 * ec2.h: the pieces the EC2 frontend's files share (private to sim/aws).
 *
 * ec2.c reads the parameters (form body, then the URL query), verifies SigV4 (aws.h),
 * checks the parameter names strictly against the action's table, consults the faults,
 * takes the world lock and calls the action; ec2-instances.c, ec2-resources.c and
 * ec2-catalog.c hold the actions with their tables. An action runs with the world lock
 * held and either writes its response between ec2_begin and ec2_finish or answers an
 * error with ec2_fail (which replaces whatever was being written).
 *
 * Responses are EC2's XML with the 2016-11-15 namespace, written with libxml2's text
 * writer, so escaping is never by hand. Pagination tokens are opaque to clients but carry
 * the position (the creation sequence number of the last instance returned, or an offset
 * for static catalogues) plus a short hash, so a page survives instances being added or
 * removed between calls and a forged token is refused.
 *
 * A struct ec2 lives on sim_ec2_handle's stack for one request.
 */
#ifndef GC_SIM_EC2_H
#define GC_SIM_EC2_H

#include <libxml/xmlwriter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/aws/aws.h"
#include "sim/sim.h"

#define EC2_VERSION	"2016-11-15"
#define EC2_XMLNS	"http://ec2.amazonaws.com/doc/2016-11-15/"
#define EC2_MAX_INDEX	1000
#define EC2_DEFAULT_VPC "vpc-0a1b2c3d4e5f60001"
#define EC2_MAX_LAUNCH	500 /* instances one call may start: the emulated quota */
#define EC2_MAX_TAGS	50
#define EC2_AMAZON_ID	"898082745236"

struct ec2 {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	struct gc_params p; /* every decoded parameter, body first */
	const char *action;
	char region[SIM_NAME_MAX];
	char rid[37];
	struct sim_aws_xml x; /* the response being written */
	bool dry;	      /* DryRun=true: the action validates, then answers DryRunOperation */
};

/* One action: its parameter-name patterns (sim_param_match), NULL-terminated. */
struct ec2_action {
	const char *name;
	int (*fn)(struct ec2 *c);
	bool describe; /* non-mutating: eligible for the unfiltered bucket */
	const char *const *params;
	bool own_dry_run; /* validates DryRun itself; others answer DryRunOperation unrun */
};

/* Each file's actions, terminated by a NULL name. */
extern const struct ec2_action ec2_instance_actions[];
extern const struct ec2_action ec2_resource_actions[];
extern const struct ec2_action ec2_catalog_actions[];
extern const struct ec2_action ec2_vpc_actions[];
extern const struct ec2_action ec2_placement_actions[];
extern const struct ec2_action ec2_address_actions[];

/* ec2-address.c: the id of an instance's network interface k (0: the primary one). */
void ec2_eni_id(const struct sim_instance *in, unsigned k, char out[SIM_ID_MAX]);

/* ec2-placement.c: RunInstances' Placement.GroupName: the group (*out; NULL when none is
 * named), or InvalidPlacementGroup.Unknown, or InsufficientInstanceCapacity when count
 * more do not fit in a cluster group (-1). */
int ec2_run_placement(struct ec2 *c, const char *zone, unsigned count,
		      const struct sim_placement **out);

/* ec2-vpc.c: the zone of a subnet this account has (its VPC into vpc), or NULL; whether a
 * VPC exists (the default one only without --no-default-vpc). */
const char *ec2_subnet_zone(struct ec2 *c, const char *id, char vpc[SIM_ID_MAX]);
bool ec2_vpc_exists(struct ec2 *c, const char *id);

#define EC2_TAGSPEC                                                        \
	"TagSpecification.N.ResourceType", "TagSpecification.N.Tag.N.Key", \
		"TagSpecification.N.Tag.N.Value"
#define EC2_FILTERS "Filter.N.Name", "Filter.N.Value.N"
#define EC2_PAGING  "MaxResults", "NextToken"

/* --- responses ------------------------------------------------------------------------ */

/* Replaces whatever was being written with an EC2 error document; returns -1. */
int ec2_fail(struct ec2 *c, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define EC2_FAIL400(c, code, ...) ec2_fail((c), 400, (code), __VA_ARGS__)
/* InvalidParameterValue for name=value. */
int ec2_bad_value(struct ec2 *c, const char *name, const char *value);

/* Starts <ActionResponse> with its requestId; ec2_finish makes it the response (0). */
void ec2_begin(struct ec2 *c);
int ec2_finish(struct ec2 *c);
/* <name>, </name>, <name>text</name> (NULL: empty), and with a printf-style text. */
void ec2_open(struct ec2 *c, const char *name);
void ec2_close(struct ec2 *c);
void ec2_el(struct ec2 *c, const char *name, const char *text);
void ec2_elf(struct ec2 *c, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* <tagSet><item><key/><value/></item>...</tagSet> */
void ec2_write_tags(struct ec2 *c, const struct sim_tags *t);
/* Unix seconds to 2026-11-11T10:00:00.000Z. */
void ec2_iso_time(int64_t wall, char out[32]);

/* --- parameters ----------------------------------------------------------------------- */

/* The parameter's value, or NULL; with a printf-style name. */
const char *ec2_param(const struct ec2 *c, const char *name);
const char *ec2_paramf(const struct ec2 *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The distinct indexes N of parameters named PREFIX.N or PREFIX.N.<anything>, sorted;
 * the caller frees *out. */
size_t ec2_indexes(const struct ec2 *c, const char *prefix, unsigned **out);
/* The values of PREFIX.N in index order, into *out (pointers into c->p; the caller frees
 * the array). */
size_t ec2_list(const struct ec2 *c, const char *prefix, const char ***out);
/* "true"/"false" (def when absent). */
int ec2_bool(struct ec2 *c, const char *name, bool def, bool *out);
/* An integer parameter in [min, max]; *present (may be NULL) tells whether it was given. */
int ec2_int(struct ec2 *c, const char *name, int64_t min, int64_t max, int64_t *out, bool *present);
/* MaxResults in [min, max] (max when absent), with EC2's own message. */
int ec2_max_results(struct ec2 *c, int64_t min, int64_t max, int64_t *out, bool *present);
/* A required parameter: MissingParameter when absent or empty. */
int ec2_require(struct ec2 *c, const char *name, const char **out);
/* An optional parameter that must be one of allowed (NULL-terminated). */
int ec2_one_of(struct ec2 *c, const char *name, const char *const *allowed);
/* '*' any run, '?' one character, backslash-escapes: EC2's filter-value wildcards. */
bool ec2_wild(const char *pat, const char *s);
/* PREFIX followed by 8 or 17 lower-case hex digits. */
bool ec2_id_ok(const char *id, const char *prefix);

/* --- filters -------------------------------------------------------------------------- */

struct ec2_filter {
	const char *name;
	const char **values;
	size_t n;
};

struct ec2_filters {
	struct ec2_filter *f;
	size_t n;
};

void ec2_filters_release(struct ec2_filters *fs);
/* Reads Filter.N.Name / Filter.N.Value.M and checks each name against known (names, or
 * prefixes ending in ':' such as "tag:"). */
int ec2_get_filters(struct ec2 *c, const char *const *known, struct ec2_filters *out);
/* Whether s matches any of f's values. */
bool ec2_any_value(const struct ec2_filter *f, const char *s);
/* tag:KEY, tag-key, tag-value: whether the tag filter f matches tags t. */
bool ec2_tag_filter(const struct ec2_filter *f, const struct sim_tags *t);
bool ec2_is_tag_filter(const char *name);

/* --- paging and tags ------------------------------------------------------------------ */

/* <nextToken> for position pos of a listing of kind ('i' instances, 'm' images, ...). */
void ec2_next_token(struct ec2 *c, char kind, uint64_t pos);
/* The position in NextToken (0 when absent); InvalidParameterValue when forged. */
int ec2_parse_token(struct ec2 *c, char kind, uint64_t *pos);

int ec2_check_tag_key(struct ec2 *c, const char *key);
/* Reads "<prefix>.N.Key/Value" into t. */
int ec2_read_tags(struct ec2 *c, const char *prefix, struct sim_tags *t);
/* TagSpecification.N: each ResourceType must be one of allowed; the tags of `want` go
 * into *out, the others are checked and dropped. */
int ec2_tag_specs(struct ec2 *c, const char *const *allowed, const char *want,
		  struct sim_tags *out);

/* --- ec2-instances.c ------------------------------------------------------------------ */

/* An instance of this region by id, or NULL (other clouds and regions are invisible). */
struct sim_instance *ec2_find_instance(struct ec2 *c, const char *id);

#endif
