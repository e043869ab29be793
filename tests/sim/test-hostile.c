/*
 * test-hostile.c: the hostile fault modes (sim/hostile.h) on every cloud, through the
 * frontends with signed requests as a client sends them: each mode's answer as raw bytes
 * (tokens, empty and wrong documents, missing fields, HTML, huge and slow bodies, escape
 * sequences, duplicated ids), and that a replaced answer does not apply a TerminateInstances.
 * The server's side (streaming a huge body, trickling a slow one) is in server.sh.
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
#include "fake-clock.h"
#include "sim-fixture.h"
#include "providers/alibaba/sign.h"
#include "providers/aws/sigv4.h"
#include "providers/tencent/tc3.h"
#include "sim/sim.h"

/* One answer as the server would send it. */
struct answer {
	int status;
	char ctype[64];
	char *body;
	char code[128];
	uint64_t stream_bytes;
	unsigned trickle_ms;
};

static void answer_release(struct answer *a)
{
	free(a->body);
	memset(a, 0, sizeof(*a));
}

static void keep(struct answer *a, struct sim_resp *resp)
{
	memset(a, 0, sizeof(*a));
	assert_false(resp->drop);
	a->status = resp->status;
	snprintf(a->ctype, sizeof(a->ctype), "%s", resp->content_type);
	a->body = gc_xstrndup(resp->body.data ? resp->body.data : "", resp->body.len);
	snprintf(a->code, sizeof(a->code), "%s", resp->error_code);
	a->stream_bytes = resp->stream_bytes;
	a->trickle_ms = resp->trickle_ms;
	sim_resp_release(resp);
}

static void finish_req(struct sim_req *sreq, enum sim_cloud c, const struct gc_params *headers,
		       const struct gc_params *query, const char *qs, const char *body)
{
	memset(sreq, 0, sizeof(*sreq));
	sreq->cloud = c;
	sreq->method = "POST";
	sreq->path = "/";
	sreq->query_string = qs;
	sreq->query = query;
	sreq->headers = headers;
	sreq->body = body;
	sreq->body_len = strlen(body);
	sreq->now = time(NULL);
}

/* --- one signed call per cloud ----------------------------------------------------------- */

/* EC2: a form POST of Action, Version and the name=value pairs in kv. */
static void aws_call(struct answer *a, const char *action, const char *const *kv)
{
	struct gc_params form = GC_PARAMS_INIT, headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1 << 20);
	struct gc_sign_result sr;
	struct gc_sign_request req;
	struct aws_sigv4_input in;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];

	gc_error_init(&err);
	gc_params_add(&form, "Action", action);
	gc_params_add(&form, "Version", "2016-11-15");
	for (size_t i = 0; kv && kv[i]; i += 2)
		gc_params_add(&form, kv[i], kv[i + 1]);
	assert_int_equal(gc_params_encode(&body, &form), 0);
	gc_params_add(&headers, "Content-Type", "application/x-www-form-urlencoded");
	gc_params_add(&headers, "Host", "127.0.0.1:8000");
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "/";
	req.headers = &headers;
	req.body = body.data;
	req.body_len = body.len;
	memset(&in, 0, sizeof(in));
	aws_sigv4_format_time(time(NULL), ts);
	in.access_key_id = sim_frontend(SIM_AWS)->key_id;
	in.secret_access_key = sim_frontend(SIM_AWS)->secret;
	in.timestamp = ts;
	in.region = "us-east-1";
	in.service = "ec2";
	assert_int_equal(aws_sigv4_sign(&sr, &req, &in, &err), 0);
	gc_params_add_all(&headers, &sr.added_headers);
	gc_sign_result_release(&sr);

	finish_req(&sreq, SIM_AWS, &headers, &query, "", body.data);
	sim_resp_init(&resp);
	sim_ec2_handle(&sim, &sreq, &resp);
	keep(a, &resp);
	gc_buf_release(&body);
	gc_params_release(&form);
	gc_params_release(&headers);
	gc_params_release(&query);
}

/* ECS: ACS3, every parameter in the query, RegionId cn-hangzhou. */
static void alibaba_call(struct answer *a, const char *action, const char *const *kv)
{
	static unsigned nonce_counter;
	struct gc_params params = GC_PARAMS_INIT, headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_buf qs = GC_BUF_INIT(1 << 20);
	struct gc_sign_result sr;
	struct gc_sign_request req;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;
	char ts[ALI_TIMESTAMP_LEN + 1], nonce[40];

	gc_error_init(&err);
	gc_params_add(&params, "RegionId", "cn-hangzhou");
	for (size_t i = 0; kv && kv[i]; i += 2)
		gc_params_add(&params, kv[i], kv[i + 1]);
	ali_format_time(time(NULL), ts);
	snprintf(nonce, sizeof(nonce), "hostile-%u-%ld", ++nonce_counter, (long)time(NULL));
	gc_params_add(&headers, "host", "127.0.0.1:8001");
	gc_params_add(&headers, "x-acs-action", action);
	gc_params_add(&headers, "x-acs-version", "2014-05-26");
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "/";
	req.headers = &headers;
	req.query = &params;
	struct ali_acs3_input in = {
		.access_key_id = sim_frontend(SIM_ALIBABA)->key_id,
		.access_key_secret = sim_frontend(SIM_ALIBABA)->secret,
		.timestamp = ts,
		.nonce = nonce,
	};
	assert_int_equal(ali_acs3_sign(&sr, &req, &in, &err), 0);
	gc_params_add_all(&headers, &sr.added_headers);
	gc_sign_result_release(&sr);
	assert_int_equal(gc_params_encode(&qs, &params), 0);
	assert_int_equal(gc_params_parse(&query, qs.data, qs.len, GC_URLDEC_RFC3986, &err), 0);

	finish_req(&sreq, SIM_ALIBABA, &headers, &query, qs.data, "");
	sim_resp_init(&resp);
	sim_ecs_handle(&sim, &sreq, &resp);
	keep(a, &resp);
	gc_buf_release(&qs);
	gc_params_release(&params);
	gc_params_release(&headers);
	gc_params_release(&query);
}

/* CVM: TC3, a JSON body in ap-guangzhou. */
static void tencent_call(struct answer *a, const char *action, const char *body)
{
	struct gc_params headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_sign_result sr;
	struct gc_sign_request req;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;

	gc_error_init(&err);
	gc_params_add(&headers, "Content-Type", "application/json");
	gc_params_add(&headers, "Host", "127.0.0.1:8002");
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "/";
	req.headers = &headers;
	req.query_string = "";
	req.body = body;
	req.body_len = strlen(body);
	struct tc_sign_input in = {
		.secret_id = sim_frontend(SIM_TENCENT)->key_id,
		.secret_key = sim_frontend(SIM_TENCENT)->secret,
		.timestamp = (int64_t)time(NULL),
		.service = "cvm",
		.action = action,
		.version = "2017-03-12",
		.region = "ap-guangzhou",
	};
	assert_int_equal(tc_sign(&sr, &req, &in, &err), 0);
	gc_params_add_all(&headers, &sr.added_headers);
	gc_sign_result_release(&sr);

	finish_req(&sreq, SIM_TENCENT, &headers, &query, "", body);
	sim_resp_init(&resp);
	sim_cvm_handle(&sim, &sreq, &resp);
	keep(a, &resp);
	gc_params_release(&headers);
	gc_params_release(&query);
}

/* --- the clouds, as the tests see them ---------------------------------------------------- */

struct cloud {
	enum sim_cloud id;
	const char *region, *zone, *type, *image;
	void (*describe)(struct answer *a);
	void (*terminate)(struct answer *a, const char *id);
	void (*next)(struct answer *a, const char *token); /* the next page; NULL: no tokens */
	const char *id_open;	  /* what comes before an instance id in a listing */
	const char *id_close;	  /* and after it */
	const char *escape_text;  /* how SIM_HOSTILE_TEXT's ESC appears in the body */
	const char *envelope;	  /* the empty envelope, exactly */
	const char *wrong_marker; /* in the wrong document */
	int error_status;	  /* of the escape-sequences error */
};

static void aws_describe(struct answer *a)
{
	aws_call(a, "DescribeInstances", NULL);
}
static void aws_terminate(struct answer *a, const char *id)
{
	const char *const kv[] = { "InstanceId.1", id, NULL };
	aws_call(a, "TerminateInstances", kv);
}
static void aws_next(struct answer *a, const char *token)
{
	const char *const kv[] = { "NextToken", token, NULL };
	aws_call(a, "DescribeInstances", kv);
}
static void alibaba_describe(struct answer *a)
{
	alibaba_call(a, "DescribeInstances", NULL);
}
static void alibaba_terminate(struct answer *a, const char *id)
{
	const char *const kv[] = { "InstanceId.1", id, "Force", "true", NULL };
	alibaba_call(a, "DeleteInstances", kv);
}
static void alibaba_next(struct answer *a, const char *token)
{
	const char *const kv[] = { "NextToken", token, NULL };
	alibaba_call(a, "DescribeInstances", kv);
}
static void tencent_describe(struct answer *a)
{
	tencent_call(a, "DescribeInstances", "{}");
}
static void tencent_terminate(struct answer *a, const char *id)
{
	char body[128];

	snprintf(body, sizeof(body), "{\"InstanceIds\":[\"%s\"]}", id);
	tencent_call(a, "TerminateInstances", body);
}

static const struct cloud clouds[] = {
	{ SIM_AWS, "us-east-1", "us-east-1a", "g5.xlarge", "ami-0123456789abcdef0", aws_describe,
	  aws_terminate, aws_next, "<instanceId>", "</instanceId>", "\033[31m",
	  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DescribeInstancesResponse "
	  "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"/>\n",
	  "<keySet>", 400 },
	{ SIM_ALIBABA, "cn-hangzhou", "cn-hangzhou-h", "ecs.gn7i-c8g1.2xlarge", "ubuntu_22_04",
	  alibaba_describe, alibaba_terminate, alibaba_next, "\"InstanceId\":\"", "\"",
	  "\\u001B[31m", "{}", "\"KeyPairs\"", 400 },
	{ SIM_TENCENT, "ap-guangzhou", "ap-guangzhou-3", "GN7.2XLARGE32", "img-487zeit5",
	  tencent_describe, tencent_terminate, NULL, "\"InstanceId\":\"", "\"", "\\u001B[31m",
	  "{\"Response\":{}}", "\"KeyPairSet\"", 200 },
};
#define NCLOUDS (sizeof(clouds) / sizeof(clouds[0]))

/* Two instances tagged team=ml straight into the world; their ids into ids. */
static void seed(const struct cloud *c, char ids[2][SIM_ID_MAX])
{
	struct sim_tags tags;
	struct sim_instance **out = NULL;
	size_t n = 0;
	char reservation[SIM_ID_MAX];
	struct sim_launch l = {
		.cloud = c->id,
		.region = c->region,
		.zone = c->zone,
		.type = c->type,
		.image = c->image,
		.name = "node",
		.tags = &tags,
		.count = 2,
	};

	memset(&tags, 0, sizeof(tags));
	sim_tags_set(&tags, "team", "ml");
	sim_world_lock(sim.world);
	sim_world_launch(sim.world, &l, &out, &n, reservation);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < 2; i++)
		snprintf(ids[i], SIM_ID_MAX, "%s", out[i]->id);
	sim_world_unlock(sim.world);
	free(out);
	sim_tags_release(&tags);
}

static void rule(const struct cloud *c, const char *action, const char *mode)
{
	char text[160];
	struct gc_error err;

	gc_error_init(&err);
	sim_faults_clear(sim.faults);
	snprintf(text, sizeof(text), "%s:%s:hostile,mode=%s", sim_cloud_name(c->id), action, mode);
	if (sim_faults_add(sim.faults, text, &err) != 0)
		fail_msg("%s: %s", text, err.message);
}

static size_t occurrences(const char *body, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(body, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static size_t id_count(const struct cloud *c, const char *body, const char *id)
{
	char needle[128];

	snprintf(needle, sizeof(needle), "%s%s%s", c->id_open, id, c->id_close);
	return occurrences(body, needle);
}

/* The page token in a body: EC2's and ECS's hostile-N; "" when none. */
static void token_of(const struct cloud *c, const char *body, char out[64])
{
	const char *p = strstr(body, "hostile-");
	size_t n = 0;

	out[0] = '\0';
	if (!c->next || !p)
		return;
	while (n < 63 &&
	       (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
		n++;
	snprintf(out, 64, "%.*s", (int)n, p);
}

/* --- the modes ----------------------------------------------------------------------------- */

static void test_pagination(void **state)
{
	char ids[2][SIM_ID_MAX], t1[64], t2[64];
	struct answer a, b;

	(void)state;
	for (size_t i = 0; i < NCLOUDS; i++) {
		const struct cloud *c = &clouds[i];

		seed(c, ids);
		/* endless-token: a fresh token on every page, past the data */
		rule(c, "DescribeInstances", "endless-token");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_int_equal(id_count(c, a.body, ids[0]), 1);
		token_of(c, a.body, t1);
		if (c->next) {
			/* a client that follows the token gets another full page and a new token */
			c->next(&b, t1);
			assert_int_equal(b.status, 200);
			assert_int_equal(id_count(c, b.body, ids[0]), 1);
			token_of(c, b.body, t2);
			assert_true(t1[0] && t2[0]);
			assert_string_not_equal(t1, t2);
		} else {
			c->describe(&b);
			/* CVM pages by Offset and TotalCount: there is always more */
			assert_non_null(strstr(a.body, "\"TotalCount\":1000000000"));
		}
		answer_release(&a);
		answer_release(&b);

		/* repeat-token: the same token again */
		rule(c, "DescribeInstances", "repeat-token");
		c->describe(&a);
		token_of(c, a.body, t1);
		if (c->next)
			c->next(&b, t1);
		else
			c->describe(&b);
		token_of(c, a.body, t1);
		token_of(c, b.body, t2);
		assert_string_equal(t1, t2);
		assert_true(!c->next || !strcmp(t1, "hostile-repeat"));
		answer_release(&a);
		answer_release(&b);

		/* empty-page-token: no items, a token all the same */
		rule(c, "DescribeInstances", "empty-page-token");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_int_equal(id_count(c, a.body, ids[0]), 0);
		assert_int_equal(id_count(c, a.body, ids[1]), 0);
		token_of(c, a.body, t1);
		assert_true(c->next ? t1[0] != '\0'
				    : strstr(a.body, "\"TotalCount\":1000000000") != NULL);
		answer_release(&a);

		/* huge-total: 1e9 beside a short page (EC2: a token that never ends) */
		rule(c, "DescribeInstances", "huge-total");
		c->describe(&a);
		assert_int_equal(id_count(c, a.body, ids[1]), 1);
		assert_true(c->id == SIM_AWS ? strstr(a.body, "<nextToken>hostile-") != NULL
					     : strstr(a.body, "\"TotalCount\":1000000000") != NULL);
		answer_release(&a);

		/* across pages: one endless token, then the real listing again from the start */
		if (c->next) {
			char text[96];
			struct gc_error err;

			gc_error_init(&err);
			sim_faults_clear(sim.faults);
			snprintf(text, sizeof(text),
				 "%s:DescribeInstances:hostile,mode=endless-token,times=1",
				 sim_cloud_name(c->id));
			assert_int_equal(sim_faults_add(sim.faults, text, &err), 0);
			c->describe(&a);
			token_of(c, a.body, t1);
			c->next(&b, t1);
			assert_int_equal(id_count(c, a.body, ids[0]), 1);
			assert_int_equal(id_count(c, b.body, ids[0]), 1);
			assert_null(strstr(b.body, "hostile-"));
			answer_release(&a);
			answer_release(&b);
		}

		/* duplicate-ids: the first item twice in the page */
		rule(c, "DescribeInstances", "duplicate-ids");
		c->describe(&a);
		assert_int_equal(id_count(c, a.body, ids[0]), 2);
		assert_int_equal(id_count(c, a.body, ids[1]), 1);
		answer_release(&a);
	}
	sim_faults_clear(sim.faults);
}

static void test_documents(void **state)
{
	char ids[2][SIM_ID_MAX];
	struct answer a;

	(void)state;
	for (size_t i = 0; i < NCLOUDS; i++) {
		const struct cloud *c = &clouds[i];

		seed(c, ids);
		rule(c, "DescribeInstances", "empty-envelope");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_string_equal(a.body, c->envelope);
		assert_string_equal(a.code, "");
		answer_release(&a);

		rule(c, "DescribeInstances", "wrong-document");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_non_null(strstr(a.body, c->wrong_marker));
		assert_int_equal(id_count(c, a.body, ids[0]), 0);
		answer_release(&a);

		/* missing-fields: the items are there, their ids, states and tags are not */
		rule(c, "DescribeInstances", "missing-fields");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_int_equal(id_count(c, a.body, ids[0]), 0);
		assert_null(strstr(a.body, ids[0]));
		assert_null(strstr(a.body, "team"));
		assert_null(strstr(a.body, c->id == SIM_AWS ? "instanceState" : "\"Status\""));
		assert_null(strstr(a.body, "TotalCount"));
		assert_non_null(strstr(a.body, c->id == SIM_AWS ? "<item>" : "{\""));
		answer_release(&a);

		rule(c, "DescribeInstances", "escape-sequences");
		c->describe(&a);
		assert_int_equal(a.status, c->error_status);
		assert_string_equal(
			a.code, c->id == SIM_AWS ? "InvalidParameterValue" : "InvalidParameter");
		assert_non_null(strstr(a.body, c->escape_text));
		assert_non_null(strstr(a.body, "::add-mask::"));
		assert_non_null(strstr(a.body, "::stop-commands::"));
		assert_non_null(
			strstr(a.body, c->id == SIM_AWS ? "\r\n::error::" : "\\r\\n::error::"));
		answer_release(&a);

		/* escape-tags: the real listing, every tag value hostile text */
		rule(c, "DescribeInstances", "escape-tags");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_int_equal(id_count(c, a.body, ids[0]), 1);
		assert_non_null(strstr(a.body, c->escape_text));
		assert_null(strstr(a.body, "\"ml\""));
		assert_null(strstr(a.body, ">ml<"));
		answer_release(&a);
	}
	sim_faults_clear(sim.faults);
}

static void test_bodies(void **state)
{
	char ids[2][SIM_ID_MAX];
	struct answer a;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	for (size_t i = 0; i < NCLOUDS; i++) {
		const struct cloud *c = &clouds[i];

		seed(c, ids);
		rule(c, "DescribeInstances", "html");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_string_equal(a.ctype, "text/html; charset=utf-8");
		assert_true(!strncmp(a.body, "<!DOCTYPE html>", 15));
		answer_release(&a);

		/* huge-body: past the 16 MiB cap by default, the server streams the filler */
		rule(c, "DescribeInstances", "huge-body");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_int_equal(a.stream_bytes, 17u << 20);
		assert_true(strlen(a.body) < 512);
		assert_non_null(strstr(a.body, c->id == SIM_AWS ? "<padding>" : "\"Padding\":\""));
		answer_release(&a);
		sim_faults_clear(sim.faults);
		assert_int_equal(
			sim_faults_add(sim.faults, "*:*:hostile,mode=huge-body,bytes=4096", &err),
			0);
		c->describe(&a);
		assert_int_equal(a.stream_bytes, 4096);
		answer_release(&a);

		/* slow-body: the real answer, trickled by the server */
		rule(c, "DescribeInstances", "slow-body");
		c->describe(&a);
		assert_int_equal(a.status, 200);
		assert_int_equal(a.trickle_ms, 500);
		assert_int_equal(id_count(c, a.body, ids[0]), 1);
		answer_release(&a);
	}
	sim_faults_clear(sim.faults);
}

/* A replaced answer applies nothing; a distorted one is the real action's. */
static void test_terminate_not_applied(void **state)
{
	char ids[2][SIM_ID_MAX];
	struct answer a;
	struct gc_error err;
	struct sim_instance *inst;

	(void)state;
	gc_error_init(&err);
	for (size_t i = 0; i < NCLOUDS; i++) {
		const struct cloud *c = &clouds[i];
		char text[96];

		seed(c, ids);
		sim_faults_clear(sim.faults);
		snprintf(text, sizeof(text), "%s:*:hostile,mode=html,status=502",
			 sim_cloud_name(c->id));
		assert_int_equal(sim_faults_add(sim.faults, text, &err), 0);
		c->terminate(&a, ids[0]);
		assert_int_equal(a.status, 502);
		assert_string_equal(a.ctype, "text/html; charset=utf-8");
		assert_non_null(strstr(a.body, "502 Bad Gateway"));
		answer_release(&a);
		inst = sim_world_instance(sim.world, c->id, ids[0]);
		assert_non_null(inst);
		assert_int_equal(inst->state, SIM_PENDING);

		/* the same for every replacing mode */
		static const char *const replacing[] = { "empty-envelope", "wrong-document",
							 "huge-body", "escape-sequences" };
		for (size_t m = 0; m < sizeof(replacing) / sizeof(replacing[0]); m++) {
			rule(c, "*", replacing[m]);
			c->terminate(&a, ids[0]);
			answer_release(&a);
			assert_int_equal(inst->state, SIM_PENDING);
		}

		/* a distorting mode lets the action through */
		rule(c, "*", "missing-fields");
		c->terminate(&a, ids[0]);
		assert_int_equal(a.status, 200);
		answer_release(&a);
		assert_int_not_equal(inst->state, SIM_PENDING);
	}
	sim_faults_clear(sim.faults);
}

static void test_rules(void **state)
{
	static const char *const bad[] = {
		"aws:*:hostile",		     /* no mode */
		"aws:*:hostile,mode=nonsense",	     /* unknown mode */
		"aws:*:5xx,mode=html",		     /* a mode on another kind */
		"aws:*:hostile,mode=html,status=99", /* not an HTTP status */
		"aws:*:throttle,bytes=10",	     /* bytes on another kind */
	};
	struct gc_error err;
	char *desc;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_error_init(&err);
		assert_int_equal(sim_faults_add(sim.faults, bad[i], &err), -1);
		assert_int_equal(err.code, GC_EINVALID);
		assert_non_null(strstr(err.message, bad[i]));
	}
	gc_error_init(&err);
	assert_int_equal(sim_faults_add(sim.faults,
					"tencent:DescribeInstances:hostile,mode=html,"
					"status=502,times=1",
					&err),
			 0);
	desc = sim_faults_describe(sim.faults);
	assert_non_null(strstr(desc, "mode=html"));
	free(desc);
	for (enum sim_hostile m = SIM_HOSTILE_ENDLESS_TOKEN; m <= SIM_HOSTILE_DUPLICATE_IDS; m++) {
		enum sim_hostile back;

		assert_int_equal(sim_hostile_parse(sim_hostile_name(m), &back), 0);
		assert_int_equal(back, m);
		assert_non_null(strstr(sim_hostile_names(), sim_hostile_name(m)));
	}
	sim_faults_clear(sim.faults);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pagination, setup, teardown),
		cmocka_unit_test_setup_teardown(test_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bodies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_terminate_not_applied, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
