/*
 * nccl.c: the NCCL probe that `report` and `smoke` run on the nodes, and the document
 * made of its output (nccl.h; docs/internals/nccl.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bootstrap/hosts.h"
#include "bootstrap/nccl.h"
#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/nccl.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"

#define REPORT_SIZES 4 /* 1, 2, 4, 8 GPUs */

/* The probe: the smoke program the smoke step compiled (its newest cached binary), then
 * all_reduce_perf on 1, 2, 4, 8 of the node's GPUs (both skipped with
 * GC_NCCL_ACROSS_ONLY), then on node 0 of a group of several nodes the same across every
 * node of the group under mpirun, and in a group of three or more between node 0 and each
 * other node (GC_NCCL_SELF and each of GC_NCCL_PEERS, "IP:SLOTS"), the largest size only,
 * so a slow link is named (with two nodes the group's all-reduce is their link's).
 * Sections start "@@". */
static const char probe[] =
	"[ ! -e /var/lib/gpucluster-sim/node.env ] || echo '@@simulated'\n"
	"[ -n \"${GC_NCCL_ACROSS_ONLY:-}\" ] && b='' || b=$(ls -t \"${XDG_CACHE_HOME:-$HOME/.cache}\"/gpucluster/smoke-* 2>/dev/null | "
	"grep -v '\\.tmp$' | head -n 1)\n"
	"if [ -n \"$b\" ]; then echo '@@smoke'; timeout 600 \"$b\" 2>/dev/null </dev/null | "
	"tail -n 1; fi\n"
	"arp=$(command -v all_reduce_perf || echo /opt/nccl-tests/build/all_reduce_perf)\n"
	"[ -x \"$arp\" ] || { echo '@@no-nccl-tests'; exit 0; }\n"
	"[ -n \"${GC_NCCL_ACROSS_ONLY:-}\" ] || for g in 1 2 4 8; do\n"
	"\t[ \"$g\" -le \"${GC_NCCL_GPUS:-1}\" ] || break\n"
	"\techo \"@@allreduce $g\"\n"
	"\ttimeout 600 \"$arp\" -b 8M -e 256M -f 2 -g \"$g\" 2>&1 </dev/null\n"
	"done\n"
	"if [ -n \"${GC_NCCL_HOSTS:-}\" ] && ! command -v mpirun >/dev/null; then\n"
	"\techo '@@no-mpirun'\n"
	"elif [ -n \"${GC_NCCL_HOSTS:-}\" ]; then\n"
	"\techo '@@cluster'\n"
	"\ttimeout 600 mpirun --allow-run-as-root -np \"$GC_NCCL_NP\" -H \"$GC_NCCL_HOSTS\" "
	"-x NCCL_DEBUG=WARN \"$arp\" -b 8M -e 256M -f 2 -g 1 2>&1 </dev/null\n"
	"\tfor p in ${GC_NCCL_PEERS:-}; do\n"
	"\t\techo \"@@pair ${p%%:*}\"\n"
	"\t\ttimeout 600 mpirun --allow-run-as-root -np $((${GC_NCCL_SELF##*:} + ${p##*:})) "
	"-H \"$GC_NCCL_SELF,$p\" -x NCCL_DEBUG=WARN \"$arp\" -b 256M -e 256M -g 1 2>&1 </dev/null\n"
	"\tdone\n"
	"fi\n";

#define REPORT_N_VARS 6
#define REPORT_VAL    4096 /* a group's host list, per node */

struct report_state {
	struct gc_hosts hosts;
	struct gc_runner_var *vars; /* REPORT_N_VARS per node */
	char (*val)[5][REPORT_VAL]; /* their values */
	bool across_only;
	size_t *group_nodes; /* per node: the running nodes of its group */
	const struct gc_spec *spec;
};

/* The fabric between the nodes of bn's group: its interconnect on bn's type. */
static const char *group_fabric(const struct report_state *rs, const struct gc_boot_node *bn)
{
	static const struct gc_type_facts none;

	for (size_t g = 0; g < rs->spec->n_groups; g++)
		if (strcmp(rs->spec->groups[g].name, bn->group) == 0)
			return gc_nccl_group_fabric(&rs->spec->groups[g],
						    bn->have_facts ? &bn->facts : &none);
	return gc_nccl_fabric(bn->group);
}

/* Every node gets its GPU count; node 0 of a group of several also gets the group's
 * private addresses with their slots (the MPI host list) and the rank count. */
static int report_prepare(void *arg, struct gc_session *s, struct gc_error *err)
{
	struct report_state *rs = arg;
	struct gc_boot *b = &s->boot;

	if (gc_hosts_add_boot(&rs->hosts, b, s->live, NULL, err) < 0)
		return -1;
	rs->vars = gc_xcalloc(b->n_nodes * REPORT_N_VARS + 1, sizeof(*rs->vars));
	rs->val = gc_xcalloc(b->n_nodes + 1, sizeof(*rs->val));
	rs->group_nodes = gc_xcalloc(b->n_nodes + 1, sizeof(*rs->group_nodes));
	for (size_t i = 0; i < b->n_nodes; i++) {
		struct gc_runner_var *v = &rs->vars[i * REPORT_N_VARS];
		unsigned np = 0;
		size_t n = 0;

		snprintf(rs->val[i][0], sizeof(rs->val[i][0]), "%u", gc_hosts_slots(&rs->hosts, i));
		for (size_t j = 0; j < b->n_nodes; j++) {
			const struct gc_hosts_node *h = &rs->hosts.nodes[j];
			size_t l = strlen(rs->val[i][1]);

			if (strcmp(b->info[j].group, b->info[i].group) != 0)
				continue;
			n++;
			if (b->info[i].index != 0 || !h->private_ip)
				continue;
			snprintf(rs->val[i][1] + l, sizeof(rs->val[i][1]) - l, "%s%s:%u",
				 l ? "," : "", h->private_ip, gc_hosts_slots(&rs->hosts, j));
			np += gc_hosts_slots(&rs->hosts, j);
			/* node 0 itself, and the others it measures its link to */
			l = strlen(rs->val[i][4]);
			if (j == i)
				snprintf(rs->val[i][3], sizeof(rs->val[i][3]), "%s:%u",
					 h->private_ip, gc_hosts_slots(&rs->hosts, j));
			else
				snprintf(rs->val[i][4] + l, sizeof(rs->val[i][4]) - l, "%s%s:%u",
					 l ? " " : "", h->private_ip,
					 gc_hosts_slots(&rs->hosts, j));
		}
		rs->group_nodes[i] = n;
		if (n < 2)
			rs->val[i][1][0] = '\0';
		/* two nodes: the all-reduce across the group is their link's */
		if (n < 3 || !rs->val[i][3][0])
			rs->val[i][4][0] = '\0';
		snprintf(rs->val[i][2], sizeof(rs->val[i][2]), "%u", np);
		v[0] = (struct gc_runner_var){ .name = "GC_NCCL_GPUS", .value = rs->val[i][0] };
		v[1] = (struct gc_runner_var){ .name = "GC_NCCL_HOSTS", .value = rs->val[i][1] };
		v[2] = (struct gc_runner_var){ .name = "GC_NCCL_NP", .value = rs->val[i][2] };
		v[3] = (struct gc_runner_var){ .name = "GC_NCCL_ACROSS_ONLY",
					       .value = rs->across_only ? "1" : "" };
		v[4] = (struct gc_runner_var){ .name = "GC_NCCL_SELF", .value = rs->val[i][3] };
		v[5] = (struct gc_runner_var){ .name = "GC_NCCL_PEERS", .value = rs->val[i][4] };
		b->nodes[i].vars = v;
		b->nodes[i].n_vars = REPORT_N_VARS;
	}
	return 0;
}

/* The text of section name of a node's probe output in *len; NULL if none. */
static const char *section(const struct gc_buf *out, const char *name, size_t *len)
{
	return gc_nccl_section(out->data, out->len, name, len);
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : -1;
}

/* Adds node i's smoke-program GPUs to the per-model rows of single (by name). */
static void add_single(json_t *single, const char *text, size_t len)
{
	json_t *doc = json_loadb(text, len, 0, NULL);
	json_t *gpus = json_object_get(doc, "gpus");
	size_t i;
	json_t *g;

	json_array_foreach(gpus, i, g)
	{
		const char *name = json_string_value(json_object_get(g, "name"));
		json_t *row = NULL, *r;
		size_t k;

		if (!name || num(g, "gemm_tflops") < 0)
			continue;
		json_array_foreach(single, k,
				   r) if (strcmp(json_string_value(json_object_get(r, "model")),
						 name) == 0) row = r;
		if (!row) {
			row = json_pack("{s:s, s:i, s:f, s:f, s:f}", "model", name, "gpus", 0,
					"gemm_tflops", 0.0, "d2d_gbps", 0.0, "h2d_gbps", 0.0);
			json_array_append_new(single, row);
		}
		/* running means over the GPUs of that model */
		json_int_t n = json_integer_value(json_object_get(row, "gpus")) + 1;
		const char *keys[] = { "gemm_tflops", "d2d_gbps", "h2d_gbps" };

		for (size_t f = 0; f < 3; f++) {
			double old = num(row, keys[f]), v = num(g, keys[f]);

			json_object_set_new(row, keys[f],
					    json_real(v < 0 ? old : old + (v - old) / (double)n));
		}
		json_object_set_new(row, "gpus", json_integer(n));
	}
	json_decref(doc);
}

static json_t *point(unsigned gpus, unsigned nodes, const struct gc_nccl_result *r, double base)
{
	return json_pack("{s:i, s:i, s:f, s:f, s:o}", "gpus", (int)gpus, "nodes", (int)nodes,
			 "busbw_gbps", r->busbw_gbps, "algbw_gbps", r->algbw_gbps, "efficiency",
			 base > 0 && gpus > 1 ? json_real(r->busbw_gbps / base) : json_null());
}

/* Judges the group of node i (its node 0) from i's probe output (gc_nccl_group_judge);
 * returns the boot index of each of the group's nodes, node 0 first. */
static size_t *judge_group(struct gc_nccl_group *g, const struct gc_session *s,
			   const struct report_state *rs, size_t i, double floor)
{
	const struct gc_buf *out = &s->report.nodes[i].steps[0].out;
	const char **ips = gc_xcalloc(s->boot.n_nodes + 1, sizeof(*ips));
	size_t *at = gc_xcalloc(s->boot.n_nodes + 1, sizeof(*at)), n = 1;

	ips[0] = rs->hosts.nodes[i].private_ip;
	at[0] = i;
	for (size_t j = 0; j < s->boot.n_nodes; j++)
		if (j != i && strcmp(s->boot.info[j].group, s->boot.info[i].group) == 0) {
			ips[n] = rs->hosts.nodes[j].private_ip;
			at[n++] = j;
		}
	gc_nccl_group_judge(g, out->data, out->len, ips, n, floor);
	free(ips);
	return at;
}

/* g's links as x's "pairs" (docs/cli.md "report"), each failed one naming the node to
 * blame ("slow"); at maps the group's nodes to boot indexes. */
static void add_pairs(json_t *x, const struct gc_session *s, const struct gc_nccl_group *g,
		      const size_t *at, bool *simulated)
{
	json_t *pairs = json_array();

	for (size_t k = 0; k < g->n_links; k++) {
		const struct gc_nccl_link *l = &g->links[k];

		*simulated |= l->r.simulated;
		json_array_append_new(
			pairs,
			json_pack("{s:s, s:s, s:o, s:b, s:o}", "node",
				  s->boot.info[at[l->node]].label, "peer",
				  s->boot.info[at[0]].label, "busbw_gbps",
				  l->r.ok ? json_real(l->r.busbw_gbps) : json_null(), "ok", l->ok,
				  "slow",
				  l->ok ? json_null()
					: json_string(s->boot.info[at[l->slow]].label)));
	}
	json_object_set_new(x, "pairs", pairs);
}

/* The report document (docs/cli.md "report"); *failed counts the groups under the floor. */
static json_t *report_doc(const struct gc_session *s, const struct report_state *rs,
			  const char *state_dir, size_t *failed)
{
	json_t *single = json_array(), *scaling = json_array(), *mttr;
	bool simulated = false, ok = true;
	char *path = gc_xasprintf("%s/mttr.json", state_dir);
	json_t *m = json_load_file(path, 0, NULL);

	*failed = 0;
	for (size_t i = 0; i < s->boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &s->boot.info[i];
		const struct gc_buf *out = &s->report.nodes[i].steps[0].out;
		json_t *grp, *points;
		size_t len;
		const char *t;
		double base = 0;
		json_t *x;

		simulated |= section(out, "simulated", &len) != NULL;
		if ((t = section(out, "smoke", &len)))
			add_single(single, t, len);
		if (bn->index != 0)
			continue;
		/* the group's figures come from its node 0 */
		points = json_array();
		for (unsigned k = 0, g = 1; k < REPORT_SIZES; k++, g *= 2) {
			char name[32];
			struct gc_nccl_result r;

			snprintf(name, sizeof(name), "allreduce %u", g);
			if (!(t = section(out, name, &len)))
				continue;
			gc_nccl_parse(&r, t, len);
			simulated |= r.simulated;
			if (!r.ok)
				continue;
			if (g > 1 && base == 0)
				base = r.busbw_gbps;
			json_array_append_new(points, point(g, 1, &r, base));
		}
		grp = json_pack("{s:s, s:s, s:i, s:i, s:o}", "group", bn->group, "fabric",
				group_fabric(rs, bn), "nodes", (int)rs->group_nodes[i],
				"gpus_per_node", (int)gc_hosts_slots(&rs->hosts, i), "in_node",
				points);
		if (rs->group_nodes[i] >= 2) {
			const char *fabric = group_fabric(rs, bn);
			double floor = gc_nccl_floor_gbps(fabric);
			struct gc_nccl_group jg;
			size_t *at = judge_group(&jg, s, rs, i, floor);
			const struct gc_nccl_result *r = &jg.ring;
			/* the tools missing is "not run", not a failure: the bootstrap does not
			 * install them (yet) */
			const char *missing = section(out, "no-nccl-tests", &len)
				? "all_reduce_perf"
				: section(out, "no-mpirun", &len) ? "mpirun"
								  : NULL;
			bool pass;

			simulated |= r->simulated;
			/* the group fails by its ring or by a link */
			pass = (missing || jg.ring_ok) && jg.links_ok;
			x = json_pack(
				"{s:o, s:o, s:f, s:f, s:f, s:b, s:o}", "not_run",
				missing ? json_sprintf("no %s on node 0", missing) : json_null(),
				"busbw_gbps", r->ok ? json_real(r->busbw_gbps) : json_null(),
				"floor_gbps", floor, "line_gbit", gc_nccl_line_gbit(fabric),
				"algbw_gbps", r->algbw_gbps, "ok", pass, "efficiency",
				r->ok && base > 0 ? json_real(r->busbw_gbps / base) : json_null());
			add_pairs(x, s, &jg, at, &simulated);
			gc_nccl_group_release(&jg);
			free(at);
			ok &= pass;
			*failed += !pass;
			json_object_set_new(grp, "across_nodes", x);
		}
		json_array_append_new(scaling, grp);
	}
	if (json_is_number(json_object_get(m, "mttr_seconds")))
		mttr = json_pack("{s:b, s:f}", "measured", 1, "seconds",
				 json_number_value(json_object_get(m, "mttr_seconds")));
	else
		mttr = json_pack("{s:b}", "measured", 0);
	json_decref(m);
	free(path);
	return json_pack("{s:s, s:b, s:b, s:o, s:o, s:o}", "cluster", "", "ok", ok, "simulated",
			 simulated, "single_gpu", single, "scaling", scaling, "mttr", mttr);
}

int gc_cmd_nccl_probe(struct gc_cmd_ctx *ctx, struct gc_engine *e, bool across_only, json_t **out)
{
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC, .command = probe };
	struct report_state rs = { .across_only = across_only, .spec = ctx->spec };
	struct gc_session s;
	size_t failed;
	char *path = NULL;
	int rc;

	*out = NULL;
	gc_hosts_init(&rs.hosts, ctx->spec->name, "", 0, NULL, NULL);
	o.prepare = report_prepare;
	o.prepare_ctx = &rs;
	gc_session_init(&s);
	rc = gc_cmd_boot_run(ctx, e, NULL, &o, &s);
	if (!s.ran)
		goto out;
	*out = report_doc(&s, &rs, e->state_dir, &failed);
	json_object_set_new(*out, "cluster", json_string(ctx->spec->name));
	json_object_set_new(*out, "checked_at", gc_out_json_time((int64_t)time(NULL)));
	/* the last figures, for whoever reads the cluster's state (status, a later report) */
	path = gc_xasprintf("%s/nccl.json", e->state_dir);
	if (json_dump_file(*out, path, JSON_INDENT(2)) < 0)
		gc_out_warn(ctx->out, "cannot write '%s'", path);
out:
	free(path);
	gc_session_release(&s);
	gc_hosts_release(&rs.hosts);
	free(rs.vars);
	free(rs.val);
	free(rs.group_nodes);
	return rc;
}

/* One error per failed link of group g, naming both ends and the node to blame ("slow":
 * the other end, or node 0 when every link of node 0 failed); returns how many. */
static size_t pairs_errors(struct gc_cmd_ctx *ctx, const json_t *g, const json_t *x)
{
	const json_t *p;
	size_t k, n = 0;
	double floor = json_number_value(json_object_get(x, "floor_gbps"));

	json_array_foreach(json_object_get(x, "pairs"), k, p)
	{
		const json_t *bw = json_object_get(p, "busbw_gbps");
		const char *grp = json_string_value(json_object_get(g, "group")),
			   *a = json_string_value(json_object_get(p, "peer")),
			   *b = json_string_value(json_object_get(p, "node")),
			   *slow = json_string_value(json_object_get(p, "slow"));

		if (json_is_true(json_object_get(p, "ok")))
			continue;
		n++;
		if (!json_is_number(bw))
			gc_out_error(ctx->out,
				     "group '%s': the all-reduce between %s and %s gave no result",
				     grp, a, b);
		else if (json_number_value(bw) < floor)
			gc_out_error(
				ctx->out,
				"group '%s': the link between %s and %s reached %.2f GB/s of "
				"bus bandwidth, below the floor of %.2f GB/s: %s or its network "
				"is slow",
				grp, a, b, json_number_value(bw), floor, slow ? slow : b);
		else
			gc_out_error(
				ctx->out,
				"group '%s': the all-reduce between %s and %s gave wrong results "
				"(nccl-tests' #wrong column)",
				grp, a, b);
	}
	return n;
}

size_t gc_cmd_nccl_errors(struct gc_cmd_ctx *ctx, const json_t *doc)
{
	size_t failed = 0;

	for (size_t i = 0; i < json_array_size(json_object_get(doc, "scaling")); i++) {
		const json_t *g = json_array_get(json_object_get(doc, "scaling"), i);
		const json_t *x = json_object_get(g, "across_nodes");
		const json_t *bw = json_object_get(x, "busbw_gbps");

		if (json_is_string(json_object_get(x, "not_run")))
			gc_out_warn(ctx->out,
				    "group '%s': the all-reduce across its nodes did not run: %s",
				    json_string_value(json_object_get(g, "group")),
				    json_string_value(json_object_get(x, "not_run")));
		if (!x || json_is_true(json_object_get(x, "ok")))
			continue;
		failed++;
		/* a ring that reached its floor failed by a link, named below */
		if (json_is_number(bw) &&
		    json_number_value(bw) < json_number_value(json_object_get(x, "floor_gbps")))
			gc_out_error(
				ctx->out,
				"group '%s': the all-reduce across its %lld nodes reached %.2f GB/s "
				"of bus bandwidth, below the floor of %.2f GB/s for a %s network "
				"(half of %.0f Gbit/s): the node set fails",
				json_string_value(json_object_get(g, "group")),
				(long long)json_integer_value(json_object_get(g, "nodes")),
				json_number_value(bw),
				json_number_value(json_object_get(x, "floor_gbps")),
				json_string_value(json_object_get(g, "fabric")),
				json_number_value(json_object_get(x, "line_gbit")));
		else if (!json_is_number(bw))
			gc_out_error(ctx->out,
				     "group '%s': the all-reduce across its nodes gave no result "
				     "(are nccl-tests' all_reduce_perf and mpirun on its node 0?)",
				     json_string_value(json_object_get(g, "group")));
		if (!pairs_errors(ctx, g, x) && json_is_number(bw) &&
		    json_number_value(bw) >= json_number_value(json_object_get(x, "floor_gbps")))
			gc_out_error(
				ctx->out,
				"group '%s': the all-reduce across its nodes gave wrong results "
				"(nccl-tests' #wrong column): the node set fails",
				json_string_value(json_object_get(g, "group")));
	}
	if (failed)
		gc_out_hint(ctx->out,
			    "check the nodes' network (`gpucluster exec -- ip -s link`) and "
			    "that they share a placement group");
	return failed;
}

json_t *gc_cmd_nccl_last(const char *state_dir)
{
	char *path = gc_xasprintf("%s/nccl.json", state_dir);
	json_t *doc = json_load_file(path, 0, NULL), *groups = json_array(), *out = NULL;
	const json_t *g;
	size_t i;

	free(path);
	if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "scaling")))
		goto out;
	/* the groups that ran across their nodes, as the check stored them */
	json_array_foreach(json_object_get(doc, "scaling"), i, g)
	{
		const json_t *x = json_object_get(g, "across_nodes");

		if (json_is_string(json_object_get(g, "group")) && json_is_object(x))
			json_array_append_new(
				groups,
				json_pack("{s:O, s:O?, s:O?, s:O?, s:O?, s:O?, s:b, s:O?}", "group",
					  json_object_get(g, "group"), "fabric",
					  json_object_get(g, "fabric"), "nodes",
					  json_object_get(g, "nodes"), "busbw_gbps",
					  json_object_get(x, "busbw_gbps"), "floor_gbps",
					  json_object_get(x, "floor_gbps"), "not_run",
					  json_object_get(x, "not_run"), "ok",
					  json_is_true(json_object_get(x, "ok")), "pairs",
					  json_object_get(x, "pairs")));
	}
	out = json_pack("{s:O?, s:b, s:b, s:O}", "checked_at", json_object_get(doc, "checked_at"),
			"ok", json_is_true(json_object_get(doc, "ok")), "simulated",
			json_is_true(json_object_get(doc, "simulated")), "groups", groups);
out:
	json_decref(groups);
	json_decref(doc);
	return out;
}

void gc_cmd_nccl_print_last(struct gc_cmd_ctx *ctx, const json_t *last)
{
	const json_t *g, *p;
	size_t i, k;
	FILE *f = ctx->out->out;

	if (!last) {
		gc_out_puts(ctx->out, f, "\nNCCL: not checked yet (smoke with nccl, or report)\n");
		return;
	}
	gc_out_printf(ctx->out, f, "\nNCCL, last checked %s%s:\n",
		      json_is_string(json_object_get(last, "checked_at"))
			      ? json_string_value(json_object_get(last, "checked_at"))
			      : "(time unknown)",
		      json_is_true(json_object_get(last, "simulated")) ? " (simulated)" : "");
	if (!json_array_size(json_object_get(last, "groups")))
		gc_out_puts(ctx->out, f, "  no group of several nodes\n");
	json_array_foreach(json_object_get(last, "groups"), i, g)
	{
		const json_t *bw = json_object_get(g, "busbw_gbps");

		gc_out_printf(ctx->out, f, "  %s across %lld nodes: ",
			      json_string_value(json_object_get(g, "group")),
			      (long long)json_integer_value(json_object_get(g, "nodes")));
		if (json_is_string(json_object_get(g, "not_run")))
			gc_out_printf(ctx->out, f, "not run (%s)\n",
				      json_string_value(json_object_get(g, "not_run")));
		else
			gc_out_printf(ctx->out, f, "%s%.2f GB/s, floor %.2f GB/s (%s): %s\n",
				      json_is_number(bw) ? "" : "no result, ",
				      json_is_number(bw) ? json_number_value(bw) : 0.0,
				      json_number_value(json_object_get(g, "floor_gbps")),
				      json_is_string(json_object_get(g, "fabric"))
					      ? json_string_value(json_object_get(g, "fabric"))
					      : "?",
				      json_is_true(json_object_get(g, "ok")) ? "ok" : "FAILED");
		json_array_foreach(json_object_get(g, "pairs"), k, p)
		{
			bw = json_object_get(p, "busbw_gbps");
			gc_out_printf(ctx->out, f, "    link %s - %s: ",
				      json_string_value(json_object_get(p, "peer")),
				      json_string_value(json_object_get(p, "node")));
			if (json_is_number(bw))
				gc_out_printf(ctx->out, f, "%.2f GB/s ", json_number_value(bw));
			gc_out_puts(ctx->out, f,
				    json_is_true(json_object_get(p, "ok")) ? "ok\n" : "FAILED\n");
		}
	}
}
