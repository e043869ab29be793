/*
 * output.c: the terminal writer (see output.h). It is the one place that formats
 * errors, diagnostics and JSON for people and scripts, so every command prints them
 * the same way, and the one place that knows about colour escapes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/output.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/str.h"

void gc_output_init(struct gc_output *o, FILE *out, FILE *err)
{
	o->out = out;
	o->err = err;
	o->format = GC_OUTPUT_TEXT;
	o->quiet = false;
	o->color_out = false;
	o->color_err = false;
	o->gha = false;
	o->log = NULL;
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

/* Whether text[i..) is one of the palette's escapes; its length, or 0. */
static size_t palette_at(const char *text, size_t len, size_t i)
{
	for (int st = GC_STYLE_RESET; st <= GC_STYLE_REPLACED; st++) {
		const char *e = gc_style_escape((enum gc_style)st);
		size_t n = strlen(e);

		if (n <= len - i && memcmp(text + i, e, n) == 0)
			return n;
	}
	return 0;
}

/* Whether text[i..) is a live display's cursor move, ESC [ N A or ESC [ K; its length. */
static size_t cursor_at(const char *text, size_t len, size_t i)
{
	size_t k = i + 2;

	if (len - i < 3 || text[i + 1] != '[')
		return 0;
	while (k < len && text[k] >= '0' && text[k] <= '9')
		k++;
	if (k < len && (text[k] == 'K' ? k == i + 2 : text[k] == 'A' && k > i + 2))
		return k + 1 - i;
	return 0;
}

/*
 * Writes text we composed, in which arguments may hold text from outside (ids, tags, a
 * cloud's message): everything is escaped as gc_str_escape does with LF kept, except a
 * leading CR (a live line's rewind), our palette's escapes on a stream with colour, and,
 * when the caller's format wrote escapes itself (cursor), a live display's cursor moves.
 */
static void put_text(struct gc_output *o, FILE *stream, const char *text, unsigned flags,
		     bool cursor)
{
	bool color = stream == o->out ? o->color_out : stream == o->err ? o->color_err : false;
	struct gc_buf b = GC_BUF_INIT(0);
	size_t len = strlen(text), i = 0, from;

	if (text[0] == '\r') {
		gc_buf_addch(&b, '\r');
		i = 1;
	}
	for (from = i; i <= len; i++) {
		size_t n = 0;

		if (i < len && text[i] == '\033') {
			n = color ? palette_at(text, len, i) : 0;
			if (!n && cursor)
				n = cursor_at(text, len, i);
		}
		if (!n && i < len)
			continue;
		gc_str_escape(&b, text + from, i - from, flags | GC_ESC_KEEP_NL);
		flags &= ~GC_ESC_OWN_CMD;
		gc_buf_add(&b, text + i, n);
		i += n ? n - 1 : 0;
		from = i + 1;
	}
	fputs(b.data, stream);
	gc_buf_release(&b);
}

void gc_out_printf(struct gc_output *o, FILE *stream, const char *fmt, ...)
{
	struct gc_buf b = GC_BUF_INIT(0);
	va_list ap;

	va_start(ap, fmt);
	gc_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	put_text(o, stream, b.data, 0, strchr(fmt, '\033') != NULL);
	gc_buf_release(&b);
}

void gc_out_puts(struct gc_output *o, FILE *stream, const char *s)
{
	size_t n = strcspn(s, "\n");

	/* one whole line that starts with "::" is a workflow command we composed (gha.c,
	 * progress.c), whose data is escaped already */
	put_text(o, stream, s, gc_starts_with(s, "::") && n + 1 == strlen(s) ? GC_ESC_OWN_CMD : 0,
		 false);
}

/* Writes s with every control character escaped (LF too unless keep_nl). */
static void put_clean(FILE *stream, const char *s, bool keep_nl)
{
	struct gc_buf b = GC_BUF_INIT(0);

	gc_str_escape(&b, s, strlen(s), keep_nl ? GC_ESC_KEEP_NL : 0);
	fputs(b.data, stream);
	gc_buf_release(&b);
}

void gc_out_puts_clean(struct gc_output *o, FILE *stream, const char *s)
{
	(void)o;
	put_clean(stream, s, true);
}

/* A message for people: one line, redacted (registered secrets, URL userinfo, credentials
 * in query strings, the log's patterns), with every control character escaped. */
static void put_message(struct gc_output *o, const char *msg)
{
	char *red = gc_log_redact_message(o->log, msg);

	put_clean(o->err, red, false);
	free(red);
}

/* Declared apart so the format attribute checks every caller's format string. */
static void labelled(struct gc_output *o, enum gc_style style, const char *label, const char *fmt,
		     va_list ap) __attribute__((format(printf, 4, 0)));

static void labelled(struct gc_output *o, enum gc_style style, const char *label, const char *fmt,
		     va_list ap)
{
	struct gc_buf b = GC_BUF_INIT(0);

	if (label)
		fprintf(o->err, "%s: %s%s:%s ", GC_PROGRAM, gc_out_style(o, o->err, style), label,
			gc_out_style(o, o->err, GC_STYLE_RESET));
	else
		fprintf(o->err, "%shint:%s ", gc_out_style(o, o->err, style),
			gc_out_style(o, o->err, GC_STYLE_RESET));
	gc_buf_vaddf(&b, fmt, ap);
	put_message(o, b.data);
	fputc('\n', o->err);
	gc_buf_release(&b);
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
	labelled(o, GC_STYLE_DIM, NULL, fmt, ap);
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
	put_message(o, message);
	fputc('\n', e);
}

/* Redacts every string of a document (its copy) in place. */
static void redact_strings(struct gc_log *log, json_t *v)
{
	const char *k;
	json_t *child;
	size_t i;

	if (json_is_string(v)) {
		char *red = gc_log_redact_message(log, json_string_value(v));

		if (strcmp(red, json_string_value(v)) != 0)
			json_string_set(v, red);
		free(red);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) redact_strings(log, child);
	} else if (json_is_object(v)) {
		json_object_foreach(v, k, child) redact_strings(log, child);
	}
}

int gc_out_json(struct gc_output *o, const json_t *doc)
{
	json_t *copy = json_deep_copy(doc);
	char *text;
	int rc = 0;

	if (!copy)
		return -1;
	redact_strings(o->log, copy);
	/* JSON_ENSURE_ASCII is off so that UTF-8 names stay readable: jansson escapes the C0
	 * controls, and DEL and the C1 controls (U+0080..U+009F, which a terminal may obey)
	 * are escaped here; outside strings a document is ASCII, so they are in strings */
	text = json_dumps(copy, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(copy);
	if (!text)
		return -1;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == 0x7f) {
			fputs("\\u007F", o->out);
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) {
			fprintf(o->out, "\\u%04X", p[1]);
			p++;
		} else {
			fputc(*p, o->out);
		}
	}
	free(text);
	fputc('\n', o->out);
	if (ferror(o->out))
		rc = -1;
	return fflush(o->out) == 0 ? rc : -1;
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
