/*
 * log.h: levelled logging through a caller-supplied sink, with redaction.
 *
 * Code below cmd/ never prints: it logs through a struct gc_log that cmd/ sets up (the
 * sink writes to stderr, a file, or a test's capture). Every message passes through
 * redaction before the sink sees it, so credentials, Authorization headers, session
 * tokens, signatures, private keys and user-data never reach any log:
 *   - registered secrets (gc_log_add_secret) are replaced wherever they appear;
 *   - well-known shapes are masked by pattern (see log.c for the list).
 * A struct gc_log is safe to share between threads: the secret list and the sink call
 * are serialised by an internal mutex.
 *
 * Life cycle: gc_log_init -> gc_log_add_secret... -> gc_log_* -> gc_log_release.
 */
#ifndef GC_LOG_H
#define GC_LOG_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>

enum gc_log_level {
	GC_LOG_ERROR = 0,
	GC_LOG_WARN = 1,
	GC_LOG_INFO = 2,
	GC_LOG_DEBUG = 3,
	GC_LOG_TRACE = 4,
};

/* Longest message, in bytes after formatting, that reaches redaction; longer ones are cut
 * (at a UTF-8 boundary) and the sink sees GC_LOG_TRUNCATED appended. */
#define GC_LOG_LINE_MAX ((size_t)16 << 10)

#define GC_LOG_TRUNCATED " [truncated]"

typedef void (*gc_log_sink_fn)(void *ctx, enum gc_log_level level, const char *line);

struct gc_log {
	enum gc_log_level level; /* messages above this level are dropped */
	gc_log_sink_fn sink;	 /* NULL: messages are dropped */
	void *sink_ctx;
	char **secrets;
	size_t n_secrets, alloc_secrets;
	pthread_mutex_t lock;
};

void gc_log_init(struct gc_log *log, enum gc_log_level level, gc_log_sink_fn sink, void *ctx);
void gc_log_release(struct gc_log *log);

/* Registers a value that must never appear in a log (a key, a token). Values shorter
 * than 4 bytes are ignored: masking them would garble ordinary text. */
void gc_log_add_secret(struct gc_log *log, const char *secret);

void gc_log_msg(struct gc_log *log, enum gc_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define gc_log_error(log, ...) gc_log_msg((log), GC_LOG_ERROR, __VA_ARGS__)
#define gc_log_warn(log, ...)  gc_log_msg((log), GC_LOG_WARN, __VA_ARGS__)
#define gc_log_info(log, ...)  gc_log_msg((log), GC_LOG_INFO, __VA_ARGS__)
#define gc_log_debug(log, ...) gc_log_msg((log), GC_LOG_DEBUG, __VA_ARGS__)
#define gc_log_trace(log, ...) gc_log_msg((log), GC_LOG_TRACE, __VA_ARGS__)

/* Redacts text in place of a copy: returns a new string the caller frees. Exposed for
 * code that must scrub text it does not log (error messages shown to users). log may be
 * NULL: then only the patterns apply, no registered secrets. */
char *gc_log_redact(struct gc_log *log, const char *text);
/* The same for a message shown to people (cmd/output.c): there "name: text" is a
 * sentence ("cannot read the token: file not found"), so that form masks the rest of the
 * line only after a header's name (Authorization, X-Amz-Security-Token); every other rule
 * applies as in gc_log_redact. */
char *gc_log_redact_message(struct gc_log *log, const char *text);

#endif
