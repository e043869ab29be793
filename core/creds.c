/*
 * creds.c: the mechanics under the providers' credential chains (creds.h; the pieces:
 * docs/internals/credentials.md). Each chain decides its order and words its messages.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/creds.h"
#include "core/keygen.h"
#include "core/oidc.h"
#include "core/retry.h"
#include "core/str.h"

#define METADATA_MAX ((size_t)64 << 10)

void gc_creds_init(struct gc_creds *c)
{
	memset(c, 0, sizeof(*c));
}

void gc_creds_release(struct gc_creds *c)
{
	if (!c)
		return;
	free(c->id);
	gc_wipe_free(c->secret);
	gc_wipe_free(c->token);
	free(c->source);
	memset(c, 0, sizeof(*c));
}

void gc_creds_set(struct gc_creds *c, struct gc_log *log, const char *id, const char *secret,
		  const char *token, int64_t expiration, char *source)
{
	gc_creds_release(c);
	gc_log_add_secret(log, secret);
	gc_log_add_secret(log, token);
	c->id = gc_xstrdup(id);
	c->secret = gc_xstrdup(secret);
	c->token = token && *token ? gc_xstrdup(token) : NULL;
	c->expiration = expiration;
	c->source = source;
}

int gc_creds_finish(struct gc_creds *out, struct gc_creds *got, int rc,
		    const struct gc_creds_ctx *cx, const char *prefix)
{
	int ret = -1;

	if (rc == 0) {
		gc_log_debug(cx->log, "%s: credentials from %s", prefix, got->source);
		*out = *got;
		gc_creds_init(got);
		ret = 0;
	}
	gc_creds_release(got);
	return ret;
}

/* --- files ----------------------------------------------------------------------------- */

char *gc_creds_expand_home(const struct gc_spec_env *env, const char *path)
{
	const char *home = gc_spec_env_get(env, "HOME");

	if (home && (strcmp(path, "~") == 0 || gc_starts_with(path, "~/")))
		return gc_xasprintf("%s%s", home, path + 1);
	return gc_xstrdup(path);
}

char *gc_creds_home_file(const struct gc_spec_env *env, const char *var, const char *dflt,
			 char **shown)
{
	const char *set = var ? gc_spec_env_get(env, var) : NULL;
	const char *home = gc_spec_env_get(env, "HOME");

	if (set) {
		*shown = gc_xstrdup(set);
		return gc_creds_expand_home(env, set);
	}
	*shown = gc_xasprintf("~/%s", dflt);
	return home ? gc_xasprintf("%s/%s", home, dflt) : NULL;
}

int gc_creds_endpoint(char **out, const char *url, const char *from, struct gc_error *err)
{
	size_t n = strlen(url);

	if (!gc_starts_with(url, "http://") && !gc_starts_with(url, "https://"))
		return gc_error_set(err, GC_EINVALID,
				    "endpoint '%s' (from %s) is not an http:// or https:// URL",
				    url, from);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f || url[i] == '?' ||
		    url[i] == '#')
			return gc_error_set(err, GC_EINVALID,
					    "endpoint '%s' (from %s) holds a character an endpoint "
					    "cannot have",
					    url, from);
	while (n > 0 && url[n - 1] == '/')
		n--;
	if (n <= strlen(gc_starts_with(url, "https://") ? "https://" : "http://"))
		return gc_error_set(err, GC_EINVALID, "endpoint '%s' (from %s) has no host", url,
				    from);
	*out = gc_xstrndup(url, n);
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int gc_creds_read_file(char **out, const char *path, const char *name, size_t cap, bool token,
		       bool *found, struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(cap);
	size_t start = 0;
	int ret = -1;

	if (gc_buf_read_file(&b, path, name, found, err) != 0)
		goto out;
	if (found && !*found) {
		ret = 0;
		goto out;
	}
	while (token && b.len && is_blank(b.data[b.len - 1]))
		b.len--;
	while (token && start < b.len && is_blank(b.data[start]))
		start++;
	if (token && memchr(b.data + start, '\0', b.len - start)) {
		gc_error_set(err, GC_EINVALID, "'%s' holds a NUL byte", name ? name : path);
		goto out;
	}
	*out = gc_xstrndup(b.data + start, b.len - start);
	ret = 0;
out:
	gc_keypair_wipe_buf(&b); /* a key's or a token's bytes */
	return ret;
}

/* --- the instance metadata services -------------------------------------------------- */

/* The first line of b without trailing blanks, copied. */
static char *first_line(const struct gc_buf *b)
{
	size_t n = strcspn(b->data, "\r\n");

	while (n && (b->data[n - 1] == ' ' || b->data[n - 1] == '\t'))
		n--;
	return gc_xstrndup(b->data, n);
}

void gc_metadata_release(struct gc_metadata *m)
{
	gc_wipe_free(m->token_header);
	m->token_header = NULL;
}

int gc_metadata_request(const struct gc_metadata *m, const char *method, const char *path,
			const char *header, struct gc_http_response *res, struct gc_error *err)
{
	struct gc_retry_policy policy;
	struct gc_http_request req;
	char *url = gc_xasprintf("%s%s", m->base, path);
	const char *hdrs[2];
	size_t n = 0;
	int ret;

	if (header)
		hdrs[n++] = header;
	if (m->token_header)
		hdrs[n++] = m->token_header;
	policy = (struct gc_retry_policy){ .max_attempts = m->attempts, .clock = m->cx->clock };
	req = (struct gc_http_request){ .method = method,
					.url = url,
					.headers = hdrs,
					.n_headers = n,
					.connect_timeout_ms = m->timeout_ms,
					.timeout_ms = m->timeout_ms,
					.max_response = METADATA_MAX };
	ret = gc_http_perform_retried(m->cx->http, &req, res, &policy, err);
	free(url);
	return ret;
}

int gc_metadata_token(struct gc_metadata *m, const char *path, const char *ttl_header,
		      const char *token_name, int *status, struct gc_error *err)
{
	struct gc_http_response res;
	char *token;

	if (gc_metadata_request(m, "PUT", path, ttl_header, &res, err) != 0)
		return -1;
	*status = res.status;
	if (res.status != 200 || res.body.len == 0) {
		gc_http_response_release(&res);
		return 1;
	}
	token = first_line(&res.body);
	gc_http_response_release(&res);
	gc_log_add_secret(m->cx->log, token);
	gc_metadata_release(m);
	m->token_header = gc_xasprintf("%s: %s", token_name, token);
	gc_wipe_free(token);
	return 0;
}

int gc_metadata_role(const struct gc_metadata *m, const char *dir, const char *no_role, bool first,
		     bool (*role_ok)(const char *), char **role, char **why)
{
	struct gc_http_response res;
	struct gc_error e;
	char *r;

	gc_error_init(&e);
	if (gc_metadata_request(m, "GET", dir, NULL, &res, &e) != 0) {
		*why = first ? gc_xasprintf("no answer from %s: %s", m->base, e.message)
			     : gc_xasprintf("%s failed: %s", m->base, e.message);
		return 1;
	}
	if (res.status == 404)
		*why = gc_xasprintf("%s (%s)", no_role, m->base);
	else if (res.status != 200)
		*why = gc_xasprintf("%s answered HTTP %d for the role name", m->base, res.status);
	if (res.status != 200) {
		gc_http_response_release(&res);
		return 1;
	}
	r = first_line(&res.body);
	gc_http_response_release(&res);
	if (!role_ok(r)) {
		free(r);
		*why = gc_xasprintf("%s gave no usable role name", m->base);
		return 1;
	}
	*role = r;
	return 0;
}

bool gc_creds_role_name_ok(const char *s)
{
	return *s &&
		strspn(s,
		       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		       "0123456789+=,.@_-") == strlen(s);
}

bool gc_creds_region_ok(const char *r)
{
	size_t n = r ? strlen(r) : 0;

	return n > 0 && n <= 32 && r[0] != '-' && r[n - 1] != '-' &&
		strspn(r, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

/* --- GitHub Actions, the sources tried, profile loops, STS retries ------------------------ */

int gc_creds_actions_token(char **token, const struct gc_creds_ctx *cx, const char *audience,
			   const char *dflt, const char *what, struct gc_error *err)
{
	struct gc_oidc_request req = { .audience = audience && *audience ? audience : dflt,
				       .env = cx->env,
				       .http = cx->http,
				       .log = cx->log,
				       .clock = cx->clock };

	if (gc_oidc_fetch(token, &req, err) != 0)
		return gc_error_prefix(err, "cannot %s", what);
	return 0;
}

void gc_creds_tried_init(struct gc_creds_tried *t)
{
	gc_buf_init(&t->buf, GC_ERROR_MSG_MAX * 4);
}

void gc_creds_tried_release(struct gc_creds_tried *t)
{
	gc_buf_release(&t->buf);
}

static void __attribute__((format(printf, 2, 0)))
tried_vadd(struct gc_creds_tried *t, const char *fmt, va_list ap)
{
	if (t->buf.len)
		gc_buf_addstr(&t->buf, ", ");
	gc_buf_vaddf(&t->buf, fmt, ap);
}

void gc_creds_tried_add(struct gc_creds_tried *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tried_vadd(t, fmt, ap);
	va_end(ap);
}

bool gc_creds_tried_stop(struct gc_creds_tried *t, int rc, char **why, const char *fmt, ...)
{
	va_list ap;

	if (rc <= 0)
		return true;
	va_start(ap, fmt);
	tried_vadd(t, fmt, ap);
	va_end(ap);
	gc_buf_addf(&t->buf, " (%s)", *why);
	free(*why);
	*why = NULL;
	return false;
}

bool gc_creds_spec_oidc(struct gc_creds_tried *t, const struct gc_spec_oidc *oidc,
			const struct gc_spec_env *env)
{
	if (!oidc || !oidc->role)
		return false;
	if (gc_oidc_in_actions(env))
		return true;
	gc_creds_tried_add(t, "the spec's provider.oidc (GITHUB_ACTIONS is not true)");
	return false;
}

int gc_creds_tried_fail(const struct gc_creds_tried *t, const char *cloud, struct gc_error *err)
{
	return gc_error_set(err, GC_EAUTH, "no %s credentials found; tried: %s", cloud,
			    t->buf.data);
}

int gc_creds_stack_push(struct gc_creds_stack *s, const char *name, const char *file,
			struct gc_error *err)
{
	for (size_t i = 0; i < s->depth; i++) {
		struct gc_buf loop;

		if (strcmp(s->names[i], name) != 0)
			continue;
		gc_buf_init(&loop, GC_ERROR_MSG_MAX);
		for (size_t k = i; k < s->depth; k++)
			gc_buf_addf(&loop, "'%s' -> ", s->names[k]);
		gc_buf_addf(&loop, "'%s'", name);
		gc_error_set(err, GC_EINVALID, "source_profile loop%s%s: %s", file ? " in " : "",
			     file ? file : "", loop.data);
		gc_buf_release(&loop);
		return -1;
	}
	if (s->depth == GC_CREDS_MAX_HOPS)
		return gc_error_set(err, GC_EINVALID,
				    "profile '%s': more than %d profiles in a source_profile chain",
				    name, GC_CREDS_MAX_HOPS);
	s->names[s->depth++] = name;
	return 0;
}

int gc_creds_retried(const struct gc_creds_ctx *cx, const char *log_what,
		     int (*attempt)(void *arg, bool *last, struct gc_error *err), void *arg,
		     struct gc_error *err)
{
	struct gc_retry_policy policy = { .clock = cx->clock };
	struct gc_retry r;

	gc_retry_begin(&r, &policy);
	for (;;) {
		bool last = false;

		if (attempt(arg, &last, err) == 0) {
			gc_retry_succeeded(&r);
			return 0;
		}
		if (last || gc_retry_pause(&r, err, -1) != 0)
			return -1;
		gc_log_debug(cx->log, "%s: %s", log_what, err->message);
	}
}
