/*
 * ecs.h: the Alibaba Cloud driver's internals, shared by the files of providers/alibaba
 * only (creds.c signs its STS calls with ali_wire_build); the products, the endpoints and
 * how one request goes are in docs/internals/alibaba.md.
 *
 * Invariants: every response body is capped (ALI_MAX_RESPONSE); no json_t leaves the
 * folder; a struct ali_driver is used by one thread at a time, so its caches need no
 * lock; one retry quota per driver.
 *
 * Life cycle: alibaba.c's open fills a struct ali_driver into p->impl; close releases it.
 */
#ifndef GC_ALI_ECS_H
#define GC_ALI_ECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/buf.h"
#include "core/driver.h"
#include "core/http.h"
#include "core/provider.h"
#include "core/ratelimit.h"
#include "core/urlenc.h"
#include "providers/alibaba/creds.h"

#define ALI_ECS_VERSION	     "2014-05-26"
#define ALI_VPC_VERSION	     "2016-04-28"
#define ALI_STS_VERSION	     "2015-04-01"
#define ALI_MAX_RESPONSE     ((size_t)16 << 20) /* a DescribeInstances page of 100 is ~300 KiB */
#define ALI_CONSOLE_MAX	     ((size_t)1 << 20)
#define ALI_CREATE_BATCH     100 /* RunInstances Amount 1-100 */
#define ALI_TERMINATE_BATCH  100 /* DeleteInstances InstanceId.N 1-100 */
#define ALI_CLIENT_TOKEN_MAX 64
#define ALI_MAX_TAGS	     20		 /* Tag.N, per resource and per filter */
#define ALI_PAGE_SIZE	     100	 /* DescribeInstances / DescribeSecurityGroups MaxResults */
#define ALI_MAX_DISK_GB	     2048	 /* an ESSD system disk's limit */
#define ALI_USER_DATA_MAX    (32 * 1024) /* RunInstances UserData, before base64 */
#define ALI_MAX_ATTEMPTS     5 /* bursts of an apply meet throttling; the quota bounds a storm */
/* RunInstances counted in instances: a bucket of this many refilling as many a minute
 * keeps under Alibaba's 5000 a minute in any 60 s (ecs.c) */
#define ALI_LAUNCH_PER_MINUTE 2500
/* AutoReleaseTime: at least 30 minutes and at most three years ahead (ECS API reference,
 * RunInstances / ModifyInstanceAutoReleaseTime) */
#define ALI_RELEASE_MIN_S (30 * 60)
#define ALI_RELEASE_MAX_S (3 * 365 * 86400LL)
/* The driver's own tag holding the launch's client token: DescribeInstances does not
 * report ClientToken, and the engine looks instances up by it */
#define ALI_TAG_CLIENT_TOKEN GC_TAG_PREFIX "client-token"

/* The default VPC's vSwitch chosen for a zone asked for (want NULL: any zone). */
struct ali_vswitch {
	char *want;
	char *zone; /* the vSwitch's own zone */
	char *id;
};

struct ali_driver {
	struct gc_driver base; /* first: core/driver.h reaches it through p->impl */
	struct ali_creds creds;

	char *ecs_url, *ecs_host;
	char *vpc_url, *vpc_host;

	bool launch_bucket_set;		   /* launch_bucket is set up */
	struct gc_ratelimit launch_bucket; /* RunInstances: instances a minute */

	/* caches, for the life of the driver */
	char *vpc_id; /* the region's default VPC */
	struct ali_vswitch *vswitches;
	size_t n_vswitches, alloc_vswitches;
	struct gc_params aliases; /* alias -> image id, resolved once per driver */
	struct gc_type_facts *types;
	size_t n_types, alloc_types;
	struct gc_price_cache prices;
};

static inline struct ali_driver *ali_driver(struct gc_provider *p)
{
	return (struct ali_driver *)p->impl;
}

/* ---- alibaba.c: the cloud's part of open and close (core/driver.h's hooks) ------------- */

/* Checks the region, sets the endpoints, resolves the credentials, sets up the launch
 * bucket. */
int ali_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		    struct gc_error *err);
/* Frees the endpoints, the launch bucket and the caches. */
void ali_driver_close(struct gc_provider *p);

/* ---- ecs.c: the pipeline's hooks ---------------------------------------------------------- */

/* ACS3 signing, the JSON errors and the server's retry hint, the code table, the
 * buckets; the credentials are renewed through the chain (creds.h) when temporary ones
 * (STS, the instance's RAM role) expire within five minutes. */
extern const struct gc_driver_hooks ali_hooks;

/* ---- ecs.c: one signed request --------------------------------------------------------- */

struct ali_wire_input {
	const char *base_url; /* "https://ecs.cn-hangzhou.aliyuncs.com", no trailing '/' */
	const char *action;
	const char *version;
	const struct gc_params *params;
	const char *access_key_id;
	const char *access_key_secret;
	const char *security_token; /* NULL without STS */
	time_t now;
};

/* An ACS3-signed POST with every parameter in the query string and no body: the URL and
 * the header lines to send, into *out (no body). creds.c builds its STS calls with it too. */
int ali_wire_build(struct gc_driver_wire *out, const struct ali_wire_input *in,
		   struct gc_error *err);

/* An Alibaba error body ({"Code","Message","RequestId"}); fields are empty when absent.
 * Returns 0, or -1 when the body is not one. */
int ali_json_error(const char *body, size_t len, char code[128], char message[512],
		   char request_id[128]);

/* The shared taxonomy for an Alibaba error code and HTTP status (WIRE.md 2.7). */
enum gc_errcode ali_classify(const char *code, int status);

/* The authority of an http(s) URL as curl sends it in Host (the port only when it is not
 * the scheme's default); NULL when there is none. */
char *ali_url_host(const char *url);

/* "2026-03-14T15:09:27Z" (seconds or minute precision, optional fraction) -> unix
 * seconds; -1 when malformed. */
int ali_parse_time(const char *s, int64_t *out);

/* ---- ecs.c: the calls ---------------------------------------------------------- */

/* An ECS or VPC call through the pipeline (gc_driver_send: out as it says), with the
 * driver's region. */
int ali_ecs_call(struct gc_provider *p, const char *action, const struct gc_params *params,
		 unsigned launch_tokens, bool unsafe, struct gc_buf *out, struct gc_error *err);
int ali_vpc_call(struct gc_provider *p, const char *action, const struct gc_params *params,
		 struct gc_buf *out, struct gc_error *err);

/* ---- ecs-ops.c: the operations (the ops table is in alibaba.c) ----------------------- */

int ali_discover(struct gc_provider *p, const struct gc_discover_query *q,
		 struct gc_instance_list *out, struct gc_error *err);
int ali_create(struct gc_provider *p, const struct gc_create_request *req,
	       struct gc_instance_list *out, struct gc_error *err);
int ali_terminate(struct gc_provider *p, const char *const *ids, size_t n, struct gc_error *err);
int ali_set_expiry(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		   struct gc_error *err);
int ali_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
		const char *value, struct gc_error *err);
int ali_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
		       const struct gc_tag_filter *tags, size_t n_tags,
		       struct gc_resource_list *out, struct gc_error *err);
int ali_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		       struct gc_error *err);
int ali_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err);
int ali_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
			struct gc_error *err);
int ali_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err);
int ali_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
			 char **out_id, struct gc_error *err);
int ali_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err);
int ali_resolve_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		      struct gc_error *err);
int ali_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		      struct gc_error *err);
int ali_price(struct gc_provider *p, const char *type, const char *zone, bool spot, double *out,
	      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
int ali_reserved_price(struct gc_provider *p, const char *type, double out[2],
		       char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
int ali_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int ali_network(struct gc_provider *p, const char *vpc, const char *const *vsws, size_t n,
		bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err);
int ali_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
		   struct gc_error *err);
int ali_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int ali_console_output(struct gc_provider *p, const char *id, char **out, struct gc_error *err);
int ali_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
		  struct gc_error *err);

/* quota.c: plan's quota preflight (provider.h, ops->quota) */
int ali_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
	      struct gc_quota *out, struct gc_error *err);

#endif
