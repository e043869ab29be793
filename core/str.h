/*
 * str.h: checked number parsing and small string helpers.
 *
 * The parse functions accept the whole string or nothing (no trailing junk, no leading
 * spaces, no sign where none is allowed) and write *out only on success.
 */
#ifndef GC_STR_H
#define GC_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gc_buf;

/* Decimal, 0..max. Returns 0 or -1. */
int gc_parse_u64(const char *s, uint64_t max, uint64_t *out);
int gc_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite decimal number (no hex, inf or nan). */
int gc_parse_double(const char *s, double *out);

bool gc_starts_with(const char *s, const char *prefix);
bool gc_ends_with(const char *s, const char *suffix);
/* Whether id stands in text as a whole word, not next to [0-9a-z-]: "i-0ab" is not in
 * "i-0abc" (the ids a cloud's error message names). */
bool gc_names_id(const char *text, const char *id);

struct gc_error;

/* A spot bid of at most max as a cloud takes it: rounded DOWN to decimals places (never
 * above the user's maximum), trailing zeros and a bare point dropped ("0.5", "3"); -1 and
 * an invalid-input err when it rounds down to nothing (a bid of 0 is refused by the
 * clouds, and is not what the user meant either). */
int gc_format_bid(double max, unsigned decimals, char out[32], struct gc_error *err);

/* Whether s is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF). */
bool gc_utf8_valid(const char *s, size_t len);
/* The length of the valid UTF-8 character s starts with (1 to 4), or 0. */
size_t gc_utf8_char(const char *s, size_t len);

/* gc_str_escape's flags. */
#define GC_ESC_KEEP_NL 1u /* LF stays a line break (multi-line text) */
#define GC_ESC_OWN_CMD 2u /* a leading "::" is ours (a workflow command we composed) */

/*
 * Appends s[0..len) to out with everything that could drive a terminal or a CI runner
 * written as \xNN: C0 controls but tab (and LF with GC_ESC_KEEP_NL), DEL, C1 controls
 * (U+0080..U+009F) and bytes that are not valid UTF-8. A line that would start, after
 * blanks, with "::" (a GitHub Actions workflow command) has that first ':' written as
 * \x3a, unless GC_ESC_OWN_CMD (for the first line only); "##[", the runner's older
 * command form that it finds anywhere in a line, becomes "#\x23[". For text from outside: a
 * cloud's message, tags, SSH output (docs/internals/logging.md, "Output").
 */
void gc_str_escape(struct gc_buf *out, const char *s, size_t len, unsigned flags);

#endif
