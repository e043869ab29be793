/*
 * suggest.h: "did you mean" for misspelt keys, commands and enum values.
 */
#ifndef GC_SUGGEST_H
#define GC_SUGGEST_H

#include <stddef.h>

/* Optimal string alignment distance (Levenshtein plus adjacent transposition). */
size_t gc_edit_distance(const char *a, const char *b);

/*
 * The candidate closest to word, or NULL if none is close enough to be a plausible
 * typo (distance at most a third of the word's length, at least 1, at most 3).
 * candidates is a NULL-terminated array when n is 0, or n entries otherwise.
 */
const char *gc_suggest(const char *word, const char *const *candidates, size_t n);

#endif
