/*
 * cmd.h: the command table, its option tables, and the context a command runs in.
 * docs/cli.md ("For developers: adding a command") says what an entry declares and what
 * the dispatcher does for it; an exec function only does its job and returns an exit code.
 *
 * Life cycle: gc_cmd_dispatch builds a struct gc_cmd_ctx on its stack, calls exec
 * once, and releases everything the context owns (option values, the spec, the log)
 * before it returns. Nothing in the context outlives the exec call.
 */
#ifndef GC_CMD_H
#define GC_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/output.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/spec.h"

/*
 * Exit codes, shared with docs/cli.md. Scripts and CI branch on these, so they are
 * part of the interface: never renumber them.
 */
enum gc_exit {
	GC_EXIT_OK = 0,
	GC_EXIT_FAILURE = 1,	   /* invalid spec, failed operation */
	GC_EXIT_CHANGES = 2,	   /* reserved: plan has changes (with --detailed-exitcode) */
	GC_EXIT_USAGE = 64,	   /* unknown command or option, wrong argument count, bad value */
	GC_EXIT_INTERRUPTED = 130, /* SIGINT or SIGTERM during a mutating command */
};

enum gc_opt_type {
	GC_OPT_FLAG, /* no value; may repeat, the context counts occurrences */
	GC_OPT_STRING,
	GC_OPT_INT,    /* a decimal number within [min, max] */
	GC_OPT_CHOICE, /* one of a fixed list of words */
};

/*
 * One option. Tables are arrays ended by an entry whose name is NULL. Every option
 * has a long name; the short name is optional. When an option is given more than
 * once, the last value wins (flags count instead).
 */
struct gc_opt {
	const char *name; /* long name without the dashes: "output" */
	char short_name;  /* 'o', or 0 for none */
	enum gc_opt_type type;
	const char *const *choices; /* GC_OPT_CHOICE: NULL-terminated list */
	const char *arg;	    /* the value's name in help: "FILE", "N" */
	const char *help;	    /* one line, lowercase, no full stop */
	const char *def;	    /* the default, as text; NULL for none */
	int64_t min, max;	    /* GC_OPT_INT bounds */
	bool repeat;		    /* STRING: every value given is kept (gc_cmd_opt_list) */
};

/* What a command needs the dispatcher to prepare before exec runs (docs/cli.md, step 4). */
#define GC_CMD_NEEDS_SPEC  (1u << 0)
#define GC_CMD_NEEDS_CREDS (1u << 1) /* implies SPEC */
#define GC_CMD_MUTATES	   (1u << 2)
#define GC_CMD_SPEC_OPT	   (1u << 3) /* the spec comes from --file, not args[0] */
#define GC_CMD_REMOTE_CMD  (1u << 4)
#define GC_CMD_NEEDS_CMD   (1u << 5)
/* MUTATES, and exec's exit code stands after a signal (run: a failed teardown is 1). */
#define GC_CMD_OWN_EXIT (1u << 6)

#define GC_CMD_ARGS_UNLIMITED (-1)

/* The spec file a NEEDS_SPEC command and `validate` read when given none. */
#define GC_CMD_DEFAULT_SPEC "cluster.yaml"

struct gc_cmd_ctx;
struct gc_gha;

struct gc_cmd_entry {
	const char *name;
	const char *summary;	   /* one line for the overview, lowercase */
	const char *usage;	   /* the positional part: "[FILE...]", "" for none */
	const char *description;   /* optional paragraph(s) for --help; NULL for none */
	const struct gc_opt *opts; /* NULL or a table ended by a NULL name */
	int min_args;
	int max_args;	/* GC_CMD_ARGS_UNLIMITED for no limit */
	unsigned flags; /* GC_CMD_* */
	int (*exec)(struct gc_cmd_ctx *ctx);
};

/* The parsed value of one option, parallel to the entry's option table. */
struct gc_opt_value {
	unsigned count;	   /* how many times it was given; 0 = default */
	const char *str;   /* STRING/CHOICE: the value or the default (may be NULL) */
	int64_t num;	   /* INT: the value or the default (0 without one) */
	const char **list; /* repeat: every value given, in order */
	size_t n_list;
};

/* Settings the global flags set; they apply to every command. */
struct gc_cmd_globals {
	enum gc_output_format output;
	int verbose; /* -v count: 1 info, 2 debug, 3+ trace */
	bool quiet;
	bool no_color;
};

/*
 * Where the dispatcher reads and writes: the seam tests use to capture output and
 * control the environment. out_tty/err_tty: 1 or 0 to say whether a stream is a
 * terminal, -1 to ask isatty(). env is also what ${VAR} in specs expands from.
 */
struct gc_cmd_io {
	FILE *in; /* confirmations; NULL: none can be given (as if not a terminal) */
	FILE *out;
	FILE *err;
	int in_tty;
	int out_tty;
	int err_tty;
	const struct gc_spec_env *env;
};

/* Whether f is a terminal: forced (an io's *_tty) when 0 or 1, else isatty(); NULL is not. */
bool gc_cmd_is_tty(FILE *f, int forced);

struct gc_cmd_ctx {
	const struct gc_cmd_entry *entry;
	const struct gc_cmd_entry *const *table; /* the table dispatched from (for help) */
	size_t table_len;
	struct gc_opt_value *opts; /* one per entry->opts row */
	char **args;		   /* positional arguments, not including the command */
	size_t n_args;
	char **cmd; /* REMOTE_CMD: the words after "--" */
	size_t n_cmd;
	struct gc_cmd_globals globals;
	struct gc_output *out;
	struct gc_log *log;
	const struct gc_spec_env *env;
	struct gc_spec *spec;	      /* NEEDS_SPEC: loaded and valid; else NULL */
	const char *spec_file;	      /* NEEDS_SPEC: the file it came from */
	struct gc_provider *provider; /* NEEDS_CREDS: open on the spec's cloud; else NULL */
	const struct gc_cmd_io *io;
	struct gc_gha *gha; /* GitHub Actions mode (cmd/gha.h); NULL outside it */
	/* run: its command line approves the launches its apply makes, not terminations */
	bool launches_approved;
};

/* The real commands, in alphabetical order. */
extern const struct gc_cmd_entry *const gc_cmd_table[];
extern const size_t gc_cmd_table_len;

extern const struct gc_cmd_entry gc_cmd_apply;
extern const struct gc_cmd_entry gc_cmd_bootstrap;
extern const struct gc_cmd_entry gc_cmd_destroy;
extern const struct gc_cmd_entry gc_cmd_exec;
extern const struct gc_cmd_entry gc_cmd_gc;
extern const struct gc_cmd_entry gc_cmd_help;
extern const struct gc_cmd_entry gc_cmd_hosts;
extern const struct gc_cmd_entry gc_cmd_jobs;
extern const struct gc_cmd_entry gc_cmd_list;
extern const struct gc_cmd_entry gc_cmd_logs;
extern const struct gc_cmd_entry gc_cmd_monitoring;
extern const struct gc_cmd_entry gc_cmd_plan;
extern const struct gc_cmd_entry gc_cmd_report;
extern const struct gc_cmd_entry gc_cmd_run;
extern const struct gc_cmd_entry gc_cmd_scale;
extern const struct gc_cmd_entry gc_cmd_show_gpus;
extern const struct gc_cmd_entry gc_cmd_smoke;
extern const struct gc_cmd_entry gc_cmd_ssh;
extern const struct gc_cmd_entry gc_cmd_status;
extern const struct gc_cmd_entry gc_cmd_validate;
extern const struct gc_cmd_entry gc_cmd_version;

/* The options every command accepts, before or after the command name. */
extern const struct gc_opt gc_cmd_global_opts[];

/*
 * Runs one command line (argv[0] is the program name) against table and returns the
 * exit code. Prints only to io's streams. main() calls it with the real table; tests
 * pass their own.
 */
int gc_cmd_dispatch(const struct gc_cmd_entry *const *table, size_t table_len, int argc,
		    char **argv, const struct gc_cmd_io *io);

/*
 * Finds a command by exact name, else by unique prefix. Returns it, or NULL with
 * *ambiguous set when the prefix matched more than one (ambiguous may be NULL).
 */
const struct gc_cmd_entry *gc_cmd_find(const struct gc_cmd_entry *const *table, size_t len,
				       const char *name, bool *ambiguous);

/* Reports an unknown or ambiguous command name (with candidates / did you mean). */
void gc_cmd_report_unknown(struct gc_output *out, const struct gc_cmd_entry *const *table,
			   size_t len, const char *name);

/* Help text: the overview (every command with its summary) and one command's help. */
void gc_cmd_print_overview(struct gc_output *out, FILE *stream,
			   const struct gc_cmd_entry *const *table, size_t len);
void gc_cmd_print_help(struct gc_output *out, FILE *stream, const struct gc_cmd_entry *e);
/* The gpucluster(1) page in roff, from the table (cmd/man.c). */
void gc_cmd_print_man(FILE *stream, const struct gc_cmd_entry *const *table, size_t len);

/*
 * Reports a spec that failed to load: every diagnostic sorted by position (or err's
 * message for the whole file when there are none), then "FILE: N errors", on err.
 */
void gc_cmd_print_spec_errors(struct gc_output *out, const char *file, struct gc_diags *d,
			      const struct gc_error *err);

/* Option values by long name; the name must be in the entry's table (else abort). */
bool gc_cmd_opt_given(const struct gc_cmd_ctx *ctx, const char *name);
unsigned gc_cmd_opt_count(const struct gc_cmd_ctx *ctx, const char *name);
const char *gc_cmd_opt_str(const struct gc_cmd_ctx *ctx, const char *name);
int64_t gc_cmd_opt_int(const struct gc_cmd_ctx *ctx, const char *name);
/* A repeat option's values, in the order given (*n is 0 when none was given). */
const char *const *gc_cmd_opt_list(const struct gc_cmd_ctx *ctx, const char *name, size_t *n);

/* Whether SIGINT/SIGTERM arrived while a GC_CMD_MUTATES command ran. */
bool gc_cmd_interrupted(void);
/* How many arrived (each one caught is counted). */
unsigned gc_cmd_interrupts(void);
/* Catches n signals (1 unless a command asks for more) before the next one ends the process,
 * for a second safe point (run --down: the first stops the command, the second the teardown). */
void gc_cmd_catch_interrupts(unsigned n);

#endif
