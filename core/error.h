/*
 * error.h: the one error taxonomy and the caller-owned error struct.
 *
 * Every fallible function below cmd/ returns 0 on success and -1 on failure, and on
 * failure fills the struct gc_error its caller passed in (which may be NULL when the
 * caller does not care). The struct holds no heap memory: there is nothing to release,
 * and filling it cannot fail. Codes are append-only with explicit numbers; only the
 * codes a caller branches on are named, everything else is GC_EGENERIC plus a message.
 */
#ifndef GC_ERROR_H
#define GC_ERROR_H

#include <stdarg.h>

enum gc_errcode {
	GC_OK = 0,
	GC_EGENERIC = 1, /* anything a caller does not branch on */
	GC_EINVALID = 2, /* bad input: spec, arguments, a request the cloud refused */
	GC_ENOTFOUND = 3,
	GC_ETHROTTLED = 4,   /* the cloud's rate limit: back off and retry */
	GC_ECAPACITY = 5,    /* no stock in that zone / type / market: fall back */
	GC_EQUOTA = 6,	     /* account limit: retrying does not help */
	GC_EAUTH = 7,	     /* credentials missing, wrong, expired or not allowed */
	GC_EIDEMPOTENCY = 8, /* client token reused with other parameters */
	GC_ETRANSIENT = 9,   /* 5xx, dropped connection: retry */
	GC_ETIMEOUT = 10,
	GC_EUNSUPPORTED = 11, /* the cloud or the build lacks this capability */
	GC_ETOOBIG = 12,      /* a size cap was hit (file, response, output) */
	GC_ECANCELLED = 13,
	GC_ELOCKED = 14,      /* another process holds the cluster's lock */
	GC_EIO = 15,	      /* local file or system call failure */
	GC_EBADRESPONSE = 16, /* a cloud answer of the wrong shape: retried a few times */
	GC_ESPOTQUOTA = 17,   /* the account's spot quota: its on-demand quota is apart */
	GC_ENOTHERE = 18,     /* the type cannot launch there (zone, placement group): fall back */
};

#define GC_ERROR_MSG_MAX 1024

struct gc_error {
	enum gc_errcode code;
	int http_status; /* 0 when no HTTP exchange was involved */
	char message[GC_ERROR_MSG_MAX];
	char cloud_code[128]; /* the cloud's own error code, e.g. RequestLimitExceeded */
	char request_id[128]; /* the cloud's request id, for support tickets */
	char action[64];      /* the API action the cloud refused ("" when none) */
};

void gc_error_init(struct gc_error *err);

/* Sets code and message (printf-style) and returns -1, so callers can
 * `return gc_error_set(err, GC_EINVALID, "...")`. Clears the cloud fields. */
int gc_error_set(struct gc_error *err, enum gc_errcode code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int gc_error_vset(struct gc_error *err, enum gc_errcode code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Prepends context, "what we were doing: ", to the message; returns -1. */
int gc_error_prefix(struct gc_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Records the cloud's error code, request id and HTTP status (NULLs leave a field). */
void gc_error_set_cloud(struct gc_error *err, const char *cloud_code, const char *request_id,
			int http_status);

/* Records the API action a cloud's error answered (NULL leaves it). */
void gc_error_set_action(struct gc_error *err, const char *action);

/* A short lowercase name for a code: "throttled", "capacity", ... */
const char *gc_strerror(enum gc_errcode code);

/* Whether an operation that failed with this code may succeed if retried as-is. */
int gc_error_is_retryable(enum gc_errcode code);

#endif
