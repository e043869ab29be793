/*
 * status-mounts.c: `status --mounts` (status-mounts.h). A shell script made from the spec's
 * mounts prints one line per mount, "ok|failed<TAB>BUCKET<TAB>PATH<TAB>MODE<TAB>REASON",
 * and exits 1 when one is not mounted; the reason is the mounts step's last error for the
 * bucket (templates/bootstrap/mounts.sh) or that the mount is gone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bootstrap/ssh.h"
#include "cmd/boot.h"
#include "cmd/output.h"
#include "cmd/status-mounts.h"
#include "core/alloc.h"
#include "core/buf.h"

#define MOUNT_GONE "the mount is gone (gpucluster bootstrap --from mounts mounts it again)"

static char *mounts_script(const struct gc_spec *spec)
{
	struct gc_buf s = GC_BUF_INIT(0);

	gc_buf_addstr(&s,
		      "rc=0\nm() {\n"
		      "  if mountpoint -q \"$2\" </dev/null 2>/dev/null; then\n"
		      "    printf 'ok\\t%s\\t%s\\t%s\\t\\n' \"$1\" \"$2\" \"$3\"\n"
		      "  else\n"
		      "    r=$(cat \"/var/lib/gpucluster/mounts/$1.err\" 2>/dev/null </dev/null)\n"
		      "    printf 'failed\\t%s\\t%s\\t%s\\t%s\\n' \"$1\" \"$2\" \"$3\" "
		      "\"${r:-" MOUNT_GONE "}\"\n"
		      "    rc=1\n"
		      "  fi\n"
		      "}\n");
	for (size_t i = 0; i < spec->n_mounts; i++) {
		gc_buf_addstr(&s, "m ");
		gc_sh_quote(&s, spec->mounts[i].bucket);
		gc_buf_addstr(&s, " ");
		gc_sh_quote(&s, spec->mounts[i].path);
		gc_buf_addf(&s, " %s\n", spec->mounts[i].rw ? "rw" : "ro");
	}
	gc_buf_addstr(&s, "exit $rc\n");
	return gc_buf_detach(&s, NULL);
}

/* One parsed line; the fields point into line, which the caller owns. */
struct mount_line {
	const char *state, *bucket, *path, *mode, *reason;
};

static bool parse_line(char *line, struct mount_line *out)
{
	const char **f[] = { &out->state, &out->bucket, &out->path, &out->mode, &out->reason };
	char *p = line;

	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		char *tab = strchr(p, '\t');

		*f[k] = p;
		if (k + 1 < sizeof(f) / sizeof(f[0])) {
			if (!tab)
				return false;
			*tab = '\0';
			p = tab + 1;
		}
	}
	return !strcmp(out->state, "ok") || !strcmp(out->state, "failed");
}

/* The node's answer, one line at a time: calls each(line) and counts the lines; *why is
 * set (static or the runner's text) when the node gave none. */
static size_t node_lines(const struct gc_session *b, size_t i, const char **why,
			 void (*each)(void *arg, const struct mount_line *m), void *arg)
{
	const struct gc_runner_node_result *nr = &b->report.nodes[i];
	const struct gc_runner_step_result *sr = &nr->steps[0];
	char *text = gc_xstrdup(sr->out.data ? sr->out.data : ""), *save = NULL;
	size_t n = 0;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mount_line m;

		if (parse_line(line, &m)) {
			each(arg, &m);
			n++;
		}
	}
	free(text);
	*why = n			? NULL
		: nr->err.code != GC_OK ? nr->err.message
		: sr->err.len		? sr->err.data
					: "no answer";
	return n;
}

static void add_json(void *arg, const struct mount_line *m)
{
	json_array_append_new(arg,
			      json_pack("{s:s, s:s, s:s, s:b, s:s?}", "bucket", m->bucket, "path",
					m->path, "mode", m->mode, "mounted",
					!strcmp(m->state, "ok"), "error",
					*m->reason ? m->reason : NULL));
}

static json_t *mounts_json(const struct gc_session *b)
{
	json_t *nodes = json_array();

	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &b->boot.info[i];
		json_t *mounts = json_array();
		const char *why;

		node_lines(b, i, &why, add_json, mounts);
		json_array_append_new(nodes,
				      json_pack("{s:s, s:s, s:s, s:o, s:s?}", "id", bn->id, "group",
						bn->group, "node", bn->label, "mounts", mounts,
						"error", why));
	}
	return json_pack("{s:o}", "nodes", nodes);
}

struct text_arg {
	struct gc_buf *line;
	const char *label;
	size_t n;
};

static void add_text(void *arg, const struct mount_line *m)
{
	struct text_arg *t = arg;
	bool ok = !strcmp(m->state, "ok");

	gc_buf_addf(t->line, "%-24s %-30s %-24s %-4s %s%s\n", t->n++ ? "" : t->label, m->bucket,
		    m->path, m->mode, ok ? "mounted" : "FAILED: ", ok ? "" : m->reason);
}

static void mounts_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	struct gc_output *o = ctx->out;
	size_t failed = 0;

	gc_out_printf(o, o->out, "%s%-24s %-30s %-24s %-4s %s%s\n",
		      gc_out_style(o, o->out, GC_STYLE_BOLD), "NODE", "BUCKET", "PATH", "MODE",
		      "STATE", gc_out_style(o, o->out, GC_STYLE_RESET));
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		struct gc_buf line = GC_BUF_INIT(0);
		struct text_arg t = { &line, b->boot.info[i].label, 0 };
		const char *why;

		if (!node_lines(b, i, &why, add_text, &t))
			gc_buf_addf(&line, "%-24s cannot read the mounts: %.*s\n", t.label,
				    (int)strcspn(why, "\n"), why);
		failed += b->report.nodes[i].steps[0].state != GC_STEP_OK;
		/* reasons come from the node: never let them drive the terminal */
		gc_out_puts_clean(o, o->out, line.data ? line.data : "");
		gc_buf_release(&line);
	}
	if (failed)
		gc_out_printf(o, o->err,
			      "status: %zu of %zu node%s %s a bucket unmounted or unread\n", failed,
			      b->boot.n_nodes, b->boot.n_nodes == 1 ? "" : "s",
			      failed == 1 ? "has" : "have");
}

int gc_cmd_status_mounts(struct gc_cmd_ctx *ctx)
{
	struct gc_session_opts so = { .mode = GC_BOOT_EXEC };
	char *script;
	int rc;

	if (!ctx->spec->n_mounts) {
		gc_out_printf(ctx->out, ctx->out->err,
			      "status: the spec has no mounts: nothing to read on the nodes\n");
		return GC_EXIT_OK;
	}
	script = mounts_script(ctx->spec);
	so.command = script;
	so.timeout_ms = 60000;
	so.names = gc_cmd_opt_list(ctx, "node", &so.n_names);
	rc = gc_cmd_boot_command(ctx, &so, NULL, mounts_json, mounts_print);
	free(script);
	return rc;
}
