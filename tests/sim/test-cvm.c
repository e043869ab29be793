/*
 * test-cvm.c: the emulator's Tencent frontend (CVM and the VPC security-group actions)
 * called directly, with requests signed by the project's own TC3 signer and answers read
 * back with jansson: launch with tags, describe by tag across pages, terminate and the
 * recycle bin, client tokens, key pairs, security groups and policies, authentication
 * failures, strict schemas, faults, ActionTimer and GET requests.
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
#include "providers/tencent/tc3.h"
#include "sim/sim.h"

#define SID    "AKIDgpuclustersim001"
#define SKEY   "gpucluster-sim-tencent-secret-000000"
#define REGION "ap-guangzhou"
#define IMAGE  "img-487zeit5"
#define TYPE   "GN7.2XLARGE32"

struct call {
	const char *secret;  /* default SKEY */
	const char *sid;     /* default SID */
	const char *region;  /* default REGION; "" for none */
	int64_t skew_s;	     /* added to the signing time */
	const char *host;    /* as the server sees it, default 127.0.0.1:8002 */
	const char *sign_as; /* host used for signing, default = host */
	const char *query;   /* a GET with this query string instead of the JSON POST */
};

struct reply {
	json_t *doc; /* the Response object */
	char code[128];
	bool drop;
};

static void reply_release(struct reply *r)
{
	json_decref(r->doc);
	memset(r, 0, sizeof(*r));
}

static json_t *at(const struct reply *r, const char *path)
{
	json_t *cur = r->doc;
	char key[128];

	while (cur && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof(key), "%.*s", (int)len, path);
		if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(key, NULL, 10));
		else
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

static long long num(const struct reply *r, const char *path)
{
	return json_integer_value(at(r, path));
}

static void send_req(const struct call *cl, struct reply *out, const char *action,
		     const char *service, const char *body)
{
	struct gc_params headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_sign_result sr;
	struct gc_sign_request req;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;
	const char *host = cl && cl->host ? cl->host : "127.0.0.1:8002";
	const char *region = cl && cl->region ? cl->region : REGION;
	bool get = cl && cl->query;
	time_t now = time(NULL);

	gc_error_init(&err);
	if (!get)
		gc_params_add(&headers, "Content-Type", "application/json");
	else
		gc_params_add(&headers, "Content-Type", "application/x-www-form-urlencoded");
	gc_params_add(&headers, "Host", cl && cl->sign_as ? cl->sign_as : host);
	memset(&req, 0, sizeof(req));
	req.method = get ? "GET" : "POST";
	req.path = "/";
	req.headers = &headers;
	req.query_string = get ? cl->query : "";
	req.body = get ? "" : body;
	req.body_len = get ? 0 : strlen(body);
	struct tc_sign_input in = {
		.secret_id = cl && cl->sid ? cl->sid : SID,
		.secret_key = cl && cl->secret ? cl->secret : SKEY,
		.timestamp = (int64_t)now + (cl ? cl->skew_s : 0),
		.service = service,
		.action = action,
		.version = "2017-03-12",
		.region = *region ? region : NULL,
	};
	assert_int_equal(tc_sign(&sr, &req, &in, &err), 0);
	gc_params_add_all(&headers, &sr.added_headers);
	gc_sign_result_release(&sr);
	gc_params_remove(&headers, "Host");
	gc_params_add(&headers, "Host", host);
	if (get)
		assert_int_equal(gc_params_parse(&query, cl->query, strlen(cl->query),
						 GC_URLDEC_RFC3986, &err),
				 0);

	memset(&sreq, 0, sizeof(sreq));
	sreq.cloud = SIM_TENCENT;
	sreq.method = req.method;
	sreq.path = "/";
	sreq.query_string = get ? cl->query : "";
	sreq.query = &query;
	sreq.headers = &headers;
	sreq.body = req.body;
	sreq.body_len = req.body_len;
	sreq.now = now;
	sim_resp_init(&resp);
	sim_cvm_handle(&sim, &sreq, &resp);

	memset(out, 0, sizeof(*out));
	out->drop = resp.drop;
	snprintf(out->code, sizeof(out->code), "%s", resp.error_code);
	if (!resp.drop) {
		json_t *doc = json_loadb(resp.body.data, resp.body.len, 0, NULL);
		assert_non_null(doc);
		assert_int_equal(resp.status, 200); /* Tencent answers errors in HTTP 200 too */
		out->doc = json_incref(json_object_get(doc, "Response"));
		json_decref(doc);
		assert_non_null(out->doc);
		assert_int_equal(strlen(str(out, "RequestId")), 36);
		if (resp.error_code[0])
			assert_string_equal(str(out, "Error.Code"), resp.error_code);
		else
			assert_null(at(out, "Error"));
	}
	/* the decoded body is logged whenever there was one to decode */
	if (!resp.error_code[0])
		assert_non_null(resp.log_params);
	sim_resp_release(&resp);
	gc_params_release(&headers);
	gc_params_release(&query);
}

#define CVM(cl, out, action, body) send_req((cl), (out), (action), "cvm", (body))
#define VPC(cl, out, action, body) send_req((cl), (out), (action), "vpc", (body))

static void advance(unsigned ms)
{
	fc.now += (uint64_t)ms * MS;
}

static void make_sg(char out[64])
{
	struct reply r;

	VPC(NULL, &r, "CreateSecurityGroup",
	    "{\"GroupName\":\"gpu\",\"GroupDescription\":\"test\",\"Tags\":[{\"Key\":\"a\","
	    "\"Value\":\"b\"}]}");
	assert_string_equal(r.code, "");
	snprintf(out, 64, "%s", str(&r, "SecurityGroup.SecurityGroupId"));
	assert_true(strncmp(out, "sg-", 3) == 0);
	reply_release(&r);
}

static void run(const char sg[64], const char *extra, unsigned count, struct reply *r)
{
	char body[4096];

	assert_true(strlen(sg) < 64 && (!extra || strlen(extra) < 2048));
	snprintf(body, sizeof(body),
		 "{\"Placement\":{\"Zone\":\"ap-guangzhou-3\"},\"ImageId\":\"" IMAGE
		 "\",\"InstanceType\":\"" TYPE "\",\"InstanceCount\":%u,"
		 "\"SecurityGroupIds\":[\"%s\"]%s}",
		 count, sg, extra ? extra : "");
	CVM(NULL, r, "RunInstances", body);
}

static void test_run_describe_terminate(void **state)
{
	struct reply r;
	char sg[64], body[512], ids[3][64];

	(void)state;
	make_sg(sg);
	run(sg,
	    ",\"TagSpecification\":[{\"ResourceType\":\"instance\",\"Tags\":[{\"Key\":\"fleet\","
	    "\"Value\":\"blue\"}]}],\"InstanceName\":\"gpu-w\"",
	    3, &r);
	if (r.code[0])
		fail_msg("RunInstances: %s %s", r.code, str(&r, "Error.Message"));
	assert_int_equal(json_array_size(at(&r, "InstanceIdSet")), 3);
	for (int i = 0; i < 3; i++)
		snprintf(ids[i], sizeof(ids[i]), "%s",
			 json_string_value(json_array_get(at(&r, "InstanceIdSet"), (size_t)i)));
	assert_true(strncmp(ids[0], "ins-", 4) == 0);
	reply_release(&r);
	run(sg,
	    ",\"TagSpecification\":[{\"ResourceType\":\"instance\",\"Tags\":[{\"Key\":\"fleet\","
	    "\"Value\":\"green\"}]}]",
	    1, &r);
	assert_string_equal(r.code, "");
	reply_release(&r);

	const char *filter = "\"Filters\":[{\"Name\":\"tag:fleet\",\"Values\":[\"blue\"]}]";
	snprintf(body, sizeof(body), "{%s,\"Limit\":2}", filter);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_string_equal(r.code, "");
	assert_int_equal(num(&r, "TotalCount"), 3);
	assert_int_equal(json_array_size(at(&r, "InstanceSet")), 2);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceState"), "PENDING");
	assert_string_equal(str(&r, "InstanceSet.0.Tags.0.Value"), "blue");
	assert_int_equal(num(&r, "InstanceSet.0.CPU"), 8);
	reply_release(&r);
	snprintf(body, sizeof(body), "{%s,\"Limit\":2,\"Offset\":2}", filter);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_int_equal(json_array_size(at(&r, "InstanceSet")), 1);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceId"), ids[2]);
	reply_release(&r);

	advance(2000);
	snprintf(body, sizeof(body), "{\"InstanceIds\":[\"%s\"]}", ids[0]);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceState"), "RUNNING");
	reply_release(&r);

	snprintf(body, sizeof(body), "{\"InstanceIds\":[\"%s\",\"%s\",\"%s\"]}", ids[0], ids[1],
		 ids[2]);
	CVM(NULL, &r, "TerminateInstances", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	snprintf(body, sizeof(body), "{%s}", filter);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceState"), "TERMINATING");
	reply_release(&r);
	advance(2000);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_int_equal(num(&r, "TotalCount"), 0);
	reply_release(&r);
	snprintf(body, sizeof(body), "{\"InstanceIds\":[\"%s\"]}", ids[0]);
	CVM(NULL, &r, "TerminateInstances", body);
	assert_string_equal(r.code, "InvalidInstanceId.NotFound");
	reply_release(&r);
}

static void test_recycle_bin(void **state)
{
	struct reply r;
	char sg[64], body[256], id[64];

	(void)state;
	sim.world->tencent_recycle = true;
	make_sg(sg);
	run(sg, NULL, 1, &r);
	snprintf(id, sizeof(id), "%s",
		 json_string_value(json_array_get(at(&r, "InstanceIdSet"), 0)));
	reply_release(&r);
	advance(2000);
	snprintf(body, sizeof(body), "{\"InstanceIds\":[\"%s\"]}", id);
	CVM(NULL, &r, "TerminateInstances", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	advance(5000);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceState"), "SHUTDOWN");
	reply_release(&r);
	CVM(NULL, &r, "TerminateInstances", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceState"), "TERMINATING");
	reply_release(&r);
	advance(2000);
	CVM(NULL, &r, "DescribeInstances", body);
	assert_int_equal(num(&r, "TotalCount"), 0);
	reply_release(&r);
}

static void test_client_token(void **state)
{
	struct reply r;
	char sg[64], first[64];

	(void)state;
	make_sg(sg);
	run(sg, ",\"ClientToken\":\"tok-1\"", 1, &r);
	assert_string_equal(r.code, "");
	snprintf(first, sizeof(first), "%s", str(&r, "InstanceIdSet.0"));
	reply_release(&r);
	run(sg, ",\"ClientToken\":\"tok-1\"", 1, &r);
	assert_string_equal(str(&r, "InstanceIdSet.0"), first);
	reply_release(&r);
	run(sg, ",\"ClientToken\":\"tok-1\"", 2, &r);
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	run(sg,
	    ",\"ClientToken\":\"0123456789012345678901234567890123456789012345678901234567890123"
	    "4\"",
	    1, &r);
	assert_string_equal(r.code, "InvalidClientToken.TooLong");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_int_equal(num(&r, "TotalCount"), 1);
	reply_release(&r);
}

static void test_key_pairs(void **state)
{
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_keypair kp;
	struct reply r;
	char body[2048], kid[64], sg[64];

	(void)state;
	snprintf(body, sizeof(body),
		 "{\"KeyName\":\"fleet_key\",\"ProjectId\":0,\"PublicKey\":\"%s\"}",
		 TEST_RSA_A " test@example");
	CVM(NULL, &r, "ImportKeyPair", body);
	assert_string_equal(r.code, "");
	snprintf(kid, sizeof(kid), "%s", str(&r, "KeyId"));
	assert_true(strncmp(kid, "skey-", 5) == 0);
	reply_release(&r);
	CVM(NULL, &r, "ImportKeyPair", body);
	assert_string_equal(r.code, "InvalidKeyPairName.Duplicate");
	reply_release(&r);
	snprintf(body, sizeof(body), "{\"KeyName\":\"other\",\"ProjectId\":0,\"PublicKey\":\"%s\"}",
		 TEST_RSA_A);
	CVM(NULL, &r, "ImportKeyPair", body);
	assert_string_equal(r.code, "InvalidPublicKey.Duplicate");
	reply_release(&r);
	CVM(NULL, &r, "ImportKeyPair",
	    "{\"KeyName\":\"bad-name\",\"ProjectId\":0,\"PublicKey\":\"ssh-rsa AAAA\"}");
	assert_string_equal(r.code, "InvalidKeyPairNameIncludeIllegalChar");
	reply_release(&r);
	CVM(NULL, &r, "ImportKeyPair",
	    "{\"KeyName\":\"bad\",\"ProjectId\":0,\"PublicKey\":\"ssh-rsa ***\"}");
	assert_string_equal(r.code, "InvalidPublicKey.Malformed");
	reply_release(&r);
	/* CVM takes RSA only: a sound Ed25519 or ECDSA key is refused as malformed. */
	assert_int_equal(gc_keypair_generate(&kp, "test@example", NULL), 0);
	assert_int_equal(gc_keypair_public_line(&pub, &kp), 0);
	gc_keypair_release(&kp);
	snprintf(body, sizeof(body), "{\"KeyName\":\"ed\",\"ProjectId\":0,\"PublicKey\":\"%s\"}",
		 pub.data);
	CVM(NULL, &r, "ImportKeyPair", body);
	assert_string_equal(r.code, "InvalidPublicKey.Malformed");
	reply_release(&r);
	snprintf(body, sizeof(body), "{\"KeyName\":\"ec\",\"ProjectId\":0,\"PublicKey\":\"%s\"}",
		 TEST_ECDSA);
	CVM(NULL, &r, "ImportKeyPair", body);
	assert_string_equal(r.code, "InvalidPublicKey.Malformed");
	reply_release(&r);
	snprintf(body, sizeof(body),
		 "{\"KeyName\":\"second\",\"ProjectId\":0,\"PublicKey\":\"%s\"}", TEST_RSA_B);
	CVM(NULL, &r, "ImportKeyPair", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	CVM(NULL, &r, "DescribeKeyPairs", "{}");
	assert_int_equal(num(&r, "TotalCount"), 2);
	reply_release(&r);
	CVM(NULL, &r, "DescribeKeyPairs",
	    "{\"Filters\":[{\"Name\":\"key-name\",\"Values\":[\"fleet_key\"]}]}");
	assert_int_equal(num(&r, "TotalCount"), 1);
	assert_string_equal(str(&r, "KeyPairSet.0.KeyId"), kid);
	reply_release(&r);

	make_sg(sg);
	snprintf(body, sizeof(body), ",\"LoginSettings\":{\"KeyIds\":[\"%s\"]}", kid);
	run(sg, body, 1, &r);
	assert_string_equal(r.code, "");
	reply_release(&r);
	run(sg, ",\"LoginSettings\":{\"KeyIds\":[\"skey-nothere\"]}", 1, &r);
	assert_string_equal(r.code, "InvalidKeyPairId.NotFound");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_string_equal(str(&r, "InstanceSet.0.LoginSettings.KeyIds.0"), kid);
	reply_release(&r);

	snprintf(body, sizeof(body), "{\"KeyIds\":[\"%s\"]}", kid);
	CVM(NULL, &r, "DeleteKeyPairs", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	CVM(NULL, &r, "DeleteKeyPairs", body);
	assert_string_equal(r.code, "InvalidKeyPairId.NotFound");
	reply_release(&r);
	gc_buf_release(&pub);
}

static void test_security_groups(void **state)
{
	struct reply r;
	char sg[64], body[1024];

	(void)state;
	make_sg(sg);
	snprintf(body, sizeof(body),
		 "{\"SecurityGroupId\":\"%s\",\"SecurityGroupPolicySet\":{\"Ingress\":["
		 "{\"Protocol\":\"TCP\",\"Port\":\"22\",\"CidrBlock\":\"0.0.0.0/0\",\"Action\":"
		 "\"ACCEPT\",\"PolicyDescription\":\"ssh\"},"
		 "{\"Protocol\":\"TCP\",\"Port\":\"80,443\",\"CidrBlock\":\"10.0.0.0/8\","
		 "\"Action\":\"ACCEPT\"}]}}",
		 sg);
	VPC(NULL, &r, "CreateSecurityGroupPolicies", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	snprintf(body, sizeof(body), "{\"SecurityGroupId\":\"%s\"}", sg);
	VPC(NULL, &r, "DescribeSecurityGroupPolicies", body);
	assert_int_equal(json_array_size(at(&r, "SecurityGroupPolicySet.Ingress")), 3);
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.0.Port"), "22");
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.0.Protocol"), "TCP");
	reply_release(&r);
	VPC(NULL, &r, "DescribeSecurityGroups",
	    "{\"Filters\":[{\"Name\":\"security-group-name\",\"Values\":[\"gpu\"]}],"
	    "\"Limit\":\"10\"}");
	assert_int_equal(num(&r, "TotalCount"), 1);
	assert_string_equal(str(&r, "SecurityGroupSet.0.TagSet.0.Key"), "a");
	reply_release(&r);
	snprintf(body, sizeof(body),
		 "{\"SecurityGroupId\":\"%s\",\"SecurityGroupPolicySet\":{\"Ingress\":["
		 "{\"Protocol\":\"TCP\",\"Port\":\"99999\",\"CidrBlock\":\"0.0.0.0/0\","
		 "\"Action\":\"ACCEPT\"}]}}",
		 sg);
	VPC(NULL, &r, "CreateSecurityGroupPolicies", body);
	assert_string_equal(r.code, "InvalidParameterValue.Range");
	reply_release(&r);

	/* a security group as the source (its members) in place of a CidrBlock */
	snprintf(body, sizeof(body),
		 "{\"SecurityGroupId\":\"%s\",\"SecurityGroupPolicySet\":{\"Ingress\":["
		 "{\"Protocol\":\"ALL\",\"Port\":\"ALL\",\"SecurityGroupId\":\"%s\","
		 "\"Action\":\"ACCEPT\",\"PolicyDescription\":\"members\"}]}}",
		 sg, sg);
	VPC(NULL, &r, "CreateSecurityGroupPolicies", body);
	assert_string_equal(r.code, "");
	reply_release(&r);
	snprintf(body, sizeof(body), "{\"SecurityGroupId\":\"%s\"}", sg);
	VPC(NULL, &r, "DescribeSecurityGroupPolicies", body);
	assert_int_equal(json_array_size(at(&r, "SecurityGroupPolicySet.Ingress")), 4);
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.3.SecurityGroupId"), sg);
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.3.CidrBlock"), "");
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.3.Protocol"), "ALL");
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.3.Port"), "ALL");
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.3.PolicyDescription"),
			    "members");
	assert_string_equal(str(&r, "SecurityGroupPolicySet.Ingress.0.SecurityGroupId"), "");
	reply_release(&r);
	/* a group that does not exist, or both sources at once, are refused */
	snprintf(body, sizeof(body),
		 "{\"SecurityGroupId\":\"%s\",\"SecurityGroupPolicySet\":{\"Ingress\":["
		 "{\"Protocol\":\"ALL\",\"Port\":\"ALL\",\"SecurityGroupId\":\"sg-nothere\","
		 "\"Action\":\"ACCEPT\"}]}}",
		 sg);
	VPC(NULL, &r, "CreateSecurityGroupPolicies", body);
	assert_string_equal(r.code, "ResourceNotFound");
	reply_release(&r);
	snprintf(body, sizeof(body),
		 "{\"SecurityGroupId\":\"%s\",\"SecurityGroupPolicySet\":{\"Ingress\":["
		 "{\"Protocol\":\"ALL\",\"Port\":\"ALL\",\"SecurityGroupId\":\"%s\","
		 "\"CidrBlock\":\"10.0.0.0/8\",\"Action\":\"ACCEPT\"}]}}",
		 sg, sg);
	VPC(NULL, &r, "CreateSecurityGroupPolicies", body);
	assert_string_equal(r.code, "InvalidParameter.Coexist");
	reply_release(&r);
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_TENCENT, NULL, sg);
		assert_int_equal(g->n_rules, 4);
		assert_string_equal(g->rules[3].source_group, sg);
	}
	sim_world_unlock(sim.world);

	run(sg, NULL, 1, &r);
	assert_string_equal(r.code, "");
	reply_release(&r);
	snprintf(body, sizeof(body), "{\"SecurityGroupId\":\"%s\"}", sg);
	VPC(NULL, &r, "DeleteSecurityGroup", body);
	assert_string_equal(r.code, "ResourceInUse");
	reply_release(&r);
	VPC(NULL, &r, "DeleteSecurityGroup", "{\"SecurityGroupId\":\"sg-nothere\"}");
	assert_string_equal(r.code, "ResourceNotFound");
	reply_release(&r);
}

static void test_auth(void **state)
{
	struct reply r;

	(void)state;
	CVM(NULL, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "");
	assert_int_equal(num(&r, "TotalCount"), 4);
	reply_release(&r);
	struct call wrong = { .secret = "nope" };
	CVM(&wrong, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "AuthFailure.SignatureFailure");
	reply_release(&r);
	struct call who = { .sid = "AKIDnobody" };
	CVM(&who, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "AuthFailure.SecretIdNotFound");
	reply_release(&r);
	struct call late = { .skew_s = 600 };
	CVM(&late, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "AuthFailure.SignatureExpire");
	reply_release(&r);
	struct call bare = { .sign_as = "127.0.0.1" };
	CVM(&bare, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "");
	reply_release(&r);
	struct call noregion = { .region = "" };
	CVM(&noregion, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "MissingParameter");
	reply_release(&r);
	CVM(&noregion, &r, "DescribeRegions", "{}");
	assert_string_equal(r.code, "");
	assert_int_equal(num(&r, "TotalCount"), 3);
	reply_release(&r);
	struct call mars = { .region = "mars-1" };
	CVM(&mars, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "UnsupportedRegion");
	reply_release(&r);
	CVM(NULL, &r, "FlyToTheMoon", "{}");
	assert_string_equal(r.code, "InvalidAction");
	reply_release(&r);
}

static void test_strict(void **state)
{
	struct reply r;
	char sg[64];

	(void)state;
	make_sg(sg);
	CVM(NULL, &r, "DescribeInstances", "{\"Colour\":\"blue\"}");
	assert_string_equal(r.code, "UnknownParameter");
	assert_non_null(strstr(str(&r, "Error.Message"), "Colour"));
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{\"Limit\":\"20\"}");
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{\"Limit\":101}");
	assert_string_equal(r.code, "InvalidParameterValue.Range");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances",
	    "{\"InstanceIds\":[\"ins-1\"],\"Filters\":[{\"Name\":\"zone\",\"Values\":[\"x\"]}]}");
	assert_string_equal(r.code, "InvalidParameterCombination");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances",
	    "{\"Filters\":[{\"Name\":\"colour\",\"Values\":[\"x\"]}]}");
	assert_string_equal(r.code, "InvalidFilter");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "not json");
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	run(sg, ",\"Placement\":{\"Zone\":\"ap-guangzhou-3\",\"Floor\":2}", 1, &r);
	/* the duplicate Placement key is refused before the schema is looked at */
	assert_string_equal(r.code, "InvalidParameter");
	reply_release(&r);
	CVM(NULL, &r, "RunInstances",
	    "{\"Placement\":{\"Zone\":\"ap-guangzhou-3\",\"Floor\":2},\"ImageId\":\"" IMAGE "\"}");
	assert_string_equal(r.code, "UnknownParameter");
	reply_release(&r);
	run(sg, NULL, 501, &r);
	assert_string_equal(r.code, "InvalidParameterValue.Range");
	reply_release(&r);
	run(sg, ",\"DryRun\":true", 1, &r);
	assert_string_equal(r.code, "DryRunOperation");
	reply_release(&r);
	CVM(NULL, &r, "RunInstances",
	    "{\"Placement\":{\"Zone\":\"ap-shanghai-2\"},\"ImageId\":\"" IMAGE
	    "\",\"InstanceType\":\"" TYPE "\"}");
	assert_string_equal(r.code, "InvalidZone.MismatchRegion");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_int_equal(num(&r, "TotalCount"), 0);
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
		sim_faults_add(sim.faults, "tencent:DescribeInstances:throttle,times=1", &err), 0);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_string_equal(r.code, "RequestLimitExceeded");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_string_equal(r.code, "");
	reply_release(&r);
	assert_int_equal(sim_faults_add(sim.faults, "tencent:RunInstances:capacity,times=1", &err),
			 0);
	run(sg, NULL, 1, &r);
	assert_string_equal(r.code, "ResourceInsufficient.SpecifiedInstanceType");
	reply_release(&r);
	assert_int_equal(sim_faults_add(sim.faults, "tencent:DescribeZones:5xx,times=1", &err), 0);
	CVM(NULL, &r, "DescribeZones", "{}");
	assert_string_equal(r.code, "InternalError");
	reply_release(&r);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_int_equal(num(&r, "TotalCount"), 0);
	reply_release(&r);
}

static void test_action_timer(void **state)
{
	struct reply r;
	char sg[64], extra[256], id[64];
	int64_t now = sim_world_wall(sim.world);
	time_t when = (time_t)(now + 3600), bj = (time_t)(now + 3600 + 8 * 3600);
	struct tm tm;
	char iso[32], local[32];

	(void)state;
	make_sg(sg);
	gmtime_r(&when, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gmtime_r(&bj, &tm);
	strftime(local, sizeof(local), "%Y-%m-%d %H:%M:%S", &tm);

	snprintf(extra, sizeof(extra),
		 ",\"ActionTimer\":{\"TimerAction\":\"TerminateInstances\",\"ActionTime\":\"%s\"}",
		 iso);
	run(sg, extra, 1, &r);
	assert_string_equal(r.code, "");
	snprintf(id, sizeof(id), "%s", str(&r, "InstanceIdSet.0"));
	reply_release(&r);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_instance(sim.world, SIM_TENCENT, id)->release_at_wall,
			 now + 3600);
	sim_world_unlock(sim.world);

	/* the older doc format is Beijing time: the same moment */
	snprintf(extra, sizeof(extra),
		 ",\"ActionTimer\":{\"TimerAction\":\"TerminateInstances\",\"ActionTime\":\"%s\"}",
		 local);
	run(sg, extra, 1, &r);
	assert_string_equal(r.code, "");
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_instance(sim.world, SIM_TENCENT, str(&r, "InstanceIdSet.0"))
				 ->release_at_wall,
			 now + 3600);
	sim_world_unlock(sim.world);
	reply_release(&r);

	run(sg, ",\"ActionTimer\":{\"TimerAction\":\"TerminateInstances\",\"ActionTime\":\"soon\"}",
	    1, &r);
	assert_string_equal(r.code, "InvalidParameterValue.InvalidTimeFormat");
	reply_release(&r);
	run(sg, ",\"ActionTimer\":{\"TimerAction\":\"StopInstances\",\"ActionTime\":\"soon\"}", 1,
	    &r);
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);

	sim.world->wall_offset_s = 7200;
	advance(2000);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_string_equal(str(&r, "InstanceSet.0.InstanceState"), "TERMINATING");
	reply_release(&r);
	advance(2000);
	CVM(NULL, &r, "DescribeInstances", "{}");
	assert_int_equal(num(&r, "TotalCount"), 0);
	reply_release(&r);
	sim.world->wall_offset_s = 0;
}

static void test_get_and_catalog(void **state)
{
	struct reply r;
	char sg[64], q[256], id[64];

	(void)state;
	make_sg(sg);
	run(sg, NULL, 2, &r);
	snprintf(id, sizeof(id), "%s", str(&r, "InstanceIdSet.1"));
	reply_release(&r);
	snprintf(q, sizeof(q), "InstanceIds.0=%s&Limit=5", id);
	struct call get = { .query = q };
	CVM(&get, &r, "DescribeInstances", "");
	assert_string_equal(r.code, "");
	assert_int_equal(num(&r, "TotalCount"), 1);
	assert_string_equal(str(&r, "InstanceSet.0.InstanceId"), id);
	reply_release(&r);
	struct call get2 = { .query = "Filters.0.Name=zone&Filters.0.Values.0=ap-guangzhou-3" };
	CVM(&get2, &r, "DescribeInstances", "");
	assert_int_equal(num(&r, "TotalCount"), 2);
	reply_release(&r);

	CVM(NULL, &r, "DescribeInstanceTypeConfigs",
	    "{\"Filters\":[{\"Name\":\"instance-type\",\"Values\":[\"" TYPE "\"]}]}");
	assert_int_equal(json_array_size(at(&r, "InstanceTypeConfigSet")), 4);
	assert_int_equal(num(&r, "InstanceTypeConfigSet.0.GPU"), 1);
	reply_release(&r);
	CVM(NULL, &r, "DescribeZoneInstanceConfigInfos",
	    "{\"Filters\":[{\"Name\":\"instance-charge-type\",\"Values\":[\"SPOTPAID\"]},"
	    "{\"Name\":\"zone\",\"Values\":[\"ap-guangzhou-3\"]}]}");
	assert_string_equal(str(&r, "InstanceTypeQuotaSet.0.Status"), "SELL");
	reply_release(&r);
	CVM(NULL, &r, "InquiryPriceRunInstances",
	    "{\"Placement\":{\"Zone\":\"ap-guangzhou-3\"},\"ImageId\":\"" IMAGE
	    "\",\"InstanceType\":\"" TYPE "\",\"InstanceChargeType\":\"SPOTPAID\"}");
	assert_string_equal(r.code, "");
	assert_true(json_real_value(at(&r, "Price.InstancePrice.UnitPriceDiscount")) <
		    json_real_value(at(&r, "Price.InstancePrice.UnitPrice")));
	reply_release(&r);
	CVM(NULL, &r, "DescribeImages",
	    "{\"Filters\":[{\"Name\":\"image-name\",\"Values\":[\"22.04\"]}]}");
	assert_true(num(&r, "TotalCount") >= 1);
	reply_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_describe_terminate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recycle_bin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_security_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_action_timer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_and_catalog, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
