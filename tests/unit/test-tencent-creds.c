/*
 * test-tencent-creds.c: the Tencent Cloud credential chain (providers/tencent/creds.c)
 * without the emulator. Every test runs with its own temporary HOME and an environment
 * table of its own (nothing is read from the real one): environment keys and their
 * half-set error, the spec's profile skipping them, the SDKs' INI file (quotes, named
 * sections, TENCENTCLOUD_CREDENTIALS_FILE, the /etc fallback), tccli's JSON files (keys,
 * tokens, the refused OAuth / SSO / role profiles, use-cvm-role), named but missing
 * profiles, the CVM role from a fake metadata service on 127.0.0.1 (role name, keys,
 * expiry, no role bound, broken answers, the switch that turns it off), the "nothing
 * found" message listing each source, and secrets kept out of the log.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"
#include "creds-fixture.h"
#include "fake-http.h"
#include "providers/tencent/creds.h"

#define ID  "AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE"
#define KEY "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE"

static char etc[128]; /* in place of /etc/tencentcloud/credentials */

static int setup(void **state)
{
	(void)state;
	if (creds_setup("/tmp/gc-tccreds-XXXXXX") != 0)
		return -1;
	snprintf(etc, sizeof(etc), "%s/etc-credentials", t.home);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return creds_teardown();
}

/* Writes HOME/rel, making its directory. */
static void write_file(const char *rel, const char *text)
{
	char *path = gc_xasprintf("%s/%s", t.home, rel);
	char *slash = strrchr(path, '/');
	FILE *f;

	*slash = '\0';
	mkdir(path, 0700);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void input(struct tc_creds_input *in)
{
	memset(in, 0, sizeof(in[0]));
	in->env = &t.env;
	in->http = t.http;
	in->log = &t.log;
	in->clock = &fake;
	in->etc_credentials = etc;
	/* nothing may leave the loopback: a port nobody listens on unless a test serves */
	in->metadata_base = "http://127.0.0.1:9";
	in->metadata_timeout_ms = 500;
}

static int resolve(const struct tc_creds_input *in, struct tc_creds *c, struct gc_error *err)
{
	tc_creds_init(c);
	gc_error_init(err);
	return tc_creds_resolve(c, in, err);
}

/* ---- environment ---------------------------------------------------------------------- */

static void test_env(void **state)
{
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;

	(void)state;
	input(&in);
	set_env("TENCENTCLOUD_SECRET_ID", ID);
	set_env("TENCENTCLOUD_SECRET_KEY", KEY);
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, ID);
	assert_string_equal(c.secret_key, KEY);
	assert_null(c.token);
	assert_int_equal(c.expiration, 0);
	assert_string_equal(c.source, "environment");
	tc_creds_release(&c);

	/* temporary keys: the session token, or tccli's name for it */
	set_env("TENCENTCLOUD_TOKEN", "tccli-token-0001");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.token, "tccli-token-0001");
	tc_creds_release(&c);
	set_env("TENCENTCLOUD_SESSION_TOKEN", "session-token-0001");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.token, "session-token-0001");
	/* registered with the log as soon as read */
	gc_log_info(&t.log, "key %s token %s", KEY, "session-token-0001");
	assert_null(strstr(t.logged.data, KEY));
	assert_null(strstr(t.logged.data, "session-token-0001"));
	tc_creds_release(&c);

	/* half a pair is an error, not a fall-through */
	set_env("TENCENTCLOUD_SECRET_KEY", "");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message,
			       "TENCENTCLOUD_SECRET_ID is set but "
			       "TENCENTCLOUD_SECRET_KEY is not"));
	assert_null(c.secret_id);

	/* a profile named by the spec skips the environment */
	set_env("TENCENTCLOUD_SECRET_KEY", KEY);
	write_file(".tencentcloud/credentials",
		   "[ci]\nsecret_id = file-id\nsecret_key = file-key\n");
	in.profile = "ci";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "file-id");
	assert_string_equal(c.source, "profile 'ci' (~/.tencentcloud/credentials)");
	tc_creds_release(&c);
}

/* ---- the SDKs' credentials file ------------------------------------------------------------ */

static void test_sdk_file(void **state)
{
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;
	char *path;

	(void)state;
	input(&in);
	set_env("TENCENTCLOUD_CVM_ROLE_DISABLED", "true");
	/* as the Python SDK documents it: quoted values */
	write_file(".tencentcloud/credentials",
		   "[default]\nsecret_id = \"quoted-id\"\nsecret_key=\"quoted-key\"\n"
		   "[research]\nsecret_id = research-id\nsecret_key = research-key\n"
		   "[half]\nsecret_id = half-id\n");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "quoted-id");
	assert_string_equal(c.secret_key, "quoted-key");
	assert_string_equal(c.source, "profile 'default' (~/.tencentcloud/credentials)");
	tc_creds_release(&c);

	/* another section, by TENCENTCLOUD_PROFILE */
	set_env("TENCENTCLOUD_PROFILE", "research");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "research-id");
	tc_creds_release(&c);

	/* one key without the other */
	set_env("TENCENTCLOUD_PROFILE", "half");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message,
			       "[half] in ~/.tencentcloud/credentials has secret_id "
			       "but no secret_key"));

	/* a named profile that is nowhere */
	set_env("TENCENTCLOUD_PROFILE", "nosuch");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "profile 'nosuch' (named by TENCENTCLOUD_PROFILE)"));
	assert_non_null(strstr(err.message, "no [nosuch] in ~/.tencentcloud/credentials"));
	assert_non_null(strstr(err.message, "no ~/.tccli/nosuch.credential"));

	/* TENCENTCLOUD_CREDENTIALS_FILE wins over the home file */
	set_env("TENCENTCLOUD_PROFILE", "default");
	path = gc_xasprintf("%s/elsewhere.ini", t.home);
	write_file("elsewhere.ini", "[default]\nsecret_id = elsewhere-id\nsecret_key = k\n");
	set_env("TENCENTCLOUD_CREDENTIALS_FILE", path);
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "elsewhere-id");
	tc_creds_release(&c);
	set_env("TENCENTCLOUD_CREDENTIALS_FILE", "");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "TENCENTCLOUD_CREDENTIALS_FILE is set but empty"));
	free(path);

	/* a syntax error names the file and line */
	unset_env("TENCENTCLOUD_CREDENTIALS_FILE");
	write_file(".tencentcloud/credentials", "[default]\nthis line has no equals sign\n");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "~/.tencentcloud/credentials:2"));
}

static void test_etc_file(void **state)
{
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;
	FILE *f;

	(void)state;
	input(&in);
	set_env("TENCENTCLOUD_CVM_ROLE_DISABLED", "true");
	f = fopen(etc, "w");
	assert_non_null(f);
	fputs("[default]\nsecret_id = etc-id\nsecret_key = etc-key\n", f);
	fclose(f);
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "etc-id");
	tc_creds_release(&c);
	/* the home file, when there is one, comes first */
	write_file(".tencentcloud/credentials", "[default]\nsecret_id = home-id\nsecret_key = k\n");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "home-id");
	tc_creds_release(&c);
}

/* ---- tccli ---------------------------------------------------------------------------------- */

static void test_tccli(void **state)
{
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;

	(void)state;
	input(&in);
	set_env("TENCENTCLOUD_CVM_ROLE_DISABLED", "true");
	write_file(".tccli/default.credential",
		   "{\"secretId\": \"tccli-id\", \"secretKey\": \"tccli-key\"}\n");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "tccli-id");
	assert_string_equal(c.secret_key, "tccli-key");
	assert_string_equal(c.source, "tccli profile 'default'");
	tc_creds_release(&c);

	/* the profile by TCCLI_PROFILE, with a token */
	write_file(".tccli/work.credential",
		   "{\"secretId\": \"w-id\", \"secretKey\": \"w-key\", \"token\": \"w-token\"}");
	set_env("TCCLI_PROFILE", "work");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "w-id");
	assert_string_equal(c.token, "w-token");
	tc_creds_release(&c);

	/* the SDKs' file has the profile: it comes first */
	write_file(".tencentcloud/credentials", "[work]\nsecret_id = ini-id\nsecret_key = k\n");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "ini-id");
	tc_creds_release(&c);

	/* log-ins gpucluster cannot renew, and roles it cannot assume, are refused */
	write_file(".tccli/sso.credential", "{\"type\": \"sso\", \"secretId\": \"x\"}");
	in.profile = "sso";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "tccli sso log-in"));
	write_file(".tccli/role.credential",
		   "{\"secretId\": \"x\", \"secretKey\": \"y\", \"role-arn\": "
		   "\"qcs::cam::uin/100:roleName/ci\"}");
	in.profile = "role";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "qcs::cam::uin/100:roleName/ci"));
	write_file(".tccli/broken.credential", "{\"secretId\": ");
	in.profile = "broken";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "~/.tccli/broken.credential: not a JSON object"));
}

/* ---- the CVM role ------------------------------------------------------------------------------ */

struct meta {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	unsigned gets;
	bool no_role;
	bool bad_json;
	const char *code;
	char base[64];
};

static struct meta meta;

static enum MHD_Result meta_handler(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version, const char *upload,
				    size_t *upload_size, void **con_cls)
{
	static const char path[] = "/latest/meta-data/cam/security-credentials/";
	enum MHD_Result ret;
	char body[512];

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	if (!*con_cls) {
		*con_cls = c;
		return MHD_YES;
	}
	pthread_mutex_lock(&meta.lock);
	meta.gets++;
	if (strcmp(method, "GET") != 0) {
		ret = fake_http_reply(c, 405, "");
	} else if (strcmp(url, path) == 0) {
		ret = meta.no_role ? fake_http_reply(c, 404, "")
				   : fake_http_reply(c, 200, "gpu-node-role");
	} else if (strcmp(url, "/latest/meta-data/cam/security-credentials/gpu-node-role") == 0) {
		snprintf(body, sizeof(body),
			 meta.bad_json ? "<html>"
				       : "{\"TmpSecretId\": \"role-id\", \"TmpSecretKey\": "
					 "\"role-secret-key\", \"ExpiredTime\": 1800003600, "
					 "\"Expiration\": \"2027-01-15T09:00:00Z\", \"Token\": "
					 "\"role-session-token\", \"Code\": \"%s\"}",
			 meta.code);
		ret = fake_http_reply(c, 200, body);
	} else {
		ret = fake_http_reply(c, 404, "");
	}
	pthread_mutex_unlock(&meta.lock);
	return ret;
}

static void meta_start(void)
{
	memset(&meta, 0, sizeof(meta));
	pthread_mutex_init(&meta.lock, NULL);
	meta.code = "Success";
	meta.d = fake_http_start(meta_handler, NULL, NULL, meta.base);
	assert_non_null(meta.d);
}

static void meta_stop(void)
{
	MHD_stop_daemon(meta.d);
	pthread_mutex_destroy(&meta.lock);
}

static void test_cvm_role(void **state)
{
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;

	(void)state;
	meta_start();
	input(&in);
	in.metadata_base = meta.base;
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "role-id");
	assert_string_equal(c.secret_key, "role-secret-key");
	assert_string_equal(c.token, "role-session-token");
	assert_int_equal(c.expiration, 1800003600);
	assert_string_equal(c.source, "instance role 'gpu-node-role'");
	assert_int_equal(meta.gets, 2);
	gc_log_info(&t.log, "role-secret-key role-session-token");
	assert_null(strstr(t.logged.data, "role-secret-key"));
	assert_null(strstr(t.logged.data, "role-session-token"));
	tc_creds_release(&c);

	/* tccli's use-cvm-role goes straight there, past the switch */
	set_env("TENCENTCLOUD_CVM_ROLE_DISABLED", "true");
	write_file(".tccli/default.credential", "{\"type\": \"cvm-role\"}");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.secret_id, "role-id");
	tc_creds_release(&c);
	{
		char *dir = gc_xasprintf("%s/.tccli", t.home);
		remove_tree(dir);
		free(dir);
	}

	/* the switch */
	meta.gets = 0;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message,
			       "instance role (disabled by "
			       "TENCENTCLOUD_CVM_ROLE_DISABLED)"));
	assert_int_equal(meta.gets, 0);
	set_env("TENCENTCLOUD_CVM_ROLE_DISABLED", "false");

	/* no role bound: not found, the next source (none) */
	meta.no_role = true;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "no CAM role is bound to this instance"));
	meta.no_role = false;

	/* a role that answers badly stops the chain with its own error */
	meta.code = "Failed";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "answered Code 'Failed'"));
	meta.code = "Success";
	meta.bad_json = true;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	meta_stop();
}

/* ---- nothing at all ------------------------------------------------------------------------------ */

static void test_nothing(void **state)
{
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;

	(void)state;
	input(&in); /* the metadata base is a closed port on the loopback */
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message,
			       "no Tencent Cloud credentials found; tried: "
			       "environment (TENCENTCLOUD_SECRET_ID not set), "
			       "profile 'default' (no ~/.tencentcloud/credentials or "));
	assert_non_null(strstr(err.message,
			       "; no ~/.tccli/default.credential), web identity (TKE_ROLE_ARN "
			       "not set), instance role (no answer from http://127.0.0.1:9"));
	assert_null(c.secret_id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sdk_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_etc_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tccli, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cvm_role, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
