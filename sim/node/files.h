/*
 * files.h: the simulated system tools embedded into gc_sim (everything under sim/node/tools).
 *
 * sim/node/embed.cmake generates the table at build time from the scripts under
 * sim/node/tools; node.c copies them into every node root when the node is created.
 * Paths are relative to tools/: "bin/X" and "sbin/X" land in the node's /usr/local/bin
 * and /usr/local/sbin, "lib/X" in /usr/local/lib/gpucluster-sim. Read-only static data.
 */
#ifndef GC_SIM_NODE_FILES_H
#define GC_SIM_NODE_FILES_H

#include <stddef.h>

struct sim_node_file {
	const char *path;
	unsigned mode;
	const unsigned char *data; /* NUL-terminated for convenience; len excludes it */
	size_t len;
};

extern const struct sim_node_file sim_node_files[];
extern const size_t sim_node_nfiles;

#endif
