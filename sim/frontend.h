/*
 * frontend.h: the emulator's clouds, one row each. Every per-cloud fact the shared parts
 * of the emulator need (the server's port and handler, the world's id shapes and state
 * names, the default credential, the OIDC audience, the catalogue, the rate limits, the
 * node's kernel and host name) lives in the cloud's struct sim_frontend, defined in its own folder
 * (sim/aws/ec2.c, sim/alibaba/ecs.c, sim/tencent/cvm.c) and listed in sim/frontend.c.
 * Nothing outside a cloud's folder switches on the cloud.
 *
 * Adding a cloud: a folder sim/NAME/ whose frontend defines its row, a constant in
 * enum sim_cloud and the row's line in sim/frontend.c (docs/internals/ADDING-A-PROVIDER.md).
 *
 * The rows are const and the table is read from any thread.
 */
#ifndef GC_SIM_FRONTEND_H
#define GC_SIM_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The clouds, in table order; also the index of their daemon in the server. */
enum sim_cloud {
	SIM_AWS = 0,
	SIM_ALIBABA = 1,
	SIM_TENCENT = 2,
};
#define SIM_NCLOUDS 3

/* How many life-cycle states there are (enum sim_state in world.h). */
#define SIM_NSTATES 7

struct sim;
struct sim_req;
struct sim_resp;
struct sim_instance;
struct sim_catalog;

/* Which of a cloud's rate buckets a call is charged to (see sim_frontend.rate). */
enum sim_bucket {
	SIM_BUCKET_REQUEST,    /* one token a call */
	SIM_BUCKET_UNFILTERED, /* a listing without filters, ids or a page size */
	SIM_BUCKET_RESOURCE,   /* launches and terminations, one token an instance */
};

/* One bucket's figures: a token bucket of cap tokens refilled at refill a second, or,
 * when per_minute is set, a window of per_minute calls a clock minute. */
struct sim_rate {
	uint64_t cap, refill;
	uint64_t per_minute;
	char desc[96]; /* how throttled calls name the limit: "EC2 request bucket for ..." */
};

/* sim_frontend.buckets: which buckets beyond the request bucket the cloud has */
#define SIM_RATE_UNFILTERED 1u /* SIM_CALL_UNFILTERED calls go to their own bucket */
#define SIM_RATE_LAUNCH	    2u /* launches take from the resource bucket */
#define SIM_RATE_TERMINATE  4u /* terminations take from the resource bucket */

struct sim_frontend {
	const char *name;     /* "aws": flags, fault rules, the request log, the ready file */
	const char *title;    /* "AWS EC2", for --help */
	const char *endpoint; /* what the port serves, "EC2", for --help */

	/* the port's handler: a pure function of (sim, request) */
	void (*handle)(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

	/* the credential accepted unless configured otherwise (docs/sim.md) */
	const char *key_id, *secret;
	/* the audience its identity provider trusts for the emulator's issuer (sim/oidc.h) */
	const char *audience;
	/* what it sells: regions, zones, instance types, images (sim/NAME/offer.c) */
	const struct sim_catalog *catalog;

	/* the world: state names by enum sim_state, ids, addresses, life cycle */
	const char *states[SIM_NSTATES];
	unsigned id_len;	     /* random characters after an id's prefix */
	const char *id_alphabet;     /* they are drawn from */
	const char *instance_prefix; /* "i-" */
	const char *key_prefix;	     /* a key pair's id prefix; NULL: the id is its name */
	const char *private_net;     /* the first two octets of private addresses, "10.0" */
	bool keeps_terminated;	     /* terminated instances stay listed a while */
	bool recycle_bin;	     /* termination can go through a recycle bin first */

	/* the documented rate limits: the bucket for (action, kind); buckets: SIM_RATE_* */
	void (*rate)(const char *action, enum sim_bucket kind, struct sim_rate *out);
	unsigned buckets;

	/* the nodes: the kernel of Ubuntu 22.04 and 24.04 images, and the host name the
	 * cloud's images give an instance with private address ip */
	const char *kernels[2];
	void (*hostname)(const struct sim_instance *inst, const char *ip, char *out, size_t size);
	/* the state reason of a reclaimed spot instance, as Describe shows it */
	const char *spot_reclaim_reason;
	/* the state reason of an instance powered off from inside; NULL: none shown */
	const char *os_shutdown_reason;
};

/* The row of cloud c; c must be a valid enum sim_cloud. */
const struct sim_frontend *sim_frontend(enum sim_cloud c);

/* "aws", "alibaba", "tencent"; "?" for anything else */
const char *sim_cloud_name(enum sim_cloud c);
/* Parses a cloud name; returns 0, or -1 when unknown. */
int sim_cloud_parse(const char *name, enum sim_cloud *out);
/* The cloud names in table order, joined by ", ", for messages. */
#define SIM_CLOUD_NAMES_MAX (SIM_NCLOUDS * 32)
void sim_cloud_names(char *out, size_t size);

#endif
