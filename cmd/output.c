/*
 * output.c: the terminal writer (see output.h). It is the one place that formats
 * errors, diagnostics and JSON for people and scripts, so every command prints them
 * the same way, and the one place that knows about colour escapes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cmd/output.h"
#include "core/log.h"
#include "core/provider.h"

void gc_output_init(struct gc_output *o, FILE *out, FILE *err)
{
	o->out = out;
	o->err = err;
	o->format = GC_OUTPUT_TEXT;
	o->quiet = false;
	o->color_out = false;
	o->color_err = false;
	o->gha = false;
}

bool gc_output_want_color(bool is_tty, bool no_color_flag, const char *no_color_env)
{
	if (no_color_flag)
		return false;
	/* no-color.org: present and not empty disables colour, whatever the value */
	if (no_color_env && no_color_env[0] != '\0')
		return false;
	return is_tty;
}

const char *gc_style_escape(enum gc_style style)
{
	switch (style) {
	case GC_STYLE_NONE: return "";
	case GC_STYLE_RESET: return "\033[0m";
	case GC_STYLE_BOLD: return "\033[1m";
	case GC_STYLE_RED: return "\033[1;31m";
	case GC_STYLE_YELLOW: return "\033[1;33m";
	case GC_STYLE_GREEN: return "\033[32m";
	case GC_STYLE_DIM: return "\033[2m";
	case GC_STYLE_REMOVED: return "\033[31m";
	case GC_STYLE_REPLACED: return "\033[33m";
	}
	return "";
}

const char *gc_out_style(const struct gc_output *o, FILE *stream, enum gc_style style)
{
	bool on = stream == o->out ? o->color_out : stream == o->err ? o->color_err : false;

	return on ? gc_style_escape(style) : "";
}

void gc_out_printf(struct gc_output *o, FILE *stream, const char *fmt, ...)
{
	va_list ap;

	(void)o;
	va_start(ap, fmt);
	vfprintf(stream, fmt, ap);
	va_end(ap);
}

void gc_out_puts(struct gc_output *o, FILE *stream, const char *s)
{
	(void)o;
	fputs(s, stream);
}

/*
 * Writes s with control characters escaped as \xNN (tab kept, and newline when
 * keep_nl): diagnostics and spec summaries quote bytes from an untrusted file, and an
 * escape sequence in there must not reach the terminal as one.
 */
static void put_clean(FILE *stream, const char *s, bool keep_nl)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p < 0x20 && *p != '\t' && !(keep_nl && *p == '\n')) || *p == 0x7f)
			fprintf(stream, "\\x%02x", *p);
		else
			fputc(*p, stream);
	}
}

void gc_out_puts_clean(struct gc_output *o, FILE *stream, const char *s)
{
	(void)o;
	put_clean(stream, s, true);
}

/* Declared apart so the format attribute checks every caller's format string. */
static void labelled(struct gc_output *o, enum gc_style style, const char *label, const char *fmt,
		     va_list ap) __attribute__((format(printf, 4, 0)));

static void labelled(struct gc_output *o, enum gc_style style, const char *label, const char *fmt,
		     va_list ap)
{
	fprintf(o->err, "%s: %s%s:%s ", GC_PROGRAM, gc_out_style(o, o->err, style), label,
		gc_out_style(o, o->err, GC_STYLE_RESET));
	vfprintf(o->err, fmt, ap);
	fputc('\n', o->err);
}

void gc_out_error(struct gc_output *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	labelled(o, GC_STYLE_RED, "error", fmt, ap);
	va_end(ap);
}

void gc_out_warn(struct gc_output *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	labelled(o, GC_STYLE_YELLOW, "warning", fmt, ap);
	va_end(ap);
}

void gc_out_hint(struct gc_output *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(o->err, "%shint:%s ", gc_out_style(o, o->err, GC_STYLE_DIM),
		gc_out_style(o, o->err, GC_STYLE_RESET));
	vfprintf(o->err, fmt, ap);
	fputc('\n', o->err);
	va_end(ap);
}

void gc_out_file_error(struct gc_output *o, const char *file, unsigned line, unsigned col,
		       const char *message)
{
	FILE *e = o->err;

	fputs(gc_out_style(o, e, GC_STYLE_BOLD), e);
	put_clean(e, file, false);
	if (line > 0) {
		fprintf(e, ":%u", line);
		if (col > 0)
			fprintf(e, ":%u", col);
	}
	fprintf(e, ":%s %serror:%s ", gc_out_style(o, e, GC_STYLE_RESET),
		gc_out_style(o, e, GC_STYLE_RED), gc_out_style(o, e, GC_STYLE_RESET));
	put_clean(e, message, false);
	fputc('\n', e);
}

int gc_out_json(struct gc_output *o, const json_t *doc)
{
	/* JSON_ENSURE_ASCII is off: jansson escapes control characters either way, and
	 * UTF-8 names stay readable. */
	if (json_dumpf(doc, o->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
		return -1;
	fputc('\n', o->out);
	return fflush(o->out) == 0 ? 0 : -1;
}

json_t *gc_out_json_time(int64_t t)
{
	char s[21];

	if (!t)
		return json_null();
	gc_format_rfc3339(t, s);
	return json_string(s);
}

void gc_output_log_sink(void *ctx, enum gc_log_level level, const char *line)
{
	static const struct {
		const char *name;
		enum gc_style style;
	} levels[] = {
		[GC_LOG_ERROR] = { "error", GC_STYLE_RED },
		[GC_LOG_WARN] = { "warning", GC_STYLE_YELLOW },
		[GC_LOG_INFO] = { "info", GC_STYLE_DIM },
		[GC_LOG_DEBUG] = { "debug", GC_STYLE_DIM },
		[GC_LOG_TRACE] = { "trace", GC_STYLE_DIM },
	};
	struct gc_output *o = ctx;
	unsigned i = (unsigned)level <= GC_LOG_TRACE ? (unsigned)level : GC_LOG_TRACE;

	fprintf(o->err, "%s: %s%s:%s ", GC_PROGRAM, gc_out_style(o, o->err, levels[i].style),
		levels[i].name, gc_out_style(o, o->err, GC_STYLE_RESET));
	put_clean(o->err, line, false);
	fputc('\n', o->err);
}
