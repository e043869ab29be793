/*
 * spec-yaml.c: from checked bytes to the spec tree (see spec-tree.h), on libyaml's event
 * parser, one event at a time: each is checked against the nesting, alias and node limits
 * before anything is allocated for it (docs/internals/spec.md, "Limits, and why"). Scalar
 * values (not keys) are expanded (spec-env.c) as they arrive, exactly once, even when
 * aliases later make one node appear in several places.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/alloc.h"
#include "core/spec-tree.h"
#include "core/str.h"

#define YAML_TAG_STR	"tag:yaml.org,2002:str"
#define YAML_TAG_MAP	"tag:yaml.org,2002:map"
#define YAML_TAG_SEQ	"tag:yaml.org,2002:seq"
#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

/* How many bytes of a name (anchor, tag) to quote back in a message. */
#define NAME_QUOTE_MAX 64

struct anchor {
	char *name;
	struct spec_node *node;
};

struct parse {
	yaml_parser_t parser;
	struct spec_doc *doc;
	const struct gc_spec_env *env;
	struct gc_diags *diags;
	const char *data;
	size_t len;
	/* the open collections; the depth cap bounds it */
	struct spec_node *stack[GC_SPEC_MAX_DEPTH];
	size_t depth;
	struct anchor *anchors;
	size_t n_anchors, alloc_anchors;
	uint64_t nodes; /* nodes so far, aliases expanded */
	unsigned aliases;
	unsigned documents;
	size_t env_budget; /* bytes that variable values may still add */
};

static bool is_break(const unsigned char *s, size_t len, size_t i, size_t *width)
{
	if (s[i] == '\n') {
		*width = 1;
		return true;
	}
	if (s[i] == '\r') {
		*width = i + 1 < len && s[i + 1] == '\n' ? 2 : 1;
		return true;
	}
	/* NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR: libyaml counts them as line breaks */
	if (s[i] == 0xc2 && i + 1 < len && s[i + 1] == 0x85) {
		*width = 2;
		return true;
	}
	if (s[i] == 0xe2 && i + 2 < len && s[i + 1] == 0x80 &&
	    (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
		*width = 3;
		return true;
	}
	return false;
}

void spec_offset_pos(const char *data, size_t len, size_t offset, unsigned *line, unsigned *col)
{
	const unsigned char *s = (const unsigned char *)data;
	unsigned l = 1, c = 1;
	size_t i = 0, w;

	if (offset > len)
		offset = len;
	while (i < offset) {
		if (is_break(s, len, i, &w)) {
			l++;
			c = 1;
			i += w;
			continue;
		}
		/* columns count characters: skip UTF-8 continuation bytes */
		if ((s[i] & 0xc0) != 0x80)
			c++;
		i++;
	}
	*line = l;
	*col = c;
}

static bool text_is(const struct spec_node *n, const char *const *words)
{
	for (size_t i = 0; words[i]; i++)
		if (strcmp(n->text, words[i]) == 0)
			return true;
	return false;
}

#define DIGITS "0123456789"

static bool all_digits(const char *s)
{
	size_t n = strspn(s, DIGITS);

	return n && s[n] == '\0';
}

/* [-+]?[0-9]+ */
static bool is_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	return all_digits(s);
}

/* YAML 1.2 core float without .inf and .nan: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_number(const char *s)
{
	size_t ints, fracs = 0;

	if (*s == '-' || *s == '+')
		s++;
	ints = strspn(s, DIGITS);
	s += ints;
	if (*s == '.') {
		fracs = strspn(++s, DIGITS);
		s += fracs;
	}
	if (!ints && !fracs)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		return all_digits(s);
	}
	return *s == '\0';
}

enum spec_type spec_node_type(const struct spec_node *n)
{
	static const char *const nulls[] = { "~", "null", "Null", "NULL", NULL };
	static const char *const bools[] = {
		"true", "True", "TRUE", "false", "False", "FALSE", NULL
	};

	if (n->kind == SPEC_MAPPING)
		return SPEC_T_MAPPING;
	if (n->kind == SPEC_SEQUENCE)
		return SPEC_T_LIST;
	if (!n->plain)
		return SPEC_T_STRING;
	if (n->len == 0 || text_is(n, nulls))
		return SPEC_T_NULL;
	if (text_is(n, bools))
		return SPEC_T_BOOL;
	if (is_int(n->text))
		return SPEC_T_INT;
	if (is_number(n->text))
		return SPEC_T_NUMBER;
	return SPEC_T_STRING;
}

static int fail_at(struct parse *p, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(struct parse *p, unsigned line, unsigned col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gc_diag_add(p->diags, line, col, "", "%s", msg);
	return -1;
}

static int yaml_failure(struct parse *p)
{
	const yaml_parser_t *y = &p->parser;
	const char *problem = y->problem ? y->problem : "cannot parse the document";
	unsigned line, col;

	if (y->error == YAML_MEMORY_ERROR)
		abort(); /* as gc_xmalloc does: see alloc.h */
	if (y->error == YAML_READER_ERROR) {
		/* reader errors carry a byte offset and no mark */
		spec_offset_pos(p->data, p->len, y->problem_offset, &line, &col);
	} else {
		line = (unsigned)y->problem_mark.line + 1;
		col = (unsigned)y->problem_mark.column + 1;
	}
	return fail_at(p, line, col, "yaml: %s", problem);
}

static struct spec_node *node_new(struct parse *p, enum spec_kind kind, const yaml_mark_t *m)
{
	struct spec_node *n = gc_xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (unsigned)m->line + 1;
	n->col = (unsigned)m->column + 1;
	n->size = 1;
	n->next = p->doc->all;
	p->doc->all = n;
	return n;
}

/* Counts n more nodes against the cap before they are allocated or linked. */
static int count_nodes(struct parse *p, uint64_t n, const yaml_mark_t *m)
{
	p->nodes += n;
	if (p->nodes > GC_SPEC_MAX_NODES)
		return fail_at(p, (unsigned)m->line + 1, (unsigned)m->column + 1,
			       "document expands to more than %u nodes", GC_SPEC_MAX_NODES);
	return 0;
}

static void attach(struct parse *p, struct spec_node *n)
{
	struct spec_node *parent;

	if (p->depth == 0) {
		p->doc->root = n;
		return;
	}
	parent = p->stack[p->depth - 1];
	GC_ALLOC_GROW(parent->items, parent->n + 1, parent->alloc);
	parent->items[parent->n++] = n;
}

static bool next_is_key(const struct parse *p)
{
	const struct spec_node *parent = p->depth ? p->stack[p->depth - 1] : NULL;

	return parent && parent->kind == SPEC_MAPPING && parent->n % 2 == 0;
}

static void add_anchor(struct parse *p, const yaml_char_t *name, struct spec_node *n)
{
	if (!name)
		return;
	GC_ALLOC_GROW(p->anchors, p->n_anchors + 1, p->alloc_anchors);
	p->anchors[p->n_anchors].name = gc_xstrdup((const char *)name);
	p->anchors[p->n_anchors].node = n;
	p->n_anchors++;
}

/*
 * Explicit tags: `!` and `!!str` make a scalar a string whatever it looks like; `!!map`
 * and `!!seq` say what a collection already is. Anything else would need a type system
 * the spec does not have, so it is refused rather than ignored.
 */
static int check_tag(struct parse *p, const yaml_char_t *ytag, enum spec_kind kind,
		     const yaml_mark_t *m)
{
	const char *tag = (const char *)ytag;
	const char *want = kind == SPEC_SCALAR ? YAML_TAG_STR
		: kind == SPEC_MAPPING	       ? YAML_TAG_MAP
					       : YAML_TAG_SEQ;
	char shown[SPEC_QUOTE_SIZE + 2];
	size_t plen = strlen(YAML_TAG_PREFIX);

	if (!tag || strcmp(tag, "!") == 0 || strcmp(tag, want) == 0)
		return 0;
	if (strncmp(tag, YAML_TAG_PREFIX, plen) == 0) {
		char tmp[SPEC_QUOTE_SIZE];

		spec_quote(tmp, tag + plen, strlen(tag + plen));
		snprintf(shown, sizeof(shown), "!!%s", tmp);
	} else {
		spec_quote(shown, tag, strlen(tag));
	}
	return fail_at(p, (unsigned)m->line + 1, (unsigned)m->column + 1, "unsupported tag '%s'",
		       shown);
}

static int on_scalar(struct parse *p, const yaml_event_t *ev)
{
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const yaml_mark_t *m = &ev->start_mark;
	struct spec_node *n;

	if (count_nodes(p, 1, m) < 0 || check_tag(p, ev->data.scalar.tag, SPEC_SCALAR, m) < 0)
		return -1;
	/* the bytes were checked, but escapes such as "\0" can still make a NUL */
	if (memchr(value, '\0', len))
		return fail_at(p, (unsigned)m->line + 1, (unsigned)m->column + 1,
			       "NUL byte not allowed");
	n = node_new(p, SPEC_SCALAR, m);
	n->plain = !ev->data.scalar.tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (!next_is_key(p) && memchr(value, '$', len)) {
		int r = spec_env_expand(&n->text, &n->len, &n->env_error, value, len, p->env,
					&p->env_budget);

		if (r < 0)
			return fail_at(p, n->line, n->col,
				       "environment variables expand to more than %u bytes",
				       GC_SPEC_MAX_FILE_BYTES);
		if (r > 0) {
			/* keep the raw text: the validator reports the problem */
			n->text = gc_xstrndup(value, len);
			n->len = len;
		}
	} else {
		n->text = gc_xstrndup(value, len);
		n->len = len;
	}
	add_anchor(p, ev->data.scalar.anchor, n);
	attach(p, n);
	return 0;
}

static int on_start(struct parse *p, const yaml_event_t *ev, enum spec_kind kind)
{
	const yaml_mark_t *m = &ev->start_mark;
	const yaml_char_t *anchor, *tag;
	struct spec_node *n;

	if (kind == SPEC_MAPPING) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	} else {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	}
	if (p->depth >= GC_SPEC_MAX_DEPTH)
		return fail_at(p, (unsigned)m->line + 1, (unsigned)m->column + 1,
			       "nesting deeper than %u levels", GC_SPEC_MAX_DEPTH);
	if (count_nodes(p, 1, m) < 0 || check_tag(p, tag, kind, m) < 0)
		return -1;
	n = node_new(p, kind, m);
	n->open = true;
	/* registered now so that an alias inside can be told apart from an unknown one */
	add_anchor(p, anchor, n);
	attach(p, n);
	p->stack[p->depth++] = n;
	return 0;
}

static void on_end(struct parse *p)
{
	struct spec_node *n = p->stack[--p->depth];

	for (size_t i = 0; i < n->n; i++)
		n->size += n->items[i]->size;
	n->open = false;
}

static int on_alias(struct parse *p, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	const yaml_mark_t *m = &ev->start_mark;
	unsigned line = (unsigned)m->line + 1, col = (unsigned)m->column + 1;
	struct spec_node *target = NULL;
	char shown[SPEC_QUOTE_SIZE];

	if (++p->aliases > GC_SPEC_MAX_ALIASES)
		return fail_at(p, line, col, "more than %u alias references", GC_SPEC_MAX_ALIASES);
	/* the latest anchor of a name wins: YAML lets a document redefine one */
	for (size_t i = p->n_anchors; i-- > 0;) {
		if (strcmp(p->anchors[i].name, name) == 0) {
			target = p->anchors[i].node;
			break;
		}
	}
	spec_quote(shown, name, strlen(name));
	if (!target)
		return fail_at(p, line, col, "yaml: undefined alias '*%s'", shown);
	if (target->open)
		return fail_at(p, line, col, "yaml: recursive alias '*%s'", shown);
	if (count_nodes(p, target->size, m) < 0)
		return -1;
	attach(p, target);
	return 0;
}

static int on_event(struct parse *p, const yaml_event_t *ev, bool *done)
{
	const yaml_mark_t *m = &ev->start_mark;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++p->documents > 1)
			return fail_at(p, (unsigned)m->line + 1, (unsigned)m->column + 1,
				       "expected exactly one YAML document");
		return 0;
	case YAML_SCALAR_EVENT: return on_scalar(p, ev);
	case YAML_SEQUENCE_START_EVENT: return on_start(p, ev, SPEC_SEQUENCE);
	case YAML_MAPPING_START_EVENT: return on_start(p, ev, SPEC_MAPPING);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: on_end(p); return 0;
	case YAML_ALIAS_EVENT: return on_alias(p, ev);
	case YAML_STREAM_END_EVENT:
	case YAML_NO_EVENT: *done = true; return 0;
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT: return 0;
	}
	return 0;
}

int spec_yaml_parse(struct spec_doc *doc, const char *data, size_t len,
		    const struct gc_spec_env *env, struct gc_diags *diags)
{
	struct parse p;
	bool done = false;
	int ret = -1;

	memset(&p, 0, sizeof(p));
	p.doc = doc;
	p.env = env;
	p.diags = diags;
	p.data = data;
	p.len = len;
	p.env_budget = GC_SPEC_MAX_FILE_BYTES;
	if (!yaml_parser_initialize(&p.parser))
		abort();
	/* no yaml_parser_set_encoding: detection is what skips a UTF-8 byte order mark, and
	 * the bytes are known to be UTF-8 (a UTF-16 mark is not) */
	yaml_parser_set_input_string(&p.parser, (const unsigned char *)data, len);
	while (!done) {
		yaml_event_t ev;
		int r;

		if (!yaml_parser_parse(&p.parser, &ev)) {
			yaml_failure(&p);
			goto out;
		}
		r = on_event(&p, &ev, &done);
		yaml_event_delete(&ev);
		if (r < 0)
			goto out;
	}
	if (p.documents == 0 || !doc->root) {
		fail_at(&p, 0, 0, "expected exactly one YAML document");
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < p.n_anchors; i++)
		free(p.anchors[i].name);
	free(p.anchors);
	yaml_parser_delete(&p.parser);
	return ret;
}

void spec_doc_release(struct spec_doc *doc)
{
	struct spec_node *n, *next;

	if (!doc)
		return;
	for (n = doc->all; n; n = next) {
		next = n->next;
		free(n->text);
		free(n->env_error);
		free(n->items);
		free(n);
	}
	doc->all = NULL;
	doc->root = NULL;
}

void spec_quote(char out[SPEC_QUOTE_SIZE], const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0, i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n = gc_utf8_char(str + i, len - i);
		bool escape = c < 0x20 || c == 0x7f || n == 0;
		size_t w = escape ? 4 : n;

		if (o + w > SPEC_QUOTE_SHOW) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (escape) {
			/* control characters and stray bytes must not reach a terminal raw */
			snprintf(out + o, 5, "\\x%02x", c);
			i++;
		} else {
			memcpy(out + o, s + i, n);
			i += n;
		}
		o += w;
	}
	out[o] = '\0';
}
