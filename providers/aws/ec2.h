/*
 * ec2.h: the AWS driver's internals, shared by the files of providers/aws only; what each
 * file does and how one request goes is in docs/internals/providers.md, "The AWS driver".
 *
 * Invariants: every response body is capped (AWS_MAX_RESPONSE); no xmlNode or json_t
 * leaves the folder; a struct aws_driver is used by one thread at a time, so its caches
 * need no lock; one retry quota per driver, shared by EC2 and pricing calls.
 *
 * Life cycle: aws.c's open fills a struct aws_driver into p->impl; close releases it.
 */
#ifndef GC_AWS_EC2_H
#define GC_AWS_EC2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/driver.h"
#include "core/http.h"
#include "core/provider.h"
#include "core/ratelimit.h"
#include "core/urlenc.h"
#include "providers/aws/creds.h"

#define AWS_EC2_VERSION	     "2016-11-15"
#define AWS_MAX_RESPONSE     ((size_t)16 << 20) /* a DescribeInstances page of 1000 is ~4 MiB */
#define AWS_CONSOLE_MAX	     ((size_t)1 << 20)	/* decoded console output; EC2 keeps 64 KiB */
#define AWS_CREATE_BATCH     100
#define AWS_TERMINATE_BATCH  100
#define AWS_CLIENT_TOKEN_MAX 64
#define AWS_MAX_TAGS	     50 /* EC2's limit per resource */
#define AWS_MAX_ATTEMPTS     5	/* bursts of an apply meet throttling; the quota bounds a storm */
/* Items per Describe page. DescribeInstances asks for EC2's largest page: its answer is
 * read as a stream (ec2-xml.c), one instance's tree at a time, so a page of 1000 costs
 * the body (about 1.6 MiB) and the instances, not a 13 MiB document tree; bench/README.md,
 * "Engine at 1000 nodes", has the figures. The other lists are short and keep 100. */
#define AWS_PAGE_SIZE	       100
#define AWS_INSTANCE_PAGE_SIZE 1000

/* What the driver knows of an image (DescribeImages). */
struct aws_image {
	char *id;
	char *name;
	char *root_device; /* "/dev/sda1" */
	char *created;	   /* creationDate, ISO 8601 */
	int64_t created_at;
};

/* One spot price record (DescribeSpotPriceHistory). */
struct aws_spot_price {
	char *zone;
	double price;
	int64_t at;
};

struct aws_driver {
	struct gc_driver base; /* first: core/driver.h reaches it through p->impl */
	struct aws_config cfg;
	struct aws_creds creds;
	char *ec2_host;	    /* the Host header: the endpoint's authority */
	char *pricing_host; /* the same for the Price List endpoint */

	bool resource_buckets;			/* the two below are set up */
	struct gc_ratelimit run_resource;	/* RunInstances: instances launched */
	struct gc_ratelimit terminate_resource; /* TerminateInstances: instances */

	/* caches, for the life of the driver */
	struct aws_image *images;
	size_t n_images, alloc_images;
	struct gc_params aliases; /* alias -> image id, resolved once per driver */
	struct gc_type_facts *types;
	size_t n_types, alloc_types;
	struct gc_price_cache prices; /* zone NULL: on-demand, or the region's lowest spot */
	char *quotas_host;	      /* the Host of the Service Quotas endpoint */
};

static inline struct aws_driver *aws_driver(struct gc_provider *p)
{
	return (struct aws_driver *)p->impl;
}

/* ---- aws.c: the cloud's part of open and close (core/driver.h's hooks) ------------------ */

/* Resolves the configuration (region, endpoints), then the credentials; sets up EC2's
 * resource buckets. */
int aws_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		    struct gc_error *err);
/* Frees the configuration, the hosts, the resource buckets and the caches. */
void aws_driver_close(struct gc_provider *p);

/* ---- ec2.c: the request hooks -------------------------------------------------------- */

/* The pipeline's hooks (core/driver.h): SigV4, EC2's and the JSON protocol's errors, the
 * code table and the buckets; the credentials are renewed through the chain (creds.h)
 * when temporary ones (STS, IMDS, credential_process) expire within five minutes. */
extern const struct gc_driver_hooks aws_hooks;

/* What the credential chain is resolved from: the driver's profile, endpoint and OIDC
 * role, the provider's region, environment and log. */
void aws_creds_input(struct gc_provider *p, struct aws_creds_input *in);

/* The wire protocol of a call: how its errors look. */
enum aws_protocol {
	AWS_PROTO_QUERY, /* EC2: form body, XML answers, <Response><Errors><Error> */
	AWS_PROTO_JSON,	 /* JSON 1.1 (pricing): {"__type":..., "message":...} */
};

struct aws_call {
	enum aws_protocol proto;
	const char *service; /* SigV4 service: "ec2", "pricing" */
	const char *region;  /* SigV4 region */
	const char *url;
	const char *host;
	const char *action; /* for buckets, messages and logs */
	const char *target; /* X-Amz-Target, JSON protocol only */
	const char *content_type;
	const char *body;
	size_t body_len;
	unsigned resource_tokens; /* RunInstances / TerminateInstances: instances */
	bool unsafe;		  /* a launch without a client token (gc_driver_request.unsafe) */
};

/* Sends c through the pipeline: out and err as gc_driver_send says. */
int aws_send(struct gc_provider *p, const struct aws_call *c, struct gc_buf *out,
	     struct gc_error *err);

/* An EC2 Query call: Action and Version are added in front of params. */
int aws_ec2_call(struct gc_provider *p, const char *action, const struct gc_params *params,
		 unsigned resource_tokens, bool unsafe, struct gc_buf *out, struct gc_error *err);

/* ---- ec2-xml.c: EC2's answers into plain structs ------------------------------------ */

/*
 * Whether a 2xx body is the answer to action at all: an <ACTIONResponse> root that is not
 * empty and carries a requestId, as every EC2 answer does. An HTML page, another action's
 * document or an empty envelope is not (checked inside the request pipeline, so that it
 * is retried as an invalid response; the parsers check the items).
 */
bool aws_xml_is_answer(const char *body, size_t len, const char *action);

/* Keeps libxml2 from printing its encoding and I/O errors (this thread). */
void aws_xml_quiet(void);
/* An EC2 error document; fields are empty when absent. Returns 0, or -1 when the body
 * is not one. */
int aws_xml_error(const char *body, size_t len, char code[128], char message[512],
		  char request_id[128]);

/*
 * Instances of a DescribeInstances page (reservationSet/item/instancesSet/item) or a
 * RunInstances answer (instancesSet/item), appended to out; *next_token gets the page's
 * nextToken or NULL (pass NULL to ignore it).
 */
int aws_xml_instances(const char *body, size_t len, struct gc_instance_list *out, char **next_token,
		      struct gc_error *err);

/* Key pairs (keySet/item) or security groups (securityGroupInfo/item). */
int aws_xml_keypairs(const char *body, size_t len, struct gc_resource_list *out,
		     struct gc_error *err);
/* With IncludePublicKey: the public key line and id of the key named name, or NULLs; the
 * caller frees them, also after a failure. */
int aws_xml_keypair_public(const char *body, size_t len, const char *name, char **out_line,
			   char **out_id, struct gc_error *err);
int aws_xml_secgroups(const char *body, size_t len, struct gc_resource_list *out, char **next_token,
		      struct gc_error *err);
/* Placement groups (placementGroupSet/item); the id is the group's name, which
 * DeletePlacementGroup and RunInstances take. */
/* Elastic IP addresses (addressesSet/item): the id is the allocation id, the name the
 * address. */
int aws_xml_addresses(const char *body, size_t len, struct gc_resource_list *out,
		      struct gc_error *err);
/* The id of the primary network interface (card 0, device 0) of the first instance of a
 * DescribeInstances answer. */
int aws_xml_primary_interface(const char *body, size_t len, char **out, struct gc_error *err);
int aws_xml_placement_groups(const char *body, size_t len, struct gc_resource_list *out,
			     struct gc_error *err);
/* A rule of a group, one per source or destination (a CIDR or a group); from = to = -1
 * for protocol "-1" (every protocol and port); egress: from ipPermissionsEgress. */
struct aws_sg_rule {
	char protocol[8];
	int from, to;
	char *cidr, *group, *description;
	bool egress;
};
/* The ingress, then the egress rules of the one group of a DescribeSecurityGroups answer. */
int aws_xml_sg_rules(const char *body, size_t len, struct aws_sg_rule **out, size_t *n,
		     struct gc_error *err);
void aws_sg_rules_release(struct aws_sg_rule *r, size_t n);

/* The text of a direct child of the root ("keyPairId", "groupId", "output"); NULL into
 * *out when absent. */
int aws_xml_root_text(const char *body, size_t len, const char *name, char **out,
		      struct gc_error *err);

/* Images (imagesSet/item), appended to *out (an array of *n, grown as needed). */
int aws_xml_images(const char *body, size_t len, struct aws_image **out, size_t *n, size_t *alloc,
		   char **next_token, struct gc_error *err);
void aws_image_release(struct aws_image *im);

/* Instance types (instanceTypeSet/item) into facts, appended. */
int aws_xml_instance_types(const char *body, size_t len, struct gc_type_facts **out, size_t *n,
			   size_t *alloc, char **next_token, struct gc_error *err);

/* Spot price records (spotPriceHistorySet/item), appended. */
int aws_xml_spot_prices(const char *body, size_t len, struct aws_spot_price **out, size_t *n,
			size_t *alloc, char **next_token, struct gc_error *err);

/* Zone names (availabilityZoneInfo/item/zoneName), in order, appended. */
int aws_xml_zones(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err);
/* DescribeInstanceTypeOfferings: instanceTypeOfferingSet/item/location, appended. */
int aws_xml_offerings(const char *body, size_t len, char ***out, size_t *n, char **next_token,
		      struct gc_error *err);
/* DescribeInstanceTypeOfferings: instanceTypeOfferingSet/item/instanceType, appended (the
 * same rows as aws_xml_offerings, in the same order). */
int aws_xml_offering_types(const char *body, size_t len, char ***out, size_t *n,
			   struct gc_error *err);
/* DescribeRegions: regionInfo/item/regionName, appended to *out. */
/* DescribeVpcs' vpcIds; DescribeSubnets' subnets that ids name, into out[i] */
int aws_xml_vpcs(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err);
int aws_xml_subnets(const char *body, size_t len, const char *const *ids, size_t n,
		    struct gc_subnet_facts *out, struct gc_error *err);
int aws_xml_regions(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err);

/* ---- pricing.c: on-demand prices from the Price List API --------------------------- */

/* USD per hour of a Linux, shared-tenancy, on-demand instance of type in region. */
int aws_pricing_on_demand(struct gc_provider *p, const char *type, double *out,
			  struct gc_error *err);

/* A JSON-protocol error body: __type (namespace stripped), message, into code/message. */
int aws_json_error(const char *body, size_t len, char code[128], char message[512]);

/* ---- ec2-ops.c: the operations (the ops table is in aws.c) -------------------------- */

int aws_discover(struct gc_provider *p, const struct gc_discover_query *q,
		 struct gc_instance_list *out, struct gc_error *err);
int aws_create(struct gc_provider *p, const struct gc_create_request *req,
	       struct gc_instance_list *out, struct gc_error *err);
int aws_terminate(struct gc_provider *p, const char *const *ids, size_t n, struct gc_error *err);
int aws_set_expiry(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		   struct gc_error *err);
int aws_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
		const char *value, struct gc_error *err);
int aws_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
		       const struct gc_tag_filter *tags, size_t n_tags,
		       struct gc_resource_list *out, struct gc_error *err);
int aws_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		       struct gc_error *err);
int aws_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err);
int aws_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
			struct gc_error *err);
int aws_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err);
int aws_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
			 char **out_id, struct gc_error *err);
int aws_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err);
int aws_create_address(struct gc_provider *p, const struct gc_tag *tags, size_t n_tags,
		       char **out_id, char **out_ip, struct gc_error *err);
int aws_attach_address(struct gc_provider *p, const char *id, const char *instance_id,
		       struct gc_error *err);
int aws_delete_address(struct gc_provider *p, const char *id, struct gc_error *err);
int aws_resolve_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		      struct gc_error *err);
int aws_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		      struct gc_error *err);
int aws_price(struct gc_provider *p, const char *type, const char *zone, bool spot, double *out,
	      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
int aws_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int aws_network(struct gc_provider *p, const char *vpc, const char *const *subnets, size_t n,
		bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err);
int aws_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
		   struct gc_error *err);
int aws_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int aws_console_output(struct gc_provider *p, const char *id, char **out, struct gc_error *err);
int aws_reserved_price(struct gc_provider *p, const char *type, double out[2],
		       char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
/* gpus.c: the region's GPU types with their zones (ops->gpu_types) */
int aws_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
		  struct gc_error *err);

/* ---- quota.c: plan's quota preflight (provider.h, ops->quota) ------------------------- */

struct aws_quota_group;
/* The vCPU quota group of an instance type (P, G and VT, standard), or NULL. */
const struct aws_quota_group *aws_quota_group_of(const char *type);
/* Quota.Value of a GetServiceQuota answer for code; name (may be NULL) gets QuotaName. */
int aws_quota_parse(const char *body, size_t len, const char *code, int64_t *limit, char *name,
		    size_t name_size, struct gc_error *err);
int aws_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
	      struct gc_quota *out, struct gc_error *err);

#endif
