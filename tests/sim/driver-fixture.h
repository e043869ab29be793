/*
 * driver-fixture.h: what the driver tests share: the conformance suite
 * (driver-conformance.c, every shared case run on each cloud) and the cloud-specific
 * cases (test-aws-driver.c, test-alibaba-driver.c, test-tencent-driver.c). A struct
 * drv_cloud describes a cloud (driver-aws.h, driver-alibaba.h, driver-tencent.h): its
 * driver, region, zones, types and images, its credentials, what its answers and errors
 * look like, and hooks for the checks only it has. Per test: the emulator (sim-fixture.h)
 * served in-process on 127.0.0.1 with its request log in a temporary directory, the driver
 * opened against it (prov), the environment the driver sees (HOME in that directory, the
 * cloud's key pair, its metadata service switched off: it would leave the loopback),
 * warnings of the driver's log kept in `warnings`, and optionally fake nodes whose console
 * shows their host key. Besides: moving the fake clock with the world ticked, the request
 * log read back, launch requests with the cluster's tags, and a scripted server for the
 * answers no cloud gives (garbage, oversized and endless bodies, retry hints).
 *
 * Life cycle: a test's setup calls drv_setup with its cloud; test_teardown (here) undoes
 * it all, running the cloud's `after` check on the request log first. Header-only, after
 * sim-fixture.h; one test file at a time. Helpers not every driver test uses are static
 * inline.
 */
#ifndef GC_TEST_DRIVER_FIXTURE_H
#define GC_TEST_DRIVER_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "core/log.h"
#include "core/provider.h"
#include "fake-clock.h"
#include "fake-http.h"
#include "sim-fixture.h"
#include "sim/node.h"
#include "sim/server.h"
#include "sim/sim.h"

struct sim_secgroup;

/* An image a resolve gives (want), or refuses (code, and message whole or in part). */
struct drv_image {
	const char *image;
	bool is_alias;
	const char *want;
	enum gc_errcode code;
	const char *message;
	bool whole_message;
	const char *cloud_code; /* NULL: not checked */
};

/* A type's facts in the catalogue; -1 and NULL: not checked. */
struct drv_type {
	const char *name;
	int vcpus, memory_mib, gpus;
	const char *gpu_model;
	int gpu_memory_mib;
};

/* The checks only one cloud has, called from the shared cases; each may be NULL. */
struct drv_hooks {
	/* before a launch or a call whose counts must be the launches alone (the image, the
	 * network, the group resolved once) */
	void (*warm)(void);
	/* discover_pages: the DescribeInstances lines of the tag filter, then the lines
	 * after the key-only filter ran too */
	void (*discover_wire)(json_t *pages);
	void (*discover_by_key_wire)(json_t *pages);
	/* terminate_gone: the terminate calls of ids[1..3] (ids[2] never existed) */
	void (*terminate_wire)(const char *const *ids);
	/* keypairs: the request log once the key is gone */
	void (*keypairs_wire)(void);
	/* secgroups: our group just made (g: the emulator's, locked), its requests, then
	 * what is left to check before it is used and deleted */
	void (*secgroup_world)(const struct sim_secgroup *g, const char *id);
	void (*secgroup_wire)(const char *id);
	void (*secgroups_more)(struct gc_secgroup_request *sr, const char *id);
	/* images: the request log after the three aliases */
	void (*images_wire)(void);
	/* types_prices: every price check (the caching is shared) */
	void (*prices)(void);
	/* faults: the retried action's lines after a 5xx and a drop; what else is checked */
	void (*faults_more)(struct gc_create_request *r, struct gc_instance_list *got);
	/* auth: a driver opened with a bad secret (which 0) or an unknown key id (which 1) */
	void (*auth_bad)(struct gc_provider *bad, int which);
	void (*auth_more)(void);
};

/* What differs between the clouds' driver tests. */
struct drv_cloud {
	const char *name; /* the ctest name sim.driver.NAME, the fault rules' cloud */
	const struct gc_provider_ops *ops; /* the one place the suite names a driver */
	enum sim_cloud frontend;	   /* the emulator's port that is the endpoint */
	const char *region;
	const char *tmp_template; /* the temporary directory, for mkdtemp */
	/* the environment: the key pair's variables and values, the metadata service's off
	 * switch (set to "true"), and up to two variables naming `file` in the directory */
	const char *key_id_var, *secret_var, *metadata_off_var;
	const char *key_id, *secret;
	const char *file_vars[2];
	const char *file_name; /* NULL: no such file */
	/* launch_req's type, image and zone (NULL: any), and the zone it lands in */
	const char *type, *image, *zone;
	const char *launch_zone;
	/* fake nodes printing this console around their host key line; NULL: no nodes */
	void (*console)(struct sim_instance *inst);
	/* before launch_ok's create (a security group the cloud needs), or NULL */
	void (*before_launch)(struct gc_create_request *r);
	/* after the emulator stopped, before the request log goes, or NULL */
	void (*after)(void);

	/* discover: items per DescribeInstances page; launch_pages' least wait on our own
	 * buckets; whether an instance listed shows its client token */
	unsigned page_size, pages_wait_ms;
	bool lists_client_token;
	/* DescribeInstances pages by Offset and TotalCount, not tokens: the emulator's
	 * token modes answer a TotalCount of 1e9 there (docs/sim.md, "Hostile answers") */
	bool pages_by_offset;
	/* create: another type for a token's mismatch, the code and status it gets; the
	 * HTTP status of an InternalError */
	const char *other_type, *mismatch_code;
	int mismatch_status, internal_status;
	/* terminate: an id that never existed; how long a terminated instance is still
	 * listed; the calls that ids 1..3 take; a malformed id and its code (NULL: none) */
	const char *unknown_id;
	uint64_t forget_ms;
	unsigned gone_calls;
	const char *malformed_id, *malformed_code;
	/* key pairs: names (ours, someone's untagged one, an Ed25519 one), what an id looks
	 * like (prefix; NULL: the name), the duplicate's code, the Ed25519 refusal's code
	 * (NULL: the cloud takes Ed25519 keys, GC_CAP_ED25519_KEYPAIR, and the tests import
	 * the engine's own; else fixed RSA keys); whether the listed fingerprint is the key's
	 * SHA256 one */
	const char *key_name, *foreign_key_name, *ed_key_name, *key_id_prefix;
	const char *key_duplicate_code, *ed25519_code;
	bool sha256_fingerprint;
	/* security groups: the name of someone else's group; the in-use code */
	const char *foreign_sg_name, *sg_in_use_code;
	/* catalogue: images resolved (image NULL ends), literal ids passed through without a
	 * call, images refused; types (name NULL ends), a type not offered */
	const struct drv_image *images, *bad_images;
	const char *const *literal_images;
	const struct drv_type *types;
	const char *unknown_type;
	const char *price_zone; /* a spot price's zone, cached once asked */
	/* zones and regions: how many, the first and last (regions: 0, not checked) */
	size_t n_zones, n_regions;
	const char *first_zone, *last_zone, *first_region, *last_region;
	bool zones_cached; /* asked once per driver */
	/* console output: empty until the node boots; the code for an unknown instance
	 * (NULL: not checked) */
	bool console_empty_before_boot;
	const char *console_missing_code;
	/* faults: the zone whose capacity runs out, the code, the HTTP status and where the
	 * message says; the zone tried next; the quota code; the action a 5xx and a drop are
	 * injected into (zones, or regions when retry_regions) */
	const char *capacity_zone, *capacity_code, *capacity_where, *fallback_zone;
	int capacity_status;
	const char *quota_code;
	const char *retry_action;
	bool retry_regions;
	/* a request libcurl resends after a dropped connection is refused as a nonce seen
	 * before (SignatureNonceUsed) and signed again */
	bool nonce_resend;
	/* auth: a wrong secret, an unknown key id, the codes (and the first's status, 0: not
	 * checked); what the message of no credentials names (NULL ends) */
	const char *bad_secret, *bad_key_id, *bad_secret_code, *bad_key_code;
	int bad_secret_status;
	const char *const *no_creds_names;
	/* our RunInstances request bucket's burst (0: not checked that way) */
	int run_burst;
	/* the zones call's action, named in a garbage answer's message; the terminate and
	 * instance-type calls' (driver-answers.c bends their answers) */
	const char *zones_action, *terminate_action, *types_action;
	const struct drv_hooks *hooks;
};

#define CLUSTER "drv" /* the cluster of the tests' instances */

static const struct drv_cloud *drv;

/* ---- the environment the driver sees ------------------------------------------------ */

struct drv_env {
	char home[128];
	char file[160]; /* file_name in the temporary directory; absent unless a test writes it */
	const char *key_id;
	const char *secret;
};

static struct drv_env envv;

static const char *env_lookup(void *ctx, const char *name)
{
	struct drv_env *e = ctx;

	if (!strcmp(name, drv->key_id_var))
		return e->key_id;
	if (!strcmp(name, drv->secret_var))
		return e->secret;
	if (!strcmp(name, drv->metadata_off_var))
		return "true";
	if (!strcmp(name, "HOME"))
		return e->home;
	for (size_t i = 0; i < 2; i++)
		if (drv->file_vars[i] && !strcmp(name, drv->file_vars[i]))
			return e->file;
	return NULL;
}

static const struct gc_spec_env test_env = { env_lookup, &envv };

/* ---- the log the driver writes to -------------------------------------------------- */

static struct gc_log tlog;
static char warnings[4096];

static void sink(void *ctx, enum gc_log_level level, const char *line)
{
	(void)ctx;
	if (level <= GC_LOG_WARN && strlen(warnings) + strlen(line) + 2 < sizeof(warnings)) {
		strncat(warnings, line, sizeof(warnings) - strlen(warnings) - 1);
		strncat(warnings, "\n", sizeof(warnings) - strlen(warnings) - 1);
	}
}

/* ---- the emulator's nodes, minus SSH: the console a node would print ---------------- */

static int node_create(void *ctx, struct sim_instance *inst, const char *authorized_key,
		       const struct sim_itype *type, const struct sim_image *image,
		       struct gc_error *err)
{
	(void)ctx;
	(void)authorized_key;
	(void)type;
	(void)image;
	(void)err;
	snprintf(inst->host_key_line, sizeof(inst->host_key_line),
		 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeHostKeyFor%.17s", inst->id + 2);
	drv->console(inst);
	return 0;
}

static void node_noop(void *ctx, struct sim_instance *inst)
{
	(void)ctx;
	(void)inst;
}

static void node_destroy(void *ctx, const char *id)
{
	(void)ctx;
	(void)id;
}

static const struct sim_node_ops fake_nodes = {
	.create = node_create, .start = node_noop, .stop = node_noop, .destroy = node_destroy
};

/* ---- per-test emulator, driver and temporary directory ------------------------------ */

static struct sim_server *server;
static struct gc_provider *prov;
static char tmpdir[64], logpath[128], endpoint[64];

static void clear_proxy_env(void)
{
	static const char *const vars[] = { "http_proxy",  "HTTP_PROXY", "https_proxy",
					    "HTTPS_PROXY", "all_proxy",	 "ALL_PROXY" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* Opens the cloud's driver at ep, with the test's environment, clock and log. */
static inline int open_with(struct gc_provider **out, const char *ep, const char *profile,
			    bool no_rate_limit, bool (*cancelled)(void *), struct gc_error *err)
{
	struct gc_provider_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.region = drv->region;
	cfg.profile = profile;
	cfg.endpoint = ep;
	cfg.env = &test_env;
	cfg.clock = &fake;
	cfg.log = &tlog;
	cfg.no_rate_limit = no_rate_limit;
	cfg.cancelled = cancelled;
	return gc_provider_open(out, drv->ops, &cfg, err);
}

static int drv_setup(void **state, const struct drv_cloud *cloud)
{
	struct sim_server_config scfg;
	struct gc_error err;

	drv = cloud;
	clear_proxy_env();
	if (setup(state) != 0)
		return -1;
	if (drv->console)
		sim.world->node_ops = &fake_nodes;
	snprintf(tmpdir, sizeof(tmpdir), "%s", drv->tmp_template);
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(logpath, sizeof(logpath), "%s/requests.jsonl", tmpdir);
	snprintf(envv.home, sizeof(envv.home), "%s", tmpdir);
	snprintf(envv.file, sizeof(envv.file), "%s/%s", tmpdir,
		 drv->file_name ? drv->file_name : "absent");
	envv.key_id = drv->key_id;
	envv.secret = drv->secret;
	warnings[0] = '\0';
	gc_log_init(&tlog, GC_LOG_WARN, sink, NULL);

	memset(&scfg, 0, sizeof(scfg));
	scfg.listen = "127.0.0.1";
	scfg.request_log = logpath;
	scfg.tick_ms = 20;
	gc_error_init(&err);
	server = sim_server_start(&sim, &scfg, &err);
	if (!server) {
		print_error("cannot start the emulator: %s\n", err.message);
		return -1;
	}
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d",
		 sim_server_port(server, drv->frontend));
	if (open_with(&prov, endpoint, NULL, false, NULL, &err) != 0) {
		print_error("cannot open the driver: %s\n", err.message);
		return -1;
	}
	return 0;
}

static int test_teardown(void **state)
{
	gc_provider_close(prov);
	prov = NULL;
	sim_server_stop(server);
	server = NULL;
	if (drv->after)
		drv->after();
	unlink(logpath);
	if (drv->file_name)
		unlink(envv.file);
	rmdir(tmpdir);
	gc_log_release(&tlog);
	return teardown(state);
}

static inline void advance_ms(uint64_t ms)
{
	fc.now += ms * MS;
	sim_world_lock(sim.world);
	sim_world_tick(sim.world);
	sim_world_unlock(sim.world);
}

/* Request-log lines for an action (NULL: every line), in order, as JSON objects (caller
 * decrefs the array). */
static inline json_t *logged(const char *action)
{
	json_t *all = json_array();
	FILE *f = fopen(logpath, "r");
	static char line[1 << 20];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);

		if (o &&
		    (!action || !strcmp(json_string_value(json_object_get(o, "action")), action)))
			json_array_append(all, o);
		json_decref(o);
	}
	fclose(f);
	return all;
}

static inline size_t logged_count(const char *action)
{
	json_t *l = logged(action);
	size_t n = json_array_size(l);

	json_decref(l);
	return n;
}

/* A parameter of a logged call, by its flat name ("Filter.1.Name"), or NULL. */
static inline const char *param(json_t *line, const char *name)
{
	return json_string_value(json_object_get(json_object_get(line, "params"), name));
}

/* A fault rule for the cloud: "RunInstances:5xx,times=1" -> "aws:RunInstances:5xx,...". */
static inline void add_fault(const char *rule)
{
	struct gc_error err;
	char full[256];

	gc_error_init(&err);
	snprintf(full, sizeof(full), "%s:%s", drv->name, rule);
	if (sim_faults_add(sim.faults, full, &err) != 0)
		fail_msg("fault '%s': %s", full, err.message);
}

/* Instances of the cloud in the world: every one with any, else those in state only. */
static inline size_t world_count(enum sim_state only, bool any)
{
	struct sim_instance **all;
	size_t n, k = 0;

	sim_world_lock(sim.world);
	n = sim_world_list(sim.world, drv->frontend, NULL, &all);
	for (size_t i = 0; i < n; i++)
		if (any || all[i]->state == only)
			k++;
	sim_world_unlock(sim.world);
	free(all);
	return k;
}

/* The emulator's state of an instance of the cloud (it must exist). */
static inline enum sim_state world_state(const char *id)
{
	enum sim_state s;

	sim_world_lock(sim.world);
	s = sim_world_instance(sim.world, drv->frontend, id)->state;
	sim_world_unlock(sim.world);
	return s;
}

/* ---- building requests -------------------------------------------------------------- */

/* struct gc_tag holds owned (non-const) strings: writable copies of the literals */
static char k_cluster[] = GC_TAG_CLUSTER, v_cluster[] = CLUSTER, k_group[] = GC_TAG_GROUP,
	    v_group[] = "workers", k_hash[] = GC_TAG_SPEC_HASH, v_hash[] = "h4sh",
	    k_team[] = "team", v_team[] = "research";

static struct gc_tag base_tags[] = {
	{ k_cluster, v_cluster },
	{ k_group, v_group },
	{ k_hash, v_hash },
	{ k_team, v_team },
};

static inline struct gc_create_request launch_req(unsigned count, const char *token)
{
	struct gc_create_request r;

	memset(&r, 0, sizeof(r));
	r.group = "workers";
	r.type = drv->type;
	r.image_id = drv->image;
	r.zone = drv->zone;
	r.count = count;
	r.disk_gb = 200;
	r.client_token = token;
	r.tags = base_tags;
	r.n_tags = sizeof(base_tags) / sizeof(base_tags[0]);
	return r;
}

/* What a launch needs before it goes out (a security group on some clouds). */
static inline void launch_prep(struct gc_create_request *r)
{
	if (drv->before_launch)
		drv->before_launch(r);
}

static inline void launch_ok(struct gc_create_request *r, struct gc_instance_list *out)
{
	struct gc_error err;

	launch_prep(r);
	gc_error_init(&err);
	if (gc_provider_create(prov, r, out, &err) != 0)
		fail_msg("create: %s", err.message);
}

/*
 * Twelve launches of 100 of the cluster's instances and one of three of another cluster,
 * with the emulator's own token buckets on: ours must keep under them (nothing throttled).
 */
static inline void launch_pages(void)
{
	static char v_other[] = "other";
	struct gc_tag other[] = { { k_cluster, v_other } };
	struct gc_instance_list got;

	sim_faults_set_rate_limits(sim.faults, true);
	gc_instance_list_init(&got);
	for (int i = 0; i < 12; i++) {
		char tok[32];
		struct gc_create_request r;

		snprintf(tok, sizeof(tok), "gc-page-%d", i);
		r = launch_req(100, tok);
		launch_ok(&r, &got);
	}
	{
		struct gc_create_request r = launch_req(3, "gc-other");
		r.tags = other;
		r.n_tags = 1;
		launch_ok(&r, &got);
	}
	assert_int_equal(got.n, 1203);
	assert_int_equal(prov->stats.throttled, 0);
	gc_instance_list_release(&got);
}

/* A fresh key pair's public line, as the engine imports it. */
static inline void public_line(struct gc_buf *out, const char *comment)
{
	struct gc_keypair kp;

	gc_keypair_init(&kp);
	assert_int_equal(gc_keypair_generate(&kp, comment, NULL), 0);
	assert_int_equal(gc_keypair_public_line(out, &kp), 0);
	gc_keypair_release(&kp);
}

static inline void expect_image(const char *alias, bool is_alias, const char *want)
{
	struct gc_error err;
	char *id = NULL;

	gc_error_init(&err);
	if (gc_provider_resolve_image(prov, alias, is_alias, &id, &err) != 0)
		fail_msg("resolve '%s': %s", alias, err.message);
	assert_string_equal(id, want);
	free(id);
}

/*
 * Security group id (the cluster's) in use by a running instance: the cloud's in_use code,
 * waited on for ten attempts, then given up; once the instance is going, the wait ends
 * with the group deleted (the fake clock moves), and deleting it again is done at once.
 */
static inline void secgroup_in_use(const char *id, const char *in_use)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_create_request r = launch_req(1, "gc-sg");
	struct gc_instance_list got;
	struct gc_resource_list found;
	struct gc_error err;
	const char *ids[1];
	size_t before;

	gc_instance_list_init(&got);
	gc_resource_list_init(&found);
	gc_error_init(&err);
	r.security_group_id = id;
	launch_ok(&r, &got);
	advance_ms(2000);
	before = logged_count("DeleteSecurityGroup");
	assert_int_equal(gc_provider_delete_secgroup(prov, id, &err), -1);
	assert_string_equal(err.cloud_code, in_use);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_int_equal(logged_count("DeleteSecurityGroup") - before, 10);

	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	assert_int_equal(gc_provider_delete_secgroup(prov, id, &err), 0);
	assert_int_equal(gc_provider_delete_secgroup(prov, id, &err), 0); /* gone: done */
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_SECGROUP, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 0);
	gc_resource_list_release(&found);
	gc_instance_list_release(&got);
}

/* The caller's cancel, for drivers opened with open_with(..., test_cancelled, ...). */
static bool cancel_flag;

static inline bool test_cancelled(void *ctx)
{
	(void)ctx;
	return cancel_flag;
}

/*
 * The caller's cancel reaches a wait on our own buckets: `burst` launches, one a call, go
 * at once (the RunInstances bucket holds that many); the next would wait for a refill,
 * and cancelled meanwhile it fails at once with GC_ECANCELLED and is never sent.
 */
static inline void launch_burst_then_cancel(int burst)
{
	struct gc_provider *p = NULL;
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long sent;
	char tok[32];

	gc_error_init(&err);
	gc_instance_list_init(&got);
	cancel_flag = false;
	assert_int_equal(open_with(&p, endpoint, NULL, false, test_cancelled, &err), 0);
	for (int i = 0; i < burst; i++) {
		struct gc_create_request r;

		snprintf(tok, sizeof(tok), "gc-cancel-%d", i);
		r = launch_req(1, tok);
		assert_int_equal(gc_provider_create(p, &r, &got, &err), 0);
	}
	assert_int_equal(p->stats.ratelimit_wait_ms, 0);
	cancel_flag = true;
	sent = p->stats.calls;
	snprintf(tok, sizeof(tok), "gc-cancel-%d", burst);
	{
		struct gc_create_request r = launch_req(1, tok);

		assert_int_equal(gc_provider_create(p, &r, &got, &err), -1);
	}
	assert_int_equal(err.code, GC_ECANCELLED);
	assert_non_null(strstr(err.message, "cancelled while waiting on our own rate limit"));
	assert_int_equal(p->stats.calls, sent);
	assert_int_equal(got.n, (size_t)burst);
	cancel_flag = false;
	gc_instance_list_release(&got);
	gc_provider_close(p);
}

/* ---- a scripted server: what the emulator does not answer --------------------------- */

struct scripted {
	int status;
	const char *body;	 /* NULL: DRV_BIG_LEN spaces; endless_body: '<' without end */
	const char *retry_after; /* x-acs-retry-after (Alibaba's hint), or NULL */
};

#define DRV_BIG_LEN ((size_t)20 << 20)

static const char endless_body[] = "<endless>"; /* stands for the endless body */

static const struct scripted *script;
static size_t script_n, script_pos;
static char *big;

static inline ssize_t endless(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	if (pos >= DRV_BIG_LEN)
		return MHD_CONTENT_READER_END_OF_STREAM;
	memset(buf, '<', max);
	return (ssize_t)max;
}

/* Answers script[script_pos++], the last entry again once the script has run out. */
static inline enum MHD_Result scripted_handler(void *cls, struct MHD_Connection *c, const char *url,
					       const char *method, const char *version,
					       const char *upload, size_t *upload_size,
					       void **con_cls)
{
	const struct scripted *s;
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)upload;
	if (!*con_cls) { /* the body arrives in later calls: take it, answer at the end */
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	s = &script[script_pos < script_n ? script_pos : script_n - 1];
	script_pos++;
	if (s->body == endless_body)
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536, endless, NULL, NULL);
	else if (s->body)
		r = MHD_create_response_from_buffer(strlen(s->body), (void *)(uintptr_t)s->body,
						    MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer(DRV_BIG_LEN, big, MHD_RESPMEM_PERSISTENT);
	if (s->retry_after)
		MHD_add_response_header(r, "x-acs-retry-after", s->retry_after);
	ret = MHD_queue_response(c, (unsigned)s->status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Starts the scripted server and opens the driver at it into *p. */
static inline struct MHD_Daemon *scripted_start(struct gc_provider **p)
{
	struct MHD_Daemon *d;
	struct gc_error err;
	char ep[64];

	big = gc_xmalloc(DRV_BIG_LEN);
	memset(big, ' ', DRV_BIG_LEN);
	d = fake_http_start(scripted_handler, NULL, NULL, ep);
	assert_non_null(d);
	gc_error_init(&err);
	assert_int_equal(open_with(p, ep, NULL, false, NULL, &err), 0);
	return d;
}

static inline void scripted_stop(struct MHD_Daemon *d, struct gc_provider *p)
{
	gc_provider_close(p);
	MHD_stop_daemon(d);
	free(big);
	big = NULL;
}

/* The next answers are s[0..n), then s[n - 1] for ever; p's call count starts again. */
static inline void run_script(struct gc_provider *p, const struct scripted *s, size_t n)
{
	script = s;
	script_n = n;
	script_pos = 0;
	p->stats.calls = 0;
}

#endif
