/*
 * cvm.c: the Tencent Cloud API 3.0 frontend: CVM 2017-03-12 and the VPC security-group
 * actions (also 2017-03-12) on one port, routed by the X-TC-Action name.
 *
 * A request is a JSON POST (Content-Type application/json) or a GET whose query holds
 * the parameters flattened with 0-based indexes (InstanceIds.0=...). It is verified with
 * TC3-HMAC-SHA256 (WIRE.md 3.2): the Host as received first, then without the port (an
 * SDK pointed at 127.0.0.1:PORT may sign either), the service taken from the credential
 * scope; X-TC-Timestamp within 5 minutes. The body is then checked against the action's
 * schema, faults are consulted and the action runs with the world locked. Every answer,
 * errors included, is HTTP 200 with a {"Response":{...}} document.
 *
 * STS 2018-08-13 (sts.c) shares the port, picked by the version the request names: its
 * AssumeRoleWithWebIdentity comes unsigned, as the SDKs send it, and the temporary keys
 * it issues sign requests to every product here with their X-TC-Token.
 *
 * Pure function of (sim, request) apart from the world and the faults (thread-safe);
 * called from the server's connection threads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/tencent/tc3.h"
#include "sim/catalog.h"
#include "sim/tencent/cvm.h"

#define TC_VERSION	"2017-03-12"
#define TC_WINDOW_S	300
#define TC_CONTENT_TYPE "application/json"

static void render(struct tc_call *c, json_t *response)
{
	json_t *doc;
	char *text;

	json_object_set_new(response, "RequestId", json_string(c->request_id));
	doc = json_pack("{s:o}", "Response", response);
	text = json_dumps(doc, JSON_COMPACT);
	gc_buf_reset(&c->resp->body);
	(void)gc_buf_addstr(&c->resp->body, text);
	free(text);
	json_decref(doc);
	c->resp->status = 200;
	c->resp->content_type = TC_CONTENT_TYPE;
}

int tc_fail(struct tc_call *c, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (c->failed)
		return -1;
	c->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	render(c, json_pack("{s:{s:s, s:s}}", "Error", "Code", code, "Message", msg));
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

/* --- body access ---------------------------------------------------------------------- */

json_t *tc_get(const struct tc_call *c, const char *path)
{
	json_t *cur = c->body;
	char key[128];

	while (cur && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		if (len >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		cur = json_object_get(cur, key);
		path = dot ? dot + 1 : path + len;
	}
	return cur;
}

const char *tc_str(const struct tc_call *c, const char *path)
{
	return json_string_value(tc_get(c, path));
}

int tc_need_str(struct tc_call *c, const char *path, const char **out)
{
	const char *v = tc_str(c, path);

	if (!v || !*v)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `%s`.", path);
	*out = v;
	return 0;
}

int tc_int(struct tc_call *c, const char *path, int64_t min, int64_t max, int64_t def, int64_t *out)
{
	json_t *v = tc_get(c, path);

	if (!v) {
		*out = def;
		return 0;
	}
	json_int_t n = json_integer_value(v);
	if (n < min || n > max)
		return tc_fail(c, "InvalidParameterValue.Range",
			       "The value of parameter `%s` (%lld) is out of range %lld..%lld.",
			       path, (long long)n, (long long)min, (long long)max);
	*out = n;
	return 0;
}

bool tc_bool(const struct tc_call *c, const char *path)
{
	return json_is_true(tc_get(c, path));
}

/* --- filters and paging --------------------------------------------------------------- */

int tc_check_filters(struct tc_call *c, const char *const *allowed, size_t max_filters,
		     size_t max_values)
{
	json_t *filters = tc_get(c, "Filters"), *f;
	size_t i;

	if (!filters)
		return 0;
	if (json_array_size(filters) > max_filters)
		return tc_fail(c, "InvalidParameterValue.LimitExceeded",
			       "At most %zu Filters are allowed.", max_filters);
	json_array_foreach(filters, i, f)
	{
		const char *name = json_string_value(json_object_get(f, "Name"));
		json_t *values = json_object_get(f, "Values");
		bool ok = false;
		if (!name || !values)
			return tc_fail(
				c, "MissingParameter",
				"The request is missing a required parameter `Filters.%zu.%s`.", i,
				name ? "Values" : "Name");
		for (const char *const *a = allowed; *a; a++)
			if (!strcmp(*a, name) ||
			    (!strcmp(*a, "tag:") && gc_starts_with(name, "tag:")))
				ok = true;
		if (!ok)
			return tc_fail(c, "InvalidFilter", "The filter `%s` is not supported.",
				       name);
		if (json_array_size(values) > max_values)
			return tc_fail(c, "InvalidFilterValue.LimitExceeded",
				       "Filter `%s` has more than %zu values.", name, max_values);
	}
	return 0;
}

static bool values_contain(json_t *values, const char *value)
{
	size_t i;
	json_t *v;

	json_array_foreach(values, i, v)
	{
		if (!strcmp(json_string_value(v), value))
			return true;
	}
	return false;
}

bool tc_filter_ok(const struct tc_call *c, const char *name, const char *value)
{
	json_t *filters = tc_get(c, "Filters"), *f;
	size_t i;

	json_array_foreach(filters, i, f)
	{
		if (strcmp(json_string_value(json_object_get(f, "Name")), name))
			continue;
		if (!value || !values_contain(json_object_get(f, "Values"), value))
			return false;
	}
	return true;
}

bool tc_filter_tags(const struct tc_call *c, const struct sim_tags *tags)
{
	json_t *filters = tc_get(c, "Filters"), *f;
	size_t i;

	json_array_foreach(filters, i, f)
	{
		const char *name = json_string_value(json_object_get(f, "Name"));
		json_t *values = json_object_get(f, "Values");
		if (gc_starts_with(name, "tag:")) {
			const char *v = sim_tags_get(tags, name + 4);
			if (!v || !values_contain(values, v))
				return false;
		} else if (!strcmp(name, "tag-key")) {
			bool any = false;
			for (size_t k = 0; k < tags->n; k++)
				any |= values_contain(values, tags->items[k].key);
			if (!any)
				return false;
		} else if (!strcmp(name, "tag-value")) {
			bool any = false;
			for (size_t k = 0; k < tags->n; k++)
				any |= values_contain(values, tags->items[k].value);
			if (!any)
				return false;
		}
	}
	return true;
}

int tc_paging(struct tc_call *c, int64_t def, int64_t max, int64_t *offset, int64_t *limit)
{
	if (tc_int(c, "Offset", 0, INT32_MAX, 0, offset) || tc_int(c, "Limit", 1, max, def, limit))
		return -1;
	return 0;
}

json_t *tc_tags_json(const struct sim_tags *t)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(arr,
				      json_pack("{s:s, s:s}", "Key", t->items[i].key, "Value",
						t->items[i].value));
	return arr;
}

void tc_tag_spec(const struct tc_call *c, const char *rtype, struct sim_tags *out)
{
	json_t *specs = tc_get(c, "TagSpecification"), *spec;
	size_t i;

	json_array_foreach(specs, i, spec)
	{
		const char *t = json_string_value(json_object_get(spec, "ResourceType"));
		json_t *tags = json_object_get(spec, "Tags"), *tag;
		size_t k;
		if (!t || strcmp(t, rtype))
			continue;
		json_array_foreach(tags, k, tag)
		{
			const char *key = json_string_value(json_object_get(tag, "Key"));
			const char *value = json_string_value(json_object_get(tag, "Value"));
			if (key)
				sim_tags_set(out, key, value ? value : "");
		}
	}
}

void tc_format_time(int64_t t, bool iso, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm)) {
		snprintf(out, 32, "1970-01-01T00:00:00Z");
		return;
	}
	strftime(out, 32, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S", &tm);
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int tc_parse_time(const char *s, int64_t *out)
{
	unsigned v[6] = { 0 };
	const char *p = s;
	int64_t offset = 0;

	/* YYYY-M(M)-D(D)[ T]h(h):mm:ss[Z]: the older docs write 2018-5-29 11:26:40 */
	for (int i = 0; i < 6; i++) {
		int digits = 0;
		while (*p >= '0' && *p <= '9' && digits < 4) {
			v[i] = v[i] * 10 + (unsigned)(*p++ - '0');
			digits++;
		}
		if (!digits)
			return -1;
		static const char seps[] = "--?::";
		if (i < 5) {
			if (i == 2) {
				if (*p == 'T')
					offset = 0;
				else if (*p == ' ')
					offset = -8 * 3600; /* Beijing time, UTC+8 */
				else
					return -1;
				p++;
			} else if (*p++ != seps[i]) {
				return -1;
			}
		}
	}
	if (offset == 0 && *p++ != 'Z')
		return -1;
	if (*p || v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 59)
		return -1;
	*out = days_from_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 + v[4] * 60 + v[5] + offset;
	return 0;
}

/* --- schema checking -------------------------------------------------------------------- */

/* In GET requests every leaf is a string: converts it to the schema's type in place. */
static json_t *coerce(json_t *v, enum tc_type type)
{
	const char *s = json_string_value(v);
	int64_t n;
	double d;

	if (!s)
		return NULL;
	switch (type) {
	case TC_INT: return gc_parse_i64(s, INT64_MIN, INT64_MAX, &n) ? NULL : json_integer(n);
	case TC_FLOAT: return gc_parse_double(s, &d) ? NULL : json_real(d);
	case TC_BOOL:
		return !strcmp(s, "true") ? json_true() : !strcmp(s, "false") ? json_false() : NULL;
	default: return NULL;
	}
}

static bool type_ok(json_t *v, enum tc_type type)
{
	switch (type) {
	case TC_STR: return json_is_string(v);
	case TC_INT: return json_is_integer(v);
	case TC_FLOAT: return json_is_number(v);
	case TC_BOOL: return json_is_boolean(v);
	case TC_OBJ: return json_is_object(v);
	case TC_ARR_STR:
	case TC_ARR_OBJ: return json_is_array(v);
	case TC_INTSTR: {
		int64_t n;
		return json_is_integer(v) ||
			(json_is_string(v) &&
			 !gc_parse_i64(json_string_value(v), 0, INT32_MAX, &n));
	}
	}
	return false;
}

static int check_object(struct tc_call *c, json_t *obj, const struct tc_field *schema,
			const char *prefix, bool from_query);

static int check_value(struct tc_call *c, json_t *parent, const char *key, json_t *v,
		       const struct tc_field *f, const char *path, bool from_query)
{
	if (from_query && !type_ok(v, f->type)) {
		json_t *nv = coerce(v, f->type);
		if (nv) {
			json_object_set_new(parent, key, nv);
			v = nv;
		}
	}
	if (!type_ok(v, f->type))
		return tc_fail(c, "InvalidParameter",
			       "The value type of parameter `%s` is not valid.", path);
	if (f->type == TC_INTSTR && json_is_string(v)) {
		int64_t n = 0;
		(void)gc_parse_i64(json_string_value(v), 0, INT32_MAX, &n);
		json_object_set_new(parent, key, json_integer(n));
	}
	if (f->type == TC_OBJ)
		return check_object(c, v, f->sub, path, from_query);
	if (f->type == TC_ARR_STR || f->type == TC_ARR_OBJ) {
		size_t i;
		json_t *item;
		char ipath[256];
		json_array_foreach(v, i, item)
		{
			if (snprintf(ipath, sizeof(ipath), "%s.%zu", path, i) >= (int)sizeof(ipath))
				return tc_fail(c, "InvalidParameter",
					       "The parameters nest too deep.");
			if (f->type == TC_ARR_STR && !json_is_string(item))
				return tc_fail(c, "InvalidParameter",
					       "The value type of parameter `%s` is not valid.",
					       ipath);
			if (f->type == TC_ARR_OBJ &&
			    (!json_is_object(item) ||
			     check_object(c, item, f->sub, ipath, from_query)))
				return json_is_object(item)
					? -1
					: tc_fail(c, "InvalidParameter",
						  "The value type of parameter `%s` is not valid.",
						  ipath);
		}
	}
	return 0;
}

static int check_object(struct tc_call *c, json_t *obj, const struct tc_field *schema,
			const char *prefix, bool from_query)
{
	const char *key;
	json_t *v;
	void *tmp;
	char path[256];

	json_object_foreach_safe(obj, tmp, key, v)
	{
		const struct tc_field *f = NULL;
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", key);
		for (const struct tc_field *s = schema; s && s->name; s++)
			if (!strcmp(s->name, key))
				f = s;
		if (!f)
			return tc_fail(c, "UnknownParameter",
				       "The parameter `%s` is not recognized.", path);
		if (json_is_null(v))
			continue;
		if (check_value(c, obj, key, v, f, path, from_query))
			return -1;
	}
	return 0;
}

/* --- GET: unflattening the query ---------------------------------------------------------- */

static bool is_index(const char *s, size_t len)
{
	if (!len || len > 4)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Sets name ("A.0.B") to value inside root, creating objects and arrays on the way. */
static int unflatten_one(json_t *root, const char *name, const char *value)
{
	json_t *cur = root;
	const char *p = name;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		char seg[128];
		json_t *next;
		if (!len || len >= sizeof(seg))
			return -1;
		memcpy(seg, p, len);
		seg[len] = '\0';
		bool next_is_index = dot && is_index(dot + 1, strcspn(dot + 1, "."));
		if (json_is_array(cur)) {
			if (!is_index(seg, len))
				return -1;
			size_t idx = (size_t)strtoul(seg, NULL, 10);
			if (idx > json_array_size(cur))
				return -1; /* indexes must come without gaps */
			if (!dot) {
				if (idx < json_array_size(cur))
					return -1;
				return json_array_append_new(cur, json_string(value));
			}
			if (idx == json_array_size(cur))
				json_array_append_new(cur,
						      next_is_index ? json_array() : json_object());
			next = json_array_get(cur, idx);
		} else {
			if (!dot) {
				if (json_object_get(cur, seg))
					return -1;
				return json_object_set_new(cur, seg, json_string(value));
			}
			next = json_object_get(cur, seg);
			if (!next) {
				next = next_is_index ? json_array() : json_object();
				json_object_set_new(cur, seg, next);
			}
		}
		if (json_is_string(next) || (next_is_index != json_is_array(next)))
			return -1;
		cur = next;
		p = dot + 1;
	}
}

/* The GET query as a JSON body; the v1 signing parameters are not the action's. */
static json_t *unflatten(const struct gc_params *q)
{
	static const char *const common[] = { "Action", "Version",  "Region",	 "Timestamp",
					      "Nonce",	"SecretId", "Signature", "SignatureMethod",
					      "Token",	"Language", NULL };
	json_t *root = json_object();

	for (size_t i = 0; q && i < q->n; i++) {
		bool skip = false;
		for (const char *const *k = common; *k; k++)
			skip |= !strcmp(*k, q->items[i].name);
		if (!skip && unflatten_one(root, q->items[i].name, q->items[i].value)) {
			json_decref(root);
			return NULL;
		}
	}
	return root;
}

/* --- authentication ------------------------------------------------------------------------ */

static int authenticate(struct tc_call *c, const struct gc_sign_request *sreq)
{
	const struct gc_params *h = c->req->headers;
	const char *authz = gc_params_get_ci(h, "authorization");
	const char *ts = gc_params_get_ci(h, "x-tc-timestamp");
	struct tc_auth auth;
	struct gc_sign_result dbg;
	struct gc_error err;
	char tmp[TC_STS_SECRET_MAX];
	const char *secret;
	int64_t t, now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s;
	int rc = -1;

	gc_error_init(&err);
	if (!authz)
		return tc_fail(c, "AuthFailure.InvalidAuthorization",
			       "The request has no Authorization header.");
	if (tc_parse_authorization(&auth, authz, &err))
		return tc_fail(c, "AuthFailure.InvalidAuthorization",
			       "Authorization header is malformed: %s.", err.message);
	gc_sign_result_init(&dbg);
	if (!ts) {
		tc_fail(c, "MissingParameter",
			"The request is missing a required parameter `X-TC-Timestamp`.");
		goto out;
	}
	if (gc_parse_i64(ts, 0, INT64_MAX / 2, &t)) {
		tc_fail(c, "InvalidParameterValue", "X-TC-Timestamp '%s' is not a Unix time.", ts);
		goto out;
	}
	if (t < now - TC_WINDOW_S || t > now + TC_WINDOW_S) {
		tc_fail(c, "AuthFailure.SignatureExpire",
			"Signature expired. Timestamp and server time cannot differ by more than five "
			"minutes (request %s, server %lld).",
			ts, (long long)now);
		goto out;
	}
	secret = sim_cred_secret(c->sim, SIM_TENCENT, auth.secret_id);
	c->intl = sim_cred_intl(c->sim, SIM_TENCENT, auth.secret_id);
	if (!secret) {
		/* temporary keys from STS, with the token they were issued with */
		const char *code = NULL;

		secret = tc_sts_secret(c->sim, auth.secret_id, gc_params_get_ci(h, "x-tc-token"),
				       now, tmp, &code);
		if (!secret && strcmp(code, "AuthFailure.TokenFailure") == 0) {
			tc_fail(c, code,
				"The X-TC-Token is not the one issued with the SecretId, "
				"or it has expired.");
			goto out;
		}
	}
	if (!secret) {
		tc_fail(c, "AuthFailure.SecretIdNotFound",
			"The SecretId is not found, please ensure that your SecretId is correct.");
		goto out;
	}
	rc = tc_verify(sreq, &auth, secret, &dbg, &err);
	if (rc) {
		struct gc_params bare = GC_PARAMS_INIT;
		if (sim_headers_without_port(h, &bare)) {
			struct gc_sign_request alt = *sreq;
			struct gc_sign_result dbg2;
			alt.headers = &bare;
			gc_sign_result_init(&dbg2);
			rc = tc_verify(&alt, &auth, secret, &dbg2, &err);
			gc_sign_result_release(&dbg2);
		}
		gc_params_release(&bare);
	}
	if (rc)
		tc_fail(c, "AuthFailure.SignatureFailure",
			"The provided credentials could not be validated. Please check your "
			"signature is correct. (server canonical request: %s)",
			dbg.canonical_request.data);
out:
	gc_sign_result_release(&dbg);
	tc_auth_release(&auth);
	return rc;
}

/* An STS action the SDKs send unsigned (SetSkipSign: "Authorization: SKIP"), the token in
 * the body being the proof. */
static bool unsigned_ok(const struct tc_call *c, const char *action)
{
	const char *authz = gc_params_get_ci(c->req->headers, "authorization");

	return authz && strcmp(authz, "SKIP") == 0 &&
		strcmp(action, "AssumeRoleWithWebIdentity") == 0;
}

/* --- dispatch ------------------------------------------------------------------------------- */

static const struct tc_action *find_action(const char *name, bool sts)
{
	for (const struct tc_action *a = tc_sts_actions; sts && a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	for (const struct tc_action *a = tc_tag_actions; sts && a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	if (sts)
		return NULL;
	for (const struct tc_action *a = tc_cvm_actions; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	for (const struct tc_action *a = tc_vpc_actions; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	for (const struct tc_action *a = tc_hpc_actions; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

static void fault_fail(struct tc_call *c, const struct sim_fault_hit *hit)
{
	switch (hit->kind) {
	case SIM_FAULT_THROTTLE:
		tc_fail(c, "RequestLimitExceeded",
			"Your current request times equals to `%s` in a second, which exceeds the "
			"frequency limit for this API. Please reduce the frequency of calls.",
			c->action);
		break;
	case SIM_FAULT_QUOTA:
		tc_fail(c, "LimitExceeded.InstanceQuota",
			"The remaining quota is insufficient to create the instances.");
		break;
	case SIM_FAULT_CAPACITY:
		tc_fail(c, "ResourceInsufficient.SpecifiedInstanceType",
			"The specified instance type is sold out.");
		break;
	case SIM_FAULT_5XX:
		tc_fail(c, "InternalError", "An internal error has occurred. Retry your request.");
		break;
	default: break;
	}
}

static int read_body(struct tc_call *c)
{
	const struct sim_req *req = c->req;
	const char *ctype = gc_params_get_ci(req->headers, "content-type");
	json_error_t jerr;

	if (!strcmp(req->method, "GET")) {
		c->body = unflatten(req->query);
		if (!c->body)
			return tc_fail(c, "InvalidParameter",
				       "The query parameters cannot be read as 0-based flattened "
				       "parameters.");
		return 0;
	}
	if (strcmp(req->method, "POST"))
		return tc_fail(c, "UnsupportedProtocol",
			       "HTTP(S) request protocol error; only GET and POST requests are "
			       "supported.");
	if (!ctype || strncasecmp(ctype, "application/json", 16))
		return tc_fail(c, "InvalidParameter",
			       "The POST body must be application/json (got '%s').",
			       ctype ? ctype : "none");
	if (req->body_len == 0) {
		c->body = json_object();
		return 0;
	}
	c->body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(c->body)) {
		json_decref(c->body);
		c->body = NULL;
		return tc_fail(c, "InvalidParameter", "The request body is not a JSON object: %s.",
			       jerr.text);
	}
	return 0;
}

static int process(struct tc_call *c)
{
	const struct sim_req *req = c->req;
	struct sim_resp *resp = c->resp;
	const struct gc_params *h = req->headers;
	const char *action = gc_params_get_ci(h, "x-tc-action");
	const char *version = gc_params_get_ci(h, "x-tc-version");
	const char *region = gc_params_get_ci(h, "x-tc-region");
	const struct tc_action *a;
	struct sim_fault_hit hit;
	bool sts;
	int rc;

	struct gc_sign_request sreq = {
		.method = req->method,
		.host = gc_params_get_ci(h, "host"),
		.path = req->path,
		.query = req->query,
		.query_string = req->query_string,
		.headers = h,
		.body = req->body,
		.body_len = req->body_len,
	};

	if (read_body(c))
		return -1;
	resp->log_params = json_deep_copy(c->body);
	if (!action)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `Action`.");
	snprintf(resp->action, sizeof(resp->action), "%s", action);
	if (!version)
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `Version`.");
	snprintf(resp->version, sizeof(resp->version), "%s", version);
	sts = strcmp(version, TC_STS_VERSION) == 0;
	if (!(sts && unsigned_ok(c, action)) && authenticate(c, &sreq))
		return -1;
	a = find_action(action, sts);
	if (!a)
		return tc_fail(c, "InvalidAction", "The action `%s` does not exist.", action);
	c->action = a->name;
	if (!sts && strcmp(version, TC_VERSION))
		return tc_fail(c, "NoSuchVersion", "The API version `%s` does not exist.", version);
	if (region) {
		if (!sim_catalog_region(SIM_TENCENT, region))
			return tc_fail(c, "UnsupportedRegion",
				       "The API does not support the region `%s`.", region);
		c->region = region;
	} else if (a->region_required) {
		return tc_fail(c, "MissingParameter",
			       "The request is missing a required parameter `Region`.");
	}
	if (check_object(c, c->body, a->schema, "", !strcmp(req->method, "GET")))
		return -1;

	sim_faults_check(c->sim->faults, SIM_TENCENT, a->name, 0, &hit);
	rc = sim_fault_before(resp, &hit);
	if (rc == 0) {
		sim_world_lock(c->sim->world);
		sim_world_tick(c->sim->world);
		rc = a->run(c) ? -1 : 0;
		sim_world_unlock(c->sim->world);
		/* after=1: the action took effect, the caller sees a failure */
		if (rc == 0)
			rc = sim_fault_after(resp, &hit);
	}
	if (rc > 0)
		fault_fail(c, &hit);
	return rc ? -1 : 0;
}

/* How the hostile modes imitate CVM (sim/hostile.h): no page token, errors in HTTP 200. */
static const struct sim_hostile_style cvm_hostile = {
	.content_type = TC_CONTENT_TYPE,
	.envelope = "Response",
	.error_status = 200,
	.error_code = "InvalidParameter",
	.wrong_document = "{\"Response\":{\"TotalCount\":1,\"KeyPairSet\":[{\"KeyId\":"
			  "\"skey-hostile1\",\"KeyName\":\"hostile\"}],\"RequestId\":"
			  "\"00000000-0000-4000-8000-000000000001\"}}",
	.wrong_document_keys = "{\"Response\":{\"TotalCount\":1,\"RegionSet\":[{\"Region\":"
			       "\"ap-guangzhou\",\"RegionState\":\"AVAILABLE\"}],\"RequestId\":"
			       "\"00000000-0000-4000-8000-000000000001\"}}",
};

void sim_cvm_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	struct tc_call call;

	memset(&call, 0, sizeof(call));
	call.sim = sim;
	call.req = req;
	call.resp = resp;
	sim_request_id(sim, false, call.request_id);
	if (process(&call) == 0) {
		json_t *out = call.out ? call.out : json_object();
		call.out = NULL;
		render(&call, out);
	}
	sim_hostile_answer(&cvm_hostile, resp->action, &resp->hostile, resp);
	json_decref(call.out);
	json_decref(call.body);
}

/* --- schemas both CVM and VPC use -------------------------------------------------------- */

const struct tc_field tc_filter_schema[] = {
	{ "Name", TC_STR, NULL },
	{ "Values", TC_ARR_STR, NULL },
	{ NULL, 0, NULL },
};
const struct tc_field tc_tag_schema[] = {
	{ "Key", TC_STR, NULL },
	{ "Value", TC_STR, NULL },
	{ NULL, 0, NULL },
};

/* --- the frontend's row ----------------------------------------------------------------- */

/*
 * Tencent's limits per action (the CVM API overview): RunInstances, TerminateInstances
 * and InquiryPriceRunInstances 10/s, DescribeInstances 40/s, everything else 20/s; a
 * bucket holds one second's worth.
 */
static void cvm_rate(const char *action, enum sim_bucket kind, struct sim_rate *out)
{
	(void)kind;
	if (!strcmp(action, "RunInstances") || !strcmp(action, "TerminateInstances") ||
	    !strcmp(action, "InquiryPriceRunInstances"))
		out->cap = out->refill = 10;
	else if (!strcmp(action, "DescribeInstances"))
		out->cap = out->refill = 40;
	else
		out->cap = out->refill = 20;
	snprintf(out->desc, sizeof(out->desc), "Tencent limit for %s (%llu/s)", action,
		 (unsigned long long)out->refill);
}

/* VM-0-5-ubuntu: what CVM's Ubuntu images name themselves, from the private address */
static void cvm_hostname(const struct sim_instance *inst, const char *ip, char *out, size_t size)
{
	unsigned a = 0, b = 0, c = 0, d = 0;

	(void)inst;
	if (sscanf(ip, "%u.%u.%u.%u", &a, &b, &c, &d) != 4)
		c = d = 0;
	snprintf(out, size, "VM-%u-%u-ubuntu", c, d);
}

const struct sim_frontend sim_frontend_tencent = {
	.name = "tencent",
	.title = "Tencent CVM",
	.endpoint = "CVM and VPC",
	.handle = sim_cvm_handle,
	.key_id = "AKIDgpuclustersim001",
	.secret = "gpucluster-sim-tencent-secret-000000",
	.catalog = &sim_tencent_offer,
	.audience = "sts.cloud.tencent.com",
	.states = { "PENDING", "RUNNING", "SHUTDOWN", "TERMINATING", "TERMINATED", "LAUNCH_FAILED",
		    "STOPPED" },
	.id_len = 8,
	.id_alphabet = "0123456789abcdefghijklmnopqrstuvwxyz",
	.instance_prefix = "ins-",
	.key_prefix = "skey-",
	.private_net = "10.0",
	.spot_reclaim_reason = "SPOT_RECLAIMED: the spot instance is reclaimed",
	.recycle_bin = true,
	.rate = cvm_rate,
	.buckets = 0,
	.kernels = { "5.15.0-113-generic", "6.8.0-41-generic" },
	.hostname = cvm_hostname,
};
