/*
 * ratelimit.c: the token bucket (see ratelimit.h). Everything is integer arithmetic in
 * units of 1/period_ns of a token, so that a bucket refilling 2 tokens a second holds
 * exactly 1 token after 500 ms, however many times it was asked in between.
 */
#include "core/ratelimit.h"

#define NS_PER_MS GC_NS_PER_MS

int gc_ratelimit_init(struct gc_ratelimit *rl, uint64_t capacity, uint64_t refill_tokens,
		      uint64_t refill_period_ms, const struct gc_clock *clock, struct gc_error *err)
{
	uint64_t period_ns;

	if (!capacity || !refill_tokens || !refill_period_ms)
		return gc_error_set(err, GC_EINVALID,
				    "rate limit needs a capacity, a refill amount and a period");
	if (refill_period_ms > UINT64_MAX / NS_PER_MS)
		return gc_error_set(err, GC_EINVALID, "rate limit period too long");
	period_ns = refill_period_ms * NS_PER_MS;
	/* the full level, capacity * period_ns, must fit in 64 bits */
	if (capacity > UINT64_MAX / period_ns)
		return gc_error_set(
			err, GC_EINVALID, "rate limit of %llu tokens per %llu ms is too large",
			(unsigned long long)capacity, (unsigned long long)refill_period_ms);
	pthread_mutex_init(&rl->lock, NULL);
	rl->clock = clock;
	rl->capacity = capacity;
	rl->refill_tokens = refill_tokens;
	rl->period_ns = period_ns;
	rl->units = capacity * period_ns;
	rl->last_ns = gc_clock_now_ns(clock);
	return 0;
}

void gc_ratelimit_release(struct gc_ratelimit *rl)
{
	if (rl)
		pthread_mutex_destroy(&rl->lock);
}

/* Brings the level up to date. Called with the lock held. */
static void refill(struct gc_ratelimit *rl)
{
	uint64_t now = gc_clock_now_ns(rl->clock);
	uint64_t full = rl->capacity * rl->period_ns, room, elapsed;

	/* a monotonic clock does not go back, but a fake one might: treat it as no time */
	if (now <= rl->last_ns)
		return;
	elapsed = now - rl->last_ns;
	rl->last_ns = now;
	room = full - rl->units;
	/* elapsed * refill_tokens could overflow after a long idle spell: compare by
	 * division instead and just fill up */
	if (elapsed >= room / rl->refill_tokens + 1)
		rl->units = full;
	else
		rl->units += elapsed * rl->refill_tokens; /* <= room, by the test above */
}

int gc_ratelimit_take(struct gc_ratelimit *rl, uint64_t n, uint64_t *wait_ms, struct gc_error *err)
{
	uint64_t need, missing, wait_ns;

	if (n > rl->capacity)
		return gc_error_set(err, GC_EINVALID,
				    "request for %llu tokens exceeds the bucket's capacity of %llu",
				    (unsigned long long)n, (unsigned long long)rl->capacity);
	need = n * rl->period_ns; /* cannot overflow: n <= capacity, checked at init */
	pthread_mutex_lock(&rl->lock);
	refill(rl);
	if (rl->units >= need) {
		rl->units -= need;
		*wait_ms = 0;
	} else {
		missing = need - rl->units;
		/* round up twice (to the nanosecond, then to the millisecond): a caller who
		 * waits the answer must find the tokens there */
		wait_ns = missing / rl->refill_tokens + (missing % rl->refill_tokens != 0);
		*wait_ms = wait_ns / NS_PER_MS + (wait_ns % NS_PER_MS != 0);
	}
	pthread_mutex_unlock(&rl->lock);
	return 0;
}

int gc_ratelimit_acquire(struct gc_ratelimit *rl, uint64_t n, uint64_t max_wait_ms,
			 struct gc_error *err)
{
	uint64_t start = gc_clock_now_ns(rl->clock), waited_ms, wait_ms = 0;

	for (;;) {
		uint64_t now;

		if (gc_ratelimit_take(rl, n, &wait_ms, err) < 0)
			return -1;
		if (wait_ms == 0)
			return 0;
		now = gc_clock_now_ns(rl->clock);
		waited_ms = now > start ? (now - start) / NS_PER_MS : 0;
		if (waited_ms > max_wait_ms || wait_ms > max_wait_ms - waited_ms)
			return gc_error_set(err, GC_ETIMEOUT,
					    "rate limit: %llu tokens not available within %llu ms",
					    (unsigned long long)n, (unsigned long long)max_wait_ms);
		/* others may take the tokens while we sleep; then we are told to wait again */
		gc_clock_sleep_ms(rl->clock, wait_ms);
	}
}

uint64_t gc_ratelimit_available(struct gc_ratelimit *rl)
{
	uint64_t n;

	pthread_mutex_lock(&rl->lock);
	refill(rl);
	n = rl->units / rl->period_ns;
	pthread_mutex_unlock(&rl->lock);
	return n;
}
