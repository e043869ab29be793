/*
 * test-oidc-fetch.c: core/oidc.c against a fake GitHub Actions token service on
 * 127.0.0.1 (libmicrohttpd, started here), with the environment in a table of the test's
 * own and retries on the fake clock: the variables a job without `permissions: id-token:
 * write` lacks, the request as the runner's service wants it (the audience joined to the
 * URL's own query, encoded; the request token as a bearer token), what its answers may be
 * (refusals, 5xx retried, no token, not a JWT, oversized), the secrets reaching the log's
 * redactor, and the session names and defaults the drivers use.
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

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"
#include "core/oidc.h"
#include "core/provider.h"
#include "fake-clock.h"
#include "fake-http.h"

#define REQUEST_TOKEN "rt-0123456789abcdef"
#define JWT	      "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmFjbWUvdHJhaW4ifQ.c2lnbmF0dXJlLXNpZw"
#define MAX_VARS      8

enum answer {
	ANSWER_OK,
	ANSWER_FORBIDDEN,
	ANSWER_5XX, /* 503 `fail_first` times, then OK */
	ANSWER_NOT_JSON,
	ANSWER_NO_VALUE,
	ANSWER_NOT_JWT,
	ANSWER_HUGE,
};

static struct {
	struct MHD_Daemon *d;
	char base[64];
	pthread_mutex_t lock;
	enum answer answer;
	unsigned fail_first;
	unsigned calls;
	char last_uri[512];
	char last_authz[256];
	char last_audience[256];
	char last_method[16];
} srv;

static struct {
	const char *names[MAX_VARS];
	char *values[MAX_VARS];
	size_t n;
	struct gc_spec_env env;
	struct gc_http *http;
	struct gc_log log;
	struct gc_buf logged;
} t;

static const char *lookup(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.names[i], name) == 0)
			return t.values[i];
	return NULL;
}

static void set_env(const char *name, const char *value)
{
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.names[i], name) == 0) {
			free(t.values[i]);
			t.values[i] = value ? gc_xstrdup(value) : NULL;
			return;
		}
	assert_true(t.n < MAX_VARS);
	t.names[t.n] = name;
	t.values[t.n++] = value ? gc_xstrdup(value) : NULL;
}

static void sink(void *ctx, enum gc_log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	gc_buf_addf(&t.logged, "%s\n", line);
}

/* ---- the fake token service ---- */

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	pthread_mutex_lock(&srv.lock);
	snprintf(srv.last_uri, sizeof(srv.last_uri), "%s", uri);
	pthread_mutex_unlock(&srv.lock);
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *aud = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "audience");
	enum answer answer;
	enum MHD_Result ret;
	char *huge;

	(void)cls;
	(void)url;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	pthread_mutex_lock(&srv.lock);
	srv.calls++;
	snprintf(srv.last_authz, sizeof(srv.last_authz), "%s", authz ? authz : "");
	snprintf(srv.last_audience, sizeof(srv.last_audience), "%s", aud ? aud : "");
	snprintf(srv.last_method, sizeof(srv.last_method), "%s", method);
	answer = srv.answer;
	if (answer == ANSWER_5XX && srv.fail_first == 0)
		answer = ANSWER_OK;
	else if (answer == ANSWER_5XX)
		srv.fail_first--;
	pthread_mutex_unlock(&srv.lock);

	/* as the runner's service: the bearer token or nothing */
	if (!authz || strcmp(authz, "Bearer " REQUEST_TOKEN) != 0)
		return reply(c, 401, "{\"message\":\"unauthorized\"}");
	switch (answer) {
	case ANSWER_OK: return reply(c, 200, "{\"count\":1,\"value\":\"" JWT "\"}");
	case ANSWER_FORBIDDEN: return reply(c, 403, "{\"message\":\"forbidden\"}");
	case ANSWER_5XX: return reply(c, 503, "{\"message\":\"busy\"}");
	case ANSWER_NOT_JSON: return reply(c, 200, "<html>login</html>");
	case ANSWER_NO_VALUE: return reply(c, 200, "{\"count\":1}");
	case ANSWER_NOT_JWT: return reply(c, 200, "{\"value\":\"not a jwt\"}");
	case ANSWER_HUGE:
	default:
		huge = gc_xmalloc(GC_OIDC_MAX_ANSWER + 64);
		memset(huge, 'a', GC_OIDC_MAX_ANSWER + 63);
		huge[GC_OIDC_MAX_ANSWER + 63] = '\0';
		ret = reply(c, 200, huge);
		free(huge);
		return ret;
	}
}

static int setup(void **state)
{
	struct gc_error err;

	(void)state;
	memset(&srv, 0, sizeof(srv));
	memset(&t, 0, sizeof(t));
	pthread_mutex_init(&srv.lock, NULL);
	srv.d = fake_http_start(handler, NULL, uri_log, srv.base);
	if (!srv.d)
		return -1;
	t.env.lookup = lookup;
	gc_buf_init(&t.logged, 1 << 20);
	gc_log_init(&t.log, GC_LOG_TRACE, sink, NULL);
	gc_error_init(&err);
	t.http = gc_http_new(&t.log, &err);
	fc.now = 0;
	fc.sleeps = 0;
	fc.slept = 0;
	return t.http ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	MHD_stop_daemon(srv.d);
	pthread_mutex_destroy(&srv.lock);
	gc_http_free(t.http);
	gc_log_release(&t.log);
	gc_buf_release(&t.logged);
	for (size_t i = 0; i < t.n; i++)
		free(t.values[i]);
	return 0;
}

/* The runner's variables, its URL carrying a query as GitHub's does. */
static void runner_env(void)
{
	char *url = gc_xasprintf("%s/_apis/distributedtask/idtoken?api-version=2.0", srv.base);

	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", url);
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", REQUEST_TOKEN);
	free(url);
}

static int fetch(const char *audience, char **out, struct gc_error *err)
{
	struct gc_oidc_request req;

	memset(&req, 0, sizeof(req));
	req.audience = audience;
	req.env = &t.env;
	req.http = t.http;
	req.log = &t.log;
	req.clock = &fake;
	*out = NULL;
	gc_error_init(err);
	return gc_oidc_fetch(out, &req, err);
}

/* ---- the tests ---- */

static void test_missing_variables(void **state)
{
	struct gc_error err;
	char *jwt;

	(void)state;
	assert_int_equal(fetch("sts.amazonaws.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.message,
			    "no ACTIONS_ID_TOKEN_REQUEST_URL: the workflow needs "
			    "`permissions: id-token: write`");
	/* set but empty is the same as unset */
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", "");
	assert_int_equal(fetch("sts.amazonaws.com", &jwt, &err), -1);
	assert_non_null(strstr(err.message, "no ACTIONS_ID_TOKEN_REQUEST_URL"));
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", "http://127.0.0.1:1/token?api-version=2.0");
	assert_int_equal(fetch("sts.amazonaws.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "no ACTIONS_ID_TOKEN_REQUEST_TOKEN"));
	assert_non_null(strstr(err.message, "`permissions: id-token: write`"));
	/* not a URL the client takes; no audience */
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", REQUEST_TOKEN);
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", "file:///etc/passwd?x=1");
	assert_int_equal(fetch("sts.amazonaws.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "'file:///etc/passwd' is not an http(s) URL"));
	runner_env();
	assert_int_equal(fetch("", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_int_equal(srv.calls, 0);
	assert_null(jwt);
}

static void test_request(void **state)
{
	struct gc_error err;
	char *jwt;

	(void)state;
	runner_env();
	assert_int_equal(fetch("sts.amazonaws.com", &jwt, &err), 0);
	assert_string_equal(jwt, JWT);
	gc_oidc_token_free(jwt);
	assert_string_equal(srv.last_method, "GET");
	assert_string_equal(srv.last_authz, "Bearer " REQUEST_TOKEN);
	/* the audience joins the runner's own query */
	assert_string_equal(
		srv.last_uri,
		"/_apis/distributedtask/idtoken?api-version=2.0&audience=sts.amazonaws.com");
	assert_string_equal(srv.last_audience, "sts.amazonaws.com");

	/* encoded; and a URL without a query gets one */
	{
		char *url = gc_xasprintf("%s/token", srv.base);
		set_env("ACTIONS_ID_TOKEN_REQUEST_URL", url);
		free(url);
	}
	assert_int_equal(fetch("https://github.com/acme corp", &jwt, &err), 0);
	gc_oidc_token_free(jwt);
	assert_string_equal(srv.last_uri, "/token?audience=https%3A%2F%2Fgithub.com%2Facme%20corp");
	assert_string_equal(srv.last_audience, "https://github.com/acme corp");

	/* both the request token and the token are secrets of the log's from now on */
	gc_log_info(&t.log, "leak %s and %s", REQUEST_TOKEN, JWT);
	assert_null(strstr(t.logged.data, REQUEST_TOKEN));
	assert_null(strstr(t.logged.data, "c2lnbmF0dXJlLXNpZw"));
	assert_non_null(strstr(t.logged.data, "leak "));
	assert_int_equal(fc.sleeps, 0);
}

static void test_answers(void **state)
{
	struct gc_error err;
	char *jwt;

	(void)state;
	runner_env();
	/* a refusal: the job's token is not valid, nothing to retry */
	srv.answer = ANSWER_FORBIDDEN;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "refused the request (HTTP 403)"));
	assert_int_equal(srv.calls, 1);
	/* the URL is named without its query */
	assert_non_null(strstr(err.message, "/_apis/distributedtask/idtoken'"));
	assert_null(strstr(err.message, "api-version"));
	/* a wrong request token is the service's 401 */
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "another-job");
	srv.answer = ANSWER_OK;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "(HTTP 401)"));
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", REQUEST_TOKEN);

	/* 5xx is retried, on the fake clock */
	srv.calls = 0;
	srv.answer = ANSWER_5XX;
	srv.fail_first = 2;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), 0);
	gc_oidc_token_free(jwt);
	assert_int_equal(srv.calls, 3);
	/* at most one pause per retry, on the fake clock (full jitter may draw 0 ms, which
	 * sleeps not at all) */
	assert_true(fc.sleeps <= 2);
	srv.calls = 0;
	srv.fail_first = 100;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_int_equal(srv.calls, 3);
	assert_non_null(strstr(err.message, "HTTP 503"));

	/* answers without a token */
	srv.answer = ANSWER_NOT_JSON;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "without a token"));
	srv.answer = ANSWER_NO_VALUE;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	srv.answer = ANSWER_NOT_JWT;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_non_null(strstr(err.message, "not a JWT"));
	/* an answer past the cap is cut off, not read */
	srv.answer = ANSWER_HUGE;
	assert_int_equal(fetch("sts.aliyuncs.com", &jwt, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_null(jwt);
}

static void test_names(void **state)
{
	char name[GC_OIDC_SESSION_MAX + 1];

	(void)state;
	assert_string_equal(gc_provider_by_name("aws")->facts->oidc_audience, "sts.amazonaws.com");
	assert_string_equal(gc_provider_by_name("alibaba")->facts->oidc_audience,
			    "sts.aliyuncs.com");
	assert_string_equal(gc_provider_by_name("tencent")->facts->oidc_audience,
			    "sts.cloud.tencent.com");
	assert_false(gc_oidc_in_actions(&t.env));
	set_env("GITHUB_ACTIONS", "1");
	assert_false(gc_oidc_in_actions(&t.env));
	set_env("GITHUB_ACTIONS", "true");
	assert_true(gc_oidc_in_actions(&t.env));
	assert_false(gc_oidc_available(&t.env));
	runner_env();
	assert_true(gc_oidc_available(&t.env));

	/* named after the run where there is one, so the cloud's audit log says which */
	gc_oidc_session_name(name, &t.env, 1800000000);
	assert_string_equal(name, "gpucluster-1800000000");
	set_env("GITHUB_RUN_ID", "9876543210");
	gc_oidc_session_name(name, &t.env, 1800000000);
	assert_string_equal(name, "gpucluster-9876543210");
	set_env("GITHUB_RUN_ATTEMPT", "2");
	gc_oidc_session_name(name, &t.env, 1800000000);
	assert_string_equal(name, "gpucluster-9876543210-2");
	/* what is not a number does not get into a name the clouds check */
	set_env("GITHUB_RUN_ID", "12;rm -rf");
	gc_oidc_session_name(name, &t.env, 1800000000);
	assert_string_equal(name, "gpucluster-1800000000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_variables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
