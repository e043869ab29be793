/*
 * test-ecs.c: the emulator's Alibaba ECS frontend called directly, with requests signed by
 * the project's own ACS3 and RPC signers and answers read back with jansson: launch with
 * tags, describe by tag across pages, delete (Force), the life cycle on a fake clock,
 * client tokens, key pairs, security groups and rules, authentication failures (secret,
 * clock, nonce replay), strict parameters, faults and AutoReleaseTime; the VPC API
 * (default VPC and vSwitches, which RunInstances requires) and STS AssumeRole with the
 * temporary keys it issues, served on the same port.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "fake-clock.h"
#include "sim-fixture.h"
#include "ssh-test-keys.h"
#include "providers/alibaba/sign.h"
#include "sim/network.h"
#include "sim/sim.h"

#define AKID   "LTAIgpuclustersim001"
#define SECRET "gpucluster-sim-alibaba-secret-000000"

static unsigned nonce_counter;

struct call {
	bool rpc;	     /* RPC HMAC-SHA1 instead of ACS3 */
	const char *secret;  /* default SECRET */
	const char *akid;    /* default AKID */
	int64_t skew_s;	     /* added to the signing time */
	const char *nonce;   /* default: a fresh one */
	const char *host;    /* as the server sees it, default 127.0.0.1:8001 */
	const char *sign_as; /* host used for signing, default = host */
	const char *action;
	const char *version; /* default 2014-05-26 */
	const char *token;   /* a security token (STS keys) */
};

struct reply {
	int status;
	json_t *doc;
	char code[128];
	bool drop;
};

static void reply_release(struct reply *r)
{
	json_decref(r->doc);
	memset(r, 0, sizeof(*r));
}

/* A value by dotted path ("Instances.Instance"), or NULL. */
static json_t *at(const struct reply *r, const char *path)
{
	json_t *cur = r->doc;
	char key[128];

	while (cur && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof(key), "%.*s", (int)len, path);
		cur = json_object_get(cur, key);
		path = dot ? dot + 1 : path + len;
	}
	return cur;
}

static const char *str(const struct reply *r, const char *path)
{
	const char *s = json_string_value(at(r, path));
	return s ? s : "";
}

/* Sends the parameters (name, value, ... NULL) as the ECS SDK does: POST, all in the query. */
static void vsend(const struct call *cl, struct reply *out, const char *const *kv)
{
	struct gc_params params = GC_PARAMS_INIT, headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_buf qs = GC_BUF_INIT(1 << 20);
	struct gc_sign_request req;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;
	char ts[ALI_TIMESTAMP_LEN + 1], nonce[40];
	const char *host = cl && cl->host ? cl->host : "127.0.0.1:8001";
	const char *action = cl && cl->action ? cl->action : kv[0];
	const char *version = cl && cl->version ? cl->version : "2014-05-26";
	const char *token = cl ? cl->token : NULL;
	time_t now = time(NULL);

	gc_error_init(&err);
	/* kv starts with the action name */
	for (size_t i = 1; kv[i]; i += 2)
		gc_params_add(&params, kv[i], kv[i + 1]);
	ali_format_time(now + (cl ? cl->skew_s : 0), ts);
	snprintf(nonce, sizeof(nonce), "nonce-%u-%ld", ++nonce_counter, (long)now);
	gc_params_add(&headers, "host", cl && cl->sign_as ? cl->sign_as : host);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "/";
	req.headers = &headers;

	if (cl && cl->rpc) {
		struct ali_rpc_result rr;
		struct ali_rpc_input in = {
			.access_key_id = cl->akid ? cl->akid : AKID,
			.access_key_secret = cl->secret ? cl->secret : SECRET,
			.timestamp = ts,
			.nonce = cl->nonce ? cl->nonce : nonce,
			.security_token = token,
		};
		gc_params_add(&params, "Action", action);
		gc_params_add(&params, "Version", version);
		gc_params_add(&params, "Format", "JSON");
		req.query = &params;
		ali_rpc_result_init(&rr);
		assert_int_equal(ali_rpc_sign(&rr, &req, &in, &err), 0);
		assert_int_equal(gc_buf_addstr(&qs, rr.wire.data), 0);
		ali_rpc_result_release(&rr);
	} else {
		struct gc_sign_result sr;
		struct ali_acs3_input in = {
			.access_key_id = cl && cl->akid ? cl->akid : AKID,
			.access_key_secret = cl && cl->secret ? cl->secret : SECRET,
			.timestamp = ts,
			.nonce = cl && cl->nonce ? cl->nonce : nonce,
			.security_token = token,
		};
		gc_params_add(&headers, "x-acs-action", action);
		gc_params_add(&headers, "x-acs-version", version);
		req.query = &params;
		assert_int_equal(ali_acs3_sign(&sr, &req, &in, &err), 0);
		gc_params_add_all(&headers, &sr.added_headers);
		gc_sign_result_release(&sr);
		assert_int_equal(gc_params_encode(&qs, &params), 0);
	}
	gc_params_remove(&headers, "host");
	gc_params_add(&headers, "Host", host);
	assert_int_equal(gc_params_parse(&query, qs.data, qs.len, GC_URLDEC_RFC3986, &err), 0);

	memset(&sreq, 0, sizeof(sreq));
	sreq.cloud = SIM_ALIBABA;
	sreq.method = "POST";
	sreq.path = "/";
	sreq.query_string = qs.data;
	sreq.query = &query;
	sreq.headers = &headers;
	sreq.body = "";
	sreq.body_len = 0;
	sreq.now = now;
	sim_resp_init(&resp);
	sim_ecs_handle(&sim, &sreq, &resp);

	memset(out, 0, sizeof(*out));
	out->status = resp.status;
	out->drop = resp.drop;
	snprintf(out->code, sizeof(out->code), "%s", resp.error_code);
	if (!resp.drop) {
		out->doc = json_loadb(resp.body.data, resp.body.len, 0, NULL);
		assert_non_null(out->doc);
		assert_int_equal(strlen(str(out, "RequestId")), 36);
		if (resp.error_code[0]) {
			assert_true(resp.status >= 400);
			assert_string_equal(str(out, "Code"), resp.error_code);
			assert_true(strlen(str(out, "Message")) > 0);
		} else {
			assert_int_equal(resp.status, 200);
		}
	}
	assert_non_null(resp.log_params);
	assert_null(json_object_get(resp.log_params, "Signature"));
	assert_null(json_object_get(resp.log_params, "AccessKeyId"));
	sim_resp_release(&resp);
	gc_buf_release(&qs);
	gc_params_release(&params);
	gc_params_release(&headers);
	gc_params_release(&query);
}

#define SEND(cl, out, ...)                                       \
	do {                                                     \
		const char *const kv_[] = { __VA_ARGS__, NULL }; \
		vsend((cl), (out), kv_);                         \
	} while (0)
#define HZ "RegionId", "cn-hangzhou"
/* the default vSwitches of zones h (the region's first) and i */
#define VSW_H "VSwitchId", "vsw-gpuclustersim-cn-hangzhou-h"
#define VSW_I "VSwitchId", "vsw-gpuclustersim-cn-hangzhou-i"

static void make_sg(char out[64])
{
	struct reply r;

	SEND(NULL, &r, "CreateSecurityGroup", HZ, "SecurityGroupName", "gpu-sg", "Description",
	     "test", "VpcId", "vpc-gpuclustersim");
	assert_int_equal(r.status, 200);
	snprintf(out, 64, "%s", str(&r, "SecurityGroupId"));
	assert_true(strncmp(out, "sg-", 3) == 0);
	reply_release(&r);
}

static void advance(unsigned ms)
{
	fc.now += (uint64_t)ms * MS;
}

static void test_run_describe_delete(void **state)
{
	struct reply r;
	char sg[64], ids[3][64], next[64];
	json_t *list;

	(void)state;
	make_sg(sg);
	SEND(NULL, &r, "RunInstances", HZ, VSW_I, "ZoneId", "cn-hangzhou-i", "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "Amount", "3", "InstanceName", "gpu-w", "UniqueSuffix", "true",
	     "Tag.1.Key", "fleet", "Tag.1.Value", "blue", "Tag.2.Key", "team", "Tag.2.Value", "r");
	if (r.status != 200)
		fail_msg("RunInstances: %s %s", r.code, str(&r, "Message"));
	list = at(&r, "InstanceIdSets.InstanceIdSet");
	assert_int_equal(json_array_size(list), 3);
	for (size_t i = 0; i < 3; i++)
		snprintf(ids[i], sizeof(ids[i]), "%s", json_string_value(json_array_get(list, i)));
	assert_true(json_is_number(at(&r, "TradePrice")));
	reply_release(&r);
	/* another fleet that the tag filter must leave out */
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "Tag.1.Key", "fleet", "Tag.1.Value", "green");
	assert_int_equal(r.status, 200);
	reply_release(&r);

	SEND(NULL, &r, "DescribeInstances", HZ, "Tag.1.Key", "fleet", "Tag.1.Value", "blue",
	     "MaxResults", "2");
	assert_int_equal(r.status, 200);
	list = at(&r, "Instances.Instance");
	assert_int_equal(json_array_size(list), 2);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "Status")),
			    "Pending");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(list, 0), "InstanceName")),
		"gpu-w001");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "GPUAmount")),
			 1);
	snprintf(next, sizeof(next), "%s", str(&r, "NextToken"));
	assert_true(next[0]);
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ, "Tag.1.Key", "fleet", "Tag.1.Value", "blue",
	     "MaxResults", "2", "NextToken", next);
	assert_int_equal(r.status, 200);
	list = at(&r, "Instances.Instance");
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(list, 0), "InstanceId")), ids[2]);
	assert_string_equal(str(&r, "NextToken"), "");
	reply_release(&r);

	/* by the JSON-array id list, after the pending time */
	advance(2000);
	char idlist[256];
	snprintf(idlist, sizeof(idlist), "[\"%s\",\"%s\"]", ids[0], ids[1]);
	SEND(NULL, &r, "DescribeInstances", HZ, "InstanceIds", idlist, "Status", "Running");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(at(&r, "Instances.Instance")), 2);
	reply_release(&r);

	/* running instances need Force */
	SEND(NULL, &r, "DeleteInstances", HZ, "InstanceId.1", ids[0], "InstanceId.2", ids[1],
	     "InstanceId.3", ids[2]);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.code, "IncorrectInstanceStatus");
	reply_release(&r);
	SEND(NULL, &r, "DeleteInstances", HZ, "InstanceId.1", ids[0], "InstanceId.2", ids[1],
	     "InstanceId.3", ids[2], "Force", "true");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ, "Tag.1.Key", "fleet", "Tag.1.Value", "blue");
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 3);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(at(&r, "Instances.Instance"), 0), "Status")),
			    "Stopping");
	reply_release(&r);
	advance(2000);
	SEND(NULL, &r, "DescribeInstances", HZ, "Tag.1.Key", "fleet", "Tag.1.Value", "blue");
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);
	SEND(NULL, &r, "DeleteInstance", "InstanceId", ids[0], "Force", "true");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidInstanceId.NotFound");
	reply_release(&r);
}

/* An instance has the ERIs it was launched with (an ERI is a secondary ENI in
 * HighPerformance mode, https://www.alibabacloud.com/help/doc-detail/2856980.html): its
 * node gets that many RDMA devices; the same type launched without ERIs gets none. */
static void test_eri_devices_of_launch(void **state)
{
	struct reply r;
	char sg[64], with[64], without[64];

	(void)state;
	make_sg(sg);
	SEND(NULL, &r, "RunInstances", HZ, VSW_I, "ZoneId", "cn-hangzhou-i", "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.ebmgn7ex.32xlarge",
	     "SecurityGroupId", sg, "NetworkInterface.2.InstanceType", "Secondary",
	     "NetworkInterface.2.NetworkInterfaceTrafficMode", "HighPerformance");
	if (r.status != 200)
		fail_msg("RunInstances: %s %s", r.code, str(&r, "Message"));
	snprintf(with, sizeof(with), "%s",
		 json_string_value(json_array_get(at(&r, "InstanceIdSets.InstanceIdSet"), 0)));
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_I, "ZoneId", "cn-hangzhou-i", "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.ebmgn7ex.32xlarge",
	     "SecurityGroupId", sg);
	assert_int_equal(r.status, 200);
	snprintf(without, sizeof(without), "%s",
		 json_string_value(json_array_get(at(&r, "InstanceIdSets.InstanceIdSet"), 0)));
	reply_release(&r);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_instance(sim.world, SIM_ALIBABA, with)->rdma_devices, 1);
	assert_int_equal(sim_world_instance(sim.world, SIM_ALIBABA, without)->rdma_devices, 0);
	sim_world_unlock(sim.world);
}

static void test_client_token(void **state)
{
	struct reply r;
	char sg[64], first[64];

	(void)state;
	make_sg(sg);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "ClientToken", "tok-1");
	assert_int_equal(r.status, 200);
	snprintf(first, sizeof(first), "%s", str(&r, "InstanceIdSets.InstanceIdSet.0"));
	snprintf(first, sizeof(first), "%s",
		 json_string_value(json_array_get(at(&r, "InstanceIdSets.InstanceIdSet"), 0)));
	reply_release(&r);
	/* the same call, signed the other way: the same instance */
	struct call rpc = { .rpc = true };
	SEND(&rpc, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "ClientToken", "tok-1");
	assert_int_equal(r.status, 200);
	assert_string_equal(
		json_string_value(json_array_get(at(&r, "InstanceIdSets.InstanceIdSet"), 0)),
		first);
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "ClientToken", "tok-1", "Amount", "2");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "IdempotentParameterMismatch");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 1);
	reply_release(&r);
}

static void test_key_pairs(void **state)
{
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_keypair kp;
	struct reply r;
	char sg[64], fpr[GC_SSH_FINGERPRINT_SIZE];

	(void)state;
	assert_int_equal(gc_ssh_fingerprint(fpr, TEST_RSA_A, NULL), 0);
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "fleet-key", "PublicKeyBody",
	     TEST_RSA_A " test@example");
	assert_int_equal(r.status, 200);
	assert_string_equal(str(&r, "KeyPairName"), "fleet-key");
	assert_string_equal(str(&r, "KeyPairFingerPrint"), fpr);
	reply_release(&r);
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "fleet-key", "PublicKeyBody",
	     TEST_RSA_A);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "KeyPair.AlreadyExist");
	reply_release(&r);
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "bad-key", "PublicKeyBody", "ssh-rsa");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidPublicKeyBody.Malformed");
	reply_release(&r);
	/* ECS takes ECDSA and DSA keys too, but not Ed25519 (all gc_keypair_generate makes). */
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "ec-key", "PublicKeyBody", TEST_ECDSA);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "dsa-key", "PublicKeyBody", TEST_DSA);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	assert_int_equal(gc_keypair_generate(&kp, "test@example", NULL), 0);
	assert_int_equal(gc_keypair_public_line(&pub, &kp), 0);
	gc_keypair_release(&kp);
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "ed-key", "PublicKeyBody", pub.data);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidPublicKeyBody.Malformed");
	reply_release(&r);
	SEND(NULL, &r, "DescribeKeyPairs", HZ, "KeyPairName", "ed-key");
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);
	/* A well-formed blob whose RSA modulus is one bit long. */
	SEND(NULL, &r, "ImportKeyPair", HZ, "KeyPairName", "short-key", "PublicKeyBody",
	     "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAAQE=");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidPublicKeyBody.Malformed");
	reply_release(&r);
	SEND(NULL, &r, "DescribeKeyPairs", HZ, "KeyPairNames", "[\"fleet-key\"]");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 1);
	reply_release(&r);

	make_sg(sg);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "KeyPairName", "nope");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidKeyPairName.NotFound");
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "KeyPairName", "fleet-key");
	assert_int_equal(r.status, 200);
	reply_release(&r);

	SEND(NULL, &r, "DeleteKeyPairs", HZ, "KeyPairNames",
	     "[\"fleet-key\",\"ec-key\",\"dsa-key\"]");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "DescribeKeyPairs", HZ);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);
	gc_buf_release(&pub);
}

static void test_security_groups(void **state)
{
	struct reply r;
	char sg[64], adv[64];

	(void)state;
	make_sg(sg);
	SEND(NULL, &r, "AuthorizeSecurityGroup", HZ, "SecurityGroupId", sg, "IpProtocol", "tcp",
	     "PortRange", "22/22", "SourceCidrIp", "0.0.0.0/0", "Policy", "accept");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "AuthorizeSecurityGroup", HZ, "SecurityGroupId", sg,
	     "Permissions.1.IpProtocol", "tcp", "Permissions.1.PortRange", "8000/8100",
	     "Permissions.1.SourceCidrIp", "10.0.0.0/8", "Permissions.2.IpProtocol", "icmp",
	     "Permissions.2.PortRange", "-1/-1", "Permissions.2.SourceCidrIp", "10.0.0.0/8");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "AuthorizeSecurityGroup", HZ, "SecurityGroupId", sg, "IpProtocol", "tcp",
	     "PortRange", "22", "SourceCidrIp", "0.0.0.0/0");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidPortRange.Malformed");
	reply_release(&r);
	SEND(NULL, &r, "DescribeSecurityGroupAttribute", HZ, "SecurityGroupId", sg);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(at(&r, "Permissions.Permission")), 3);
	/* a basic group (the default type): its members reach each other with no rule */
	assert_string_equal(str(&r, "InnerAccessPolicy"), "Accept");
	reply_release(&r);
	/* an advanced one isolates them */
	SEND(NULL, &r, "CreateSecurityGroup", HZ, "SecurityGroupName", "gpu-adv", "VpcId",
	     "vpc-gpuclustersim", "SecurityGroupType", "enterprise");
	assert_int_equal(r.status, 200);
	snprintf(adv, sizeof(adv), "%s", str(&r, "SecurityGroupId"));
	reply_release(&r);
	SEND(NULL, &r, "DescribeSecurityGroupAttribute", HZ, "SecurityGroupId", adv);
	assert_string_equal(str(&r, "InnerAccessPolicy"), "Drop");
	reply_release(&r);
	SEND(NULL, &r, "DescribeSecurityGroups", HZ, "SecurityGroupId", adv);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(at(&r, "SecurityGroups.SecurityGroup"), 0),
				    "SecurityGroupType")),
			    "enterprise");
	reply_release(&r);
	SEND(NULL, &r, "DeleteSecurityGroup", HZ, "SecurityGroupId", adv);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "DescribeSecurityGroups", HZ, "SecurityGroupIds", "[\"sg-doesnotexist\"]");
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);
	SEND(NULL, &r, "DescribeSecurityGroups", HZ);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 1);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_array_get(at(&r, "SecurityGroups.SecurityGroup"), 0), "RuleCount")),
		3);
	reply_release(&r);

	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "DeleteSecurityGroup", HZ, "SecurityGroupId", sg);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.code, "DependencyViolation");
	reply_release(&r);
	SEND(NULL, &r, "DeleteSecurityGroup", HZ, "SecurityGroupId", "sg-nope");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidSecurityGroupId.NotFound");
	reply_release(&r);
}

static void test_auth(void **state)
{
	struct reply r;

	(void)state;
	SEND(NULL, &r, "DescribeRegions");
	assert_int_equal(r.status, 200);
	assert_true(json_array_size(at(&r, "Regions.Region")) >= 3);
	reply_release(&r);

	struct call wrong = { .secret = "not-the-secret" };
	SEND(&wrong, &r, "DescribeRegions");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "SignatureDoesNotMatch");
	reply_release(&r);
	struct call wrong_rpc = { .rpc = true, .secret = "not-the-secret" };
	SEND(&wrong_rpc, &r, "DescribeRegions");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "SignatureDoesNotMatch");
	reply_release(&r);
	struct call unknown = { .akid = "LTAInobody" };
	SEND(&unknown, &r, "DescribeRegions");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidAccessKeyId.NotFound");
	reply_release(&r);
	struct call old = { .skew_s = -20 * 60 };
	SEND(&old, &r, "DescribeRegions");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidTimeStamp.Expired");
	reply_release(&r);
	struct call old_rpc = { .rpc = true, .skew_s = 20 * 60 };
	SEND(&old_rpc, &r, "DescribeRegions");
	assert_string_equal(r.code, "InvalidTimeStamp.Expired");
	reply_release(&r);

	/* the same nonce twice: the replay is refused, in both syntaxes */
	struct call n1 = { .nonce = "fixed-nonce-1" };
	SEND(&n1, &r, "DescribeRegions");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(&n1, &r, "DescribeRegions");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "SignatureNonceUsed");
	reply_release(&r);
	struct call n2 = { .rpc = true, .nonce = "fixed-nonce-2" };
	SEND(&n2, &r, "DescribeRegions");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(&n2, &r, "DescribeRegions");
	assert_string_equal(r.code, "SignatureNonceUsed");
	reply_release(&r);

	/* an SDK that signed the host without the port */
	struct call bare = { .host = "127.0.0.1:8001", .sign_as = "127.0.0.1" };
	SEND(&bare, &r, "DescribeRegions");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	struct call other = { .host = "127.0.0.1:8001", .sign_as = "example.com" };
	SEND(&other, &r, "DescribeRegions");
	assert_string_equal(r.code, "SignatureDoesNotMatch");
	reply_release(&r);
}

static void test_strict(void **state)
{
	struct reply r;
	char sg[64];

	(void)state;
	make_sg(sg);
	SEND(NULL, &r, "DescribeInstances", HZ, "Colour", "blue");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidParameter");
	assert_non_null(strstr(str(&r, "Message"), "Colour"));
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ, "Tag.21.Key", "a");
	assert_string_equal(r.code, "InvalidTagCount");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ, "MaxResults", "101");
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances");
	assert_string_equal(r.code, "MissingParameter");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", "RegionId", "mars-1");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidRegionId.NotFound");
	reply_release(&r);
	SEND(NULL, &r, "FlyToTheMoon", HZ);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidAction.NotFound");
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "Amount", "101");
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.nope",
	     "SecurityGroupId", sg);
	assert_string_equal(r.code, "InvalidInstanceType.ValueNotSupported");
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "DryRun", "true");
	assert_string_equal(r.code, "DryRunOperation");
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "SpotStrategy", "SpotWithPriceLimit", "SpotPriceLimit",
	     "0.001");
	assert_string_equal(r.code, "InvalidSpotPriceLimit.LowerThanPublicPrice");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);
}

static void test_faults(void **state)
{
	struct reply r;
	struct gc_error err;
	char sg[64];

	(void)state;
	make_sg(sg);
	gc_error_init(&err);
	assert_int_equal(
		sim_faults_add(sim.faults, "alibaba:DescribeInstances:throttle,times=1", &err), 0);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "Throttling.User");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_int_equal(r.status, 200);
	reply_release(&r);

	assert_int_equal(sim_faults_add(sim.faults, "alibaba:RunInstances:capacity,times=1", &err),
			 0);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.code, "OperationDenied.NoStock");
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);

	assert_int_equal(sim_faults_add(sim.faults, "alibaba:DescribeRegions:5xx,times=1", &err),
			 0);
	SEND(NULL, &r, "DescribeRegions");
	assert_int_equal(r.status, 500);
	assert_string_equal(r.code, "InternalError");
	reply_release(&r);
	sim_faults_clear(sim.faults);
}

static void test_auto_release(void **state)
{
	struct reply r;
	char sg[64], when[ALI_TIMESTAMP_LEN + 1], id[64];
	int64_t now = sim_world_wall(sim.world);

	(void)state;
	make_sg(sg);
	ali_format_time(now + 600, when);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "AutoReleaseTime", when);
	assert_string_equal(r.code, "InvalidAutoReleaseTime.Malformed");
	reply_release(&r);
	ali_format_time(now + 3600, when);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg, "AutoReleaseTime", when);
	assert_int_equal(r.status, 200);
	snprintf(id, sizeof(id), "%s",
		 json_string_value(json_array_get(at(&r, "InstanceIdSets.InstanceIdSet"), 0)));
	reply_release(&r);
	sim_world_lock(sim.world);
	struct sim_instance *inst = sim_world_instance(sim.world, SIM_ALIBABA, id);
	assert_non_null(inst);
	assert_int_equal(inst->release_at_wall, (now + 3600) - (now + 3600) % 60);
	sim_world_unlock(sim.world);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_true(strlen(json_string_value(json_object_get(
			    json_array_get(at(&r, "Instances.Instance"), 0), "AutoReleaseTime"))) ==
		    20);
	reply_release(&r);

	/* two hours later the cloud has released it by itself */
	sim.world->wall_offset_s = 7200;
	advance(2000);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(at(&r, "Instances.Instance"), 0), "Status")),
			    "Stopping");
	reply_release(&r);
	advance(2000);
	SEND(NULL, &r, "DescribeInstances", HZ);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 0);
	reply_release(&r);
	sim.world->wall_offset_s = 0;
}

static void test_catalog(void **state)
{
	struct reply r;
	char sg[64];

	(void)state;
	SEND(NULL, &r, "DescribeInstanceTypes", "InstanceTypes.1", "ecs.gn7i-c8g1.2xlarge");
	assert_int_equal(r.status, 200);
	json_t *t = json_array_get(at(&r, "InstanceTypes.InstanceType"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "InstanceTypeId")),
			    "ecs.gn7i-c8g1.2xlarge");
	assert_true(json_integer_value(json_object_get(t, "GPUAmount")) >= 1);
	reply_release(&r);
	SEND(NULL, &r, "DescribePrice", HZ, "InstanceType", "ecs.gn7i-c8g1.2xlarge", "SpotStrategy",
	     "SpotAsPriceGo");
	assert_int_equal(r.status, 200);
	assert_true(json_real_value(at(&r, "PriceInfo.Price.TradePrice")) <
		    json_real_value(at(&r, "PriceInfo.Price.OriginalPrice")));
	assert_string_equal(str(&r, "PriceInfo.Price.Currency"), "CNY");
	reply_release(&r);
	SEND(NULL, &r, "DescribeSpotPriceHistory", HZ, "NetworkType", "vpc", "InstanceType",
	     "ecs.gn7i-c8g1.2xlarge", "ZoneId", "cn-hangzhou-i");
	assert_int_equal(json_array_size(at(&r, "SpotPrices.SpotPriceType")), 1);
	reply_release(&r);
	SEND(NULL, &r, "DescribeZones", HZ);
	assert_int_equal(json_array_size(at(&r, "Zones.Zone")), 4);
	reply_release(&r);
	SEND(NULL, &r, "DescribeImages", HZ, "ImageName", "ubuntu*");
	assert_int_equal(r.status, 200);
	assert_true(json_integer_value(at(&r, "TotalCount")) >= 1);
	reply_release(&r);

	make_sg(sg);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg);
	char id[64];
	snprintf(id, sizeof(id), "%s",
		 json_string_value(json_array_get(at(&r, "InstanceIdSets.InstanceIdSet"), 0)));
	reply_release(&r);
	sim_world_lock(sim.world);
	snprintf(sim_world_instance(sim.world, SIM_ALIBABA, id)->console,
		 sizeof(((struct sim_instance *)0)->console), "hello console");
	sim_world_unlock(sim.world);
	SEND(NULL, &r, "GetInstanceConsoleOutput", HZ, "InstanceId", id);
	assert_int_equal(r.status, 200);
	assert_string_equal(str(&r, "ConsoleOutput"), "aGVsbG8gY29uc29sZQ==");
	reply_release(&r);

	SEND(NULL, &r, "TagResources", HZ, "ResourceType", "instance", "ResourceId.1", id,
	     "Tag.1.Key", "k", "Tag.1.Value", "v");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "ListTagResources", HZ, "ResourceType", "instance", "ResourceId.1", id);
	assert_int_equal(json_array_size(at(&r, "TagResources.TagResource")), 1);
	reply_release(&r);
	SEND(NULL, &r, "UntagResources", HZ, "ResourceType", "instance", "ResourceId.1", id,
	     "TagKey.1", "k");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "ListTagResources", HZ, "ResourceType", "instance", "ResourceId.1", id);
	assert_int_equal(json_array_size(at(&r, "TagResources.TagResource")), 0);
	reply_release(&r);
}

static void test_vpc(void **state)
{
	struct call vpc = { .version = "2016-04-28" },
		    vpc_rpc = { .rpc = true, .version = "2016-04-28" };
	struct reply r;
	json_t *list;
	char sg[64];

	(void)state;
	SEND(&vpc, &r, "DescribeVpcs", HZ, "IsDefault", "true");
	if (r.status != 200)
		fail_msg("DescribeVpcs: %s %s", r.code, str(&r, "Message"));
	list = at(&r, "Vpcs.Vpc");
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "VpcId")),
			    "vpc-gpuclustersim");
	assert_true(json_is_true(json_object_get(json_array_get(list, 0), "IsDefault")));
	reply_release(&r);
	/* the other VPC is the user's own (sim/network.h) */
	SEND(&vpc_rpc, &r, "DescribeVpcs", HZ, "IsDefault", "false");
	assert_int_equal(r.status, 200);
	list = at(&r, "Vpcs.Vpc");
	assert_int_equal(json_array_size(list), 1);
	{
		char user[SIM_ID_MAX];

		sim_user_vpc(SIM_ALIBABA, "cn-hangzhou", user);
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(list, 0), "VpcId")), user);
	}
	reply_release(&r);

	/* one default vSwitch per zone, ten to a page by default */
	SEND(&vpc, &r, "DescribeVSwitches", HZ, "VpcId", "vpc-gpuclustersim");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 4);
	list = at(&r, "VSwitches.VSwitch");
	assert_int_equal(json_array_size(list), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 1), "ZoneId")),
			    "cn-hangzhou-i");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(list, 1), "VSwitchId")),
		"vsw-gpuclustersim-cn-hangzhou-i");
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 1), "Status")),
			    "Available");
	reply_release(&r);
	SEND(&vpc, &r, "DescribeVSwitches", HZ, "VpcId", "vpc-gpuclustersim", "ZoneId",
	     "cn-hangzhou-j", "PageSize", "1");
	assert_int_equal(json_integer_value(at(&r, "TotalCount")), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(at(&r, "VSwitches.VSwitch"), 0), "ZoneId")),
			    "cn-hangzhou-j");
	reply_release(&r);
	SEND(&vpc, &r, "DescribeVSwitches", HZ, "VpcId", "vpc-gpuclustersim", "PageSize", "51");
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	/* a VPC action under the ECS version is not one */
	SEND(NULL, &r, "DescribeVSwitches", HZ);
	assert_string_equal(r.code, "InvalidAction.NotFound");
	reply_release(&r);
	struct call bad_version = { .version = "2099-01-01" };
	SEND(&bad_version, &r, "DescribeVpcs", HZ);
	assert_string_equal(r.code, "InvalidVersion");
	reply_release(&r);

	/* RunInstances needs a vSwitch, of the zone it is given */
	make_sg(sg);
	SEND(NULL, &r, "RunInstances", HZ, "ImageId", "ubuntu_22_04_x64_20G_alibase_20261015.vhd",
	     "InstanceType", "ecs.gn7i-c8g1.2xlarge", "SecurityGroupId", sg);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "MissingParameter");
	assert_non_null(strstr(str(&r, "Message"), "VSwitchId"));
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, VSW_H, "ZoneId", "cn-hangzhou-i", "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidParameter.Mismatch");
	reply_release(&r);
	SEND(NULL, &r, "RunInstances", HZ, "VSwitchId", "vsw-nope", "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidVSwitchId.NotFound");
	reply_release(&r);
	/* without ZoneId the instance goes to the vSwitch's zone */
	SEND(NULL, &r, "RunInstances", HZ, VSW_I, "ImageId",
	     "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "InstanceType", "ecs.gn7i-c8g1.2xlarge",
	     "SecurityGroupId", sg);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, "DescribeInstances", HZ);
	list = json_array_get(at(&r, "Instances.Instance"), 0);
	assert_string_equal(json_string_value(json_object_get(list, "ZoneId")), "cn-hangzhou-i");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(list, "VpcAttributes"), "VSwitchId")),
			    "vsw-gpuclustersim-cn-hangzhou-i");
	reply_release(&r);
	/* a security group goes into a VPC that exists */
	SEND(NULL, &r, "CreateSecurityGroup", HZ, "VpcId", "vpc-elsewhere");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.code, "InvalidVpcId.NotFound");
	reply_release(&r);
}

static void test_sts(void **state)
{
	struct call sts = { .version = "2015-04-01" };
	struct reply r;
	char akid[64], secret[80], token[1024];

	(void)state;
	SEND(&sts, &r, "AssumeRole", "RoleArn", "acs:ram::5123456789012345:role/gpu-admin",
	     "RoleSessionName", "ci-run-1", "DurationSeconds", "900");
	if (r.status != 200)
		fail_msg("AssumeRole: %s %s", r.code, str(&r, "Message"));
	snprintf(akid, sizeof(akid), "%s", str(&r, "Credentials.AccessKeyId"));
	snprintf(secret, sizeof(secret), "%s", str(&r, "Credentials.AccessKeySecret"));
	snprintf(token, sizeof(token), "%s", str(&r, "Credentials.SecurityToken"));
	assert_true(strncmp(akid, "STS.", 4) == 0);
	assert_int_equal(strlen(secret), 44);
	assert_true(strncmp(token, "CAIS", 4) == 0);
	assert_int_equal(strlen(str(&r, "Credentials.Expiration")), 20);
	assert_string_equal(str(&r, "AssumedRoleUser.Arn"),
			    "acs:ram::5123456789012345:role/gpu-admin/ci-run-1");
	reply_release(&r);

	/* the temporary key works on every product, in both signatures */
	struct call tmp = { .akid = akid, .secret = secret, .token = token };
	SEND(&tmp, &r, "DescribeRegions");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	struct call tmp_rpc = { .rpc = true, .akid = akid, .secret = secret, .token = token };
	SEND(&tmp_rpc, &r, "DescribeRegions");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	struct call tmp_vpc = {
		.akid = akid, .secret = secret, .token = token, .version = "2016-04-28"
	};
	SEND(&tmp_vpc, &r, "DescribeVpcs", HZ);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	/* a temporary key assumes for an hour at most */
	struct call tmp_sts = {
		.akid = akid, .secret = secret, .token = token, .version = "2015-04-01"
	};
	SEND(&tmp_sts, &r, "AssumeRole", "RoleArn", "acs:ram::5123456789012345:role/other",
	     "RoleSessionName", "chained", "DurationSeconds", "7200");
	assert_string_equal(r.code, "InvalidParameter.DurationSeconds");
	reply_release(&r);

	/* without its token, with another one, or too late: refused */
	struct call no_token = { .akid = akid, .secret = secret };
	SEND(&no_token, &r, "DescribeRegions");
	assert_string_equal(r.code, "MissingSecurityToken");
	reply_release(&r);
	struct call forged = { .akid = akid, .secret = secret, .token = "CAISbm90LWEtdG9rZW4=" };
	SEND(&forged, &r, "DescribeRegions");
	assert_string_equal(r.code, "InvalidSecurityToken.Malformed");
	reply_release(&r);
	struct call other_key = { .akid = "STS.NotTheKeyOfThisToken",
				  .secret = secret,
				  .token = token };
	SEND(&other_key, &r, "DescribeRegions");
	assert_string_equal(r.code, "InvalidSecurityToken.MismatchWithAccessKey");
	reply_release(&r);
	sim.cfg.clock_offset_s = 1000;
	struct call late = { .akid = akid, .secret = secret, .token = token, .skew_s = 1000 };
	SEND(&late, &r, "DescribeRegions");
	assert_string_equal(r.code, "InvalidSecurityToken.Expired");
	reply_release(&r);
	sim.cfg.clock_offset_s = 0;

	/* STS's own checks */
	SEND(&sts, &r, "AssumeRole", "RoleArn", "acs:ram::9999999999999999:role/theirs",
	     "RoleSessionName", "ci-run-1");
	assert_int_equal(r.status, 403);
	assert_string_equal(r.code, "NoPermission");
	reply_release(&r);
	SEND(&sts, &r, "AssumeRole", "RoleArn", "arn:aws:iam::1:role/x", "RoleSessionName", "a1");
	assert_string_equal(r.code, "InvalidParameter.RoleArn");
	reply_release(&r);
	SEND(&sts, &r, "AssumeRole", "RoleArn", "acs:ram::5123456789012345:role/r",
	     "RoleSessionName", "x");
	assert_string_equal(r.code, "InvalidParameter.RoleSessionName");
	reply_release(&r);
	SEND(&sts, &r, "AssumeRole", "RoleArn", "acs:ram::5123456789012345:role/r",
	     "RoleSessionName", "ok-name", "DurationSeconds", "600");
	assert_string_equal(r.code, "InvalidParameter.DurationSeconds");
	reply_release(&r);
	SEND(&sts, &r, "AssumeRole", "RoleSessionName", "ok-name");
	assert_string_equal(r.code, "MissingParameter");
	reply_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_describe_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eri_devices_of_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_security_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vpc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sts, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
