/*
 * cost.c: node-hours and money per type and market (see cost.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/cost.h"

void gc_cost_init(struct gc_cost *c)
{
	memset(c, 0, sizeof(*c));
}

void gc_cost_release(struct gc_cost *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->lines[i].type);
	free(c->lines);
	gc_cost_init(c);
}

static struct gc_cost_line *line_for(struct gc_cost *c, const char *type, bool spot)
{
	struct gc_cost_line *l;

	for (size_t i = 0; i < c->n; i++)
		if (c->lines[i].spot == spot && strcmp(c->lines[i].type, type) == 0)
			return &c->lines[i];
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 4;
		c->lines = gc_xreallocarray(c->lines, c->alloc, sizeof(*c->lines));
	}
	l = &c->lines[c->n++];
	memset(l, 0, sizeof(*l));
	l->type = gc_xstrdup(type);
	l->spot = spot;
	return l;
}

void gc_cost_add(struct gc_cost *c, const struct gc_instance *in, int64_t end,
		 unsigned min_billed_s, double price, const char *currency)
{
	struct gc_cost_line *l = line_for(c, in->type ? in->type : "-", in->spot);
	bool known = price >= 0 && in->launch_time > 0 && currency && *currency;
	int64_t secs = in->launch_time > 0 && end > in->launch_time ? end - in->launch_time : 0;
	double hours;

	if (known && c->currency[0] && strcmp(c->currency, currency) != 0)
		known = false;
	if (known && !c->currency[0])
		snprintf(c->currency, sizeof(c->currency), "%s", currency);
	if (in->launch_time > 0 && secs < (int64_t)min_billed_s)
		secs = min_billed_s;
	hours = (double)secs / 3600.0;
	l->nodes++;
	l->hours += hours;
	c->nodes++;
	c->hours += hours;
	if (!known || l->amount < 0) {
		l->amount = -1;
		c->total = -1;
		return;
	}
	l->amount += price * hours;
	if (c->total >= 0)
		c->total += price * hours;
}
