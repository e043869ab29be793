/*
 * ec2.c: the EC2 Query API, version 2016-11-15, as gpucluster-sim speaks it (WIRE.md §1).
 *
 * One request: the parameters come from the form body (POST, '+' is a space) and the
 * URL query; the SigV4 Authorization header is verified with the project's own verifier
 * against the Host as received, then without its port (an SDK pointed at
 * http://127.0.0.1:PORT may sign either); the scope gives the region. Then the action's
 * table of allowed parameter names is enforced (UnknownParameter), the faults are
 * consulted, and the action runs with the world locked. Errors are EC2's XML error
 * document with EC2's codes and HTTP statuses; success documents carry the 2016-11-15
 * namespace. XML is written with libxml2's text writer, so escaping is never by hand.
 *
 * Pagination tokens are opaque to clients but carry the position (the creation sequence
 * number of the last instance returned, or an offset for static catalogues) plus a short
 * hash, so a page survives instances being added or removed between calls and a forged
 * token is refused.
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
#include "providers/aws/sigv4.h"
#include "sim/aws/pricing.h"
#include "sim/catalog.h"
#include "sim/sim.h"

#define EC2_VERSION	"2016-11-15"
#define EC2_XMLNS	"http://ec2.amazonaws.com/doc/2016-11-15/"
#define EC2_MAX_INDEX	1000
#define EC2_SKEW_S	(15 * 60)
#define EC2_DEFAULT_VPC "vpc-0a1b2c3d4e5f60001"
#define EC2_MAX_LAUNCH	500 /* instances one call may start: the emulated quota */
#define EC2_MAX_TAGS	50
#define EC2_AMAZON_ID	"898082745236"

struct ec2 {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	struct gc_params p; /* every decoded parameter, body first */
	const char *action;
	char region[SIM_NAME_MAX];
	char rid[37];
	xmlBufferPtr xbuf;
	xmlTextWriterPtr w;
	bool dry; /* DryRun=true: the action validates, then answers DryRunOperation */
};

/* --- responses ------------------------------------------------------------------------ */

static void ec2_discard_doc(struct ec2 *c)
{
	if (c->w)
		xmlFreeTextWriter(c->w);
	if (c->xbuf)
		xmlBufferFree(c->xbuf);
	c->w = NULL;
	c->xbuf = NULL;
}

/* Replaces whatever was being written with an EC2 error document; returns -1. */
__attribute__((format(printf, 4, 5))) static int ec2_fail(struct ec2 *c, int status,
							  const char *code, const char *fmt, ...)
{
	xmlBufferPtr buf = xmlBufferCreate();
	xmlTextWriterPtr w = xmlNewTextWriterMemory(buf, 0);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ec2_discard_doc(c);

	xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL);
	xmlTextWriterStartElement(w, BAD_CAST "Response");
	xmlTextWriterStartElement(w, BAD_CAST "Errors");
	xmlTextWriterStartElement(w, BAD_CAST "Error");
	xmlTextWriterWriteElement(w, BAD_CAST "Code", BAD_CAST code);
	xmlTextWriterWriteElement(w, BAD_CAST "Message", BAD_CAST msg);
	xmlTextWriterEndElement(w);
	xmlTextWriterEndElement(w);
	xmlTextWriterWriteElement(w, BAD_CAST "RequestID", BAD_CAST c->rid);
	xmlTextWriterEndDocument(w);
	xmlFreeTextWriter(w);

	gc_buf_reset(&c->resp->body);
	gc_buf_add(&c->resp->body, xmlBufferContent(buf), (size_t)xmlBufferLength(buf));
	xmlBufferFree(buf);
	c->resp->status = status;
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

#define FAIL400(c, code, ...) ec2_fail((c), 400, (code), __VA_ARGS__)

static int bad_value(struct ec2 *c, const char *name, const char *value)
{
	return FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for %s", value, name);
}

static void ec2_begin(struct ec2 *c)
{
	char root[96];

	c->xbuf = xmlBufferCreate();
	c->w = xmlNewTextWriterMemory(c->xbuf, 0);
	snprintf(root, sizeof(root), "%sResponse", c->action);
	xmlTextWriterStartDocument(c->w, NULL, "UTF-8", NULL);
	xmlTextWriterStartElement(c->w, BAD_CAST root);
	xmlTextWriterWriteAttribute(c->w, BAD_CAST "xmlns", BAD_CAST EC2_XMLNS);
	xmlTextWriterWriteElement(c->w, BAD_CAST "requestId", BAD_CAST c->rid);
}

static int ec2_finish(struct ec2 *c)
{
	xmlTextWriterEndDocument(c->w);
	xmlFreeTextWriter(c->w);
	c->w = NULL;
	gc_buf_reset(&c->resp->body);
	gc_buf_add(&c->resp->body, xmlBufferContent(c->xbuf), (size_t)xmlBufferLength(c->xbuf));
	xmlBufferFree(c->xbuf);
	c->xbuf = NULL;
	c->resp->status = 200;
	return 0;
}

static void S(struct ec2 *c, const char *name)
{
	xmlTextWriterStartElement(c->w, BAD_CAST name);
}

static void E(struct ec2 *c)
{
	xmlTextWriterEndElement(c->w);
}

static void T(struct ec2 *c, const char *name, const char *text)
{
	xmlTextWriterWriteElement(c->w, BAD_CAST name, BAD_CAST(text ? text : ""));
}

__attribute__((format(printf, 3, 4))) static void TF(struct ec2 *c, const char *name,
						     const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	T(c, name, text);
}

static void write_tags(struct ec2 *c, const struct sim_tags *t)
{
	S(c, "tagSet");
	for (size_t i = 0; i < t->n; i++) {
		S(c, "item");
		T(c, "key", t->items[i].key);
		T(c, "value", t->items[i].value);
		E(c);
	}
	E(c);
}

static void iso_time(int64_t wall, char out[32])
{
	time_t t = (time_t)wall;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

/* --- parameters ----------------------------------------------------------------------- */

static const char *P(const struct ec2 *c, const char *name)
{
	return gc_params_get(&c->p, name);
}

__attribute__((format(printf, 2, 3))) static const char *PF(const struct ec2 *c, const char *fmt,
							    ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return P(c, name);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/*
 * The distinct indexes N of parameters named PREFIX.N or PREFIX.N.<anything>, sorted.
 * The caller frees *out.
 */
static size_t indexes(const struct ec2 *c, const char *prefix, unsigned **out)
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

/* The values of PREFIX.N in index order, into *out (pointers into c->p; caller frees
 * the array). */
static size_t list(const struct ec2 *c, const char *prefix, const char ***out)
{
	unsigned *idx;
	size_t n = indexes(c, prefix, &idx), k = 0;
	const char **v = gc_xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		const char *val = PF(c, "%s.%u", prefix, idx[i]);
		if (val)
			v[k++] = val;
	}
	free(idx);
	*out = v;
	return k;
}

static int get_bool(struct ec2 *c, const char *name, bool def, bool *out)
{
	const char *v = P(c, name);

	*out = def;
	if (!v)
		return 0;
	if (strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0)
		*out = false;
	else
		return bad_value(c, name, v);
	return 0;
}

/* An integer parameter in [min, max]; *present tells whether it was given. */
static int get_int(struct ec2 *c, const char *name, int64_t min, int64_t max, int64_t *out,
		   bool *present)
{
	const char *v = P(c, name);

	if (present)
		*present = v != NULL;
	if (!v)
		return 0;
	if (gc_parse_i64(v, INT64_MIN, INT64_MAX, out) != 0)
		return FAIL400(c, "InvalidParameterValue",
			       "Invalid value '%s' for %s: expected an integer", v, name);
	if (*out < min || *out > max)
		return FAIL400(c, "InvalidParameterValue",
			       "Value (%s) for parameter %s is invalid. Expected a value from "
			       "%lld to %lld",
			       v, name, (long long)min, (long long)max);
	return 0;
}

static int require(struct ec2 *c, const char *name, const char **out)
{
	*out = P(c, name);
	if (!*out || !**out)
		return FAIL400(c, "MissingParameter", "The request must contain the parameter %s",
			       name);
	return 0;
}

static int one_of(struct ec2 *c, const char *name, const char *const *allowed)
{
	const char *v = P(c, name);

	if (!v)
		return 0;
	for (const char *const *a = allowed; *a; a++)
		if (strcmp(v, *a) == 0)
			return 0;
	return bad_value(c, name, v);
}

/* '*' any run, '?' one character: the wildcards every EC2 filter value allows; a
 * backslash makes the next '*', '?' or '\\' literal. */
static bool wild(const char *pat, const char *s)
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

/* id shapes: PREFIX followed by 8 or 17 lower-case hex digits */
static bool id_ok(const char *id, const char *prefix)
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

struct filter {
	const char *name;
	const char **values;
	size_t n;
};

struct filters {
	struct filter *f;
	size_t n;
};

static void filters_release(struct filters *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->f[i].values);
	free(fs->f);
	fs->f = NULL;
	fs->n = 0;
}

/*
 * Reads Filter.N.Name / Filter.N.Value.M and checks each name against known (names, or
 * prefixes ending in ':' such as "tag:").
 */
static int get_filters(struct ec2 *c, const char *const *known, struct filters *out)
{
	unsigned *idx;
	size_t n = indexes(c, "Filter", &idx);

	out->f = gc_xcalloc(n + 1, sizeof(*out->f));
	out->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct filter *f = &out->f[out->n];
		char prefix[64];
		bool ok = false;

		f->name = PF(c, "Filter.%u.Name", idx[i]);
		if (!f->name) {
			free(idx);
			return FAIL400(c, "MissingParameter",
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
			return FAIL400(c, "InvalidParameterValue", "The filter '%s' is invalid",
				       f->name);
		}
		snprintf(prefix, sizeof(prefix), "Filter.%u.Value", idx[i]);
		f->n = list(c, prefix, &f->values);
		out->n++;
	}
	free(idx);
	return 0;
}

static bool any_value(const struct filter *f, const char *s)
{
	for (size_t i = 0; i < f->n; i++)
		if (s && wild(f->values[i], s))
			return true;
	return false;
}

/* tag:KEY, tag-key, tag-value: whether the tag filter f matches tags t */
static bool tag_filter(const struct filter *f, const struct sim_tags *t)
{
	if (strncmp(f->name, "tag:", 4) == 0)
		return any_value(f, sim_tags_get(t, f->name + 4));
	for (size_t i = 0; i < t->n; i++)
		if (any_value(f,
			      strcmp(f->name, "tag-key") == 0 ? t->items[i].key
							      : t->items[i].value))
			return true;
	return false;
}

static bool is_tag_filter(const char *name)
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

static int parse_token(struct ec2 *c, char kind, uint64_t *pos)
{
	const char *t = P(c, "NextToken");
	char expect[64];
	const char *dot;
	char num[24];
	uint64_t v;

	*pos = 0;
	if (!t || !*t)
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
	return FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for NextToken", t);
}

/* --- tag specifications --------------------------------------------------------------- */

static int check_tag_key(struct ec2 *c, const char *key)
{
	if (!key || !*key)
		return FAIL400(c, "InvalidParameterValue", "Tag key must not be empty");
	if (strlen(key) > 128)
		return FAIL400(c, "InvalidParameterValue",
			       "Tag key exceeds the maximum length of 128 characters");
	if (strncmp(key, "aws:", 4) == 0)
		return FAIL400(c, "InvalidParameterValue",
			       "Tag keys starting with 'aws:' are reserved for internal use");
	return 0;
}

/* Reads "<prefix>.N.Key/Value" into t. */
static int read_tags(struct ec2 *c, const char *prefix, struct sim_tags *t)
{
	unsigned *idx;
	size_t n = indexes(c, prefix, &idx);

	for (size_t i = 0; i < n; i++) {
		const char *k = PF(c, "%s.%u.Key", prefix, idx[i]);
		const char *v = PF(c, "%s.%u.Value", prefix, idx[i]);
		if (check_tag_key(c, k) != 0) {
			free(idx);
			return -1;
		}
		if (v && strlen(v) > 256) {
			free(idx);
			return FAIL400(c, "InvalidParameterValue",
				       "Tag value exceeds the maximum length of 256 characters");
		}
		sim_tags_set(t, k, v ? v : "");
	}
	free(idx);
	if (t->n > EC2_MAX_TAGS)
		return FAIL400(c, "TagLimitExceeded",
			       "The maximum number of tags (%d) has been exceeded", EC2_MAX_TAGS);
	return 0;
}

/*
 * TagSpecification.N: each ResourceType must be one of allowed; the tags of `want` go
 * into *out, the others are checked and dropped.
 */
static int tag_specs(struct ec2 *c, const char *const *allowed, const char *want,
		     struct sim_tags *out)
{
	unsigned *idx;
	size_t n = indexes(c, "TagSpecification", &idx);
	int ret = 0;

	for (size_t i = 0; i < n && ret == 0; i++) {
		const char *rt = PF(c, "TagSpecification.%u.ResourceType", idx[i]);
		char prefix[64];
		bool ok = false;
		struct sim_tags tmp = { 0 };

		if (!rt) {
			ret = FAIL400(c, "MissingParameter",
				      "The request must contain the parameter "
				      "TagSpecification.%u.ResourceType",
				      idx[i]);
			break;
		}
		for (const char *const *a = allowed; *a; a++)
			ok = ok || strcmp(*a, rt) == 0;
		if (!ok) {
			ret = FAIL400(
				c, "InvalidParameterValue",
				"'%s' is not a valid taggable resource type for this operation.",
				rt);
			break;
		}
		snprintf(prefix, sizeof(prefix), "TagSpecification.%u.Tag", idx[i]);
		ret = read_tags(c, prefix, strcmp(rt, want) == 0 ? out : &tmp);
		sim_tags_release(&tmp);
	}
	free(idx);
	return ret;
}

/* --- instances ------------------------------------------------------------------------ */

static int state_code(enum sim_state s)
{
	switch (s) {
	case SIM_PENDING: return 0;
	case SIM_RUNNING: return 16;
	case SIM_SHUTTING_DOWN: return 32;
	default: return 48;
	}
}

static const char *state_name(enum sim_state s)
{
	switch (s) {
	case SIM_PENDING: return "pending";
	case SIM_RUNNING: return "running";
	case SIM_SHUTTING_DOWN: return "shutting-down";
	default: return "terminated";
	}
}

static void write_state(struct ec2 *c, const char *elem, enum sim_state s)
{
	S(c, elem);
	TF(c, "code", "%d", state_code(s));
	T(c, "name", state_name(s));
	E(c);
}

static const char *sg_name(struct ec2 *c, const char *id)
{
	struct sim_secgroup *g = sim_world_sg(c->sim->world, SIM_AWS, c->region, id);

	return g ? g->name : id;
}

static void write_instance(struct ec2 *c, const struct sim_instance *in, unsigned launch_index)
{
	char t[32], host[64];
	bool live = in->state == SIM_PENDING || in->state == SIM_RUNNING;

	iso_time(in->launch_wall, t);
	snprintf(host, sizeof(host), "ip-%s.ec2.internal", in->private_ip);
	for (char *p = host; *p; p++)
		if (*p == '.' && p < host + 3 + strlen(in->private_ip))
			*p = '-';
	S(c, "item");
	T(c, "instanceId", in->id);
	T(c, "imageId", in->image);
	write_state(c, "instanceState", in->state);
	T(c, "privateDnsName", live ? host : "");
	/* left empty: a made-up public name would send clients to a DNS lookup */
	T(c, "dnsName", "");
	T(c, "reason", in->state >= SIM_SHUTTING_DOWN ? in->state_reason : "");
	if (in->key_name[0])
		T(c, "keyName", in->key_name);
	TF(c, "amiLaunchIndex", "%u", launch_index);
	S(c, "productCodes");
	E(c);
	T(c, "instanceType", in->type);
	T(c, "launchTime", t);
	S(c, "placement");
	T(c, "availabilityZone", in->zone);
	T(c, "groupName", "");
	T(c, "tenancy", "default");
	E(c);
	S(c, "monitoring");
	T(c, "state", "disabled");
	E(c);
	if (in->state != SIM_TERMINATED) {
		T(c, "subnetId", in->subnet[0] ? in->subnet : "subnet-0a1b2c3d4e5f60001");
		T(c, "vpcId", EC2_DEFAULT_VPC);
		T(c, "privateIpAddress", in->private_ip);
		if (live && in->public_ip[0])
			T(c, "ipAddress", in->public_ip);
	}
	T(c, "sourceDestCheck", "true");
	S(c, "groupSet");
	for (size_t i = 0; i < in->n_security_groups; i++) {
		S(c, "item");
		T(c, "groupId", in->security_groups[i]);
		T(c, "groupName", sg_name(c, in->security_groups[i]));
		E(c);
	}
	E(c);
	if (in->state >= SIM_SHUTTING_DOWN && in->state_reason[0]) {
		const char *colon = strchr(in->state_reason, ':');
		char code[SIM_NAME_MAX];

		snprintf(code, sizeof(code), "%.*s",
			 colon ? (int)(colon - in->state_reason) : (int)strlen(in->state_reason),
			 in->state_reason);
		S(c, "stateReason");
		T(c, "code", code);
		T(c, "message", in->state_reason);
		E(c);
	}
	T(c, "architecture", "x86_64");
	T(c, "rootDeviceType", "ebs");
	T(c, "rootDeviceName", "/dev/sda1");
	S(c, "blockDeviceMapping");
	if (in->state != SIM_TERMINATED) {
		S(c, "item");
		T(c, "deviceName", "/dev/sda1");
		S(c, "ebs");
		TF(c, "volumeId", "vol-%s", in->id + 2);
		T(c, "status", in->state == SIM_SHUTTING_DOWN ? "detaching" : "attached");
		T(c, "attachTime", t);
		T(c, "deleteOnTermination", "true");
		E(c);
		E(c);
	}
	E(c);
	if (in->spot)
		T(c, "instanceLifecycle", "spot");
	T(c, "virtualizationType", "hvm");
	T(c, "clientToken", in->client_token);
	write_tags(c, &in->tags);
	T(c, "hypervisor", "xen");
	T(c, "ebsOptimized", "false");
	T(c, "enaSupport", "true");
	S(c, "metadataOptions");
	T(c, "state", live ? "applied" : "pending");
	T(c, "httpTokens", "required");
	T(c, "httpPutResponseHopLimit", "2");
	T(c, "httpEndpoint", "enabled");
	E(c);
	E(c);
}

/* An instance of this region by id, or NULL (other clouds and regions are invisible). */
static struct sim_instance *find_instance(struct ec2 *c, const char *id)
{
	struct sim_instance *in = sim_world_instance(c->sim->world, SIM_AWS, id);

	return in && strcmp(in->region, c->region) == 0 ? in : NULL;
}

/*
 * Resolves InstanceId.N: malformed ids and unknown ids fail the whole call, as EC2 does.
 * *out receives the instances in the order given.
 */
static int resolve_instances(struct ec2 *c, const char **ids, size_t n, struct sim_instance ***out)
{
	struct gc_buf missing = GC_BUF_INIT(4096);
	size_t n_missing = 0;

	*out = gc_xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		if (!id_ok(ids[i], "i-")) {
			gc_buf_release(&missing);
			return FAIL400(c, "InvalidInstanceID.Malformed", "Invalid id: \"%s\"",
				       ids[i]);
		}
		(*out)[i] = find_instance(c, ids[i]);
		if (!(*out)[i]) {
			gc_buf_addf(&missing, "%s%s", n_missing ? ", " : "", ids[i]);
			n_missing++;
		}
	}
	if (n_missing) {
		int r = FAIL400(c, "InvalidInstanceID.NotFound",
				n_missing == 1 ? "The instance ID '%s' does not exist"
					       : "The instance IDs '%s' do not exist",
				missing.data);
		gc_buf_release(&missing);
		return r;
	}
	gc_buf_release(&missing);
	return 0;
}

/* --- RunInstances --------------------------------------------------------------------- */

struct run {
	const struct sim_itype *type;
	const struct sim_image *image;
	const char *zone;
	struct sim_keypair *key;
	const char **sgs;
	size_t n_sgs;
	const char *subnet;
	struct sim_tags tags;
	bool spot;
	const char *max_price;
	const char *token;
	struct gc_buf user_data;
	unsigned disk_gb;
	int64_t min, max;
};

static int run_market(struct ec2 *c, struct run *r)
{
	static const char *const markets[] = { "spot", "capacity-block", NULL };
	static const char *const kinds[] = { "one-time", "persistent", NULL };
	static const char *const behaviours[] = { "hibernate", "stop", "terminate", NULL };
	const char *market = P(c, "InstanceMarketOptions.MarketType");
	const char *kind = P(c, "InstanceMarketOptions.SpotOptions.SpotInstanceType");
	const char *beh = P(c, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior");
	const char *price = P(c, "InstanceMarketOptions.SpotOptions.MaxPrice");
	double p;

	if (one_of(c, "InstanceMarketOptions.MarketType", markets) ||
	    one_of(c, "InstanceMarketOptions.SpotOptions.SpotInstanceType", kinds) ||
	    one_of(c, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior", behaviours))
		return -1;
	if (!market) {
		for (size_t i = 0; i < c->p.n; i++)
			if (gc_starts_with(c->p.items[i].name, "InstanceMarketOptions."))
				return FAIL400(c, "MissingParameter",
					       "The request must contain the parameter "
					       "InstanceMarketOptions.MarketType");
		return 0;
	}
	if (strcmp(market, "spot") != 0)
		return FAIL400(c, "Unsupported", "The market type '%s' is not supported here",
			       market);
	r->spot = true;
	if (!kind)
		kind = "one-time";
	if (!beh)
		beh = "terminate";
	if (strcmp(kind, "persistent") == 0 && strcmp(beh, "terminate") == 0)
		return FAIL400(c, "InvalidParameterCombination",
			       "A persistent Spot Instance request requires an interruption "
			       "behavior of stop or hibernate");
	if (strcmp(kind, "one-time") == 0 && strcmp(beh, "terminate") != 0)
		return FAIL400(c, "InvalidParameterCombination",
			       "The interruption behavior '%s' requires a persistent Spot "
			       "Instance request",
			       beh);
	if (price) {
		if (gc_parse_double(price, &p) != 0 || p <= 0)
			return bad_value(c, "InstanceMarketOptions.SpotOptions.MaxPrice", price);
		if (r->type && p < sim_catalog_price(r->type, true))
			return FAIL400(c, "SpotMaxPriceTooLow",
				       "Your Spot request price of %s is lower than the minimum "
				       "required Spot request fulfillment price of %.4f.",
				       price, sim_catalog_price(r->type, true));
		r->max_price = price;
	}
	return 0;
}

static int run_block_devices(struct ec2 *c, struct run *r)
{
	static const char *const vtypes[] = { "standard", "io1", "io2", "gp2",
					      "gp3",	  "sc1", "st1", NULL };
	unsigned *idx;
	size_t n = indexes(c, "BlockDeviceMapping", &idx);
	int ret = 0;

	for (size_t i = 0; i < n && ret == 0; i++) {
		char name[96];
		const char *dev = PF(c, "BlockDeviceMapping.%u.DeviceName", idx[i]);
		int64_t size;
		bool has_size, b;

		if (!dev) {
			ret = FAIL400(c, "MissingParameter",
				      "The request must contain the parameter "
				      "BlockDeviceMapping.%u.DeviceName",
				      idx[i]);
			break;
		}
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.VolumeSize", idx[i]);
		if ((ret = get_int(c, name, 1, 16384, &size, &has_size)) != 0)
			break;
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.VolumeType", idx[i]);
		if ((ret = one_of(c, name, vtypes)) != 0)
			break;
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.DeleteOnTermination",
			 idx[i]);
		if ((ret = get_bool(c, name, true, &b)) != 0)
			break;
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.Encrypted", idx[i]);
		if ((ret = get_bool(c, name, false, &b)) != 0)
			break;
		/* the root volume's size is the node's disk */
		if (has_size &&
		    (r->disk_gb == 0 || strcmp(dev, "/dev/sda1") == 0 ||
		     strcmp(dev, "/dev/xvda") == 0))
			r->disk_gb = (unsigned)size;
	}
	free(idx);
	return ret;
}

static int run_validate(struct ec2 *c, struct run *r)
{
	static const char *const tag_types[] = { "instance", "volume", "network-interface",
						 "spot-instances-request", NULL };
	static const char *const tokens[] = { "optional", "required", NULL };
	static const char *const onoff[] = { "enabled", "disabled", NULL };
	static const char *const shutdown[] = { "stop", "terminate", NULL };
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const char *image, *type, *ud, *key;
	int64_t hops;
	bool b;

	if (require(c, "ImageId", &image) || require(c, "MinCount", &type) ||
	    require(c, "MaxCount", &type))
		return -1;
	if (get_int(c, "MinCount", 1, INT32_MAX, &r->min, NULL) ||
	    get_int(c, "MaxCount", 1, INT32_MAX, &r->max, NULL))
		return -1;
	if (r->min > r->max)
		return FAIL400(c, "InvalidParameterValue",
			       "MinCount (%lld) must not be greater than MaxCount (%lld)",
			       (long long)r->min, (long long)r->max);
	if (!gc_starts_with(image, "ami-") || !id_ok(image, "ami-"))
		return FAIL400(c, "InvalidAMIID.Malformed",
			       "Invalid id: \"%s\" (expecting \"ami-...\")", image);
	r->image = sim_catalog_image(SIM_AWS, image);
	if (!r->image)
		return FAIL400(c, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist",
			       image);
	type = P(c, "InstanceType");
	if (!type)
		return FAIL400(c, "MissingParameter",
			       "The request must contain the parameter InstanceType");
	r->type = sim_catalog_itype(SIM_AWS, type);
	if (!r->type)
		return FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for InstanceType.",
			       type);

	r->zone = P(c, "Placement.AvailabilityZone");
	if (r->zone && !sim_catalog_zone_ok(region, r->zone))
		return FAIL400(c, "InvalidParameterValue", "Invalid availability zone: [%s]",
			       r->zone);
	if (!r->zone)
		r->zone = region->zones[0]; /* EC2 picks one; the region's first, predictably */

	key = P(c, "KeyName");
	if (key) {
		r->key = sim_world_keypair(c->sim->world, SIM_AWS, c->region, key);
		if (!r->key || strcmp(r->key->name, key) != 0)
			return FAIL400(c, "InvalidKeyPair.NotFound",
				       "The key pair '%s' does not exist", key);
	}

	r->n_sgs = list(c, "SecurityGroupId", &r->sgs);
	if (!r->n_sgs) {
		free(r->sgs);
		r->n_sgs = list(c, "NetworkInterface.1.SecurityGroupId", &r->sgs);
	}
	for (size_t i = 0; i < r->n_sgs; i++)
		if (!sim_world_sg(c->sim->world, SIM_AWS, c->region, r->sgs[i]))
			return FAIL400(c, "InvalidGroup.NotFound",
				       "The security group '%s' does not exist", r->sgs[i]);
	if (!r->n_sgs) {
		/* by name (EC2-Classic style SecurityGroup.N) */
		const char **names;
		size_t nn = list(c, "SecurityGroup", &names);
		struct sim_secgroup **all;
		size_t na = sim_world_list_sgs(c->sim->world, SIM_AWS, c->region, &all);

		free(r->sgs);
		r->sgs = gc_xcalloc(nn + 1, sizeof(*r->sgs));
		for (size_t i = 0; i < nn; i++) {
			for (size_t k = 0; k < na; k++)
				if (strcmp(all[k]->name, names[i]) == 0)
					r->sgs[r->n_sgs] = all[k]->id;
			if (!r->sgs[r->n_sgs]) {
				free(all);
				int ret = FAIL400(c, "InvalidGroup.NotFound",
						  "The security group '%s' does not exist in "
						  "default VPC '%s'",
						  names[i], EC2_DEFAULT_VPC);
				free(names);
				return ret;
			}
			r->n_sgs++;
		}
		free(all);
		free(names);
	}

	r->subnet = P(c, "SubnetId");
	if (!r->subnet)
		r->subnet = P(c, "NetworkInterface.1.SubnetId");
	if (r->subnet && !gc_starts_with(r->subnet, "subnet-"))
		return FAIL400(c, "InvalidSubnetID.Malformed", "Invalid id: \"%s\"", r->subnet);

	ud = P(c, "UserData");
	if (ud) {
		if (gc_base64_decode(&r->user_data, ud, strlen(ud)) != 0)
			return FAIL400(c, "InvalidParameterValue",
				       "Invalid BASE64 encoding of user data.");
		if (r->user_data.len > 16384)
			return FAIL400(c, "InvalidParameterValue",
				       "User data is limited to 16384 bytes");
		if (memchr(r->user_data.data, '\0', r->user_data.len))
			return FAIL400(c, "InvalidParameterValue",
				       "User data must not contain NUL bytes here");
	}

	r->token = P(c, "ClientToken");
	if (r->token) {
		size_t len = strlen(r->token);
		bool ascii = true;
		for (const char *s = r->token; *s; s++)
			ascii = ascii && *s >= 0x20 && *s < 0x7f;
		if (len > SIM_TOKEN_MAX || !ascii)
			return FAIL400(
				c, "InvalidParameterValue",
				"Value (%s) for parameter clientToken is invalid. The client "
				"token must be at most 64 ASCII characters",
				r->token);
		if (len == 0)
			r->token = NULL;
	}

	if (tag_specs(c, tag_types, "instance", &r->tags) != 0)
		return -1;
	if (run_market(c, r) || run_block_devices(c, r))
		return -1;
	if (one_of(c, "MetadataOptions.HttpTokens", tokens) ||
	    one_of(c, "MetadataOptions.HttpEndpoint", onoff) ||
	    one_of(c, "MetadataOptions.HttpProtocolIpv6", onoff) ||
	    one_of(c, "MetadataOptions.InstanceMetadataTags", onoff) ||
	    get_int(c, "MetadataOptions.HttpPutResponseHopLimit", 1, 64, &hops, NULL) ||
	    one_of(c, "InstanceInitiatedShutdownBehavior", shutdown) ||
	    get_bool(c, "EbsOptimized", false, &b) ||
	    get_bool(c, "Monitoring.Enabled", false, &b) ||
	    get_bool(c, "DisableApiTermination", false, &b) ||
	    get_bool(c, "NetworkInterface.1.AssociatePublicIpAddress", false, &b))
		return -1;
	return 0;
}

static void write_reservation_head(struct ec2 *c, const char *reservation)
{
	T(c, "reservationId", reservation);
	T(c, "ownerId", c->sim->cfg.aws_account);
	S(c, "groupSet");
	E(c);
}

static int parse_iso(const char *s, int64_t *out);

/*
 * The node's own expiry timer, as systemd on the node would run it. gpucluster's TTL
 * user-data installs a persistent timer (a line "OnCalendar=YYYY-MM-DD HH:MM:SS UTC")
 * that powers the machine off, and with InstanceInitiatedShutdownBehavior=terminate EC2
 * then terminates it. Nodes run no systemd here, so the emulator reads the timer and
 * schedules the release itself, as it does for Alibaba's AutoReleaseTime. 0: none.
 */
static int64_t shutdown_timer(struct ec2 *c, const struct run *r)
{
	const char *beh = P(c, "InstanceInitiatedShutdownBehavior");

	if (!beh || strcmp(beh, "terminate") != 0 || !P(c, "UserData"))
		return 0;
	for (const char *line = r->user_data.data; line && *line;) {
		const char *nl = strchr(line, '\n');
		unsigned Y, M, D, h, m, sec;
		char zone[8], iso[32];
		int64_t at;

		if (sscanf(line, "OnCalendar=%4u-%2u-%2u %2u:%2u:%2u %7s", &Y, &M, &D, &h, &m, &sec,
			   zone) == 7 &&
		    strcmp(zone, "UTC") == 0) {
			snprintf(iso, sizeof(iso), "%04u-%02u-%02uT%02u:%02u:%02uZ", Y, M, D, h, m,
				 sec);
			if (parse_iso(iso, &at) == 0)
				return at;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

static void launch(struct ec2 *c, const struct run *r, struct sim_instance ***insts, size_t *n,
		   char reservation[SIM_ID_MAX])
{
	struct sim_launch l = {
		.cloud = SIM_AWS,
		.region = c->region,
		.zone = r->zone,
		.type = r->type->name,
		.image = r->image->id,
		.key_name = r->key ? r->key->name : NULL,
		.authorized_key = r->key ? r->key->public_key : NULL,
		.security_groups = r->sgs,
		.n_security_groups = r->n_sgs,
		.subnet = r->subnet,
		.name = sim_tags_get(&r->tags, "Name"),
		.tags = &r->tags,
		.spot = r->spot,
		.spot_max_price = r->max_price,
		.client_token = r->token,
		.user_data = P(c, "UserData") ? r->user_data.data : NULL,
		.disk_gb = r->disk_gb,
		.release_at_wall = shutdown_timer(c, r),
		.count = (unsigned)r->max,
	};
	sim_world_launch(c->sim->world, &l, insts, n, reservation);
}

static int run_instances(struct ec2 *c)
{
	static const char *const skip[] = { "ClientToken", "Placement.AvailabilityZone", NULL };
	struct sim_world *w = c->sim->world;
	struct run r;
	struct sim_instance **insts = NULL;
	size_t n = 0;
	char reservation[SIM_ID_MAX], fpr[65];
	struct sim_fault_hit hit;
	struct sim_token *tok;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	gc_buf_init(&r.user_data, 65536);
	if (run_validate(c, &r) != 0)
		goto out;
	if (c->dry) {
		ec2_fail(c, 412, "DryRunOperation",
			 "Request would have succeeded, but DryRun flag is set.");
		goto out;
	}

	sim_params_fingerprint(&c->p, skip, fpr);
	tok = r.token ? sim_world_token(w, SIM_AWS, c->region, r.token) : NULL;
	if (tok) {
		if (strcmp(tok->fingerprint, fpr) != 0) {
			FAIL400(c, "IdempotentParameterMismatch",
				"Arguments on this idempotent request are inconsistent with "
				"arguments used in previous request(s).");
			goto out;
		}
		/* a replay: the same reservation, as it stands now */
		ec2_begin(c);
		write_reservation_head(c, tok->reservation);
		S(c, "instancesSet");
		for (size_t i = 0; i < tok->n_ids; i++) {
			struct sim_instance *in = find_instance(c, tok->ids[i]);
			if (in)
				write_instance(c, in, (unsigned)i);
		}
		E(c);
		ret = ec2_finish(c);
		goto out;
	}

	if (r.min > EC2_MAX_LAUNCH) {
		ec2_fail(c, 400, "InstanceLimitExceeded",
			 "Your quota allows for %d more running instance(s). You requested at "
			 "least %lld",
			 EC2_MAX_LAUNCH, (long long)r.min);
		goto out;
	}
	if (r.max > EC2_MAX_LAUNCH)
		r.max = EC2_MAX_LAUNCH;

	sim_faults_launch(c->sim->faults, SIM_AWS, "RunInstances", r.zone, r.type->name,
			  (unsigned)r.max, &hit);
	if (hit.kind == SIM_FAULT_CAPACITY) {
		ec2_fail(c, 500, "InsufficientInstanceCapacity",
			 "We currently do not have sufficient %s capacity in the Availability "
			 "Zone you requested (%s). Our system will be working on provisioning "
			 "additional capacity. You can currently get %s capacity by not "
			 "specifying an Availability Zone in your request or choosing a "
			 "different Availability Zone.",
			 r.type->name, r.zone, r.type->name);
		goto out;
	}
	if (hit.kind == SIM_FAULT_THROTTLE) {
		ec2_fail(c, 503, "RequestLimitExceeded", "Request limit exceeded.");
		goto out;
	}

	launch(c, &r, &insts, &n, reservation);
	if (r.token)
		sim_world_remember_token(w, SIM_AWS, c->region, r.token, fpr, reservation, insts,
					 n);

	ec2_begin(c);
	write_reservation_head(c, reservation);
	S(c, "instancesSet");
	for (size_t i = 0; i < n; i++)
		write_instance(c, insts[i], (unsigned)i);
	E(c);
	ret = ec2_finish(c);
out:
	free(insts);
	free(r.sgs);
	sim_tags_release(&r.tags);
	gc_buf_release(&r.user_data);
	return ret;
}

/* --- DescribeInstances ---------------------------------------------------------------- */

static const char *const instance_filters[] = {
	"tag:",
	"tag-key",
	"tag-value",
	"instance-state-name",
	"instance-state-code",
	"instance-id",
	"client-token",
	"instance-type",
	"availability-zone",
	"instance-lifecycle",
	"image-id",
	"key-name",
	"reservation-id",
	"private-ip-address",
	"ip-address",
	"vpc-id",
	"subnet-id",
	"instance.group-id",
	"architecture",
	NULL,
};

static bool instance_matches(const struct sim_instance *in, const struct filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct filter *f = &fs->f[i];
		const char *n = f->name;
		char code[8];
		bool m = false;

		if (is_tag_filter(n)) {
			m = tag_filter(f, &in->tags);
		} else if (!strcmp(n, "instance-state-name")) {
			m = any_value(f, state_name(in->state));
		} else if (!strcmp(n, "instance-state-code")) {
			snprintf(code, sizeof(code), "%d", state_code(in->state));
			m = any_value(f, code);
		} else if (!strcmp(n, "instance-id")) {
			m = any_value(f, in->id);
		} else if (!strcmp(n, "client-token")) {
			m = any_value(f, in->client_token);
		} else if (!strcmp(n, "instance-type")) {
			m = any_value(f, in->type);
		} else if (!strcmp(n, "availability-zone")) {
			m = any_value(f, in->zone);
		} else if (!strcmp(n, "instance-lifecycle")) {
			m = in->spot && any_value(f, "spot");
		} else if (!strcmp(n, "image-id")) {
			m = any_value(f, in->image);
		} else if (!strcmp(n, "key-name")) {
			m = any_value(f, in->key_name);
		} else if (!strcmp(n, "reservation-id")) {
			m = any_value(f, in->reservation);
		} else if (!strcmp(n, "private-ip-address")) {
			m = any_value(f, in->private_ip);
		} else if (!strcmp(n, "ip-address")) {
			m = any_value(f, in->public_ip);
		} else if (!strcmp(n, "vpc-id")) {
			m = any_value(f, EC2_DEFAULT_VPC);
		} else if (!strcmp(n, "subnet-id")) {
			m = any_value(f, in->subnet);
		} else if (!strcmp(n, "instance.group-id")) {
			for (size_t k = 0; k < in->n_security_groups && !m; k++)
				m = any_value(f, in->security_groups[k]);
		} else if (!strcmp(n, "architecture")) {
			m = any_value(f, "x86_64");
		}
		if (!m)
			return false;
	}
	return true;
}

static int get_max_results(struct ec2 *c, int64_t min, int64_t max, int64_t *out, bool *present)
{
	const char *v = P(c, "MaxResults");

	*present = v != NULL;
	*out = max;
	if (!v)
		return 0;
	if (gc_parse_i64(v, INT64_MIN, INT64_MAX, out) != 0 || *out < min || *out > max)
		return FAIL400(c, "InvalidParameterValue",
			       "Value ( %s ) for parameter maxResults is invalid. Expecting a "
			       "value between %lld and %lld.",
			       v, (long long)min, (long long)max);
	return 0;
}

static int describe_instances(struct ec2 *c)
{
	static const char *const states[] = { "pending",    "running",	"shutting-down",
					      "terminated", "stopping", "stopped" };
	const char **ids = NULL;
	size_t n_ids = list(c, "InstanceId", &ids), n_all, n_sel = 0, last = 0;
	struct sim_instance **all = NULL, **sel = NULL;
	struct filters fs = { 0 };
	int64_t max;
	bool has_max;
	uint64_t after;
	int ret = -1;

	if (get_max_results(c, 5, 1000, &max, &has_max) || parse_token(c, 'i', &after) ||
	    get_filters(c, instance_filters, &fs))
		goto out;
	if (has_max && n_ids) {
		FAIL400(c, "InvalidParameterCombination",
			"The parameter instancesSet cannot be used with the parameter maxResults");
		goto out;
	}
	for (size_t i = 0; i < fs.n; i++) {
		if (strcmp(fs.f[i].name, "instance-state-name") != 0)
			continue;
		for (size_t k = 0; k < fs.f[i].n; k++) {
			bool ok = false;
			for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++)
				ok = ok || wild(fs.f[i].values[k], states[s]);
			if (!ok) {
				FAIL400(c, "InvalidParameterValue",
					"The filter value '%s' is invalid for "
					"instance-state-name",
					fs.f[i].values[k]);
				goto out;
			}
		}
	}

	if (n_ids) {
		if (resolve_instances(c, ids, n_ids, &sel) != 0)
			goto out;
		n_sel = n_ids;
	} else {
		n_all = sim_world_list(c->sim->world, SIM_AWS, c->region, &all);
		sel = gc_xcalloc(n_all + 1, sizeof(*sel));
		for (size_t i = 0; i < n_all; i++)
			if (all[i]->seq >= after)
				sel[n_sel++] = all[i];
	}

	ec2_begin(c);
	S(c, "reservationSet");
	{
		size_t shown = 0, i = 0;
		unsigned launch_index = 0;

		while (i < n_sel && (int64_t)shown < max) {
			const char *res = sel[i]->reservation;
			/* one reservationSet item per run of the same reservation */
			if (!instance_matches(sel[i], &fs)) {
				i++;
				continue;
			}
			S(c, "item");
			write_reservation_head(c, res);
			S(c, "instancesSet");
			launch_index = 0;
			while (i < n_sel && (int64_t)shown < max &&
			       strcmp(sel[i]->reservation, res) == 0) {
				if (instance_matches(sel[i], &fs)) {
					write_instance(c, sel[i], launch_index);
					shown++;
					last = i;
				}
				launch_index++;
				i++;
			}
			E(c);
			E(c);
		}
		E(c);
		/* a next page only when something beyond this one still matches */
		if (!n_ids) {
			bool more = false;
			for (size_t k = last + 1; k < n_sel && shown && !more; k++)
				more = instance_matches(sel[k], &fs);
			if (more && (int64_t)shown >= max) {
				char tok[64];
				make_token('i', sel[last]->seq + 1, tok);
				T(c, "nextToken", tok);
			}
		}
	}
	ret = ec2_finish(c);
out:
	filters_release(&fs);
	free(ids);
	free(all);
	free(sel);
	return ret;
}

/* --- TerminateInstances --------------------------------------------------------------- */

static int terminate_instances(struct ec2 *c)
{
	const char **ids = NULL;
	size_t n = list(c, "InstanceId", &ids);
	struct sim_instance **insts = NULL;
	enum sim_state *prev = NULL;
	struct sim_fault_hit hit;
	int ret = -1;

	if (!n) {
		FAIL400(c, "MissingParameter", "The request must contain the parameter InstanceId");
		goto out;
	}
	if (resolve_instances(c, ids, n, &insts) != 0)
		goto out;
	if (c->dry) {
		ec2_fail(c, 412, "DryRunOperation",
			 "Request would have succeeded, but DryRun flag is set.");
		goto out;
	}
	sim_faults_terminate(c->sim->faults, SIM_AWS, "TerminateInstances", (unsigned)n, &hit);
	if (hit.kind == SIM_FAULT_THROTTLE) {
		ec2_fail(c, 503, "RequestLimitExceeded", "Request limit exceeded.");
		goto out;
	}
	prev = gc_xcalloc(n, sizeof(*prev));
	for (size_t i = 0; i < n; i++) {
		prev[i] = insts[i]->state;
		sim_world_terminate(c->sim->world, insts[i]);
	}
	ec2_begin(c);
	S(c, "instancesSet");
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < i; k++)
			dup = dup || insts[k] == insts[i];
		if (dup)
			continue;
		S(c, "item");
		T(c, "instanceId", insts[i]->id);
		write_state(c, "currentState", insts[i]->state);
		write_state(c, "previousState", prev[i]);
		E(c);
	}
	E(c);
	ret = ec2_finish(c);
out:
	free(ids);
	free(insts);
	free(prev);
	return ret;
}

/* --- tags ----------------------------------------------------------------------------- */

/* The tags of a resource of this region by id, or NULL with the error set. */
static struct sim_tags *resource_tags(struct ec2 *c, const char *id)
{
	struct sim_world *w = c->sim->world;

	if (gc_starts_with(id, "i-")) {
		struct sim_instance *in = id_ok(id, "i-") ? find_instance(c, id) : NULL;
		if (in)
			return &in->tags;
		FAIL400(c, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id);
	} else if (gc_starts_with(id, "sg-")) {
		struct sim_secgroup *g = sim_world_sg(w, SIM_AWS, c->region, id);
		if (g)
			return &g->tags;
		FAIL400(c, "InvalidGroup.NotFound", "The security group '%s' does not exist", id);
	} else if (gc_starts_with(id, "key-")) {
		struct sim_keypair *k = sim_world_keypair(w, SIM_AWS, c->region, id);
		if (k && strcmp(k->id, id) == 0)
			return &k->tags;
		FAIL400(c, "InvalidKeyPair.NotFound", "The key pair '%s' does not exist", id);
	} else {
		FAIL400(c, "InvalidID", "The ID '%s' is not valid", id);
	}
	return NULL;
}

static int tags_action(struct ec2 *c, bool create)
{
	const char **ids = NULL;
	size_t n = list(c, "Resource", &ids);
	struct sim_tags **targets = NULL;
	struct sim_tags tags = { 0 };
	unsigned *idx = NULL;
	size_t n_tags;
	int ret = -1;

	if (!n) {
		FAIL400(c, "MissingParameter", "The request must contain the parameter ResourceId");
		goto out;
	}
	n_tags = indexes(c, "Tag", &idx);
	if (create && !n_tags) {
		FAIL400(c, "MissingParameter", "The request must contain the parameter Tag");
		goto out;
	}
	targets = gc_xcalloc(n, sizeof(*targets));
	for (size_t i = 0; i < n; i++)
		if (!(targets[i] = resource_tags(c, ids[i])))
			goto out;
	if (create) {
		if (read_tags(c, "Tag", &tags) != 0)
			goto out;
		for (size_t i = 0; i < n; i++) {
			size_t fresh = 0;
			for (size_t k = 0; k < tags.n; k++)
				fresh += sim_tags_get(targets[i], tags.items[k].key) == NULL;
			if (targets[i]->n + fresh > EC2_MAX_TAGS) {
				FAIL400(c, "TagLimitExceeded",
					"The maximum number of tags (%d) for resource '%s' has "
					"been exceeded",
					EC2_MAX_TAGS, ids[i]);
				goto out;
			}
		}
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < tags.n; k++)
				sim_tags_set(targets[i], tags.items[k].key, tags.items[k].value);
	} else {
		for (size_t i = 0; i < n; i++) {
			if (!n_tags) {
				while (targets[i]->n)
					sim_tags_remove(targets[i], targets[i]->items[0].key);
				continue;
			}
			for (size_t k = 0; k < n_tags; k++) {
				const char *key = PF(c, "Tag.%u.Key", idx[k]);
				const char *val = PF(c, "Tag.%u.Value", idx[k]);
				const char *cur = key ? sim_tags_get(targets[i], key) : NULL;
				/* with a value given, only a tag holding that value goes */
				if (cur && (!val || strcmp(cur, val) == 0))
					sim_tags_remove(targets[i], key);
			}
		}
	}
	ec2_begin(c);
	T(c, "return", "true");
	ret = ec2_finish(c);
out:
	free(ids);
	free(idx);
	free(targets);
	sim_tags_release(&tags);
	return ret;
}

static int create_tags(struct ec2 *c)
{
	return tags_action(c, true);
}

static int delete_tags(struct ec2 *c)
{
	return tags_action(c, false);
}

/* --- key pairs ------------------------------------------------------------------------ */

static void write_key(struct ec2 *c, const struct sim_keypair *k, bool with_public)
{
	char t[32];

	iso_time(k->created_wall, t);
	T(c, "keyPairId", k->id);
	T(c, "keyType", gc_starts_with(k->public_key, "ssh-rsa") ? "rsa" : "ed25519");
	write_tags(c, &k->tags);
	T(c, "keyName", k->name);
	T(c, "keyFingerprint", k->fingerprint);
	T(c, "createTime", t);
	if (with_public)
		T(c, "publicKey", k->public_key);
}

static int import_key_pair(struct ec2 *c)
{
	static const char *const types[] = { "key-pair", NULL };
	const char *name, *material;
	struct gc_buf line = GC_BUF_INIT(16384);
	struct sim_tags tags = { 0 };
	struct sim_keypair *k;
	struct gc_error err;
	int ret = -1;

	gc_error_init(&err);
	if (require(c, "KeyName", &name) || require(c, "PublicKeyMaterial", &material))
		goto out;
	if (strlen(name) > 255) {
		bad_value(c, "KeyName", name);
		goto out;
	}
	if (tag_specs(c, types, "key-pair", &tags) != 0)
		goto out;
	if (gc_base64_decode(&line, material, strlen(material)) != 0 ||
	    memchr(line.data, '\0', line.len)) {
		FAIL400(c, "InvalidKey.Format", "Key is not in valid OpenSSH public key format");
		goto out;
	}
	while (line.len && (line.data[line.len - 1] == '\n' || line.data[line.len - 1] == '\r'))
		gc_buf_truncate(&line, line.len - 1);
	k = sim_world_keypair(c->sim->world, SIM_AWS, c->region, name);
	if (k && strcmp(k->name, name) == 0) {
		FAIL400(c, "InvalidKeyPair.Duplicate", "The keypair '%s' already exists.", name);
		goto out;
	}
	k = sim_world_import_key(c->sim->world, SIM_AWS, c->region, name, line.data, &tags, &err);
	if (!k) {
		FAIL400(c, "InvalidKey.Format", "Key is not in valid OpenSSH public key format");
		goto out;
	}
	ec2_begin(c);
	T(c, "keyFingerprint", k->fingerprint);
	T(c, "keyName", k->name);
	T(c, "keyPairId", k->id);
	write_tags(c, &k->tags);
	ret = ec2_finish(c);
out:
	gc_buf_release(&line);
	sim_tags_release(&tags);
	return ret;
}

static const char *const key_filters[] = { "tag:",	  "tag-key",	 "tag-value", "key-name",
					   "key-pair-id", "fingerprint", "key-type",  NULL };

static bool key_matches(const struct sim_keypair *k, const struct filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct filter *f = &fs->f[i];
		bool m = false;

		if (is_tag_filter(f->name))
			m = tag_filter(f, &k->tags);
		else if (!strcmp(f->name, "key-name"))
			m = any_value(f, k->name);
		else if (!strcmp(f->name, "key-pair-id"))
			m = any_value(f, k->id);
		else if (!strcmp(f->name, "fingerprint"))
			m = any_value(f, k->fingerprint);
		else if (!strcmp(f->name, "key-type"))
			m = any_value(f,
				      gc_starts_with(k->public_key, "ssh-rsa") ? "rsa" : "ed25519");
		if (!m)
			return false;
	}
	return true;
}

static int describe_key_pairs(struct ec2 *c)
{
	const char **names = NULL, **kids = NULL;
	size_t nn = list(c, "KeyName", &names), ni = list(c, "KeyPairId", &kids), n;
	struct sim_keypair **all = NULL;
	struct filters fs = { 0 };
	bool with_public;
	int ret = -1;

	if (get_bool(c, "IncludePublicKey", false, &with_public) ||
	    get_filters(c, key_filters, &fs))
		goto out;
	n = sim_world_list_keys(c->sim->world, SIM_AWS, c->region, &all);
	for (size_t i = 0; i < nn + ni; i++) {
		const char *want = i < nn ? names[i] : kids[i - nn];
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(i < nn ? all[k]->name : all[k]->id, want) == 0;
		if (!found) {
			if (i < nn)
				FAIL400(c, "InvalidKeyPair.NotFound",
					"The key pair '%s' does not exist", want);
			else
				FAIL400(c, "InvalidKeyPair.NotFound",
					"The key pair ID '%s' does not exist", want);
			goto out;
		}
	}
	ec2_begin(c);
	S(c, "keySet");
	for (size_t k = 0; k < n; k++) {
		bool wanted = nn + ni == 0;
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(all[k]->name, names[i]) == 0;
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(all[k]->id, kids[i]) == 0;
		if (!wanted || !key_matches(all[k], &fs))
			continue;
		S(c, "item");
		write_key(c, all[k], with_public);
		E(c);
	}
	E(c);
	ret = ec2_finish(c);
out:
	free(names);
	free(kids);
	free(all);
	filters_release(&fs);
	return ret;
}

static int delete_key_pair(struct ec2 *c)
{
	const char *name = P(c, "KeyName"), *id = P(c, "KeyPairId");
	struct sim_keypair *k = NULL;
	char kid[SIM_ID_MAX] = "";

	if (!name && !id)
		return FAIL400(c, "MissingParameter",
			       "The request must contain the parameter KeyName or KeyPairId");
	if (id) {
		k = sim_world_keypair(c->sim->world, SIM_AWS, c->region, id);
		if (k && strcmp(k->id, id) != 0)
			k = NULL;
		if (!k)
			return FAIL400(c, "InvalidKeyPair.NotFound",
				       "The key pair ID '%s' does not exist", id);
	} else {
		k = sim_world_keypair(c->sim->world, SIM_AWS, c->region, name);
		if (k && strcmp(k->name, name) != 0)
			k = NULL;
	}
	/* deleting an absent key by name succeeds: EC2 treats it as done */
	if (k) {
		snprintf(kid, sizeof(kid), "%s", k->id);
		sim_world_delete_key(c->sim->world, k);
	}
	ec2_begin(c);
	T(c, "return", "true");
	if (kid[0])
		T(c, "keyPairId", kid);
	return ec2_finish(c);
}

/* --- security groups ------------------------------------------------------------------ */

static struct sim_secgroup *sg_by_name(struct ec2 *c, const char *name, const char *vpc)
{
	struct sim_secgroup **all, *g = NULL;
	size_t n = sim_world_list_sgs(c->sim->world, SIM_AWS, c->region, &all);

	for (size_t i = 0; i < n && !g; i++)
		if (strcmp(all[i]->name, name) == 0 && (!vpc || strcmp(all[i]->vpc, vpc) == 0))
			g = all[i];
	free(all);
	return g;
}

static int create_security_group(struct ec2 *c)
{
	static const char *const types[] = { "security-group", NULL };
	const char *name, *desc, *vpc = P(c, "VpcId");
	struct sim_tags tags = { 0 };
	struct sim_secgroup *g;
	int ret = -1;

	if (require(c, "GroupName", &name) || require(c, "GroupDescription", &desc))
		goto out;
	if (strlen(name) > 255 || gc_starts_with(name, "sg-")) {
		FAIL400(c, "InvalidParameterValue",
			"Invalid value '%s' for GroupName: it must be at most 255 characters and "
			"must not start with sg-",
			name);
		goto out;
	}
	if (strlen(desc) > 255) {
		bad_value(c, "GroupDescription", desc);
		goto out;
	}
	if (vpc && !gc_starts_with(vpc, "vpc-")) {
		FAIL400(c, "InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", vpc);
		goto out;
	}
	if (!vpc)
		vpc = EC2_DEFAULT_VPC;
	if (tag_specs(c, types, "security-group", &tags) != 0)
		goto out;
	if (sg_by_name(c, name, vpc)) {
		FAIL400(c, "InvalidGroup.Duplicate",
			"The security group '%s' already exists for VPC '%s'", name, vpc);
		goto out;
	}
	g = sim_world_create_sg(c->sim->world, SIM_AWS, c->region, name, desc, vpc, &tags);
	ec2_begin(c);
	T(c, "return", "true");
	T(c, "groupId", g->id);
	write_tags(c, &g->tags);
	ret = ec2_finish(c);
out:
	sim_tags_release(&tags);
	return ret;
}

static struct sim_secgroup *sg_from_params(struct ec2 *c)
{
	const char *id = P(c, "GroupId"), *name = P(c, "GroupName");
	struct sim_secgroup *g;

	if (!id && !name) {
		FAIL400(c, "MissingParameter", "The request must contain the parameter GroupId");
		return NULL;
	}
	g = id ? sim_world_sg(c->sim->world, SIM_AWS, c->region, id) : sg_by_name(c, name, NULL);
	if (!g) {
		if (id)
			FAIL400(c, "InvalidGroup.NotFound",
				"The security group '%s' does not exist", id);
		else
			FAIL400(c, "InvalidGroup.NotFound",
				"The security group '%s' does not exist in default VPC '%s'", name,
				EC2_DEFAULT_VPC);
	}
	return g;
}

static bool cidr_ok(const char *s)
{
	unsigned a, b, cc, d, n;
	char tail;

	if (sscanf(s, "%3u.%3u.%3u.%3u/%2u%c", &a, &b, &cc, &d, &n, &tail) != 5)
		return false;
	return a < 256 && b < 256 && cc < 256 && d < 256 && n <= 32;
}

static const char *norm_protocol(const char *p)
{
	if (!strcmp(p, "tcp") || !strcmp(p, "6"))
		return "tcp";
	if (!strcmp(p, "udp") || !strcmp(p, "17"))
		return "udp";
	if (!strcmp(p, "icmp") || !strcmp(p, "1"))
		return "icmp";
	if (!strcmp(p, "-1") || !strcmp(p, "all"))
		return "-1";
	return NULL;
}

static bool same_rule(const struct sim_rule *a, const struct sim_rule *b)
{
	return !strcmp(a->protocol, b->protocol) && a->from_port == b->from_port &&
		a->to_port == b->to_port && !strcmp(a->cidr, b->cidr) &&
		!strcmp(a->source_group, b->source_group);
}

/*
 * The security group that IpPermissions.N.Groups.M names as a source, or NULL with the
 * error answered. EC2 finds it by GroupId (or, in the default VPC, GroupName); the
 * emulator has one account, so a UserId other than it names nothing that exists.
 */
static const struct sim_secgroup *source_group(struct ec2 *c, const struct sim_secgroup *target,
					       const char *pre, unsigned m)
{
	const char *id = PF(c, "%sGroups.%u.GroupId", pre, m);
	const char *name = PF(c, "%sGroups.%u.GroupName", pre, m);
	const char *user = PF(c, "%sGroups.%u.UserId", pre, m);
	const struct sim_secgroup *g;

	if (!id && !name) {
		FAIL400(c, "MissingParameter",
			"The request must contain the parameter %sGroups.%u.GroupId", pre, m);
		return NULL;
	}
	g = id ? sim_world_sg(c->sim->world, SIM_AWS, c->region, id)
	       : sg_by_name(c, name, EC2_DEFAULT_VPC);
	if (!g || (user && strcmp(user, c->sim->cfg.aws_account) != 0)) {
		if (id)
			FAIL400(c, "InvalidGroup.NotFound",
				"The security group '%s' does not exist", id);
		else
			FAIL400(c, "InvalidGroup.NotFound",
				"The security group '%s' does not exist in default VPC '%s'", name,
				EC2_DEFAULT_VPC);
		return NULL;
	}
	if (target && strcmp(g->vpc, target->vpc) != 0) {
		FAIL400(c, "InvalidGroup.NotFound",
			"You have specified two resources that belong to different networks.");
		return NULL;
	}
	return g;
}

static void push_rule(struct sim_rule **rules, size_t *n, const char *proto, int64_t from,
		      int64_t to, const char *cidr, const char *group, const char *desc)
{
	struct sim_rule r;

	memset(&r, 0, sizeof(r));
	snprintf(r.protocol, sizeof(r.protocol), "%s", proto);
	r.from_port = (int)from;
	r.to_port = (int)to;
	snprintf(r.cidr, sizeof(r.cidr), "%s", cidr ? cidr : "");
	snprintf(r.source_group, sizeof(r.source_group), "%s", group ? group : "");
	snprintf(r.description, sizeof(r.description), "%s", desc ? desc : "");
	*rules = gc_xreallocarray(*rules, *n + 1, sizeof(**rules));
	(*rules)[(*n)++] = r;
}

/*
 * IpPermissions.N (or the flat legacy IpProtocol/FromPort/ToPort/CidrIp) into rules, one
 * per source: each IpRanges.M.CidrIp and each Groups.M (a security group, whose members
 * are the source; target is the group being changed).
 */
static int read_permissions(struct ec2 *c, const struct sim_secgroup *target, struct sim_rule **out,
			    size_t *n_out)
{
	unsigned *idx;
	size_t n = indexes(c, "IpPermissions", &idx);
	struct sim_rule *rules = NULL;
	size_t nr = 0;
	bool legacy = n == 0 && P(c, "IpProtocol");
	int ret = -1;

	for (size_t i = 0; i < (legacy ? 1 : n); i++) {
		char pre[64], name[128];
		const char *proto_raw, *proto;
		int64_t from = -1, to = -1;
		bool has_from, has_to;
		unsigned *mi;
		size_t nm;

		if (legacy)
			pre[0] = '\0';
		else
			snprintf(pre, sizeof(pre), "IpPermissions.%u.", idx[i]);
		snprintf(name, sizeof(name), "%sIpProtocol", pre);
		proto_raw = P(c, name);
		if (!proto_raw) {
			FAIL400(c, "MissingParameter", "The request must contain the parameter %s",
				name);
			goto out;
		}
		proto = norm_protocol(proto_raw);
		if (!proto) {
			FAIL400(c, "InvalidParameterValue",
				"Invalid value '%s' for IP protocol. Unknown protocol.", proto_raw);
			goto out;
		}
		snprintf(name, sizeof(name), "%sFromPort", pre);
		if (get_int(c, name, -1, 65535, &from, &has_from))
			goto out;
		snprintf(name, sizeof(name), "%sToPort", pre);
		if (get_int(c, name, -1, 65535, &to, &has_to))
			goto out;
		if ((!strcmp(proto, "tcp") || !strcmp(proto, "udp")) &&
		    (!has_from || !has_to || from < 0 || to < from)) {
			FAIL400(c, "InvalidParameterValue",
				"Invalid port range (%lld..%lld) for protocol %s", (long long)from,
				(long long)to, proto);
			goto out;
		}
		/* -1 is every protocol on every port, whatever range was given */
		if (!strcmp(proto, "-1"))
			from = to = -1;
		if (legacy) {
			const char *one = P(c, "CidrIp");
			if (one && !cidr_ok(one)) {
				FAIL400(c, "InvalidParameterValue", "CIDR block %s is malformed",
					one);
				goto out;
			}
			if (one)
				push_rule(&rules, &nr, proto, from, to, one, NULL, NULL);
			continue;
		}
		snprintf(name, sizeof(name), "%sIpRanges", pre);
		nm = indexes(c, name, &mi);
		for (size_t k = 0; k < nm; k++) {
			const char *cidr = PF(c, "%sIpRanges.%u.CidrIp", pre, mi[k]);
			if (!cidr || !cidr_ok(cidr)) {
				FAIL400(c, "InvalidParameterValue", "CIDR block %s is malformed",
					cidr ? cidr : "(missing)");
				free(mi);
				goto out;
			}
			push_rule(&rules, &nr, proto, from, to, cidr, NULL,
				  PF(c, "%sIpRanges.%u.Description", pre, mi[k]));
		}
		free(mi);
		snprintf(name, sizeof(name), "%sGroups", pre);
		nm = indexes(c, name, &mi);
		for (size_t k = 0; k < nm; k++) {
			const struct sim_secgroup *g = source_group(c, target, pre, mi[k]);
			if (!g) {
				free(mi);
				goto out;
			}
			push_rule(&rules, &nr, proto, from, to, NULL, g->id,
				  PF(c, "%sGroups.%u.Description", pre, mi[k]));
		}
		free(mi);
	}
	if (!nr) {
		FAIL400(c, "MissingParameter",
			"The request must contain the parameter IpPermissions");
		goto out;
	}
	*out = rules;
	*n_out = nr;
	rules = NULL;
	ret = 0;
out:
	free(idx);
	free(rules);
	return ret;
}

static void write_rule_text(char *out, size_t size, const struct sim_rule *r)
{
	char proto[16];

	snprintf(proto, sizeof(proto), "%s", r->protocol);
	for (char *p = proto; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	snprintf(out, size, "peer: %s, %s, from port: %d, to port: %d, ALLOW",
		 r->source_group[0] ? r->source_group : r->cidr, proto, r->from_port, r->to_port);
}

static int authorize_ingress(struct ec2 *c)
{
	struct sim_secgroup *g = sg_from_params(c);
	struct sim_rule *rules = NULL;
	size_t n = 0;

	if (!g || read_permissions(c, g, &rules, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < g->n_rules && !dup; k++)
			dup = same_rule(&g->rules[k], &rules[i]);
		for (size_t k = 0; k < i && !dup; k++)
			dup = same_rule(&rules[k], &rules[i]);
		if (dup) {
			char text[256];
			write_rule_text(text, sizeof(text), &rules[i]);
			free(rules);
			return FAIL400(c, "InvalidPermission.Duplicate",
				       "the specified rule \"%s\" already exists", text);
		}
	}
	ec2_begin(c);
	T(c, "return", "true");
	S(c, "securityGroupRuleSet");
	for (size_t i = 0; i < n; i++) {
		char rid[SIM_ID_MAX];
		sim_world_add_rule(g, &rules[i]);
		sim_world_new_id(c->sim->world, SIM_AWS, "sgr-", rid);
		S(c, "item");
		T(c, "securityGroupRuleId", rid);
		T(c, "groupId", g->id);
		T(c, "groupOwnerId", c->sim->cfg.aws_account);
		T(c, "isEgress", "false");
		T(c, "ipProtocol", rules[i].protocol);
		TF(c, "fromPort", "%d", rules[i].from_port);
		TF(c, "toPort", "%d", rules[i].to_port);
		if (rules[i].source_group[0]) {
			S(c, "referencedGroupInfo");
			T(c, "groupId", rules[i].source_group);
			T(c, "userId", c->sim->cfg.aws_account);
			E(c);
		} else {
			T(c, "cidrIpv4", rules[i].cidr);
		}
		if (rules[i].description[0])
			T(c, "description", rules[i].description);
		E(c);
	}
	E(c);
	free(rules);
	return ec2_finish(c);
}

static const char *const sg_filters[] = { "tag:",	 "tag-key",  "tag-value",
					  "group-name",	 "group-id", "vpc-id",
					  "description", "owner-id", NULL };

static bool sg_matches(struct ec2 *c, const struct sim_secgroup *g, const struct filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct filter *f = &fs->f[i];
		bool m = false;

		if (is_tag_filter(f->name))
			m = tag_filter(f, &g->tags);
		else if (!strcmp(f->name, "group-name"))
			m = any_value(f, g->name);
		else if (!strcmp(f->name, "group-id"))
			m = any_value(f, g->id);
		else if (!strcmp(f->name, "vpc-id"))
			m = any_value(f, g->vpc);
		else if (!strcmp(f->name, "description"))
			m = any_value(f, g->description);
		else if (!strcmp(f->name, "owner-id"))
			m = any_value(f, c->sim->cfg.aws_account);
		if (!m)
			return false;
	}
	return true;
}

static void write_sg(struct ec2 *c, const struct sim_secgroup *g)
{
	S(c, "item");
	T(c, "ownerId", c->sim->cfg.aws_account);
	T(c, "groupId", g->id);
	T(c, "groupName", g->name);
	T(c, "groupDescription", g->description);
	T(c, "vpcId", g->vpc);
	S(c, "ipPermissions");
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct sim_rule *r = &g->rules[i];
		S(c, "item");
		T(c, "ipProtocol", r->protocol);
		if (strcmp(r->protocol, "-1") != 0) {
			TF(c, "fromPort", "%d", r->from_port);
			TF(c, "toPort", "%d", r->to_port);
		}
		/* one source per rule: a group (its members) or an address range */
		S(c, "groups");
		if (r->source_group[0]) {
			S(c, "item");
			T(c, "userId", c->sim->cfg.aws_account);
			T(c, "groupId", r->source_group);
			if (r->description[0])
				T(c, "description", r->description);
			E(c);
		}
		E(c);
		S(c, "ipRanges");
		if (!r->source_group[0]) {
			S(c, "item");
			T(c, "cidrIp", r->cidr);
			if (r->description[0])
				T(c, "description", r->description);
			E(c);
		}
		E(c);
		S(c, "ipv6Ranges");
		E(c);
		S(c, "prefixListIds");
		E(c);
		E(c);
	}
	E(c);
	S(c, "ipPermissionsEgress");
	S(c, "item");
	T(c, "ipProtocol", "-1");
	S(c, "groups");
	E(c);
	S(c, "ipRanges");
	S(c, "item");
	T(c, "cidrIp", "0.0.0.0/0");
	E(c);
	E(c);
	S(c, "ipv6Ranges");
	E(c);
	S(c, "prefixListIds");
	E(c);
	E(c);
	E(c);
	write_tags(c, &g->tags);
	E(c);
}

static int describe_security_groups(struct ec2 *c)
{
	const char **ids = NULL, **names = NULL;
	size_t ni = list(c, "GroupId", &ids), nn = list(c, "GroupName", &names), n;
	struct sim_secgroup **all = NULL;
	struct filters fs = { 0 };
	int64_t max;
	bool has_max;
	int ret = -1;

	if (get_max_results(c, 5, 1000, &max, &has_max) || get_filters(c, sg_filters, &fs))
		goto out;
	n = sim_world_list_sgs(c->sim->world, SIM_AWS, c->region, &all);
	for (size_t i = 0; i < ni + nn; i++) {
		const char *want = i < ni ? ids[i] : names[i - ni];
		bool found = false;
		for (size_t k = 0; k < n && !found; k++)
			found = strcmp(i < ni ? all[k]->id : all[k]->name, want) == 0;
		if (!found) {
			if (i < ni)
				FAIL400(c, "InvalidGroup.NotFound",
					"The security group '%s' does not exist", want);
			else
				FAIL400(c, "InvalidGroup.NotFound",
					"The security group '%s' does not exist in default VPC "
					"'%s'",
					want, EC2_DEFAULT_VPC);
			goto out;
		}
	}
	ec2_begin(c);
	S(c, "securityGroupInfo");
	for (size_t k = 0; k < n; k++) {
		bool wanted = ni + nn == 0;
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(all[k]->id, ids[i]) == 0;
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(all[k]->name, names[i]) == 0;
		if (wanted && sg_matches(c, all[k], &fs))
			write_sg(c, all[k]);
	}
	E(c);
	ret = ec2_finish(c);
out:
	free(ids);
	free(names);
	free(all);
	filters_release(&fs);
	return ret;
}

static int delete_security_group(struct ec2 *c)
{
	struct sim_secgroup *g = sg_from_params(c);
	char id[SIM_ID_MAX];

	if (!g)
		return -1;
	if (sim_world_sg_in_use(c->sim->world, g))
		return FAIL400(c, "DependencyViolation", "resource %s has a dependent object",
			       g->id);
	snprintf(id, sizeof(id), "%s", g->id);
	sim_world_delete_sg(c->sim->world, g);
	ec2_begin(c);
	T(c, "return", "true");
	T(c, "groupId", id);
	return ec2_finish(c);
}

/* --- catalogue ------------------------------------------------------------------------ */

static const char *image_owner_id(const struct sim_image *im)
{
	return strcmp(im->owner, "amazon") == 0 ? EC2_AMAZON_ID : im->owner;
}

static const char *const image_filters[] = {
	"name",	       "architecture",	   "state",	"image-id",	    "owner-alias",
	"owner-id",    "image-type",	   "is-public", "root-device-type", "virtualization-type",
	"description", "platform-details", "tag:",	"tag-key",	    "tag-value",
	NULL,
};

static bool image_matches(const struct sim_image *im, const struct filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct filter *f = &fs->f[i];
		const char *n = f->name;
		bool m = false;

		if (!strcmp(n, "name"))
			m = any_value(f, im->name);
		else if (!strcmp(n, "architecture"))
			m = any_value(f, "x86_64");
		else if (!strcmp(n, "state"))
			m = any_value(f, "available");
		else if (!strcmp(n, "image-id"))
			m = any_value(f, im->id);
		else if (!strcmp(n, "owner-alias"))
			m = any_value(f, strcmp(im->owner, "amazon") == 0 ? "amazon" : "");
		else if (!strcmp(n, "owner-id"))
			m = any_value(f, image_owner_id(im));
		else if (!strcmp(n, "image-type"))
			m = any_value(f, "machine");
		else if (!strcmp(n, "is-public"))
			m = any_value(f, "true");
		else if (!strcmp(n, "root-device-type"))
			m = any_value(f, "ebs");
		else if (!strcmp(n, "virtualization-type"))
			m = any_value(f, "hvm");
		else if (!strcmp(n, "description"))
			m = any_value(f, im->description);
		else if (!strcmp(n, "platform-details"))
			m = any_value(f, "Linux/UNIX");
		if (!m)
			return false;
	}
	return true;
}

static int describe_images(struct ec2 *c)
{
	const struct sim_image *imgs;
	size_t n = sim_catalog_images(SIM_AWS, &imgs);
	const char **ids = NULL, **owners = NULL;
	size_t ni = list(c, "ImageId", &ids), no = list(c, "Owner", &owners);
	struct filters fs = { 0 };
	int64_t max;
	bool has_max, b;
	uint64_t start;
	size_t shown = 0, pos;
	int ret = -1;

	if (get_max_results(c, 5, 1000, &max, &has_max) || parse_token(c, 'm', &start) ||
	    get_filters(c, image_filters, &fs) || get_bool(c, "IncludeDeprecated", false, &b) ||
	    get_bool(c, "IncludeDisabled", false, &b))
		goto out;
	for (size_t i = 0; i < ni; i++) {
		if (!id_ok(ids[i], "ami-")) {
			FAIL400(c, "InvalidAMIID.Malformed",
				"Invalid id: \"%s\" (expecting \"ami-...\")", ids[i]);
			goto out;
		}
		if (!sim_catalog_image(SIM_AWS, ids[i])) {
			FAIL400(c, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist",
				ids[i]);
			goto out;
		}
	}
	ec2_begin(c);
	S(c, "imagesSet");
	for (pos = (size_t)start; pos < n && (int64_t)shown < max; pos++) {
		const struct sim_image *im = &imgs[pos];
		bool wanted = ni == 0, owner_ok = no == 0;
		char root[128];

		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(ids[i], im->id) == 0;
		for (size_t i = 0; i < no; i++)
			owner_ok = owner_ok || strcmp(owners[i], im->owner) == 0 ||
				strcmp(owners[i], image_owner_id(im)) == 0 ||
				(strcmp(owners[i], "self") == 0 &&
				 strcmp(image_owner_id(im), c->sim->cfg.aws_account) == 0);
		if (!wanted || !owner_ok || !image_matches(im, &fs))
			continue;
		shown++;
		S(c, "item");
		T(c, "imageId", im->id);
		TF(c, "imageLocation", "%s/%s", im->owner, im->name);
		T(c, "imageState", "available");
		T(c, "imageOwnerId", image_owner_id(im));
		T(c, "creationDate", im->created);
		T(c, "isPublic", "true");
		T(c, "architecture", "x86_64");
		T(c, "imageType", "machine");
		T(c, "platformDetails", "Linux/UNIX");
		T(c, "usageOperation", "RunInstances");
		if (!strcmp(im->owner, "amazon"))
			T(c, "imageOwnerAlias", "amazon");
		T(c, "name", im->name);
		T(c, "description", im->description);
		T(c, "rootDeviceType", "ebs");
		T(c, "rootDeviceName", "/dev/sda1");
		S(c, "blockDeviceMapping");
		S(c, "item");
		T(c, "deviceName", "/dev/sda1");
		S(c, "ebs");
		snprintf(root, sizeof(root), "snap-%s", im->id + 4);
		T(c, "snapshotId", root);
		T(c, "volumeSize", im->gpu_ready ? "75" : "8");
		T(c, "deleteOnTermination", "true");
		T(c, "volumeType", "gp3");
		T(c, "encrypted", "false");
		E(c);
		E(c);
		E(c);
		T(c, "virtualizationType", "hvm");
		T(c, "hypervisor", "xen");
		T(c, "enaSupport", "true");
		T(c, "bootMode", "uefi-preferred");
		E(c);
	}
	E(c);
	if (has_max) {
		bool more = false;
		for (size_t k = pos; k < n && !more; k++)
			more = image_matches(&imgs[k], &fs);
		if (more) {
			char tok[64];
			make_token('m', pos, tok);
			T(c, "nextToken", tok);
		}
	}
	ret = ec2_finish(c);
out:
	free(ids);
	free(owners);
	filters_release(&fs);
	return ret;
}

static const char *const itype_filters[] = { "instance-type", "current-generation",
					     "processor-info.supported-architecture",
					     "free-tier-eligible", NULL };

static bool itype_matches(const struct sim_itype *t, const struct filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct filter *f = &fs->f[i];
		bool m = false;

		if (!strcmp(f->name, "instance-type"))
			m = any_value(f, t->name);
		else if (!strcmp(f->name, "current-generation"))
			m = any_value(f, "true");
		else if (!strcmp(f->name, "processor-info.supported-architecture"))
			m = any_value(f, "x86_64");
		else if (!strcmp(f->name, "free-tier-eligible"))
			m = any_value(f, "false");
		if (!m)
			return false;
	}
	return true;
}

static void write_itype(struct ec2 *c, const struct sim_itype *t)
{
	S(c, "item");
	T(c, "instanceType", t->name);
	T(c, "currentGeneration", "true");
	T(c, "freeTierEligible", "false");
	S(c, "supportedUsageClasses");
	T(c, "item", "on-demand");
	T(c, "item", "spot");
	E(c);
	S(c, "supportedRootDeviceTypes");
	T(c, "item", "ebs");
	E(c);
	S(c, "supportedVirtualizationTypes");
	T(c, "item", "hvm");
	E(c);
	T(c, "bareMetal", "false");
	T(c, "hypervisor", "nitro");
	S(c, "processorInfo");
	S(c, "supportedArchitectures");
	T(c, "item", "x86_64");
	E(c);
	E(c);
	S(c, "vCpuInfo");
	TF(c, "defaultVCpus", "%u", t->vcpu);
	E(c);
	S(c, "memoryInfo");
	TF(c, "sizeInMiB", "%u", t->memory_mib);
	E(c);
	T(c, "instanceStorageSupported", "false");
	S(c, "ebsInfo");
	T(c, "ebsOptimizedSupport", "default");
	T(c, "encryptionSupport", "supported");
	T(c, "nvmeSupport", "required");
	E(c);
	S(c, "networkInfo");
	T(c, "networkPerformance", t->gpus >= 8 ? "100 Gigabit" : "Up to 25 Gigabit");
	T(c, "enaSupport", "required");
	E(c);
	if (t->gpus) {
		S(c, "gpuInfo");
		S(c, "gpus");
		S(c, "item");
		T(c, "name", t->gpu_model);
		T(c, "manufacturer", t->gpu_vendor);
		TF(c, "count", "%u", t->gpus);
		S(c, "memoryInfo");
		TF(c, "sizeInMiB", "%u", t->gpu_memory_mib);
		E(c);
		E(c);
		E(c);
		TF(c, "totalGpuMemoryInMiB", "%u", t->gpus * t->gpu_memory_mib);
		E(c);
	}
	S(c, "placementGroupInfo");
	S(c, "supportedStrategies");
	T(c, "item", "cluster");
	T(c, "item", "partition");
	T(c, "item", "spread");
	E(c);
	E(c);
	T(c, "hibernationSupported", "false");
	T(c, "burstablePerformanceSupported", gc_starts_with(t->name, "t") ? "true" : "false");
	T(c, "autoRecoverySupported", "true");
	S(c, "supportedBootModes");
	T(c, "item", "legacy-bios");
	T(c, "item", "uefi");
	E(c);
	E(c);
}

static int describe_instance_types(struct ec2 *c)
{
	const struct sim_itype *types;
	size_t n = sim_catalog_itypes(SIM_AWS, &types), pos, shown = 0;
	const char **want = NULL;
	size_t nw = list(c, "InstanceType", &want);
	struct filters fs = { 0 };
	struct gc_buf missing = GC_BUF_INIT(4096);
	int64_t max;
	bool has_max;
	uint64_t start;
	int ret = -1;

	if (get_max_results(c, 5, 100, &max, &has_max) || parse_token(c, 't', &start) ||
	    get_filters(c, itype_filters, &fs))
		goto out;
	for (size_t i = 0; i < nw; i++)
		if (!sim_catalog_itype(SIM_AWS, want[i]))
			gc_buf_addf(&missing, "%s%s", missing.len ? ", " : "", want[i]);
	if (missing.len) {
		FAIL400(c, "InvalidInstanceType",
			"The following supplied instance types do not exist: [%s]", missing.data);
		goto out;
	}
	ec2_begin(c);
	S(c, "instanceTypeSet");
	for (pos = (size_t)start; pos < n && (int64_t)shown < max; pos++) {
		bool wanted = nw == 0;
		for (size_t i = 0; i < nw; i++)
			wanted = wanted || strcmp(want[i], types[pos].name) == 0;
		if (!wanted || !itype_matches(&types[pos], &fs))
			continue;
		write_itype(c, &types[pos]);
		shown++;
	}
	E(c);
	{
		bool more = false;
		for (size_t k = pos; k < n && !more; k++) {
			bool wanted = nw == 0;
			for (size_t i = 0; i < nw; i++)
				wanted = wanted || strcmp(want[i], types[k].name) == 0;
			more = wanted && itype_matches(&types[k], &fs);
		}
		if (more) {
			char tok[64];
			make_token('t', pos, tok);
			T(c, "nextToken", tok);
		}
	}
	ret = ec2_finish(c);
out:
	free(want);
	gc_buf_release(&missing);
	filters_release(&fs);
	return ret;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* "2026-11-11T10:00:00Z" or with fractional seconds / "+00:00"; -1 when malformed */
static int parse_iso(const char *s, int64_t *out)
{
	unsigned Y, M, D, h, m, sec;
	int used = 0;

	if (sscanf(s, "%4u-%2u-%2uT%2u:%2u:%2u%n", &Y, &M, &D, &h, &m, &sec, &used) != 6 || M < 1 ||
	    M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	s += used;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	if (strcmp(s, "Z") != 0 && strcmp(s, "+00:00") != 0 && *s != '\0')
		return -1;
	*out = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec;
	return 0;
}

static const char *const spot_filters[] = { "availability-zone",   "instance-type",
					    "product-description", "spot-price",
					    "timestamp",	   NULL };

static int describe_spot_price_history(struct ec2 *c)
{
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_AWS, &types);
	const char **want = NULL, **prods = NULL;
	size_t nw = list(c, "InstanceType", &want), np = list(c, "ProductDescription", &prods);
	const char *zone = P(c, "AvailabilityZone"), *st = P(c, "StartTime"), *et = P(c, "EndTime");
	struct filters fs = { 0 };
	int64_t max, t0, t1, stamp;
	bool has_max, linux_ok = np == 0;
	uint64_t start, pos = 0, shown = 0;
	size_t nz = 0;
	char ts[32];
	int ret = -1;

	if (get_max_results(c, 1, 1000, &max, &has_max) || parse_token(c, 's', &start) ||
	    get_filters(c, spot_filters, &fs))
		goto out;
	if ((st && parse_iso(st, &t0) != 0) || (et && parse_iso(et, &t1) != 0)) {
		FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for %s", st ? st : et,
			st && parse_iso(st, &t0) != 0 ? "startTime" : "endTime");
		goto out;
	}
	if (zone && !sim_catalog_zone_ok(region, zone)) {
		FAIL400(c, "InvalidParameterValue", "Invalid availability zone: [%s]", zone);
		goto out;
	}
	for (size_t i = 0; i < nw; i++)
		if (!sim_catalog_itype(SIM_AWS, want[i])) {
			bad_value(c, "InstanceType", want[i]);
			goto out;
		}
	for (size_t i = 0; i < np; i++)
		linux_ok = linux_ok || gc_starts_with(prods[i], "Linux/UNIX");
	for (; region->zones[nz]; nz++)
		;
	/* the price is fixed, so one record an hour old describes the whole window */
	stamp = (int64_t)c->req->now - (int64_t)c->req->now % 3600;
	iso_time(stamp, ts);

	ec2_begin(c);
	S(c, "spotPriceHistorySet");
	for (size_t t = 0; t < nt && linux_ok; t++) {
		bool wanted = nw == 0;
		for (size_t i = 0; i < nw; i++)
			wanted = wanted || strcmp(want[i], types[t].name) == 0;
		if (!wanted)
			continue;
		for (size_t z = 0; z < nz; z++, pos++) {
			char price[32];
			bool m = true;

			if (pos < start || (int64_t)shown >= max)
				continue;
			if (zone && strcmp(zone, region->zones[z]) != 0)
				continue;
			snprintf(price, sizeof(price), "%.6f", sim_catalog_price(&types[t], true));
			for (size_t f = 0; f < fs.n && m; f++) {
				const char *fn = fs.f[f].name;
				m = !strcmp(fn, "availability-zone")
					? any_value(&fs.f[f], region->zones[z])
					: !strcmp(fn, "instance-type")
					? any_value(&fs.f[f], types[t].name)
					: !strcmp(fn, "product-description")
					? any_value(&fs.f[f], "Linux/UNIX")
					: !strcmp(fn, "spot-price") ? any_value(&fs.f[f], price)
								    : any_value(&fs.f[f], ts);
			}
			if (!m)
				continue;
			S(c, "item");
			T(c, "instanceType", types[t].name);
			T(c, "productDescription", "Linux/UNIX");
			T(c, "spotPrice", price);
			T(c, "timestamp", ts);
			T(c, "availabilityZone", region->zones[z]);
			E(c);
			shown++;
		}
	}
	E(c);
	if ((int64_t)shown >= max && pos > start) {
		/* pos counted every (type, zone) slot; the next page starts after the last
		 * one shown, found again by counting */
		uint64_t seen = 0, slot = 0, next = 0;
		for (size_t t = 0; t < nt; t++) {
			bool wanted = nw == 0;
			for (size_t i = 0; i < nw; i++)
				wanted = wanted || strcmp(want[i], types[t].name) == 0;
			if (!wanted)
				continue;
			for (size_t z = 0; z < nz; z++, slot++)
				if (slot >= start && (!zone || !strcmp(zone, region->zones[z])) &&
				    seen < (uint64_t)max) {
					seen++;
					next = slot + 1;
				}
		}
		if (next < pos) {
			char tok[64];
			make_token('s', next, tok);
			T(c, "nextToken", tok);
		}
	}
	ret = ec2_finish(c);
out:
	free(want);
	free(prods);
	filters_release(&fs);
	return ret;
}

static int get_console_output(struct ec2 *c)
{
	const char *id;
	struct sim_instance *in;
	struct gc_buf out = GC_BUF_INIT(16384);
	char ts[32];
	bool latest;

	if (require(c, "InstanceId", &id) || get_bool(c, "Latest", false, &latest))
		return -1;
	if (!id_ok(id, "i-"))
		return FAIL400(c, "InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id);
	in = find_instance(c, id);
	if (!in)
		return FAIL400(c, "InvalidInstanceID.NotFound",
			       "The instance ID '%s' does not exist", id);
	/* nothing is printed before the instance boots */
	if (in->state != SIM_PENDING)
		gc_base64_encode(&out, in->console, strlen(in->console));
	iso_time((int64_t)c->req->now, ts);
	ec2_begin(c);
	T(c, "instanceId", in->id);
	T(c, "timestamp", ts);
	T(c, "output", out.data);
	gc_buf_release(&out);
	return ec2_finish(c);
}

static const char *const zone_filters[] = { "zone-name", "region-name",	  "state", "zone-type",
					    "zone-id",	 "opt-in-status", NULL };

static int describe_availability_zones(struct ec2 *c)
{
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const char **names = NULL, **ids = NULL;
	size_t nn = list(c, "ZoneName", &names), ni = list(c, "ZoneId", &ids);
	struct filters fs = { 0 };
	bool all;
	int ret = -1;

	if (get_bool(c, "AllAvailabilityZones", false, &all) || get_filters(c, zone_filters, &fs))
		goto out;
	for (size_t i = 0; i < nn; i++)
		if (!sim_catalog_zone_ok(region, names[i])) {
			FAIL400(c, "InvalidParameterValue",
				"The zone '%s' does not exist in the region %s", names[i],
				c->region);
			goto out;
		}
	ec2_begin(c);
	S(c, "availabilityZoneInfo");
	for (size_t z = 0; region->zones[z]; z++) {
		const char *zn = region->zones[z];
		char zid[32], prefix[8] = "";
		bool wanted = nn + ni == 0, m = true;
		size_t pl = 0;

		/* zone ids look like "use1-az1": the region's initials, a number */
		for (const char *s = c->region; *s && pl < 4; s++)
			if (s == c->region || s[-1] == '-')
				prefix[pl++] = *s;
		snprintf(zid, sizeof(zid), "%.3s%c-az%zu", prefix, c->region[strlen(c->region) - 1],
			 z + 1);
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(names[i], zn) == 0;
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(ids[i], zid) == 0;
		for (size_t f = 0; f < fs.n && m; f++) {
			const char *fn = fs.f[f].name;
			m = !strcmp(fn, "zone-name")	     ? any_value(&fs.f[f], zn)
				: !strcmp(fn, "region-name") ? any_value(&fs.f[f], c->region)
				: !strcmp(fn, "state")	     ? any_value(&fs.f[f], "available")
				: !strcmp(fn, "zone-type")
				? any_value(&fs.f[f], "availability-zone")
				: !strcmp(fn, "zone-id")
				? any_value(&fs.f[f], zid)
				: any_value(&fs.f[f], "opt-in-not-required");
		}
		if (!wanted || !m)
			continue;
		S(c, "item");
		T(c, "optInStatus", "opt-in-not-required");
		T(c, "zoneName", zn);
		T(c, "zoneId", zid);
		T(c, "groupName", c->region);
		T(c, "networkBorderGroup", c->region);
		T(c, "zoneType", "availability-zone");
		T(c, "zoneState", "available");
		T(c, "regionName", c->region);
		S(c, "messageSet");
		E(c);
		E(c);
	}
	E(c);
	ret = ec2_finish(c);
out:
	free(names);
	free(ids);
	filters_release(&fs);
	return ret;
}

static const char *const region_filters[] = { "region-name", "endpoint", "opt-in-status", NULL };

static int describe_regions(struct ec2 *c)
{
	const struct sim_region *regions;
	size_t n = sim_catalog_regions(SIM_AWS, &regions);
	const char **names = NULL;
	size_t nn = list(c, "RegionName", &names);
	struct filters fs = { 0 };
	bool all;
	int ret = -1;

	if (get_bool(c, "AllRegions", false, &all) || get_filters(c, region_filters, &fs))
		goto out;
	for (size_t i = 0; i < nn; i++)
		if (!sim_catalog_region(SIM_AWS, names[i])) {
			FAIL400(c, "InvalidParameterValue", "Invalid region: %s", names[i]);
			goto out;
		}
	ec2_begin(c);
	S(c, "regionInfo");
	for (size_t r = 0; r < n; r++) {
		char endpoint[96];
		bool wanted = nn == 0, m = true;

		snprintf(endpoint, sizeof(endpoint), "ec2.%s.amazonaws.com", regions[r].name);
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(names[i], regions[r].name) == 0;
		for (size_t f = 0; f < fs.n && m; f++) {
			const char *fn = fs.f[f].name;
			m = !strcmp(fn, "region-name") ? any_value(&fs.f[f], regions[r].name)
				: !strcmp(fn, "endpoint")
				? any_value(&fs.f[f], endpoint)
				: any_value(&fs.f[f], "opt-in-not-required");
		}
		if (!wanted || !m)
			continue;
		S(c, "item");
		T(c, "regionName", regions[r].name);
		T(c, "regionEndpoint", endpoint);
		T(c, "optInStatus", "opt-in-not-required");
		E(c);
	}
	E(c);
	ret = ec2_finish(c);
out:
	free(names);
	filters_release(&fs);
	return ret;
}

/* --- the action table ----------------------------------------------------------------- */

#define TAGSPEC                                                            \
	"TagSpecification.N.ResourceType", "TagSpecification.N.Tag.N.Key", \
		"TagSpecification.N.Tag.N.Value"
#define FILTERS "Filter.N.Name", "Filter.N.Value.N"
#define PAGING	"MaxResults", "NextToken"

struct ec2_action {
	const char *name;
	int (*fn)(struct ec2 *c);
	bool describe; /* non-mutating: eligible for the unfiltered bucket */
	const char *const *params;
};

static const char *const p_run[] = {
	"ImageId",
	"InstanceType",
	"MinCount",
	"MaxCount",
	"KeyName",
	"SecurityGroupId.N",
	"SecurityGroup.N",
	"SubnetId",
	"UserData",
	"ClientToken",
	"PrivateIpAddress",
	"EbsOptimized",
	"DisableApiTermination",
	"DisableApiStop",
	"InstanceInitiatedShutdownBehavior",
	"Monitoring.Enabled",
	"IamInstanceProfile.Name",
	"IamInstanceProfile.Arn",
	"Placement.AvailabilityZone",
	"Placement.GroupName",
	"Placement.Tenancy",
	"Placement.PartitionNumber",
	"BlockDeviceMapping.N.DeviceName",
	"BlockDeviceMapping.N.NoDevice",
	"BlockDeviceMapping.N.VirtualName",
	"BlockDeviceMapping.N.Ebs.VolumeSize",
	"BlockDeviceMapping.N.Ebs.VolumeType",
	"BlockDeviceMapping.N.Ebs.DeleteOnTermination",
	"BlockDeviceMapping.N.Ebs.Encrypted",
	"BlockDeviceMapping.N.Ebs.Iops",
	"BlockDeviceMapping.N.Ebs.Throughput",
	"BlockDeviceMapping.N.Ebs.SnapshotId",
	"BlockDeviceMapping.N.Ebs.KmsKeyId",
	"NetworkInterface.N.DeviceIndex",
	"NetworkInterface.N.SubnetId",
	"NetworkInterface.N.AssociatePublicIpAddress",
	"NetworkInterface.N.DeleteOnTermination",
	"NetworkInterface.N.Description",
	"NetworkInterface.N.SecurityGroupId.N",
	"NetworkInterface.N.InterfaceType",
	"NetworkInterface.N.NetworkCardIndex",
	"InstanceMarketOptions.MarketType",
	"InstanceMarketOptions.SpotOptions.SpotInstanceType",
	"InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
	"InstanceMarketOptions.SpotOptions.MaxPrice",
	"InstanceMarketOptions.SpotOptions.ValidUntil",
	"InstanceMarketOptions.SpotOptions.BlockDurationMinutes",
	"MetadataOptions.HttpTokens",
	"MetadataOptions.HttpEndpoint",
	"MetadataOptions.HttpPutResponseHopLimit",
	"MetadataOptions.HttpProtocolIpv6",
	"MetadataOptions.InstanceMetadataTags",
	TAGSPEC,
	NULL,
};
static const char *const p_describe_instances[] = { "InstanceId.N", FILTERS, PAGING, NULL };
static const char *const p_terminate[] = { "InstanceId.N", "Force", "SkipOsShutdown", NULL };
static const char *const p_tags[] = { "ResourceId.N", "Resource.N", "Tag.N.Key", "Tag.N.Value",
				      NULL };
static const char *const p_import_key[] = { "KeyName", "PublicKeyMaterial", TAGSPEC, NULL };
static const char *const p_describe_keys[] = { "KeyName.N", "KeyPairId.N", "IncludePublicKey",
					       FILTERS, NULL };
static const char *const p_delete_key[] = { "KeyName", "KeyPairId", NULL };
static const char *const p_create_sg[] = { "GroupName", "GroupDescription", "VpcId", TAGSPEC,
					   NULL };
static const char *const p_authorize[] = {
	"GroupId",
	"GroupName",
	"IpProtocol",
	"FromPort",
	"ToPort",
	"CidrIp",
	"IpPermissions.N.IpProtocol",
	"IpPermissions.N.FromPort",
	"IpPermissions.N.ToPort",
	"IpPermissions.N.IpRanges.N.CidrIp",
	"IpPermissions.N.IpRanges.N.Description",
	"IpPermissions.N.Groups.N.GroupId",
	"IpPermissions.N.Groups.N.GroupName",
	"IpPermissions.N.Groups.N.UserId",
	"IpPermissions.N.Groups.N.Description",
	TAGSPEC,
	NULL,
};
static const char *const p_describe_sgs[] = { "GroupId.N", "GroupName.N", FILTERS, PAGING, NULL };
static const char *const p_delete_sg[] = { "GroupId", "GroupName", NULL };
static const char *const p_images[] = {
	"ImageId.N",	   "Owner.N", "ExecutableBy.N", "IncludeDeprecated",
	"IncludeDisabled", FILTERS,   PAGING,		NULL
};
static const char *const p_itypes[] = { "InstanceType.N", FILTERS, PAGING, NULL };
static const char *const p_spot[] = { "InstanceType.N",
				      "ProductDescription.N",
				      "AvailabilityZone",
				      "StartTime",
				      "EndTime",
				      FILTERS,
				      PAGING,
				      NULL };
static const char *const p_console[] = { "InstanceId", "Latest", NULL };
static const char *const p_zones[] = { "ZoneName.N", "ZoneId.N", "AllAvailabilityZones", FILTERS,
				       NULL };
static const char *const p_regions[] = { "RegionName.N", "AllRegions", FILTERS, NULL };

static const struct ec2_action actions[] = {
	{ "AuthorizeSecurityGroupIngress", authorize_ingress, false, p_authorize },
	{ "CreateSecurityGroup", create_security_group, false, p_create_sg },
	{ "CreateTags", create_tags, false, p_tags },
	{ "DeleteKeyPair", delete_key_pair, false, p_delete_key },
	{ "DeleteSecurityGroup", delete_security_group, false, p_delete_sg },
	{ "DeleteTags", delete_tags, false, p_tags },
	{ "DescribeAvailabilityZones", describe_availability_zones, true, p_zones },
	{ "DescribeImages", describe_images, true, p_images },
	{ "DescribeInstanceTypes", describe_instance_types, true, p_itypes },
	{ "DescribeInstances", describe_instances, true, p_describe_instances },
	{ "DescribeKeyPairs", describe_key_pairs, true, p_describe_keys },
	{ "DescribeRegions", describe_regions, true, p_regions },
	{ "DescribeSecurityGroups", describe_security_groups, true, p_describe_sgs },
	{ "DescribeSpotPriceHistory", describe_spot_price_history, true, p_spot },
	{ "GetConsoleOutput", get_console_output, false, p_console },
	{ "ImportKeyPair", import_key_pair, false, p_import_key },
	{ "RunInstances", run_instances, false, p_run },
	{ "TerminateInstances", terminate_instances, false, p_terminate },
};

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
			return FAIL400(c, "UnknownParameter", "The parameter %s is not recognized",
				       name);
		}
		if (bad)
			return FAIL400(c, "InvalidParameterValue",
				       "The index %u in parameter %s is out of range (at most %d)",
				       bad, name, EC2_MAX_INDEX);
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

static int parse_amz_date(const char *s, int64_t *out)
{
	unsigned Y, M, D, h, m, sec;
	char z = 0;

	if (!s || strlen(s) != AWS_SIGV4_TIMESTAMP_LEN ||
	    sscanf(s, "%4u%2u%2uT%2u%2u%2u%c", &Y, &M, &D, &h, &m, &sec, &z) != 7 || z != 'Z' ||
	    M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -1;
	*out = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec;
	return 0;
}

static bool is_host(const char *name)
{
	return (name[0] == 'h' || name[0] == 'H') && (name[1] == 'o' || name[1] == 'O') &&
		(name[2] == 's' || name[2] == 'S') && (name[3] == 't' || name[3] == 'T') &&
		name[4] == '\0';
}

static int authenticate(struct ec2 *c)
{
	const struct sim_req *req = c->req;
	const char *authz = gc_params_get_ci(req->headers, "Authorization");
	const char *date = gc_params_get_ci(req->headers, "X-Amz-Date");
	const char *host = gc_params_get_ci(req->headers, "Host");
	struct aws_sigv4_auth auth;
	struct gc_sign_request sr;
	struct gc_error err;
	const char *secret;
	char session_secret[SIM_AWS_SECRET_MAX];
	int64_t t;
	int ret = -1, rc;

	gc_error_init(&err);
	if (!authz)
		return ec2_fail(c, 401, "MissingAuthenticationToken",
				"The request must contain either a valid (registered) AWS access "
				"key ID or X.509 certificate.");
	if (!gc_starts_with(authz, AWS_SIGV4_ALGORITHM " ") ||
	    aws_sigv4_parse_authorization(&auth, authz, &err) != 0)
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
				gc_params_get_ci(req->headers, "X-Amz-Security-Token"),
				(int64_t)req->now + c->sim->cfg.clock_offset_s, session_secret);
	if (!secret) {
		ec2_fail(c, 401, "AuthFailure",
			 "AWS was not able to validate the provided access credentials");
		goto out;
	}
	if (parse_amz_date(date, &t) != 0) {
		ec2_fail(c, 400, "IncompleteSignature", "Invalid X-Amz-Date '%s'", date);
		goto out;
	}
	{
		int64_t now = (int64_t)req->now + c->sim->cfg.clock_offset_s;
		if (t < now - EC2_SKEW_S || t > now + EC2_SKEW_S) {
			char nowtxt[AWS_SIGV4_TIMESTAMP_LEN + 1];
			aws_sigv4_format_time((time_t)now, nowtxt);
			ec2_fail(c, 400, "RequestExpired",
				 "Request has expired. Timestamp date is %s, current time is %s",
				 date, nowtxt);
			goto out;
		}
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

	memset(&sr, 0, sizeof(sr));
	sr.method = req->method;
	sr.host = host;
	sr.path = req->path;
	sr.query = req->query;
	sr.query_string = req->query_string;
	sr.headers = req->headers;
	sr.body = req->body;
	sr.body_len = req->body_len;
	rc = aws_sigv4_verify(&sr, &auth, secret, NULL, &err);
	if (rc != 0 && host && strchr(host, ':')) {
		/* the client may have signed the host without the port */
		struct gc_params hdrs = GC_PARAMS_INIT;
		char *bare = gc_xstrndup(host, (size_t)(strchr(host, ':') - host));

		for (size_t i = 0; i < req->headers->n; i++)
			gc_params_add(&hdrs, req->headers->items[i].name,
				      is_host(req->headers->items[i].name)
					      ? bare
					      : req->headers->items[i].value);
		sr.headers = &hdrs;
		sr.host = bare;
		gc_error_init(&err);
		rc = aws_sigv4_verify(&sr, &auth, secret, NULL, &err);
		gc_params_release(&hdrs);
		free(bare);
	}
	if (rc != 0) {
		if (err.code == GC_EAUTH)
			ec2_fail(c, 403, "SignatureDoesNotMatch",
				 "The request signature we calculated does not match the "
				 "signature you provided. Check your AWS Secret Access Key and "
				 "signing method. Consult the service documentation for details.");
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
	c->action = P(c, "Action");
	version = P(c, "Version");
	snprintf(c->resp->action, sizeof(c->resp->action), "%s", c->action ? c->action : "");
	snprintf(c->resp->version, sizeof(c->resp->version), "%s", version ? version : "");

	if (authenticate(c) != 0)
		return;
	if (!c->action || !*c->action) {
		ec2_fail(c, 400, "MissingAction", "The request must contain the parameter Action");
		return;
	}
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (strcmp(actions[i].name, c->action) == 0)
			a = &actions[i];
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
	default: break;
	}

	if (check_params(c, a) != 0 || get_bool(c, "DryRun", false, &c->dry) != 0)
		return;

	sim_world_lock(c->sim->world);
	sim_world_tick(c->sim->world);
	if (c->dry && a->fn != run_instances && a->fn != terminate_instances) {
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
	memset(&c, 0, sizeof(c));
	c.sim = sim;
	c.req = req;
	c.resp = resp;
	gc_params_init(&c.p);
	sim_request_id(sim, false, c.rid);
	resp->content_type = "text/xml;charset=UTF-8";
	handle(&c);
	ec2_discard_doc(&c);
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
	.audience = "sts.amazonaws.com",
	.states = { "pending", "running", "stopped", "shutting-down", "terminated", "terminated" },
	.id_len = 17,
	.id_alphabet = "0123456789abcdef",
	.instance_prefix = "i-",
	.key_prefix = "key-",
	.private_net = "10.0",
	.keeps_terminated = true,
	.rate = ec2_rate,
	.buckets = SIM_RATE_UNFILTERED | SIM_RATE_LAUNCH | SIM_RATE_TERMINATE,
	.kernels = { "5.15.0-1051-aws", "6.8.0-1015-aws" },
	.hostname = ec2_hostname,
};
