/*
 * spec.h: the cluster spec, parsed from YAML and validated.
 *
 * gc_spec_load_* parse a document with libyaml, expand ${VAR} references, check every
 * rule of docs/spec.md, and either return a fully valid spec or collect every problem
 * into a struct gc_diags with its line and column. A returned spec is always valid and
 * has its defaults filled in; nothing downstream re-checks it.
 *
 * Input is hostile until proven otherwise: the loaders cap the file size, nesting depth,
 * alias expansion and node count, and reject invalid UTF-8, all with a located
 * diagnostic rather than a crash or an unbounded allocation.
 *
 * Life cycle: gc_spec_load_file / gc_spec_load_buffer -> use -> gc_spec_free.
 */
#ifndef GC_SPEC_H
#define GC_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "core/error.h"
#include "core/gpuspec.h"

/* Limits, shared with docs/spec.md and docs/cluster.schema.json. */
#define GC_SPEC_MAX_FILE_BYTES	   (1u << 20) /* 1 MiB */
#define GC_SPEC_MAX_DEPTH	   32
#define GC_SPEC_MAX_ALIASES	   64	 /* alias references in one document */
#define GC_SPEC_MAX_NODES	   20000 /* YAML nodes after alias expansion */
#define GC_SPEC_MAX_DIAGS	   100	 /* problems reported; the rest are counted */
#define GC_SPEC_CLUSTER_NAME_MAX   32
#define GC_SPEC_GROUP_NAME_MAX	   24
#define GC_SPEC_MAX_GROUPS	   32
#define GC_SPEC_MAX_GROUP_COUNT	   1000 /* nodes in one group */
#define GC_SPEC_MAX_INSTANCE_TYPES 8
#define GC_SPEC_MAX_ZONES	   8
#define GC_SPEC_MAX_ALLOW_FROM	   32
#define GC_SPEC_MAX_STEPS	   32
#define GC_SPEC_MAX_USER_TAGS	   12  /* the tightest cloud's 20 per resource, less ours */
#define GC_SPEC_MAX_ENVS	   64  /* envs and secrets, each */
#define GC_SPEC_TAG_KEY_MAX	   127 /* the tightest cloud's key limit */
#define GC_SPEC_TAG_VALUE_MAX	   128 /* the tightest cloud's value limit */

enum gc_market {
	GC_MARKET_ON_DEMAND,
	GC_MARKET_SPOT,
	GC_MARKET_SPOT_THEN_ON_DEMAND,
};

enum gc_placement {
	GC_PLACEMENT_ANY,	/* nodes may spread over the listed zones */
	GC_PLACEMENT_SAME_ZONE, /* every node of the group in one zone */
	/* same-zone, and close together: the cloud's cluster placement (docs/internals/fabric.md) */
	GC_PLACEMENT_CLUSTER,
};

/* The network between the nodes of a group (docs/internals/fabric.md). */
enum gc_interconnect {
	GC_INTERCONNECT_AUTO,	  /* rdma for 2+ nodes of a type that has it, else standard */
	GC_INTERCONNECT_RDMA,	  /* the type's RDMA interfaces (EFA, eRDMA, RoCE) */
	GC_INTERCONNECT_STANDARD, /* the ordinary network only */
};

enum gc_container {
	GC_CONTAINER_DOCKER,
	GC_CONTAINER_NONE,
};

/* bootstrap.monitoring: a metrics exporter on every GPU node (docs/internals/monitoring.md) */
enum gc_monitoring {
	GC_MONITORING_NONE,
	GC_MONITORING_DCGM, /* NVIDIA's dcgm-exporter container, port GC_DCGM_PORT */
};
#define GC_DCGM_PORT 9400
extern const char *const gc_monitoring_names[GC_MONITORING_DCGM + 1];

/* Smoke checks, as bit flags. */
#define GC_SMOKE_DRIVER	   (1u << 0)
#define GC_SMOKE_CUDA	   (1u << 1)
#define GC_SMOKE_CONTAINER (1u << 2)
#define GC_SMOKE_NCCL	   (1u << 3)

/* An ISO 4217 currency code and its NUL: "USD", "CNY". */
#define GC_CURRENCY_SIZE 4

/* bootstrap.mirrors: the package hosts a mirror may stand in for (gc_mirror_names) */
enum gc_mirror {
	GC_MIRROR_APT,
	GC_MIRROR_CUDA,
	GC_MIRROR_DOCKER,
	GC_MIRROR_NVIDIA_CONTAINER,
	GC_MIRROR_N
};
extern const char *const gc_mirror_names[GC_MIRROR_N];

/* Where a value came from, for errors found after validation (plan time). */
struct gc_spec_pos {
	unsigned line, col;
};

struct gc_spec_group {
	char *name;
	unsigned count;	       /* 0 is allowed: a group scaled to zero */
	char **instance_types; /* ordered fallback, >= 1 (0 with gpus until it is resolved) */
	size_t n_instance_types;
	char **zones; /* ordered fallback; 0 entries = any zone */
	size_t n_zones;
	enum gc_market market;
	double max_spot_price; /* per hour, in lifecycle.currency; 0 = the cloud's default bid */
	struct gc_spec_pos max_spot_price_pos;
	char *image; /* an alias (ubuntu-22.04, ...) or a literal image id */
	bool image_is_alias;
	unsigned disk_gb;
	enum gc_placement placement;
	/* Nodes of the group may run different instance_types (GPU models): without it a
	 * group with live nodes grows only with the type they run. */
	bool mixed_types;
	struct gc_spec_pos pos; /* the group's mapping */
	struct gc_spec_pos count_pos;
	/* where each value was written, for plan's checks against the cloud (0:0 when the
	 * spec did not write it, as the default image) */
	struct gc_spec_pos instance_types_pos[GC_SPEC_MAX_INSTANCE_TYPES];
	struct gc_spec_pos zones_pos[GC_SPEC_MAX_ZONES];
	struct gc_spec_pos image_pos;
	enum gc_interconnect interconnect;
	unsigned interfaces; /* RDMA interfaces per node; 0: as many as the type has */
	struct gc_spec_pos interconnect_pos, interfaces_pos;
	/* gpus: "A100:8" (docs/internals/gpus.md): plan resolves it into instance_types,
	 * cheapest first (core/gpupick.h); gpu_types_given: the spec wrote instance_types too */
	bool has_gpus, gpu_types_given;
	struct gc_gpu_request gpus;
	struct gc_spec_pos gpus_pos;
	/* after plan's resolution: instance_types[gpus_first..] came from gpus, priced
	 * gpus_prices[i - gpus_first] per hour in gpus_currency (< 0: unknown) */
	size_t gpus_first;
	double *gpus_prices;
	char gpus_currency[8];
	/* The instance role the nodes launch with, by the name the cloud's launch takes
	 * (docs/internals/mounts.md): what a node's own tools get credentials from.
	 * NULL: none. */
	char *role;
	struct gc_spec_pos role_pos;
};

struct gc_spec_step {
	char *name;
	char *run; /* a shell command line or script */
	unsigned timeout_s;
};

struct gc_spec_tag {
	char *key;
	char *value;
};

/*
 * provider.oidc: the role a GitHub Actions job assumes with its OIDC token (docs/ci.md).
 * Used only when GITHUB_ACTIONS=true; elsewhere the cloud's usual chain applies.
 */
struct gc_spec_oidc {
	char *role;	    /* NULL: no oidc block */
	char *provider;	    /* the OIDC provider's ARN or id, on clouds that ask for one */
	char *audience;	    /* NULL: the cloud's default (core/oidc.h) */
	char *session_name; /* NULL: gpucluster-RUN-ATTEMPT */
};

/*
 * provider.network: a VPC and a subnet per zone (a vSwitch on some clouds), for accounts without
 * a default VPC (docs/spec.md). NULL vpc: the cloud's default network.
 */
struct gc_spec_subnet {
	char *zone;
	char *id;
	struct gc_spec_pos pos; /* the id's value */
};

struct gc_spec_network {
	char *vpc;
	struct gc_spec_pos vpc_pos;
	struct gc_spec_subnet *subnets; /* one per zone, as the spec lists them */
	size_t n_subnets;
};

/* mounts[]: a bucket of the cloud's object storage, mounted at path on every node */
struct gc_spec_mount {
	char *bucket;
	char *path;
	bool rw; /* mode rw; default ro */
	struct gc_spec_pos pos, bucket_pos;
};

struct gc_provider_ops;

struct gc_spec {
	char *file; /* as given to the loader */
	char *name;
	struct {
		/* the registry's cloud of that name (core/provider.h): its driver and facts */
		const struct gc_provider_ops *ops;
		const char *name; /* ops->name */
		char *region;
		struct gc_spec_pos region_pos;
		char *profile;	/* NULL: the cloud's default credential chain */
		char *endpoint; /* NULL: the cloud's public endpoint */
		struct gc_spec_oidc oidc;
		struct gc_spec_network network;
	} provider;
	struct {
		char *user;
		unsigned port;
		char **allow_from; /* CIDRs; 0 entries = the caller's address /32 */
		size_t n_allow_from;
		/* ssh.key_env: the variable holding the cluster's key on a CI runner; NULL:
		 * GPUCLUSTER_SSH_KEY (docs/ci.md) */
		char *key_env;
	} ssh;
	struct gc_spec_group *groups;
	size_t n_groups;
	struct {
		char *driver; /* a branch ("570") or "preinstalled" */
		char *cuda;   /* "12.8", or "none" */
		char *cudnn;  /* "9", or "none" */
		enum gc_container container;
		struct gc_spec_step *steps;
		size_t n_steps;
		unsigned smoke; /* GC_SMOKE_* flags */
		/* bootstrap.mirrors: base URLs standing in for the package hosts, NULL when
		 * unset (docs/spec.md: what each replaces) */
		char *mirrors[GC_MIRROR_N];
		enum gc_monitoring monitoring;
		/* who may reach the exporter's port besides the cluster's nodes (CIDRs,
		 * docs/internals/monitoring.md); 0 entries: nobody else */
		char **monitoring_allow_from;
		size_t n_monitoring_allow_from;
	} bootstrap;
	struct {
		uint64_t ttl_s;		/* 0 = no TTL */
		double max_hourly_cost; /* in currency; 0 = no limit */
		struct gc_spec_pos max_hourly_cost_pos;
		/* The currency of max_hourly_cost and every max_spot_price ("USD" unless the
		 * spec says "CNY"), and the rate the user gave to convert (0: none). */
		char currency[GC_CURRENCY_SIZE];
		double cny_per_usd;
		/* lifecycle.on_preempt: a shell command the spot nodes run when the cloud's
		 * interruption notice comes (docs/internals/spot.md); NULL: none. */
		char *on_preempt;
		uint64_t on_preempt_timeout_s; /* its bound, inside the notice window */
		/* lifecycle.idle: a node idle this long powers itself off (the idle step,
		 * docs/internals/idle.md); 0: never */
		uint64_t idle_s;
	} lifecycle;
	struct gc_spec_tag *tags;
	size_t n_tags;
	/* envs: NAME -> value given to every job (run); secrets: names of variables whose
	 * values run reads from the user's environment (cmd/job.c) */
	struct gc_spec_tag *envs;
	size_t n_envs;
	char **secrets;
	size_t n_secrets;
	/* workdir: the job's code, synced to every node by run (cmd/workdir.h); as written,
	 * relative to the spec's folder */
	char *workdir;
	struct gc_spec_pos workdir_pos;
	/* mounts: object storage buckets mounted on every node with the nodes' instance role
	 * (docs/internals/mounts.md) */
	struct gc_spec_mount *mounts;
	size_t n_mounts;
};

/*
 * Looks up ${NAME} references. Returns the value or NULL when unset. The loaders call
 * it instead of getenv so tests and the fuzzer control the environment.
 */
struct gc_spec_env {
	const char *(*lookup)(void *ctx, const char *name);
	void *ctx;
};

/* The process environment (getenv). */
extern const struct gc_spec_env gc_spec_env_process;

/* A variable through env (NULL: the process environment), as the credential chains read
 * them: an empty value counts as unset (NULL). */
const char *gc_spec_env_get(const struct gc_spec_env *env, const char *name);
/* Whether a variable is "true", in any case (the clouds' *_DISABLED switches). */
bool gc_spec_env_true(const struct gc_spec_env *env, const char *name);

/*
 * Loads and validates. On success *out is the spec and 0 is returned. On a spec with
 * problems, -1 is returned with every problem in diags (err->code GC_EINVALID, err's
 * message a one-line summary). On an unreadable file, -1 with err set (GC_EIO) and diags
 * possibly empty. diags must have been initialised by the caller; env may be NULL (no
 * variables are set).
 */
int gc_spec_load_file(struct gc_spec **out, const char *path, const struct gc_spec_env *env,
		      struct gc_diags *diags, struct gc_error *err);
int gc_spec_load_buffer(struct gc_spec **out, const char *name, const char *data, size_t len,
			const struct gc_spec_env *env, struct gc_diags *diags,
			struct gc_error *err);
void gc_spec_free(struct gc_spec *spec);

/* Names of the enums, as written in the spec; the tables are indexed by value. */
extern const char *const gc_market_names[GC_MARKET_SPOT_THEN_ON_DEMAND + 1];
extern const char *const gc_placement_names[GC_PLACEMENT_CLUSTER + 1];
extern const char *const gc_interconnect_names[GC_INTERCONNECT_STANDARD + 1];
const char *gc_market_name(enum gc_market m);
const char *gc_placement_name(enum gc_placement p);
const char *gc_interconnect_name(enum gc_interconnect i);

/* The spec's subnet for zone, or NULL (none given, or no zone). */
const struct gc_spec_subnet *gc_spec_subnet(const struct gc_spec *spec, const char *zone);

/* Total nodes over all groups. */
unsigned gc_spec_node_count(const struct gc_spec *spec);

/* Parses a duration: an integer followed by s, m, h or d ("30m", "12h", "7d"). */
int gc_parse_duration(const char *s, uint64_t *out_seconds);
/* Formats seconds back into the largest exact unit ("90m" -> "90m", 7200 -> "2h"). */
void gc_format_duration(uint64_t seconds, char *out, size_t size);

#endif
