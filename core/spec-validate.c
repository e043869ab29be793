/*
 * spec-validate.c: every rule of docs/spec.md, from the spec tree to a struct gc_spec.
 *
 * The walk keeps going after a problem so that one `gpucluster validate` shows them all:
 * each check reports into the diagnostics list and the walk moves on to the next key.
 * Messages follow the table in docs/spec.md word for word; the bad-spec corpus and the
 * JSON Schema are written from that table, so a change here is a change there.
 *
 * Work is bounded by the input, whatever it holds: lists longer than their limit are
 * reported and only their first entries are looked at, lengths are checked before
 * characters, duplicate keys are found by sorting, and after GC_SPEC_MAX_DIAGS problems
 * the rest are only counted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/cidr.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/shape.h"
#include "core/spec-tree.h"
#include "core/steps.h"
#include "core/str.h"
#include "core/suggest.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define PATH_MAX_BYTES	  1024
#define STEP_NAME_MAX	  32
#define STEP_RUN_MAX	  (64u << 10)
#define ENDPOINT_MAX	  256
#define PROFILE_MAX	  64
#define REGION_MAX	  32
#define USER_MAX	  32
#define INSTANCE_TYPE_MAX 64
#define ZONE_MAX	  64
#define MAX_SPOT_PRICE	  1000.0
#define MAX_HOURLY_COST	  1000000.0
#define OIDC_AUDIENCE_MAX 256

struct val {
	struct gc_diags *diags;
	struct gc_buf path; /* where the walk is: "node_groups[0].count" */
	size_t problems;
	const struct gc_provider_ops *cloud; /* NULL until provider.name is known */
	bool cuda_none;			     /* bootstrap.cuda is none (valid or defaulted) */
	const struct spec_node *network;     /* provider.network, when it is a mapping */
};

/* A known key's entry in a mapping. */
struct slot {
	const char *name; /* from the mapping's KEY_TABLE */
	const struct spec_node *key;
	const struct spec_node *val;
};

/*
 * A mapping's known keys: LIST(X) names each as X(ENUM_ID, "key"); KEY_TABLE makes the
 * enum (ending in COUNT) and the names table that scan_map() looks keys up in.
 */
#define KEY_ENUM(id, name) id,
#define KEY_NAME(id, name) [id] = name,
#define KEY_TABLE(names, LIST, COUNT)  \
	enum { LIST(KEY_ENUM) COUNT }; \
	static const char *const names[COUNT] = { LIST(KEY_NAME) }

static const char *const container_names[] = { "docker", "none" };

/* Path. */

static size_t path_key(struct val *v, const char *key)
{
	size_t mark = v->path.len;

	if (v->path.len)
		gc_buf_addch(&v->path, '.');
	gc_buf_addstr(&v->path, key);
	return mark;
}

static size_t path_index(struct val *v, size_t i)
{
	size_t mark = v->path.len;

	gc_buf_addf(&v->path, "[%zu]", i);
	return mark;
}

static void path_pop(struct val *v, size_t mark)
{
	gc_buf_truncate(&v->path, mark);
}

/* Reporting. */

static void vreport(struct val *v, const struct spec_node *at, bool prefix, const char *fmt,
		    va_list ap) __attribute__((format(printf, 4, 0)));

static void vreport(struct val *v, const struct spec_node *at, bool prefix, const char *fmt,
		    va_list ap)
{
	char msg[768];
	const char *path = v->path.data;

	if (++v->problems > GC_SPEC_MAX_DIAGS)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (prefix && *path)
		gc_diag_add(v->diags, at->line, at->col, path, "%s: %s", path, msg);
	else
		gc_diag_add(v->diags, at->line, at->col, path, "%s", msg);
}

/* "PATH: MESSAGE" at a node. */
static void bad(struct val *v, const struct spec_node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bad(struct val *v, const struct spec_node *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(v, at, true, fmt, ap);
	va_end(ap);
}

/* "MESSAGE" at a node, for messages that name the path themselves. */
static void problem(struct val *v, const struct spec_node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct val *v, const struct spec_node *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(v, at, false, fmt, ap);
	va_end(ap);
}

/* " in PATH", or "" at the top level. */
static const char *in_sep(const struct val *v)
{
	return v->path.len ? " in " : "";
}

static const char *type_name(enum spec_type t)
{
	switch (t) {
	case SPEC_T_STRING: return "a string";
	case SPEC_T_INT: return "an integer";
	case SPEC_T_NUMBER: return "a number";
	case SPEC_T_BOOL: return "a boolean";
	case SPEC_T_NULL: return "null";
	case SPEC_T_MAPPING: return "a mapping";
	case SPEC_T_LIST: return "a list";
	}
	return "a value";
}

static void bad_type(struct val *v, const struct spec_node *n, const char *want)
{
	bad(v, n, "expected %s, got %s", want, type_name(spec_node_type(n)));
}

/* "; did you mean 'x'?" or "". */
static void did_you_mean(char *out, size_t size, const char *word, const char *const *cands,
			 size_t n)
{
	const char *s = gc_suggest(word, cands, n);
	char lower[65];
	size_t len = strlen(word);

	/* a cloud's name in capitals is three edits away, but plainly meant it */
	if (!s && len < sizeof(lower)) {
		for (size_t i = 0; i <= len; i++) {
			bool up = word[i] >= 'A' && word[i] <= 'Z';

			lower[i] = up ? (char)(word[i] + ('a' - 'A')) : word[i];
		}
		s = gc_suggest(lower, cands, n);
	}
	if (s)
		snprintf(out, size, "; did you mean '%s'?", s);
	else
		out[0] = '\0';
}

/* Getting typed values; each reports its own problem and returns -1 or NULL. */

static bool env_ok(struct val *v, const struct spec_node *n)
{
	if (n->kind == SPEC_SCALAR && n->env_error) {
		bad(v, n, "%s", n->env_error);
		return false;
	}
	return true;
}

static bool is_null(const struct spec_node *n)
{
	return spec_node_type(n) == SPEC_T_NULL && !n->env_error;
}

static const char *get_str(struct val *v, const struct spec_node *n)
{
	if (!env_ok(v, n))
		return NULL;
	if (spec_node_type(n) != SPEC_T_STRING) {
		bad_type(v, n, "a string");
		return NULL;
	}
	return n->text;
}

static int get_uint(struct val *v, const struct spec_node *n, unsigned min, unsigned max,
		    unsigned *out)
{
	char q[SPEC_QUOTE_SIZE];
	int64_t x;

	if (!env_ok(v, n))
		return -1;
	if (spec_node_type(n) != SPEC_T_INT) {
		bad_type(v, n, "an integer");
		return -1;
	}
	if (gc_parse_i64(n->text[0] == '+' ? n->text + 1 : n->text, min, max, &x) < 0) {
		spec_quote(q, n->text, n->len);
		bad(v, n, "%s is out of range %u..%u", q, min, max);
		return -1;
	}
	*out = (unsigned)x;
	return 0;
}

/* true or false (any of YAML's spellings docs/spec.md allows). */
static int get_flag(struct val *v, const struct spec_node *n, bool *out)
{
	if (!env_ok(v, n))
		return -1;
	if (spec_node_type(n) != SPEC_T_BOOL) {
		bad_type(v, n, "a boolean");
		return -1;
	}
	*out = n->text[0] == 't' || n->text[0] == 'T';
	return 0;
}

/* A number greater than 0 and at most max (max_text is how the message writes it). */
static int get_price(struct val *v, const struct spec_node *n, double max, const char *max_text,
		     double *out)
{
	char q[SPEC_QUOTE_SIZE];
	enum spec_type t;
	double x;

	if (!env_ok(v, n))
		return -1;
	t = spec_node_type(n);
	if (t != SPEC_T_INT && t != SPEC_T_NUMBER) {
		bad_type(v, n, "a number");
		return -1;
	}
	if (gc_parse_double(n->text, &x) < 0 || !(x > 0 && x <= max)) {
		spec_quote(q, n->text, n->len);
		bad(v, n, "%s is out of range: must be more than 0 and at most %s", q, max_text);
		return -1;
	}
	*out = x;
	return 0;
}

/* A duration in min..max seconds (lo and hi: how the message writes them, as the docs do). */
static int get_duration(struct val *v, const struct spec_node *n, uint64_t min, uint64_t max,
			const char *lo, const char *hi, uint64_t *out)
{
	char q[SPEC_QUOTE_SIZE];
	uint64_t s;

	if (!env_ok(v, n))
		return -1;
	if (spec_node_type(n) != SPEC_T_STRING) {
		bad_type(v, n, "a duration");
		return -1;
	}
	spec_quote(q, n->text, n->len);
	if (gc_parse_duration(n->text, &s) < 0) {
		bad(v, n,
		    "'%s' is not a duration; expected an integer and a unit s, m, h or d, "
		    "like 30m or 12h",
		    q);
		return -1;
	}
	if (s < min || s > max) {
		bad(v, n, "%s is out of range %s..%s", q, lo, hi);
		return -1;
	}
	*out = s;
	return 0;
}

/* nickname: NULL, or what a word that is not among names stands for (a "did you mean"). */
static int get_enum(struct val *v, const struct spec_node *n, const char *const *names,
		    size_t count, const char *(*nickname)(const char *word), int *out)
{
	const char *meant;
	char q[SPEC_QUOTE_SIZE], list[128] = "", dym[96];
	const char *s = get_str(v, n);
	size_t used = 0;

	if (!s)
		return -1;
	for (size_t i = 0; i < count; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	for (size_t i = 0; i < count && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 names[i]);
	spec_quote(q, n->text, n->len);
	if (nickname && (meant = nickname(s)))
		snprintf(dym, sizeof(dym), "; did you mean '%s'?", meant);
	else
		did_you_mean(dym, sizeof(dym), s, names, count);
	bad(v, n, "unknown value '%s'; expected one of %s%s", q, list, dym);
	return -1;
}

/* Mappings. */

struct keyref {
	const char *text;
	size_t idx;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * For each entry of a mapping, the index of the first entry with the same key (itself
 * when it is the first). Sorting keeps this O(n log n) on mappings with many keys.
 */
static size_t *find_dups(const struct spec_node *map)
{
	size_t pairs = map->n / 2, m = 0;
	size_t *first = gc_xcalloc(pairs, sizeof(*first));
	struct keyref *refs = gc_xcalloc(pairs, sizeof(*refs));

	for (size_t i = 0; i < pairs; i++) {
		const struct spec_node *k = map->items[2 * i];

		first[i] = i;
		if (k->kind == SPEC_SCALAR) {
			refs[m].text = k->text;
			refs[m].idx = i;
			m++;
		}
	}
	qsort(refs, m, sizeof(*refs), keyref_cmp);
	for (size_t j = 1; j < m; j++)
		if (strcmp(refs[j].text, refs[j - 1].text) == 0)
			first[refs[j].idx] = first[refs[j - 1].idx];
	free(refs);
	return first;
}

static void report_dup_key(struct val *v, const struct spec_node *key,
			   const struct spec_node *first)
{
	char q[SPEC_QUOTE_SIZE];

	spec_quote(q, key->text, key->len);
	problem(v, key, "duplicate key '%s'%s%s (first at line %u)", q, in_sep(v), v->path.data,
		first->line);
}

static bool key_ok(struct val *v, const struct spec_node *key)
{
	if (key->kind == SPEC_SCALAR)
		return true;
	bad(v, key, "expected a string key, got %s", type_name(spec_node_type(key)));
	return false;
}

/* find_dups of n when n is a mapping; NULL (reported) when not. */
static size_t *map_dups(struct val *v, const struct spec_node *n)
{
	if (!env_ok(v, n))
		return NULL;
	if (n->kind != SPEC_MAPPING) {
		bad_type(v, n, "a mapping");
		return NULL;
	}
	return find_dups(n);
}

/*
 * Checks that n is a mapping whose keys are all among keys[], reporting unknown and
 * duplicate keys, and puts each known key's first entry in slots[]. Returns -1 (after
 * reporting) when n is not a mapping.
 */
static int scan_map(struct val *v, const struct spec_node *n, const char *const *keys, size_t nkeys,
		    struct slot *slots)
{
	size_t *first;

	memset(slots, 0, nkeys * sizeof(*slots));
	for (size_t k = 0; k < nkeys; k++)
		slots[k].name = keys[k];
	if (!(first = map_dups(v, n)))
		return -1;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct spec_node *key = n->items[2 * i];
		size_t k;

		if (!key_ok(v, key))
			continue;
		if (first[i] != i) {
			report_dup_key(v, key, n->items[2 * first[i]]);
			continue;
		}
		for (k = 0; k < nkeys; k++)
			if (strcmp(key->text, keys[k]) == 0)
				break;
		if (k < nkeys) {
			slots[k].key = key;
			slots[k].val = n->items[2 * i + 1];
		} else if (v->problems < GC_SPEC_MAX_DIAGS) {
			char q[SPEC_QUOTE_SIZE], dym[96];

			spec_quote(q, key->text, key->len);
			did_you_mean(dym, sizeof(dym), key->text, keys, nkeys);
			problem(v, key, "unknown key '%s'%s%s%s", q, in_sep(v), v->path.data, dym);
		} else {
			v->problems++; /* past the cap: counted, not worth a suggestion */
		}
	}
	free(first);
	return 0;
}

/* An optional key's value, or NULL when it is absent or null. */
static const struct spec_node *optional(const struct slot *s)
{
	return s->val && !is_null(s->val) ? s->val : NULL;
}

/*
 * A required key's value (which may still be null: its getter reports that), or NULL
 * after reporting it missing. With a value, the key is pushed on the path (*mark: where
 * path_pop() goes back to).
 */
static const struct spec_node *required(struct val *v, const struct spec_node *map,
					const struct slot *s, size_t *mark)
{
	if (!s->val)
		problem(v, map, "missing required key '%s'%s%s", s->name, in_sep(v), v->path.data);
	else
		*mark = path_key(v, s->name);
	return s->val;
}

/* optional()'s value, with the key pushed on the path as required() does. */
static const struct spec_node *present(struct val *v, const struct slot *s, size_t *mark)
{
	const struct spec_node *x = optional(s);

	if (x)
		*mark = path_key(v, s->name);
	return x;
}

/* Checks that n is a list; *count is how many entries to look at (at most max). */
static int get_list(struct val *v, const struct spec_node *n, size_t max, bool nonempty,
		    size_t *count)
{
	if (!env_ok(v, n))
		return -1;
	if (n->kind != SPEC_SEQUENCE) {
		bad_type(v, n, "a list");
		return -1;
	}
	if (n->n == 0 && nonempty) {
		bad(v, n, "must not be empty");
		return -1;
	}
	*count = n->n;
	if (n->n > max) {
		bad(v, n, "%zu entries, at most %zu are allowed", n->n, max);
		*count = max;
	}
	return 0;
}

/* Character classes and value shapes. */

static bool lower_or_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool valid_name(const char *s, size_t len, size_t max)
{
	return len >= 1 && len <= max && s[0] >= 'a' && s[0] <= 'z' && s[len - 1] != '-' &&
		gc_shape_chars(s, len, false, "-");
}

static bool valid_region(const char *s, size_t len)
{
	return len >= 2 && len <= REGION_MAX && valid_name(s, len, REGION_MAX) &&
		memchr(s, '-', len);
}

static bool valid_profile(const char *s, size_t len)
{
	return len >= 1 && len <= PROFILE_MAX && gc_shape_chars(s, len, true, "_.-");
}

static bool valid_port_text(const char *s, size_t len)
{
	uint64_t port;
	char tmp[8];

	if (len == 0 || len > 5)
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return gc_parse_u64(tmp, 65535, &port) == 0 && port > 0;
}

/* http:// or https://, then a host (a name, an IPv4 address or [IPv6]) and maybe :port. */
static bool valid_endpoint(const char *s, size_t len)
{
	const char *p, *auth_end, *host_end;

	if (len > ENDPOINT_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	if (gc_starts_with(s, "https://"))
		p = s + 8;
	else if (gc_starts_with(s, "http://"))
		p = s + 7;
	else
		return false;
	auth_end = p + strcspn(p, "/?#");
	/* credentials never live in a spec, not even in a URL */
	if (memchr(p, '@', (size_t)(auth_end - p)))
		return false;
	if (*p == '[') {
		host_end = memchr(p, ']', (size_t)(auth_end - p));
		if (!host_end || host_end == p + 1 ||
		    !gc_shape_chars(p + 1, (size_t)(host_end - p - 1), true, ":."))
			return false;
		host_end++;
	} else {
		host_end = memchr(p, ':', (size_t)(auth_end - p));
		if (!host_end)
			host_end = auth_end;
		if (host_end == p || !gc_shape_chars(p, (size_t)(host_end - p), true, ".-"))
			return false;
	}
	if (host_end == auth_end)
		return true;
	return *host_end == ':' && valid_port_text(host_end + 1, (size_t)(auth_end - host_end - 1));
}

static bool valid_user(const char *s, size_t len)
{
	return len >= 1 && len <= USER_MAX && ((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_') &&
		gc_shape_chars(s, len, false, "_-");
}

static bool valid_instance_type(const char *s, size_t len)
{
	bool first_ok = len && ((s[0] >= 'A' && s[0] <= 'Z') || lower_or_digit(s[0]));

	return first_ok && len <= INSTANCE_TYPE_MAX && gc_shape_chars(s, len, true, "._-");
}

static bool valid_zone(const char *s, size_t len)
{
	return len >= 1 && len <= ZONE_MAX && gc_shape_chars(s, len, false, "-");
}

/* "570", "570.124.06": 3 digits, then up to two dot-separated runs of 1-3 digits. */
static bool valid_driver(const char *s)
{
	int parts = 0;

	if (strcmp(s, "preinstalled") == 0)
		return true;
	for (;;) {
		size_t n = strspn(s, "0123456789");

		if ((parts == 0 && n != 3) || n < 1 || n > 3 || ++parts > 3)
			return false;
		s += n;
		if (*s == '\0')
			return true;
		if (*s++ != '.')
			return false;
	}
}

/* MAJOR.MINOR with MAJOR 11 to 13 and a MINOR of 1-2 digits. */
static bool valid_cuda(const char *s)
{
	size_t n;

	if (strcmp(s, "none") == 0)
		return true;
	if (s[0] != '1' || s[1] < '1' || s[1] > '3' || s[2] != '.')
		return false;
	n = strspn(s + 3, "0123456789");
	return n >= 1 && n <= 2 && s[3 + n] == '\0';
}

/* 8 or 9, maybe with a MINOR of 1-2 digits. */
static bool valid_cudnn(const char *s)
{
	size_t n;

	if (strcmp(s, "none") == 0)
		return true;
	if (s[0] != '8' && s[0] != '9')
		return false;
	if (s[1] == '\0')
		return true;
	if (s[1] != '.')
		return false;
	n = strspn(s + 2, "0123456789");
	return n >= 1 && n <= 2 && s[2 + n] == '\0';
}

static bool valid_tag_text(const char *s, size_t len)
{
	return gc_shape_chars(s, len, true, " _.:/=+-@");
}

/* Whether s starts with prefix (lowercase) in any case. */
static bool starts_with_nocase(const char *s, const char *prefix)
{
	size_t k = 0;

	while (prefix[k] && s[k] && (s[k] | 0x20) == prefix[k])
		k++;
	return !prefix[k];
}

/* Our own prefix, or one a registered cloud keeps for itself (on every cloud). */
static bool reserved_tag(const char *s)
{
	const struct gc_provider_ops *p;

	if (starts_with_nocase(s, GC_TAG_PREFIX))
		return true;
	for (size_t i = 0; (p = gc_provider_at(i)); i++)
		for (const char *const *r = p->facts->reserved_tag_prefixes; r && *r; r++)
			if (starts_with_nocase(s, *r))
				return true;
	return false;
}

/* "gpucluster:, ... or X": every cloud's reserved prefixes, which reserved_tag refuses. */
static void reserved_tag_list(struct gc_buf *out)
{
	const struct gc_provider_ops *p;
	const char *prev = GC_TAG_PREFIX;

	for (size_t i = 0; (p = gc_provider_at(i)); i++) {
		for (const char *const *r = p->facts->reserved_tag_prefixes; r && *r; r++) {
			gc_buf_addf(out, "%s, ", prev);
			prev = *r;
		}
	}
	if (out->len >= 2)
		gc_buf_truncate(out, out->len - 2);
	gc_buf_addf(out, "%s%s", out->len ? " or " : "", prev);
}

/*
 * A string value that must pass a check; the message is "'VALUE' is not a valid WHAT".
 * Returns a copy, or NULL after reporting.
 */
static char *get_checked(struct val *v, const struct spec_node *n,
			 bool (*ok)(const char *s, size_t len), const char *what)
{
	char q[SPEC_QUOTE_SIZE];
	const char *s = get_str(v, n);

	if (!s)
		return NULL;
	if (!ok(s, n->len)) {
		spec_quote(q, s, n->len);
		bad(v, n, "'%s' is not a valid %s", q, what);
		return NULL;
	}
	return gc_xstrdup(s);
}

/*
 * The endpoint, whose message never shows what a URL's userinfo holds: it is redacted
 * (core/log.h) before it is quoted, so a cut quote cannot keep half a password either.
 */
static char *get_endpoint(struct val *v, const struct spec_node *n)
{
	char q[SPEC_QUOTE_SIZE], *shown;
	const char *s = get_str(v, n), *auth;

	if (!s)
		return NULL;
	if (valid_endpoint(s, n->len))
		return gc_xstrdup(s);
	shown = gc_log_redact(NULL, s);
	spec_quote(q, shown, strlen(shown));
	auth = strstr(s, "://");
	if (auth && memchr(auth + 3, '@', strcspn(auth + 3, "/?#")))
		bad(v, n, "'%s' is not a valid endpoint: credentials do not belong in a URL", q);
	else
		bad(v, n,
		    "'%s' is not a valid endpoint: expected an http:// or https:// URL with a "
		    "host, at most 256 characters",
		    q);
	free(shown);
	return NULL;
}

/* Top-level and group names: the alphabet of an ownership tag. */
static char *get_name(struct val *v, const struct spec_node *n, size_t max)
{
	char q[SPEC_QUOTE_SIZE];
	const char *s = get_str(v, n);

	if (!s)
		return NULL;
	if (!valid_name(s, n->len, max)) {
		spec_quote(q, s, n->len);
		bad(v, n,
		    "'%s' is not a valid name: use 1-%zu characters of a-z, 0-9 and '-', "
		    "starting with a letter and not ending with '-'",
		    q, max);
		return NULL;
	}
	return gc_xstrdup(s);
}

/* At the entry, under the list's path (the caller has not pushed the index). */
static void report_dup_entry(struct val *v, const struct spec_node *entry,
			     const struct spec_node *first)
{
	char q[SPEC_QUOTE_SIZE];

	spec_quote(q, entry->text, entry->len);
	bad(v, entry, "duplicate entry '%s' (first at line %u)", q, first->line);
}

/*
 * A list of strings that each pass ok, with no duplicates. The entries are stored in
 * *out (n_out set first, so a half-filled array is still freeable).
 */
static void get_str_list(struct val *v, const struct spec_node *n, size_t max,
			 bool (*ok)(const char *s, size_t len), const char *what, char ***out,
			 size_t *n_out)
{
	size_t count;

	if (get_list(v, n, max, true, &count) < 0)
		return;
	*out = gc_xcalloc(count, sizeof(**out));
	*n_out = count;
	for (size_t i = 0; i < count; i++) {
		const struct spec_node *e = n->items[i];
		size_t mark = path_index(v, i);

		(*out)[i] = get_checked(v, e, ok, what);
		path_pop(v, mark);
		if (!(*out)[i])
			continue;
		for (size_t j = 0; j < i; j++) {
			if ((*out)[j] && strcmp((*out)[j], (*out)[i]) == 0) {
				report_dup_entry(v, e, n->items[j]);
				break;
			}
		}
	}
}

/* Where a value was written, kept for the checks plan makes against the cloud. */
static void set_pos(struct gc_spec_pos *out, const struct spec_node *n)
{
	out->line = n->line;
	out->col = n->col;
}

/* The same for each item of a list (at most max). */
static void set_item_pos(struct gc_spec_pos *out, size_t max, const struct spec_node *n)
{
	for (size_t i = 0; n->kind == SPEC_SEQUENCE && i < n->n && i < max; i++)
		set_pos(&out[i], n->items[i]);
}

/* Values only a cloud can judge: each registered cloud's facts (core/provider.h). */

typedef bool (*shape_fn)(const char *s, size_t len);

enum shape {
	SHAPE_IMAGE_ID,
	SHAPE_IMAGE_ID_LIKE,
	SHAPE_ROLE,
	SHAPE_OIDC_PROVIDER,
	SHAPE_VPC_ID,
	SHAPE_SUBNET_ID
};

static shape_fn shape_of(const struct gc_provider_facts *f, enum shape k)
{
	switch (k) {
	case SHAPE_IMAGE_ID: return f->image_id;
	case SHAPE_IMAGE_ID_LIKE: return f->image_id_like;
	case SHAPE_ROLE: return f->role;
	case SHAPE_OIDC_PROVIDER: return f->oidc_provider;
	case SHAPE_VPC_ID: return f->vpc_id;
	case SHAPE_SUBNET_ID: return f->subnet_id;
	}
	return NULL;
}

/* Whether some registered cloud's check of kind k takes s. */
static bool any_cloud(enum shape k, const char *s, size_t len)
{
	const struct gc_provider_ops *p;

	for (size_t i = 0; (p = gc_provider_at(i)); i++) {
		shape_fn ok = shape_of(p->facts, k);

		if (ok && ok(s, len))
			return true;
	}
	return false;
}

static bool any_role(const char *s, size_t len)
{
	return any_cloud(SHAPE_ROLE, s, len);
}

static bool any_oidc_provider(const char *s, size_t len)
{
	return any_cloud(SHAPE_OIDC_PROVIDER, s, len);
}

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

/* An image alias of the spec's cloud, or of any cloud while that is not known. */
static bool image_alias(const struct val *v, const char *s)
{
	const struct gc_provider_ops *p;

	if (v->cloud)
		return in_list(v->cloud->facts->image_aliases, s);
	for (size_t i = 0; (p = gc_provider_at(i)); i++)
		if (in_list(p->facts->image_aliases, s))
			return true;
	return false;
}

#define MAX_CANDIDATES 32

/* The words of lists[0..n) without repeats, at most MAX_CANDIDATES; returns how many. */
static size_t collect_words(const char **out, const char *const *const *lists, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		for (const char *const *w = lists[i]; w && *w && m < MAX_CANDIDATES; w++) {
			size_t j = 0;

			while (j < m && strcmp(out[j], *w) != 0)
				j++;
			if (j == m)
				out[m++] = *w;
		}
	}
	return m;
}

/* The image aliases a "did you mean" may suggest: the spec's cloud's, else every cloud's. */
static size_t image_alias_candidates(const struct val *v, const char **out)
{
	const char *const *lists[MAX_CANDIDATES];
	const struct gc_provider_ops *p;
	size_t n = 0;

	if (v->cloud)
		lists[n++] = v->cloud->facts->image_aliases;
	for (size_t i = 0; !v->cloud && (p = gc_provider_at(i)) && n < MAX_CANDIDATES; i++)
		lists[n++] = p->facts->image_aliases;
	return collect_words(out, lists, n);
}

/* "ubuntu-22.04, ubuntu-24.04, gpu-ready": the aliases every cloud has, which messages
 * offer (a cloud's own synonyms, such as a second name for gpu-ready, are accepted but
 * not advertised: a spec that uses only these moves between clouds). */
static void portable_aliases(struct gc_buf *out)
{
	const struct gc_provider_ops *first = gc_provider_at(0), *p;

	for (const char *const *w = first ? first->facts->image_aliases : NULL; w && *w; w++) {
		bool everywhere = true;

		for (size_t i = 1; (p = gc_provider_at(i)); i++)
			everywhere &= in_list(p->facts->image_aliases, *w);
		if (everywhere)
			gc_buf_addf(out, "%s%s", out->len ? ", " : "", *w);
	}
}

/* The cloud a nickname of provider.name (a facts name alias, in any case) stands for, or NULL. */
static const char *cloud_nickname(const char *word)
{
	const struct gc_provider_ops *p;

	for (size_t i = 0; (p = gc_provider_at(i)); i++)
		for (const char *const *a = p->facts->name_aliases; a && *a; a++)
			if (strlen(word) == strlen(*a) && starts_with_nocase(word, *a))
				return p->name;
	return NULL;
}

/* Printable ASCII without blanks: a client id, often a host name or a URL. */
static bool valid_audience(const char *s, size_t len)
{
	if (len < 1 || len > OIDC_AUDIENCE_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/* What every cloud's RoleSessionName takes. */
static bool valid_session_name(const char *s, size_t len)
{
	return len >= 2 && len <= 64 && gc_shape_chars(s, len, true, "_.@-");
}

/* Sections. */

#define OIDC_KEY_LIST(X)             \
	X(OIDC_ROLE, "role")         \
	X(OIDC_PROVIDER, "provider") \
	X(OIDC_AUDIENCE, "audience") \
	X(OIDC_SESSION_NAME, "session_name")
KEY_TABLE(oidc_keys, OIDC_KEY_LIST, OIDC_KEYS);

static void check_oidc(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	const struct gc_provider_facts *f = v->cloud ? v->cloud->facts : NULL;
	struct gc_spec_oidc *o = &spec->provider.oidc;
	shape_fn role_ok = f ? f->role : any_role;
	shape_fn provider_ok = f ? f->oidc_provider : any_oidc_provider;
	char role_what[160], provider_what[160];
	struct slot s[OIDC_KEYS];
	const struct spec_node *x;
	size_t mark;

	if (scan_map(v, n, oidc_keys, OIDC_KEYS, s) < 0)
		return;
	snprintf(role_what, sizeof(role_what), "role: expected %s",
		 f ? f->role_hint : "the cloud's role ARN");
	snprintf(provider_what, sizeof(provider_what), "OIDC provider: expected %s",
		 f ? f->oidc_provider_hint : "the OIDC provider's ARN or id");
	if ((x = required(v, n, &s[OIDC_ROLE], &mark))) {
		o->role = get_checked(v, x, role_ok, role_what);
		path_pop(v, mark);
	}
	if (f && !provider_ok) {
		/* the cloud finds the identity provider itself (by the token's issuer) */
		if ((x = present(v, &s[OIDC_PROVIDER], &mark))) {
			bad(v, x, "%s", f->oidc_provider_hint);
			path_pop(v, mark);
		}
	} else if ((x = f ? required(v, n, &s[OIDC_PROVIDER], &mark)
			  : present(v, &s[OIDC_PROVIDER], &mark))) {
		o->provider = get_checked(v, x, provider_ok, provider_what);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[OIDC_AUDIENCE], &mark))) {
		o->audience = get_checked(v, x, valid_audience,
					  "audience: use 1-256 printable ASCII characters "
					  "without blanks");
		path_pop(v, mark);
	}
	if ((x = present(v, &s[OIDC_SESSION_NAME], &mark))) {
		o->session_name = get_checked(v, x, valid_session_name,
					      "session name: use 2-64 characters of A-Z, a-z, "
					      "0-9, '_', '.', '@' and '-'");
		path_pop(v, mark);
	}
}

/* provider.network: a VPC and a subnet per zone, in the shapes of the spec's cloud (any
 * cloud's while that is unknown); their existence is plan's to check (core/netcheck.h). */

static bool any_vpc_id(const char *s, size_t len)
{
	return any_cloud(SHAPE_VPC_ID, s, len);
}

static bool any_subnet_id(const char *s, size_t len)
{
	return any_cloud(SHAPE_SUBNET_ID, s, len);
}

#define NETWORK_KEY_LIST(X) \
	X(NET_VPC, "vpc")   \
	X(NET_SUBNETS, "subnets")
KEY_TABLE(network_keys, NETWORK_KEY_LIST, NET_KEYS);

static void check_subnets(struct val *v, const struct spec_node *n, struct gc_spec_network *net)
{
	const struct gc_provider_facts *f = v->cloud ? v->cloud->facts : NULL;
	char what[160], q[SPEC_QUOTE_SIZE];
	size_t *first = map_dups(v, n);

	if (!first)
		return;
	if (n->n == 0)
		bad(v, n, "must not be empty: give a subnet for each zone the node groups use");
	else if (n->n / 2 > GC_SPEC_MAX_ZONES)
		bad(v, n, "%zu subnets, at most %u are allowed", n->n / 2, GC_SPEC_MAX_ZONES);
	snprintf(what, sizeof(what), "%s id: expected %s", f ? f->subnet_word : "subnet",
		 f ? f->subnet_id_hint : "the cloud's subnet id (subnet-..., vsw-...)");
	net->subnets = gc_xcalloc(n->n / 2 + 1, sizeof(*net->subnets));
	for (size_t i = 0; i < n->n / 2 && net->n_subnets < GC_SPEC_MAX_ZONES; i++) {
		const struct spec_node *key = n->items[2 * i], *val = n->items[2 * i + 1];
		struct gc_spec_subnet *sn;
		char *id;
		size_t mark;

		if (!key_ok(v, key))
			continue;
		if (first[i] != i) {
			report_dup_key(v, key, n->items[2 * first[i]]);
			continue;
		}
		if (!valid_zone(key->text, key->len)) {
			spec_quote(q, key->text, key->len);
			bad(v, key,
			    "'%s' is not a valid zone: use 1-64 characters of a-z, 0-9 and '-'", q);
			continue;
		}
		mark = path_key(v, key->text);
		id = get_checked(v, val, f ? f->subnet_id : any_subnet_id, what);
		for (size_t j = 0; id && j < net->n_subnets; j++)
			if (strcmp(net->subnets[j].id, id) == 0) {
				bad(v, val,
				    "%s is already the subnet of zone '%s': each zone needs its own",
				    id, net->subnets[j].zone);
				free(id);
				id = NULL;
			}
		path_pop(v, mark);
		if (!id)
			continue;
		sn = &net->subnets[net->n_subnets++];
		sn->zone = gc_xstrdup(key->text);
		sn->id = id;
		sn->pos.line = val->line;
		sn->pos.col = val->col;
	}
	free(first);
}

static void check_network(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	const struct gc_provider_facts *f = v->cloud ? v->cloud->facts : NULL;
	struct gc_spec_network *net = &spec->provider.network;
	struct slot s[NET_KEYS];
	const struct spec_node *x;
	char what[160];
	size_t mark;

	if (scan_map(v, n, network_keys, NET_KEYS, s) < 0)
		return;
	v->network = n;
	snprintf(what, sizeof(what), "VPC id: expected %s",
		 f ? f->vpc_id_hint : "the cloud's VPC id (vpc-...)");
	if ((x = required(v, n, &s[NET_VPC], &mark))) {
		net->vpc = get_checked(v, x, f ? f->vpc_id : any_vpc_id, what);
		net->vpc_pos.line = x->line;
		net->vpc_pos.col = x->col;
		path_pop(v, mark);
	}
	if ((x = required(v, n, &s[NET_SUBNETS], &mark))) {
		check_subnets(v, x, net);
		path_pop(v, mark);
	}
}

/* The zones of a group's spec node, or NULL. */
static const struct spec_node *group_zones_node(const struct spec_node *g)
{
	for (size_t i = 0; g && g->kind == SPEC_MAPPING && i < g->n / 2; i++)
		if (g->items[2 * i]->kind == SPEC_SCALAR &&
		    strcmp(g->items[2 * i]->text, "zones") == 0)
			return g->items[2 * i + 1];
	return NULL;
}

/*
 * With provider.network, the groups' zones are the subnets' zones: a group without zones
 * gets them all, a zone a group lists needs a subnet, and a subnet whose zone no group
 * can use is a mistake (a typo of a zone, most often).
 */
static void check_network_zones(struct val *v, const struct spec_node *groups, struct gc_spec *spec)
{
	struct gc_spec_network *net = &spec->provider.network;
	bool every_group_lists = true;

	if (!v->network || !net->n_subnets || !groups || groups->kind != SPEC_SEQUENCE)
		return;
	for (size_t i = 0; i < spec->n_groups && i < groups->n; i++) {
		struct gc_spec_group *g = &spec->groups[i];
		const struct spec_node *zn = group_zones_node(groups->items[i]);

		if (!g->n_zones) {
			every_group_lists = false;
			g->zones = gc_xcalloc(net->n_subnets, sizeof(*g->zones));
			for (size_t k = 0; k < net->n_subnets; k++)
				g->zones[k] = gc_xstrdup(net->subnets[k].zone);
			g->n_zones = net->n_subnets;
			continue;
		}
		for (size_t k = 0; k < g->n_zones && zn && k < zn->n; k++) {
			size_t m1, m2, m3;

			if (!g->zones[k] || gc_spec_subnet(spec, g->zones[k]))
				continue;
			m1 = path_key(v, "node_groups");
			m2 = path_index(v, i);
			m3 = path_key(v, "zones");
			path_index(v, k);
			bad(v, zn->items[k],
			    "zone '%s' has no subnet in provider.network.subnets: add one, or "
			    "leave the zone out",
			    g->zones[k]);
			path_pop(v, m3);
			path_pop(v, m2);
			path_pop(v, m1);
		}
	}
	for (size_t k = 0; every_group_lists && k < net->n_subnets; k++) {
		bool used = false;
		size_t mark;

		for (size_t i = 0; i < spec->n_groups && !used; i++)
			for (size_t j = 0; j < spec->groups[i].n_zones && !used; j++)
				used = spec->groups[i].zones[j] &&
					strcmp(spec->groups[i].zones[j], net->subnets[k].zone) == 0;
		if (used)
			continue;
		mark = path_key(v, "provider.network.subnets");
		path_key(v, net->subnets[k].zone);
		problem(v,
			&(struct spec_node){ .line = net->subnets[k].pos.line,
					     .col = net->subnets[k].pos.col },
			"%s: no node group uses zone '%s': remove its subnet, or add the zone to "
			"a group",
			v->path.data, net->subnets[k].zone);
		path_pop(v, mark);
	}
}

#define PROVIDER_KEY_LIST(X)         \
	X(PROV_NAME, "name")         \
	X(PROV_REGION, "region")     \
	X(PROV_PROFILE, "profile")   \
	X(PROV_ENDPOINT, "endpoint") \
	X(PROV_OIDC, "oidc")         \
	X(PROV_NETWORK, "network")
KEY_TABLE(provider_keys, PROVIDER_KEY_LIST, PROV_KEYS);

/* provider.name: one of the registered clouds. */
static void check_cloud(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	const char *names[MAX_CANDIDATES];
	const struct gc_provider_ops *p;
	size_t count = 0;
	int e;

	for (size_t i = 0; (p = gc_provider_at(i)) && count < MAX_CANDIDATES; i++)
		names[count++] = p->name;
	if (get_enum(v, n, names, count, cloud_nickname, &e) == 0) {
		v->cloud = gc_provider_at((size_t)e);
		spec->provider.ops = v->cloud;
		spec->provider.name = v->cloud->name;
	}
}

static void check_provider(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	struct slot s[PROV_KEYS];
	const struct spec_node *x;
	size_t mark;

	if (scan_map(v, n, provider_keys, PROV_KEYS, s) < 0)
		return;
	if ((x = required(v, n, &s[PROV_NAME], &mark))) {
		check_cloud(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = required(v, n, &s[PROV_REGION], &mark))) {
		spec->provider.region = get_checked(
			v, x, valid_region,
			"region: use 2-32 characters of a-z, 0-9 and '-' with at least one '-', "
			"starting with a letter and not ending with '-'");
		set_pos(&spec->provider.region_pos, x);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[PROV_PROFILE], &mark))) {
		spec->provider.profile = get_checked(
			v, x, valid_profile,
			"profile: use 1-64 characters of A-Z, a-z, 0-9, '_', '.' and '-'");
		path_pop(v, mark);
	}
	if ((x = present(v, &s[PROV_ENDPOINT], &mark))) {
		spec->provider.endpoint = get_endpoint(v, x);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[PROV_OIDC], &mark))) {
		check_oidc(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[PROV_NETWORK], &mark))) {
		check_network(v, x, spec);
		path_pop(v, mark);
	}
}

/* An allow_from entry: a CIDR block with no host bits set. */
static bool get_network(struct val *v, const struct spec_node *e, struct gc_cidr *out)
{
	char q[SPEC_QUOTE_SIZE], net[GC_CIDR_STRLEN];
	const char *s = get_str(v, e);
	struct gc_cidr c;

	if (!s)
		return false;
	spec_quote(q, s, e->len);
	if (gc_cidr_parse(&c, s) < 0) {
		bad(v, e, "'%s' is not a valid CIDR", q);
		return false;
	}
	if (!gc_cidr_is_network(&c)) {
		gc_cidr_network(&c, &c);
		gc_cidr_format(&c, net, sizeof(net));
		bad(v, e, "'%s' has host bits set; did you mean '%s'?", q, net);
		return false;
	}
	*out = c;
	return true;
}

/* A list of allow_from entries (ssh.allow_from, bootstrap.monitoring_allow_from) into
 * *out, canonical. */
static void check_networks(struct val *v, const struct spec_node *n, char ***out, size_t *n_out)
{
	struct gc_cidr *nets;
	bool *valid;
	size_t count;

	if (get_list(v, n, GC_SPEC_MAX_ALLOW_FROM, true, &count) < 0)
		return;
	*out = gc_xcalloc(count, sizeof(**out));
	*n_out = count;
	nets = gc_xcalloc(count, sizeof(*nets));
	valid = gc_xcalloc(count, sizeof(*valid));
	for (size_t i = 0; i < count; i++) {
		const struct spec_node *e = n->items[i];
		size_t mark = path_index(v, i);
		char net[GC_CIDR_STRLEN];

		valid[i] = get_network(v, e, &nets[i]);
		path_pop(v, mark);
		if (!valid[i])
			continue;
		/* the same network however written: 2001:db8::/48 is 2001:DB8:0::/48 */
		for (size_t j = 0; j < i; j++) {
			if (valid[j] && gc_cidr_equal(&nets[j], &nets[i])) {
				report_dup_entry(v, e, n->items[j]);
				break;
			}
		}
		/* stored in canonical form, as the clouds will echo it back */
		gc_cidr_format(&nets[i], net, sizeof(net));
		(*out)[i] = gc_xstrdup(net);
	}
	free(nets);
	free(valid);
}

static void check_allow_from(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	check_networks(v, n, &spec->ssh.allow_from, &spec->ssh.n_allow_from);
}

#define SSH_KEY_LIST(X)                 \
	X(SSH_USER, "user")             \
	X(SSH_PORT, "port")             \
	X(SSH_ALLOW_FROM, "allow_from") \
	X(SSH_KEY_ENV, "key_env")
KEY_TABLE(ssh_keys, SSH_KEY_LIST, SSH_KEYS);

/* An environment variable's name, as a shell and a workflow's env: take it. */
static bool valid_env_name(const char *s, size_t len)
{
	if (len == 0 || len > 128 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static void check_ssh(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	struct slot s[SSH_KEYS];
	const struct spec_node *x;
	size_t mark;

	if (scan_map(v, n, ssh_keys, SSH_KEYS, s) < 0)
		return;
	if ((x = present(v, &s[SSH_USER], &mark))) {
		free(spec->ssh.user);
		spec->ssh.user = get_checked(v, x, valid_user,
					     "user: use 1-32 characters of a-z, 0-9, '_' and '-', "
					     "starting with a letter or '_'");
		path_pop(v, mark);
	}
	if ((x = present(v, &s[SSH_PORT], &mark))) {
		get_uint(v, x, 1, 65535, &spec->ssh.port);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[SSH_ALLOW_FROM], &mark))) {
		check_allow_from(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[SSH_KEY_ENV], &mark))) {
		free(spec->ssh.key_env);
		spec->ssh.key_env = get_checked(v, x, valid_env_name,
						"key_env: use an environment variable's name: "
						"A-Z, a-z, 0-9 and '_', not starting with a digit");
		path_pop(v, mark);
	}
}

static void check_image(struct val *v, const struct spec_node *n, struct gc_spec_group *g)
{
	char q[SPEC_QUOTE_SIZE], dym[96];
	const char *cands[MAX_CANDIDATES];
	const char *s = get_str(v, n);
	struct gc_buf aliases;
	bool ok;

	if (!s)
		return;
	if (image_alias(v, s)) {
		g->image = gc_xstrdup(s);
		g->image_is_alias = true;
		return;
	}
	ok = v->cloud ? v->cloud->facts->image_id(s, n->len) : any_cloud(SHAPE_IMAGE_ID, s, n->len);
	if (ok) {
		g->image = gc_xstrdup(s);
		g->image_is_alias = false;
		return;
	}
	spec_quote(q, s, n->len);
	gc_buf_init(&aliases, 0);
	portable_aliases(&aliases);
	if (any_cloud(SHAPE_IMAGE_ID_LIKE, s, n->len)) {
		/* without a known cloud there is nothing to hold the id against */
		if (v->cloud)
			bad(v, n, "'%s' is not an image id for %s; expected an alias (%s) or %s", q,
			    v->cloud->name, aliases.data, v->cloud->facts->image_id_hint);
		goto out;
	}
	did_you_mean(dym, sizeof(dym), s, cands, image_alias_candidates(v, cands));
	if (dym[0])
		bad(v, n, "unknown image '%s'%s", q, dym);
	else
		bad(v, n, "unknown image '%s'; expected an alias (%s) or %s", q, aliases.data,
		    v->cloud ? v->cloud->facts->image_id_hint : "an image id");
out:
	gc_buf_release(&aliases);
}

/* Reports keys[i] (the entry's key, "duplicate WHAT 'VALUE'") when an earlier entry of
 * the same list has that value already. */
static void check_unique(struct val *v, const struct spec_node **keys, size_t i, const char *key,
			 const char *what)
{
	for (size_t j = 0; keys[i] && j < i; j++) {
		if (keys[j] && strcmp(keys[j]->text, keys[i]->text) == 0) {
			size_t mark = path_key(v, key);

			bad(v, keys[i], "duplicate %s '%s' (first at line %u)", what, keys[i]->text,
			    keys[j]->line);
			path_pop(v, mark);
			return;
		}
	}
}

#define GROUP_KEY_LIST(X)                         \
	X(GROUP_NAME, "name")                     \
	X(GROUP_COUNT, "count")                   \
	X(GROUP_INSTANCE_TYPES, "instance_types") \
	X(GROUP_ZONES, "zones")                   \
	X(GROUP_MARKET, "market")                 \
	X(GROUP_MAX_SPOT_PRICE, "max_spot_price") \
	X(GROUP_IMAGE, "image")                   \
	X(GROUP_DISK_GB, "disk_gb")               \
	X(GROUP_PLACEMENT, "placement")           \
	X(GROUP_MIXED_TYPES, "mixed_types")       \
	X(GROUP_INTERCONNECT, "interconnect")     \
	X(GROUP_INTERFACES, "interfaces")         \
	X(GROUP_GPUS, "gpus")                     \
	X(GROUP_ROLE, "role")
KEY_TABLE(group_keys, GROUP_KEY_LIST, GROUP_KEYS);

/* interconnect, interfaces, and a cluster placement's one zone (docs/internals/fabric.md);
 * what the type offers is plan's check (core/fabric.c). */
static void check_fabric(struct val *v, struct slot *s, struct gc_spec_group *g)
{
	const struct spec_node *x;
	size_t mark;
	int e;

	if ((x = present(v, &s[GROUP_INTERCONNECT], &mark))) {
		if (get_enum(v, x, gc_interconnect_names, ARRAY_SIZE(gc_interconnect_names), NULL,
			     &e) == 0)
			g->interconnect = (enum gc_interconnect)e;
		set_pos(&g->interconnect_pos, x);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[GROUP_INTERFACES], &mark))) {
		get_uint(v, x, 1, 64, &g->interfaces);
		set_pos(&g->interfaces_pos, x);
		if (g->interconnect == GC_INTERCONNECT_STANDARD)
			bad(v, x, "only allowed with interconnect rdma or auto");
		path_pop(v, mark);
	}
	if (g->placement == GC_PLACEMENT_CLUSTER && g->n_zones > 1 &&
	    (x = present(v, &s[GROUP_ZONES], &mark)) && x->kind == SPEC_SEQUENCE && x->n > 1) {
		size_t at = path_index(v, 1);

		bad(v, x->items[1],
		    "placement cluster keeps the group in one zone (the cloud's placement group "
		    "lives in one): list one zone, not %zu",
		    g->n_zones);
		path_pop(v, at);
		path_pop(v, mark);
	}
}

/* gpus: "A100:8" (core/gpuspec.h); matching it against the cloud is plan's. */
static void check_gpus(struct val *v, struct slot *s, struct gc_spec_group *g)
{
	const struct spec_node *x;
	struct gc_error err;
	const char *str;
	size_t mark;

	if (!(x = present(v, &s[GROUP_GPUS], &mark)))
		return;
	set_pos(&g->gpus_pos, x);
	gc_error_init(&err);
	if ((str = get_str(v, x))) {
		if (gc_gpu_request_parse(&g->gpus, str, &err) == 0)
			g->has_gpus = true;
		else
			bad(v, x, "%s", err.message);
	}
	g->gpu_types_given = s[GROUP_INSTANCE_TYPES].val != NULL;
	path_pop(v, mark);
}

/* node_groups[].role: a name of the shape the cloud's launch takes (any cloud's when the
 * spec names none); whether it exists is the launch's check (docs/internals/mounts.md). */
static void check_role(struct val *v, struct slot *s, struct gc_spec_group *g)
{
	const struct spec_node *x;
	const struct gc_provider_ops *p;
	const char *r;
	size_t mark;
	bool ok = false;

	if (!(x = present(v, &s[GROUP_ROLE], &mark)))
		return;
	set_pos(&g->role_pos, x);
	if ((r = get_str(v, x))) {
		if (v->cloud)
			ok = v->cloud->facts->instance_role(r, x->len);
		for (size_t i = 0; !v->cloud && (p = gc_provider_at(i)); i++)
			ok = ok || p->facts->instance_role(r, x->len);
		if (ok) {
			g->role = gc_xstrdup(r);
		} else {
			char q[SPEC_QUOTE_SIZE];

			spec_quote(q, r, x->len);
			bad(v, x, "'%s' is not an instance role name%s%s; expected %s", q,
			    v->cloud ? " for " : "", v->cloud ? v->cloud->name : "",
			    v->cloud ? v->cloud->facts->instance_role_hint
				     : "1-64 characters of A-Z, a-z, 0-9, '.' and '-'");
		}
	}
	path_pop(v, mark);
}

static void check_group(struct val *v, const struct spec_node *n, struct gc_spec_group *g,
			const struct spec_node **name_node)
{
	struct slot s[GROUP_KEYS];
	const struct spec_node *x, *price = NULL;
	bool market_known = true;
	size_t mark;
	int e;

	g->market = GC_MARKET_ON_DEMAND;
	g->disk_gb = 100;
	g->placement = GC_PLACEMENT_ANY;
	g->pos.line = n->line;
	g->pos.col = n->col;
	if (scan_map(v, n, group_keys, GROUP_KEYS, s) == 0) {
		if ((x = required(v, n, &s[GROUP_NAME], &mark))) {
			g->name = get_name(v, x, GC_SPEC_GROUP_NAME_MAX);
			if (g->name)
				*name_node = x;
			path_pop(v, mark);
		}
		if ((x = required(v, n, &s[GROUP_COUNT], &mark))) {
			g->count_pos.line = x->line;
			g->count_pos.col = x->col;
			get_uint(v, x, 0, GC_SPEC_MAX_GROUP_COUNT, &g->count);
			path_pop(v, mark);
		}
		check_gpus(v, s, g);
		if (optional(&s[GROUP_GPUS]) && !s[GROUP_INSTANCE_TYPES].val) {
			/* plan fills instance_types from gpus (core/gpupick.c) */
		} else if ((x = required(v, n, &s[GROUP_INSTANCE_TYPES], &mark))) {
			get_str_list(v, x, GC_SPEC_MAX_INSTANCE_TYPES, valid_instance_type,
				     "instance type: use 1-64 characters of A-Z, a-z, 0-9, '.', "
				     "'_' and '-', starting with a letter or digit",
				     &g->instance_types, &g->n_instance_types);
			set_item_pos(g->instance_types_pos, GC_SPEC_MAX_INSTANCE_TYPES, x);
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_ZONES], &mark))) {
			get_str_list(v, x, GC_SPEC_MAX_ZONES, valid_zone,
				     "zone: use 1-64 characters of a-z, 0-9 and '-'", &g->zones,
				     &g->n_zones);
			set_item_pos(g->zones_pos, GC_SPEC_MAX_ZONES, x);
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_MARKET], &mark))) {
			if (get_enum(v, x, gc_market_names, ARRAY_SIZE(gc_market_names), NULL,
				     &e) == 0)
				g->market = (enum gc_market)e;
			else
				market_known = false;
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_MAX_SPOT_PRICE], &mark))) {
			if (get_price(v, x, MAX_SPOT_PRICE, "1000", &g->max_spot_price) == 0) {
				price = x;
				g->max_spot_price_pos.line = x->line;
				g->max_spot_price_pos.col = x->col;
			}
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_IMAGE], &mark))) {
			check_image(v, x, g);
			set_pos(&g->image_pos, x);
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_DISK_GB], &mark))) {
			get_uint(v, x, 20, 16384, &g->disk_gb);
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_PLACEMENT], &mark))) {
			if (get_enum(v, x, gc_placement_names, ARRAY_SIZE(gc_placement_names), NULL,
				     &e) == 0)
				g->placement = (enum gc_placement)e;
			path_pop(v, mark);
		}
		if ((x = present(v, &s[GROUP_MIXED_TYPES], &mark))) {
			get_flag(v, x, &g->mixed_types);
			path_pop(v, mark);
		}
		check_fabric(v, s, g);
		check_role(v, s, g);
		if (price && market_known && g->market == GC_MARKET_ON_DEMAND) {
			mark = path_key(v, "max_spot_price");
			bad(v, price, "only allowed with market spot or spot-then-on-demand");
			path_pop(v, mark);
		}
	}
	if (!g->image && !optional(&s[GROUP_IMAGE])) {
		g->image = gc_xstrdup("ubuntu-22.04");
		g->image_is_alias = true;
	}
}

static void check_groups(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	const struct spec_node **names;
	size_t count;

	if (get_list(v, n, GC_SPEC_MAX_GROUPS, true, &count) < 0)
		return;
	spec->groups = gc_xcalloc(count, sizeof(*spec->groups));
	spec->n_groups = count;
	names = gc_xcalloc(count, sizeof(*names));
	for (size_t i = 0; i < count; i++) {
		size_t mark = path_index(v, i);

		check_group(v, n->items[i], &spec->groups[i], &names[i]);
		check_unique(v, names, i, "name", "node group name");
		path_pop(v, mark);
	}
	free(names);
}

#define STEP_KEY_LIST(X)     \
	X(STEP_NAME, "name") \
	X(STEP_RUN, "run")   \
	X(STEP_TIMEOUT, "timeout")
KEY_TABLE(step_keys, STEP_KEY_LIST, STEP_KEYS);

static void check_step(struct val *v, const struct spec_node *n, struct gc_spec_step *st,
		       const struct spec_node **name_node)
{
	struct slot s[STEP_KEYS];
	const struct spec_node *x;
	char q[SPEC_QUOTE_SIZE];
	const char *str;
	size_t mark;
	uint64_t t;

	st->timeout_s = 30 * 60;
	if (scan_map(v, n, step_keys, STEP_KEYS, s) < 0)
		return;
	if ((x = required(v, n, &s[STEP_NAME], &mark))) {
		if ((str = get_str(v, x))) {
			if (x->len <= STEP_NAME_MAX && str[0] >= 'a' && str[0] <= 'z' &&
			    gc_shape_chars(str, x->len, false, "-")) {
				st->name = gc_xstrdup(str);
				*name_node = x;
			} else {
				spec_quote(q, str, x->len);
				bad(v, x,
				    "'%s' is not a valid name: use 1-32 characters of a-z, "
				    "0-9 and '-', starting with a letter",
				    q);
			}
		}
		path_pop(v, mark);
	}
	if ((x = required(v, n, &s[STEP_RUN], &mark))) {
		if ((str = get_str(v, x))) {
			if (x->len == 0)
				bad(v, x, "must not be empty");
			else if (x->len > STEP_RUN_MAX)
				bad(v, x, "%zu bytes, at most %u are allowed", x->len,
				    STEP_RUN_MAX);
			else
				st->run = gc_xstrdup(str);
		}
		path_pop(v, mark);
	}
	if ((x = present(v, &s[STEP_TIMEOUT], &mark))) {
		if (get_duration(v, x, 1, 24 * 3600, "1s", "24h", &t) == 0)
			st->timeout_s = (unsigned)t;
		path_pop(v, mark);
	}
}

static void check_steps(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	const struct spec_node **names;
	size_t count;

	if (get_list(v, n, GC_SPEC_MAX_STEPS, false, &count) < 0)
		return;
	spec->bootstrap.steps = gc_xcalloc(count, sizeof(*spec->bootstrap.steps));
	spec->bootstrap.n_steps = count;
	names = gc_xcalloc(count, sizeof(*names));
	for (size_t i = 0; i < count; i++) {
		size_t mark = path_index(v, i);

		check_step(v, n->items[i], &spec->bootstrap.steps[i], &names[i]);
		check_unique(v, names, i, "name", "step name");
		path_pop(v, mark);
	}
	free(names);
}

static void check_smoke(struct val *v, const struct spec_node *n, struct gc_spec *spec,
			bool cuda_known, bool container_known)
{
	const struct spec_node *seen[GC_SMOKE_N_CHECKS] = { NULL };
	unsigned flags = 0;
	size_t count;

	if (get_list(v, n, GC_SMOKE_N_CHECKS, false, &count) < 0)
		return;
	for (size_t i = 0; i < count; i++) {
		const struct spec_node *e = n->items[i];
		size_t mark = path_index(v, i);
		unsigned flag;
		int k;

		if (get_enum(v, e, gc_smoke_names, GC_SMOKE_N_CHECKS, NULL, &k) < 0) {
			path_pop(v, mark);
			continue;
		}
		if (seen[k]) {
			path_pop(v, mark);
			report_dup_entry(v, e, seen[k]);
			continue;
		}
		seen[k] = e;
		flag = 1u << k;
		flags |= flag;
		if (flag == GC_SMOKE_CUDA && cuda_known && v->cuda_none)
			bad(v, e, "'cuda' only allowed when cuda is not none");
		if (flag == GC_SMOKE_CONTAINER && container_known &&
		    spec->bootstrap.container != GC_CONTAINER_DOCKER)
			bad(v, e, "'container' only allowed with container docker");
		path_pop(v, mark);
	}
	spec->bootstrap.smoke = flags;
}

#define BOOTSTRAP_KEY_LIST(X)            \
	X(BOOT_DRIVER, "driver")         \
	X(BOOT_CUDA, "cuda")             \
	X(BOOT_CUDNN, "cudnn")           \
	X(BOOT_CONTAINER, "container")   \
	X(BOOT_STEPS, "steps")           \
	X(BOOT_SMOKE, "smoke")           \
	X(BOOT_MIRRORS, "mirrors")       \
	X(BOOT_MONITORING, "monitoring") \
	X(BOOT_MONITORING_FROM, "monitoring_allow_from")
KEY_TABLE(bootstrap_keys, BOOTSTRAP_KEY_LIST, BOOT_KEYS);

const char *const gc_mirror_names[GC_MIRROR_N] = { "apt", "cuda", "docker", "nvidia_container" };
/* what a mirror of each looks like, for messages (the path the well-known mirrors use) */
static const char *const mirror_examples[GC_MIRROR_N] = { "ubuntu", "nvidia-cuda", "docker-ce",
							  "libnvidia-container" };

/* http:// or https://, a host ([A-Za-z0-9.-], optional :PORT) and an optional path of
 * characters a shell and an apt list line take as they are; no query, no fragment. */
static bool valid_mirror(const char *s)
{
	const char *h = strncmp(s, "https://", 8) == 0 ? s + 8
		: strncmp(s, "http://", 7) == 0	       ? s + 7
						       : NULL;
	size_t host;

	if (!h || strlen(s) > 512)
		return false;
	host = strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
	if (host == 0 || h[0] == '.' || h[0] == '-')
		return false;
	h += host;
	if (*h == ':') {
		size_t port = strspn(h + 1, "0123456789");

		if (port == 0 || port > 5)
			return false;
		h += 1 + port;
	}
	return *h == '\0' ||
		(*h == '/' &&
		 h[strspn(h,
			  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			  "/._~%+-")] == '\0');
}

/* bootstrap.mirrors: {apt, cuda, docker, nvidia_container: URL} (docs/spec.md) */
static void check_mirrors(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	struct slot s[GC_MIRROR_N];
	const struct spec_node *x;
	char q[SPEC_QUOTE_SIZE];
	const char *str;
	size_t mark, len;

	if (scan_map(v, n, gc_mirror_names, GC_MIRROR_N, s) < 0)
		return;
	for (size_t k = 0; k < GC_MIRROR_N; k++) {
		if (!(x = present(v, &s[k], &mark)))
			continue;
		if ((str = get_str(v, x))) {
			spec_quote(q, str, x->len);
			if (!valid_mirror(str)) {
				bad(v, x,
				    "'%s' is not a mirror URL: expected http:// or https://, a host "
				    "and a path, like https://mirrors.example.com/%s",
				    q, mirror_examples[k]);
			} else {
				len = strlen(str);
				while (len > 0 && str[len - 1] == '/')
					len--; /* the scripts add the paths below it */
				spec->bootstrap.mirrors[k] = gc_xstrndup(str, len);
			}
		}
		path_pop(v, mark);
	}
}

const char *const gc_monitoring_names[GC_MONITORING_DCGM + 1] = { "none", "dcgm" };

/* bootstrap.monitoring: dcgm runs NVIDIA's dcgm-exporter container, so it needs Docker and
 * the container toolkit (docs/internals/monitoring.md) */
static bool check_monitoring(struct val *v, const struct spec_node *x, struct gc_spec *spec,
			     bool container_known)
{
	int e;

	if (get_enum(v, x, gc_monitoring_names, ARRAY_SIZE(gc_monitoring_names), NULL, &e) < 0)
		return false;
	spec->bootstrap.monitoring = (enum gc_monitoring)e;
	if (e == GC_MONITORING_DCGM && container_known &&
	    spec->bootstrap.container != GC_CONTAINER_DOCKER)
		bad(v, x,
		    "'dcgm' needs container docker: the bootstrap runs NVIDIA's dcgm-exporter "
		    "as a container");
	return true;
}

static void check_bootstrap(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	struct slot s[BOOT_KEYS] = { { NULL, NULL, NULL } };
	const struct spec_node *x;
	bool cuda_known = true, container_known = true, monitoring_known = true;
	char q[SPEC_QUOTE_SIZE];
	const char *str;
	size_t mark;
	int e;

	if (n && scan_map(v, n, bootstrap_keys, BOOT_KEYS, s) < 0)
		return;
	if ((x = present(v, &s[BOOT_DRIVER], &mark))) {
		/* a bare branch may be written unquoted; YAML reads it as a number */
		if (env_ok(v, x)) {
			enum spec_type t = spec_node_type(x);

			spec_quote(q, x->text, x->len);
			if (t != SPEC_T_STRING && t != SPEC_T_INT)
				bad_type(v, x, "a string");
			else if (valid_driver(x->text) && (t == SPEC_T_STRING || x->len == 3))
				spec->bootstrap.driver = gc_xstrdup(x->text);
			else
				bad(v, x,
				    "'%s' is not a valid driver: expected preinstalled or a "
				    "3-digit branch, optionally with its full version, like 570 or "
				    "570.124.06",
				    q);
		}
		path_pop(v, mark);
	}
	if ((x = present(v, &s[BOOT_CUDA], &mark))) {
		cuda_known = false;
		if ((str = get_str(v, x))) {
			spec_quote(q, str, x->len);
			if (valid_cuda(str)) {
				spec->bootstrap.cuda = gc_xstrdup(str);
				cuda_known = true;
			} else {
				bad(v, x,
				    "'%s' is not a valid CUDA version: expected none or "
				    "MAJOR.MINOR with MAJOR 11 to 13, like 12.8",
				    q);
			}
		}
		path_pop(v, mark);
	}
	v->cuda_none = spec->bootstrap.cuda && strcmp(spec->bootstrap.cuda, "none") == 0;
	if ((x = present(v, &s[BOOT_CUDNN], &mark))) {
		if ((str = get_str(v, x))) {
			spec_quote(q, str, x->len);
			if (!valid_cudnn(str))
				bad(v, x,
				    "'%s' is not a valid cuDNN version: expected none, "
				    "or 8 or 9 optionally with .MINOR, like 9 or 9.8",
				    q);
			else if (v->cuda_none && strcmp(str, "none") != 0)
				bad(v, x, "must be none when cuda is none");
			else
				spec->bootstrap.cudnn = gc_xstrdup(str);
		}
		path_pop(v, mark);
	}
	if ((x = present(v, &s[BOOT_CONTAINER], &mark))) {
		if (get_enum(v, x, container_names, ARRAY_SIZE(container_names), NULL, &e) == 0)
			spec->bootstrap.container = (enum gc_container)e;
		else
			container_known = false;
		path_pop(v, mark);
	}
	if ((x = present(v, &s[BOOT_STEPS], &mark))) {
		check_steps(v, x, spec);
		path_pop(v, mark);
	}
	/* the default checks are the ones that apply */
	spec->bootstrap.smoke = GC_SMOKE_DRIVER | (v->cuda_none ? 0 : GC_SMOKE_CUDA) |
		(spec->bootstrap.container == GC_CONTAINER_DOCKER ? GC_SMOKE_CONTAINER : 0);
	if ((x = present(v, &s[BOOT_SMOKE], &mark))) {
		check_smoke(v, x, spec, cuda_known, container_known);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[BOOT_MIRRORS], &mark))) {
		check_mirrors(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[BOOT_MONITORING], &mark))) {
		monitoring_known = check_monitoring(v, x, spec, container_known);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[BOOT_MONITORING_FROM], &mark))) {
		check_networks(v, x, &spec->bootstrap.monitoring_allow_from,
			       &spec->bootstrap.n_monitoring_allow_from);
		if (monitoring_known && spec->bootstrap.monitoring != GC_MONITORING_DCGM)
			bad(v, x, "only allowed with monitoring dcgm");
		path_pop(v, mark);
	}
}

#define LIFECYCLE_KEY_LIST(X)                            \
	X(LIFE_TTL, "ttl")                               \
	X(LIFE_MAX_HOURLY_COST, "max_hourly_cost")       \
	X(LIFE_CURRENCY, "currency")                     \
	X(LIFE_CNY_PER_USD, "cny_per_usd")               \
	X(LIFE_ON_PREEMPT, "on_preempt")                 \
	X(LIFE_ON_PREEMPT_TIMEOUT, "on_preempt_timeout") \
	X(LIFE_IDLE, "idle")
KEY_TABLE(lifecycle_keys, LIFECYCLE_KEY_LIST, LIFE_KEYS);

/* lifecycle.currency (USD unless CNY) and lifecycle.cny_per_usd (docs/spec.md). */
static void check_currency(struct val *v, struct slot *s, struct gc_spec *spec)
{
	static const char *const names[] = { "USD", "CNY" };
	const struct spec_node *x;
	size_t mark;
	int e;

	if ((x = present(v, &s[LIFE_CURRENCY], &mark))) {
		if (get_enum(v, x, names, ARRAY_SIZE(names), NULL, &e) == 0)
			snprintf(spec->lifecycle.currency, sizeof(spec->lifecycle.currency), "%s",
				 names[e]);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[LIFE_CNY_PER_USD], &mark))) {
		get_price(v, x, 1000, "1000", &spec->lifecycle.cny_per_usd);
		path_pop(v, mark);
	}
}

/* lifecycle.on_preempt and its bound (docs/spec.md): the bound defaults to 90 s, and is at
 * most 110 s, so that the hook ends inside the shortest notice window, two minutes
 * (docs/internals/spot.md). */
static void check_on_preempt(struct val *v, struct slot *s, struct gc_spec *spec)
{
	const struct spec_node *x;
	const char *str;
	size_t mark;

	spec->lifecycle.on_preempt_timeout_s = 90;
	if ((x = present(v, &s[LIFE_ON_PREEMPT], &mark))) {
		if ((str = get_str(v, x))) {
			if (x->len == 0)
				bad(v, x, "must not be empty");
			else if (x->len > STEP_RUN_MAX)
				bad(v, x, "%zu bytes, at most %u are allowed", x->len,
				    STEP_RUN_MAX);
			else if (memchr(str, '\n', x->len))
				bad(v, x, "must be one line: put a longer hook in a script");
			else
				spec->lifecycle.on_preempt = gc_xstrdup(str);
		}
		path_pop(v, mark);
	}
	if ((x = present(v, &s[LIFE_ON_PREEMPT_TIMEOUT], &mark))) {
		get_duration(v, x, 1, 110, "1s", "110s", &spec->lifecycle.on_preempt_timeout_s);
		path_pop(v, mark);
	}
}

static void check_lifecycle(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	struct slot s[LIFE_KEYS];
	const struct spec_node *x;
	size_t mark;

	if (scan_map(v, n, lifecycle_keys, LIFE_KEYS, s) < 0)
		return;
	if ((x = present(v, &s[LIFE_TTL], &mark))) {
		get_duration(v, x, 10 * 60, 30 * 86400, "10m", "30d", &spec->lifecycle.ttl_s);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[LIFE_MAX_HOURLY_COST], &mark))) {
		spec->lifecycle.max_hourly_cost_pos.line = x->line;
		spec->lifecycle.max_hourly_cost_pos.col = x->col;
		get_price(v, x, MAX_HOURLY_COST, "1000000", &spec->lifecycle.max_hourly_cost);
		path_pop(v, mark);
	}
	check_currency(v, s, spec);
	check_on_preempt(v, s, spec);
	/* lifecycle.idle (docs/internals/idle.md): at least a few polls of the watcher */
	if ((x = present(v, &s[LIFE_IDLE], &mark))) {
		get_duration(v, x, 5 * 60, 7 * 86400, "5m", "7d", &spec->lifecycle.idle_s);
		path_pop(v, mark);
	}
}

static void bad_reserved_tag(struct val *v, const struct spec_node *key, const char *q)
{
	struct gc_buf list;

	gc_buf_init(&list, 0);
	reserved_tag_list(&list);
	bad(v, key, "'%s' is a reserved tag key: keys may not start with %s", q, list.data);
	gc_buf_release(&list);
}

static void check_tag(struct val *v, const struct spec_node *key, const struct spec_node *val,
		      struct gc_spec_tag *tag)
{
	char q[SPEC_QUOTE_SIZE];
	bool key_valid = false;
	size_t mark = v->path.len, len;
	const char *text;
	enum spec_type t;

	if (!key_ok(v, key))
		return;
	spec_quote(q, key->text, key->len);
	if (key->len < 1 || key->len > GC_SPEC_TAG_KEY_MAX || !valid_tag_text(key->text, key->len))
		bad(v, key,
		    "'%s' is not a valid tag key: use 1-127 characters of A-Z, a-z, 0-9, "
		    "space and _ . : / = + - @",
		    q);
	else if (reserved_tag(key->text))
		bad_reserved_tag(v, key, q);
	else
		key_valid = true;
	if (key_valid)
		path_key(v, key->text);
	if (!env_ok(v, val))
		goto out;
	/* a number or boolean is taken as written; null is the empty value */
	t = spec_node_type(val);
	if (t == SPEC_T_MAPPING || t == SPEC_T_LIST) {
		bad_type(v, val, "a string");
		goto out;
	}
	text = t == SPEC_T_NULL ? "" : val->text;
	len = t == SPEC_T_NULL ? 0 : val->len;
	if (len > GC_SPEC_TAG_VALUE_MAX || !valid_tag_text(text, len)) {
		spec_quote(q, text, len);
		bad(v, val,
		    "'%s' is not a valid tag value: use up to 128 characters of A-Z, a-z, "
		    "0-9, space and _ . : / = + - @",
		    q);
		goto out;
	}
	if (key_valid) {
		tag->key = gc_xstrdup(key->text);
		tag->value = gc_xstrdup(text);
	}
out:
	path_pop(v, mark);
}

static void check_tags(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	size_t *first = map_dups(v, n), unique = 0, stored = 0;
	/* lifecycle.idle (checked before) costs one tag: gpucluster:idle (docs/spec.md, tags) */
	unsigned max = GC_SPEC_MAX_USER_TAGS - (spec->lifecycle.idle_s ? 1 : 0);

	if (!first)
		return;
	for (size_t i = 0; i < n->n / 2; i++)
		unique += first[i] == i;
	if (unique > max)
		bad(v, n, "%zu tags, at most %u are allowed%s", unique, max,
		    max < GC_SPEC_MAX_USER_TAGS ? " with lifecycle.idle" : "");
	spec->n_tags = unique < max ? unique : max;
	spec->tags = gc_xcalloc(spec->n_tags, sizeof(*spec->tags));
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct spec_node *key = n->items[2 * i];

		if (first[i] != i) {
			if (key_ok(v, key))
				report_dup_key(v, key, n->items[2 * first[i]]);
		} else if (stored < spec->n_tags) {
			check_tag(v, key, n->items[2 * i + 1], &spec->tags[stored++]);
		}
	}
	free(first);
}

/* envs and secrets: environment variable names, as a shell takes them. */
static bool env_name_ok(const char *s, size_t len)
{
	if (len < 1 || len > 128 || strlen(s) != len || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* envs: a mapping of variable names to scalar values (a number or boolean as written). */
static void check_envs(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	size_t *first = map_dups(v, n), stored = 0;
	char q[SPEC_QUOTE_SIZE];

	if (!first)
		return;
	if (n->n / 2 > GC_SPEC_MAX_ENVS)
		bad(v, n, "%zu variables, at most %u are allowed", n->n / 2, GC_SPEC_MAX_ENVS);
	spec->envs = gc_xcalloc(n->n / 2 ? n->n / 2 : 1, sizeof(*spec->envs));
	for (size_t i = 0; i < n->n / 2 && stored < GC_SPEC_MAX_ENVS; i++) {
		const struct spec_node *key = n->items[2 * i], *val = n->items[2 * i + 1];
		enum spec_type t;
		size_t mark;

		if (!key_ok(v, key))
			continue;
		if (first[i] != i) {
			report_dup_key(v, key, n->items[2 * first[i]]);
			continue;
		}
		if (!env_name_ok(key->text, key->len)) {
			spec_quote(q, key->text, key->len);
			bad(v, key,
			    "'%s' is not a valid variable name: use A-Z, a-z, 0-9 and _, not "
			    "starting with a digit",
			    q);
			continue;
		}
		mark = path_key(v, key->text);
		t = spec_node_type(val);
		if (!env_ok(v, val)) {
		} else if (t == SPEC_T_MAPPING || t == SPEC_T_LIST) {
			bad_type(v, val, "a string");
		} else {
			spec->envs[stored].key = gc_xstrdup(key->text);
			spec->envs[stored++].value = gc_xstrdup(t == SPEC_T_NULL ? "" : val->text);
			spec->n_envs = stored;
		}
		path_pop(v, mark);
	}
	free(first);
}

/* workdir: a path to a folder; whether it exists is run's to check (cmd/workdir.c) */
static void check_workdir(struct val *v, const struct spec_node *x, struct gc_spec *spec)
{
	const char *s = get_str(v, x);

	if (!s)
		return;
	if (!*s || memchr(s, '\n', x->len) || strlen(s) != x->len) {
		bad(v, x, "expected a path to a folder");
		return;
	}
	spec->workdir = gc_xstrdup(s);
	spec->workdir_pos.line = x->line;
	spec->workdir_pos.col = x->col;
}

#define MOUNT_KEY_LIST(X)         \
	X(MOUNT_BUCKET, "bucket") \
	X(MOUNT_PATH, "path")     \
	X(MOUNT_MODE, "mode")
KEY_TABLE(mount_keys, MOUNT_KEY_LIST, MOUNT_KEYS);

#define GC_SPEC_MAX_MOUNTS 8

static const char *const mount_modes[] = { "ro", "rw" };

/* Where a bucket may not go: the system's own directories and anything under most of them
 * (docs/spec.md, mounts). */
static bool system_path(const char *p)
{
	static const char *const exact[] = { "/",    "/home", "/mnt", "/opt",  "/root",
					     "/srv", "/tmp",  "/var", "/media" };
	static const char *const tree[] = { "/bin",   "/boot",	"/dev",	    "/etc", "/lib",
					    "/lib32", "/lib64", "/proc",    "/run", "/sbin",
					    "/sys",   "/usr",	"/var/lib", "/snap" };
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
		if (!strcmp(p, exact[i]))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(tree); i++) {
		n = strlen(tree[i]);
		if (!strncmp(p, tree[i], n) && (p[n] == '\0' || p[n] == '/'))
			return true;
	}
	return false;
}

/* An absolute path of 2-128 of A-Z, a-z, 0-9 and ._/-, no empty, . or .. part, no
 * trailing '/', and not a system path. NULL when fine, else what is wrong. */
static const char *mount_path_problem(const char *p, size_t len)
{
	if (p[0] != '/')
		return "must be an absolute path (starting with '/')";
	if (len > 128 || !gc_shape_chars(p, len, true, "._/-"))
		return "use at most 128 characters of A-Z, a-z, 0-9, '.', '_', '/' and '-'";
	if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
	    (len >= 2 && (!strcmp(p + len - 2, "/.") || (len >= 3 && !strcmp(p + len - 3, "/..")))))
		return "must not have an empty, '.' or '..' part";
	if (len > 1 && p[len - 1] == '/')
		return "must not end in '/'";
	if (system_path(p))
		return "is a system directory (or under one); mount at a path of your own, such "
		       "as /data";
	return NULL;
}

static void check_mount(struct val *v, const struct spec_node *n, struct gc_spec_mount *m,
			const struct spec_node **path_node)
{
	struct slot s[MOUNT_KEYS];
	const struct gc_provider_ops *p;
	const struct spec_node *x;
	char q[SPEC_QUOTE_SIZE];
	const char *str, *why;
	size_t mark;
	bool ok = false;
	int e;

	m->pos.line = n->line;
	m->pos.col = n->col;
	if (scan_map(v, n, mount_keys, MOUNT_KEYS, s) < 0)
		return;
	if ((x = required(v, n, &s[MOUNT_BUCKET], &mark))) {
		set_pos(&m->bucket_pos, x);
		if ((str = get_str(v, x))) {
			if (v->cloud)
				ok = v->cloud->facts->bucket(str, x->len);
			for (size_t i = 0; !v->cloud && (p = gc_provider_at(i)); i++)
				ok = ok || p->facts->bucket(str, x->len);
			spec_quote(q, str, x->len);
			if (ok)
				m->bucket = gc_xstrdup(str);
			else
				bad(v, x, "'%s' is not a bucket name%s%s; expected %s", q,
				    v->cloud ? " for " : "", v->cloud ? v->cloud->name : "",
				    v->cloud ? v->cloud->facts->bucket_hint
					     : "3-63 of a-z, 0-9 and '-'");
		}
		path_pop(v, mark);
	}
	if ((x = required(v, n, &s[MOUNT_PATH], &mark))) {
		if ((str = get_str(v, x))) {
			spec_quote(q, str, x->len);
			if ((why = mount_path_problem(str, x->len))) {
				bad(v, x, "'%s' %s", q, why);
			} else {
				m->path = gc_xstrdup(str);
				*path_node = x;
			}
		}
		path_pop(v, mark);
	}
	if ((x = present(v, &s[MOUNT_MODE], &mark))) {
		if (get_enum(v, x, mount_modes, ARRAY_SIZE(mount_modes), NULL, &e) == 0)
			m->rw = e == 1;
		path_pop(v, mark);
	}
}

/* mounts: each bucket once per path; the credentials come from the nodes' instance role,
 * so every group must name one (docs/internals/mounts.md). */
static void check_mounts(struct val *v, const struct spec_node *n, struct gc_spec *spec)
{
	const struct spec_node **paths;
	size_t count;

	if (get_list(v, n, GC_SPEC_MAX_MOUNTS, false, &count) < 0)
		return;
	spec->mounts = gc_xcalloc(count, sizeof(*spec->mounts));
	spec->n_mounts = count;
	paths = gc_xcalloc(count, sizeof(*paths));
	for (size_t i = 0; i < count; i++) {
		size_t mark = path_index(v, i);

		check_mount(v, n->items[i], &spec->mounts[i], &paths[i]);
		check_unique(v, paths, i, "path", "mount path");
		path_pop(v, mark);
	}
	free(paths);
	for (size_t i = 0; count && i < spec->n_groups; i++)
		if (spec->groups[i].name && !spec->groups[i].role)
			bad(v, n,
			    "the nodes mount buckets with their own instance role, never your "
			    "keys: add a role to node group '%s' (line %u)",
			    spec->groups[i].name, spec->groups[i].pos.line);
}

#define ROOT_KEY_LIST(X)                   \
	X(ROOT_NAME, "name")               \
	X(ROOT_PROVIDER, "provider")       \
	X(ROOT_SSH, "ssh")                 \
	X(ROOT_NODE_GROUPS, "node_groups") \
	X(ROOT_BOOTSTRAP, "bootstrap")     \
	X(ROOT_LIFECYCLE, "lifecycle")     \
	X(ROOT_TAGS, "tags")               \
	X(ROOT_ENVS, "envs")               \
	X(ROOT_SECRETS, "secrets")         \
	X(ROOT_WORKDIR, "workdir")         \
	X(ROOT_MOUNTS, "mounts")
KEY_TABLE(root_keys, ROOT_KEY_LIST, ROOT_KEYS);

static void check_root(struct val *v, const struct spec_node *root, struct gc_spec *spec)
{
	struct slot s[ROOT_KEYS];
	const struct spec_node *x;
	size_t mark;

	if (scan_map(v, root, root_keys, ROOT_KEYS, s) < 0) {
		check_bootstrap(v, NULL, spec);
		return;
	}
	if ((x = required(v, root, &s[ROOT_NAME], &mark))) {
		spec->name = get_name(v, x, GC_SPEC_CLUSTER_NAME_MAX);
		path_pop(v, mark);
	}
	/* before the groups: their images are checked against the cloud */
	if ((x = required(v, root, &s[ROOT_PROVIDER], &mark))) {
		check_provider(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[ROOT_SSH], &mark))) {
		check_ssh(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = required(v, root, &s[ROOT_NODE_GROUPS], &mark))) {
		check_groups(v, x, spec);
		path_pop(v, mark);
		check_network_zones(v, x, spec);
	}
	mark = path_key(v, "bootstrap");
	check_bootstrap(v, optional(&s[ROOT_BOOTSTRAP]), spec);
	path_pop(v, mark);
	if ((x = present(v, &s[ROOT_LIFECYCLE], &mark))) {
		check_lifecycle(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[ROOT_TAGS], &mark))) {
		check_tags(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[ROOT_ENVS], &mark))) {
		check_envs(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[ROOT_SECRETS], &mark))) {
		get_str_list(v, x, GC_SPEC_MAX_ENVS, env_name_ok, "variable name", &spec->secrets,
			     &spec->n_secrets);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[ROOT_WORKDIR], &mark))) {
		check_workdir(v, x, spec);
		path_pop(v, mark);
	}
	if ((x = present(v, &s[ROOT_MOUNTS], &mark))) {
		check_mounts(v, x, spec);
		path_pop(v, mark);
	}
}

int spec_validate(struct gc_spec *spec, const struct spec_node *root, struct gc_diags *diags)
{
	struct val v;

	memset(&v, 0, sizeof(v));
	v.diags = diags;
	gc_buf_init(&v.path, PATH_MAX_BYTES);
	spec->ssh.port = 22;
	spec->bootstrap.container = GC_CONTAINER_DOCKER;
	snprintf(spec->lifecycle.currency, sizeof(spec->lifecycle.currency), "USD");
	check_root(&v, root, spec);
	if (!spec->ssh.user)
		spec->ssh.user = gc_xstrdup("ubuntu");
	if (!spec->bootstrap.driver)
		spec->bootstrap.driver = gc_xstrdup("570");
	if (!spec->bootstrap.cuda)
		spec->bootstrap.cuda = gc_xstrdup("12.8");
	if (!spec->bootstrap.cudnn)
		spec->bootstrap.cudnn = gc_xstrdup(v.cuda_none ? "none" : "9");
	if (v.problems > GC_SPEC_MAX_DIAGS)
		gc_diag_add(diags, 0, 0, "", "too many problems: showing the first %u of %zu",
			    GC_SPEC_MAX_DIAGS, v.problems);
	gc_buf_release(&v.path);
	return v.problems ? -1 : 0;
}
