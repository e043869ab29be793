/*
 * retry.c: the retry policy (backoff with full jitter, retry quota, deadline). See
 * retry.h for the contract and docs/internals/retry.md for where the numbers come from.
 */
#include "core/hash.h"
#include "core/retry.h"

#define NS_PER_MS GC_NS_PER_MS

void gc_retry_quota_init(struct gc_retry_quota *q, unsigned capacity)
{
	pthread_mutex_init(&q->lock, NULL);
	q->capacity = capacity ? capacity : GC_RETRY_QUOTA_INITIAL;
	q->tokens = q->capacity;
}

void gc_retry_quota_release(struct gc_retry_quota *q)
{
	if (q)
		pthread_mutex_destroy(&q->lock);
}

unsigned gc_retry_quota_available(struct gc_retry_quota *q)
{
	unsigned n;

	pthread_mutex_lock(&q->lock);
	n = q->tokens;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* Takes cost tokens if they are all there; returns whether it did. */
static int quota_take(struct gc_retry_quota *q, unsigned cost)
{
	int ok;

	pthread_mutex_lock(&q->lock);
	ok = q->tokens >= cost;
	if (ok)
		q->tokens -= cost;
	pthread_mutex_unlock(&q->lock);
	return ok;
}

static void quota_give(struct gc_retry_quota *q, unsigned n)
{
	pthread_mutex_lock(&q->lock);
	q->tokens = n > q->capacity - q->tokens ? q->capacity : q->tokens + n;
	pthread_mutex_unlock(&q->lock);
}

const char *gc_retry_reason_name(enum gc_retry_reason reason)
{
	switch (reason) {
	case GC_RETRY_RETRYABLE: return "retryable";
	case GC_RETRY_NOT_RETRYABLE: return "not retryable";
	case GC_RETRY_MAX_ATTEMPTS: return "max attempts";
	case GC_RETRY_QUOTA_EMPTY: return "retry quota empty";
	case GC_RETRY_DEADLINE: return "deadline";
	}
	return "unknown";
}

static uint64_t or_default(uint64_t v, uint64_t def)
{
	return v ? v : def;
}

static uint64_t max_backoff_ms(const struct gc_retry_policy *p)
{
	return or_default(p->max_backoff_ms, GC_RETRY_MAX_BACKOFF_MS);
}

uint64_t gc_retry_backoff_ms(const struct gc_retry_policy *p, enum gc_errcode code,
			     unsigned retry_index, uint64_t random)
{
	uint64_t base, cap, ceiling;

	if (code == GC_ETHROTTLED)
		base = or_default(p->base_throttle_ms, GC_RETRY_BASE_THROTTLE_MS);
	else
		base = or_default(p->base_transient_ms, GC_RETRY_BASE_TRANSIENT_MS);
	cap = max_backoff_ms(p);
	/* base * 2^i, capped before the jitter; shifting stops once past the cap so that
	 * large retry indexes cannot overflow */
	ceiling = base;
	while (retry_index-- > 0 && ceiling < cap)
		ceiling *= 2;
	if (ceiling > cap)
		ceiling = cap;
	/* full jitter over [0, ceiling]; the modulo bias is below 2^-40 for ceilings under
	 * a day, far below anything that matters for spreading retries */
	return random % (ceiling + 1);
}

static uint64_t default_rng(void *ctx)
{
	static const uint64_t golden = 0x9e3779b97f4a7c15ull;
	uint64_t v;

	(void)ctx;
	if (gc_random_bytes(&v, sizeof(v)) == 0)
		return v;
	/* The RNG failing must not stop a retry; spreading retries does not need secrecy,
	 * so a scrambled clock reading (splitmix64's finaliser) is good enough. */
	v = gc_clock_now_ns(NULL) + golden;
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

void gc_retry_begin(struct gc_retry *r, const struct gc_retry_policy *policy)
{
	r->policy = policy;
	r->attempts = 0;
	r->held_cost = 0;
	r->start_ns = gc_clock_now_ns(policy->clock);
}

static struct gc_retry_decision give_up(enum gc_retry_reason why)
{
	struct gc_retry_decision d = { 0, 0, why };

	return d;
}

struct gc_retry_decision gc_retry_decide(struct gc_retry *r, enum gc_errcode code,
					 int64_t retry_after_ms)
{
	const struct gc_retry_policy *p = r->policy;
	struct gc_retry_decision d = { 1, 0, GC_RETRY_RETRYABLE };
	unsigned max_attempts = p->max_attempts ? p->max_attempts : GC_RETRY_DEFAULT_MAX_ATTEMPTS;
	uint64_t random, cap = max_backoff_ms(p);
	unsigned cost;

	r->attempts++;
	if (!gc_error_is_retryable(code))
		return give_up(GC_RETRY_NOT_RETRYABLE);
	if (code == GC_EBADRESPONSE && max_attempts > GC_RETRY_BADRESPONSE_MAX_ATTEMPTS)
		max_attempts = GC_RETRY_BADRESPONSE_MAX_ATTEMPTS;
	if (r->attempts >= max_attempts)
		return give_up(GC_RETRY_MAX_ATTEMPTS);

	random = p->rng ? p->rng(p->rng_ctx) : default_rng(NULL);
	d.delay_ms = gc_retry_backoff_ms(p, code, r->attempts - 1, random);
	if (retry_after_ms >= 0) {
		/* the server knows its own window (one cloud's is per minute): wait at least that
		 * long, but never longer than the cap, which bounds a broken or hostile hint */
		uint64_t hint = (uint64_t)retry_after_ms;

		if (hint > d.delay_ms)
			d.delay_ms = hint > cap ? cap : hint;
	}

	if (p->deadline_ms) {
		uint64_t now = gc_clock_now_ns(p->clock);
		uint64_t elapsed_ms = now > r->start_ns ? (now - r->start_ns) / NS_PER_MS : 0;

		/* waiting only to be refused at the deadline wastes the caller's time: say so now */
		if (elapsed_ms >= p->deadline_ms || d.delay_ms >= p->deadline_ms - elapsed_ms)
			return give_up(GC_RETRY_DEADLINE);
	}

	/* the quota is checked last so that a retry refused for another reason costs nothing */
	cost = code == GC_ETHROTTLED ? GC_RETRY_COST_THROTTLED : GC_RETRY_COST;
	if (p->quota) {
		if (!quota_take(p->quota, cost))
			return give_up(GC_RETRY_QUOTA_EMPTY);
		r->held_cost = cost;
	}
	return d;
}

int gc_retry_pause(struct gc_retry *r, struct gc_error *err, int64_t retry_after_ms)
{
	struct gc_retry_decision d = gc_retry_decide(r, err->code, retry_after_ms);

	if (!d.retry) {
		enum gc_errcode code = err->code;

		/* a non-retryable error was never going to be retried: it speaks for itself */
		if (d.reason != GC_RETRY_NOT_RETRYABLE)
			gc_error_prefix(err, "gave up after %u attempt%s (%s)", r->attempts,
					r->attempts == 1 ? "" : "s",
					gc_retry_reason_name(d.reason));
		err->code = code;
		return -1;
	}
	gc_clock_sleep_ms(r->policy->clock, d.delay_ms);
	return 0;
}

void gc_retry_succeeded(struct gc_retry *r)
{
	struct gc_retry_quota *q = r->policy->quota;

	if (q) {
		/* A success after retries gives back what the last retry paid; a success at the
		 * first attempt slowly refills a quota drained by an earlier outage. */
		if (r->attempts == 0)
			quota_give(q, GC_RETRY_SUCCESS_INCREMENT);
		else
			quota_give(q, r->held_cost);
	}
	r->held_cost = 0;
}
