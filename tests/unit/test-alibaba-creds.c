/*
 * test-alibaba-creds.c: the Alibaba Cloud credential chain (providers/alibaba/creds.c)
 * without the emulator (tests/sim/test-alibaba-driver.c runs a RamRoleArn profile against
 * its STS). Every test runs with its own temporary HOME and an environment table of its
 * own (nothing is read from the real one), and with the metadata service pointed at
 * 127.0.0.1: environment keys in all four spellings and partial pairs, the aliyun CLI's
 * config.json (current, ALIBABA_CLOUD_PROFILE, the spec's profile, ALIBABA_CLOUD_CONFIG_FILE,
 * every mode, broken files), RamRoleArn and ChainableRamRoleArn against a fake STS on
 * 127.0.0.1 that checks the ACS3 signature of each AssumeRole, EcsRamRole against a fake
 * metadata service that insists on its token header, OIDC token files, the "nothing found"
 * message, and secrets reaching the log.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"
#include "core/str.h"
#include "creds-fixture.h"
#include "fake-http.h"
#include "providers/alibaba/creds.h"
#include "providers/alibaba/sign.h"

#define NOW	    1800000000 /* 2027-01-15T08:00:00Z */
#define TEST_AKID   "LTAI5tEXAMPLEkeyid0001"
#define TEST_SECRET "EXAMPLEsecretEXAMPLEsecret0001"
#define ROLE	    "acs:ram::5123456789012345:role/gpucluster"

static char closed_url[64]; /* a loopback port nothing listens on */

/* A loopback port that refuses connections: bound, never listened on, then closed. */
static void closed_port(char out[64])
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(out, 64, "http://127.0.0.1:%u", (unsigned)ntohs(sin.sin_port));
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	if (creds_setup("/tmp/gc-alicreds-XXXXXX") != 0)
		return -1;
	closed_port(closed_url);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return creds_teardown();
}

/* Writes HOME/.aliyun/config.json. */
static void config_json(const char *text)
{
	char *dir = gc_xasprintf("%s/.aliyun", t.home), *path;
	FILE *f;

	mkdir(dir, 0700);
	path = gc_xasprintf("%s/config.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
	free(dir);
}

static void input(struct ali_creds_input *in)
{
	memset(in, 0, sizeof(*in));
	in->region = "cn-hangzhou";
	in->env = &t.env;
	in->http = t.http;
	in->log = &t.log;
	in->now = NOW;
	in->clock = &fake;
	in->metadata_url = closed_url;
}

static int resolve(const struct ali_creds_input *in, struct ali_creds *c, struct gc_error *err)
{
	ali_creds_init(c);
	gc_error_init(err);
	return ali_creds_resolve(c, in, err);
}

/* ---- the environment ------------------------------------------------------------------ */

static void test_env_keys(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;

	(void)state;
	input(&in);
	set_env("ALIBABA_CLOUD_ACCESS_KEY_ID", TEST_AKID);
	set_env("ALIBABA_CLOUD_ACCESS_KEY_SECRET", TEST_SECRET);
	set_env("ALIBABA_CLOUD_SECURITY_TOKEN", "CAISenvtoken000000001");
	/* a profile would come second: the environment wins */
	config_json("{\"current\":\"default\",\"profiles\":[{\"name\":\"default\",\"mode\":\"AK\","
		    "\"access_key_id\":\"LTAIfromfile\",\"access_key_secret\":\"fromfile\"}]}");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, TEST_AKID);
	assert_string_equal(c.access_key_secret, TEST_SECRET);
	assert_string_equal(c.security_token, "CAISenvtoken000000001");
	assert_int_equal(c.expiration, 0);
	assert_string_equal(c.source, "environment (ALIBABA_CLOUD_ACCESS_KEY_ID)");
	/* the secrets are the log's to hide from now on */
	gc_log_info(&t.log, "secret %s token %s", TEST_SECRET, "CAISenvtoken000000001");
	assert_null(strstr(t.logged.data, TEST_SECRET));
	assert_null(strstr(t.logged.data, "CAISenvtoken000000001"));
	ali_creds_release(&c);

	/* the spec naming a profile skips the environment */
	in.profile = "default";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIfromfile");
	assert_null(c.security_token);
	ali_creds_release(&c);
}

static void test_env_spellings(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;

	(void)state;
	input(&in);
	set_env("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true");
	/* Terraform's names */
	set_env("ALICLOUD_ACCESS_KEY", "LTAIterraform");
	set_env("ALICLOUD_SECRET_KEY", "terraform-secret");
	set_env("ALICLOUD_SECURITY_TOKEN", "CAISterraform");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIterraform");
	assert_string_equal(c.security_token, "CAISterraform");
	assert_string_equal(c.source, "environment (ALICLOUD_ACCESS_KEY)");
	ali_creds_release(&c);
	/* the aliyun CLI's older names come first */
	set_env("ALIBABACLOUD_ACCESS_KEY_ID", "LTAIolder");
	set_env("ALIBABACLOUD_ACCESS_KEY_SECRET", "older-secret");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIolder");
	assert_null(c.security_token);
	ali_creds_release(&c);
	/* half a pair is an error, not a fall-through */
	set_env("ALIBABA_CLOUD_ACCESS_KEY_ID", TEST_AKID);
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "ALIBABA_CLOUD_ACCESS_KEY_SECRET is not"));
	assert_null(c.access_key_id);
}

/* ---- the aliyun CLI's config.json -------------------------------------------------------- */

#define AK_PROFILE(name, id)                                                   \
	"{\"name\":\"" name "\",\"mode\":\"AK\",\"access_key_id\":\"" id "\"," \
	"\"access_key_secret\":\"secret-of-" id "\",\"region_id\":\"cn-hangzhou\"}"

static void test_profiles(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;
	char *other;
	FILE *f;

	(void)state;
	input(&in);
	set_env("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true");
	config_json("{\"current\":\"work\",\"profiles\":[" AK_PROFILE("default", "LTAIdefault") "," AK_PROFILE(
		"work",
		"LTAIwork") "," AK_PROFILE("ci",
					   "LTAIci") ","
						     "{\"name\":\"sts\",\"mode\":\"StsToken\",\"access_key_id\":\"STS.x\","
						     "\"access_key_secret\":\"s\",\"sts_token\":\"CAISfromprofile\"},"
						     "{\"name\":\"nots\",\"mode\":\"StsToken\",\"access_key_id\":\"STS.y\","
						     "\"access_key_secret\":\"s\"},"
						     "{\"name\":\"nomode\",\"access_key_id\":\"a\",\"access_key_secret\":\"b\"},"
						     "{\"name\":\"web\",\"mode\":\"OAuth\"},"
						     "{\"name\":\"oidc\",\"mode\":\"OIDC\",\"ram_role_arn\":\"" ROLE
						     "\","
						     "\"oidc_provider_arn\":\"acs:ram::5123456789012345:oidc-provider/gh\","
						     "\"oidc_token_file\":\"~/token\"}]}");
	/* the file's current profile */
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIwork");
	assert_string_equal(c.access_key_secret, "secret-of-LTAIwork");
	assert_string_equal(c.source, "profile 'work'");
	ali_creds_release(&c);
	/* ALIBABA_CLOUD_PROFILE over it, the spec's over both */
	set_env("ALIBABA_CLOUD_PROFILE", "default");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIdefault");
	ali_creds_release(&c);
	in.profile = "ci";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIci");
	ali_creds_release(&c);
	in.profile = "sts";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.security_token, "CAISfromprofile");
	ali_creds_release(&c);

	/* what cannot work says so */
	in.profile = "nots";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "has no sts_token"));
	in.profile = "nomode";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "has no mode"));
	in.profile = "web";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "mode 'OAuth'"));
	/* mode OIDC reads its token file and goes to STS (here a closed port: the exchange
	 * itself is tested against the emulator, tests/sim/test-oidc.c) */
	in.profile = "oidc";
	f = fopen(other = gc_xasprintf("%s/token", t.home), "w");
	assert_non_null(f);
	fputs("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvIn0.c2ln\n", f);
	fclose(f);
	free(other);
	in.endpoint = closed_url;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(
		strstr(err.message, "cannot assume role '" ROLE "' with the OIDC token in '"));
	in.endpoint = NULL;
	in.profile = "nobody";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "'nobody' (named by the spec's provider.profile)"));
	assert_non_null(strstr(err.message, "~/.aliyun/config.json"));

	/* ALIBABA_CLOUD_CONFIG_FILE moves the file */
	in.profile = NULL;
	other = gc_xasprintf("%s/elsewhere.json", t.home);
	f = fopen(other, "w");
	assert_non_null(f);
	fputs("{\"current\":\"x\",\"profiles\":[" AK_PROFILE("x", "LTAIelsewhere") "]}", f);
	fclose(f);
	set_env("ALIBABA_CLOUD_CONFIG_FILE", other);
	set_env("ALIBABA_CLOUD_PROFILE", "x");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "LTAIelsewhere");
	ali_creds_release(&c);
	/* a file that is not JSON: named, with the place, not the text */
	f = fopen(other, "w");
	fputs("{\"current\": \"x\", \"profiles\": [ {\"secret\": \"hunter2\" ]}", f);
	fclose(f);
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "is not valid JSON (line 1"));
	assert_null(strstr(err.message, "hunter2"));
	free(other);
}

/* ---- a fake STS on 127.0.0.1 that checks every AssumeRole's ACS3 signature ------------------ */

struct sts {
	struct MHD_Daemon *d;
	char url[64];
	pthread_mutex_t lock;
	unsigned calls, bad;
	unsigned throttle_first; /* answer Throttling.User this many times first */
	bool refuse;		 /* NoPermission */
	char last_role[256], last_session[80], last_duration[16], last_signer[64];
	char last_token[128];
};

static struct sts sts;

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	(void)kind;
	gc_params_add(cls, key, value ? value : "");
	return MHD_YES;
}

/* The secret of a key the fake STS knows: the test key, or one it issued. */
static const char *sts_secret(const char *id)
{
	if (!strcmp(id, TEST_AKID))
		return TEST_SECRET;
	if (gc_starts_with(id, "STS.issued"))
		return "issued-secret";
	return NULL;
}

static enum MHD_Result sts_handler(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	struct gc_params headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_sign_request sr;
	struct gc_sign_auth auth;
	struct gc_error err;
	const char *authz, *secret, *v;
	char body[1024];
	enum MHD_Result ret;
	bool ok = false;

	(void)cls;
	(void)version;
	(void)upload;
	if (!*con_cls) {
		*con_cls = (void *)1;
		return MHD_YES;
	}
	*upload_size = 0;
	MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &headers);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &query);
	gc_error_init(&err);
	pthread_mutex_lock(&sts.lock);
	sts.calls++;
	authz = gc_params_get_ci(&headers, "authorization");
	if (strcmp(method, "POST") == 0 && strcmp(url, "/") == 0 && authz &&
	    ali_acs3_parse_authorization(&auth, authz, &err) == 0) {
		memset(&sr, 0, sizeof(sr));
		sr.method = "POST";
		sr.path = "/";
		sr.query = &query;
		sr.headers = &headers;
		secret = sts_secret(auth.credential);
		ok = secret && ali_acs3_verify(&sr, &auth, secret, NULL, &err) == 0 &&
			(v = gc_params_get_ci(&headers, "x-acs-action")) &&
			!strcmp(v, "AssumeRole") &&
			(v = gc_params_get_ci(&headers, "x-acs-version")) &&
			!strcmp(v, "2015-04-01") && strstr(auth.signed_headers, "x-acs-action");
		/* an issued key signs with its token, and the token is signed too */
		if (ok && gc_starts_with(auth.credential, "STS.")) {
			v = gc_params_get_ci(&headers, "x-acs-security-token");
			ok = v && !strcmp(v, "CAISissued-token") &&
				strstr(auth.signed_headers, "x-acs-security-token");
		}
		snprintf(sts.last_signer, sizeof(sts.last_signer), "%s", auth.credential);
		gc_sign_auth_release(&auth);
	}
	snprintf(sts.last_role, sizeof(sts.last_role), "%s",
		 (v = gc_params_get(&query, "RoleArn")) ? v : "");
	snprintf(sts.last_session, sizeof(sts.last_session), "%s",
		 (v = gc_params_get(&query, "RoleSessionName")) ? v : "");
	snprintf(sts.last_duration, sizeof(sts.last_duration), "%s",
		 (v = gc_params_get(&query, "DurationSeconds")) ? v : "");
	if (!ok) {
		sts.bad++;
		ret = fake_http_reply(c, 400,
				      "{\"RequestId\":\"R-bad\",\"Code\":\"SignatureDoesNotMatch\","
				      "\"Message\":\"no\"}");
	} else if (sts.throttle_first) {
		sts.throttle_first--;
		ret = fake_http_reply(
			c, 400,
			"{\"RequestId\":\"R-t\",\"Code\":\"Throttling.User\",\"Message\":\"t\"}");
	} else if (sts.refuse) {
		ret = fake_http_reply(
			c, 403,
			"{\"RequestId\":\"R-np\",\"HostId\":\"sts.aliyuncs.com\",\"Code\":"
			"\"NoPermission\",\"Message\":\"You are not authorized to do this "
			"action.\"}");
	} else {
		snprintf(body, sizeof(body),
			 "{\"RequestId\":\"R-ok\",\"AssumedRoleUser\":{\"Arn\":\"%s/%s\"},"
			 "\"Credentials\":{\"AccessKeyId\":\"STS.issued%u\","
			 "\"AccessKeySecret\":\"issued-secret\","
			 "\"SecurityToken\":\"CAISissued-token\","
			 "\"Expiration\":\"2027-01-15T09:00:00Z\"}}",
			 sts.last_role, sts.last_session, sts.calls);
		ret = fake_http_reply(c, 200, body);
	}
	pthread_mutex_unlock(&sts.lock);
	gc_params_release(&headers);
	gc_params_release(&query);
	return ret;
}

static void sts_start(void)
{
	memset(&sts, 0, sizeof(sts));
	pthread_mutex_init(&sts.lock, NULL);
	sts.d = fake_http_start(sts_handler, NULL, NULL, sts.url);
	assert_non_null(sts.d);
}

static void sts_stop(void)
{
	MHD_stop_daemon(sts.d);
	pthread_mutex_destroy(&sts.lock);
}

static void test_ram_role_arn(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;

	(void)state;
	sts_start();
	input(&in);
	in.endpoint = sts.url; /* the spec's endpoint: every product, STS included */
	set_env("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true");
	config_json("{\"current\":\"role\",\"profiles\":["
		    "{\"name\":\"role\",\"mode\":\"RamRoleArn\",\"access_key_id\":\"" TEST_AKID
		    "\",\"access_key_secret\":\"" TEST_SECRET "\",\"ram_role_arn\":\"" ROLE
		    "\",\"ram_session_name\":\"nightly\",\"expired_seconds\":1800},"
		    "{\"name\":\"chained\",\"mode\":\"ChainableRamRoleArn\","
		    "\"source_profile\":\"role\",\"ram_role_arn\":\"" ROLE "-2\"},"
		    "{\"name\":\"short\",\"mode\":\"RamRoleArn\",\"access_key_id\":\"" TEST_AKID
		    "\",\"access_key_secret\":\"" TEST_SECRET "\",\"ram_role_arn\":\"" ROLE
		    "\",\"expired_seconds\":60},"
		    "{\"name\":\"loop-a\",\"mode\":\"ChainableRamRoleArn\","
		    "\"source_profile\":\"loop-b\",\"ram_role_arn\":\"" ROLE "\"},"
		    "{\"name\":\"loop-b\",\"mode\":\"ChainableRamRoleArn\","
		    "\"source_profile\":\"loop-a\",\"ram_role_arn\":\"" ROLE "\"}]}");

	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_true(gc_starts_with(c.access_key_id, "STS.issued"));
	assert_string_equal(c.access_key_secret, "issued-secret");
	assert_string_equal(c.security_token, "CAISissued-token");
	assert_int_equal(c.expiration, NOW + 3600);
	assert_string_equal(c.source, "profile 'role' (role '" ROLE "')");
	assert_int_equal(sts.bad, 0);
	assert_string_equal(sts.last_role, ROLE);
	assert_string_equal(sts.last_session, "nightly");
	assert_string_equal(sts.last_duration, "1800");
	assert_string_equal(sts.last_signer, TEST_AKID);
	ali_creds_release(&c);

	/* a chain: the source profile's role signs the second AssumeRole, token and all */
	in.profile = "chained";
	sts.calls = 0;
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_int_equal(sts.calls, 2);
	assert_int_equal(sts.bad, 0);
	assert_string_equal(sts.last_role, ROLE "-2");
	assert_true(gc_starts_with(sts.last_signer, "STS.issued"));
	assert_true(gc_starts_with(sts.last_session, "gpucluster-"));
	assert_string_equal(sts.last_duration, "3600");
	ali_creds_release(&c);

	/* throttling is retried */
	sts.throttle_first = 2;
	sts.calls = 0;
	in.profile = "role";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_int_equal(sts.calls, 3);
	assert_true(fc.slept > 0);
	ali_creds_release(&c);

	/* STS refusing stops the chain with its code */
	sts.refuse = true;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "NoPermission");
	assert_string_equal(err.request_id, "R-np");
	assert_int_equal(err.http_status, 403);
	assert_non_null(strstr(err.message, "assume role '" ROLE "' for profile 'role'"));
	sts.refuse = false;

	in.profile = "short";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "expired_seconds 60"));
	in.profile = "loop-a";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "'loop-a' -> 'loop-b' -> 'loop-a'"));
	sts_stop();
}

/* ---- a fake ECS metadata service that insists on its token header ---------------------- */

struct meta {
	struct MHD_Daemon *d;
	char url[64];
	pthread_mutex_t lock;
	unsigned puts, gets, rejected;
	bool no_token; /* PUT /latest/api/token answers 404: an old service (v1 only) */
	bool no_role;  /* the directory answers 404 */
	const char *token;
};

static struct meta meta;

static enum MHD_Result meta_handler(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version, const char *upload,
				    size_t *upload_size, void **con_cls)
{
	const char *ttl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      "X-aliyun-ecs-metadata-token-ttl-seconds");
	const char *tok =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-aliyun-ecs-metadata-token");
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)upload;
	if (!*con_cls) {
		*con_cls = (void *)1;
		return MHD_YES;
	}
	*upload_size = 0;
	pthread_mutex_lock(&meta.lock);
	if (strcmp(method, "PUT") == 0 && strcmp(url, "/latest/api/token") == 0) {
		meta.puts++;
		if (meta.no_token)
			ret = fake_http_reply(c, 404, "");
		else if (!ttl || strcmp(ttl, "21600") != 0)
			ret = fake_http_reply(c, 400, "bad ttl");
		else
			ret = fake_http_reply(c, 200, meta.token);
	} else if (strcmp(method, "GET") == 0) {
		meta.gets++;
		if (!meta.no_token && (!tok || strcmp(tok, meta.token) != 0)) {
			meta.rejected++;
			ret = fake_http_reply(c, 403, "");
		} else if (strcmp(url, "/latest/meta-data/ram/security-credentials/") == 0) {
			ret = meta.no_role ? fake_http_reply(c, 404, "")
					   : fake_http_reply(c, 200, "GpuNodeRole\n");
		} else if (strcmp(url, "/latest/meta-data/ram/security-credentials/GpuNodeRole") ==
				   0 ||
			   strcmp(url, "/latest/meta-data/ram/security-credentials/Other") == 0) {
			ret = fake_http_reply(
				c, 200,
				"{\"AccessKeyId\":\"STS.metadata0001\",\"AccessKeySecret\":"
				"\"metadata-secret\",\"Expiration\":\"2027-01-15T14:00:00Z\","
				"\"SecurityToken\":\"CAISmetadata-token\",\"LastUpdated\":"
				"\"2027-01-15T08:00:00Z\",\"Code\":\"Success\"}");
		} else {
			ret = fake_http_reply(c, 404, "");
		}
	} else {
		meta.rejected++;
		ret = fake_http_reply(c, 405, "");
	}
	pthread_mutex_unlock(&meta.lock);
	return ret;
}

static void meta_start(void)
{
	memset(&meta, 0, sizeof(meta));
	pthread_mutex_init(&meta.lock, NULL);
	meta.token = "metadata-session-token-0001";
	meta.d = fake_http_start(meta_handler, NULL, NULL, meta.url);
	assert_non_null(meta.d);
}

static void meta_stop(void)
{
	MHD_stop_daemon(meta.d);
	pthread_mutex_destroy(&meta.lock);
}

static void test_ecs_ram_role(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;

	(void)state;
	meta_start();
	input(&in);
	in.metadata_url = meta.url;
	/* the end of the chain: the role the directory lists */
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "STS.metadata0001");
	assert_string_equal(c.security_token, "CAISmetadata-token");
	assert_int_equal(c.expiration, NOW + 6 * 3600);
	assert_string_equal(c.source, "ECS RAM role 'GpuNodeRole'");
	assert_int_equal(meta.rejected, 0);
	assert_int_equal(meta.gets, 2);
	gc_log_info(&t.log, "%s %s", "metadata-session-token-0001", "metadata-secret");
	assert_null(strstr(t.logged.data, "metadata-session-token-0001"));
	assert_null(strstr(t.logged.data, "metadata-secret"));
	ali_creds_release(&c);

	/* ALIBABA_CLOUD_ECS_METADATA names the role: no listing */
	set_env("ALIBABA_CLOUD_ECS_METADATA", "Other");
	meta.gets = 0;
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.source, "ECS RAM role 'Other'");
	assert_int_equal(meta.gets, 1);
	ali_creds_release(&c);

	/* a profile of mode EcsRamRole, its ram_role_name first */
	config_json("{\"current\":\"ecs\",\"profiles\":[{\"name\":\"ecs\",\"mode\":"
		    "\"EcsRamRole\",\"ram_role_name\":\"GpuNodeRole\"}]}");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.source, "ECS RAM role 'GpuNodeRole'");
	ali_creds_release(&c);

	/* an old service without tokens: the GETs go without one, unless v1 is off */
	meta.no_token = true;
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "STS.metadata0001");
	ali_creds_release(&c);
	set_env("ALIBABA_CLOUD_IMDSV1_DISABLED", "true");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH); /* the profile applies but cannot work */
	assert_non_null(strstr(err.message, "ALIBABA_CLOUD_IMDSV1_DISABLED"));

	/* no profile, no role attached: the chain ends saying so */
	set_env("ALIBABA_CLOUD_IMDSV1_DISABLED", "false");
	set_env("ALIBABA_CLOUD_ECS_METADATA", "");
	config_json("{\"profiles\":[]}");
	meta.no_token = false;
	meta.no_role = true;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "no RAM role is attached to this instance"));
	meta_stop();
}

/* ---- OIDC and nothing at all --------------------------------------------------------------- */

static void test_oidc_file(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;
	char *file = gc_xasprintf("%s/oidc-token", t.home);
	FILE *f = fopen(file, "w");

	(void)state;
	assert_non_null(f);
	fputs("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvIn0.c2ln\n", f);
	fclose(f);
	input(&in);
	in.endpoint = closed_url; /* STS: tested against the emulator in tests/sim */
	set_env("ALIBABA_CLOUD_ROLE_ARN", ROLE);
	set_env("ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "acs:ram::5123456789012345:oidc-provider/gh");
	set_env("ALIBABA_CLOUD_OIDC_TOKEN_FILE", file);
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_non_null(strstr(err.message, ROLE));
	assert_non_null(strstr(err.message, file));
	/* an empty token file is an error of its own, before any request */
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "is empty"));
	/* without a token file, GitHub Actions' token service is asked; missing its token
	 * variable is a clear error, not a fall-through to the next source */
	set_env("ALIBABA_CLOUD_OIDC_TOKEN_FILE", "");
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", "http://127.0.0.1:1/token?api-version=2.0");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "no ACTIONS_ID_TOKEN_REQUEST_TOKEN"));
	assert_non_null(strstr(err.message, "(ALIBABA_CLOUD_ROLE_ARN)"));
	/* the token was read, so it is a secret of the log's */
	gc_log_info(&t.log, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvIn0.c2ln");
	assert_null(strstr(t.logged.data, "eyJzdWIiOiJyZXBvIn0"));
	free(file);
}

static void test_nothing_found(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;

	(void)state;
	input(&in); /* the metadata service: a closed port on 127.0.0.1 */
	set_env("ALIBABA_CLOUD_CREDENTIALS_URI", "http://127.0.0.1:1/creds");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "no Alibaba Cloud credentials found; tried: "));
	assert_non_null(strstr(err.message, "environment (ALIBABA_CLOUD_ACCESS_KEY_ID not set)"));
	assert_non_null(strstr(err.message, "OIDC (ALIBABA_CLOUD_ROLE_ARN not set)"));
	assert_non_null(
		strstr(err.message, "aliyun CLI profile 'default' (no ~/.aliyun/config.json)"));
	assert_non_null(strstr(err.message, "ECS RAM role (no answer from http://127.0.0.1:"));
	assert_non_null(strstr(err.message, "ALIBABA_CLOUD_CREDENTIALS_URI (set, but"));
	assert_null(c.access_key_id);

	set_env("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true");
	set_env("ALIBABA_CLOUD_CLI_PROFILE_DISABLED", "true");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_non_null(strstr(err.message,
			       "ECS RAM role (disabled by "
			       "ALIBABA_CLOUD_ECS_METADATA_DISABLED)"));
	assert_non_null(strstr(err.message,
			       "aliyun CLI profile (disabled by "
			       "ALIBABA_CLOUD_CLI_PROFILE_DISABLED)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_env_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_spellings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ram_role_arn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ecs_ram_role, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oidc_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_found, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
