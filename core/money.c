/*
 * money.c: the one place amounts cross currencies (money.h). The only rate is the user's:
 * a figure converted with a rate we made up would be a cap the user never set.
 */
#include <stdio.h>
#include <string.h>

#include "core/money.h"

const char *gc_money_spec_currency(const struct gc_spec *spec)
{
	return spec->lifecycle.currency[0] ? spec->lifecycle.currency : "USD";
}

int gc_money_convert(const struct gc_spec *spec, double amount, const char *from, const char *to,
		     double *out)
{
	double rate = spec->lifecycle.cny_per_usd;

	if (strcmp(from, to) == 0) {
		*out = amount;
		return 0;
	}
	if (!(rate > 0))
		return -1;
	if (strcmp(from, "USD") == 0 && strcmp(to, "CNY") == 0)
		*out = amount * rate;
	else if (strcmp(from, "CNY") == 0 && strcmp(to, "USD") == 0)
		*out = amount / rate;
	else
		return -1;
	return 0;
}

/* "prices on this account are in CNY but lifecycle.max_hourly_cost (f:12:20) is in USD: ..." */
static int refuse(const struct gc_spec *spec, const char *account, const char *what,
		  const struct gc_spec_pos *pos, struct gc_error *err)
{
	const char *mine = gc_money_spec_currency(spec);
	bool usd_cny = (!strcmp(mine, "USD") || !strcmp(mine, "CNY")) &&
		(!strcmp(account, "USD") || !strcmp(account, "CNY"));

	if (!usd_cny)
		return gc_error_set(err, GC_EINVALID,
				    "prices on this account are in %s but %s (%s:%u:%u) is in %s, "
				    "and gpucluster converts only between USD and CNY",
				    account, what, spec->file ? spec->file : "spec", pos->line,
				    pos->col, mine);
	return gc_error_set(err, GC_EINVALID,
			    "prices on this account are in %s but %s (%s:%u:%u) is in %s: set "
			    "lifecycle.cny_per_usd (yuan per US dollar) or lifecycle.currency: %s",
			    account, what, spec->file ? spec->file : "spec", pos->line, pos->col,
			    mine, account);
}

int gc_money_check(const struct gc_spec *spec, const char *account, double *out_cap,
		   struct gc_error *err)
{
	const char *mine = gc_money_spec_currency(spec);
	double cap = spec->lifecycle.max_hourly_cost, bid;

	if (account && cap > 0 && gc_money_convert(spec, cap, mine, account, &cap) < 0)
		return refuse(spec, account, "lifecycle.max_hourly_cost",
			      &spec->lifecycle.max_hourly_cost_pos, err);
	for (size_t i = 0; account && i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];
		char what[GC_SPEC_GROUP_NAME_MAX + 64];

		if (g->market == GC_MARKET_ON_DEMAND || !(g->max_spot_price > 0) ||
		    gc_money_convert(spec, g->max_spot_price, mine, account, &bid) == 0)
			continue;
		snprintf(what, sizeof(what), "max_spot_price of group '%s'", g->name);
		return refuse(spec, account, what, &g->max_spot_price_pos, err);
	}
	*out_cap = cap > 0 ? cap : 0;
	return 0;
}
