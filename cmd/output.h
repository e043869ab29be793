/*
 * output.h: everything gpucluster writes to the terminal goes through here.
 *
 * A struct gc_output holds the two streams (results on `out`, diagnostics, logs and
 * errors on `err`), the output format chosen with -o, and whether each stream gets
 * colour. Colour is decided once, when the dispatcher sets the struct up: only on a
 * terminal, never with --no-color or a non-empty NO_COLOR. Nothing else in the program
 * touches stdout or stderr directly, so tests capture all output by handing in their
 * own streams.
 *
 * Everything written is sanitised here, once, so no call site has to (the rules are in
 * docs/internals/logging.md, "Output"): text from outside (a cloud's message, tags, SSH
 * output) can carry terminal escapes, CR/LF and GitHub Actions workflow commands, and
 * messages can carry secrets. Messages (errors, warnings, hints, log lines, spec
 * diagnostics) are one line, redacted and with every control character escaped; other
 * text keeps its line breaks and our own colours, and no line of it can start with "::".
 *
 * Life cycle: gc_output_init -> gc_output_set_color -> writes. The struct owns nothing;
 * the streams belong to the caller.
 */
#ifndef GC_OUTPUT_H
#define GC_OUTPUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core/diag.h"
#include "core/log.h"

/* The program name used as the prefix of error lines. */
#define GC_PROGRAM "gpucluster"

enum gc_output_format {
	GC_OUTPUT_TEXT,
	GC_OUTPUT_JSON,
};

/* The one palette: every colour gpucluster prints is one of these. */
enum gc_style {
	GC_STYLE_NONE, /* no escape at all */
	GC_STYLE_RESET,
	GC_STYLE_BOLD,
	GC_STYLE_RED,	   /* bold red: "error:" */
	GC_STYLE_YELLOW,   /* bold yellow: "warning:" */
	GC_STYLE_GREEN,	   /* what is created (a plan's "+") */
	GC_STYLE_DIM,	   /* what is left alone (a plan's "~") */
	GC_STYLE_REMOVED,  /* red: what goes (a plan's "-") */
	GC_STYLE_REPLACED, /* yellow: what is replaced (a plan's "-/+") */
};

struct gc_output {
	FILE *out;
	FILE *err;
	enum gc_output_format format;
	bool quiet;
	bool color_out;
	bool color_err;
	bool gha; /* GitHub Actions mode: spec errors also become annotations (cmd/gha.h) */
	struct gc_log *log; /* whose registered secrets messages never show; NULL: none */
};

void gc_output_init(struct gc_output *o, FILE *out, FILE *err);

/*
 * Whether a stream gets colour: it is a terminal, --no-color was not given, and the
 * NO_COLOR environment variable is unset or empty (https://no-color.org).
 */
bool gc_output_want_color(bool is_tty, bool no_color_flag, const char *no_color_env);

/* The escape sequence of style, whatever the stream ("" for GC_STYLE_NONE). */
const char *gc_style_escape(enum gc_style style);
/* The escape sequence for style on stream, or "" when that stream has no colour. */
const char *gc_out_style(const struct gc_output *o, FILE *stream, enum gc_style style);

/*
 * Text we composed: stream is o->out or o->err. Line breaks stay; control characters are
 * written as \xNN but for a leading CR, the palette's escapes on a stream with colour and,
 * for gc_out_printf when its format holds escapes itself, a live display's cursor moves.
 * A line that would start with "::" is broken (\x3a:), except when gc_out_puts is given
 * exactly one line that starts so: a workflow command we composed.
 */
void gc_out_printf(struct gc_output *o, FILE *stream, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gc_out_puts(struct gc_output *o, FILE *stream, const char *s);
/* Text from outside, as is (SSH output): line breaks and tabs stay, every other control
 * character is written as \xNN and no line can start with "::". */
void gc_out_puts_clean(struct gc_output *o, FILE *stream, const char *s);

/* "gpucluster: error: MESSAGE" on err. */
void gc_out_error(struct gc_output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "gpucluster: warning: MESSAGE" on err. */
void gc_out_warn(struct gc_output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "hint: MESSAGE" on err, following an error. */
void gc_out_hint(struct gc_output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * "FILE:LINE:COL: error: MESSAGE" on err, or "FILE: error: MESSAGE" when the line is 0
 * (a problem with the whole file). Control characters in the message are escaped: a
 * spec is untrusted input and must not drive the terminal.
 */
void gc_out_file_error(struct gc_output *o, const char *file, unsigned line, unsigned col,
		       const char *message);

/* Writes one JSON document, indented, with a final newline, to out. Returns 0 or -1.
 * Its strings are redacted, and every control character in them (DEL and C1 too) is
 * written as \uXXXX or a short escape. */
int gc_out_json(struct gc_output *o, const json_t *doc);
/* A unix time as an RFC 3339 JSON string; 0 (unknown, none) is null. */
json_t *gc_out_json_time(int64_t t);

/*
 * A struct gc_log sink writing "gpucluster: LEVEL: LINE" to err; ctx is the struct
 * gc_output.
 */
void gc_output_log_sink(void *ctx, enum gc_log_level level, const char *line);

#endif
