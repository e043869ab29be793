/*
 * spec-env.c: ${NAME}, ${NAME:-default} and $$ in spec values.
 *
 * CI names clusters after the run (`name: train-${GITHUB_RUN_ID}`), so values may refer to
 * the environment. Expansion is one left-to-right pass over the raw text: what a variable
 * or a default inserts is never looked at again, so a value cannot smuggle in a second
 * round of references. A `$` that starts no reference is kept as it is, because shell
 * lines in `run:` are full of `$HOME` and `$1`. The variables come through a struct
 * gc_spec_env so that tests and the fuzzer decide what is set; the credential chains read
 * theirs through it too (gc_spec_env_get).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/spec-tree.h"
#include "core/str.h"

/* How much of a bad reference to quote back in a message. */
#define ENV_QUOTE_MAX 64

static const char *process_lookup(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

const struct gc_spec_env gc_spec_env_process = {
	.lookup = process_lookup,
	.ctx = NULL,
};

const char *gc_spec_env_get(const struct gc_spec_env *env, const char *name)
{
	const struct gc_spec_env *e = env ? env : &gc_spec_env_process;
	const char *v = e->lookup ? e->lookup(e->ctx, name) : NULL;

	return v && *v ? v : NULL;
}

bool gc_spec_env_true(const struct gc_spec_env *env, const char *name)
{
	const char *v = gc_spec_env_get(env, name);

	return v && strcasecmp(v, "true") == 0;
}

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

static char *bad_reference(const char *ref, const char *end)
{
	const char *close = memchr(ref, '}', (size_t)(end - ref));
	size_t n = close ? (size_t)(close - ref) + 1 : (size_t)(end - ref);

	if (n > ENV_QUOTE_MAX)
		return gc_xasprintf("bad variable reference '%.*s...'", ENV_QUOTE_MAX, ref);
	return gc_xasprintf("bad variable reference '%.*s'", (int)n, ref);
}

int spec_env_expand(char **out, size_t *out_len, char **problem, const char *src, size_t len,
		    const struct gc_spec_env *env, size_t *budget)
{
	/* the budget caps what variables add; the raw text is already within the file cap */
	struct gc_buf b = GC_BUF_INIT(len + *budget);
	const char *p = src, *end = src + len;
	size_t added = 0;
	char *name = NULL;
	int ret = 1;

	while (p < end) {
		const char *dollar = memchr(p, '$', (size_t)(end - p));
		const char *n0, *n1, *def = NULL, *def_end = NULL, *value;
		size_t vlen;

		if (!dollar) {
			gc_buf_add(&b, p, (size_t)(end - p));
			break;
		}
		gc_buf_add(&b, p, (size_t)(dollar - p));
		if (dollar + 1 < end && dollar[1] == '$') {
			gc_buf_addch(&b, '$');
			p = dollar + 2;
			continue;
		}
		if (dollar + 1 >= end || dollar[1] != '{') {
			gc_buf_addch(&b, '$');
			p = dollar + 1;
			continue;
		}
		n0 = n1 = dollar + 2;
		if (n1 < end && name_start(*n1))
			for (n1++; n1 < end && name_char(*n1); n1++)
				;
		if (n1 == n0 || n1 >= end) {
			*problem = bad_reference(dollar, end);
			goto out;
		}
		if (*n1 == ':' && n1 + 1 < end && n1[1] == '-') {
			def = n1 + 2;
			def_end = memchr(def, '}', (size_t)(end - def));
			if (!def_end) {
				*problem = bad_reference(dollar, end);
				goto out;
			}
			p = def_end + 1;
		} else if (*n1 == '}') {
			p = n1 + 1;
		} else {
			*problem = bad_reference(dollar, end);
			goto out;
		}
		name = gc_xstrndup(n0, (size_t)(n1 - n0));
		value = env && env->lookup ? env->lookup(env->ctx, name) : NULL;
		if (def && (!value || !*value)) {
			gc_buf_add(&b, def, (size_t)(def_end - def));
		} else if (!value) {
			*problem = gc_xasprintf("environment variable '%.64s' is not set", name);
			goto out;
		} else {
			vlen = strlen(value);
			if (!gc_utf8_valid(value, vlen)) {
				*problem = gc_xasprintf(
					"environment variable '%.64s' is not valid UTF-8", name);
				goto out;
			}
			if (vlen > *budget - added) {
				ret = -1;
				goto out;
			}
			added += vlen;
			gc_buf_add(&b, value, vlen);
		}
		free(name);
		name = NULL;
	}
	/* every add above fits: the cap is the raw length plus what the budget allowed */
	*budget -= added;
	*out_len = b.len;
	*out = gc_buf_detach(&b, NULL);
	ret = 0;
out:
	free(name);
	gc_buf_release(&b);
	return ret;
}
