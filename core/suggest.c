/*
 * suggest.c: edit distance and nearest-candidate suggestions (see suggest.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/suggest.h"

#define SUGGEST_MAX_LEN 64 /* longer words are not typos worth suggesting for */

size_t gc_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	size_t *d, r;

	d = gc_xcalloc((n + 1) * (m + 1), sizeof(*d));
#define D(i, j) d[(i) * (m + 1) + (j)]
	for (size_t i = 0; i <= n; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= m; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = D(i - 1, j) + 1;

			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < v)
				v = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	}
	r = D(n, m);
#undef D
	free(d);
	return r;
}

const char *gc_suggest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, limit, len = strlen(word);

	if (len == 0 || len > SUGGEST_MAX_LEN)
		return NULL;
	limit = len / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	for (size_t i = 0; n ? i < n : candidates[i] != NULL; i++) {
		size_t d;

		if (strlen(candidates[i]) > SUGGEST_MAX_LEN)
			continue;
		d = gc_edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best && best_d <= limit ? best : NULL;
}
