/*
 * control.c: the control API (see control.h): what tests and the README demo use to look
 * inside the emulator and to steer it. Answers are JSON, except GET /faults, which is
 * the rules' own text so that it can be fed back to POST /faults.
 *
 * Called from connection threads; takes the world lock for as long as it reads or
 * changes the world.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "sim/control.h"
#include "sim/github.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/oidc.h"
#include "sim/quota.h"

static void reply_error(struct sim_resp *resp, int status, const char *msg)
{
	sim_resp_json(resp, status, json_pack("{s:b,s:s}", "ok", 0, "error", msg));
}

static json_t *tags_json(const struct sim_tags *t)
{
	json_t *o = json_object();

	for (size_t i = 0; i < t->n; i++)
		json_object_set_new(o, t->items[i].key, json_string(t->items[i].value));
	return o;
}

static json_t *instance_json(const struct sim_instance *in)
{
	json_t *o = json_object(), *sgs = json_array(), *faults = json_array();

	for (size_t i = 0; i < in->n_security_groups; i++)
		json_array_append_new(sgs, json_string(in->security_groups[i]));
	for (unsigned bit = 1; bit; bit <<= 1)
		if ((in->node_faults & bit) && sim_node_fault_name(bit))
			json_array_append_new(faults, json_string(sim_node_fault_name(bit)));

	json_object_set_new(o, "id", json_string(in->id));
	json_object_set_new(o, "cloud", json_string(sim_cloud_name(in->cloud)));
	json_object_set_new(o, "region", json_string(in->region));
	json_object_set_new(o, "zone", json_string(in->zone));
	json_object_set_new(o, "type", json_string(in->type));
	json_object_set_new(o, "image", json_string(in->image));
	json_object_set_new(o, "state", json_string(sim_state_name(in->cloud, in->state)));
	json_object_set_new(o, "name", json_string(in->name));
	json_object_set_new(o, "tags", tags_json(&in->tags));
	json_object_set_new(o, "key", json_string(in->key_name));
	json_object_set_new(o, "security_groups", sgs);
	json_object_set_new(o, "placement", json_string(in->placement));
	json_object_set_new(o, "subnet", json_string(in->subnet));
	json_object_set_new(o, "spot", json_boolean(in->spot));
	json_object_set_new(o, "client_token", json_string(in->client_token));
	json_object_set_new(o, "reservation", json_string(in->reservation));
	json_object_set_new(o, "private_ip", json_string(in->private_ip));
	json_object_set_new(o, "public_ip", json_string(in->public_ip));
	json_object_set_new(o, "ssh_port", json_integer(in->ssh_port));
	json_object_set_new(o, "host_key_fingerprint", json_string(in->host_key_fpr));
	json_object_set_new(o, "node_up", json_boolean(in->node_up));
	json_object_set_new(o, "node_faults", faults);
	json_object_set_new(o, "launch_time", json_integer(in->launch_wall));
	json_object_set_new(o, "role", in->role[0] ? json_string(in->role) : json_null());
	/* the cloud's own timer (AutoReleaseTime, ActionTimer, EC2's TTL power-off) */
	json_object_set_new(o, "release_at",
			    in->release_at_wall ? json_integer(in->release_at_wall) : json_null());
	return o;
}

json_t *sim_control_state(struct sim *sim)
{
	struct sim_world *w = sim->world;
	json_t *doc = json_object(), *insts = json_array(), *keys = json_array(),
	       *sgs = json_array(), *tokens = json_array();

	sim_world_lock(w);
	sim_world_tick(w);
	for (size_t i = 0; i < w->n_instances; i++)
		json_array_append_new(insts, instance_json(w->instances[i]));
	for (size_t i = 0; i < w->n_keypairs; i++) {
		const struct sim_keypair *k = w->keypairs[i];
		json_array_append_new(keys,
				      json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "cloud",
						sim_cloud_name(k->cloud), "region", k->region, "id",
						k->id, "name", k->name, "fingerprint",
						k->fingerprint, "tags", tags_json(&k->tags)));
	}
	for (size_t i = 0; i < w->n_secgroups; i++) {
		const struct sim_secgroup *g = w->secgroups[i];
		json_t *rules = json_array();

		for (size_t r = 0; r < g->n_rules; r++)
			json_array_append_new(
				rules,
				json_pack("{s:s,s:i,s:i,s:s,s:s,s:s,s:s}", "protocol",
					  g->rules[r].protocol, "from_port", g->rules[r].from_port,
					  "to_port", g->rules[r].to_port, "cidr", g->rules[r].cidr,
					  "cidr_ipv6", g->rules[r].cidr_ipv6, "source_group",
					  g->rules[r].source_group, "description",
					  g->rules[r].description));
		json_t *egress = json_array();

		for (size_t r = 0; r < g->n_egress; r++)
			json_array_append_new(egress,
					      json_pack("{s:s,s:s,s:s}", "protocol",
							g->egress[r].protocol, "cidr",
							g->egress[r].cidr, "destination_group",
							g->egress[r].source_group));
		/* inner_access: whether members reach each other without a rule; egress: the
		 * egress rules added beyond the default one (AWS) */
		json_array_append_new(
			sgs,
			json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o}", "cloud",
				  sim_cloud_name(g->cloud), "region", g->region, "id", g->id,
				  "name", g->name, "description", g->description, "vpc", g->vpc,
				  "inner_access", g->inner_accept ? "accept" : "drop", "tags",
				  tags_json(&g->tags), "rules", rules, "egress", egress));
	}
	for (size_t i = 0; i < w->n_tokens; i++) {
		const struct sim_token *t = w->tokens[i];
		json_t *ids = json_array();

		for (size_t k = 0; k < t->n_ids; k++)
			json_array_append_new(ids, json_string(t->ids[k]));
		json_array_append_new(tokens,
				      json_pack("{s:s,s:s,s:s,s:s,s:o}", "cloud",
						sim_cloud_name(t->cloud), "region", t->region,
						"token", t->token, "reservation", t->reservation,
						"instances", ids));
	}
	{
		json_t *pls = json_array();

		for (size_t i = 0; i < w->n_placements; i++) {
			const struct sim_placement *pl = w->placements[i];

			json_array_append_new(
				pls,
				json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:o,s:s}", "cloud",
					  sim_cloud_name(pl->cloud), "region", pl->region, "zone",
					  pl->zone, "id", pl->id, "name", pl->name, "strategy",
					  pl->strategy, "members",
					  (json_int_t)sim_world_placement_members(w, pl), "tags",
					  tags_json(&pl->tags), "description", pl->description));
		}
		json_object_set_new(doc, "placements", pls); /* sim/placement.c */
	}
	{
		json_t *eips = json_array();

		for (size_t i = 0; i < w->n_addresses; i++) {
			struct sim_address *a = w->addresses[i];
			const struct sim_instance *on = sim_world_address_on(w, a);

			json_array_append_new(eips,
					      json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "cloud",
							sim_cloud_name(a->cloud), "region",
							a->region, "id", a->id, "public_ip",
							a->public_ip, "instance", on ? on->id : "",
							"tags", tags_json(&a->tags)));
		}
		json_object_set_new(doc, "addresses", eips); /* sim/address.c */
	}
	sim_world_unlock(w);

	json_object_set_new(doc, "instances", insts);
	json_object_set_new(doc, "networks", sim_networks_json(sim->cfg.no_default_vpc));
	json_object_set_new(doc, "key_pairs", keys);
	json_object_set_new(doc, "security_groups", sgs);
	json_object_set_new(doc, "tokens", tokens);
	return doc;
}

static void post_faults(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	char *text = gc_xstrndup(req->body ? req->body : "", req->body_len);
	char *line = text;
	unsigned added = 0, lineno = 0;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		struct gc_error err;
		size_t len;

		if (nl)
			*nl = '\0';
		lineno++;
		len = strlen(line);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			line[--len] = '\0';
		gc_error_init(&err);
		if (len && line[0] != '#') {
			if (sim_faults_add(sim->faults, line, &err) != 0) {
				char *msg = gc_xasprintf("line %u: %s (%u rules added before it)",
							 lineno, err.message, added);
				reply_error(resp, 400, msg);
				free(msg);
				free(text);
				return;
			}
			added++;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	sim_resp_json(resp, 200, json_pack("{s:b,s:i}", "ok", 1, "added", (json_int_t)added));
}

static void get_faults(struct sim *sim, struct sim_resp *resp)
{
	char *text = sim_faults_describe(sim->faults);

	resp->status = 200;
	resp->content_type = "text/plain; charset=utf-8";
	gc_buf_reset(&resp->body);
	gc_buf_addstr(&resp->body, text ? text : "");
	free(text);
}

/* POST /quotas: one setting a line (sim/quota.h) */
static void post_quotas(const struct sim_req *req, struct sim_resp *resp)
{
	char *text = gc_xstrndup(req->body ? req->body : "", req->body_len);
	char *save = NULL;
	unsigned added = 0;

	for (char *line = strtok_r(text, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save)) {
		struct gc_error err;

		gc_error_init(&err);
		if (line[0] == '#')
			continue;
		if (sim_quota_set(line, &err) != 0) {
			reply_error(resp, 400, err.message);
			free(text);
			return;
		}
		added++;
	}
	free(text);
	sim_resp_json(resp, 200, json_pack("{s:b,s:i}", "ok", 1, "added", (json_int_t)added));
}

/* "/nodes/<id>/preempt", body: the notice in seconds (default 120, AWS's two minutes):
 * the interruption notice goes on the node's metadata service now and the cloud
 * reclaims the spot instance when it runs out (docs/internals/spot.md). */
static void node_preempt(struct sim *sim, const char *id, const struct sim_req *req,
			 struct sim_resp *resp)
{
	char *text = gc_xstrndup(req->body ? req->body : "", req->body_len), *end;
	unsigned long notice = 120;
	struct sim_instance *inst = NULL;
	int rc = -1;

	if (text[0]) {
		errno = 0;
		notice = strtoul(text, &end, 10);
		if (errno || end == text || (*end && *end != '\n') || notice > 3600) {
			free(text);
			reply_error(resp, 400, "the body is the notice in seconds, 0 to 3600");
			return;
		}
	}
	free(text);
	sim_world_lock(sim->world);
	for (int c = 0; c < SIM_NCLOUDS && !inst; c++)
		inst = sim_world_instance(sim->world, (enum sim_cloud)c, id);
	if (inst)
		rc = sim_world_reclaim(sim->world, inst, (unsigned)notice);
	sim_world_unlock(sim->world);
	if (!inst)
		reply_error(resp, 404, "no such instance");
	else if (rc < 0)
		reply_error(resp, 409, "not a running spot instance, or already being reclaimed");
	else
		sim_resp_json(resp, 200,
			      json_pack("{s:b,s:s,s:i}", "ok", 1, "instance", id, "notice_s",
					(json_int_t)notice));
}

/* "/nodes/<id>/shutdown": the node powers itself off, as its shutdown -h would (an
 * API-only emulator has no node to run it): it stops, or terminates when its launch
 * said so (sim_world_os_shutdown, docs/internals/idle.md). */
static void node_shutdown(struct sim *sim, const char *id, struct sim_resp *resp)
{
	struct sim_instance *inst = NULL;
	int rc = -1;

	sim_world_lock(sim->world);
	for (int c = 0; c < SIM_NCLOUDS && !inst; c++)
		inst = sim_world_instance(sim->world, (enum sim_cloud)c, id);
	if (inst)
		rc = sim_world_os_shutdown(sim->world, inst);
	sim_world_unlock(sim->world);
	if (!inst)
		reply_error(resp, 404, "no such instance");
	else if (rc < 0)
		reply_error(resp, 409, "not a running instance");
	else
		sim_resp_json(resp, 200, json_pack("{s:b,s:s}", "ok", 1, "instance", id));
}

/* "/nodes/<id>/faults" */
static void node_faults(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	const char *p = req->path + strlen("/nodes/");
	const char *slash = strchr(p, '/');
	char id[SIM_ID_MAX];
	char *text, *item, *save = NULL;
	unsigned bits = 0;
	struct sim_instance *inst = NULL;

	if (!slash ||
	    (strcmp(slash, "/faults") != 0 && strcmp(slash, "/preempt") != 0 &&
	     strcmp(slash, "/shutdown") != 0) ||
	    slash == p || (size_t)(slash - p) >= sizeof(id)) {
		reply_error(resp, 404, "no such endpoint");
		return;
	}
	memcpy(id, p, (size_t)(slash - p));
	id[slash - p] = '\0';
	if (strcmp(slash, "/preempt") == 0) {
		node_preempt(sim, id, req, resp);
		return;
	}
	if (strcmp(slash, "/shutdown") == 0) {
		node_shutdown(sim, id, resp);
		return;
	}

	text = gc_xstrndup(req->body ? req->body : "", req->body_len);
	for (item = strtok_r(text, ", \t\r\n", &save); item;
	     item = strtok_r(NULL, ", \t\r\n", &save)) {
		unsigned bit = sim_node_fault_parse(item);
		if (!bit) {
			char *msg = gc_xasprintf("unknown node fault '%s'", item);
			reply_error(resp, 400, msg);
			free(msg);
			free(text);
			return;
		}
		bits |= bit;
	}
	free(text);

	sim_world_lock(sim->world);
	for (int c = 0; c < SIM_NCLOUDS && !inst; c++)
		inst = sim_world_instance(sim->world, (enum sim_cloud)c, id);
	if (inst) {
		if (sim->nodes)
			sim_nodes_set_faults(sim->nodes, inst, bits);
		else
			inst->node_faults = bits;
	}
	sim_world_unlock(sim->world);
	if (!inst) {
		reply_error(resp, 404, "no such instance");
		return;
	}
	sim_resp_json(
		resp, 200,
		json_pack("{s:b,s:s,s:i}", "ok", 1, "instance", id, "faults", (json_int_t)bits));
}

void sim_control_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	const char *m = req->method, *p = req->path;

	snprintf(resp->action, sizeof(resp->action), "%s %s", m, p);
	if (sim_oidc_handle(sim, req, resp)) {
		/* the OIDC issuer's paths (sim/oidc.h) */
	} else if (sim_github_handle(req, resp)) {
		/* the GitHub REST calls of the node-runner flow (sim/github.h) */
	} else if (strcmp(p, "/healthz") == 0 && strcmp(m, "GET") == 0) {
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(p, "/checkip") == 0 && strcmp(m, "GET") == 0) {
		/* what checkip.amazonaws.com answers: the caller's address and a newline */
		resp->status = 200;
		resp->content_type = "text/plain";
		gc_buf_addf(&resp->body, "%s\n", req->remote_addr ? req->remote_addr : "");
	} else if (strcmp(p, "/state") == 0 && strcmp(m, "GET") == 0) {
		sim_resp_json(resp, 200, sim_control_state(sim));
	} else if (strcmp(p, "/reset") == 0 && strcmp(m, "POST") == 0) {
		sim_world_lock(sim->world);
		sim_world_reset(sim->world);
		sim_world_unlock(sim->world);
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(p, "/faults") == 0 && strcmp(m, "GET") == 0) {
		get_faults(sim, resp);
	} else if (strcmp(p, "/faults") == 0 && strcmp(m, "POST") == 0) {
		post_faults(sim, req, resp);
	} else if (strcmp(p, "/faults") == 0 && strcmp(m, "DELETE") == 0) {
		sim_faults_clear(sim->faults);
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	} else if (strncmp(p, "/nodes/", 7) == 0 && strcmp(m, "POST") == 0) {
		node_faults(sim, req, resp);
	} else if (strcmp(p, "/quotas") == 0 && strcmp(m, "POST") == 0) {
		post_quotas(req, resp);
	} else if (strcmp(p, "/quotas") == 0 && strcmp(m, "DELETE") == 0) {
		sim_quota_clear();
		sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(p, "/healthz") == 0 || strcmp(p, "/state") == 0 ||
		   strcmp(p, "/reset") == 0 || strcmp(p, "/faults") == 0) {
		reply_error(resp, 405, "method not allowed");
	} else {
		reply_error(resp, 404, "no such endpoint");
	}
}
