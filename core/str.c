/*
 * str.c: checked number parsing and small string helpers (see str.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/str.h"

int gc_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (const char *p = s; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return -1;
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

int gc_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	uint64_t mag;
	int neg = 0;
	int64_t v;

	if (!s)
		return -1;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (gc_parse_u64(s, (uint64_t)INT64_MAX + (uint64_t)neg, &mag) < 0)
		return -1;
	if (neg)
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	else
		v = (int64_t)mag;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int gc_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	/* strtod also takes hex floats, inf and nan: accept plain decimals only */
	for (const char *p = s; *p; p++)
		if (!strchr("0123456789.-+eE", *p))
			return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

bool gc_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool gc_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int gc_format_bid(double max, unsigned decimals, char out[32], struct gc_error *err)
{
	double scale = pow(10.0, decimals > 9 ? 9 : decimals);
	double v = floor(max * scale + 1e-9) / scale; /* 1e-9: 0.3 * 1000 is 299.99... */
	size_t n;

	if (!(v > 0))
		return gc_error_set(
			err, GC_EINVALID,
			"max_spot_price %g rounds down to 0 at the %u decimals the cloud "
			"takes: the smallest bid is %g",
			max, decimals, 1.0 / scale);
	snprintf(out, 32, "%.*f", (int)decimals, v);
	n = strlen(out);
	while (n > 1 && out[n - 1] == '0')
		out[--n] = '\0';
	if (n > 1 && out[n - 1] == '.')
		out[--n] = '\0';
	return 0;
}

static bool id_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-';
}

bool gc_names_id(const char *text, const char *id)
{
	size_t len = strlen(id);

	for (const char *s = strstr(text, id); s; s = strstr(s + 1, id)) {
		char before = s == text ? ' ' : s[-1];

		if (!id_char(s[len]) && !id_char(before))
			return true;
	}
	return false;
}

size_t gc_utf8_char(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = len ? s[0] : 0;
	size_t n;
	uint32_t cp;

	if (!len)
		return 0;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		n = 1;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 2;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 3;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len <= n)
		return 0;
	for (size_t k = 1; k <= n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000))
		return 0; /* overlong */
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n + 1;
}

bool gc_utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n)
		if (!(n = gc_utf8_char(s + i, len - i)))
			return false;
	return true;
}

/* Whether s[i..) starts a line's text with "::", after blanks. */
static bool at_command(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i + 1 < len && s[i] == ':' && s[i + 1] == ':';
}

void gc_str_escape(struct gc_buf *out, const char *s, size_t len, unsigned flags)
{
	bool line_start = !(flags & GC_ESC_OWN_CMD);
	size_t i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = gc_utf8_char(s + i, len - i);

		if (line_start && at_command(s, len, i)) {
			while (s[i] != ':')
				gc_buf_addch(out, s[i++]);
			gc_buf_addstr(out, "\\x3a");
			i++;
		} else if (c == '#' && len - i >= 3 && s[i + 1] == '#' && s[i + 2] == '[') {
			gc_buf_addstr(out, "#\\x23["); /* the runner's old "##[command]" form */
			i += 3;
		} else if (c == '\n' && (flags & GC_ESC_KEEP_NL)) {
			gc_buf_addch(out, '\n');
			i++;
		} else if (n == 1 && c >= 0x20 && c != 0x7f) {
			gc_buf_addch(out, (char)c);
			i++;
		} else if (c == '\t') {
			gc_buf_addch(out, '\t');
			i++;
		} else if (n > 1 && !(c == 0xc2 && (unsigned char)s[i + 1] < 0xa0)) {
			gc_buf_add(out, s + i, n);
			i += n;
		} else { /* a control, or a byte that is no character */
			for (size_t k = 0; k < (n ? n : 1); k++)
				gc_buf_addf(out, "\\x%02x", (unsigned char)s[i + k]);
			i += n ? n : 1;
		}
		line_start = c == '\n' && (flags & GC_ESC_KEEP_NL);
	}
}
