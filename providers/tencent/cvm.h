/*
 * cvm.h: the Tencent Cloud driver's internals, shared by the files of providers/tencent
 * only; how one request goes is in docs/internals/tencent.md.
 *
 * Invariants: every response body is capped (TC_MAX_RESPONSE); no json_t leaves the
 * folder; a struct tc_driver is used by one thread at a time, so its caches need no lock;
 * one retry quota per driver, shared by the CVM and VPC endpoints.
 *
 * Life cycle: tencent.c's open fills a struct tc_driver into p->impl; close releases it.
 */
#ifndef GC_TC_CVM_H
#define GC_TC_CVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/driver.h"
#include "core/http.h"
#include "core/provider.h"
#include "core/ratelimit.h"
#include "core/urlenc.h"
#include "providers/tencent/creds.h"

#define TC_API_VERSION	    "2017-03-12" /* CVM and VPC alike */
#define TC_TAG_VERSION	    "2018-08-13"
#define TC_MAX_RESPONSE	    ((size_t)16 << 20) /* a DescribeInstances page of 100 is ~300 KiB */
#define TC_MAX_REQUEST	    ((size_t)1 << 20)  /* TC3 POSTs may be 10 MB; ours are small */
#define TC_CREATE_BATCH	    100
#define TC_TERMINATE_BATCH  100
#define TC_CLIENT_TOKEN_MAX 64
#define TC_PAGE_SIZE	    100	 /* Limit's maximum on every Describe we use */
#define TC_HPC_NAME_MAX	    60	 /* CreateHpcCluster Name */
#define TC_MAX_FILTERS	    10	 /* "at most 10 Filters of 5 Values" */
#define TC_MAX_TAGS	    50	 /* tags per resource */
#define TC_SYSTEM_DISK_MAX  1024 /* GB, a cloud system disk's largest size */
#define TC_MAX_ATTEMPTS	    5	 /* bursts of an apply meet throttling; the quota bounds a storm */

/* What the driver knows of an image (DescribeImages). */
struct tc_image {
	char *id;
	char *name;
	char *arch;
	int64_t created_at;
};

struct tc_subnet {
	char *zone;
	char *id;
};

struct tc_driver {
	/* first: core/driver.h reaches it through p->impl; its endpoint is the spec's
	 * provider.endpoint (STS goes there too), or NULL */
	struct gc_driver base;
	struct tc_creds creds;
	char *cvm_url, *cvm_host; /* the endpoint and its authority (the Host header) */
	char *vpc_url, *vpc_host;
	char *tag_url, *tag_host; /* the Tag service (2018-08-13), for tags set after launch */

	/* caches, for the life of the driver */
	struct tc_image *images;
	size_t n_images, alloc_images;
	struct gc_params aliases; /* alias -> image id, resolved once per driver */
	struct gc_type_facts *types;
	size_t n_types, alloc_types;
	struct gc_price_cache prices;
	char currency[GC_CURRENCY_SIZE]; /* the account's site's (tencent.c, site_currency) */
	char **zones;
	size_t n_zones;
	char *vpc_id; /* the region's default VPC */
	struct tc_subnet *subnets;
	size_t n_subnets, alloc_subnets;
};

static inline struct tc_driver *tc_driver(struct gc_provider *p)
{
	return (struct tc_driver *)p->impl;
}

/* ---- tencent.c: the cloud's part of open and close (core/driver.h's hooks) ------------------ */

/* Checks the region, sets the endpoints, resolves the credentials. */
int tc_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		   struct gc_error *err);
/* Frees the endpoints and the caches. */
void tc_driver_close(struct gc_provider *p);

/* ---- cvm.c: the pipeline's hooks and the call ---------------------------------------------- */

/* TC3 signing, the Response document's errors, the code table, the buckets; the keys are
 * renewed through the chain (creds.h) when temporary ones (the instance role) expire
 * within five minutes. */
extern const struct gc_driver_hooks tc_hooks;

/* The products we call, each its own endpoint and TC3 service name. */
enum tc_service {
	TC_CVM,
	TC_VPC,
	TC_TAG, /* tag.tencentcloudapi.com, version TC_TAG_VERSION */
};

/* Calls action with params (a JSON object; NULL: {}) through the pipeline (unsafe and
 * err as gc_driver_send says): *out is the answer's Response object, a new reference
 * (NULL on failure). */
int tc_call(struct gc_provider *p, enum tc_service svc, const char *action, json_t *params,
	    bool unsafe, json_t **out, struct gc_error *err);

/* The shared taxonomy for a Tencent error code (CVM or VPC) and HTTP status. */
enum gc_errcode tc_classify(const char *code, int status);

/* ---- cvm-ops.c: the operations (the ops table is in tencent.c) -------------------------- */

int tc_discover(struct gc_provider *p, const struct gc_discover_query *q,
		struct gc_instance_list *out, struct gc_error *err);
int tc_create(struct gc_provider *p, const struct gc_create_request *req,
	      struct gc_instance_list *out, struct gc_error *err);
int tc_terminate(struct gc_provider *p, const char *const *ids, size_t n, struct gc_error *err);
int tc_set_expiry(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		  struct gc_error *err);
int tc_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
	       const char *value, struct gc_error *err);
int tc_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
		      const struct gc_tag_filter *tags, size_t n_tags, struct gc_resource_list *out,
		      struct gc_error *err);
int tc_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		      struct gc_error *err);
int tc_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err);
int tc_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
		       struct gc_error *err);
int tc_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err);
int tc_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
			char **out_id, struct gc_error *err);
int tc_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err);
int tc_resolve_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		     struct gc_error *err);
int tc_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
		 struct gc_error *err);
int tc_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		     struct gc_error *err);
int tc_price(struct gc_provider *p, const char *type, const char *zone, bool spot, double *out,
	     char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
int tc_reserved_price(struct gc_provider *p, const char *type, double out[2],
		      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
int tc_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int tc_network(struct gc_provider *p, const char *vpc, const char *const *subnets, size_t n,
	       bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err);
int tc_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
		  struct gc_error *err);
int tc_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);

/* The CVM state word as a gc_instance_state: PENDING -> pending, SHUTDOWN (the recycle
 * bin) and LAUNCH_FAILED -> stopped, TERMINATING -> terminating, and so on. */
enum gc_instance_state tc_state(const char *word);

/* quota.c: plan's quota preflight (provider.h, ops->quota) */
int tc_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
	     struct gc_quota *out, struct gc_error *err);

#endif
