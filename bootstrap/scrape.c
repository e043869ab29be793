/*
 * scrape.c: the Prometheus scrape config of a cluster's dcgm-exporters (scrape.h). The
 * formats are Prometheus's own (prometheus.io/docs/prometheus/latest/configuration/
 * configuration/: <scrape_config> with static_configs of targets and labels, and the
 * file_sd_config file, a JSON list of {targets, labels}).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/scrape.h"
#include "core/alloc.h"
#include "core/spec.h"

const char *const gc_scrape_format_names[] = { "prometheus", "file-sd", NULL };

/* The label names, in the order the documents give them. */
enum { L_CLUSTER, L_NODE, L_GROUP, L_TYPE, L_ID, N_LABELS };
static const char *const label_names[N_LABELS] = { "cluster", "node", "group", "instance_type",
						   "instance_id" };

/* Node i's target ("10.0.0.5:9400", "[2001:db8::5]:9400"), or NULL when it has none. */
static char *target_of(const struct gc_hosts *h, size_t i, bool private_addrs)
{
	const struct gc_hosts_node *n = &h->nodes[i];
	const char *a = private_addrs ? n->private_ip : gc_hosts_address(h, i);

	if (!a || (n->have_facts && n->gpus == 0))
		return NULL;
	return strchr(a, ':') ? gc_xasprintf("[%s]:%u", a, GC_DCGM_PORT)
			      : gc_xasprintf("%s:%u", a, GC_DCGM_PORT);
}

static json_t *labels_of(const struct gc_hosts *h, size_t i, bool *bad)
{
	const struct gc_hosts_node *n = &h->nodes[i];
	const char *v[N_LABELS] = { h->cluster, n->label, n->group, n->type, n->id };
	json_t *o = json_object();

	for (size_t k = 0; k < N_LABELS; k++) {
		json_t *s = json_string(v[k] ? v[k] : "");

		if (!s)
			*bad = true;
		else
			json_object_set_new(o, label_names[k], s);
	}
	return o;
}

/* A JSON string, which YAML reads as a double-quoted scalar. */
static void add_quoted(struct gc_buf *out, json_t *s)
{
	char *text = json_dumps(s, JSON_ENCODE_ANY);

	gc_buf_addstr(out, text ? text : "\"\"");
	free(text);
}

int gc_scrape_format(struct gc_buf *out, const struct gc_hosts *h, enum gc_scrape_format format,
		     bool private_addrs, size_t *n_targets, struct gc_error *err)
{
	json_t *list = json_array(), *cluster = json_string(h->cluster ? h->cluster : "");
	bool bad = !cluster;
	size_t n = 0;
	int rc = -1;

	for (size_t i = 0; i < h->n; i++) {
		char *t = target_of(h, i, private_addrs);

		if (!t)
			continue;
		json_array_append_new(
			list,
			json_pack("{s:[s], s:o}", "targets", t, "labels", labels_of(h, i, &bad)));
		free(t);
		n++;
	}
	if (bad) {
		gc_error_set(err, GC_EINVALID,
			     "cannot write the scrape config: a name from the cloud is not UTF-8");
		goto out;
	}
	if (format == GC_SCRAPE_FILE_SD) {
		char *text = json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		gc_buf_addf(out, "%s\n", text);
		free(text);
	} else {
		json_t *job = json_sprintf("gpucluster-%s", h->cluster ? h->cluster : "");
		size_t k;
		json_t *e;

		gc_buf_addstr(out, "scrape_configs:\n  - job_name: ");
		add_quoted(out, job);
		json_decref(job);
		gc_buf_addf(out, "\n    static_configs:%s\n", n ? "" : " []");
		json_array_foreach(list, k, e)
		{
			gc_buf_addstr(out, "      - targets: [");
			add_quoted(out, json_array_get(json_object_get(e, "targets"), 0));
			gc_buf_addstr(out, "]\n        labels:\n");
			for (size_t l = 0; l < N_LABELS; l++) {
				gc_buf_addf(out, "          %s: ", label_names[l]);
				add_quoted(out,
					   json_object_get(json_object_get(e, "labels"),
							   label_names[l]));
				gc_buf_addch(out, '\n');
			}
		}
	}
	if (n_targets)
		*n_targets = n;
	rc = 0;
out:
	json_decref(cluster);
	json_decref(list);
	return rc;
}
