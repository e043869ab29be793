/*
 * error.c: filling the caller-owned error struct. Formatting truncates rather than
 * allocates, so reporting an error can never itself fail.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"

void gc_error_init(struct gc_error *err)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
}

int gc_error_vset(struct gc_error *err, enum gc_errcode code, const char *fmt, va_list ap)
{
	if (!err)
		return -1;
	gc_error_init(err);
	err->code = code;
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	return -1;
}

int gc_error_set(struct gc_error *err, enum gc_errcode code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gc_error_vset(err, code, fmt, ap);
	va_end(ap);
	return -1;
}

int gc_error_prefix(struct gc_error *err, const char *fmt, ...)
{
	char prefix[GC_ERROR_MSG_MAX];
	char old[GC_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof(old));
	/* prefix + ": " + old, truncated to the field (truncation is intended) */
	{
		size_t n = strlen(prefix), room = sizeof(err->message) - 1, m;

		n = n < room ? n : room;
		memcpy(err->message, prefix, n);
		m = room - n < 2 ? room - n : 2;
		memcpy(err->message + n, ": ", m);
		n += m;
		m = strlen(old);
		m = m < room - n ? m : room - n;
		memcpy(err->message + n, old, m);
		err->message[n + m] = '\0';
	}
	if (err->code == GC_OK)
		err->code = GC_EGENERIC;
	return -1;
}

static void copy_field(char *dst, size_t size, const char *src)
{
	if (src)
		snprintf(dst, size, "%s", src);
}

void gc_error_set_cloud(struct gc_error *err, const char *cloud_code, const char *request_id,
			int http_status)
{
	if (!err)
		return;
	copy_field(err->cloud_code, sizeof(err->cloud_code), cloud_code);
	copy_field(err->request_id, sizeof(err->request_id), request_id);
	if (http_status)
		err->http_status = http_status;
}

void gc_error_set_action(struct gc_error *err, const char *action)
{
	if (err)
		copy_field(err->action, sizeof(err->action), action);
}

const char *gc_strerror(enum gc_errcode code)
{
	switch (code) {
	case GC_OK: return "ok";
	case GC_EGENERIC: return "error";
	case GC_EINVALID: return "invalid";
	case GC_ENOTFOUND: return "not-found";
	case GC_ETHROTTLED: return "throttled";
	case GC_ECAPACITY: return "capacity";
	case GC_EQUOTA: return "quota";
	case GC_EAUTH: return "auth";
	case GC_EIDEMPOTENCY: return "idempotency-mismatch";
	case GC_ETRANSIENT: return "transient";
	case GC_ETIMEOUT: return "timeout";
	case GC_EUNSUPPORTED: return "unsupported";
	case GC_ETOOBIG: return "too-big";
	case GC_ECANCELLED: return "cancelled";
	case GC_ELOCKED: return "locked";
	case GC_EIO: return "io";
	case GC_EBADRESPONSE: return "invalid-response";
	case GC_ESPOTQUOTA: return "spot-quota";
	case GC_ENOTHERE: return "not-here";
	}
	return "unknown";
}

int gc_error_is_retryable(enum gc_errcode code)
{
	return code == GC_ETHROTTLED || code == GC_ETRANSIENT || code == GC_ETIMEOUT ||
		code == GC_EBADRESPONSE;
}
