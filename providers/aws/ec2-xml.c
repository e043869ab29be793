/*
 * ec2-xml.c: EC2's XML answers (Query API 2016-11-15, WIRE.md §1.4) turned into plain
 * structs with libxml2. Elements are matched by local name along explicit paths of
 * direct children, never by searching the whole tree: a security group's nested
 * ipPermissions/.../groups/item must not be mistaken for the group itself.
 *
 * The bodies are remote input. They arrive capped (AWS_MAX_RESPONSE) and are parsed
 * with network access off and without entity substitution; anything that is not the
 * expected document is GC_EBADRESPONSE naming what was missing. The list answers are read
 * as a stream, one item's tree at a time (stream() below), so memory does not grow with
 * the page size; the small single answers (errors, a created id, console output) are
 * read as one tree.
 */
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/aws/ec2.h"

static void quiet_error(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

void aws_xml_quiet(void)
{
	/* XML_PARSE_NOERROR silences the parser's reports, not the encoding and I/O errors
	 * libxml2 sends to its generic handler (which prints): nothing below cmd/ prints,
	 * whatever bytes an answer carries. The handler is per thread, so set before each
	 * parse. */
	xmlSetGenericErrorFunc(NULL, quiet_error);
}

static xmlDocPtr parse(const char *body, size_t len, struct gc_error *err)
{
	xmlDocPtr doc;

	if (len == 0 || len > INT_MAX) {
		gc_error_set(err, GC_EBADRESPONSE, "empty or oversized XML answer");
		return NULL;
	}
	aws_xml_quiet();
	doc = xmlReadMemory(body, (int)len, "ec2.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc || !xmlDocGetRootElement(doc)) {
		if (doc)
			xmlFreeDoc(doc);
		gc_error_set(err, GC_EBADRESPONSE, "the answer is not well-formed XML");
		return NULL;
	}
	return doc;
}

/* Where needle first occurs in the n bytes at p, or NULL. */
static const char *find(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (const char *q = p; k <= n && q <= p + n - k; q++)
		if (*q == *needle && !memcmp(q, needle, k))
			return q;
	return NULL;
}

bool aws_xml_is_answer(const char *body, size_t len, const char *action)
{
	const char *p = body, *end = body + len;
	size_t k = strlen(action);

	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end && strchr(" \t\r\n", *p))
		p++;
	if (end - p >= 5 && !memcmp(p, "<?xml", 5)) {
		const char *q = find(p, (size_t)(end - p), "?>");

		if (!q)
			return false;
		for (p = q + 2; p < end && strchr(" \t\r\n", *p); p++)
			;
	}
	if ((size_t)(end - p) < k + 11 || p[0] != '<' || memcmp(p + 1, action, k) != 0 ||
	    memcmp(p + 1 + k, "Response", 8) != 0 || !strchr(" \t\r\n>", p[9 + k]))
		return false;
	/* the requestId comes first; a short look keeps a page of 1000 instances cheap */
	p += 9 + k;
	return find(p, (size_t)(end - p) < 4096 ? (size_t)(end - p) : 4096, "<requestId>");
}

static bool is(xmlNodePtr n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* The first direct child element named name, or NULL. */
static xmlNodePtr child(xmlNodePtr n, const char *name)
{
	if (!n)
		return NULL;
	for (xmlNodePtr c = n->children; c; c = c->next)
		if (is(c, name))
			return c;
	return NULL;
}

/* Follows a path of direct children, "a/b/c". */
static xmlNodePtr path(xmlNodePtr n, const char *p)
{
	char name[64];

	while (n && *p) {
		size_t k = strcspn(p, "/");

		if (k >= sizeof(name))
			return NULL;
		memcpy(name, p, k);
		name[k] = '\0';
		n = child(n, name);
		p += k + (p[k] == '/');
	}
	return n;
}

/* A copy of the text of the element at path below n, or NULL when absent. */
static char *text(xmlNodePtr n, const char *p)
{
	xmlNodePtr e = path(n, p);
	xmlChar *t;
	char *s;

	if (!e)
		return NULL;
	t = xmlNodeGetContent(e);
	s = gc_xstrdup(t ? (const char *)t : "");
	xmlFree(t);
	return s;
}

/* Copies the text at path into a fixed buffer ("" when absent). */
static void text_into(xmlNodePtr n, const char *p, char *out, size_t size)
{
	char *s = text(n, p);
	size_t k = s ? strlen(s) : 0;

	if (k >= size)
		k = size - 1;
	if (s)
		memcpy(out, s, k);
	out[k] = '\0';
	free(s);
}

/* "2026-03-14T15:09:27.000Z" or without the fraction, or "+00:00" in place of Z. */
static int aws_parse_time(const char *s, int64_t *out)
{
	char buf[40];
	size_t len;

	if (!s)
		return -1;
	len = strlen(s);
	if (len >= sizeof(buf) - 1)
		return -1;
	memcpy(buf, s, len + 1);
	if (len > 6 && strcmp(buf + len - 6, "+00:00") == 0) {
		buf[len - 6] = 'Z';
		buf[len - 5] = '\0';
	}
	return gc_parse_rfc3339(buf, out);
}

int aws_xml_error(const char *body, size_t len, char code[128], char message[512],
		  char request_id[128])
{
	xmlDocPtr doc;
	xmlNodePtr root, e;

	code[0] = message[0] = request_id[0] = '\0';
	doc = parse(body, len, NULL);
	if (!doc)
		return -1;
	root = xmlDocGetRootElement(doc);
	e = is(root, "Response") ? path(root, "Errors/Error") : NULL;
	/* some endpoints answer a bare <Error> (STS-style ErrorResponse wraps it) */
	if (!e && is(root, "ErrorResponse"))
		e = child(root, "Error");
	if (!e && is(root, "Error"))
		e = root;
	if (!e) {
		xmlFreeDoc(doc);
		return -1;
	}
	text_into(e, "Code", code, 128);
	text_into(e, "Message", message, 512);
	text_into(root, "RequestID", request_id, 128);
	if (!request_id[0])
		text_into(root, "RequestId", request_id, 128);
	xmlFreeDoc(doc);
	return code[0] ? 0 : -1;
}

static enum gc_instance_state state_of(const char *name, const char *code)
{
	static const struct {
		const char *name;
		enum gc_instance_state s;
	} names[] = {
		{ "pending", GC_STATE_PENDING },	   { "running", GC_STATE_RUNNING },
		{ "shutting-down", GC_STATE_TERMINATING }, { "terminated", GC_STATE_TERMINATED },
		{ "stopping", GC_STATE_STOPPING },	   { "stopped", GC_STATE_STOPPED },
	};
	uint64_t c;

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].s;
	/* only the low byte of the code is meaningful (WIRE.md 1.3) */
	if (code && gc_parse_u64(code, UINT32_MAX, &c) == 0) {
		switch (c & 0xff) {
		case 0: return GC_STATE_PENDING;
		case 16: return GC_STATE_RUNNING;
		case 32: return GC_STATE_TERMINATING;
		case 48: return GC_STATE_TERMINATED;
		case 64: return GC_STATE_STOPPING;
		case 80: return GC_STATE_STOPPED;
		default: break;
		}
	}
	return GC_STATE_UNKNOWN;
}

static void empty_to_null(char **s)
{
	if (*s && !**s) {
		free(*s);
		*s = NULL;
	}
}

/*
 * The list answers are read as a stream (xmlTextReader): only the item being read is a
 * tree, expanded, read with the helpers above and freed as the reader moves on, so a
 * DescribeInstances page of 1000 costs one instance's tree, not the whole document's.
 */

#define STREAM_DEPTH 8 /* the deepest item path below the root, plus one */

/* What a stream looks for: items at any of paths ("reservationSet/item/instancesSet/item"),
 * each handed to item; the root's nextToken when token is not NULL. */
struct stream {
	const char *const *paths;
	size_t n_paths;
	int (*item)(xmlNodePtr item, void *ctx, struct gc_error *err);
	void *ctx;
	char **token;
	bool found; /* the first element of a path was there */
};

enum step { STEP_INTO, STEP_ITEM, STEP_TOKEN, STEP_SKIP };

/*
 * What to do with the element at depth (1: a child of the root) whose ancestors below the
 * root are at[1..depth - 1]: enter it (a proper prefix of a path), read it (a whole path),
 * or skip it. Only the first sibling of a name other than "item" counts, as with the
 * tree's first-child lookups: first[depth] says one was entered.
 */
static enum step stream_step(struct stream *s, char at[][64], bool *first, int depth,
			     const char *name)
{
	char p[STREAM_DEPTH * 64];
	size_t k = 0;

	if (depth == 1 && s->token && strcmp(name, "nextToken") == 0 && !*s->token)
		return STEP_TOKEN;
	for (int i = 1; i <= depth; i++)
		k += (size_t)snprintf(p + k, sizeof(p) - k, "%s%s", i > 1 ? "/" : "",
				      i < depth ? at[i] : name);
	for (size_t i = 0; i < s->n_paths; i++) {
		const char *want = s->paths[i];
		bool whole = strcmp(want, p) == 0;

		if (!whole && !(strncmp(want, p, k) == 0 && want[k] == '/'))
			continue;
		if (strcmp(name, "item") != 0) {
			if (first[depth])
				return STEP_SKIP;
			first[depth] = true;
		}
		if (depth == 1)
			s->found = true;
		return whole ? STEP_ITEM : STEP_INTO;
	}
	return STEP_SKIP;
}

static int stream(const char *body, size_t len, struct stream *s, struct gc_error *err)
{
	xmlTextReaderPtr r;
	char at[STREAM_DEPTH][64];
	bool first[STREAM_DEPTH];
	bool root = false;
	int rc, ret = -1;

	if (s->token)
		*s->token = NULL;
	if (len == 0 || len > INT_MAX)
		return gc_error_set(err, GC_EBADRESPONSE, "empty or oversized XML answer");
	aws_xml_quiet();
	r = xmlReaderForMemory(body, (int)len, "ec2.xml", NULL,
			       XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!r)
		return gc_error_set(err, GC_EBADRESPONSE, "the answer is not well-formed XML");
	memset(first, 0, sizeof(first));
	rc = xmlTextReaderRead(r);
	while (rc == 1) {
		int depth = xmlTextReaderDepth(r);
		const char *name = (const char *)xmlTextReaderConstLocalName(r);
		enum step step = STEP_INTO;
		xmlNodePtr n;

		if (xmlTextReaderNodeType(r) != XML_READER_TYPE_ELEMENT) {
			rc = xmlTextReaderRead(r);
			continue;
		}
		if (depth >= STREAM_DEPTH || !name || strlen(name) >= sizeof(at[0]))
			step = STEP_SKIP;
		else if (depth > 0)
			step = stream_step(s, at, first, depth, name);
		root = true;
		if (step == STEP_INTO) {
			snprintf(at[depth], sizeof(at[depth]), "%s", name);
			for (int i = depth + 1; i < STREAM_DEPTH; i++)
				first[i] = false;
			rc = xmlTextReaderRead(r);
			continue;
		}
		if (step != STEP_SKIP) {
			n = xmlTextReaderExpand(r);
			if (!n) {
				rc = -1;
				break;
			}
			if (step == STEP_TOKEN)
				*s->token = text(n, "");
			else if (s->item(n, s->ctx, err) != 0)
				goto out;
		}
		rc = xmlTextReaderNext(r);
	}
	if (rc != 0 || !root) {
		gc_error_set(err, GC_EBADRESPONSE, "the answer is not well-formed XML");
		goto out;
	}
	if (s->token)
		empty_to_null(s->token);
	ret = 0;
out:
	if (ret != 0 && s->token) {
		free(*s->token);
		*s->token = NULL;
	}
	xmlFreeTextReader(r);
	return ret;
}

/* Streams the items of set ("imagesSet": set/item) to item; a missing set is an error. */
static int stream_set(const char *body, size_t len, const char *set,
		      int (*item)(xmlNodePtr item, void *ctx, struct gc_error *err), void *ctx,
		      char **next_token, struct gc_error *err)
{
	char item_path[64];
	const char *paths[] = { item_path };
	struct stream s = { paths, 1, item, ctx, next_token, false };

	snprintf(item_path, sizeof(item_path), "%s/item", set);
	if (stream(body, len, &s, err) != 0)
		return -1;
	if (s.found)
		return 0;
	if (next_token) {
		free(*next_token);
		*next_token = NULL;
	}
	return gc_error_set(err, GC_EBADRESPONSE, "the answer has no %s", set);
}

static int one_instance(xmlNodePtr item, struct gc_instance *inst, struct gc_error *err)
{
	char *name, *code, *when, *life;

	inst->id = text(item, "instanceId");
	if (!inst->id || !*inst->id)
		return gc_error_set(err, GC_EBADRESPONSE, "an instance item has no instanceId");
	inst->type = text(item, "instanceType");
	inst->zone = text(item, "placement/availabilityZone");
	inst->image = text(item, "imageId");
	inst->private_ip = text(item, "privateIpAddress");
	inst->public_ip = text(item, "ipAddress");
	inst->client_token = text(item, "clientToken");
	empty_to_null(&inst->private_ip);
	empty_to_null(&inst->public_ip);
	empty_to_null(&inst->client_token);
	name = text(item, "instanceState/name");
	code = text(item, "instanceState/code");
	inst->state = state_of(name, code);
	inst->state_name = name ? name : gc_xstrdup(gc_instance_state_name(inst->state));
	free(code);
	when = text(item, "launchTime");
	if (when && aws_parse_time(when, &inst->launch_time) != 0)
		inst->launch_time = 0;
	free(when);
	life = text(item, "instanceLifecycle");
	inst->spot = life && strcmp(life, "spot") == 0;
	free(life);
	/* why it is going or gone: Server.SpotInstance{Termination,Shutdown} for a reclaim */
	inst->reason = text(item, "stateReason/code");
	empty_to_null(&inst->reason);
	inst->preempted = inst->reason &&
		(!strcmp(inst->reason, "Server.SpotInstanceTermination") ||
		 !strcmp(inst->reason, "Server.SpotInstanceShutdown"));
	for (xmlNodePtr t = child(child(item, "tagSet"), "item"); t; t = t->next) {
		char *k, *v;

		if (!is(t, "item"))
			continue;
		k = text(t, "key");
		v = text(t, "value");
		if (k && *k)
			gc_instance_set_tag(inst, k, v ? v : "");
		free(k);
		free(v);
	}
	return 0;
}

static int instance_item(xmlNodePtr item, void *ctx, struct gc_error *err)
{
	struct gc_instance_list *got = ctx;
	struct gc_instance *inst = gc_instance_list_push(got);

	if (one_instance(item, inst, err) != 0) {
		gc_instance_release(inst);
		got->n--;
		return -1;
	}
	return 0;
}

int aws_xml_instances(const char *body, size_t len, struct gc_instance_list *out, char **next_token,
		      struct gc_error *err)
{
	static const char *const paths[] = { "reservationSet/item/instancesSet/item",
					     "instancesSet/item" };
	struct gc_instance_list got;
	struct stream s = { paths, 2, instance_item, &got, next_token, false };
	int ret = -1;

	gc_instance_list_init(&got);
	if (stream(body, len, &s, err) != 0)
		goto out;
	if (!s.found) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "the answer has no reservationSet or instancesSet");
		goto out;
	}
	gc_instance_list_take(out, &got);
	ret = 0;
out:
	if (ret != 0 && next_token) {
		free(*next_token);
		*next_token = NULL;
	}
	gc_instance_list_release(&got);
	return ret;
}

static void resource_tags(xmlNodePtr item, struct gc_resource *r)
{
	for (xmlNodePtr t = child(child(item, "tagSet"), "item"); t; t = t->next) {
		char *k, *v;

		if (!is(t, "item"))
			continue;
		k = text(t, "key");
		v = text(t, "value");
		if (!k || !*k) {
			free(k);
			free(v);
			continue;
		}
		r->tags = gc_xreallocarray(r->tags, r->n_tags + 1, sizeof(*r->tags));
		r->tags[r->n_tags].key = k;
		r->tags[r->n_tags].value = v ? v : gc_xstrdup("");
		r->n_tags++;
	}
}

/* Items of a set into a resource list: id, name and fingerprint from the given element
 * names. */
struct resources {
	const char *set, *id_name, *name_name, *fpr_name;
	struct gc_resource_list got;
};

static int resource_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct resources *rs = ctx;
	struct gc_resource *r;
	char *id = text(it, rs->id_name);

	if (!id || !*id) {
		free(id);
		return gc_error_set(err, GC_EBADRESPONSE, "an item of %s has no %s", rs->set,
				    rs->id_name);
	}
	r = gc_resource_list_push(&rs->got);
	r->id = id;
	r->name = text(it, rs->name_name);
	r->fingerprint = rs->fpr_name ? text(it, rs->fpr_name) : NULL;
	empty_to_null(&r->fingerprint);
	resource_tags(it, r);
	return 0;
}

/* The items of set_path ("keySet/item") into out, all or nothing. */
static int resources(const char *body, size_t len, const char *set_path, const char *id_name,
		     const char *name_name, const char *fpr_name, struct gc_resource_list *out,
		     char **next_token, struct gc_error *err)
{
	struct resources rs = { set_path, id_name, name_name, fpr_name, { 0 } };
	int ret;

	gc_resource_list_init(&rs.got);
	ret = stream_set(body, len, set_path, resource_item, &rs, next_token, err);
	for (size_t i = 0; ret == 0 && i < rs.got.n; i++)
		*gc_resource_list_push(out) = rs.got.items[i];
	if (ret == 0)
		rs.got.n = 0; /* moved: only the array is left to free */
	gc_resource_list_release(&rs.got);
	return ret;
}

int aws_xml_keypairs(const char *body, size_t len, struct gc_resource_list *out,
		     struct gc_error *err)
{
	return resources(body, len, "keySet", "keyPairId", "keyName", "keyFingerprint", out, NULL,
			 err);
}

int aws_xml_secgroups(const char *body, size_t len, struct gc_resource_list *out, char **next_token,
		      struct gc_error *err)
{
	return resources(body, len, "securityGroupInfo", "groupId", "groupName", NULL, out,
			 next_token, err);
}

int aws_xml_placement_groups(const char *body, size_t len, struct gc_resource_list *out,
			     struct gc_error *err)
{
	return resources(body, len, "placementGroupSet", "groupName", "groupName", NULL, out, NULL,
			 err);
}

int aws_xml_addresses(const char *body, size_t len, struct gc_resource_list *out,
		      struct gc_error *err)
{
	return resources(body, len, "addressesSet", "allocationId", "publicIp", NULL, out, NULL,
			 err);
}

/* The primary interface of an instance item: device 0 on network card 0 (a card index
 * absent on types with one card). */
static int primary_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	char **eni = ctx;

	(void)err;
	for (xmlNodePtr i = child(child(it, "networkInterfaceSet"), "item"); i; i = i->next) {
		char *card, *dev;
		bool first;

		if (!is(i, "item"))
			continue;
		card = text(i, "attachment/networkCardIndex");
		dev = text(i, "attachment/deviceIndex");
		first = (!card || !strcmp(card, "0")) && dev && !strcmp(dev, "0");
		free(card);
		free(dev);
		if (first && !*eni)
			*eni = text(i, "networkInterfaceId");
	}
	return 0;
}

int aws_xml_primary_interface(const char *body, size_t len, char **out, struct gc_error *err)
{
	static const char *const paths[] = { "reservationSet/item/instancesSet/item" };
	char *eni = NULL;
	struct stream s = { paths, 1, primary_item, &eni, NULL, false };

	*out = NULL;
	if (stream(body, len, &s, err) != 0) {
		free(eni);
		return -1;
	}
	if (!eni || !*eni) {
		free(eni);
		return gc_error_set(err, GC_EBADRESPONSE,
				    "the instance item has no primary network interface");
	}
	*out = eni;
	return 0;
}

struct sg_rules {
	struct aws_sg_rule *v;
	size_t n;
	bool seen;
};

static void push_sg_rule(struct sg_rules *rs, xmlNodePtr perm, xmlNodePtr src, const char *field,
			 bool egress)
{
	struct aws_sg_rule *r;
	char *from = text(perm, "fromPort"), *to = text(perm, "toPort");
	int64_t f = -1, t = -1;

	rs->v = gc_xreallocarray(rs->v, rs->n + 1, sizeof(*rs->v));
	r = &rs->v[rs->n++];
	memset(r, 0, sizeof(*r));
	text_into(perm, "ipProtocol", r->protocol, sizeof(r->protocol));
	/* absent (protocol -1) or unreadable: -1, a shape that matches no rule of ours */
	if (!from || gc_parse_i64(from, -1, 65535, &f) != 0)
		f = -1;
	if (!to || gc_parse_i64(to, -1, 65535, &t) != 0)
		t = -1;
	r->from = (int)f;
	r->to = (int)t;
	if (strcmp(field, "cidrIp") == 0 || strcmp(field, "cidrIpv6") == 0)
		r->cidr = text(src, field);
	else
		r->group = text(src, field);
	r->description = text(src, "description");
	r->egress = egress;
	free(from);
	free(to);
}

static int sg_rules_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct sg_rules *rs = ctx;

	if (rs->seen)
		return gc_error_set(err, GC_EBADRESPONSE,
				    "more than one group in securityGroupInfo");
	rs->seen = true;
	for (int out = 0; out < 2; out++) {
		const char *list = out ? "ipPermissionsEgress" : "ipPermissions";

		for (xmlNodePtr p = child(child(it, list), "item"); p; p = p->next) {
			if (!is(p, "item"))
				continue;
			for (xmlNodePtr g = child(child(p, "ipRanges"), "item"); g; g = g->next)
				if (is(g, "item"))
					push_sg_rule(rs, p, g, "cidrIp", out);
			for (xmlNodePtr g = child(child(p, "ipv6Ranges"), "item"); g; g = g->next)
				if (is(g, "item"))
					push_sg_rule(rs, p, g, "cidrIpv6", out);
			for (xmlNodePtr g = child(child(p, "groups"), "item"); g; g = g->next)
				if (is(g, "item"))
					push_sg_rule(rs, p, g, "groupId", out);
		}
	}
	return 0;
}

int aws_xml_sg_rules(const char *body, size_t len, struct aws_sg_rule **out, size_t *n,
		     struct gc_error *err)
{
	struct sg_rules rs = { NULL, 0, false };

	*out = NULL;
	*n = 0;
	if (stream_set(body, len, "securityGroupInfo", sg_rules_item, &rs, NULL, err) != 0 ||
	    (!rs.seen && gc_error_set(err, GC_EBADRESPONSE, "the group is not in the answer"))) {
		aws_sg_rules_release(rs.v, rs.n);
		return -1;
	}
	*out = rs.v;
	*n = rs.n;
	return 0;
}

void aws_sg_rules_release(struct aws_sg_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].cidr);
		free(r[i].group);
		free(r[i].description);
	}
	free(r);
}

struct keypair_public {
	const char *name;
	char **line, **id;
};

static int keypair_public_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct keypair_public *kp = ctx;
	char *n;

	(void)err;
	if (*kp->line || *kp->id)
		return 0; /* the first of that name */
	n = text(it, "keyName");
	if (n && strcmp(n, kp->name) == 0) {
		*kp->line = text(it, "publicKey");
		*kp->id = text(it, "keyPairId");
	}
	free(n);
	return 0;
}

int aws_xml_keypair_public(const char *body, size_t len, const char *name, char **out_line,
			   char **out_id, struct gc_error *err)
{
	static const char *const paths[] = { "keySet/item" };
	struct keypair_public kp = { name, out_line, out_id };
	struct stream s = { paths, 1, keypair_public_item, &kp, NULL, false };

	*out_line = *out_id = NULL;
	return stream(body, len, &s, err);
}

int aws_xml_root_text(const char *body, size_t len, const char *name, char **out,
		      struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);

	*out = NULL;
	if (!doc)
		return -1;
	*out = text(xmlDocGetRootElement(doc), name);
	xmlFreeDoc(doc);
	return 0;
}

void aws_image_release(struct aws_image *im)
{
	if (!im)
		return;
	free(im->id);
	free(im->name);
	free(im->root_device);
	free(im->created);
	memset(im, 0, sizeof(*im));
}

/* An array the items of a page are appended to: *n grows, *alloc with it. */
struct grow {
	void **out;
	size_t *n, *alloc;
};

static int image_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct grow *g = ctx;
	struct aws_image **out = (struct aws_image **)g->out;
	struct aws_image im;

	memset(&im, 0, sizeof(im));
	im.id = text(it, "imageId");
	if (!im.id || !*im.id) {
		aws_image_release(&im);
		return gc_error_set(err, GC_EBADRESPONSE, "an item of imagesSet has no imageId");
	}
	im.name = text(it, "name");
	im.root_device = text(it, "rootDeviceName");
	im.created = text(it, "creationDate");
	if (!im.created || aws_parse_time(im.created, &im.created_at) != 0)
		im.created_at = 0;
	GC_ALLOC_GROW(*out, *g->n + 1, *g->alloc);
	(*out)[(*g->n)++] = im;
	return 0;
}

int aws_xml_images(const char *body, size_t len, struct aws_image **out, size_t *n, size_t *alloc,
		   char **next_token, struct gc_error *err)
{
	struct grow g = { (void **)out, n, alloc };
	size_t n0 = *n;

	if (stream_set(body, len, "imagesSet", image_item, &g, next_token, err) == 0)
		return 0;
	while (*n > n0) /* all or nothing */
		aws_image_release(&(*out)[--*n]);
	return -1;
}

static unsigned uint_at(xmlNodePtr n, const char *p)
{
	char *s = text(n, p);
	uint64_t v = 0;

	if (!s || gc_parse_u64(s, UINT32_MAX, &v) != 0)
		v = 0;
	free(s);
	return (unsigned)v;
}

static int type_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct grow *g = ctx;
	struct gc_type_facts **out = (struct gc_type_facts **)g->out;
	struct gc_type_facts f;

	memset(&f, 0, sizeof(f));
	text_into(it, "instanceType", f.name, sizeof(f.name));
	if (!f.name[0])
		return gc_error_set(err, GC_EBADRESPONSE,
				    "an item of instanceTypeSet has no instanceType");
	f.vcpus = uint_at(it, "vCpuInfo/defaultVCpus");
	f.memory_mib = uint_at(it, "memoryInfo/sizeInMiB");
	f.rdma_interfaces = uint_at(it, "networkInfo/efaInfo/maximumEfaInterfaces");
	/* one item per GPU model; a type with two models would sum their counts */
	for (xmlNodePtr gpu = child(path(it, "gpuInfo/gpus"), "item"); gpu; gpu = gpu->next) {
		if (!is(gpu, "item"))
			continue;
		f.gpus += uint_at(gpu, "count");
		if (!f.gpu_model[0]) {
			text_into(gpu, "name", f.gpu_model, sizeof(f.gpu_model));
			f.gpu_memory_mib = uint_at(gpu, "memoryInfo/sizeInMiB");
		}
	}
	GC_ALLOC_GROW(*out, *g->n + 1, *g->alloc);
	(*out)[(*g->n)++] = f;
	return 0;
}

int aws_xml_instance_types(const char *body, size_t len, struct gc_type_facts **out, size_t *n,
			   size_t *alloc, char **next_token, struct gc_error *err)
{
	struct grow g = { (void **)out, n, alloc };
	size_t n0 = *n;

	if (stream_set(body, len, "instanceTypeSet", type_item, &g, next_token, err) == 0)
		return 0;
	*n = n0; /* all or nothing; the facts own no memory */
	return -1;
}

static int spot_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct grow *g = ctx;
	struct aws_spot_price **out = (struct aws_spot_price **)g->out;
	struct aws_spot_price sp;
	char *price, *when;

	(void)err;
	memset(&sp, 0, sizeof(sp));
	sp.zone = text(it, "availabilityZone");
	price = text(it, "spotPrice");
	when = text(it, "timestamp");
	if (!sp.zone || !price || gc_parse_double(price, &sp.price) != 0 || sp.price < 0 || !when ||
	    aws_parse_time(when, &sp.at) != 0) {
		free(sp.zone);
		free(price);
		free(when);
		return 0; /* a record we cannot read is no price at all */
	}
	free(price);
	free(when);
	GC_ALLOC_GROW(*out, *g->n + 1, *g->alloc);
	(*out)[(*g->n)++] = sp;
	return 0;
}

int aws_xml_spot_prices(const char *body, size_t len, struct aws_spot_price **out, size_t *n,
			size_t *alloc, char **next_token, struct gc_error *err)
{
	struct grow g = { (void **)out, n, alloc };
	size_t n0 = *n;

	if (stream_set(body, len, "spotPriceHistorySet", spot_item, &g, next_token, err) == 0)
		return 0;
	while (*n > n0) /* all or nothing */
		free((*out)[--*n].zone);
	return -1;
}

/* The text of one element of each item, appended to a string array; an item without it
 * is a broken answer. */
struct names {
	const char *set;
	const char *name;
	char ***out;
	size_t *n, alloc;
};

static int name_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct names *nm = ctx;
	char *s = text(it, nm->name);

	if (!s || !*s) {
		free(s);
		return gc_error_set(err, GC_EBADRESPONSE, "an item of %s has no %s", nm->set,
				    nm->name);
	}
	GC_ALLOC_GROW(*nm->out, *nm->n + 1, nm->alloc);
	(*nm->out)[(*nm->n)++] = s;
	return 0;
}

static int names(const char *body, size_t len, const char *set, const char *name, char ***out,
		 size_t *n, char **next_token, struct gc_error *err)
{
	struct names nm = { set, name, out, n, *n };
	size_t n0 = *n;

	if (stream_set(body, len, set, name_item, &nm, next_token, err) == 0)
		return 0;
	while (*n > n0) /* all or nothing */
		free((*out)[--*n]);
	return -1;
}

int aws_xml_regions(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err)
{
	return names(body, len, "regionInfo", "regionName", out, n, NULL, err);
}

int aws_xml_zones(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err)
{
	return names(body, len, "availabilityZoneInfo", "zoneName", out, n, NULL, err);
}

int aws_xml_offerings(const char *body, size_t len, char ***out, size_t *n, char **next_token,
		      struct gc_error *err)
{
	return names(body, len, "instanceTypeOfferingSet", "location", out, n, next_token, err);
}

int aws_xml_offering_types(const char *body, size_t len, char ***out, size_t *n,
			   struct gc_error *err)
{
	return names(body, len, "instanceTypeOfferingSet", "instanceType", out, n, NULL, err);
}

int aws_xml_vpcs(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err)
{
	return names(body, len, "vpcSet", "vpcId", out, n, NULL, err);
}

struct subnets {
	const char *const *ids;
	size_t n;
	struct gc_subnet_facts *out;
};

static int subnet_item(xmlNodePtr it, void *ctx, struct gc_error *err)
{
	struct subnets *sn = ctx;
	char id[64];

	text_into(it, "subnetId", id, sizeof(id));
	if (!*id)
		return gc_error_set(err, GC_EBADRESPONSE, "an item of subnetSet has no subnetId");
	for (size_t i = 0; i < sn->n; i++) {
		if (strcmp(sn->ids[i], id) != 0)
			continue;
		sn->out[i].found = true;
		text_into(it, "vpcId", sn->out[i].vpc, sizeof(sn->out[i].vpc));
		text_into(it, "availabilityZone", sn->out[i].zone, sizeof(sn->out[i].zone));
	}
	return 0;
}

int aws_xml_subnets(const char *body, size_t len, const char *const *ids, size_t n,
		    struct gc_subnet_facts *out, struct gc_error *err)
{
	struct subnets sn = { ids, n, out };

	return stream_set(body, len, "subnetSet", subnet_item, &sn, NULL, err);
}
