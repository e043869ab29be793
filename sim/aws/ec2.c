/*
 * ec2.c: the EC2 Query API, version 2016-11-15, as gpucluster-sim speaks it (WIRE.md §1),
 * and the AWS port's entry point (aws.h routes STS and the Price List from here).
 *
 * One request: the parameters come from the form body (POST, '+' is a space) and the
 * URL query; the SigV4 Authorization header is verified with the project's own verifier
 * (sim_aws_verify); the scope gives the region. Then the action's table of allowed
 * parameter names is enforced (UnknownParameter), the faults are consulted, and the
 * action (ec2-instances.c, ec2-resources.c, ec2-catalog.c) runs with the world locked.
 * Errors are EC2's XML error document with EC2's codes and HTTP statuses; success
 * documents carry the 2016-11-15 namespace. This file also holds the helpers the actions
 * share (ec2.h) and the AWS row of the frontend table.
 *
 * A pure function of (sim, request); safe from any connection thread.
 */
#include <libxml/xmlwriter.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/aws/aws.h"
#include "sim/aws/ec2.h"
#include "sim/catalog.h"

/* --- responses ------------------------------------------------------------------------ */

int ec2_fail(struct ec2 *c, int status, const char *code, const char *fmt, ...)
{
	xmlTextWriterPtr w;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sim_aws_xml_discard(&c->x);
	sim_aws_xml_start(&c->x);
	w = c->x.w;
	xmlTextWriterStartElement(w, BAD_CAST "Response");
	xmlTextWriterStartElement(w, BAD_CAST "Errors");
	xmlTextWriterStartElement(w, BAD_CAST "Error");
	xmlTextWriterWriteElement(w, BAD_CAST "Code", BAD_CAST code);
	xmlTextWriterWriteElement(w, BAD_CAST "Message", BAD_CAST msg);
	xmlTextWriterEndElement(w);
	xmlTextWriterEndElement(w);
	xmlTextWriterWriteElement(w, BAD_CAST "RequestID", BAD_CAST c->rid);
	sim_aws_xml_send(&c->x, c->resp, status);
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

int ec2_bad_value(struct ec2 *c, const char *name, const char *value)
{
	return EC2_FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for %s", value, name);
}

void ec2_begin(struct ec2 *c)
{
	char root[96];

	snprintf(root, sizeof(root), "%sResponse", c->action);
	sim_aws_xml_start(&c->x);
	xmlTextWriterStartElement(c->x.w, BAD_CAST root);
	xmlTextWriterWriteAttribute(c->x.w, BAD_CAST "xmlns", BAD_CAST EC2_XMLNS);
	xmlTextWriterWriteElement(c->x.w, BAD_CAST "requestId", BAD_CAST c->rid);
}

int ec2_finish(struct ec2 *c)
{
	sim_aws_xml_send(&c->x, c->resp, 200);
	return 0;
}

void ec2_open(struct ec2 *c, const char *name)
{
	xmlTextWriterStartElement(c->x.w, BAD_CAST name);
}

void ec2_close(struct ec2 *c)
{
	xmlTextWriterEndElement(c->x.w);
}

void ec2_el(struct ec2 *c, const char *name, const char *text)
{
	xmlTextWriterWriteElement(c->x.w, BAD_CAST name, BAD_CAST(text ? text : ""));
}

void ec2_elf(struct ec2 *c, const char *name, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ec2_el(c, name, text);
}

void ec2_write_tags(struct ec2 *c, const struct sim_tags *t)
{
	ec2_open(c, "tagSet");
	for (size_t i = 0; i < t->n; i++) {
		ec2_open(c, "item");
		ec2_el(c, "key", t->items[i].key);
		ec2_el(c, "value", t->items[i].value);
		ec2_close(c);
	}
	ec2_close(c);
}

void ec2_iso_time(int64_t wall, char out[32])
{
	time_t t = (time_t)wall;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

/* --- parameters ----------------------------------------------------------------------- */

const char *ec2_param(const struct ec2 *c, const char *name)
{
	return gc_params_get(&c->p, name);
}

const char *ec2_paramf(const struct ec2 *c, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return ec2_param(c, name);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

size_t ec2_indexes(const struct ec2 *c, const char *prefix, unsigned **out)
{
	size_t plen = strlen(prefix), n = 0;
	unsigned *idx = gc_xcalloc(c->p.n + 1, sizeof(*idx));

	for (size_t i = 0; i < c->p.n; i++) {
		const char *name = c->p.items[i].name, *s;
		unsigned long v = 0;
		bool dup = false;

		if (strncmp(name, prefix, plen) != 0 || name[plen] != '.')
			continue;
		s = name + plen + 1;
		if (*s < '1' || *s > '9')
			continue;
		while (*s >= '0' && *s <= '9' && v <= EC2_MAX_INDEX)
			v = v * 10 + (unsigned long)(*s++ - '0');
		if ((*s != '\0' && *s != '.') || v > EC2_MAX_INDEX)
			continue;
		for (size_t k = 0; k < n; k++)
			dup = dup || idx[k] == v;
		if (!dup)
			idx[n++] = (unsigned)v;
	}
	qsort(idx, n, sizeof(*idx), cmp_uint);
	*out = idx;
	return n;
}

size_t ec2_list(const struct ec2 *c, const char *prefix, const char ***out)
{
	unsigned *idx;
	size_t n = ec2_indexes(c, prefix, &idx), k = 0;
	const char **v = gc_xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		const char *val = ec2_paramf(c, "%s.%u", prefix, idx[i]);
		if (val)
			v[k++] = val;
	}
	free(idx);
	*out = v;
	return k;
}

int ec2_bool(struct ec2 *c, const char *name, bool def, bool *out)
{
	const char *v = ec2_param(c, name);

	*out = def;
	if (!v)
		return 0;
	if (strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0)
		*out = false;
	else
		return ec2_bad_value(c, name, v);
	return 0;
}

int ec2_int(struct ec2 *c, const char *name, int64_t min, int64_t max, int64_t *out, bool *present)
{
	const char *v = ec2_param(c, name);

	if (present)
		*present = v != NULL;
	if (!v)
		return 0;
	if (gc_parse_i64(v, INT64_MIN, INT64_MAX, out) != 0)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Invalid value '%s' for %s: expected an integer", v, name);
	if (*out < min || *out > max)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Value (%s) for parameter %s is invalid. Expected a value from "
				   "%lld to %lld",
				   v, name, (long long)min, (long long)max);
	return 0;
}

int ec2_require(struct ec2 *c, const char *name, const char **out)
{
	*out = ec2_param(c, name);
	if (!*out || !**out)
		return EC2_FAIL400(c, "MissingParameter",
				   "The request must contain the parameter %s", name);
	return 0;
}

int ec2_one_of(struct ec2 *c, const char *name, const char *const *allowed)
{
	const char *v = ec2_param(c, name);

	if (!v)
		return 0;
	for (const char *const *a = allowed; *a; a++)
		if (strcmp(v, *a) == 0)
			return 0;
	return ec2_bad_value(c, name, v);
}

/* '*' any run, '?' one character: the wildcards every EC2 filter value allows; a
 * backslash makes the next '*', '?' or '\\' literal. */
bool ec2_wild(const char *pat, const char *s)
{
	const char *star = NULL, *mark = NULL;

	while (*s) {
		if (*pat == '\\' && (pat[1] == '*' || pat[1] == '?' || pat[1] == '\\') &&
		    pat[1] == *s) {
			pat += 2;
			s++;
		} else if (*pat == '\\' && (pat[1] == '*' || pat[1] == '?' || pat[1] == '\\')) {
			if (!star)
				return false;
			pat = star + 1;
			s = ++mark;
		} else if (*pat == '?' || *pat == *s) {
			pat++;
			s++;
		} else if (*pat == '*') {
			star = pat++;
			mark = s;
		} else if (star) {
			pat = star + 1;
			s = ++mark;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

bool ec2_id_ok(const char *id, const char *prefix)
{
	size_t plen = strlen(prefix), n;

	if (strncmp(id, prefix, plen) != 0)
		return false;
	n = strlen(id + plen);
	if (n != 8 && n != 17)
		return false;
	for (const char *s = id + plen; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* --- filters -------------------------------------------------------------------------- */

void ec2_filters_release(struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->f[i].values);
	free(fs->f);
	fs->f = NULL;
	fs->n = 0;
}

int ec2_get_filters(struct ec2 *c, const char *const *known, struct ec2_filters *out)
{
	unsigned *idx;
	size_t n = ec2_indexes(c, "Filter", &idx);

	out->f = gc_xcalloc(n + 1, sizeof(*out->f));
	out->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct ec2_filter *f = &out->f[out->n];
		char prefix[64];
		bool ok = false;

		f->name = ec2_paramf(c, "Filter.%u.Name", idx[i]);
		if (!f->name) {
			free(idx);
			return EC2_FAIL400(c, "MissingParameter",
					   "The request must contain the parameter Filter.%u.Name",
					   idx[i]);
		}
		for (const char *const *k = known; *k && !ok; k++) {
			size_t kl = strlen(*k);
			ok = (*k)[kl - 1] == ':' ? strncmp(f->name, *k, kl) == 0 && f->name[kl]
						 : strcmp(f->name, *k) == 0;
		}
		if (!ok) {
			free(idx);
			return EC2_FAIL400(c, "InvalidParameterValue", "The filter '%s' is invalid",
					   f->name);
		}
		snprintf(prefix, sizeof(prefix), "Filter.%u.Value", idx[i]);
		f->n = ec2_list(c, prefix, &f->values);
		out->n++;
	}
	free(idx);
	return 0;
}

bool ec2_any_value(const struct ec2_filter *f, const char *s)
{
	for (size_t i = 0; i < f->n; i++)
		if (s && ec2_wild(f->values[i], s))
			return true;
	return false;
}

bool ec2_tag_filter(const struct ec2_filter *f, const struct sim_tags *t)
{
	if (strncmp(f->name, "tag:", 4) == 0)
		return ec2_any_value(f, sim_tags_get(t, f->name + 4));
	for (size_t i = 0; i < t->n; i++)
		if (ec2_any_value(f,
				  strcmp(f->name, "tag-key") == 0 ? t->items[i].key
								  : t->items[i].value))
			return true;
	return false;
}

bool ec2_is_tag_filter(const char *name)
{
	return strncmp(name, "tag:", 4) == 0 || strcmp(name, "tag-key") == 0 ||
		strcmp(name, "tag-value") == 0;
}

/* --- paging --------------------------------------------------------------------------- */

static void make_token(char kind, uint64_t pos, char out[64])
{
	char text[48], h[GC_SHORTHASH_LEN + 1];
	int n = snprintf(text, sizeof(text), "ec2:%c:%llu", kind, (unsigned long long)pos);

	gc_shorthash(text, (size_t)n, h);
	snprintf(out, 64, "sim1%c%llu.%s", kind, (unsigned long long)pos, h);
}

void ec2_next_token(struct ec2 *c, char kind, uint64_t pos)
{
	char tok[64];

	make_token(kind, pos, tok);
	ec2_el(c, "nextToken", tok);
}

int ec2_parse_token(struct ec2 *c, char kind, uint64_t *pos)
{
	const char *t = ec2_param(c, "NextToken");
	char expect[64];
	const char *dot;
	char num[24];
	uint64_t v;

	*pos = 0;
	if (!t || !*t || sim_hostile_token(t))
		return 0;
	if (strncmp(t, "sim1", 4) != 0 || t[4] != kind || !(dot = strchr(t + 5, '.')) ||
	    (size_t)(dot - (t + 5)) >= sizeof(num))
		goto bad;
	memcpy(num, t + 5, (size_t)(dot - (t + 5)));
	num[dot - (t + 5)] = '\0';
	if (gc_parse_u64(num, UINT64_MAX, &v) != 0)
		goto bad;
	make_token(kind, v, expect);
	if (strcmp(expect, t) != 0)
		goto bad;
	*pos = v;
	return 0;
bad:
	return EC2_FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for NextToken", t);
}

/* --- tag specifications --------------------------------------------------------------- */

int ec2_check_tag_key(struct ec2 *c, const char *key)
{
	if (!key || !*key)
		return EC2_FAIL400(c, "InvalidParameterValue", "Tag key must not be empty");
	if (strlen(key) > 128)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Tag key exceeds the maximum length of 128 characters");
	if (strncmp(key, "aws:", 4) == 0)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Tag keys starting with 'aws:' are reserved for internal use");
	return 0;
}

int ec2_read_tags(struct ec2 *c, const char *prefix, struct sim_tags *t)
{
	unsigned *idx;
	size_t n = ec2_indexes(c, prefix, &idx);

	for (size_t i = 0; i < n; i++) {
		const char *k = ec2_paramf(c, "%s.%u.Key", prefix, idx[i]);
		const char *v = ec2_paramf(c, "%s.%u.Value", prefix, idx[i]);
		if (ec2_check_tag_key(c, k) != 0) {
			free(idx);
			return -1;
		}
		if (v && strlen(v) > 256) {
			free(idx);
			return EC2_FAIL400(
				c, "InvalidParameterValue",
				"Tag value exceeds the maximum length of 256 characters");
		}
		sim_tags_set(t, k, v ? v : "");
	}
	free(idx);
	if (t->n > EC2_MAX_TAGS)
		return EC2_FAIL400(c, "TagLimitExceeded",
				   "The maximum number of tags (%d) has been exceeded",
				   EC2_MAX_TAGS);
	return 0;
}

int ec2_tag_specs(struct ec2 *c, const char *const *allowed, const char *want, struct sim_tags *out)
{
	unsigned *idx;
	size_t n = ec2_indexes(c, "TagSpecification", &idx);
	int ret = 0;

	for (size_t i = 0; i < n && ret == 0; i++) {
		const char *rt = ec2_paramf(c, "TagSpecification.%u.ResourceType", idx[i]);
		char prefix[64];
		bool ok = false;
		struct sim_tags tmp = { 0 };

		if (!rt) {
			ret = EC2_FAIL400(c, "MissingParameter",
					  "The request must contain the parameter "
					  "TagSpecification.%u.ResourceType",
					  idx[i]);
			break;
		}
		for (const char *const *a = allowed; *a; a++)
			ok = ok || strcmp(*a, rt) == 0;
		if (!ok) {
			ret = EC2_FAIL400(
				c, "InvalidParameterValue",
				"'%s' is not a valid taggable resource type for this operation.",
				rt);
			break;
		}
		snprintf(prefix, sizeof(prefix), "TagSpecification.%u.Tag", idx[i]);
		ret = ec2_read_tags(c, prefix, strcmp(rt, want) == 0 ? out : &tmp);
		sim_tags_release(&tmp);
	}
	free(idx);
	return ret;
}

int ec2_max_results(struct ec2 *c, int64_t min, int64_t max, int64_t *out, bool *present)
{
	const char *v = ec2_param(c, "MaxResults");

	*present = v != NULL;
	*out = max;
	if (!v)
		return 0;
	if (gc_parse_i64(v, INT64_MIN, INT64_MAX, out) != 0 || *out < min || *out > max)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Value ( %s ) for parameter maxResults is invalid. Expecting a "
				   "value between %lld and %lld.",
				   v, (long long)min, (long long)max);
	return 0;
}

/* --- the action table ----------------------------------------------------------------- */

/* The action named name, or NULL. */
static const struct ec2_action *find_action(const char *name)
{
	static const struct ec2_action *const tables[] = {
		ec2_instance_actions, ec2_resource_actions,  ec2_catalog_actions,
		ec2_vpc_actions,      ec2_placement_actions, ec2_address_actions,
	};

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ec2_action *a = tables[t]; a->name; a++)
			if (strcmp(a->name, name) == 0)
				return a;
	return NULL;
}

/* Every parameter must match one of the action's patterns (or be a common one). */
static int check_params(struct ec2 *c, const struct ec2_action *a)
{
	for (size_t i = 0; i < c->p.n; i++) {
		const char *name = c->p.items[i].name;
		bool ok = !strcmp(name, "Action") || !strcmp(name, "Version") ||
			!strcmp(name, "DryRun") || gc_starts_with(name, "X-Amz-");
		unsigned bad = 0;

		for (const char *const *pat = a->params; *pat && !ok; pat++)
			ok = sim_param_match(*pat, name, EC2_MAX_INDEX, &bad);
		if (!ok) {
			/* an index past the limit is a bad value, not an unknown name */
			for (const char *const *pat = a->params; *pat && !bad; pat++)
				sim_param_match(*pat, name, UINT32_MAX, &bad);
			return EC2_FAIL400(c, "UnknownParameter",
					   "The parameter %s is not recognized", name);
		}
		if (bad)
			return EC2_FAIL400(
				c, "InvalidParameterValue",
				"The index %u in parameter %s is out of range (at most %d)", bad,
				name, EC2_MAX_INDEX);
	}
	/* ResourceId.N is the SDK's old spelling of Resource.N; make them one */
	for (size_t i = 0; i < c->p.n; i++)
		if (gc_starts_with(c->p.items[i].name, "ResourceId.")) {
			char *renamed = gc_xasprintf("Resource.%s", c->p.items[i].name + 11);
			free(c->p.items[i].name);
			c->p.items[i].name = renamed;
		}
	return 0;
}

/* --- authentication ------------------------------------------------------------------- */

static int authenticate(struct ec2 *c)
{
	const struct sim_req *req = c->req;
	const char *authz = gc_params_get_ci(req->headers, "Authorization");
	const char *date = gc_params_get_ci(req->headers, "X-Amz-Date");
	int64_t t, now = (int64_t)req->now + c->sim->cfg.clock_offset_s;
	char session_secret[SIM_AWS_SECRET_MAX];
	struct aws_sigv4_auth auth;
	struct gc_error err;
	const char *secret;
	int ret = -1;

	gc_error_init(&err);
	if (!authz)
		return ec2_fail(c, 401, "MissingAuthenticationToken",
				"The request must contain either a valid (registered) AWS access "
				"key ID or X.509 certificate.");
	if (sim_aws_parse_authorization(authz, &auth, &err) != 0)
		return ec2_fail(c, 400, "IncompleteSignature",
				"Authorization header is malformed: %s", err.message);
	if (!date) {
		ec2_fail(c, 400, "IncompleteSignature",
			 "Authorization header requires existence of either a 'X-Amz-Date' or a "
			 "'Date' header.");
		goto out;
	}
	/* a key STS issued needs its session token, sealed by the emulator (sim/aws/sts.c) */
	secret = sim_aws_secret(c->sim, auth.access_key_id,
				gc_params_get_ci(req->headers, "X-Amz-Security-Token"), now,
				session_secret);
	if (!secret) {
		ec2_fail(c, 401, "AuthFailure",
			 "AWS was not able to validate the provided access credentials");
		goto out;
	}
	if (sim_aws_parse_amz_date(date, &t) != 0) {
		ec2_fail(c, 400, "IncompleteSignature", "Invalid X-Amz-Date '%s'", date);
		goto out;
	}
	if (!sim_aws_fresh(t, now)) {
		char nowtxt[AWS_SIGV4_TIMESTAMP_LEN + 1];

		aws_sigv4_format_time((time_t)now, nowtxt);
		ec2_fail(c, 400, "RequestExpired",
			 "Request has expired. Timestamp date is %s, current time is %s", date,
			 nowtxt);
		goto out;
	}
	if (strcmp(auth.service, "ec2") != 0) {
		ec2_fail(c, 403, "SignatureDoesNotMatch",
			 "Credential should be scoped to correct service: 'ec2'.");
		goto out;
	}
	if (!sim_catalog_region(SIM_AWS, auth.region)) {
		ec2_fail(c, 403, "SignatureDoesNotMatch",
			 "Credential should be scoped to a valid region, not '%s'.", auth.region);
		goto out;
	}
	if (sim_aws_verify(req, &auth, secret, &err) != 0) {
		/* EC2, unlike STS and S3, answers a wrong secret as it answers an unknown
		 * key: AuthFailure, HTTP 401 (docs/internals/emulator.md) */
		if (err.code == GC_EAUTH)
			ec2_fail(c, 401, "AuthFailure",
				 "AWS was not able to validate the provided access credentials");
		else
			ec2_fail(c, 400, "IncompleteSignature", "%s", err.message);
		goto out;
	}
	snprintf(c->region, sizeof(c->region), "%s", auth.region);
	ret = 0;
out:
	aws_sigv4_auth_release(&auth);
	return ret;
}

/* --- the entry point ------------------------------------------------------------------ */

static bool unfiltered(const struct ec2 *c)
{
	for (size_t i = 0; i < c->p.n; i++) {
		const char *n = c->p.items[i].name;
		if (gc_starts_with(n, "Filter.") || !strcmp(n, "MaxResults") || strstr(n, "Id.") ||
		    gc_starts_with(n, "InstanceType.") || gc_starts_with(n, "KeyName.") ||
		    gc_starts_with(n, "GroupName."))
			return false;
	}
	return true;
}

static void log_params(struct ec2 *c)
{
	json_t *o = json_object();

	for (size_t i = 0; i < c->p.n; i++) {
		const char *n = c->p.items[i].name;
		if (!strcmp(n, "Action") || !strcmp(n, "Version") || gc_starts_with(n, "X-Amz-"))
			continue;
		json_object_set_new(o, n, json_string(c->p.items[i].value));
	}
	c->resp->log_params = o;
}

static void handle(struct ec2 *c)
{
	const struct sim_req *req = c->req;
	const struct ec2_action *a = NULL;
	const char *version;
	struct sim_fault_hit hit;
	struct gc_error err;

	gc_error_init(&err);
	if (req->body_len) {
		if (memchr(req->body, '\0', req->body_len) ||
		    gc_params_parse(&c->p, req->body, req->body_len, GC_URLDEC_FORM, &err) != 0) {
			ec2_fail(c, 400, "MalformedQueryString", "The request body is malformed");
			return;
		}
	}
	if (req->query)
		gc_params_add_all(&c->p, req->query);
	log_params(c);
	c->action = ec2_param(c, "Action");
	version = ec2_param(c, "Version");
	snprintf(c->resp->action, sizeof(c->resp->action), "%s", c->action ? c->action : "");
	snprintf(c->resp->version, sizeof(c->resp->version), "%s", version ? version : "");

	if (authenticate(c) != 0)
		return;
	if (!c->action || !*c->action) {
		ec2_fail(c, 400, "MissingAction", "The request must contain the parameter Action");
		return;
	}
	a = find_action(c->action);
	if (!a) {
		ec2_fail(c, 400, "InvalidAction",
			 "The action %s is not valid for this web service.", c->action);
		return;
	}
	if (!version) {
		ec2_fail(c, 400, "MissingParameter",
			 "The request must contain the parameter Version");
		return;
	}
	if (strcmp(version, EC2_VERSION) != 0) {
		ec2_fail(c, 400, "NoSuchVersion",
			 "The requested version (%s) of service AmazonEC2 does not exist", version);
		return;
	}

	sim_faults_check(c->sim->faults, SIM_AWS, a->name,
			 a->describe && unfiltered(c) ? SIM_CALL_UNFILTERED : 0, &hit);
	switch (hit.kind) {
	case SIM_FAULT_THROTTLE:
		ec2_fail(c, 503, "RequestLimitExceeded", "Request limit exceeded.");
		return;
	case SIM_FAULT_QUOTA:
		if (strcmp(a->name, "RunInstances") == 0)
			ec2_fail(c, 400, "VcpuLimitExceeded",
				 "You have requested more vCPU capacity than your current vCPU "
				 "limit allows for the instance bucket that the specified "
				 "instance type belongs to. Please visit "
				 "http://aws.amazon.com/contact-us/ec2-request to request an "
				 "adjustment to this limit.");
		else
			ec2_fail(c, 400, "ResourceLimitExceeded",
				 "You have exceeded the limit for this resource (%s)", hit.rule);
		return;
	case SIM_FAULT_5XX:
		if (!hit.after) {
			ec2_fail(c, 500, "InternalError",
				 "An internal error has occurred. Please try again later.");
			return;
		}
		break;
	case SIM_FAULT_DROP:
		if (!hit.after) {
			c->resp->drop = true;
			return;
		}
		break;
	case SIM_FAULT_SLOW: c->resp->delay_ms += hit.delay_ms; break;
	case SIM_FAULT_HOSTILE:
		c->resp->hostile = hit;
		if (!sim_hostile_applies(hit.hostile))
			return; /* the answer is replaced: nothing is done */
		break;
	default: break;
	}

	if (check_params(c, a) != 0 || ec2_bool(c, "DryRun", false, &c->dry) != 0)
		return;

	sim_world_lock(c->sim->world);
	sim_world_tick(c->sim->world);
	if (c->dry && !a->own_dry_run) {
		/* validated as far as the action's own checks go without changing anything */
		ec2_fail(c, 412, "DryRunOperation",
			 "Request would have succeeded, but DryRun flag is set.");
	} else {
		a->fn(c);
	}
	sim_world_unlock(c->sim->world);

	if (hit.after && hit.kind == SIM_FAULT_5XX)
		ec2_fail(c, 500, "InternalError",
			 "An internal error has occurred. Please try again later.");
	else if (hit.after && hit.kind == SIM_FAULT_DROP)
		c->resp->drop = true;
}

/* How the hostile modes imitate EC2 (sim/hostile.h). */
static const struct sim_hostile_style ec2_hostile = {
	.content_type = "text/xml;charset=UTF-8",
	.xml = true,
	.error_status = 400,
	.error_code = "InvalidParameterValue",
	.wrong_document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DescribeKeyPairsResponse "
			  "xmlns=\"" EC2_XMLNS "\"><requestId>00000000-0000-4000-8000-"
			  "000000000001</requestId><keySet><item><keyPairId>key-0123456789abcdef0"
			  "</keyPairId><keyName>hostile</keyName><keyFingerprint>00:00"
			  "</keyFingerprint></item></keySet></DescribeKeyPairsResponse>\n",
	.wrong_document_keys =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DescribeRegionsResponse "
		"xmlns=\"" EC2_XMLNS "\"><requestId>00000000-0000-4000-8000-"
		"000000000001</requestId><regionInfo><item><regionName>us-east-1"
		"</regionName></item></regionInfo></DescribeRegionsResponse>\n",
};

void sim_ec2_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	struct ec2 c;

	/* the AWS port serves every AWS service of the emulator, as AWS_ENDPOINT_URL does */
	if (sim_sts_wants(req)) {
		sim_sts_handle(sim, req, resp);
		return;
	}
	if (sim_pricing_wants(req)) {
		sim_pricing_handle(sim, req, resp);
		return;
	}
	if (sim_quotas_wants(req)) {
		sim_quotas_handle(sim, req, resp);
		return;
	}
	memset(&c, 0, sizeof(c));
	c.sim = sim;
	c.req = req;
	c.resp = resp;
	gc_params_init(&c.p);
	sim_request_id(sim, false, c.rid);
	resp->content_type = "text/xml;charset=UTF-8";
	handle(&c);
	sim_hostile_answer(&ec2_hostile, resp->action, &resp->hostile, resp);
	sim_aws_xml_discard(&c.x);
	gc_params_release(&c.p);
}

/* --- the frontend's row ----------------------------------------------------------------- */

static bool is_read(const char *action)
{
	return gc_starts_with(action, "Describe") || gc_starts_with(action, "Get") ||
		gc_starts_with(action, "List") || gc_starts_with(action, "Search");
}

/*
 * EC2's request buckets per action, by category (the EC2 devguide's "Request token
 * bucket sizes and refill rates"): non-mutating (Describe*, Get*, List*, Search*) 100
 * tokens refilling 20/s; the same actions unfiltered and unpaginated 50 / 10/s; mutating
 * 50 / 5/s. Resource buckets counted in instances: RunInstances 1000 / 2/s,
 * TerminateInstances 1000 / 20/s.
 */
static void ec2_rate(const char *action, enum sim_bucket kind, struct sim_rate *out)
{
	if (kind == SIM_BUCKET_RESOURCE) {
		out->cap = 1000;
		out->refill = !strcmp(action, "RunInstances") ? 2 : 20;
	} else if (kind == SIM_BUCKET_UNFILTERED) {
		out->cap = 50, out->refill = 10;
	} else if (is_read(action)) {
		out->cap = 100, out->refill = 20;
	} else {
		out->cap = 50, out->refill = 5;
	}
	snprintf(out->desc, sizeof(out->desc), "EC2 %s bucket for %s (%llu, +%llu/s)",
		 kind == SIM_BUCKET_RESOURCE		 ? "resource"
			 : kind == SIM_BUCKET_UNFILTERED ? "unfiltered request"
							 : "request",
		 action, (unsigned long long)out->cap, (unsigned long long)out->refill);
}

/* ip-10-0-0-5: what EC2's Ubuntu images name themselves */
static void ec2_hostname(const struct sim_instance *inst, const char *ip, char *out, size_t size)
{
	char dashed[SIM_IP_MAX];

	(void)inst;
	snprintf(dashed, sizeof(dashed), "%s", ip);
	for (char *p = dashed; *p; p++)
		if (*p == '.')
			*p = '-';
	snprintf(out, size, "ip-%s", dashed);
}

const struct sim_frontend sim_frontend_aws = {
	.name = "aws",
	.title = "AWS EC2",
	.endpoint = "EC2",
	.handle = sim_ec2_handle,
	.key_id = "AKIAGPUCLUSTERSIM001",
	.secret = "gpucluster-sim-aws-secret-key-0000000000",
	.catalog = &sim_aws_offer,
	.audience = "sts.amazonaws.com",
	.states = { "pending", "running", "stopped", "shutting-down", "terminated", "terminated",
		    "stopped" },
	.id_len = 17,
	.id_alphabet = "0123456789abcdef",
	.instance_prefix = "i-",
	.key_prefix = "key-",
	.private_net = "10.0",
	.spot_reclaim_reason = "Server.SpotInstanceTermination: Spot instance termination",
	.os_shutdown_reason = "Client.InstanceInitiatedShutdown: Instance initiated shutdown",
	.keeps_terminated = true,
	.rate = ec2_rate,
	.buckets = SIM_RATE_UNFILTERED | SIM_RATE_LAUNCH | SIM_RATE_TERMINATE,
	.kernels = { "5.15.0-1051-aws", "6.8.0-1015-aws" },
	.hostname = ec2_hostname,
};
