/*
 * wait.c: the cancellable sleep and the poll-until-deadline loop (see wait.h).
 */
#include "core/wait.h"

bool gc_cancelled(const struct gc_cancel *c)
{
	return c && c->fn && c->fn(c->ctx);
}

int gc_wait_sleep(const struct gc_clock *clock, const struct gc_cancel *c, uint64_t ms)
{
	while (ms) {
		uint64_t k = ms < GC_WAIT_SLICE_MS ? ms : GC_WAIT_SLICE_MS;

		if (gc_cancelled(c))
			return -1;
		gc_clock_sleep_ms(clock, k);
		ms -= k;
	}
	return gc_cancelled(c) ? -1 : 0;
}

int gc_wait_until(const struct gc_wait *w, gc_wait_poll_fn poll, void *ctx, struct gc_error *err)
{
	const char *what = w->what ? w->what : "the cloud";
	uint64_t interval = w->interval_ms ? w->interval_ms : GC_WAIT_SLICE_MS;
	uint64_t start = gc_clock_now_ns(w->clock);

	for (;;) {
		uint64_t elapsed_ms, nap;
		int rc;

		if (gc_cancelled(w->cancel))
			return gc_error_set(err, GC_ECANCELLED, "cancelled while waiting for %s",
					    what);
		rc = poll(ctx, err);
		if (rc <= 0)
			return rc;
		elapsed_ms = (gc_clock_now_ns(w->clock) - start) / GC_NS_PER_MS;
		if (w->timeout_ms && elapsed_ms >= w->timeout_ms)
			return gc_error_set(err, GC_ETIMEOUT,
					    "timed out after %llu s waiting for %s",
					    (unsigned long long)(w->timeout_ms / 1000), what);
		nap = interval;
		if (w->timeout_ms && elapsed_ms + nap > w->timeout_ms)
			nap = w->timeout_ms - elapsed_ms;
		if (gc_wait_sleep(w->clock, w->cancel, nap) != 0)
			return gc_error_set(err, GC_ECANCELLED, "cancelled while waiting for %s",
					    what);
	}
}
