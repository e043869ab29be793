/*
 * fake-http.h: the small HTTP servers tests stand up on 127.0.0.1 with libmicrohttpd (a
 * metadata service, an STS, a token service, a server that answers garbage): a daemon on
 * a free loopback port, a thread per connection, and a reply with a copied text body.
 * Nothing listens outside the loopback. The test stops its daemon with MHD_stop_daemon.
 *
 * Header-only, for one test file at a time (unit tests and tests/sim alike); the target
 * links libmicrohttpd. The functions are static inline so that a test using only one of
 * them builds without unused-function warnings.
 */
#ifndef GC_TEST_FAKE_HTTP_H
#define GC_TEST_FAKE_HTTP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

/*
 * Starts handler(cls, ...) on a free port of 127.0.0.1 and writes its base URL,
 * "http://127.0.0.1:PORT" (no trailing '/'), to url. uri_log, when not NULL, sees each
 * request's URI first (MHD_OPTION_URI_LOG_CALLBACK). NULL when the daemon cannot start.
 */
static inline struct MHD_Daemon *fake_http_start(MHD_AccessHandlerCallback handler, void *cls,
						 void *(*uri_log)(void *cls, const char *uri,
								  struct MHD_Connection *c),
						 char url[64])
{
	struct sockaddr_in sin;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
			     NULL, NULL, handler, cls, MHD_OPTION_SOCK_ADDR,
			     (struct sockaddr *)&sin, MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,
			     MHD_OPTION_END);
	if (!d)
		return NULL;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(url, 64, "http://127.0.0.1:%u", (unsigned)info->port);
	return d;
}

/* Queues status with a copy of text as the body. */
static inline enum MHD_Result fake_http_reply(struct MHD_Connection *c, unsigned status,
					      const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret = MHD_queue_response(c, status, r);

	MHD_destroy_response(r);
	return ret;
}

#endif
