/*
 * github.c: the GitHub REST calls of the node-runner flow (see github.h).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "core/urlenc.h"
#include "sim/github.h"

#define GH_DOCS	       "https://docs.github.com/rest/actions/self-hosted-runners"
#define GH_TOKEN_TTL   3600
#define GH_MAX_TOKENS  64
#define GH_MAX_RUNNERS 64
#define GH_MAX_LABELS  8
#define GH_NAME_MAX    128

struct gh_token {
	char repo[GH_NAME_MAX];
	char token[32];
	time_t expires;
};

struct gh_runner {
	long id;
	char repo[GH_NAME_MAX];
	char name[GH_NAME_MAX];
	char labels[GH_MAX_LABELS][GH_NAME_MAX];
	size_t n_labels;
	bool online, ephemeral;
};

static pthread_mutex_t gh_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gh_token gh_tokens[GH_MAX_TOKENS];
static size_t gh_n_tokens;
static struct gh_runner gh_runners[GH_MAX_RUNNERS];
static size_t gh_n_runners;
static long gh_next_id = 1;

static void gh_message(struct sim_resp *resp, int status, const char *msg)
{
	sim_resp_json(resp, status,
		      json_pack("{s:s,s:s,s:s}", "message", msg, "documentation_url", GH_DOCS,
				"status",
				status == 401		? "401"
					: status == 403 ? "403"
							: "404"));
}

/* The API's bearer: 0 when it may manage runners, else the error already answered. */
static int gh_auth(const struct sim_req *req, struct sim_resp *resp)
{
	const char *a = gc_params_get_ci(req->headers, "Authorization");
	static const char *const prefixes[] = { "ghp_", "github_pat_", "ghs_", "gho_", "ghu_" };
	bool known = false;

	if (a && (gc_starts_with(a, "Bearer ") || gc_starts_with(a, "token ")))
		a = strchr(a, ' ') + 1;
	else
		a = NULL;
	if (!a || !*a) {
		gh_message(resp, 401, "Requires authentication");
		return -1;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		known |= gc_starts_with(a, prefixes[i]) && strlen(a) > strlen(prefixes[i]);
	if (!known) {
		gh_message(resp, 401, "Bad credentials");
		return -1;
	}
	if (strstr(a, "readonly")) {
		gh_message(resp, 403, "Resource not accessible by personal access token");
		return -1;
	}
	return 0;
}

static void gh_iso8601(time_t t, char out[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void gh_new_token(const char *repo, time_t now, struct sim_resp *resp)
{
	unsigned char rnd[14];
	char hex[29], when[32];
	struct gh_token *t;

	if (gc_random_bytes(rnd, sizeof(rnd)) != 0)
		memset(rnd, 0x5a, sizeof(rnd));
	gc_hex(rnd, sizeof(rnd), hex);
	for (char *c = hex; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	pthread_mutex_lock(&gh_lock);
	if (gh_n_tokens == GH_MAX_TOKENS) /* the oldest goes */
		memmove(gh_tokens, gh_tokens + 1, sizeof(gh_tokens[0]) * --gh_n_tokens);
	t = &gh_tokens[gh_n_tokens++];
	snprintf(t->repo, sizeof(t->repo), "%s", repo);
	snprintf(t->token, sizeof(t->token), "A%s", hex);
	t->expires = now + GH_TOKEN_TTL;
	gh_iso8601(t->expires, when);
	sim_resp_json(resp, 201, json_pack("{s:s,s:s}", "token", t->token, "expires_at", when));
	pthread_mutex_unlock(&gh_lock);
}

static json_t *gh_runner_json(const struct gh_runner *r)
{
	json_t *labels = json_array();

	for (size_t i = 0; i < r->n_labels; i++)
		json_array_append_new(labels,
				      json_pack("{s:I,s:s,s:s}", "id", (json_int_t)(i + 1), "name",
						r->labels[i], "type",
						i == 0 ? "read-only" : "custom"));
	return json_pack("{s:I,s:s,s:s,s:s,s:b,s:o}", "id", (json_int_t)r->id, "name", r->name,
			 "os", "linux", "status", r->online ? "online" : "offline", "busy", 0,
			 "labels", labels);
}

static void gh_list(const char *repo, struct sim_resp *resp)
{
	json_t *runners = json_array();

	pthread_mutex_lock(&gh_lock);
	for (size_t i = 0; i < gh_n_runners; i++)
		if (strcmp(gh_runners[i].repo, repo) == 0)
			json_array_append_new(runners, gh_runner_json(&gh_runners[i]));
	pthread_mutex_unlock(&gh_lock);
	sim_resp_json(resp, 200,
		      json_pack("{s:I,s:o}", "total_count", (json_int_t)json_array_size(runners),
				"runners", runners));
}

/* The runner id's index (repo NULL: any repository), or -1. Under gh_lock. */
static long gh_find(const char *repo, const char *id)
{
	char *end;
	long n = strtol(id, &end, 10);

	if (end == id || *end)
		return -1;
	for (size_t i = 0; i < gh_n_runners; i++)
		if (gh_runners[i].id == n && (!repo || strcmp(gh_runners[i].repo, repo) == 0))
			return (long)i;
	return -1;
}

static void gh_remove_at(long i)
{
	memmove(&gh_runners[i], &gh_runners[i + 1],
		sizeof(gh_runners[0]) * (gh_n_runners - (size_t)i - 1));
	gh_n_runners--;
}

static void gh_delete(const char *repo, const char *id, struct sim_resp *resp)
{
	long i;

	pthread_mutex_lock(&gh_lock);
	i = gh_find(repo, id);
	if (i >= 0)
		gh_remove_at(i);
	pthread_mutex_unlock(&gh_lock);
	if (i < 0) {
		gh_message(resp, 404, "Not Found");
		return;
	}
	resp->status = 204;
	resp->content_type = "application/json";
	gc_buf_reset(&resp->body);
}

/* POST /actions/runner-registration: config.sh with a registration token. */
static void gh_register(const struct sim_req *req, struct sim_resp *resp)
{
	const char *a = gc_params_get_ci(req->headers, "Authorization");
	json_t *body = json_loadb(req->body ? req->body : "", req->body_len, 0, NULL);
	const char *url = NULL, *name = NULL, *repo = NULL;
	json_t *labels = NULL;
	int ephemeral = 0;
	bool ok = false;
	struct gh_runner *r;

	if (body)
		json_unpack(body, "{s?s,s?s,s?o,s?b}", "url", &url, "name", &name, "labels",
			    &labels, "ephemeral", &ephemeral);
	/* the repository is the url's last two segments */
	if (url) {
		const char *s = url + strlen(url);
		int slashes = 0;

		while (s > url && slashes < 2)
			if (*--s == '/')
				slashes++;
		repo = slashes == 2 ? s + 1 : NULL;
	}
	a = a && gc_starts_with(a, "RemoteAuth ") ? a + strlen("RemoteAuth ") : NULL;
	pthread_mutex_lock(&gh_lock);
	for (size_t i = 0; a && repo && i < gh_n_tokens; i++)
		ok |= strcmp(gh_tokens[i].token, a) == 0 && strcmp(gh_tokens[i].repo, repo) == 0 &&
			gh_tokens[i].expires > req->now;
	if (!ok || !name || !*name || gh_n_runners == GH_MAX_RUNNERS) {
		pthread_mutex_unlock(&gh_lock);
		json_decref(body);
		gh_message(resp, 404, "Not Found");
		return;
	}
	/* --replace: a runner of the same name goes */
	for (size_t i = 0; i < gh_n_runners; i++)
		if (strcmp(gh_runners[i].repo, repo) == 0 && strcmp(gh_runners[i].name, name) == 0)
			gh_remove_at((long)i--);
	r = &gh_runners[gh_n_runners++];
	memset(r, 0, sizeof(*r));
	r->id = gh_next_id++;
	r->ephemeral = ephemeral;
	snprintf(r->repo, sizeof(r->repo), "%s", repo);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->labels[r->n_labels++], GH_NAME_MAX, "self-hosted");
	for (size_t i = 0; labels && i < json_array_size(labels) && r->n_labels < GH_MAX_LABELS;
	     i++) {
		const char *l = json_string_value(json_array_get(labels, i));
		if (l && *l && strcmp(l, "self-hosted") != 0)
			snprintf(r->labels[r->n_labels++], GH_NAME_MAX, "%s", l);
	}
	sim_resp_json(resp, 200, json_pack("{s:I,s:s}", "id", (json_int_t)r->id, "url", url));
	pthread_mutex_unlock(&gh_lock);
	json_decref(body);
}

/* POST /actions/runners/ID/online|job: run.sh started; a job ran. */
static void gh_event(const char *id, const char *event, struct sim_resp *resp)
{
	long i;

	pthread_mutex_lock(&gh_lock);
	i = gh_find(NULL, id);
	if (i >= 0 && strcmp(event, "online") == 0)
		gh_runners[i].online = true;
	else if (i >= 0 && gh_runners[i].ephemeral) /* it deregisters after its one job */
		gh_remove_at(i);
	pthread_mutex_unlock(&gh_lock);
	if (i < 0)
		gh_message(resp, 404, "Not Found");
	else
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
}

bool sim_github_handle(const struct sim_req *req, struct sim_resp *resp)
{
	const char *p = req->path, *m = req->method;
	char repo[GH_NAME_MAX], rest[GH_NAME_MAX], id[32], event[16];
	int n = 0;

	if (strcmp(p, "/actions/runner-registration") == 0 && strcmp(m, "POST") == 0) {
		gh_register(req, resp);
		return true;
	}
	if (sscanf(p, "/actions/runners/%31[0-9]/%15[a-z]%n", id, event, &n) == 2 && !p[n] &&
	    strcmp(m, "POST") == 0 && (strcmp(event, "online") == 0 || strcmp(event, "job") == 0)) {
		gh_event(id, event, resp);
		return true;
	}
	/* /repos/OWNER/REPO/actions/runners... */
	if (!gc_starts_with(p, "/repos/"))
		return false;
	{
		const char *o = p + strlen("/repos/"), *s1 = strchr(o, '/'),
			   *s2 = s1 ? strchr(s1 + 1, '/') : NULL;

		if (!s1 || !s2 || s1 == o || s2 == s1 + 1 || (size_t)(s2 - o) >= sizeof(repo) ||
		    strlen(s2) >= sizeof(rest))
			return false;
		memcpy(repo, o, (size_t)(s2 - o));
		repo[s2 - o] = '\0';
		snprintf(rest, sizeof(rest), "%s", s2);
	}
	if (strcmp(rest, "/actions/runners/registration-token") == 0 && strcmp(m, "POST") == 0) {
		if (gh_auth(req, resp) == 0)
			gh_new_token(repo, req->now, resp);
	} else if (strcmp(rest, "/actions/runners") == 0 && strcmp(m, "GET") == 0) {
		if (gh_auth(req, resp) == 0)
			gh_list(repo, resp);
	} else if (sscanf(rest, "/actions/runners/%31[0-9]%n", id, &n) == 1 && !rest[n] &&
		   strcmp(m, "DELETE") == 0) {
		if (gh_auth(req, resp) == 0)
			gh_delete(repo, id, resp);
	} else {
		gh_message(resp, 404, "Not Found");
	}
	return true;
}
