/*
 * shape.h: the building blocks of value shapes, for the spec validator and for the
 * shape checks of the drivers' facts (image ids, role names; struct gc_provider_facts).
 *
 * Each looks at len bytes of s, which need not be NUL-terminated at len, and only judges
 * the form: whether the cloud knows the value is for the cloud to say at apply time.
 * Stateless.
 */
#ifndef GC_SHAPE_H
#define GC_SHAPE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether every byte is a-z, 0-9, A-Z when upper is set, or one of extra. */
bool gc_shape_chars(const char *s, size_t len, bool upper, const char *extra);

/* Whether the string s (may be NULL) is non-empty and passes gc_shape_chars with upper. */
bool gc_word_of(const char *s, const char *extra);

/* Whether every byte is a lowercase hex digit. */
bool gc_shape_hex(const char *s, size_t len);

/* How many decimal digits s starts with. */
size_t gc_shape_digits(const char *s, size_t len);

/*
 * Whether s is prefix, an account of min..max digits, mid, then a rest of 1 to name_max
 * bytes, returned in *rest and *rest_len: the ARN shape every cloud's role names share
 * ("acs:ram::" "123" ":role/" "NAME").
 */
bool gc_shape_arn(const char *s, size_t len, const char *prefix, size_t min, size_t max,
		  const char *mid, size_t name_max, const char **rest, size_t *rest_len);

#endif
