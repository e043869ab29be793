/*
 * cost.h: what a set of nodes cost, from the cloud's launch times and prices: node-hours
 * and money per instance type and market, and the total. The figures are estimates (no
 * disk, traffic or tax): docs/internals/plan.md, "What a cluster cost", says how each
 * cloud bills and what the estimate leaves out.
 *
 * Life cycle: gc_cost_init -> gc_cost_add per node -> read lines/total -> gc_cost_release.
 */
#ifndef GC_COST_H
#define GC_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/provider.h"

struct gc_cost_line {
	char *type;
	bool spot;
	size_t nodes;
	double hours;  /* billed node-hours */
	double amount; /* in the cost's currency; -1 when some node of the line has no price */
};

struct gc_cost {
	struct gc_cost_line *lines; /* in the order first seen */
	size_t n, alloc;
	size_t nodes;
	double hours;
	double total; /* -1 unless every line's amount is known (a partial sum is not a cost) */
	char currency[GC_CURRENCY_SIZE]; /* "" until a priced node is added */
};

void gc_cost_init(struct gc_cost *c);
void gc_cost_release(struct gc_cost *c);

/*
 * Adds in, billed from its launch time to end (unix seconds) with at least min_billed_s
 * (the cloud's minimum charge), at price per hour in currency (price < 0: unknown). A node
 * whose launch time is unknown, or priced in another currency than the nodes before it,
 * makes its line's amount and the total unknown; its hours count as 0.
 */
void gc_cost_add(struct gc_cost *c, const struct gc_instance *in, int64_t end,
		 unsigned min_billed_s, double price, const char *currency);

#endif
