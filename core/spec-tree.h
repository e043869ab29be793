/*
 * spec-tree.h: the spec loader's private YAML tree; not part of the public API.
 *
 * spec-yaml.c builds it from libyaml's events, checking every limit before the memory it
 * guards is allocated (why not libyaml's document API: docs/internals/spec.md),
 * spec-env.c expands ${VAR} in its scalar values, spec-validate.c walks it.
 *
 * Invariants: every node carries its 1-based position; a mapping's items alternate key,
 * value; an alias is not copied but is the anchored node itself, so the tree is a DAG and
 * a node's `size` counts its subtree with aliases expanded. Every node is owned by the
 * document's `all` list, whatever points at it, and spec_doc_release frees them together.
 * Life cycle: spec_yaml_parse -> spec_validate -> spec_doc_release.
 */
#ifndef GC_SPEC_TREE_H
#define GC_SPEC_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"
#include "core/spec.h"

enum spec_kind {
	SPEC_SCALAR,
	SPEC_MAPPING,
	SPEC_SEQUENCE,
};

/* What a node is under the spec's typing rules (docs/spec.md, "Scalars and types"). */
enum spec_type {
	SPEC_T_STRING,
	SPEC_T_INT,
	SPEC_T_NUMBER,
	SPEC_T_BOOL,
	SPEC_T_NULL,
	SPEC_T_MAPPING,
	SPEC_T_LIST,
};

struct spec_node {
	enum spec_kind kind;
	unsigned line, col;
	bool open; /* a collection whose end event has not come yet */
	/* scalars: the value after expansion, NUL-terminated (it never holds a NUL) */
	char *text;
	size_t len;
	bool plain;	 /* plain style and no tag: typed by its text */
	char *env_error; /* why expansion failed (no path), or NULL */
	/* collections */
	struct spec_node **items;
	size_t n, alloc;
	uint64_t size;		/* nodes in this subtree, aliases expanded */
	struct spec_node *next; /* the document's list of every node */
};

struct spec_doc {
	struct spec_node *root; /* NULL until a document's root node arrives */
	struct spec_node *all;
};

/*
 * Parses data (already checked for size, NUL bytes and UTF-8) into doc, expanding
 * variables through env (may be NULL). Returns 0, or -1 with one diagnostic in diags:
 * problems found here (syntax, limits) stop the parse. doc is released by the caller
 * either way.
 */
int spec_yaml_parse(struct spec_doc *doc, const char *data, size_t len,
		    const struct gc_spec_env *env, struct gc_diags *diags);
void spec_doc_release(struct spec_doc *doc);

/* 1-based line and column (in characters) of byte offset in data, as libyaml counts. */
void spec_offset_pos(const char *data, size_t len, size_t offset, unsigned *line, unsigned *col);

enum spec_type spec_node_type(const struct spec_node *n);

/*
 * A value as it may be shown in a message: at most SPEC_QUOTE_SHOW bytes and "...",
 * with control characters and bytes that are not UTF-8 written as \xNN.
 */
#define SPEC_QUOTE_SHOW 80
#define SPEC_QUOTE_SIZE (SPEC_QUOTE_SHOW + 4)
void spec_quote(char out[SPEC_QUOTE_SIZE], const char *s, size_t len);

/*
 * Expands ${NAME}, ${NAME:-default} and $$ in src (see docs/spec.md). On success returns 0
 * with *out a new string of *out_len bytes. When a reference is bad or unset, returns 1
 * with *problem a new message (no path). *budget is the number of bytes variable values
 * may still add to the document; when they would pass it, returns -1 and nothing is set.
 */
int spec_env_expand(char **out, size_t *out_len, char **problem, const char *src, size_t len,
		    const struct gc_spec_env *env, size_t *budget);

/*
 * Checks the tree against every rule and fills spec (whose `file` is set). Every problem
 * goes into diags. Returns 0, or -1 when there was any problem (spec is then half-built
 * and only fit for gc_spec_free).
 */
int spec_validate(struct gc_spec *spec, const struct spec_node *root, struct gc_diags *diags);

#endif
