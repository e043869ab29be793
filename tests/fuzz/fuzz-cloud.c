/*
 * fuzz-cloud.c: the libFuzzer entry point for one cloud's response parsers, built once
 * per cloud with FUZZ_CLOUD set to its registry name ("aws", "alibaba", "tencent").
 *
 * The parsers are reached the way the engine reaches them: through the cloud's ops table,
 * on a driver opened with fake keys (no network), where the HTTP client is replaced at
 * link time (-Wl,--wrap=gc_http_perform) by answers cut from the input. So each input
 * runs the whole pipeline behind one operation: the cloud's signing, its answer hook
 * (error documents, status classification, Tencent's Response envelope), retries on a
 * clock whose sleeps are instant, paging loops, caches and the parsers in ec2-xml.c,
 * ecs-ops.c and cvm-ops.c. Nothing in providers/ is changed or exposed for it.
 *
 * Input: byte 0 picks the operation (discover, list, create, price...: op_names); the
 * rest is the answers to its calls in order, separated by FUZZ_SEP. An answer starting
 * with "!NNN\n" has HTTP status NNN, otherwise 200. Once the answers run out, every
 * further call fails as a dropped connection, so every input ends.
 *
 * Checked: no crash, leak or undefined behaviour (the sanitizers), and the ops
 * contract: a failure carries an error code and message, a success hands back what it
 * promised (instances and resources with ids, an image id, non-empty zone names).
 * Built as a libFuzzer binary with clang (GC_FUZZ=ON), and with replay.c as an ordinary
 * executable that runs the seed corpus in every build.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/http.h"
#include "core/provider.h"
#include "core/spec.h"

#ifndef FUZZ_CLOUD
#error "build with -DFUZZ_CLOUD=\"aws\" (or alibaba, tencent)"
#endif

#define FUZZ_SEP "\n--\n"
#define FUZZ_ED25519 \
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g fuzz"
/* a throwaway key's public half, for the clouds that import only RSA keys */
#define FUZZ_RSA                                                                           \
	"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDbHtndRY1fbIMzdEs7wkyc0zKny/3ijkfUUYI2XxYE" \
	"rEcUMZ5MVD0EILDij9kOiDGmMIG0rpnB5UlK+qWUor50mIubtTgxSpRkZRQz+tXqSSA75JGsctmY4Fnz" \
	"0W23WspYWOwJ/i2jEHv/XcjfwSCU9FoXVDjE2O0AdVcpsc8hFtJL5+yub3FTq4CdXdyG3p98wWNCPTHt" \
	"f1MCnINqG8KWCuH3JwzD0dPE0M1+uq24NH83DPDt7/i9np2a38RGWenju6535U9kXm+Y/Y4eAR9yAxcn" \
	"7J8vY1wJ0xQzG42Yb1Vu7tVakRrQyDsGcXOPzbYXoLDkuKnroKFgJczXBwXz fuzz"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __wrap_gc_http_perform(struct gc_http *http, const struct gc_http_request *req,
			   struct gc_http_response *res, struct gc_error *err);
int __real_gc_http_perform(struct gc_http *http, const struct gc_http_request *req,
			   struct gc_http_response *res, struct gc_error *err);

/*
 * Recording seeds (tests/fuzz/record-seeds.sh): with GC_FUZZ_RECORD set to an emulator's
 * endpoint, the calls really go there, with the emulator's keys, and the answers are
 * written in the input format into the folder GC_FUZZ_RECORD_OUT, a file per operation. Off in every test run.
 */
static const char *record_endpoint;
static struct gc_buf recorded = GC_BUF_INIT((size_t)64 << 20);
static unsigned n_recorded;

/* ---- the answers: the input after byte 0, cut at FUZZ_SEP ------------------------- */

static const char *rest;
static size_t rest_len;
static bool rest_done;

static const char *find_sep(const char *s, size_t n)
{
	const size_t k = sizeof(FUZZ_SEP) - 1;

	for (size_t i = 0; i + k <= n; i++)
		if (s[i] == FUZZ_SEP[0] && memcmp(s + i, FUZZ_SEP, k) == 0)
			return s + i;
	return NULL;
}

/* The next answer into res, or -1 (a dropped connection) when there is none left. */
int __wrap_gc_http_perform(struct gc_http *http, const struct gc_http_request *req,
			   struct gc_http_response *res, struct gc_error *err)
{
	const char *body, *sep;
	size_t len;

	if (record_endpoint) {
		int r = __real_gc_http_perform(http, req, res, err);
		char status[8];

		if (n_recorded++)
			gc_buf_add(&recorded, FUZZ_SEP, sizeof(FUZZ_SEP) - 1);
		if (r == 0 && res->status != 200 && res->status >= 100 && res->status <= 599) {
			snprintf(status, sizeof(status), "!%03d\n", res->status);
			gc_buf_add(&recorded, status, 5);
		}
		if (r == 0)
			gc_buf_add(&recorded, res->body.data, res->body.len);
		return r;
	}
	(void)http;
	/* as gc_http_perform initialises it */
	memset(res, 0, sizeof(*res));
	gc_buf_init(&res->body, GC_HTTP_DEFAULT_MAX);
	gc_error_init(&res->error);
	res->body.max = req->max_response ? req->max_response : GC_HTTP_DEFAULT_MAX;
	if (rest_done) {
		gc_error_set(&res->error, GC_ETRANSIENT, "fuzz: no answer left");
		if (err)
			gc_error_set(err, GC_ETRANSIENT, "fuzz: no answer left");
		return -1;
	}
	body = rest;
	sep = find_sep(rest, rest_len);
	len = sep ? (size_t)(sep - rest) : rest_len;
	if (sep) {
		rest_len -= len + sizeof(FUZZ_SEP) - 1;
		rest = sep + sizeof(FUZZ_SEP) - 1;
	} else {
		rest_done = true;
	}
	res->status = 200;
	if (len >= 5 && body[0] == '!' && body[4] == '\n' && body[1] >= '1' && body[1] <= '5' &&
	    body[2] >= '0' && body[2] <= '9' && body[3] >= '0' && body[3] <= '9') {
		res->status = (body[1] - '0') * 100 + (body[2] - '0') * 10 + (body[3] - '0');
		body += 5;
		len -= 5;
	}
	if (gc_buf_add(&res->body, body, len) != 0) {
		gc_error_set(&res->error, GC_ETOOBIG, "fuzz: the answer is over the cap");
		if (err)
			gc_error_set(err, GC_ETOOBIG, "fuzz: the answer is over the cap");
		return -1;
	}
	return 0;
}

/* ---- the driver: fake keys, a fake endpoint, instant sleeps ---------------------- */

static uint64_t fake_ns;

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return fake_ns;
}

static void fake_sleep(void *ctx, uint64_t ns)
{
	(void)ctx;
	fake_ns += ns;
}

static const struct gc_clock fake_clock = { fake_now, fake_sleep, NULL };

/* What the operations ask for: names the emulator knows, so recorded seeds are real
 * answers (tests/fuzz/record-seeds.sh). */
struct cloud {
	const char *name, *region, *zone, *type, *image;
	const char *pubkey;	     /* a public key line the cloud imports */
	const char *key_id, *secret; /* the emulator's keys, for recording */
	const char *key_var, *secret_var;
};

static const struct cloud clouds[] = {
	{ "aws", "us-east-1", "us-east-1a", "g5.xlarge", "ami-0e8d2a5e1c4f22040", FUZZ_ED25519,
	  "AKIAGPUCLUSTERSIM001", "gpucluster-sim-aws-secret-key-0000000000", "AWS_ACCESS_KEY_ID",
	  "AWS_SECRET_ACCESS_KEY" },
	{ "alibaba", "cn-hangzhou", "cn-hangzhou-i", "ecs.gn7i-c8g1.2xlarge",
	  "ubuntu_22_04_x64_20G_alibase_20261015.vhd", FUZZ_RSA, "LTAIgpuclustersim001",
	  "gpucluster-sim-alibaba-secret-000000", "ALIBABA_CLOUD_ACCESS_KEY_ID",
	  "ALIBABA_CLOUD_ACCESS_KEY_SECRET" },
	{ "tencent", "ap-guangzhou", "ap-guangzhou-3", "GN7.2XLARGE32", "img-487zeit5", FUZZ_RSA,
	  "AKIDgpuclustersim001", "gpucluster-sim-tencent-secret-000000", "TENCENTCLOUD_SECRET_ID",
	  "TENCENTCLOUD_SECRET_KEY" },
};

static const struct cloud *cloud_of(const char *name)
{
	for (size_t i = 0; i < sizeof(clouds) / sizeof(clouds[0]); i++)
		if (strcmp(clouds[i].name, name) == 0)
			return &clouds[i];
	abort();
}

static const struct cloud *cl;

static const char *fake_lookup(void *ctx, const char *name)
{
	static const char *const vars[][2] = {
		{ "AWS_ACCESS_KEY_ID", "AKIDFUZZFUZZFUZZFUZZ" },
		{ "AWS_SECRET_ACCESS_KEY", "fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzz" },
		{ "ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAIfuzzfuzzfuzz" },
		{ "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "fuzzfuzzfuzzfuzzfuzzfuzzfuzzfu" },
		{ "TENCENTCLOUD_SECRET_ID", "AKIDfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzz" },
		{ "TENCENTCLOUD_SECRET_KEY", "fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzz" },
		{ "HOME", "/nonexistent" },
	};

	(void)ctx;
	if (record_endpoint && strcmp(name, cl->key_var) == 0)
		return cl->key_id;
	if (record_endpoint && strcmp(name, cl->secret_var) == 0)
		return cl->secret;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strcmp(name, vars[i][0]) == 0)
			return vars[i][1];
	return NULL;
}

static const struct gc_spec_env fake_env = { .lookup = fake_lookup, .ctx = NULL };

/* ---- the operations -------------------------------------------------------------- */

static const char *const op_names[] = {
	"discover",	  "discover-all",    "list-keypairs",	"list-secgroups", "image-alias",
	"image-id",	  "instance-type",   "price",		"spot-price",	  "zones",
	"regions",	  "console",	     "create",		"terminate",	  "import-keypair",
	"delete-keypair", "create-secgroup", "delete-secgroup",
};
#define N_OPS (sizeof(op_names) / sizeof(op_names[0]))

static const struct gc_tag_filter filter[] = { { "gpucluster:cluster", "fuzz" } };
static char tag_cluster[] = "gpucluster:cluster", tag_group[] = "gpucluster:group";
static char val_cluster[] = "fuzz", val_group[] = "workers";
static const struct gc_tag tags[] = { { tag_cluster, val_cluster }, { tag_group, val_group } };
static const char *ids[] = { "i-0123456789abcdef0", "i-0123456789abcdef1" };
/* While recording, what the emulator made, so later operations act on it. */
static char *made_key, *made_sg, *made_ids[2];
static const char *const cidrs[] = { "203.0.113.0/24" };

static void check_instances(const struct gc_instance_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!l->items[i].id || !*l->items[i].id)
			abort();
}

static void check_resources(const struct gc_resource_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!l->items[i].id || !*l->items[i].id)
			abort();
}

static void check_names(char **v, size_t n, int r)
{
	if (r == 0)
		for (size_t i = 0; i < n; i++)
			if (!v[i] || !*v[i])
				abort();
	gc_strv_free(v, n);
}

static void check_id(char *id, int r)
{
	if (r == 0 && (!id || !*id))
		abort();
	free(id);
}

static int run_op(struct gc_provider *p, unsigned op, struct gc_error *err)
{
	struct gc_instance_list il;
	struct gc_resource_list rl;
	struct gc_type_facts facts;
	char **names = NULL, *s = NULL;
	size_t n = 0;
	double price = 0;
	char cur[GC_CURRENCY_SIZE];
	int r = 0;

	gc_instance_list_init(&il);
	gc_resource_list_init(&rl);
	switch (op) {
	case 0:
	case 1: {
		struct gc_discover_query q = { filter, 1, op == 1 };

		r = gc_provider_discover(p, &q, &il, err);
		break;
	}
	case 2:
	case 3:
		r = gc_provider_list_resources(p,
					       op == 2 ? GC_RESOURCE_KEYPAIR : GC_RESOURCE_SECGROUP,
					       filter, 1, &rl, err);
		break;
	case 4:
		r = gc_provider_resolve_image(p, "ubuntu-22.04", true, &s, err);
		check_id(s, r);
		break;
	case 5:
		r = gc_provider_resolve_image(p, cl->image, false, &s, err);
		check_id(s, r);
		break;
	case 6: r = gc_provider_instance_type(p, cl->type, &facts, err); break;
	case 7:
	case 8:
		r = gc_provider_price(p, cl->type, op == 8 ? cl->zone : NULL, op == 8, &price, cur,
				      err);
		if (r == 0 && !(price >= 0))
			abort();
		break;
	case 9:
		r = gc_provider_zones(p, &names, &n, err);
		check_names(names, n, r);
		break;
	case 10:
		r = gc_provider_regions(p, &names, &n, err);
		check_names(names, n, r);
		break;
	case 11:
		r = gc_provider_console_output(p, ids[0], &s, err);
		if (r == 0 && !s)
			abort();
		free(s);
		break;
	case 12: {
		struct gc_create_request req = {
			.group = "workers",
			.type = cl->type,
			.zone = cl->zone,
			.image_id = cl->image,
			.count = 2,
			.disk_gb = 100,
			.client_token = "fuzz-token-0001",
			.key_name = "fuzz_key",
			.key_id = made_key ? made_key : "key-fuzz",
			.authorized_key = cl->pubkey,
			.security_group_id = made_sg ? made_sg : "sg-fuzz",
			.tags = tags,
			.n_tags = 2,
		};

		r = gc_provider_create(p, &req, &il, err);
		for (size_t i = 0; record_endpoint && r == 0 && i < 2 && i < il.n; i++)
			ids[i] = made_ids[i] = gc_xstrdup(il.items[i].id);
		break;
	}
	case 13: r = gc_provider_terminate(p, ids, 2, err); break;
	case 14: {
		struct gc_keypair_request req = { "fuzz_key", cl->pubkey, tags, 2 };

		r = gc_provider_import_keypair(p, &req, &s, err);
		if (record_endpoint && r == 0)
			made_key = gc_xstrdup(s);
		check_id(s, r);
		break;
	}
	case 15: r = gc_provider_delete_keypair(p, made_key ? made_key : "key-fuzz", err); break;
	case 16: {
		struct gc_secgroup_request req = {
			.name = "fuzz-sg",
			.description = "fuzz",
			.ssh_port = 22,
			.allow_from = cidrs,
			.n_allow_from = 1,
			.tags = tags,
			.n_tags = 2,
			.allow_members = true,
		};

		r = gc_provider_create_secgroup(p, &req, &s, err);
		if (record_endpoint && r == 0)
			made_sg = gc_xstrdup(s);
		check_id(s, r);
		break;
	}
	default: r = gc_provider_delete_secgroup(p, made_sg ? made_sg : "sg-fuzz", err); break;
	}
	if (r == 0) {
		check_instances(&il);
		check_resources(&rl);
	}
	gc_instance_list_release(&il);
	gc_resource_list_release(&rl);
	return r;
}

static void record(unsigned op, int r, const struct gc_error *err)
{
	const char *dir = getenv("GC_FUZZ_RECORD_OUT");
	char *path = gc_xasprintf("%s/%s", dir ? dir : ".", op_names[op]);
	FILE *f = fopen(path, "wb");
	uint8_t byte = (uint8_t)op;

	fprintf(stderr, "record: %s %s: %s\n", FUZZ_CLOUD, op_names[op], r ? err->message : "ok");
	if (f) {
		fwrite(&byte, 1, 1, f);
		fwrite(recorded.data, 1, recorded.len, f);
		fclose(f);
	}
	free(path);
	gc_buf_reset(&recorded);
	n_recorded = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct gc_provider_ops *ops = gc_provider_by_name(FUZZ_CLOUD);
	struct gc_provider_config cfg;
	struct gc_provider *p = NULL;
	struct gc_error err;
	int r;

	if (!ops || size == 0)
		return 0;
	cl = cloud_of(FUZZ_CLOUD);
	record_endpoint = getenv("GC_FUZZ_RECORD");
	memset(&cfg, 0, sizeof(cfg));
	cfg.region = cl->region;
	cfg.endpoint = record_endpoint ? record_endpoint : "http://fuzz.invalid";
	cfg.env = &fake_env;
	cfg.clock = record_endpoint ? NULL : &fake_clock;
	cfg.no_rate_limit = true;
	gc_error_init(&err);
	/* a fresh driver per input: no cache carries one input's answers into the next */
	if (gc_provider_open(&p, ops, &cfg, &err) != 0)
		abort();
	rest = (const char *)data + 1;
	rest_len = size - 1;
	rest_done = false;
	r = run_op(p, data[0] % N_OPS, &err);
	if (record_endpoint)
		record(data[0] % N_OPS, r, &err);
	else if (getenv("GC_FUZZ_TRACE")) /* what an input did, for people reading a corpus */
		fprintf(stderr, "fuzz: %s %s: %s\n", FUZZ_CLOUD, op_names[data[0] % N_OPS],
			r ? err.message : "ok");
	/* a failure always says what failed */
	if (r != 0 && (err.code == GC_OK || !err.message[0]))
		abort();
	gc_provider_close(p);
	return 0;
}
