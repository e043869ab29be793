/*
 * ini.c: the INI reader behind the cloud CLIs' profile files (see ini.h for the
 * dialect). It parses into a scratch struct and merges that into the caller's only when
 * the whole text parsed, so a syntax error leaves nothing half-added.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/ini.h"

void gc_ini_init(struct gc_ini *ini)
{
	memset(ini, 0, sizeof(*ini));
}

static void section_release(struct gc_ini_section *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->entries[i].key);
		free(s->entries[i].value);
	}
	free(s->entries);
	free(s->name);
}

void gc_ini_release(struct gc_ini *ini)
{
	if (!ini)
		return;
	for (size_t i = 0; i < ini->n; i++)
		section_release(&ini->sections[i]);
	free(ini->sections);
	memset(ini, 0, sizeof(*ini));
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* [*s, *e) without leading and trailing blanks */
static void trim(const char **s, const char **e)
{
	while (*s < *e && blank(**s))
		(*s)++;
	while (*e > *s && blank((*e)[-1]))
		(*e)--;
}

/* Where an inline comment starts in [s, e): a '#' or ';' after a blank; else e. */
static const char *inline_comment(const char *s, const char *e)
{
	for (const char *p = s + 1; p < e; p++)
		if ((*p == '#' || *p == ';') && blank(p[-1]))
			return p;
	return e;
}

static struct gc_ini_section *find_section(struct gc_ini *ini, const char *name)
{
	for (size_t i = 0; i < ini->n; i++)
		if (strcmp(ini->sections[i].name, name) == 0)
			return &ini->sections[i];
	return NULL;
}

static struct gc_ini_section *add_section(struct gc_ini *ini, const char *name, size_t len,
					  unsigned line)
{
	struct gc_ini_section *s;
	char *copy = gc_xstrndup(name, len);

	s = find_section(ini, copy);
	if (s) {
		free(copy);
		return s;
	}
	GC_ALLOC_GROW(ini->sections, ini->n + 1, ini->alloc);
	s = &ini->sections[ini->n++];
	memset(s, 0, sizeof(*s));
	s->name = copy;
	s->line = line;
	return s;
}

static void add_entry(struct gc_ini_section *s, char *key, char *value, unsigned line)
{
	GC_ALLOC_GROW(s->entries, s->n + 1, s->alloc);
	s->entries[s->n].key = key;
	s->entries[s->n].value = value;
	s->entries[s->n].line = line;
	s->n++;
}

static int syntax(struct gc_error *err, const char *name, unsigned line, const char *what)
{
	return gc_error_set(err, GC_EINVALID, "%s:%u: %s", name, line, what);
}

/* One "key = value" line, [s, e) trimmed and without its comment. */
static int split_property(const char *s, const char *e, const char **k0, const char **k1,
			  const char **v0, const char **v1)
{
	const char *eq = memchr(s, '=', (size_t)(e - s));

	if (!eq)
		return -1;
	*k0 = s;
	*k1 = eq;
	*v0 = eq + 1;
	*v1 = e;
	trim(k0, k1);
	trim(v0, v1);
	return *k0 == *k1 ? -1 : 0;
}

static int parse_into(struct gc_ini *ini, const char *name, const char *text, size_t len,
		      struct gc_error *err)
{
	const char *p = text, *end = text + len;
	struct gc_ini_section *cur = NULL;
	size_t last = SIZE_MAX; /* the property an indented line continues, in cur */
	unsigned line = 0;

	if (memchr(text, '\0', len))
		return gc_error_set(err, GC_EINVALID, "%s: holds a NUL byte: not a text file",
				    name);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *s = p, *e = nl ? nl : end;
		bool indented;

		p = nl ? nl + 1 : end;
		line++;
		if (e > s && e[-1] == '\r')
			e--;
		indented = s < e && blank(*s);
		trim(&s, &e);
		if (s == e || *s == '#' || *s == ';')
			continue;

		if (*s == '[' && !indented) {
			const char *close = memchr(s, ']', (size_t)(e - s));
			const char *n0 = s + 1, *n1 = close;

			if (!close)
				return syntax(err, name, line, "section header without ']'");
			trim(&n0, &n1);
			if (n0 == n1)
				return syntax(err, name, line, "empty section name");
			{
				const char *rest = close + 1, *rest_end = e;
				trim(&rest, &rest_end);
				if (rest < rest_end && *rest != '#' && *rest != ';')
					return syntax(err, name, line,
						      "text after the section header");
			}
			cur = add_section(ini, n0, (size_t)(n1 - n0), line);
			last = SIZE_MAX;
			continue;
		}
		if (!cur)
			return syntax(err, name, line, "a property before any [section] header");

		e = inline_comment(s, e);
		trim(&s, &e);
		if (indented && last != SIZE_MAX) {
			struct gc_ini_entry *parent = &cur->entries[last];
			const char *k0, *k1, *v0, *v1;

			if (parent->value[0] == '\0') {
				/* "key =" then "  sub = value": a nested property; the parent
				 * keeps its empty value, so the lines after it nest too */
				if (split_property(s, e, &k0, &k1, &v0, &v1) != 0)
					return syntax(err, name, line,
						      "expected 'name = value' in a nested block");
				add_entry(cur,
					  gc_xasprintf("%s.%.*s", parent->key, (int)(k1 - k0), k0),
					  gc_xstrndup(v0, (size_t)(v1 - v0)), line);
			} else {
				char *joined =
					gc_xasprintf("%s\n%.*s", parent->value, (int)(e - s), s);
				free(parent->value);
				parent->value = joined;
			}
			continue;
		}
		{
			const char *k0, *k1, *v0, *v1;

			if (split_property(s, e, &k0, &k1, &v0, &v1) != 0)
				return syntax(err, name, line, "expected 'name = value'");
			add_entry(cur, gc_xstrndup(k0, (size_t)(k1 - k0)),
				  gc_xstrndup(v0, (size_t)(v1 - v0)), line);
			last = cur->n - 1;
		}
	}
	return 0;
}

/* Moves every section of from into to, merging sections of the same name. */
static void merge(struct gc_ini *to, struct gc_ini *from)
{
	for (size_t i = 0; i < from->n; i++) {
		struct gc_ini_section *src = &from->sections[i];
		struct gc_ini_section *dst = find_section(to, src->name);

		if (!dst) {
			GC_ALLOC_GROW(to->sections, to->n + 1, to->alloc);
			to->sections[to->n++] = *src;
			continue;
		}
		for (size_t j = 0; j < src->n; j++)
			add_entry(dst, src->entries[j].key, src->entries[j].value,
				  src->entries[j].line);
		free(src->entries);
		free(src->name);
	}
	free(from->sections);
	memset(from, 0, sizeof(*from));
}

int gc_ini_parse(struct gc_ini *ini, const char *name, const char *text, size_t len,
		 struct gc_error *err)
{
	struct gc_ini scratch;

	gc_ini_init(&scratch);
	if (parse_into(&scratch, name, text, len, err) != 0) {
		gc_ini_release(&scratch);
		return -1;
	}
	merge(ini, &scratch);
	return 0;
}

int gc_ini_load_file(struct gc_ini *ini, const char *path, const char *name, bool *found,
		     struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(GC_INI_MAX_FILE);
	bool exists;
	int ret = -1;

	*found = false;
	if (gc_buf_read_file(&b, path, name, &exists, err) != 0)
		goto out;
	if (exists && gc_ini_parse(ini, name ? name : path, b.data, b.len, err) != 0)
		goto out;
	*found = exists;
	ret = 0;
out:
	gc_buf_release(&b);
	return ret;
}

const struct gc_ini_section *gc_ini_section(const struct gc_ini *ini, const char *name)
{
	for (size_t i = 0; i < ini->n; i++)
		if (strcmp(ini->sections[i].name, name) == 0)
			return &ini->sections[i];
	return NULL;
}

const char *gc_ini_get(const struct gc_ini_section *s, const char *key)
{
	if (!s)
		return NULL;
	for (size_t i = s->n; i-- > 0;)
		if (strcasecmp(s->entries[i].key, key) == 0)
			return s->entries[i].value;
	return NULL;
}
