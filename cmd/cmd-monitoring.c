/*
 * cmd-monitoring.c: `gpucluster monitoring [FILE] [--format F] [--private] [--output-file
 * PATH]` (docs/cli.md "monitoring"): the Prometheus scrape config for the dcgm-exporters
 * that bootstrap.monitoring: dcgm runs on the cluster's GPU nodes. The nodes and labels are
 * the bootstrapper's, as for `hosts`; the text comes from bootstrap/scrape.c, where it is
 * unit-tested. Nothing connects to the nodes.
 */
#include <stdio.h>
#include <string.h>

#include "bootstrap/hosts.h"
#include "bootstrap/scrape.h"
#include "bootstrap/session.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/buf.h"
#include "core/engine.h"

static const struct gc_opt monitoring_opts[] = {
	{ .name = "format",
	  .type = GC_OPT_CHOICE,
	  .choices = gc_scrape_format_names,
	  .arg = "FORMAT",
	  .help = "prometheus (a scrape_configs job) or file-sd (a file_sd_configs file,\n"
		  "JSON; also what -o json gives)",
	  .def = "prometheus" },
	{ .name = "output-file",
	  .type = GC_OPT_STRING,
	  .arg = "PATH",
	  .help = "write it to PATH (atomically, mode 0600), not standard output" },
	{ .name = "private",
	  .type = GC_OPT_FLAG,
	  .help = "private addresses, for a Prometheus in the cluster's network" },
	{ .name = NULL },
};

/* --format, or file-sd for -o json; a usage error when the two disagree. */
static int pick_format(struct gc_cmd_ctx *ctx, enum gc_scrape_format *out)
{
	bool json = ctx->globals.output == GC_OUTPUT_JSON;
	const char *f = gc_cmd_opt_str(ctx, "format");

	*out = json ? GC_SCRAPE_FILE_SD : GC_SCRAPE_PROMETHEUS;
	if (!gc_cmd_opt_given(ctx, "format"))
		return 0;
	*out = strcmp(f, "file-sd") == 0 ? GC_SCRAPE_FILE_SD : GC_SCRAPE_PROMETHEUS;
	if (json && *out != GC_SCRAPE_FILE_SD) {
		gc_out_error(ctx->out, "'-o json' and '--format %s' disagree: give one of them", f);
		return -1;
	}
	return 0;
}

static int monitoring_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_session s;
	const struct gc_session_opts so = { .mode = GC_BOOT_NODES };
	struct gc_hosts h;
	struct gc_buf text = GC_BUF_INIT(0);
	struct gc_error err;
	enum gc_scrape_format format;
	const char *file = gc_cmd_opt_str(ctx, "output-file");
	size_t n = 0;
	int rc = GC_EXIT_FAILURE;

	if (pick_format(ctx, &format) < 0)
		return GC_EXIT_USAGE;
	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_error_init(&err);
	gc_session_init(&s);
	gc_hosts_init(&h, ctx->spec->name, ctx->spec->ssh.user, ctx->spec->ssh.port, NULL, NULL);
	if (ctx->spec->bootstrap.monitoring == GC_MONITORING_NONE)
		gc_out_warn(ctx->out,
			    "the spec runs no exporter: 'bootstrap.monitoring: dcgm' and an apply "
			    "start dcgm-exporter on port %u of every GPU node",
			    GC_DCGM_PORT);
	if (gc_session_open(&s, &e, NULL, &so, &err) < 0 ||
	    gc_hosts_add_boot(&h, &s.boot, s.live, NULL, &err) < 0 ||
	    gc_scrape_format(&text, &h, format, gc_cmd_opt_given(ctx, "private"), &n, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		goto out;
	}
	if (n == 0 && !ctx->out->quiet)
		gc_out_warn(ctx->out, "cluster '%s' has no running GPU node with an address",
			    ctx->spec->name);
	if (file) {
		if (gc_hosts_write_file(file, text.data, text.len, &err) < 0) {
			gc_cmd_report_error(ctx, NULL, &err);
			goto out;
		}
		if (!ctx->out->quiet)
			gc_out_printf(ctx->out, ctx->out->err,
				      "monitoring: %zu target%s (%s) in %s\n", n, n == 1 ? "" : "s",
				      gc_scrape_format_names[format], file);
	} else {
		fwrite(text.data, 1, text.len, ctx->out->out);
	}
	rc = GC_EXIT_OK;
out:
	gc_buf_release(&text);
	gc_hosts_release(&h);
	gc_session_release(&s);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_monitoring = {
	.name = "monitoring",
	.summary = "write the Prometheus scrape config for the nodes' dcgm-exporters",
	.usage = "[FILE]",
	.description = "Writes a Prometheus scrape_configs job (or, with --format file-sd, a\n"
		       "file_sd_configs file) with every running GPU node's dcgm-exporter,\n"
		       "ADDRESS:9400, labelled cluster, node (GROUP/N, as exec and ssh name it),\n"
		       "group, instance_type and instance_id. bootstrap.monitoring: dcgm runs the\n"
		       "exporters. Addresses are public where a node has one, else private\n"
		       "(--private: private). Port 9400 is open to the cluster's nodes and to the\n"
		       "ranges of bootstrap.monitoring_allow_from.",
	.opts = monitoring_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = monitoring_exec,
};
