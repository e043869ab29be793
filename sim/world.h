/*
 * world.h: the emulator's state, cloud-neutral: instances with their tags and life
 * cycle, client tokens, key pairs and security groups, for all three clouds at once.
 *
 * The wire frontends (sim/aws, sim/alibaba, sim/tencent) translate a request into these
 * calls and the result back into the cloud's own response; nothing here knows a wire
 * format. What differs between clouds (state names, id shapes, address ranges, what
 * termination does) is read from the cloud's row of the frontend table (frontend.h).
 *
 * Locking: one mutex for the whole world. A frontend takes it with sim_world_lock for
 * the whole of one API action (so a client-token check and the launch it guards are
 * atomic) and every other function here expects it held. The ticker thread takes it
 * too. Hooks into the node manager are called with it held and must not block.
 *
 * Time: life-cycle deadlines are monotonic nanoseconds from the world's clock; the
 * timestamps shown to clients (launch time, tags such as expires-at) are wall seconds.
 *
 * Life cycle: sim_world_new -> ... -> sim_world_free. Objects returned by lookups
 * belong to the world and stay valid until the lock is released.
 */
#ifndef GC_SIM_WORLD_H
#define GC_SIM_WORLD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/error.h"
#include "sim/frontend.h"

/*
 * The life cycle every cloud shares, in order. Each frontend names the states its own
 * way (sim_frontend.states, through sim_state_name): AWS
 * pending/running/shutting-down/terminated, Alibaba Pending/Running/Stopping/(gone),
 * Tencent PENDING/RUNNING/TERMINATING/(gone), and Tencent's recycle bin SHUTDOWN.
 */
enum sim_state {
	SIM_PENDING = 0,
	SIM_RUNNING = 1,
	SIM_RECYCLED = 2,      /* Tencent recycle bin: isolated, still listed, not running */
	SIM_SHUTTING_DOWN = 3, /* termination under way */
	SIM_TERMINATED = 4,    /* AWS keeps these visible for a while; others drop them */
	SIM_LAUNCH_FAILED = 5, /* Tencent LAUNCH_FAILED (a fault) */
	SIM_STOPPED = 6,       /* powered off from inside (sim_world_os_shutdown) */
};
const char *sim_state_name(enum sim_cloud c, enum sim_state s);

struct sim_tag {
	char *key;
	char *value;
};

struct sim_tags {
	struct sim_tag *items;
	size_t n;
	size_t alloc;
};

void sim_tags_release(struct sim_tags *t);
/* Sets key to value, replacing an existing value. */
void sim_tags_set(struct sim_tags *t, const char *key, const char *value);
/* Removes key; returns whether it was there. */
bool sim_tags_remove(struct sim_tags *t, const char *key);
const char *sim_tags_get(const struct sim_tags *t, const char *key);
void sim_tags_copy(struct sim_tags *dst, const struct sim_tags *src);

#define SIM_ID_MAX    40
#define SIM_NAME_MAX  128
#define SIM_TOKEN_MAX 64 /* the clouds' documented ClientToken limit, in ASCII bytes */
#define SIM_IP_MAX    16

struct sim_instance {
	char id[SIM_ID_MAX];
	enum sim_cloud cloud;
	char region[SIM_NAME_MAX];
	char zone[SIM_NAME_MAX];
	char type[SIM_NAME_MAX];
	char image[SIM_NAME_MAX];
	char key_name[SIM_NAME_MAX]; /* key pair name (AWS, Alibaba) or key id (Tencent) */
	char **security_groups;
	size_t n_security_groups;
	char subnet[SIM_NAME_MAX];
	char name[SIM_NAME_MAX]; /* InstanceName / the Name tag, for display */
	struct sim_tags tags;
	bool spot;
	char spot_max_price[32]; /* "" when none was given */
	char client_token[SIM_TOKEN_MAX + 1];
	char reservation[SIM_ID_MAX]; /* the launch call this instance came from */
	char *user_data;	      /* decoded, may be NULL */
	unsigned disk_gb;

	char private_ip[SIM_IP_MAX];
	char public_ip[SIM_IP_MAX]; /* the node's loopback address: where its sshd listens */
	int ssh_port;

	enum sim_state state;
	uint64_t seq;		   /* creation order, for stable listings */
	int64_t launch_wall;	   /* wall seconds */
	uint64_t running_at_ns;	   /* pending -> running */
	uint64_t terminated_at_ns; /* shutting-down -> terminated; 0 while not terminating */
	uint64_t forget_at_ns;	   /* terminated -> removed from listings */
	int64_t release_at_wall;   /* Alibaba AutoReleaseTime / Tencent ActionTimer; 0: none */
	unsigned terminate_calls;  /* Tencent recycle bin: the second call destroys */
	/* eventual consistency (sim_world.eventual): listings that still omit it, and
	 * terminates that still answer NotFound while it runs on */
	unsigned ec_list, ec_terminate;
	char state_reason[SIM_NAME_MAX];

	/* SSH node facts, filled by the node manager when the instance is created */
	char host_key_line[160]; /* "ssh-ed25519 AAAA..." */
	char host_key_fpr[64];	 /* "SHA256:..." */
	char console[2048];	 /* cloud-init style console text, host keys included */
	bool node_up;		 /* the node manager started its listener */
	unsigned node_faults;	 /* SIM_NODE_FAULT_* bits (node.h) */
	/* A spot reclaim (control API POST /nodes/ID/preempt): the notice is on the node's
	 * metadata service from now; the cloud takes the instance at this wall second. */
	int64_t reclaim_at_wall;
	/* the placement group / deployment set / HPC cluster it launched into; "" for none */
	char placement[SIM_ID_MAX];
	/* the instance role it launched with, "" for none; the node's metadata serves it */
	char role[SIM_NAME_MAX];
	/* network interfaces it launched with (0: the one default interface); EC2 gives no
	 * public address to one launched with several (sim/address.c) */
	unsigned interfaces;
	/* an OS-initiated shutdown terminates it (EC2 InstanceInitiatedShutdownBehavior
	 * terminate); otherwise it stops (sim_world_os_shutdown) */
	bool shutdown_terminates;
	/* RDMA devices its node shows (sim_launch.rdma_devices; docs/sim.md "RDMA software") */
	unsigned rdma_devices;
};

struct sim_keypair {
	enum sim_cloud cloud;
	char region[SIM_NAME_MAX];
	char id[SIM_ID_MAX]; /* key-... (AWS), the name (Alibaba), skey-... (Tencent) */
	char name[SIM_NAME_MAX];
	char *public_key; /* the OpenSSH public-key line */
	char fingerprint[96];
	struct sim_tags tags;
	int64_t created_wall;
	unsigned ec_launch; /* eventual consistency: launches that still answer NotFound */
};

/* An ingress ACCEPT rule; its source is one of cidr, cidr_ipv6 or source_group (the
 * others empty): each cloud keeps IPv6 ranges in a field of their own. */
struct sim_rule {
	char protocol[16]; /* "tcp", "udp", "icmp", "-1" / "all" */
	int from_port;
	int to_port;
	char cidr[64];
	char cidr_ipv6[64];
	char source_group[SIM_ID_MAX]; /* a security group of the same cloud: its members */
	char description[SIM_NAME_MAX];
};

struct sim_secgroup {
	enum sim_cloud cloud;
	char region[SIM_NAME_MAX];
	char id[SIM_ID_MAX];
	char name[SIM_NAME_MAX];
	char description[256];
	char vpc[SIM_NAME_MAX];
	/*
	 * Whether members reach each other with no rule at all: Alibaba's InnerAccessPolicy
	 * Accept, the default of a basic ("normal") group. False for an Alibaba advanced
	 * ("enterprise") group and on AWS and Tencent, where only a rule whose source is the
	 * group lets members in.
	 */
	bool inner_accept;
	char type[16]; /* Alibaba's SecurityGroupType ("normal", "enterprise"); else "" */
	struct sim_tags tags;
	struct sim_rule *rules;
	size_t n_rules;
	int64_t created_wall;
	/* eventual consistency: rule changes and launches that still answer NotFound */
	unsigned ec_authorize, ec_launch;
	/* AWS: the egress rules added beyond EC2's default allow-all one, which every group
	 * has from its creation and write_sg lists first */
	struct sim_rule *egress;
	size_t n_egress;
};

/* A client token as the world remembers it (per cloud and region). */
struct sim_token {
	enum sim_cloud cloud;
	char region[SIM_NAME_MAX];
	char token[SIM_TOKEN_MAX + 1];
	char fingerprint[65]; /* sha256 hex of the request's parameters, token and signing aside */
	char reservation[SIM_ID_MAX];
	char **ids; /* the instances that call launched */
	size_t n_ids;
};

/* Life-cycle timings, all in milliseconds. */
struct sim_timing {
	unsigned pending_ms;		/* launch -> running */
	unsigned terminate_ms;		/* terminate -> terminated */
	unsigned terminated_visible_ms; /* AWS: terminated instances stay listed this long */
};

struct sim_node_ops; /* node.h */

struct sim_world {
	pthread_mutex_t lock;
	const struct gc_clock *clock; /* NULL: the real monotonic clock */
	struct sim_timing timing;
	/* TerminateInstances goes through the recycle bin first, on the clouds that have
	 * one (sim_frontend.recycle_bin: Tencent's, hence the name tests and flags use) */
	bool tencent_recycle;
	/* --eventual-consistency: on the clouds that document it (docs/sim.md), how many calls
	 * of each kind miss a new instance, security group or key pair (0: none) */
	unsigned eventual;
	uint64_t rng;	       /* xorshift state: ids, fault dice */
	int64_t wall_offset_s; /* added to the wall clock: tests move "now" to fire timers */
	uint64_t next_seq;

	struct sim_instance **instances;
	size_t n_instances;
	size_t alloc_instances;
	struct sim_keypair **keypairs;
	size_t n_keypairs;
	size_t alloc_keypairs;
	struct sim_secgroup **secgroups;
	size_t n_secgroups;
	size_t alloc_secgroups;
	struct sim_token **tokens;
	size_t n_tokens;
	size_t alloc_tokens;

	/* The node manager, or NULL for an API-only emulator (--no-ssh). */
	const struct sim_node_ops *node_ops;
	void *node_ctx;

	struct sim_placement **placements; /* sim/placement.c */
	size_t n_placements;
	size_t alloc_placements;

	struct sim_address **addresses; /* sim/address.c */
	size_t n_addresses;
	size_t alloc_addresses;
};

struct sim_world *sim_world_new(const struct sim_timing *timing, uint64_t seed,
				const struct gc_clock *clock);
/* Stops every node and frees everything. */
void sim_world_free(struct sim_world *w);
/* Forgets every resource (stopping their nodes); the configuration stays. */
void sim_world_reset(struct sim_world *w);

void sim_world_lock(struct sim_world *w);
void sim_world_unlock(struct sim_world *w);

/* Monotonic now from the world's clock. */
uint64_t sim_world_now_ns(const struct sim_world *w);
/* Wall-clock seconds (time(NULL) plus wall_offset_s). */
int64_t sim_world_wall(const struct sim_world *w);
/* A pseudo-random 64-bit number from the world's generator (lock held). */
uint64_t sim_world_random(struct sim_world *w);

/*
 * Advances every life cycle to now: pending -> running (starting nodes), releases
 * instances whose AutoReleaseTime / ActionTimer has passed, shutting-down -> terminated
 * (stopping nodes), and forgets terminated instances once they stop being listed.
 * Frontends call it at the start of each action; the ticker calls it periodically.
 */
void sim_world_tick(struct sim_world *w);

/* A fresh id in the cloud's shape: prefix "i-", "key-", "sg-", "r-", "ins-", "skey-"... */
void sim_world_new_id(struct sim_world *w, enum sim_cloud c, const char *prefix,
		      char out[SIM_ID_MAX]);

/* --- instances --------------------------------------------------------------------- */

/* What a launch asks for; every string is copied. */
struct sim_launch {
	enum sim_cloud cloud;
	const char *region;
	const char *zone;
	const char *type;
	const char *image;
	const char *key_name;
	const char *authorized_key; /* the key pair's public-key line, for the node; or NULL */
	const char *const *security_groups;
	size_t n_security_groups;
	const char *subnet;
	const char *name;
	const struct sim_tags *tags;
	bool spot;
	const char *spot_max_price;
	const char *client_token; /* NULL or "" for none */
	const char *user_data;
	unsigned disk_gb;
	int64_t release_at_wall; /* 0: no cloud-side deadline */
	unsigned count;
	const char *role;	  /* the instance role (profile, RAM, CAM role name); NULL: none */
	bool shutdown_terminates; /* sim_instance.shutdown_terminates */
	/* the RDMA devices its node gets: with rdma_by_launch the interfaces the launch
	 * attached (EFAs, ERIs), else the type's (an RDMA network that comes with the type) */
	bool rdma_by_launch;
	unsigned rdma_devices;
};

/*
 * Launches launch->count instances in state pending and appends pointers to them to
 * *out (which the caller frees, not the instances). reservation receives the launch's
 * id. Does not check tokens, quotas or faults: the frontend does that first.
 */
void sim_world_launch(struct sim_world *w, const struct sim_launch *launch,
		      struct sim_instance ***out, size_t *n_out, char reservation[SIM_ID_MAX]);

/* The instance with this id in this cloud (any region), or NULL. Forgotten ones are gone. */
struct sim_instance *sim_world_instance(struct sim_world *w, enum sim_cloud c, const char *id);

/* Reclaims a running spot instance notice_s seconds from now (docs/internals/spot.md):
 * returns -1 (nothing changes) when it is not a running spot instance. */
int sim_world_reclaim(struct sim_world *w, struct sim_instance *inst, unsigned notice_s);

/*
 * The node powered itself off (shutdown -h, poweroff; or the control API's
 * POST /nodes/ID/shutdown): a running instance terminates when it launched with
 * shutdown_terminates, else it stops (SIM_STOPPED: listed, its node down, still its
 * cloud's to bill; docs/internals/idle.md). -1 (nothing changes) when it is not running.
 */
int sim_world_os_shutdown(struct sim_world *w, struct sim_instance *inst);

/*
 * Starts terminating inst: running/pending -> shutting-down (its node stops at once).
 * Already terminating or terminated: nothing changes. With the Tencent recycle bin on,
 * the first call on a Tencent instance moves it to SIM_RECYCLED and the second destroys.
 */
void sim_world_terminate(struct sim_world *w, struct sim_instance *inst);

/*
 * Every instance of cloud c in region (NULL: any region) in creation order, into a
 * freshly allocated array the caller frees (not the instances). Includes terminated
 * instances that are still listed; the frontend filters.
 */
size_t sim_world_list(struct sim_world *w, enum sim_cloud c, const char *region,
		      struct sim_instance ***out);

/* --- client tokens ------------------------------------------------------------------ */

/* The token record for (cloud, region, token), or NULL. */
struct sim_token *sim_world_token(struct sim_world *w, enum sim_cloud c, const char *region,
				  const char *token);
/* Remembers that token with this parameter fingerprint launched these instances. */
void sim_world_remember_token(struct sim_world *w, enum sim_cloud c, const char *region,
			      const char *token, const char *fingerprint, const char *reservation,
			      struct sim_instance *const *insts, size_t n);

/* --- key pairs ---------------------------------------------------------------------- */

/* Imports a key; fails with GC_EINVALID when the line is not an OpenSSH public key. The
 * caller checks for duplicates first. */
struct sim_keypair *sim_world_import_key(struct sim_world *w, enum sim_cloud c, const char *region,
					 const char *name, const char *public_key,
					 const struct sim_tags *tags, struct gc_error *err);
/* The algorithm of an OpenSSH public key, as far as the clouds' ImportKeyPair cares. */
enum sim_key_kind { SIM_KEY_RSA, SIM_KEY_DSA, SIM_KEY_ECDSA, SIM_KEY_ED25519, SIM_KEY_OTHER };
/* Parses a public key line "type base64 [comment]" far enough to tell its kind and that
 * its blob is whole: RSA needs a positive exponent and a modulus of at least 1024 bits,
 * DSA four positive integers, ECDSA a known curve and an uncompressed point of its size,
 * Ed25519 a 32-byte key; an unknown type passes with SIM_KEY_OTHER when its blob names
 * it. GC_EINVALID, with why, when the line is malformed. */
int sim_ssh_key_kind(const char *line, enum sim_key_kind *kind, struct gc_error *err);
/* By name or by id; NULL when absent. */
struct sim_keypair *sim_world_keypair(struct sim_world *w, enum sim_cloud c, const char *region,
				      const char *name_or_id);
void sim_world_delete_key(struct sim_world *w, struct sim_keypair *kp);
size_t sim_world_list_keys(struct sim_world *w, enum sim_cloud c, const char *region,
			   struct sim_keypair ***out);

/* --- security groups ---------------------------------------------------------------- */

struct sim_secgroup *sim_world_create_sg(struct sim_world *w, enum sim_cloud c, const char *region,
					 const char *name, const char *description, const char *vpc,
					 const struct sim_tags *tags);
struct sim_secgroup *sim_world_sg(struct sim_world *w, enum sim_cloud c, const char *region,
				  const char *id);
/* Adds a rule; returns false (and adds nothing) when an identical rule exists. */
/* Eventual consistency (sim_world.eventual): whether this call misses a resource, taking
 * one off its count of calls to miss. */
static inline bool sim_ec_miss(unsigned *count)
{
	if (!*count)
		return false;
	--*count;
	return true;
}

bool sim_world_add_rule(struct sim_secgroup *sg, const struct sim_rule *rule);
/* Removes the rule identical to rule (its description aside); false when there is none. */
bool sim_world_remove_rule(struct sim_secgroup *sg, const struct sim_rule *rule);
/* Whether sg has a rule identical to rule (its description aside). */
bool sim_world_has_rule(const struct sim_secgroup *sg, const struct sim_rule *rule);
/* Whether an instance that is not terminated uses sg (deleting it is then refused). */
bool sim_world_sg_in_use(struct sim_world *w, const struct sim_secgroup *sg);
void sim_world_delete_sg(struct sim_world *w, struct sim_secgroup *sg);
size_t sim_world_list_sgs(struct sim_world *w, enum sim_cloud c, const char *region,
			  struct sim_secgroup ***out);

/* --- placement (sim/placement.c; docs/internals/fabric.md) ------------------------------ */

/* An EC2 placement group, an ECS deployment set or a CVM HPC cluster. */
struct sim_placement {
	enum sim_cloud cloud;
	char region[SIM_NAME_MAX];
	char zone[SIM_NAME_MAX]; /* "" where the cloud's resource is regional */
	char id[SIM_ID_MAX];	 /* pg-... (AWS; the name is what calls take), ds-..., hpc-... */
	char name[SIM_NAME_MAX];
	char strategy[32];
	struct sim_tags tags;
	int64_t created_wall;
	char description[257]; /* ECS: the set's Description */
	char token[65];	       /* ECS: the ClientToken that made it */
};

/* How many instances the emulator's placement resource holds: a launch past it fails
 * with the cloud's capacity error (a cluster placement group is one rack's worth). */
#define SIM_PLACEMENT_CAPACITY 8

struct sim_placement *sim_world_create_placement(struct sim_world *w, enum sim_cloud c,
						 const char *region, const char *zone,
						 const char *id_prefix, const char *name,
						 const char *strategy, const struct sim_tags *tags);
/* By id or by name; NULL when absent. */
struct sim_placement *sim_world_placement(struct sim_world *w, enum sim_cloud c, const char *region,
					  const char *id_or_name);
/* Instances not terminated that run in pl. */
size_t sim_world_placement_members(struct sim_world *w, const struct sim_placement *pl);
void sim_world_delete_placement(struct sim_world *w, struct sim_placement *pl);
size_t sim_world_list_placements(struct sim_world *w, enum sim_cloud c, const char *region,
				 struct sim_placement ***out);
/* Frees every placement resource (world reset and free). */
void sim_world_clear_placements(struct sim_world *w);

/* --- addresses (sim/address.c; docs/internals/fabric.md) ------------------------------- */

/* An EC2 Elastic IP address (Domain vpc). Its association lasts while the instance is not
 * terminated: EC2 disassociates the address of an instance that terminates. */
struct sim_address {
	enum sim_cloud cloud;
	char region[SIM_NAME_MAX];
	char id[SIM_ID_MAX]; /* eipalloc-... */
	char public_ip[SIM_IP_MAX];
	char instance[SIM_ID_MAX];    /* associated with; "" none (see sim_world_address_on) */
	char association[SIM_ID_MAX]; /* eipassoc-... */
	char interface[SIM_ID_MAX];   /* the network interface it is associated with */
	struct sim_tags tags;
	int64_t created_wall;
};

/* Elastic IP addresses per region: EC2's default quota ("EC2-VPC Elastic IPs", 5) */
#define SIM_ADDRESS_LIMIT 5

struct sim_address *sim_world_create_address(struct sim_world *w, enum sim_cloud c,
					     const char *region, const struct sim_tags *tags);
struct sim_address *sim_world_address(struct sim_world *w, enum sim_cloud c, const char *region,
				      const char *id);
/* The instance a is associated with, or NULL (an association ends with its instance). */
struct sim_instance *sim_world_address_on(struct sim_world *w, struct sim_address *a);
/* The address associated with instance in, or NULL. */
struct sim_address *sim_world_address_of(struct sim_world *w, const struct sim_instance *in);
void sim_world_delete_address(struct sim_world *w, struct sim_address *a);
size_t sim_world_list_addresses(struct sim_world *w, enum sim_cloud c, const char *region,
				struct sim_address ***out);
/* Frees every address (world reset and free). */
void sim_world_clear_addresses(struct sim_world *w);

#endif
