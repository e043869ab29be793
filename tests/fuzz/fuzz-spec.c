/*
 * fuzz-spec.c: the libFuzzer entry point for the spec loader.
 *
 * Feeds arbitrary bytes to gc_spec_load_buffer with a fixed fake environment, so that
 * ${VAR} expansion is exercised too (set, empty, unset, a value that looks like a
 * reference, and one large value to reach the expansion budget), then checks the
 * loader's contract on the result and frees everything: a leak, a crash, an unbounded
 * allocation or a broken invariant is a finding. Built as a libFuzzer binary with clang
 * (GC_FUZZ=ON), and with replay.c as an ordinary executable that runs the seed corpus.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_BIG_VALUE (64u << 10)

static char big_value[FUZZ_BIG_VALUE + 1];

static const char *fake_lookup(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "RUN_ID") == 0)
		return "1234";
	if (strcmp(name, "N") == 0)
		return "4";
	if (strcmp(name, "EMPTY") == 0)
		return "";
	if (strcmp(name, "REF") == 0)
		return "${RUN_ID}";
	if (strcmp(name, "BIG") == 0) {
		if (!big_value[0])
			memset(big_value, 'x', FUZZ_BIG_VALUE);
		return big_value;
	}
	return NULL;
}

static const struct gc_spec_env fake_env = {
	.lookup = fake_lookup,
	.ctx = NULL,
};

/* What gc_spec_load_buffer promises about a spec it returns. */
static void check_spec(const struct gc_spec *s)
{
	if (!s->name || !s->provider.region || !s->ssh.user || s->ssh.port == 0 ||
	    s->n_groups == 0 || s->n_groups > GC_SPEC_MAX_GROUPS || !s->bootstrap.driver ||
	    !s->bootstrap.cuda || !s->bootstrap.cudnn || s->n_tags > GC_SPEC_MAX_USER_TAGS)
		abort();
	for (size_t i = 0; i < s->n_groups; i++) {
		const struct gc_spec_group *g = &s->groups[i];

		if (!g->name || !g->image || (g->n_instance_types == 0 && !g->has_gpus) ||
		    g->count > GC_SPEC_MAX_GROUP_COUNT)
			abort();
		for (size_t k = 0; k < g->n_instance_types; k++)
			if (!g->instance_types[k])
				abort();
	}
	for (size_t i = 0; i < s->bootstrap.n_steps; i++)
		if (!s->bootstrap.steps[i].name || !s->bootstrap.steps[i].run)
			abort();
	for (size_t i = 0; i < s->n_tags; i++)
		if (!s->tags[i].key || !s->tags[i].value)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gc_spec *spec = NULL;
	struct gc_diags diags;
	struct gc_error err;
	int r;

	gc_diags_init(&diags, "fuzz.yaml");
	gc_error_init(&err);
	r = gc_spec_load_buffer(&spec, "fuzz.yaml", (const char *)data, size, &fake_env, &diags,
				&err);
	if (r == 0) {
		if (!spec || diags.nr != 0)
			abort();
		check_spec(spec);
	} else {
		/* a refused spec always says why, and never hands back a spec */
		if (spec || diags.nr == 0 || diags.nr > GC_SPEC_MAX_DIAGS + 1 ||
		    err.code != GC_EINVALID)
			abort();
	}
	gc_spec_free(spec);
	gc_diags_release(&diags);
	return 0;
}
