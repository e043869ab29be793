/*
 * shape.c: character classes and ARN shapes (see shape.h).
 */
#include <string.h>

#include "core/shape.h"

static bool lower_or_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool gc_shape_chars(const char *s, size_t len, bool upper, const char *extra)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (lower_or_digit(c) || (upper && c >= 'A' && c <= 'Z') || (c && strchr(extra, c)))
			continue;
		return false;
	}
	return true;
}

bool gc_word_of(const char *s, const char *extra)
{
	return s && *s && gc_shape_chars(s, strlen(s), true, extra);
}

bool gc_shape_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

size_t gc_shape_digits(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

bool gc_shape_arn(const char *s, size_t len, const char *prefix, size_t min, size_t max,
		  const char *mid, size_t name_max, const char **rest, size_t *rest_len)
{
	size_t p = strlen(prefix), m = strlen(mid), d;

	if (len <= p || memcmp(s, prefix, p) != 0)
		return false;
	d = gc_shape_digits(s + p, len - p);
	if (d < min || d > max)
		return false;
	d += p;
	if (len < d + m + 1 || memcmp(s + d, mid, m) != 0 || len - d - m > name_max)
		return false;
	*rest = s + d + m;
	*rest_len = len - d - m;
	return true;
}
