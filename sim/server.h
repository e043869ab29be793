/*
 * server.h: the emulator's HTTP side. One libmicrohttpd daemon per cloud plus one for
 * the control API, all bound to one loopback address; a ticker thread that advances the
 * world's life cycles; the request log.
 *
 * Each connection gets its own thread (libmicrohttpd's thread-per-connection mode), so
 * a response held back by injected latency delays only its own client. The frontends
 * are called from those threads; they lock the world themselves.
 *
 * Life cycle: sim_server_start (everything listens when it returns) -> sim_server_port
 * -> sim_server_stop (stops accepting, waits for the connection threads and the ticker,
 * closes the log). The struct sim must outlive the server.
 */
#ifndef GC_SIM_SERVER_H
#define GC_SIM_SERVER_H

#include <stdbool.h>

#include "core/error.h"
#include "core/log.h"
#include "sim/sim.h"

/* The control daemon's index in ports[] and for sim_server_port. */
#define SIM_SERVER_CONTROL SIM_NCLOUDS

struct sim_server_config {
	const char *listen; /* a dotted IPv4 address inside 127.0.0.0/8 */
	/* the port of each cloud's daemon, then the control daemon's; 0 picks a free one */
	int ports[SIM_NCLOUDS + 1];
	const char *request_log; /* NULL: no log */
	unsigned tick_ms;	 /* how often the ticker advances the world; 0: 100 */
	struct gc_log *log;	 /* one line per request at info level; NULL: silent */
	/* also serve the control API on this Unix socket (the nodes' GitHub runner); NULL: no */
	const char *control_unix;
};

struct sim_server;

struct sim_server *sim_server_start(struct sim *sim, const struct sim_server_config *cfg,
				    struct gc_error *err);
/* The port a daemon listens on: a cloud, or SIM_SERVER_CONTROL. */
int sim_server_port(const struct sim_server *s, int which);
void sim_server_stop(struct sim_server *s);

#endif
