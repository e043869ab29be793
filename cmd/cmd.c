/*
 * cmd.c: the command table (the one list of gpucluster's commands) and the dispatcher,
 * which turns a command line into one call of an entry's exec (cmd.h, docs/cli.md
 * "Option syntax"). Commands never parse argv themselves, so every command behaves the
 * same way and --help cannot go stale.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/spec.h"
#include "core/str.h"
#include "core/suggest.h"

/* Alphabetical. A command is listed here only once it works end to end. */
/* clang-format off */
const struct gc_cmd_entry *const gc_cmd_table[] = {
	&gc_cmd_apply,
	&gc_cmd_bootstrap,
	&gc_cmd_destroy,
	&gc_cmd_exec,
	&gc_cmd_gc,
	&gc_cmd_help,
	&gc_cmd_hosts,
	&gc_cmd_jobs,
	&gc_cmd_list,
	&gc_cmd_logs,
	&gc_cmd_monitoring,
	&gc_cmd_plan,
	&gc_cmd_report,
	&gc_cmd_run,
	&gc_cmd_scale,
	&gc_cmd_show_gpus,
	&gc_cmd_smoke,
	&gc_cmd_ssh,
	&gc_cmd_status,
	&gc_cmd_validate,
	&gc_cmd_version,
};
/* clang-format on */
const size_t gc_cmd_table_len = sizeof(gc_cmd_table) / sizeof(gc_cmd_table[0]);

static const char *const output_choices[] = { "text", "json", NULL };

/* Indexes into gc_cmd_global_opts, kept in step with it. */
enum { G_OUTPUT, G_VERBOSE, G_QUIET, G_NO_COLOR, G_VERSION, G_HELP, G_COUNT };

const struct gc_opt gc_cmd_global_opts[] = {
	[G_OUTPUT] = { .name = "output",
		       .short_name = 'o',
		       .type = GC_OPT_CHOICE,
		       .choices = output_choices,
		       .arg = "FORMAT",
		       .help = "output format",
		       .def = "text" },
	[G_VERBOSE] = { .name = "verbose",
			.short_name = 'v',
			.type = GC_OPT_FLAG,
			.help = "log more; repeat for debug (-vv) and trace (-vvv)" },
	[G_QUIET] = { .name = "quiet",
		      .short_name = 'q',
		      .type = GC_OPT_FLAG,
		      .help = "print only errors" },
	[G_NO_COLOR] = { .name = "no-color",
			 .type = GC_OPT_FLAG,
			 .help = "no colour (also when NO_COLOR is set or not a terminal)" },
	[G_VERSION] = { .name = "version",
			.type = GC_OPT_FLAG,
			.help = "print the version and exit" },
	[G_HELP] = { .name = "help",
		     .short_name = 'h',
		     .type = GC_OPT_FLAG,
		     .help = "show help and exit" },
	[G_COUNT] = { .name = NULL },
};

/* Help layout: option names in a column this wide, the text after it. */
#define HELP_OPT_COLUMN 28

static volatile sig_atomic_t cmd_interrupted; /* signals caught */
static volatile sig_atomic_t cmd_catch = 1;   /* caught before the default action */

bool gc_cmd_interrupted(void)
{
	return cmd_interrupted != 0;
}

unsigned gc_cmd_interrupts(void)
{
	return (unsigned)cmd_interrupted;
}

void gc_cmd_catch_interrupts(unsigned n)
{
	cmd_catch = (sig_atomic_t)(n ? n : 1);
}

/* The first signal asks the command to stop at a safe point; one more than the command
 * catches is the user insisting, and gets the default action (both calls are
 * async-signal-safe). */
static void on_interrupt(int sig)
{
	if (cmd_interrupted >= cmd_catch) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	cmd_interrupted++;
}

static size_t opts_len(const struct gc_opt *opts)
{
	size_t n = 0;

	while (opts && opts[n].name)
		n++;
	return n;
}

/* ---- finding commands ---------------------------------------------------------- */

const struct gc_cmd_entry *gc_cmd_find(const struct gc_cmd_entry *const *table, size_t len,
				       const char *name, bool *ambiguous)
{
	const struct gc_cmd_entry *found = NULL;
	size_t nlen = strlen(name), matches = 0;

	if (ambiguous)
		*ambiguous = false;
	for (size_t i = 0; i < len; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	if (nlen == 0)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (strncmp(table[i]->name, name, nlen) == 0) {
			found = table[i];
			matches++;
		}
	}
	if (matches == 1)
		return found;
	if (matches > 1 && ambiguous)
		*ambiguous = true;
	return NULL;
}

void gc_cmd_report_unknown(struct gc_output *out, const struct gc_cmd_entry *const *table,
			   size_t len, const char *name)
{
	bool ambiguous;
	const char **names;
	const char *best;

	if (!gc_cmd_find(table, len, name, &ambiguous) && ambiguous) {
		struct gc_buf b = GC_BUF_INIT(0);
		size_t nlen = strlen(name);

		for (size_t i = 0; i < len; i++) {
			if (strncmp(table[i]->name, name, nlen) != 0)
				continue;
			gc_buf_addf(&b, "%s%s", b.len ? ", " : "", table[i]->name);
		}
		gc_out_error(out, "ambiguous command '%s': could be %s", name, b.data);
		gc_buf_release(&b);
		return;
	}
	names = gc_xcalloc(len + 1, sizeof(*names));
	for (size_t i = 0; i < len; i++)
		names[i] = table[i]->name;
	best = len ? gc_suggest(name, names, len) : NULL;
	if (best)
		gc_out_error(out, "unknown command '%s' (did you mean '%s'?)", name, best);
	else
		gc_out_error(out, "unknown command '%s'", name);
	gc_out_hint(out, "run '%s help' for the list of commands", GC_PROGRAM);
	free(names);
}

/* ---- help ------------------------------------------------------------------------ */

static void print_opt(struct gc_output *out, FILE *s, const struct gc_opt *o)
{
	struct gc_buf b = GC_BUF_INIT(0);

	if (o->short_name)
		gc_buf_addf(&b, "  -%c, --%s", o->short_name, o->name);
	else
		gc_buf_addf(&b, "      --%s", o->name);
	if (o->type != GC_OPT_FLAG)
		gc_buf_addf(&b, " %s", o->arg ? o->arg : "VALUE");
	if (b.len + 2 > HELP_OPT_COLUMN)
		gc_out_printf(out, s, "%s\n%*s", b.data, HELP_OPT_COLUMN, "");
	else
		gc_out_printf(out, s, "%-*s", HELP_OPT_COLUMN, b.data);
	gc_out_puts(out, s, o->help ? o->help : "");

	gc_buf_reset(&b);
	if (o->type == GC_OPT_CHOICE && o->choices) {
		gc_buf_addstr(&b, "one of: ");
		for (size_t i = 0; o->choices[i]; i++)
			gc_buf_addf(&b, "%s%s", i ? ", " : "", o->choices[i]);
	}
	if (o->type == GC_OPT_INT)
		gc_buf_addf(&b, "%lld to %lld", (long long)o->min, (long long)o->max);
	if (o->def)
		gc_buf_addf(&b, "%sdefault: %s", b.len ? "; " : "", o->def);
	if (o->repeat)
		gc_buf_addf(&b, "%srepeatable", b.len ? "; " : "");
	if (b.len)
		gc_out_printf(out, s, " (%s)", b.data);
	gc_out_puts(out, s, "\n");
	gc_buf_release(&b);
}

static void print_opts(struct gc_output *out, FILE *s, const char *title, const struct gc_opt *opts)
{
	gc_out_printf(out, s, "\n%s%s:%s\n", gc_out_style(out, s, GC_STYLE_BOLD), title,
		      gc_out_style(out, s, GC_STYLE_RESET));
	for (size_t i = 0; opts[i].name; i++)
		print_opt(out, s, &opts[i]);
}

static void print_usage_line(struct gc_output *out, FILE *s, const struct gc_cmd_entry *e)
{
	gc_out_printf(out, s, "usage: %s %s [options]%s%s\n", GC_PROGRAM, e->name,
		      e->usage && e->usage[0] ? " " : "", e->usage ? e->usage : "");
}

void gc_cmd_print_help(struct gc_output *out, FILE *s, const struct gc_cmd_entry *e)
{
	print_usage_line(out, s, e);
	gc_out_printf(out, s, "\n%s\n", e->summary);
	if (e->description)
		gc_out_printf(out, s, "\n%s\n", e->description);
	if (e->flags & GC_CMD_MUTATES)
		gc_out_puts(out, s, "\nThis command changes cloud resources.\n");
	if (opts_len(e->opts) > 0)
		print_opts(out, s, "Options", e->opts);
	print_opts(out, s, "Global options", gc_cmd_global_opts);
}

void gc_cmd_print_overview(struct gc_output *out, FILE *s, const struct gc_cmd_entry *const *table,
			   size_t len)
{
	const struct gc_provider_ops *p;
	int width = 0;

	for (size_t i = 0; i < len; i++)
		if ((int)strlen(table[i]->name) > width)
			width = (int)strlen(table[i]->name);
	gc_out_printf(out, s, "usage: %s [options] COMMAND [ARGS...]\n\n", GC_PROGRAM);
	gc_out_puts(out, s, "Provision GPU clusters on ");
	for (size_t i = 0; (p = gc_provider_at(i)); i++)
		gc_out_printf(out, s, "%s%s",
			      i == 0			      ? ""
				      : gc_provider_at(i + 1) ? ", "
							      : " and ",
			      p->facts->title);
	gc_out_puts(out, s, "\nfrom one YAML spec.\n");
	gc_out_printf(out, s, "\n%sCommands:%s\n", gc_out_style(out, s, GC_STYLE_BOLD),
		      gc_out_style(out, s, GC_STYLE_RESET));
	for (size_t i = 0; i < len; i++)
		gc_out_printf(out, s, "  %-*s   %s\n", width, table[i]->name, table[i]->summary);
	print_opts(out, s, "Global options", gc_cmd_global_opts);
	gc_out_printf(out, s, "\nRun '%s help COMMAND' for the options of a command.\n",
		      GC_PROGRAM);
}

/* ---- option values --------------------------------------------------------------- */

static struct gc_opt_value *opt_value(const struct gc_cmd_ctx *ctx, const char *name)
{
	const struct gc_opt *opts = ctx->entry->opts;

	for (size_t i = 0; opts && opts[i].name; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &ctx->opts[i];
	/* a command asking for an option it did not declare is a bug in that command */
	gc_out_error(ctx->out, "internal error: command '%s' has no option '--%s'",
		     ctx->entry->name, name);
	abort();
}

bool gc_cmd_opt_given(const struct gc_cmd_ctx *ctx, const char *name)
{
	return opt_value(ctx, name)->count > 0;
}

unsigned gc_cmd_opt_count(const struct gc_cmd_ctx *ctx, const char *name)
{
	return opt_value(ctx, name)->count;
}

const char *gc_cmd_opt_str(const struct gc_cmd_ctx *ctx, const char *name)
{
	return opt_value(ctx, name)->str;
}

int64_t gc_cmd_opt_int(const struct gc_cmd_ctx *ctx, const char *name)
{
	return opt_value(ctx, name)->num;
}

const char *const *gc_cmd_opt_list(const struct gc_cmd_ctx *ctx, const char *name, size_t *n)
{
	const struct gc_opt_value *v = opt_value(ctx, name);

	*n = v->n_list;
	return v->list;
}

/* Fills values with the table's defaults. A default that does not parse is a bug. */
static void opts_defaults(struct gc_output *out, const struct gc_opt *opts,
			  struct gc_opt_value *vals)
{
	for (size_t i = 0; opts && opts[i].name; i++) {
		vals[i].count = 0;
		vals[i].str = opts[i].def;
		vals[i].num = 0;
		if (opts[i].type == GC_OPT_INT && opts[i].def &&
		    gc_parse_i64(opts[i].def, opts[i].min, opts[i].max, &vals[i].num) < 0) {
			gc_out_error(out, "internal error: bad default for '--%s'", opts[i].name);
			abort();
		}
	}
}

/* ---- parsing --------------------------------------------------------------------- */

struct parser {
	struct gc_output *out;
	const struct gc_cmd_entry *const *table;
	size_t table_len;
	const struct gc_cmd_entry *entry; /* NULL until the command name is seen */
	struct gc_opt_value *vals;	  /* entry's option values */
	struct gc_opt_value gvals[G_COUNT];
	char **args;
	size_t n_args, alloc_args;
	bool dashdash; /* "--" was seen */
	char **cmd;    /* the entry is REMOTE_CMD: the words after "--" */
	size_t n_cmd, alloc_cmd;
};

static void usage_hint(struct parser *p)
{
	if (p->entry)
		gc_out_hint(p->out, "run '%s %s --help' for usage", GC_PROGRAM, p->entry->name);
	else
		gc_out_hint(p->out, "run '%s --help' for usage", GC_PROGRAM);
}

/* The option called name (len bytes of it), the command's own first. */
static const struct gc_opt *find_long(struct parser *p, const char *name, size_t len,
				      struct gc_opt_value **val)
{
	const struct gc_opt *opts = p->entry ? p->entry->opts : NULL;

	for (size_t i = 0; opts && opts[i].name; i++) {
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0) {
			*val = &p->vals[i];
			return &opts[i];
		}
	}
	for (size_t i = 0; i < G_COUNT; i++) {
		if (strlen(gc_cmd_global_opts[i].name) == len &&
		    strncmp(gc_cmd_global_opts[i].name, name, len) == 0) {
			*val = &p->gvals[i];
			return &gc_cmd_global_opts[i];
		}
	}
	return NULL;
}

static const struct gc_opt *find_short(struct parser *p, char c, struct gc_opt_value **val)
{
	const struct gc_opt *opts = p->entry ? p->entry->opts : NULL;

	for (size_t i = 0; opts && opts[i].name; i++) {
		if (opts[i].short_name == c) {
			*val = &p->vals[i];
			return &opts[i];
		}
	}
	for (size_t i = 0; i < G_COUNT; i++) {
		if (gc_cmd_global_opts[i].short_name == c) {
			*val = &p->gvals[i];
			return &gc_cmd_global_opts[i];
		}
	}
	return NULL;
}

static void unknown_long(struct parser *p, const char *name, size_t len)
{
	const struct gc_opt *opts = p->entry ? p->entry->opts : NULL;
	size_t n = opts_len(opts), k = 0;
	const char **names = gc_xcalloc(n + G_COUNT + 1, sizeof(*names));
	char *word = gc_xstrndup(name, len);
	const char *best;

	for (size_t i = 0; i < n; i++)
		names[k++] = opts[i].name;
	for (size_t i = 0; i < G_COUNT; i++)
		names[k++] = gc_cmd_global_opts[i].name;
	best = gc_suggest(word, names, k);
	if (best)
		gc_out_error(p->out, "unknown option '--%s' (did you mean '--%s'?)", word, best);
	else
		gc_out_error(p->out, "unknown option '--%s'", word);
	usage_hint(p);
	free(word);
	free(names);
}

/* Checks and stores an option's value. Returns 0, or -1 after reporting. */
static int set_value(struct parser *p, const struct gc_opt *o, struct gc_opt_value *v,
		     const char *value)
{
	if (o->type == GC_OPT_CHOICE) {
		const char *best;
		struct gc_buf b = GC_BUF_INIT(0);

		for (size_t i = 0; o->choices[i]; i++) {
			if (strcmp(o->choices[i], value) == 0) {
				v->str = o->choices[i];
				v->count++;
				gc_buf_release(&b);
				return 0;
			}
			gc_buf_addf(&b, "%s%s", i ? ", " : "", o->choices[i]);
		}
		best = gc_suggest(value, o->choices, 0);
		if (best)
			gc_out_error(p->out, "invalid value '%s' for '--%s' (did you mean '%s'?)",
				     value, o->name, best);
		else
			gc_out_error(p->out, "invalid value '%s' for '--%s'", value, o->name);
		gc_out_hint(p->out, "'--%s' is one of: %s", o->name, b.data);
		gc_buf_release(&b);
		return -1;
	}
	if (o->type == GC_OPT_INT) {
		int64_t n;

		if (gc_parse_i64(value, o->min, o->max, &n) < 0) {
			gc_out_error(p->out,
				     "invalid value '%s' for '--%s': expected a whole number "
				     "from %lld to %lld",
				     value, o->name, (long long)o->min, (long long)o->max);
			return -1;
		}
		v->num = n;
	}
	v->str = value;
	v->count++;
	if (o->repeat) {
		v->list = gc_xreallocarray(v->list, v->n_list + 1, sizeof(*v->list));
		v->list[v->n_list++] = value;
	}
	return 0;
}

/* The option's value in the next word; spelled is the option as the user wrote it. */
static int next_value(struct parser *p, const struct gc_opt *o, struct gc_opt_value *v, int argc,
		      char **argv, int *i, const char *spelled)
{
	if (*i + 1 >= argc) {
		gc_out_error(p->out, "option '%s' needs a value (%s)", spelled,
			     o->arg ? o->arg : "VALUE");
		usage_hint(p);
		return -1;
	}
	(*i)++;
	return set_value(p, o, v, argv[*i]);
}

static int parse_long(struct parser *p, int argc, char **argv, int *i)
{
	const char *name = argv[*i] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	struct gc_opt_value *v = NULL;
	const struct gc_opt *o = find_long(p, name, len, &v);
	char spelled[80];

	if (!o) {
		unknown_long(p, name, len);
		return -1;
	}
	if (o->type == GC_OPT_FLAG) {
		if (eq) {
			gc_out_error(p->out, "option '--%s' takes no value", o->name);
			usage_hint(p);
			return -1;
		}
		v->count++;
		return 0;
	}
	if (eq)
		return set_value(p, o, v, eq + 1);
	snprintf(spelled, sizeof(spelled), "--%s", o->name);
	return next_value(p, o, v, argc, argv, i, spelled);
}

/* -abc: a run of short flags; the first option that takes a value takes the rest of
 * the word ("-ojson") or, when nothing is left, the next word ("-o json"). */
static int parse_short(struct parser *p, int argc, char **argv, int *i)
{
	const char *word = argv[*i];

	for (size_t j = 1; word[j]; j++) {
		struct gc_opt_value *v = NULL;
		const struct gc_opt *o = find_short(p, word[j], &v);

		if (!o) {
			gc_out_error(p->out, "unknown option '-%c'", word[j]);
			usage_hint(p);
			return -1;
		}
		if (o->type == GC_OPT_FLAG) {
			v->count++;
			continue;
		}
		if (word[j + 1])
			return set_value(p, o, v, word + j + 1);
		return next_value(p, o, v, argc, argv, i, (char[]){ '-', o->short_name, '\0' });
	}
	return 0;
}

static int take_word(struct parser *p, char *word)
{
	bool ambiguous;

	if (p->entry && p->dashdash && (p->entry->flags & GC_CMD_REMOTE_CMD)) {
		GC_ALLOC_GROW(p->cmd, p->n_cmd + 1, p->alloc_cmd);
		p->cmd[p->n_cmd++] = word;
		return 0;
	}
	if (p->entry) {
		GC_ALLOC_GROW(p->args, p->n_args + 1, p->alloc_args);
		p->args[p->n_args++] = word;
		return 0;
	}
	p->entry = gc_cmd_find(p->table, p->table_len, word, &ambiguous);
	if (!p->entry) {
		gc_cmd_report_unknown(p->out, p->table, p->table_len, word);
		return -1;
	}
	p->vals = gc_xcalloc(opts_len(p->entry->opts) + 1, sizeof(*p->vals));
	opts_defaults(p->out, p->entry->opts, p->vals);
	return 0;
}

static int parse(struct parser *p, int argc, char **argv)
{
	bool only_words = false;

	opts_defaults(p->out, gc_cmd_global_opts, p->gvals);
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		int rc;

		if (!only_words && strcmp(a, "--") == 0) {
			only_words = true;
			p->dashdash = p->entry != NULL;
			continue;
		}
		if (only_words || a[0] != '-' || a[1] == '\0')
			rc = take_word(p, a); /* "-" alone is a word: stdin, by convention */
		else if (a[1] == '-')
			rc = parse_long(p, argc, argv, &i);
		else
			rc = parse_short(p, argc, argv, &i);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/*
 * Parse errors are reported before the whole line is read, so --no-color is looked
 * for up front: the error about a bad option later on the line must already honour it.
 */
static bool prescan_no_color(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--no-color") == 0)
			return true;
	}
	return false;
}

bool gc_cmd_is_tty(FILE *f, int forced)
{
	if (forced >= 0)
		return forced != 0;
	return f && fileno(f) >= 0 && isatty(fileno(f));
}

static void setup_color(struct gc_output *out, const struct gc_cmd_io *io, bool no_color)
{
	const char *env =
		io->env && io->env->lookup ? io->env->lookup(io->env->ctx, "NO_COLOR") : NULL;

	out->color_out = gc_output_want_color(gc_cmd_is_tty(io->out, io->out_tty), no_color, env);
	out->color_err = gc_output_want_color(gc_cmd_is_tty(io->err, io->err_tty), no_color, env);
}

static enum gc_log_level log_level(const struct gc_cmd_globals *g)
{
	if (g->quiet)
		return GC_LOG_ERROR;
	switch (g->verbose) {
	case 0: return GC_LOG_WARN;
	case 1: return GC_LOG_INFO;
	case 2: return GC_LOG_DEBUG;
	default: return GC_LOG_TRACE;
	}
}

void gc_cmd_print_spec_errors(struct gc_output *out, const char *file, struct gc_diags *d,
			      const struct gc_error *err)
{
	size_t n = d->nr;

	gc_diags_sort(d);
	for (size_t i = 0; i < n; i++)
		gc_out_file_error(out, d->file, d->items[i].line, d->items[i].col,
				  d->items[i].message);
	if (n == 0) {
		gc_out_file_error(out, file, 0, 0, err->message);
		n = 1;
	}
	if (out->gha)
		gc_gha_print_diags(out, file, d, err);
	gc_out_printf(out, out->err, "%s%s:%s %zu error%s\n",
		      gc_out_style(out, out->err, GC_STYLE_BOLD), file,
		      gc_out_style(out, out->err, GC_STYLE_RESET), n, n == 1 ? "" : "s");
}

/* NEEDS_SPEC: loads args[0] (or the default file) into ctx. Returns 0 or -1. */
static int load_spec(struct gc_cmd_ctx *ctx)
{
	struct gc_diags diags;
	struct gc_error err;
	int rc;

	if (ctx->entry->flags & GC_CMD_SPEC_OPT)
		ctx->spec_file = gc_cmd_opt_str(ctx, "file");
	else
		ctx->spec_file = ctx->n_args > (size_t)ctx->entry->min_args ? ctx->args[0]
									    : GC_CMD_DEFAULT_SPEC;
	gc_error_init(&err);
	gc_diags_init(&diags, ctx->spec_file);
	rc = gc_spec_load_file(&ctx->spec, ctx->spec_file, ctx->env, &diags, &err);
	if (rc < 0)
		gc_cmd_print_spec_errors(ctx->out, ctx->spec_file, &diags, &err);
	gc_diags_release(&diags);
	return rc;
}

static int run(struct gc_cmd_ctx *ctx)
{
	struct sigaction sa, old_int, old_term;
	int rc;

	if (!(ctx->entry->flags & GC_CMD_MUTATES))
		return ctx->entry->exec(ctx);
	/*
	 * A mutating command must not die half-way through a batch of cloud calls: the
	 * first SIGINT only sets a flag the command polls between steps, so it can stop
	 * at a safe point and leave a state a re-run converges from.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	cmd_interrupted = 0;
	cmd_catch = 1;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = ctx->entry->exec(ctx);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (cmd_interrupted && !(ctx->entry->flags & GC_CMD_OWN_EXIT))
		rc = GC_EXIT_INTERRUPTED;
	return rc;
}

static int check_arg_count(struct parser *p, struct gc_output *out)
{
	const struct gc_cmd_entry *e = p->entry;
	size_t n = p->n_args;

	if (e->min_args >= 0 && n < (size_t)e->min_args) {
		gc_out_error(out, "'%s' needs at least %d argument%s, got %zu", e->name,
			     e->min_args, e->min_args == 1 ? "" : "s", n);
	} else if (e->max_args != GC_CMD_ARGS_UNLIMITED && n > (size_t)e->max_args) {
		if (e->max_args == 0)
			gc_out_error(out, "'%s' takes no arguments, got '%s'", e->name, p->args[0]);
		else
			gc_out_error(out, "'%s' takes at most %d argument%s, got %zu", e->name,
				     e->max_args, e->max_args == 1 ? "" : "s", n);
	} else if ((e->flags & GC_CMD_NEEDS_CMD) && p->n_cmd == 0) {
		gc_out_error(out, "'%s' needs a command after '--'", e->name);
	} else {
		return 0;
	}
	print_usage_line(out, out->err, e);
	return -1;
}

int gc_cmd_dispatch(const struct gc_cmd_entry *const *table, size_t table_len, int argc,
		    char **argv, const struct gc_cmd_io *io)
{
	struct gc_output out;
	struct parser p;
	struct gc_cmd_ctx ctx;
	struct gc_log log;
	struct gc_gha gha;
	int rc;

	memset(&p, 0, sizeof(p));
	memset(&ctx, 0, sizeof(ctx));
	gc_output_init(&out, io->out, io->err);
	out.gha = gc_gha_enabled(io->env);
	setup_color(&out, io, prescan_no_color(argc, argv));
	p.out = &out;
	p.table = table;
	p.table_len = table_len;

	if (parse(&p, argc, argv) < 0) {
		rc = GC_EXIT_USAGE;
		goto out;
	}
	ctx.globals.output =
		strcmp(p.gvals[G_OUTPUT].str, "json") == 0 ? GC_OUTPUT_JSON : GC_OUTPUT_TEXT;
	ctx.globals.verbose = (int)p.gvals[G_VERBOSE].count;
	ctx.globals.quiet = p.gvals[G_QUIET].count > 0;
	ctx.globals.no_color = p.gvals[G_NO_COLOR].count > 0;
	out.format = ctx.globals.output;
	out.quiet = ctx.globals.quiet;
	setup_color(&out, io, ctx.globals.no_color);

	if (p.gvals[G_HELP].count) {
		if (p.entry)
			gc_cmd_print_help(&out, out.out, p.entry);
		else
			gc_cmd_print_overview(&out, out.out, table, table_len);
		rc = GC_EXIT_OK;
		goto out;
	}
	if (p.gvals[G_VERSION].count) {
		gc_out_printf(&out, out.out, "%s %s\n", GC_PROGRAM, GC_VERSION);
		rc = GC_EXIT_OK;
		goto out;
	}
	if (!p.entry) {
		gc_cmd_print_overview(&out, out.err, table, table_len);
		rc = GC_EXIT_USAGE;
		goto out;
	}
	if (check_arg_count(&p, &out) < 0) {
		gc_out_hint(&out, "run '%s %s --help' for usage", GC_PROGRAM, p.entry->name);
		rc = GC_EXIT_USAGE;
		goto out;
	}

	ctx.entry = p.entry;
	ctx.table = table;
	ctx.table_len = table_len;
	ctx.opts = p.vals;
	ctx.args = p.args;
	ctx.n_args = p.n_args;
	ctx.cmd = p.cmd;
	ctx.n_cmd = p.n_cmd;
	ctx.out = &out;
	ctx.env = io->env;
	ctx.io = io;
	/* in GitHub Actions, the log announces each secret it learns before its next line */
	if (out.gha) {
		gc_gha_init(&gha, &out, &log, io->env);
		ctx.gha = &gha;
		gc_log_init(&log, log_level(&ctx.globals), gc_gha_log_sink, &gha);
	} else {
		gc_log_init(&log, log_level(&ctx.globals), gc_output_log_sink, &out);
	}
	ctx.log = &log;
	out.log = &log; /* messages never show the secrets the log learns */
	if ((p.entry->flags & (GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS)) && load_spec(&ctx) < 0)
		rc = GC_EXIT_FAILURE;
	else if ((p.entry->flags & GC_CMD_NEEDS_CREDS) && gc_cmd_open_provider(&ctx) < 0)
		rc = GC_EXIT_FAILURE;
	else
		rc = run(&ctx);
	gc_provider_close(ctx.provider);
	gc_spec_free(ctx.spec);
	gc_gha_release(ctx.gha);
	out.log = NULL;
	gc_log_release(&log);
out:
	fflush(io->out);
	fflush(io->err);
	for (size_t i = 0; p.entry && i < opts_len(p.entry->opts); i++)
		free(p.vals[i].list);
	free(p.vals);
	free(p.args);
	free(p.cmd);
	return rc;
}
