/*
 * scrape.h: a cluster's dcgm-exporter targets as Prometheus reads them (`gpucluster
 * monitoring`, docs/internals/monitoring.md): a scrape_configs job in YAML, or the JSON of
 * a file_sd_configs file. One target per GPU node, ADDRESS:GC_DCGM_PORT, labelled with the
 * cluster, the node (GROUP/N, as exec and ssh name it), its group, instance type and id.
 *
 * The nodes are a struct gc_hosts (hosts.h): the bootstrapper's order and labels. A node
 * whose type has no GPU runs no exporter and is left out; one without an address too.
 * Every value is cloud text written into a document another program parses, so each is a
 * JSON string (a YAML double-quoted scalar is one); text that is not UTF-8 is GC_EINVALID.
 * Nothing here prints.
 */
#ifndef GC_BOOTSTRAP_SCRAPE_H
#define GC_BOOTSTRAP_SCRAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "bootstrap/hosts.h"
#include "core/buf.h"
#include "core/error.h"

enum gc_scrape_format {
	GC_SCRAPE_PROMETHEUS, /* prometheus.yml's scrape_configs */
	GC_SCRAPE_FILE_SD,    /* a file_sd_configs file (JSON) */
};

/* The format names, in enum order, NULL-terminated (for an option's choices). */
extern const char *const gc_scrape_format_names[];

/*
 * Appends h's targets in format to out; private_addrs: every node's private address
 * (Prometheus in the cluster's network), else the address hosts uses (public, else
 * private). *n_targets (may be NULL) is how many nodes became targets.
 */
int gc_scrape_format(struct gc_buf *out, const struct gc_hosts *h, enum gc_scrape_format format,
		     bool private_addrs, size_t *n_targets, struct gc_error *err);

#endif
