/*
 * test-aws-driver.c: the AWS EC2 driver (providers/aws) through the provider wrappers,
 * against the emulator served in-process on 127.0.0.1 (its EC2 and Price List frontends
 * behind libmicrohttpd, a world on the fake clock), and against a small fake server for
 * answers no cloud gives: garbage and oversized bodies.
 *
 * Covered: discover with tag filters over pages (1200 instances, two pages of 1000 seen
 * in the request log), launches with tags on instance and volume, spot, the TTL timer
 * the emulator honours, client-token replay and mismatch, a lost answer retried without a
 * duplicate, terminate with ids already gone, key pairs and security groups found by tag,
 * image aliases, type facts, on-demand and spot prices, zones, console output, our token
 * buckets keeping under the emulator's, and the error taxonomy under injected faults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "core/provider.h"
#include "core/str.h"
#include "driver-fixture.h"
#include "providers/aws/ec2.h"
#include "providers/aws/sigv4.h"
#include "sim/catalog.h"
#include "sim/sim.h"

#define AKID   "AKIAGPUCLUSTERSIM001"
#define SECRET "gpucluster-sim-aws-secret-key-0000000000"
#define UBUNTU "ami-0e8d2a5e1c4f22040"
#define NOBLE  "ami-04b7c5d3f9a124040"
#define DLAMI  "ami-0d1e5f7a9b3c5e570"
#define TYPE   "g5.xlarge"

/* The console a node would print: cloud-init's host keys block. */
static void aws_console(struct sim_instance *inst)
{
	snprintf(inst->console, sizeof(inst->console),
		 "ci-info: no authorized SSH keys fingerprints found for user ubuntu.\n"
		 "-----BEGIN SSH HOST KEY KEYS-----\n%s root@ip-10-0-0-1\n"
		 "-----END SSH HOST KEY KEYS-----\n",
		 inst->host_key_line);
}

static const struct drv_cloud aws = {
	.cloud = GC_CLOUD_AWS,
	.frontend = SIM_AWS,
	.region = "us-east-1",
	.tmp_template = "/tmp/gc-test-awsdrv.XXXXXX",
	.key_id_var = "AWS_ACCESS_KEY_ID",
	.secret_var = "AWS_SECRET_ACCESS_KEY",
	.metadata_off_var = "AWS_EC2_METADATA_DISABLED",
	.key_id = AKID,
	.secret = SECRET,
	.file_vars = { "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE" },
	.type = TYPE,
	.image = UBUNTU,
	.console = aws_console,
};

static int test_setup(void **state)
{
	return drv_setup(state, &aws);
}

static const char *param(json_t *line, const char *name)
{
	return json_string_value(json_object_get(json_object_get(line, "params"), name));
}

/* Resolves the launch image once, so a test's call counts are the launches alone. */
static void warm(void)
{
	struct gc_error err;
	char *id = NULL;

	gc_error_init(&err);
	assert_int_equal(gc_provider_resolve_image(prov, UBUNTU, false, &id, &err), 0);
	free(id);
}

/* ---- discover -------------------------------------------------------------------------- */

static void test_discover_pages(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_tag_filter by_key[] = { { "team", NULL } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long calls;
	json_t *pages;

	(void)state;
	launch_pages();
	/* RunInstances: 5 calls of burst, then 2/s; 1203 instances against 1000 tokens */
	assert_true(prov->stats.ratelimit_wait_ms >= 1000);
	gc_instance_list_init(&got);

	calls = prov->stats.calls;
	gc_error_init(&err);
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	/* ceil(1200 / AWS_INSTANCE_PAGE_SIZE) pages */
	assert_int_equal(prov->stats.calls - calls, (1200 + AWS_INSTANCE_PAGE_SIZE - 1) / AWS_INSTANCE_PAGE_SIZE);
	for (size_t i = 0; i < got.n; i++) {
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(got.items[i].group, "workers");
		assert_string_equal(got.items[i].spec_hash, "h4sh");
		assert_string_equal(got.items[i].type, TYPE);
		assert_string_equal(got.items[i].image, UBUNTU);
		assert_string_equal(got.items[i].zone, "us-east-1a");
		assert_true(got.items[i].state == GC_STATE_PENDING ||
			    got.items[i].state == GC_STATE_RUNNING);
		assert_non_null(got.items[i].client_token);
		assert_true(got.items[i].launch_time > 0);
		assert_non_null(got.items[i].private_ip);
	}
	gc_instance_list_release(&got);

	pages = logged("DescribeInstances");
	assert_int_equal(json_array_size(pages), (1200 + AWS_INSTANCE_PAGE_SIZE - 1) / AWS_INSTANCE_PAGE_SIZE);
	{
		char max[16];

		snprintf(max, sizeof(max), "%d", AWS_INSTANCE_PAGE_SIZE);
		assert_string_equal(param(json_array_get(pages, 0), "MaxResults"), max);
	}
	assert_null(param(json_array_get(pages, 0), "NextToken"));
	assert_non_null(param(json_array_get(pages, 1), "NextToken"));
	assert_string_equal(param(json_array_get(pages, 0), "Filter.1.Name"),
			    "tag:" GC_TAG_CLUSTER);
	assert_string_equal(param(json_array_get(pages, 0), "Filter.1.Value.1"), CLUSTER);
	assert_string_equal(param(json_array_get(pages, 0), "Filter.2.Name"),
			    "instance-state-name");
	json_decref(pages);

	/* a key-only filter: the 1200 carry "team", the other three do not */
	q.tags = by_key;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(got.n, 1200);
	gc_instance_list_release(&got);
	assert_int_equal(prov->stats.throttled, 0);
}

static void test_discover_terminated(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(3, "gc-term");
	struct gc_instance_list got, now;
	const char *ids[1];
	struct gc_error err;

	(void)state;
	gc_instance_list_init(&got);
	gc_instance_list_init(&now);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	advance_ms(1500);

	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 2);
	for (size_t i = 0; i < now.n; i++) {
		assert_int_equal(now.items[i].state, GC_STATE_RUNNING);
		assert_string_equal(now.items[i].state_name, "running");
		assert_non_null(now.items[i].public_ip);
	}
	gc_instance_list_release(&now);

	q.include_terminated = true;
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 3);
	for (size_t i = 0; i < now.n; i++)
		if (!strcmp(now.items[i].id, ids[0]))
			assert_int_equal(now.items[i].state, GC_STATE_TERMINATED);
	gc_instance_list_release(&now);
	gc_instance_list_release(&got);
}

/* ---- create ------------------------------------------------------------------------------ */

static void test_create_spot_ttl(void **state)
{
	struct gc_keypair_request kr;
	struct gc_secgroup_request sr;
	const char *cidrs[] = { "203.0.113.7/32" };
	struct gc_create_request r = launch_req(2, "gc-spot-1");
	struct gc_instance_list got;
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_keypair kp;
	struct gc_error err;
	char *key_id = NULL, *sg_id = NULL;
	int64_t expires = (int64_t)time(NULL) + 3600;
	json_t *runs, *run;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	gc_keypair_init(&kp);
	assert_int_equal(gc_keypair_generate(&kp, "drv@test", NULL), 0);
	assert_int_equal(gc_keypair_public_line(&pub, &kp), 0);
	memset(&kr, 0, sizeof(kr));
	kr.name = "gpucluster-drv";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 1;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &key_id, &err), 0);
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-drv";
	sr.description = "gpucluster drv";
	sr.ssh_port = 22;
	sr.allow_from = cidrs;
	sr.n_allow_from = 1;
	sr.tags = base_tags;
	sr.n_tags = 1;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &sg_id, &err), 0);

	r.zone = "us-east-1b";
	r.spot = true;
	r.spot_max_price = 0.9;
	r.key_name = "gpucluster-drv";
	r.security_group_id = sg_id;
	r.expires_at = expires;
	launch_ok(&r, &got);
	assert_int_equal(got.n, 2);
	for (size_t i = 0; i < got.n; i++) {
		assert_true(got.items[i].spot);
		assert_string_equal(got.items[i].zone, "us-east-1b");
		assert_string_equal(got.items[i].client_token, "gc-spot-1");
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(gc_instance_tag(&got.items[i], "team"), "research");
	}

	/* what went on the wire: tags on instance and volume, the root disk, IMDSv2 */
	runs = logged("RunInstances");
	assert_int_equal(json_array_size(runs), 1);
	run = json_array_get(runs, 0);
	assert_string_equal(param(run, "MinCount"), "2");
	assert_string_equal(param(run, "MaxCount"), "2");
	assert_string_equal(param(run, "TagSpecification.1.ResourceType"), "instance");
	assert_string_equal(param(run, "TagSpecification.2.ResourceType"), "volume");
	assert_string_equal(param(run, "TagSpecification.2.Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(run, "TagSpecification.2.Tag.4.Value"), "research");
	assert_string_equal(param(run, "InstanceMarketOptions.MarketType"), "spot");
	assert_string_equal(param(run, "InstanceMarketOptions.SpotOptions.SpotInstanceType"),
			    "one-time");
	assert_string_equal(
		param(run, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"),
		"terminate");
	assert_string_equal(param(run, "InstanceMarketOptions.SpotOptions.MaxPrice"), "0.9");
	assert_string_equal(param(run, "MetadataOptions.HttpTokens"), "required");
	assert_string_equal(param(run, "MetadataOptions.HttpPutResponseHopLimit"), "2");
	assert_string_equal(param(run, "MetadataOptions.HttpEndpoint"), "enabled");
	assert_string_equal(param(run, "BlockDeviceMapping.1.DeviceName"), "/dev/sda1");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.VolumeSize"), "200");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.VolumeType"), "gp3");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.Encrypted"), "true");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.DeleteOnTermination"), "true");
	assert_string_equal(param(run, "InstanceInitiatedShutdownBehavior"), "terminate");
	assert_string_equal(param(run, "KeyName"), "gpucluster-drv");
	assert_string_equal(param(run, "SecurityGroupId.1"), sg_id);
	assert_string_equal(param(run, "Placement.AvailabilityZone"), "us-east-1b");
	assert_true(gc_starts_with(param(run, "UserData"), "<redacted"));
	json_decref(runs);

	/* what the emulator made of it: the timer, the disk, the spot bid */
	sim_world_lock(sim.world);
	for (size_t i = 0; i < got.n; i++) {
		struct sim_instance *in = sim_world_instance(sim.world, SIM_AWS, got.items[i].id);
		char when[32];
		time_t t = (time_t)expires;
		struct tm tm;

		assert_non_null(in);
		assert_int_equal(in->release_at_wall, expires);
		assert_int_equal(in->disk_gb, 200);
		assert_true(in->spot);
		assert_string_equal(in->spot_max_price, "0.9");
		assert_string_equal(in->key_name, "gpucluster-drv");
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "OnCalendar=%Y-%m-%d %H:%M:%S UTC\n", &tm);
		assert_non_null(in->user_data);
		assert_non_null(strstr(in->user_data, when));
		assert_non_null(strstr(in->user_data, "Persistent=true"));
		assert_non_null(strstr(in->user_data, "poweroff"));
	}
	sim_world_unlock(sim.world);

	/* the node's timer fires once the wall clock passes expires-at */
	advance_ms(2000);
	sim_world_lock(sim.world);
	sim.world->wall_offset_s = expires - (int64_t)time(NULL) + 5;
	sim_world_tick(sim.world);
	for (size_t i = 0; i < got.n; i++)
		assert_int_equal(sim_world_instance(sim.world, SIM_AWS, got.items[i].id)->state,
				 SIM_SHUTTING_DOWN);
	sim.world->wall_offset_s = 0;
	sim_world_unlock(sim.world);

	gc_instance_list_release(&got);
	free(key_id);
	free(sg_id);
	gc_buf_release(&pub);
	gc_keypair_release(&kp);
}

static void test_client_token(void **state)
{
	struct gc_create_request r = launch_req(2, "gc-token-1");
	struct gc_instance_list a, b;
	struct gc_error err;

	(void)state;
	gc_instance_list_init(&a);
	gc_instance_list_init(&b);
	launch_ok(&r, &a);
	launch_ok(&r, &b);
	assert_int_equal(a.n, 2);
	assert_int_equal(b.n, 2);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(a.items[i].id, b.items[i].id);
	assert_int_equal(world_count(0, true), 2);

	/* the same token with another type */
	r.type = "g5.2xlarge";
	gc_error_init(&err);
	assert_int_equal(gc_provider_create(prov, &r, &b, &err), -1);
	assert_int_equal(err.code, GC_EIDEMPOTENCY);
	assert_string_equal(err.cloud_code, "IdempotentParameterMismatch");
	assert_int_equal(err.http_status, 400);
	assert_non_null(strstr(err.message, "cannot launch 2 'g5.2xlarge' instances"));
	assert_int_equal(b.n, 2);
	assert_int_equal(world_count(0, true), 2);
	gc_instance_list_release(&a);
	gc_instance_list_release(&b);
}

static void test_lost_answer(void **state)
{
	struct gc_create_request r = launch_req(3, "gc-lost-1");
	struct gc_instance_list got;
	struct gc_error err;
	unsigned long calls = prov->stats.calls;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	warm();
	calls = prov->stats.calls;
	/* the launch happens, the answer is a 500: the retry with the token gets the same */
	assert_int_equal(sim_faults_add(sim.faults, "aws:RunInstances:5xx,after=1,times=1", &err),
			 0);
	launch_ok(&r, &got);
	assert_int_equal(got.n, 3);
	assert_int_equal(world_count(0, true), 3);
	assert_int_equal(prov->stats.calls - calls, 2);

	/* without a token a repeat could launch twice: not retried */
	r.client_token = NULL;
	assert_int_equal(sim_faults_add(sim.faults, "aws:RunInstances:5xx,after=1,times=1", &err),
			 0);
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_string_equal(err.cloud_code, "InternalError");
	assert_int_equal(prov->stats.calls - calls, 1);
	assert_int_equal(world_count(0, true), 6);
	gc_instance_list_release(&got);
}

/* ---- terminate --------------------------------------------------------------------------- */

static void test_terminate_gone(void **state)
{
	struct gc_create_request r = launch_req(3, "gc-gone");
	struct gc_instance_list got;
	const char *ids[4];
	struct gc_error err;
	unsigned long calls;
	json_t *terms;

	(void)state;
	gc_instance_list_init(&got);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	/* terminated, then forgotten after the hour EC2 lists it */
	advance_ms(1500);
	advance_ms(3600u * 1000 + 1000);
	sim_world_lock(sim.world);
	assert_null(sim_world_instance(sim.world, SIM_AWS, ids[0]));
	sim_world_unlock(sim.world);

	ids[1] = got.items[1].id;
	ids[2] = "i-0123456789abcdef0"; /* never existed */
	ids[3] = got.items[2].id;
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_terminate(prov, ids, 4, &err), 0);
	assert_int_equal(prov->stats.calls - calls, 2); /* NotFound naming both, then the rest */
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_instance(sim.world, SIM_AWS, ids[1])->state, SIM_SHUTTING_DOWN);
	assert_int_equal(sim_world_instance(sim.world, SIM_AWS, ids[3])->state, SIM_SHUTTING_DOWN);
	sim_world_unlock(sim.world);
	terms = logged("TerminateInstances");
	assert_int_equal(json_array_size(terms), 3);
	assert_string_equal(param(json_array_get(terms, 2), "InstanceId.1"), ids[1]);
	assert_string_equal(param(json_array_get(terms, 2), "InstanceId.2"), ids[3]);
	assert_null(param(json_array_get(terms, 2), "InstanceId.3"));
	json_decref(terms);

	/* only gone ones: done */
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	assert_int_equal(gc_provider_terminate(prov, &ids[2], 1, &err), 0);
	/* terminating twice is fine too */
	assert_int_equal(gc_provider_terminate(prov, &ids[1], 1, &err), 0);

	/* a malformed id is our bug, not "gone" */
	ids[0] = "i-nothex";
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, "InvalidInstanceID.Malformed");
	gc_instance_list_release(&got);
}

/* ---- key pairs and security groups ------------------------------------------------------- */

static void test_keypairs(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_buf pub = GC_BUF_INIT(4096), other = GC_BUF_INIT(4096);
	struct gc_keypair_request kr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *again = NULL, *foreign = NULL;

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	public_line(&pub, "drv@test");
	public_line(&other, "someone@else");

	memset(&kr, 0, sizeof(kr));
	kr.name = "gpucluster-drv-key";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &id, &err), 0);
	assert_true(gc_starts_with(id, "key-"));

	/* someone's untagged key with our name prefix */
	kr.name = "gpucluster-drv-key-2";
	kr.public_key_line = other.data;
	kr.tags = NULL;
	kr.n_tags = 0;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &foreign, &err), 0);

	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gpucluster-drv-key");
	assert_non_null(found.items[0].fingerprint);
	assert_int_equal(found.items[0].n_tags, 2);
	gc_resource_list_release(&found);

	/* importing our key again (a re-run, or a retry after a lost answer) adopts it */
	kr.name = "gpucluster-drv-key";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 2;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), 0);
	assert_string_equal(again, id);
	/* the same name with another key is not ours */
	kr.public_key_line = other.data;
	free(again);
	again = NULL;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &again, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, "InvalidKeyPair.Duplicate");
	assert_null(again);

	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0);
	assert_int_equal(gc_provider_delete_keypair(prov, id, &err), 0); /* gone: done */
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_KEYPAIR, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 0);
	gc_resource_list_release(&found);
	free(id);
	free(foreign);
	gc_buf_release(&pub);
	gc_buf_release(&other);
}

static void test_secgroups(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	const char *cidrs[] = { "203.0.113.7/32", "198.51.100.0/24" };
	struct gc_tag foreign_tags[] = { { k_owner, v_owner } };
	struct gc_secgroup_request sr;
	struct gc_resource_list found;
	struct gc_error err;
	char *id = NULL, *again = NULL, *foreign = NULL;
	json_t *auths;

	(void)state;
	gc_error_init(&err);
	gc_resource_list_init(&found);
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-drv";
	sr.description = "gpucluster drv ssh";
	sr.ssh_port = 2222;
	sr.allow_from = cidrs;
	sr.n_allow_from = 2;
	sr.tags = base_tags;
	sr.n_tags = 2;
	sr.allow_members = true;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &id, &err), 0);
	assert_true(gc_starts_with(id, "sg-"));
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_AWS, "us-east-1", id);
		assert_non_null(g);
		assert_int_equal(g->n_rules, 3);
		assert_string_equal(g->rules[0].protocol, "tcp");
		assert_int_equal(g->rules[0].from_port, 2222);
		assert_int_equal(g->rules[1].to_port, 2222);
		assert_string_equal(g->rules[1].cidr, "198.51.100.0/24");
		assert_string_equal(g->rules[1].source_group, "");
		/* the members' rule: every protocol and port from the group itself */
		assert_string_equal(g->rules[2].protocol, "-1");
		assert_int_equal(g->rules[2].from_port, -1);
		assert_string_equal(g->rules[2].source_group, id);
		assert_string_equal(g->rules[2].cidr, "");
		assert_string_equal(sim_tags_get(&g->tags, GC_TAG_CLUSTER), CLUSTER);
	}
	sim_world_unlock(sim.world);
	/* both rules in one call, the group named by IpPermissions.N.Groups.M.GroupId */
	auths = logged("AuthorizeSecurityGroupIngress");
	assert_int_equal(json_array_size(auths), 1);
	assert_string_equal(param(json_array_get(auths, 0), "IpPermissions.1.IpProtocol"), "tcp");
	assert_string_equal(param(json_array_get(auths, 0), "IpPermissions.2.IpProtocol"), "-1");
	assert_string_equal(param(json_array_get(auths, 0), "IpPermissions.2.Groups.1.GroupId"),
			    id);
	json_decref(auths);

	/* a foreign group with our name prefix is not listed */
	sr.name = "gpucluster-drv-other";
	sr.tags = foreign_tags;
	sr.n_tags = 1;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &foreign, &err), 0);
	assert_int_equal(
		gc_provider_list_resources(prov, GC_RESOURCE_SECGROUP, mine, 1, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, id);
	assert_string_equal(found.items[0].name, "gpucluster-drv");
	gc_resource_list_release(&found);

	/* creating ours again adopts it, without duplicating its rules */
	sr.name = "gpucluster-drv";
	sr.tags = base_tags;
	sr.n_tags = 2;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	assert_string_equal(again, id);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_sg(sim.world, SIM_AWS, "us-east-1", id)->n_rules, 3);
	sim_world_unlock(sim.world);
	/* one of ours made without the members' rule gets it when adopted, SSH kept as is */
	free(again);
	again = NULL;
	sr.name = "gpucluster-drv-old";
	sr.allow_members = false;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	sr.allow_members = true;
	{
		char *old = again;
		again = NULL;
		assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
		assert_string_equal(again, old);
		free(old);
	}
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_AWS, "us-east-1", again);
		assert_int_equal(g->n_rules, 3);
		assert_string_equal(g->rules[2].source_group, again);
	}
	sim_world_unlock(sim.world);
	assert_int_equal(gc_provider_delete_secgroup(prov, again, &err), 0);
	sr.name = "gpucluster-drv";
	/* someone else's group of that name is not adopted */
	free(again);
	again = NULL;
	sr.name = "gpucluster-drv-other";
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), -1);
	assert_string_equal(err.cloud_code, "InvalidGroup.Duplicate");
	assert_null(again);

	/* in use by a running instance, then going */
	secgroup_in_use(id, "DependencyViolation");
	free(id);
	free(foreign);
}

/* ---- catalogue ------------------------------------------------------------------------------- */

static void test_images(void **state)
{
	struct gc_error err;
	char *id = NULL;
	unsigned long calls;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	expect_image("ubuntu-22.04", true, UBUNTU);
	expect_image("ubuntu-24.04", true, NOBLE);
	expect_image("gpu-ready", true, DLAMI); /* the newer of two DLAMI builds */
	expect_image("dlami", true, DLAMI);
	lines = logged("DescribeImages");
	assert_string_equal(param(json_array_get(lines, 0), "Owner.1"), "099720109477");
	assert_string_equal(param(json_array_get(lines, 0), "Filter.1.Value.1"),
			    "ubuntu/images/hvm-ssd*/ubuntu-jammy-22.04-amd64-server-*");
	assert_string_equal(param(json_array_get(lines, 2), "Owner.1"), "amazon");
	json_decref(lines);

	/* cached: neither an alias nor a known id asks again */
	calls = prov->stats.calls;
	expect_image("ubuntu-22.04", true, UBUNTU);
	expect_image("ami-0b7e2c4a6d8f05701", false, "ami-0b7e2c4a6d8f05701");
	expect_image(DLAMI, false, DLAMI);
	assert_int_equal(prov->stats.calls, calls); /* the alias lookups saw both DLAMIs */

	assert_int_equal(gc_provider_resolve_image(prov, "centos-7", true, &id, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "unknown image alias 'centos-7'"));
	assert_int_equal(gc_provider_resolve_image(prov, "ami-0123456789abcdef0", false, &id, &err),
			 -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_string_equal(err.message, "image 'ami-0123456789abcdef0' not found in us-east-1");
	assert_string_equal(err.cloud_code, "InvalidAMIID.NotFound");
	assert_int_equal(gc_provider_resolve_image(prov, "debian", false, &id, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_null(id);
}

static void test_types_and_prices(void **state)
{
	struct gc_type_facts f;
	struct gc_error err;
	double usd = 0;
	unsigned long calls;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_provider_instance_type(prov, TYPE, &f, &err), 0);
	assert_string_equal(f.name, TYPE);
	assert_int_equal(f.vcpus, 4);
	assert_int_equal(f.memory_mib, 16384);
	assert_int_equal(f.gpus, 1);
	assert_string_equal(f.gpu_model, "A10G");
	assert_int_equal(f.gpu_memory_mib, 24576);
	assert_int_equal(gc_provider_instance_type(prov, "p4d.24xlarge", &f, &err), 0);
	assert_int_equal(f.gpus, 8);
	assert_string_equal(f.gpu_model, "A100");
	assert_int_equal(gc_provider_instance_type(prov, "t3.medium", &f, &err), 0);
	assert_int_equal(f.gpus, 0);
	assert_string_equal(f.gpu_model, "");
	assert_int_equal(gc_provider_instance_type(prov, "z9.huge", &f, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_non_null(strstr(err.message, "instance type 'z9.huge' is not offered in us-east-1"));

	assert_int_equal(gc_provider_price(prov, TYPE, NULL, false, &usd, &err), 0);
	assert_true(usd > 1.0059 && usd < 1.0061);
	assert_int_equal(gc_provider_price(prov, "p5.48xlarge", "us-east-1c", false, &usd, &err),
			 0);
	assert_true(usd > 98.319 && usd < 98.321);
	lines = logged("GetProducts");
	assert_int_equal(json_array_size(lines), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(lines, 0), "version")),
			    "2017-10-15");
	json_decref(lines);

	assert_int_equal(gc_provider_price(prov, TYPE, NULL, true, &usd, &err), 0);
	assert_true(usd > 1.006 * SIM_SPOT_SHARE - 1e-6 && usd < 1.006 * SIM_SPOT_SHARE + 1e-6);
	assert_int_equal(gc_provider_price(prov, TYPE, "us-east-1d", true, &usd, &err), 0);
	assert_true(usd > 1.006 * SIM_SPOT_SHARE - 1e-6 && usd < 1.006 * SIM_SPOT_SHARE + 1e-6);
	assert_int_equal(gc_provider_price(prov, TYPE, "eu-west-1a", true, &usd, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	lines = logged("DescribeSpotPriceHistory");
	assert_int_equal(json_array_size(lines), 1);
	assert_string_equal(param(json_array_get(lines, 0), "ProductDescription.1"), "Linux/UNIX");
	json_decref(lines);

	/* all of it cached */
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_instance_type(prov, TYPE, &f, &err), 0);
	assert_int_equal(gc_provider_price(prov, TYPE, NULL, false, &usd, &err), 0);
	assert_int_equal(gc_provider_price(prov, TYPE, "us-east-1a", true, &usd, &err), 0);
	assert_int_equal(prov->stats.calls, calls);

	assert_int_equal(gc_provider_price(prov, "z9.huge", NULL, false, &usd, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
}

static void test_zones_console(void **state)
{
	struct gc_create_request r = launch_req(1, "gc-console");
	struct gc_instance_list got;
	struct gc_error err;
	char **zones = NULL, *text = NULL;
	size_t n = 0;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 5);
	assert_string_equal(zones[0], "us-east-1a");
	assert_string_equal(zones[4], "us-east-1f");
	gc_strv_free(zones, n);

	launch_ok(&r, &got);
	/* nothing printed before the node boots */
	assert_int_equal(gc_provider_console_output(prov, got.items[0].id, &text, &err), 0);
	assert_string_equal(text, "");
	free(text);
	advance_ms(2000);
	assert_int_equal(gc_provider_console_output(prov, got.items[0].id, &text, &err), 0);
	assert_non_null(strstr(text, "-----BEGIN SSH HOST KEY KEYS-----\nssh-ed25519 "));
	assert_non_null(strstr(text, "-----END SSH HOST KEY KEYS-----"));
	free(text);
	text = NULL;
	assert_int_equal(gc_provider_console_output(prov, "i-0123456789abcdef0", &text, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	assert_null(text);
	gc_instance_list_release(&got);
}

/* ---- faults and errors -------------------------------------------------------------------- */

static void test_faults(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(2, "gc-faults");
	struct gc_instance_list got;
	struct gc_error err;
	struct gc_provider_stats s0;
	char **zones = NULL;
	size_t n = 0;
	double usd;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	warm();

	/* throttling: retried and counted */
	assert_int_equal(sim_faults_add(sim.faults, "aws:DescribeInstances:throttle,times=2", &err),
			 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_discover(prov, &q, &got, &err), 0);
	assert_int_equal(prov->stats.throttled - s0.throttled, 2);
	assert_int_equal(prov->stats.retries - s0.retries, 2);
	assert_int_equal(prov->stats.calls - s0.calls, 3);

	/* capacity: no retry, the engine falls back */
	assert_int_equal(
		sim_faults_add(sim.faults, "aws:RunInstances:capacity,zone=us-east-1a", &err), 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_ECAPACITY);
	assert_string_equal(err.cloud_code, "InsufficientInstanceCapacity");
	assert_int_equal(err.http_status, 500);
	assert_true(strlen(err.request_id) == 36);
	assert_non_null(
		strstr(err.message, "cannot launch 2 'g5.xlarge' instances in 'us-east-1'"));
	assert_int_equal(prov->stats.calls - s0.calls, 1);
	r.zone = "us-east-1b";
	launch_ok(&r, &got);

	/* quota: no retry */
	sim_faults_clear(sim.faults);
	assert_int_equal(sim_faults_add(sim.faults, "aws:RunInstances:quota,times=1", &err), 0);
	r.client_token = "gc-faults-2";
	s0 = prov->stats;
	assert_int_equal(gc_provider_create(prov, &r, &got, &err), -1);
	assert_int_equal(err.code, GC_EQUOTA);
	assert_string_equal(err.cloud_code, "VcpuLimitExceeded");
	assert_int_equal(prov->stats.calls - s0.calls, 1);

	/* 5xx and a dropped connection: retried */
	assert_int_equal(
		sim_faults_add(sim.faults, "aws:DescribeAvailabilityZones:5xx,times=1", &err), 0);
	assert_int_equal(
		sim_faults_add(sim.faults, "aws:DescribeAvailabilityZones:drop,times=1", &err), 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), 0);
	assert_int_equal(n, 5);
	gc_strv_free(zones, n);
	/* the server saw three calls: the 500, the drop, the answer. libcurl itself resends a
	 * request whose reused connection died before any answer, so the drop may never
	 * reach the driver as an error: only the 5xx is certain to be a retry of ours */
	{
		json_t *lines = logged("DescribeAvailabilityZones");
		size_t k = json_array_size(lines);

		assert_true(k >= 3);
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, k - 3), "status")),
			500);
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, k - 2), "status")),
			0);
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(lines, k - 1), "status")),
			200);
		json_decref(lines);
	}
	assert_true(prov->stats.retries - s0.retries >= 1);
	assert_int_equal(prov->stats.throttled - s0.throttled, 0);

	/* a 5xx that does not stop: given up after the policy's attempts */
	assert_int_equal(sim_faults_add(sim.faults, "aws:DescribeAvailabilityZones:5xx", &err), 0);
	s0 = prov->stats;
	zones = NULL;
	assert_int_equal(gc_provider_zones(prov, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, "gave up after 5 attempts"));
	assert_int_equal(prov->stats.calls - s0.calls, 5);
	assert_null(zones);

	/* the Price List API's throttling, in its JSON protocol */
	sim_faults_clear(sim.faults);
	assert_int_equal(sim_faults_add(sim.faults, "aws:GetProducts:throttle,times=1", &err), 0);
	s0 = prov->stats;
	assert_int_equal(gc_provider_price(prov, "g6.xlarge", NULL, false, &usd, &err), 0);
	assert_true(usd > 0.8047 && usd < 0.8049);
	assert_int_equal(prov->stats.throttled - s0.throttled, 1);
	gc_instance_list_release(&got);
}

static void test_auth(void **state)
{
	struct gc_provider *bad = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;
	double usd;

	(void)state;
	gc_error_init(&err);
	envv.secret = "not-the-secret-of-this-key-000000000000";
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "SignatureDoesNotMatch");
	assert_int_equal(err.http_status, 403);
	assert_int_equal(bad->stats.calls, 1);
	assert_int_equal(gc_provider_price(bad, TYPE, NULL, false, &usd, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "InvalidSignatureException");
	gc_provider_close(bad);

	envv.key_id = "AKIAUNKNOWNKEY000000";
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), 0);
	assert_int_equal(gc_provider_zones(bad, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AuthFailure");
	assert_int_equal(gc_provider_price(bad, TYPE, NULL, false, &usd, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "UnrecognizedClientException");
	gc_provider_close(bad);

	/* no credentials at all: open fails and says where it looked */
	envv.key_id = NULL;
	envv.secret = NULL;
	bad = NULL;
	assert_int_equal(open_with(&bad, endpoint, NULL, false, NULL, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "AWS_ACCESS_KEY_ID"));
	assert_null(bad);
}

static void test_no_rate_limit(void **state)
{
	struct gc_provider *naive = NULL;
	struct gc_instance_list got;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(open_with(&naive, endpoint, NULL, true, NULL, &err), 0);
	for (int i = 0; i < 8; i++) {
		struct gc_create_request r = launch_req(1, NULL);
		char tok[32];

		snprintf(tok, sizeof(tok), "gc-naive-%d", i);
		r.client_token = tok;
		assert_int_equal(gc_provider_create(naive, &r, &got, &err), 0);
		r.client_token = tok;
		assert_int_equal(gc_provider_create(prov, &r, &got, &err), 0);
	}
	assert_int_equal(naive->stats.ratelimit_wait_ms, 0);
	/* ours: five RunInstances at once, then two a second: three waits of 500 ms */
	assert_true(prov->stats.ratelimit_wait_ms >= 1500);
	gc_provider_close(naive);
	gc_instance_list_release(&got);
}

/* The caller's cancel reaches a wait on our own buckets: the RunInstances request bucket holds
 * five launches. */
static void test_cancel_in_rate_wait(void **state)
{
	(void)state;
	launch_burst_then_cancel(5);
}

/* A server that answers what no cloud should. */
static void test_bad_answers(void **state)
{
	static const char not_xml[] = "<<<this is not xml & never was";
	static const struct scripted garbage[] = { { 200, not_xml, NULL } };
	static const struct scripted garbage500[] = { { 500, not_xml, NULL } };
	static const struct scripted wrong_root[] = {
		{ 200, "<?xml version=\"1.0\"?><Nope><x/></Nope>", NULL },
	};
	static const struct scripted e400[] = {
		{ 400,
		  "<Response><Errors><Error><Code>InvalidParameterValue</Code>"
		  "<Message>no</Message></Error></Errors><RequestID>r-1</RequestID>"
		  "</Response>",
		  NULL },
	};
	static const struct scripted huge[] = { { 200, NULL, NULL } };
	static const struct scripted forever[] = { { 200, endless_body, NULL } };
	struct MHD_Daemon *d;
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;
	double usd;

	(void)state;
	d = scripted_start(&p);
	gc_error_init(&err);

	run_script(p, garbage, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "DescribeAvailabilityZones"));
	assert_int_equal(p->stats.calls, 1);
	assert_int_equal(gc_provider_price(p, TYPE, NULL, false, &usd, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);

	run_script(p, wrong_root, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "availabilityZoneInfo"));

	run_script(p, e400, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, "InvalidParameterValue");
	assert_string_equal(err.request_id, "r-1");

	run_script(p, garbage500, 1); /* unreadable, but a 500: transient, retried */
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_int_equal(err.http_status, 500);
	assert_int_equal(p->stats.calls, 5);

	run_script(p, huge, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_int_equal(p->stats.calls, 1);

	run_script(p, forever, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_null(zones);

	scripted_stop(d, p);
}

/* ---- the emulator's Price List frontend, called directly ------------------------------- */

struct pl_reply {
	int status;
	char code[128];
	json_t *doc;
};

/* A signed GetProducts (or target) call with body, straight into sim_ec2_handle. */
static void pl_call(const char *target, const char *body, const char *service, struct pl_reply *out)
{
	struct gc_params headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_sign_request req;
	struct gc_sign_result sr;
	struct aws_sigv4_input in;
	struct sim_req sreq;
	struct sim_resp resp;
	struct gc_error err;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];
	time_t now = time(NULL);

	gc_error_init(&err);
	gc_params_add(&headers, "Host", "127.0.0.1:8000");
	gc_params_add(&headers, "Content-Type", "application/x-amz-json-1.1");
	gc_params_add(&headers, "X-Amz-Target", target);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "/";
	req.headers = &headers;
	req.body = body;
	req.body_len = strlen(body);
	memset(&in, 0, sizeof(in));
	aws_sigv4_format_time(now, ts);
	in.access_key_id = AKID;
	in.secret_access_key = SECRET;
	in.timestamp = ts;
	in.region = "us-east-1";
	in.service = service;
	assert_int_equal(aws_sigv4_sign(&sr, &req, &in, &err), 0);
	gc_params_add_all(&headers, &sr.added_headers);
	gc_sign_result_release(&sr);

	memset(&sreq, 0, sizeof(sreq));
	sreq.cloud = SIM_AWS;
	sreq.method = "POST";
	sreq.path = "/";
	sreq.query_string = "";
	sreq.query = &query;
	sreq.headers = &headers;
	sreq.body = body;
	sreq.body_len = strlen(body);
	sreq.now = now;
	sim_resp_init(&resp);
	sim_ec2_handle(&sim, &sreq, &resp);
	out->status = resp.status;
	snprintf(out->code, sizeof(out->code), "%s", resp.error_code);
	out->doc = json_loadb(resp.body.data, resp.body.len, 0, NULL);
	assert_non_null(out->doc);
	assert_string_equal(resp.content_type, "application/x-amz-json-1.1");
	assert_non_null(gc_params_get_ci(&resp.headers, "x-amzn-RequestId"));
	assert_string_equal(resp.action, strchr(target, '.') + 1);
	sim_resp_release(&resp);
	gc_params_release(&headers);
	gc_params_release(&query);
}

#define GET_PRODUCTS "AWSPriceListService.GetProducts"

static void test_pricing_frontend(void **state)
{
	static const char first[] =
		"{\"ServiceCode\":\"AmazonEC2\",\"FormatVersion\":\"aws_v1\",\"MaxResults\":4,"
		"\"Filters\":[{\"Type\":\"TERM_MATCH\",\"Field\":\"instanceType\","
		"\"Value\":\"g5.xlarge\"},{\"Type\":\"TERM_MATCH\",\"Field\":\"regionCode\","
		"\"Value\":\"us-west-2\"}]}";
	struct pl_reply r;
	char *next_body;
	size_t total = 0, shared_used = 0;
	json_t *entry;
	size_t i;

	(void)state;
	/* the type in one region: 2 tenancies x 3 capacity statuses, over two pages */
	pl_call(GET_PRODUCTS, first, "pricing", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(json_object_get(r.doc, "FormatVersion")), "aws_v1");
	assert_int_equal(json_array_size(json_object_get(r.doc, "PriceList")), 4);
	assert_non_null(json_string_value(json_object_get(r.doc, "NextToken")));
	for (int page = 0; page < 2; page++) {
		json_array_foreach(json_object_get(r.doc, "PriceList"), i, entry)
		{
			json_t *prod = json_loads(json_string_value(entry), 0, NULL), *od, *term,
			       *dims, *dim, *attrs;
			const char *k1, *k2, *usd = NULL;

			assert_non_null(prod); /* each entry is a document in a string */
			attrs = json_object_get(json_object_get(prod, "product"), "attributes");
			assert_string_equal(
				json_string_value(json_object_get(attrs, "instanceType")),
				"g5.xlarge");
			assert_string_equal(json_string_value(json_object_get(attrs, "location")),
					    "US West (Oregon)");
			od = json_object_get(json_object_get(prod, "terms"), "OnDemand");
			json_object_foreach(od, k1, term)
			{
				dims = json_object_get(term, "priceDimensions");
				json_object_foreach(dims, k2, dim)
				{
					assert_string_equal(
						json_string_value(json_object_get(dim, "unit")),
						"Hrs");
					usd = json_string_value(json_object_get(
						json_object_get(dim, "pricePerUnit"), "USD"));
				}
			}
			assert_non_null(usd);
			if (!strcmp(json_string_value(json_object_get(attrs, "tenancy")),
				    "Shared") &&
			    !strcmp(json_string_value(json_object_get(attrs, "capacitystatus")),
				    "Used")) {
				assert_string_equal(usd, "1.0060000000");
				shared_used++;
			}
			json_decref(prod);
			total++;
		}
		if (page == 0) {
			json_t *req = json_loads(first, 0, NULL);

			json_object_set(req, "NextToken", json_object_get(r.doc, "NextToken"));
			next_body = json_dumps(req, JSON_COMPACT);
			json_decref(req);
			json_decref(r.doc);
			pl_call(GET_PRODUCTS, next_body, "pricing", &r);
			free(next_body);
			assert_int_equal(r.status, 200);
			assert_null(json_object_get(r.doc, "NextToken"));
		}
	}
	json_decref(r.doc);
	assert_int_equal(total, 6);
	assert_int_equal(shared_used, 1);

	/* errors in the JSON protocol's shape */
	pl_call(GET_PRODUCTS, first, "ec2", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidSignatureException");
	assert_string_equal(json_string_value(json_object_get(r.doc, "__type")),
			    "InvalidSignatureException");
	json_decref(r.doc);
	pl_call(GET_PRODUCTS,
		"{\"ServiceCode\":\"AmazonEC2\",\"Filters\":[{\"Type\":\"CONTAINS\","
		"\"Field\":\"instanceType\",\"Value\":\"g5\"}]}",
		"pricing", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(json_string_value(json_object_get(r.doc, "__type")),
			    "com.amazon.awspricing#InvalidParameterException");
	json_decref(r.doc);
	pl_call(GET_PRODUCTS, "{\"ServiceCode\":\"AmazonEC2\",\"NextToken\":\"7.forged\"}",
		"pricing", &r);
	assert_string_equal(r.code, "InvalidNextTokenException");
	json_decref(r.doc);
	pl_call("AWSPriceListService.DescribeServices", "{}", "pricing", &r);
	assert_string_equal(r.code, "UnknownOperationException");
	json_decref(r.doc);
}

/* The EC2 frontend's filter values: a backslash makes a wildcard literal. */
static void test_filter_escapes(void **state)
{
	static char k[] = "note", v_star[] = "a*b", v_plain[] = "axxb";
	struct gc_tag star[] = { { k, v_star } }, plain[] = { { k, v_plain } };
	struct gc_tag_filter want[] = { { "note", "a*b" } };
	struct gc_discover_query q = { want, 1, false };
	struct gc_create_request r = launch_req(1, "gc-esc-1");
	struct gc_instance_list got, found;
	struct gc_error err;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	gc_instance_list_init(&found);
	r.tags = star;
	r.n_tags = 1;
	launch_ok(&r, &got);
	r.tags = plain;
	r.client_token = "gc-esc-2";
	launch_ok(&r, &got);
	assert_int_equal(gc_provider_discover(prov, &q, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, got.items[0].id);
	lines = logged("DescribeInstances");
	assert_string_equal(param(json_array_get(lines, 0), "Filter.1.Value.1"), "a\\*b");
	json_decref(lines);
	gc_instance_list_release(&got);
	gc_instance_list_release(&found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_discover_pages, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_discover_terminated, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_create_spot_ttl, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_client_token, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_lost_answer, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_terminate_gone, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_keypairs, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_secgroups, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_images, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_types_and_prices, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_zones_console, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_faults, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_auth, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_no_rate_limit, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_cancel_in_rate_wait, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_bad_answers, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_pricing_frontend, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_filter_escapes, test_setup, test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
