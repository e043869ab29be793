/*
 * cmd-scale.c: `gpucluster scale GROUP=N... [-f FILE]` (docs/cli.md "scale"): apply with
 * count overrides, so the same plan, question and convergence; the spec's other fields
 * still hold.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/str.h"

static const struct gc_opt scale_opts[] = {
	{ .name = "file",
	  .short_name = 'f',
	  .type = GC_OPT_STRING,
	  .arg = "FILE",
	  .help = "the cluster spec",
	  .def = GC_CMD_DEFAULT_SPEC },
	GC_CMD_APPLY_OPTS,
	{ .name = NULL },
};

static int scale_exec(struct gc_cmd_ctx *ctx)
{
	char **names = gc_xcalloc(ctx->n_args, sizeof(*names));
	unsigned *counts = gc_xcalloc(ctx->n_args, sizeof(*counts));
	int rc = GC_EXIT_USAGE;

	for (size_t i = 0; i < ctx->n_args; i++) {
		const char *a = ctx->args[i];
		const char *eq = strchr(a, '=');
		uint64_t n;

		if (!eq || eq == a || gc_parse_u64(eq + 1, GC_SPEC_MAX_GROUP_COUNT, &n) < 0) {
			gc_out_error(ctx->out,
				     "'%s' is not GROUP=COUNT (a group name, '=', and a count "
				     "from 0 to %u)",
				     a, GC_SPEC_MAX_GROUP_COUNT);
			goto out;
		}
		for (size_t j = 0; j < i; j++) {
			if (strlen(names[j]) == (size_t)(eq - a) &&
			    strncmp(names[j], a, (size_t)(eq - a)) == 0) {
				gc_out_error(ctx->out, "group '%s' is given twice", names[j]);
				goto out;
			}
		}
		names[i] = gc_xstrndup(a, (size_t)(eq - a));
		counts[i] = (unsigned)n;
	}
	rc = gc_cmd_apply_run(ctx, (const char *const *)names, counts, ctx->n_args);
out:
	for (size_t i = 0; i < ctx->n_args; i++)
		free(names[i]);
	free(names);
	free(counts);
	return rc;
}

const struct gc_cmd_entry gc_cmd_scale = {
	.name = "scale",
	.summary = "change node counts without editing the spec",
	.usage = "GROUP=COUNT...",
	.description = "Applies the spec with the given groups' counts replaced, e.g.\n"
		       "'gpucluster scale workers=8 -f cluster.yaml'. Everything else works as\n"
		       "in apply: plan, confirmation, batched idempotent creates, waits.",
	.opts = scale_opts,
	.min_args = 1,
	.max_args = GC_CMD_ARGS_UNLIMITED,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_MUTATES | GC_CMD_SPEC_OPT,
	.exec = scale_exec,
};
