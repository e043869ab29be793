/*
 * money.h: prices in the currency the cloud bills in, caps and bids in the spec's.
 *
 * A price API answers in the currency the account is billed in (a cloud's China site bills
 * in CNY, the others in USD); lifecycle.max_hourly_cost and every max_spot_price are in
 * lifecycle.currency. Two amounts in different currencies are only
 * compared or sent through the rate the user gave (lifecycle.cny_per_usd), never a built-in
 * one. docs/internals/plan.md, "Currency", says where each conversion happens.
 */
#ifndef GC_MONEY_H
#define GC_MONEY_H

#include "core/error.h"
#include "core/spec.h"

/* The spec's currency: lifecycle.currency, "USD" when unset. */
const char *gc_money_spec_currency(const struct gc_spec *spec);

/* amount in from, as to (an ISO 4217 code each), with the spec's rate. Fails (-1, *out
 * untouched) when they differ and the spec gives no rate between them. */
int gc_money_convert(const struct gc_spec *spec, double amount, const char *from, const char *to,
		     double *out);

/*
 * Checks that the spec's cap and bids can be compared with prices in account (the cloud's
 * currency; NULL: unknown, nothing to check) and sets *out_cap to the cap in that currency
 * (0 without a cap). Fails with GC_EINVALID naming both currencies, the key to set and the
 * LINE:COL of the cap, or of the first bid, that needs the rate.
 */
int gc_money_check(const struct gc_spec *spec, const char *account, double *out_cap,
		   struct gc_error *err);

#endif
