/*
 * provider.h: the interface between the engine and a cloud. Each cloud exports one const
 * struct gc_provider_ops (providers/registry.c lists them); the engine calls only the
 * gc_provider_* wrappers, the only code that goes through `ops->`. What a driver promises
 * (plain structs, tagged at creation, retried already, idempotent deletes, cancellable
 * waits): docs/internals/providers.md, "The interface".
 *
 * Threads: a struct gc_provider is used by one thread at a time.
 * Life cycle: gc_provider_open -> gc_provider_* calls -> gc_provider_close.
 */
#ifndef GC_PROVIDER_H
#define GC_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/spec.h"

/* The ownership tags every resource we create carries. */
#define GC_TAG_PREFIX	  "gpucluster:"
#define GC_TAG_CLUSTER	  "gpucluster:cluster"
#define GC_TAG_GROUP	  "gpucluster:group"
#define GC_TAG_SPEC_HASH  "gpucluster:spec-hash"
#define GC_TAG_EXPIRES_AT "gpucluster:expires-at" /* RFC 3339 UTC */
#define GC_TAG_HEALTH	  "gpucluster:health"	  /* set by the bootstrapper: ok | failed */
/* lifecycle.idle in seconds ("1800"), when the spec has one: the node powers itself off after
 * that long idle (docs/internals/idle.md); list shows it */
#define GC_TAG_IDLE "gpucluster:idle"
/* CI runs (GitHub Actions: GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_REPOSITORY), on every
 * instance, key pair and security group a run creates; never part of a client token (see
 * docs/internals/executor.md) */
#define GC_TAG_RUN_ID	   "gpucluster:run-id"
#define GC_TAG_RUN_ATTEMPT "gpucluster:run-attempt"
#define GC_TAG_REPOSITORY  "gpucluster:repository"
/* RFC 3339 UTC, on key pairs and security groups only: gc's grace period for orphans. Never on
 * instances, whose tags are part of the replayed launch request. */
#define GC_TAG_CREATED_AT "gpucluster:created-at"
/* The SSH host key ("ssh-ed25519 AAAA...") the instance was told to use, on clouds without
 * console output (see gc_create_request.host_key_private). */
#define GC_TAG_HOST_KEY "gpucluster:host-key"
/* On a node's public address (GC_RESOURCE_ADDRESS): the instance it is for. */
#define GC_TAG_INSTANCE "gpucluster:instance"

/* Capabilities; plan refuses a spec that needs one the cloud lacks. */
#define GC_CAP_SPOT	      (1u << 0) /* spot / preemptible market */
#define GC_CAP_SPOT_MAX_PRICE (1u << 1) /* a bid price for spot */
#define GC_CAP_CLOUD_TTL      (1u << 2) /* the cloud itself terminates at expires-at */
#define GC_CAP_CONSOLE_OUTPUT (1u << 3) /* console output carrying the SSH host keys */
#define GC_CAP_CLIENT_TOKEN   (1u << 4) /* idempotent create with a client token */
#define GC_CAP_PRICE	      (1u << 5) /* an hourly price for on-demand and spot */
/* ImportKeyPair takes our Ed25519 login key. Without it the engine imports no key pair
 * and the driver hands the key to cloud-init in the user-data (core/cloudinit.h). */
#define GC_CAP_ED25519_KEYPAIR (1u << 6)
/* set_expiry moves the cloud's own timer (GC_CAP_CLOUD_TTL) on a running instance too;
 * without it the timer set at launch stays, and only the expires-at tag moves. */
#define GC_CAP_TTL_MOVES (1u << 7)

enum gc_instance_state {
	GC_STATE_PENDING = 0,
	GC_STATE_RUNNING,
	GC_STATE_STOPPING,
	GC_STATE_STOPPED,
	GC_STATE_TERMINATING, /* shutting-down, being released */
	GC_STATE_TERMINATED,
	GC_STATE_UNKNOWN,
};

/* "pending", "running", ... */
const char *gc_instance_state_name(enum gc_instance_state s);

struct gc_tag {
	char *key;
	char *value;
};

struct gc_instance {
	char *id;
	char *cluster;	 /* GC_TAG_CLUSTER, NULL when absent */
	char *group;	 /* GC_TAG_GROUP */
	char *spec_hash; /* GC_TAG_SPEC_HASH */
	char *health;	 /* GC_TAG_HEALTH */
	char *type;
	char *zone;
	char *image;
	bool spot;
	enum gc_instance_state state;
	char *state_name; /* the cloud's own word, for display */
	char *private_ip; /* NULL until assigned */
	char *public_ip;
	int64_t launch_time; /* unix seconds, 0 when unknown */
	int64_t expires_at;  /* from GC_TAG_EXPIRES_AT, 0 when none */
	char *client_token;  /* NULL when the cloud does not report it */
	struct gc_tag *tags; /* every tag, ours included */
	size_t n_tags;
	/* The cloud's reason, as its Describe gives it, why the instance is going or gone
	 * (the drivers say which field); NULL when none. */
	char *reason;
	bool preempted; /* the reason is the cloud's spot reclaim (docs/internals/spot.md) */
	int64_t idle_s; /* from GC_TAG_IDLE, 0 when none */
};

struct gc_instance_list {
	struct gc_instance *items;
	size_t n, alloc;
};

void gc_instance_release(struct gc_instance *inst);
void gc_instance_list_init(struct gc_instance_list *l);
void gc_instance_list_release(struct gc_instance_list *l);
/* Appends a zeroed instance and returns it. */
struct gc_instance *gc_instance_list_push(struct gc_instance_list *l);
/* Moves every instance of src to the end of dst; src is left empty. */
void gc_instance_list_take(struct gc_instance_list *dst, struct gc_instance_list *src);
/* "instance 'ID' is listed twice" (caller frees) for the first id l holds twice, or NULL:
 * a listing that does is not one to act on (issue 19). */
char *gc_instance_list_twice(const struct gc_instance_list *l);
/* Sets a tag on inst (replacing one with the same key) and, for ours, the parsed field. */
void gc_instance_set_tag(struct gc_instance *inst, const char *key, const char *value);
const char *gc_instance_tag(const struct gc_instance *inst, const char *key);

/* What one open needs; every pointer must outlive the provider. */
struct gc_provider_config {
	const char *region;
	const char *profile;  /* NULL: the cloud's default chain */
	const char *endpoint; /* NULL: the environment's override, then the public endpoint */
	/* The spec's provider.oidc (NULL or a NULL role: none): in GitHub Actions, the role
	 * the driver assumes with the job's OIDC token before any other credentials. */
	const struct gc_spec_oidc *oidc;
	/* Environment lookups (credentials, endpoint and region variables), so tests control
	 * them; NULL means the process environment. */
	const struct gc_spec_env *env;
	struct gc_log *log;	      /* may be NULL */
	const struct gc_clock *clock; /* NULL: gc_clock_monotonic */
	bool no_rate_limit;	      /* benchmarks of the naive client only */
	unsigned max_in_flight;	      /* concurrent requests; 0: the driver's default */
	/* Polled by drivers while they wait on their own rate limits, so Ctrl-C does not
	 * sit out a refill; NULL: never cancelled. A cancelled call fails with
	 * GC_ECANCELLED before it is sent. */
	bool (*cancelled)(void *ctx);
	void *cancel_ctx;
};

struct gc_tag_filter {
	const char *key;
	const char *value; /* NULL: any value (the key is present) */
};

/* Whether tags carry every filter. */
bool gc_tags_match(const struct gc_tag *tags, size_t n, const struct gc_tag_filter *f, size_t n_f);

/* Which instances discover returns: all of them carry every filter tag. */
struct gc_discover_query {
	const struct gc_tag_filter *tags;
	size_t n_tags;
	bool include_terminated; /* otherwise terminated ones are left out */
};

struct gc_create_request {
	const char *group;
	const char *type;
	const char *zone; /* NULL: the cloud picks */
	const char *image_id;
	bool spot;
	double spot_max_price; /* 0: the cloud's default */
	unsigned count;	       /* exactly this many, or none (MinCount = MaxCount) */
	unsigned disk_gb;
	const char *client_token;
	const char *key_name; /* the imported key pair's name */
	const char *key_id;   /* and its id, as import_keypair / list_resources gave it */
	/* The login key's public line; on clouds without GC_CAP_ED25519_KEYPAIR (key_name and
	 * key_id NULL) the driver gives it to cloud-init (core/cloudinit.h). */
	const char *authorized_key;
	const char *security_group_id;
	/* provider.network: the VPC and the zone's subnet to launch into; NULL: the cloud's
	 * default VPC and its subnet in the zone */
	const char *vpc_id;
	const char *subnet_id;
	int64_t expires_at; /* unix seconds; 0: no TTL. The cloud timer is set when it has one */
	/*
	 * Clouds without GC_CAP_CONSOLE_OUTPUT: the SSH host key every instance of the batch
	 * must use, for cloud-init's ssh_keys in the user-data (openssh-key-v1 PEM and its
	 * public line), so the client can pin it before the first connection. The engine
	 * derives it from the cluster key and the client token (the same request on a re-run)
	 * and also tags it (GC_TAG_HOST_KEY). NULL on other clouds.
	 */
	const char *host_key_private;
	const char *host_key_public;
	const struct gc_tag *tags; /* ours and the user's, applied at creation */
	size_t n_tags;
	/* RDMA interfaces per instance (EFA, ERI; docs/internals/fabric.md); 0: none */
	unsigned rdma_interfaces;
	/* placement: cluster: the id create_placement gave (fabric.md); NULL: none */
	const char *placement_id;
	/* node_groups[].role: the instance role to launch with (docs/internals/mounts.md);
	 * NULL: none */
	const char *instance_role;
};

/* A placement resource for a group with placement: cluster (docs/internals/fabric.md):
 * the cloud's resource that keeps a group's nodes close together. */
struct gc_placement_request {
	const char *name;
	const char *zone; /* the zone the group launches in (an HPC cluster is zonal) */
	const struct gc_tag *tags;
	size_t n_tags;
	/* the type the group launches first: a cloud whose placement resource takes some types
	 * only answers GC_EUNSUPPORTED for the others, and the group is only pinned */
	const char *type;
};

struct gc_keypair_request {
	const char *name;
	const char *public_key_line; /* "ssh-ed25519 AAAA... comment" */
	const struct gc_tag *tags;
	size_t n_tags;
};

struct gc_secgroup_request {
	/* An existing group of ours (the engine found it): nothing is created, only its
	 * rules are reconciled with the request (core/rules.h). NULL: create it. */
	const char *id;
	const char *name;
	const char *description;
	const char *vpc_id; /* provider.network.vpc; NULL: the default VPC */
	unsigned ssh_port;
	const char *const *allow_from; /* CIDRs; at least one */
	size_t n_allow_from;
	const struct gc_tag *tags;
	size_t n_tags;
	/*
	 * Every protocol and port from instances in this same group, so that the nodes of a
	 * cluster reach each other (torchrun's MASTER_PORT, NCCL over TCP, MPI). How is the
	 * cloud's affair: a rule whose source is the group itself, or a group type whose
	 * members talk freely by default (providers.md says which cloud does which).
	 */
	bool allow_members;
	/* TCP monitoring_port (dcgm-exporter's) from each of these CIDRs too; none: only the
	 * members reach it (docs/internals/monitoring.md) */
	unsigned monitoring_port;
	const char *const *monitoring_from;
	size_t n_monitoring_from;
};

/* A key pair or security group found by its tags. */
struct gc_resource {
	char *id;
	char *name;
	char *fingerprint; /* key pairs: as the cloud reports it, may be NULL */
	struct gc_tag *tags;
	size_t n_tags;
};

struct gc_resource_list {
	struct gc_resource *items;
	size_t n, alloc;
};

void gc_resource_list_init(struct gc_resource_list *l);
void gc_resource_list_release(struct gc_resource_list *l);
struct gc_resource *gc_resource_list_push(struct gc_resource_list *l);
/* Moves the resources of src whose tags carry every filter to dst; src is released. */
void gc_resource_list_take_tagged(struct gc_resource_list *dst, struct gc_resource_list *src,
				  const struct gc_tag_filter *tags, size_t n_tags);

struct gc_type_facts {
	char name[64];
	unsigned vcpus;
	unsigned memory_mib;
	unsigned gpus;
	char gpu_model[64];	 /* "A10G", "H100", "" without GPUs */
	unsigned gpu_memory_mib; /* per GPU */
	/* RDMA interfaces a node of the type may have (EFA, ERI...); 0: none (fabric.md) */
	unsigned rdma_interfaces;
};

/* A GPU instance type as gpu_types lists it: its facts and the region's zones offering it. */
struct gc_gpu_type {
	struct gc_type_facts facts;
	char **zones;
	size_t n_zones;
};

/* Frees n types as gpu_types returns them (their zones too). */
void gc_gpu_types_free(struct gc_gpu_type *v, size_t n);
/* Adds zone to the type named facts->name in *v (appending the type when new), unless
 * it is there already: the drivers' shared way of folding (type, zone) rows. */
void gc_gpu_types_add(struct gc_gpu_type **v, size_t *n, const struct gc_type_facts *facts,
		      const char *zone);

enum gc_resource_kind {
	GC_RESOURCE_KEYPAIR,
	GC_RESOURCE_SECGROUP,
	GC_RESOURCE_PLACEMENT, /* placement: cluster (fabric.md); none without create_placement */
	/* a node's public address (fabric.md); none without create_address. Its name is the
	 * address, its GC_TAG_INSTANCE tag the instance it is for. */
	GC_RESOURCE_ADDRESS,
};

/* What the cloud says of one subnet that provider.network names. */
struct gc_subnet_facts {
	bool found;
	char vpc[64];
	char zone[64];
};

/* One account quota as the cloud reports it, for plan's preflight (core/quotacheck.h). */
struct gc_quota {
	char name[128];	   /* as the cloud names it, for the message and to sum by */
	char unit[16];	   /* "vCPUs", "instances" */
	int64_t limit;	   /* in unit */
	int64_t used;	   /* in unit, the account's current use */
	unsigned per_node; /* what one instance of the type takes of it, in unit */
	char where[160];   /* where to raise it: a console page or the request's name */
	bool sold_out;	   /* the stock API says the type is sold out there */
};

struct gc_provider;
struct gc_driver_hooks;
struct gc_gpu_offer;

/* How a cloud names the key pair of a cluster: "<prefix><sep><cluster><sep><8 characters
 * of the key's fingerprint>", where each character of the cluster name outside [A-Za-z0-9]
 * becomes sep and at most cluster_max of them are kept (0: all). */
struct gc_keypair_naming {
	const char *prefix;
	char sep;
	unsigned cluster_max;
};

/* What core and cmd/ know about a cloud, kept with its driver (providers/NAME/facts.c) so
 * that nothing outside providers/ names a cloud; each field's users: providers.md, "The
 * facts". Lists end with NULL. The shape checks judge only the form of len bytes of s. */
/* The software a node needs for the cloud's RDMA network, as the cloud documents it: the
 * fabric step runs check, and when it fails installs packages, downloads url (a tarball
 * is unpacked) and runs install as root in the download's directory, then runs check
 * again. Shell text, run by bash on the node. */
struct gc_fabric_setup {
	const char *what;     /* for messages: "the RDMA stack" */
	const char *url;      /* NULL: nothing to download */
	const char *install;  /* NULL: nothing to run */
	const char *packages; /* the distribution's packages, space-separated; NULL: none */
	const char *check;    /* exits 0 once the node's RDMA devices work */
};

struct gc_provider_facts {
	const char *title;    /* the cloud and its compute service, for help texts: "X Cloud VMs" */
	const char *env_vars; /* its credential variables, for the manual: "X_*" */
	const char *home_region; /* where gc asks for the region list when nothing names one */
	const char
		*oidc_audience; /* the audience the cloud's identity provider trusts by default */
	const char *const *name_aliases; /* what else users call the cloud, for "did you mean" */
	/* Tag key prefixes the cloud keeps for itself (lowercase, matched in any case); the
	 * spec refuses them on every cloud, since a spec may move between clouds. */
	const char *const *reserved_tag_prefixes;
	/* The alias words resolve_image takes; the spec validator accepts exactly these. */
	const char *const *image_aliases;
	bool (*image_id)(const char *s, size_t len); /* a literal image id */
	/* Whether s is meant as this cloud's image id (its "ami-" prefix), valid or not: on
	 * another cloud the validator says "not an image id for" rather than "unknown image". */
	bool (*image_id_like)(const char *s, size_t len);
	const char *image_id_hint;		 /* how an id looks, for messages: "ami-..." */
	bool (*role)(const char *s, size_t len); /* provider.oidc.role */
	const char *role_hint;			 /* "arn:...:role/NAME" */
	/* provider.oidc.provider; NULL: the cloud finds the identity provider by itself and
	 * the key must be left out, oidc_provider_hint saying why. */
	bool (*oidc_provider)(const char *s, size_t len);
	const char *oidc_provider_hint;
	/* provider.network: the shapes of a VPC id and of a subnet id, how they look in
	 * messages ("vpc-...", "subnet-..."), and what the cloud calls a subnet ("vSwitch") */
	bool (*vpc_id)(const char *s, size_t len);
	const char *vpc_id_hint;
	bool (*subnet_id)(const char *s, size_t len);
	const char *subnet_id_hint;
	const char *subnet_word;
	struct gc_keypair_naming keypair;
	bool name_tag; /* the cloud's console names resources by a "Name" tag */
	/* For the log's redactor, in every log line whatever the cloud in use: names whose
	 * values are secret (any case, any position), and the prefixes of access key ids
	 * (key_id_len characters of [A-Z0-9] in all), masked but for the prefix. */
	const char *const *secret_names;
	const char *const *key_id_prefixes;
	unsigned key_id_len;
	/* The error codes that mean "these credentials are good but may not make this call"
	 * (not "wrong credentials"), and how the cloud's policies name an action's
	 * permission (the service prefix of "service:Action"): the hint names what to grant. */
	const char *const *permission_codes;
	const char *permission_prefix;
	/* How many looks in a row an instance we saw may be missing from Describe before a
	 * teardown counts it gone: a cloud whose listings lag behind its launches (eventual
	 * consistency, docs/internals/executor.md) says more than 0. */
	unsigned listing_lag_looks;
	/* A create answers instance ids only, no state: a replayed client token answers the
	 * ids of its first launch even once they are released, so the engine looks them up
	 * (executor.md, "Client tokens"). */
	bool create_answers_ids;
	/* The shortest time a node is billed for (per-second billing with a minimum charge):
	 * what a node that lived less costs. docs/internals/plan.md, "What a cluster cost". */
	unsigned min_billed_s;
	/* The GPU types of the catalogue shipped with the binary (core/gpuspec.h), ended by
	 * a NULL type; NULL: none */
	const struct gc_gpu_offer *gpu_offers;
	/* What the cloud calls an RDMA interface, for messages ("EFA"); NULL: "RDMA". */
	const char *rdma_word;
	/* The spot interruption notice on the instance metadata service, as the spot
	 * watcher polls it (templates/bootstrap/preempt.sh, docs/internals/spot.md): its URL
	 * (404 until a notice), the answer's format ("action-json": {"action","time"} in UTC;
	 * "utc-iso8601": 2015-01-05T18:02:00Z; "utc8-datetime": 2018-08-18 12:05:33 in
	 * UTC+8), and where the service needs them, a session token's URL (PUT) and header
	 * and a rebalance recommendation's URL; NULL: none. */
	const char *spot_notice_url;
	const char *spot_notice_format;
	const char *spot_token_url;
	const char *spot_token_header; /* sends the token; with "-ttl-seconds", asks for one */
	const char *spot_rebalance_url;
	/* node_groups[].role: the shape of an instance role's name as the launch takes it,
	 * and how it looks, for messages */
	bool (*instance_role)(const char *s, size_t len);
	const char *instance_role_hint;
	/* mounts[].bucket: the shape of a bucket's name in the cloud's object storage and how
	 * it looks, for messages (docs/internals/mounts.md) */
	bool (*bucket)(const char *s, size_t len);
	const char *bucket_hint;
	/* mounts[]: how a node mounts a bucket (templates/bootstrap/mounts.sh,
	 * docs/internals/mounts.md, which cites each tool's pages). The tool's command and the
	 * .deb it comes in ({os_version}: "22.04"); its command line, where the step puts
	 * {bucket}, {path}, {region}, {role} (the node's role, from the metadata service),
	 * {creds} (mount_creds' file) and {mode} (mount_ro or mount_rw); the metadata
	 * service's directory of the instance role's credentials (a GET names the role, one
	 * of its name answers the credentials as JSON; IMDS tokens as spot_token_*); and,
	 * for a tool that reads its credentials from a file, the file's lines, "{Field}" the
	 * answer's field and "{Field@gmt}" a time as YYYY-MM-DDTHH:MM:SS in UTC, which a timer
	 * keeps fresh. NULL mount_creds: the tool asks the metadata service itself. */
	const char *mount_tool;
	const char *mount_package;
	const char *mount_command;
	const char *mount_ro;
	const char *mount_rw;
	const char *role_creds_url;
	const char *mount_creds;
	/* The placement resource a type with RDMA interfaces launches only inside, for
	 * messages ("an HPC cluster"): plan asks such a group for placement: cluster
	 * (docs/internals/fabric.md). NULL: such types launch anywhere. */
	const char *rdma_placement;
	/* What the bootstrap's fabric step installs on a node of a group with an RDMA
	 * network (templates/bootstrap/fabric.sh, docs/internals/fabric.md); NULL: nothing */
	const struct gc_fabric_setup *fabric_setup;
	/* What reserved_price prices: false, a reservation with no upfront fee; true, a
	 * subscription paid upfront for its term, which plan and show-gpus name so
	 * (docs/internals/gpus.md, "Reserved prices"). */
	bool reserved_prepaid;
};

struct gc_provider_ops {
	const char *name; /* what provider.name says: lowercase, [a-z0-9] */
	const struct gc_provider_facts *facts;
	unsigned caps;		      /* GC_CAP_* */
	unsigned max_create_batch;    /* instances in one create call */
	unsigned max_terminate_batch; /* ids in one terminate call */
	unsigned client_token_max;    /* longest client token the cloud takes */
	unsigned min_ttl_s;	      /* the cloud's timer needs at least this lead; 0: none */
	unsigned max_disk_gb;	      /* the largest system disk; 0: the spec's own limit */

	/* The cloud's hooks into the request pipeline (core/driver.h), whose open (credentials,
	 * region, endpoints; sets p->impl) and close every cloud's driver is. */
	const struct gc_driver_hooks *driver;

	/* Every instance matching q, all pages, appended to out. */
	int (*discover)(struct gc_provider *p, const struct gc_discover_query *q,
			struct gc_instance_list *out, struct gc_error *err);
	/* Launches exactly req->count instances (all or none) and appends them to out. A
	 * replayed client token returns the instances of the first call. */
	int (*create)(struct gc_provider *p, const struct gc_create_request *req,
		      struct gc_instance_list *out, struct gc_error *err);
	/* Asks the cloud to terminate ids (at most max_terminate_batch). Ids that are
	 * already gone are not an error. */
	int (*terminate)(struct gc_provider *p, const char *const *ids, size_t n,
			 struct gc_error *err);
	/* Moves the deadline of running instances (at most max_terminate_batch) in place:
	 * GC_TAG_EXPIRES_AT set to expires_at, and with GC_CAP_TTL_MOVES the cloud's timer;
	 * expires_at 0 removes both. */
	int (*set_expiry)(struct gc_provider *p, const char *const *ids, size_t n,
			  int64_t expires_at, struct gc_error *err);

	/* Resources of a kind carrying every filter tag, appended to out. */
	int (*list_resources)(struct gc_provider *p, enum gc_resource_kind kind,
			      const struct gc_tag_filter *tags, size_t n_tags,
			      struct gc_resource_list *out, struct gc_error *err);
	/* Imports a key pair; *out_id is its id (or name, where the cloud has no ids). */
	int (*import_keypair)(struct gc_provider *p, const struct gc_keypair_request *req,
			      char **out_id, struct gc_error *err);
	int (*delete_keypair)(struct gc_provider *p, const char *id, struct gc_error *err);
	/* Creates a security group allowing ssh_port from allow_from (and, with
	 * allow_members, everything between its members), or with req->id reconciles that
	 * group's rules (ours unwanted go, foreign stay); *out_id is its id. */
	int (*create_secgroup)(struct gc_provider *p, const struct gc_secgroup_request *req,
			       char **out_id, struct gc_error *err);
	int (*delete_secgroup)(struct gc_provider *p, const char *id, struct gc_error *err);

	/* An alias (ubuntu-22.04, ubuntu-24.04, gpu-ready...) or a literal id, to an id. */
	int (*resolve_image)(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
			     struct gc_error *err);
	int (*instance_type)(struct gc_provider *p, const char *type, struct gc_type_facts *out,
			     struct gc_error *err);
	/* The price per hour of one instance; zone may be NULL (the region's price).
	 * *out_currency is the ISO 4217 code the cloud bills the account in ("USD", "CNY"). */
	int (*price)(struct gc_provider *p, const char *type, const char *zone, bool spot,
		     double *out, char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
	/* The region's zones, in the cloud's order. */
	int (*zones)(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
	/* The region's zones that offer type, in the cloud's order (an offering, not stock:
	 * a sold-out zone still offers it); none: the region does not offer the type. */
	int (*type_zones)(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
			  struct gc_error *err);
	/* Every region the account can use (gc sweeps them all), in the cloud's order. */
	int (*regions)(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
	/* The instance's console output, decoded (host keys); *out is NUL-terminated. */
	int (*console_output)(struct gc_provider *p, const char *id, char **out,
			      struct gc_error *err);
	/* provider.network at plan time: whether VPC vpc exists (*vpc_found) and, for each of
	 * the n subnets, whether it exists and its VPC and zone (out[i]). */
	int (*network)(struct gc_provider *p, const char *vpc, const char *const *subnets, size_t n,
		       bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err);
	/* The caller's public address as the cloud sees it ("203.0.113.7"), for the default
	 * SSH rule. NULL: core asks GPUCLUSTER_CHECKIP_URL. */
	int (*caller_address)(struct gc_provider *p, char **out, struct gc_error *err);
	/* plan's preflight: the quota a launch of type (zone NULL: any of the region's) in
	 * the market counts against, its limit and use, and whether the type is sold out
	 * there. NULL: the cloud has no quota API, plan checks nothing. */
	int (*quota)(struct gc_provider *p, const char *type, const char *zone, bool spot,
		     struct gc_quota *out, struct gc_error *err);
	/* placement: cluster (docs/internals/fabric.md): creates the group's placement
	 * resource, tagged; *out_id is what create's placement_id and delete_placement take.
	 * NULL: the cloud has none, the group is only pinned to one zone. */
	int (*create_placement)(struct gc_provider *p, const struct gc_placement_request *req,
				char **out_id, struct gc_error *err);
	int (*delete_placement)(struct gc_provider *p, const char *id, struct gc_error *err);
	/* show-gpus live (docs/internals/gpus.md): every GPU instance type the region offers,
	 * with the zones offering it, in the cloud's order. NULL: show-gpus uses the
	 * catalogue shipped with the binary. */
	int (*gpu_types)(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
			 struct gc_error *err);
	/* Reserved terms the cloud's price API publishes for type in the region: the effective
	 * hourly price of one instance reserved with no upfront fee, or subscribed
	 * (facts->reserved_prepaid), out[0] for 1 year and out[1] for 3 years (-1: none), in
	 * *out_currency. NULL: the cloud publishes none there (docs/internals/gpus.md). */
	int (*reserved_price)(struct gc_provider *p, const char *type, double out[2],
			      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
	/* A public address for a node launched with several network interfaces, which the
	 * cloud gives none (docs/internals/fabric.md, "A reachable address"): allocated with
	 * tags (*out_id, and the address in *out_ip), attached to the instance's primary
	 * interface once it runs, released once it is detached (its instance terminated).
	 * NULL: the cloud keeps a public address whatever the interfaces. */
	int (*create_address)(struct gc_provider *p, const struct gc_tag *tags, size_t n_tags,
			      char **out_id, char **out_ip, struct gc_error *err);
	int (*attach_address)(struct gc_provider *p, const char *id, const char *instance_id,
			      struct gc_error *err);
	int (*delete_address)(struct gc_provider *p, const char *id, struct gc_error *err);
	/* Sets the tag key to value on running instances (at most max_terminate_batch) in
	 * place, or removes it where value is NULL: the tagging calls set_expiry's tag uses
	 * (docs/internals/providers.md, "Retagging"). */
	int (*set_tag)(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
		       const char *value, struct gc_error *err);
};

/* Per-driver counters, for tests, benchmarks and the verbose summary. */
struct gc_provider_stats {
	unsigned long calls;	    /* HTTP requests sent, retries included */
	unsigned long retries;	    /* of those, retries */
	unsigned long throttled;    /* throttling errors received */
	uint64_t ratelimit_wait_ms; /* time spent waiting on our own token buckets */
};

struct gc_provider {
	const struct gc_provider_ops *ops;
	struct gc_log *log;
	const struct gc_clock *clock;
	const struct gc_spec_env *env;
	char *region;
	struct gc_provider_stats stats;
	bool (*cancelled)(void *ctx);
	void *cancel_ctx;
	void *impl; /* the driver's own state */
};

/* Whether the caller asked to stop (gc_provider_config.cancelled). */
bool gc_provider_cancelled(const struct gc_provider *p);

/* The registered clouds (providers/registry.c; providers.md, "The registry"): by name
 * (NULL: no such driver), the i-th (NULL past the last), every name then NULL. */
const struct gc_provider_ops *gc_provider_by_name(const char *name);
const struct gc_provider_ops *gc_provider_at(size_t i);
extern const char *const gc_provider_names[];

/* Opens a session on a cloud. On failure *out is untouched and err names the problem
 * (for credentials: every source of the chain that was tried). */
int gc_provider_open(struct gc_provider **out, const struct gc_provider_ops *ops,
		     const struct gc_provider_config *cfg, struct gc_error *err);
/* Opens p's cloud in another region with the spec's provider settings and p's environment,
 * log, clock and cancel (a check that asks other regions). */
int gc_provider_open_region(struct gc_provider **out, const struct gc_provider *p,
			    const struct gc_spec *spec, const char *region, struct gc_error *err);
void gc_provider_close(struct gc_provider *p);

/* Fails with GC_EUNSUPPORTED, naming the first missing capability, if caps are not all
 * present. */
int gc_provider_check_caps(const struct gc_provider *p, unsigned caps, struct gc_error *err);

int gc_provider_discover(struct gc_provider *p, const struct gc_discover_query *q,
			 struct gc_instance_list *out, struct gc_error *err);
int gc_provider_create(struct gc_provider *p, const struct gc_create_request *req,
		       struct gc_instance_list *out, struct gc_error *err);
/* Terminates any number of ids, in batches of ops->max_terminate_batch. */
int gc_provider_terminate(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err);
/* set_expiry for any number of ids, in batches of ops->max_terminate_batch. */
int gc_provider_set_expiry(struct gc_provider *p, const char *const *ids, size_t n,
			   int64_t expires_at, struct gc_error *err);
/* set_tag for any number of ids, in batches of ops->max_terminate_batch. */
int gc_provider_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
			const char *value, struct gc_error *err);
int gc_provider_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
			       const struct gc_tag_filter *tags, size_t n_tags,
			       struct gc_resource_list *out, struct gc_error *err);
int gc_provider_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req,
			       char **out_id, struct gc_error *err);
int gc_provider_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err);
int gc_provider_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req,
				char **out_id, struct gc_error *err);
int gc_provider_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err);
int gc_provider_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
				 char **out_id, struct gc_error *err);
int gc_provider_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err);
int gc_provider_create_address(struct gc_provider *p, const struct gc_tag *tags, size_t n_tags,
			       char **out_id, char **out_ip, struct gc_error *err);
int gc_provider_attach_address(struct gc_provider *p, const char *id, const char *instance_id,
			       struct gc_error *err);
int gc_provider_delete_address(struct gc_provider *p, const char *id, struct gc_error *err);
int gc_provider_resolve_image(struct gc_provider *p, const char *image, bool is_alias,
			      char **out_id, struct gc_error *err);
int gc_provider_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
			      struct gc_error *err);
int gc_provider_price(struct gc_provider *p, const char *type, const char *zone, bool spot,
		      double *out, char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
int gc_provider_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int gc_provider_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err);
int gc_provider_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
			   struct gc_error *err);
int gc_provider_console_output(struct gc_provider *p, const char *id, char **out,
			       struct gc_error *err);
int gc_provider_caller_address(struct gc_provider *p, char **out, struct gc_error *err);
/* GC_EUNSUPPORTED where the cloud has no quota op. */
int gc_provider_quota(struct gc_provider *p, const char *type, const char *zone, bool spot,
		      struct gc_quota *out, struct gc_error *err);
/* GC_EUNSUPPORTED where the cloud has no reserved_price op. */
int gc_provider_reserved_price(struct gc_provider *p, const char *type, double out[2],
			       char out_currency[GC_CURRENCY_SIZE], struct gc_error *err);
/* GC_EUNSUPPORTED where the cloud has no gpu_types op. */
int gc_provider_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
			  struct gc_error *err);
int gc_provider_network(struct gc_provider *p, const char *vpc, const char *const *subnets,
			size_t n, bool *vpc_found, struct gc_subnet_facts *out,
			struct gc_error *err);

/* A price a driver looked up, kept for the driver's life (a command is short). zone NULL:
 * the region's price (for spot, where the cloud prices spot per zone, the region's lowest). */
struct gc_price_entry {
	char *type;
	char *zone;
	bool spot;
	double amount; /* per hour, as the driver answers it */
	char currency[GC_CURRENCY_SIZE];
};

struct gc_price_cache {
	struct gc_price_entry *items;
	size_t n, alloc;
};

/* The cached price of type in zone (NULL: the region's) and market, or NULL. */
const struct gc_price_entry *gc_price_cache_find(const struct gc_price_cache *c, const char *type,
						 const char *zone, bool spot);
void gc_price_cache_add(struct gc_price_cache *c, const char *type, const char *zone, bool spot,
			double amount, const char *currency);
void gc_price_cache_release(struct gc_price_cache *c);

/* Whether s is an ISO 4217 code as a price API answers it: three capital letters. */
bool gc_currency_code_ok(const char *s);

/* Frees a string vector as zones returns it. */
void gc_strv_free(char **v, size_t n);

/* Formats / parses GC_TAG_EXPIRES_AT values: RFC 3339 UTC, "2026-11-21T18:00:00Z". */
void gc_format_rfc3339(int64_t t, char out[21]);
int gc_parse_rfc3339(const char *s, int64_t *out);
/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; m 1-12, d 1-31), without timegm's
 * locale games: for the parsers of the clouds' looser time formats too. */
int64_t gc_days_from_civil(int64_t y, unsigned m, unsigned d);

/* What drivers share beyond this interface (the request pipeline, busy waits) is in
 * core/driver.h. */

#endif
