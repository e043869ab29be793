/*
 * cmd-help.c: `gpucluster help [COMMAND]`. The text itself is generated from the
 * command table by cmd.c, so `help validate` and `validate --help` cannot disagree; so is
 * the manual page (`help --man`, cmd/man.c).
 */
#include "cmd/cmd.h"
#include "cmd/output.h"

static const struct gc_opt help_opts[] = {
	{ .name = "man",
	  .type = GC_OPT_FLAG,
	  .help = "print the whole manual page (roff) for man(1), made from the same table" },
	{ .name = NULL },
};

static int help_exec(struct gc_cmd_ctx *ctx)
{
	const struct gc_cmd_entry *e;

	if (gc_cmd_opt_given(ctx, "man")) {
		if (ctx->n_args) {
			gc_out_error(ctx->out,
				     "help --man takes no command: the page covers them all");
			return GC_EXIT_USAGE;
		}
		gc_cmd_print_man(ctx->out->out, ctx->table, ctx->table_len);
		return GC_EXIT_OK;
	}
	if (ctx->n_args == 0) {
		gc_cmd_print_overview(ctx->out, ctx->out->out, ctx->table, ctx->table_len);
		return GC_EXIT_OK;
	}
	e = gc_cmd_find(ctx->table, ctx->table_len, ctx->args[0], NULL);
	if (!e) {
		gc_cmd_report_unknown(ctx->out, ctx->table, ctx->table_len, ctx->args[0]);
		return GC_EXIT_USAGE;
	}
	gc_cmd_print_help(ctx->out, ctx->out->out, e);
	return GC_EXIT_OK;
}

const struct gc_cmd_entry gc_cmd_help = {
	.name = "help",
	.summary = "show the list of commands, or the help of one command",
	.usage = "[COMMAND]",
	.description = "COMMAND may be abbreviated to any unique prefix, as on the command line. "
		       "`help --man` prints the manual page, docs/gpucluster.1 "
		       "(`man ./docs/gpucluster.1`).",
	.opts = help_opts,
	.max_args = 1,
	.exec = help_exec,
};
