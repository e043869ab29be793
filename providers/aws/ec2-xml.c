/*
 * ec2-xml.c: EC2's XML answers (Query API 2016-11-15, WIRE.md §1.4) turned into plain
 * structs with libxml2. Elements are matched by local name along explicit paths of
 * direct children, never by searching the whole tree: a security group's nested
 * ipPermissions/.../groups/item must not be mistaken for the group itself.
 *
 * The bodies are remote input. They arrive capped (AWS_MAX_RESPONSE) and are parsed
 * with network access off and without entity substitution; anything that is not the
 * expected document is GC_EINVALID naming what was missing.
 */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/aws/ec2.h"

static xmlDocPtr parse(const char *body, size_t len, struct gc_error *err)
{
	xmlDocPtr doc;

	if (len == 0 || len > INT_MAX) {
		gc_error_set(err, GC_EINVALID, "empty or oversized XML answer");
		return NULL;
	}
	doc = xmlReadMemory(body, (int)len, "ec2.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc || !xmlDocGetRootElement(doc)) {
		if (doc)
			xmlFreeDoc(doc);
		gc_error_set(err, GC_EINVALID, "the answer is not well-formed XML");
		return NULL;
	}
	return doc;
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

static char *next_token_of(xmlNodePtr root)
{
	char *t = text(root, "nextToken");

	if (t && !*t) {
		free(t);
		return NULL;
	}
	return t;
}

/* "2026-03-14T15:09:27.000Z" or without the fraction, or "+00:00" in place of Z. */
int aws_parse_time(const char *s, int64_t *out)
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

static int one_instance(xmlNodePtr item, struct gc_instance *inst, struct gc_error *err)
{
	char *name, *code, *when, *life;

	inst->id = text(item, "instanceId");
	if (!inst->id || !*inst->id)
		return gc_error_set(err, GC_EINVALID, "an instance item has no instanceId");
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

static int instances_of(xmlNodePtr set, struct gc_instance_list *out, struct gc_error *err)
{
	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		struct gc_instance *inst;

		if (!is(it, "item"))
			continue;
		inst = gc_instance_list_push(out);
		if (one_instance(it, inst, err) != 0) {
			gc_instance_release(inst);
			out->n--;
			return -1;
		}
	}
	return 0;
}

int aws_xml_instances(const char *body, size_t len, struct gc_instance_list *out, char **next_token,
		      struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr root, set;
	struct gc_instance_list got;
	int ret = -1;

	if (next_token)
		*next_token = NULL;
	if (!doc)
		return -1;
	gc_instance_list_init(&got);
	root = xmlDocGetRootElement(doc);
	if ((set = child(root, "reservationSet"))) {
		for (xmlNodePtr r = set->children; r; r = r->next)
			if (is(r, "item") && instances_of(child(r, "instancesSet"), &got, err) != 0)
				goto out;
	} else if ((set = child(root, "instancesSet"))) {
		if (instances_of(set, &got, err) != 0)
			goto out;
	} else {
		gc_error_set(err, GC_EINVALID, "the answer has no reservationSet or instancesSet");
		goto out;
	}
	if (next_token)
		*next_token = next_token_of(root);
	gc_instance_list_take(out, &got);
	ret = 0;
out:
	gc_instance_list_release(&got);
	xmlFreeDoc(doc);
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

/* Items of the set at set_path into out (all or nothing): id, name and fingerprint from
 * the given element names. */
static int resources(const char *body, size_t len, const char *set_path, const char *id_name,
		     const char *name_name, const char *fpr_name, struct gc_resource_list *out,
		     char **next_token, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr root, set;
	struct gc_resource_list got;
	int ret = -1;

	if (next_token)
		*next_token = NULL;
	if (!doc)
		return -1;
	gc_resource_list_init(&got);
	root = xmlDocGetRootElement(doc);
	set = path(root, set_path);
	if (!set) {
		gc_error_set(err, GC_EINVALID, "the answer has no %s", set_path);
		goto out;
	}
	for (xmlNodePtr it = set->children; it; it = it->next) {
		struct gc_resource *r;
		char *id;

		if (!is(it, "item"))
			continue;
		id = text(it, id_name);
		if (!id || !*id) {
			free(id);
			gc_error_set(err, GC_EINVALID, "an item of %s has no %s", set_path,
				     id_name);
			goto out;
		}
		r = gc_resource_list_push(&got);
		r->id = id;
		r->name = text(it, name_name);
		r->fingerprint = fpr_name ? text(it, fpr_name) : NULL;
		empty_to_null(&r->fingerprint);
		resource_tags(it, r);
	}
	if (next_token)
		*next_token = next_token_of(root);
	for (size_t i = 0; i < got.n; i++)
		*gc_resource_list_push(out) = got.items[i];
	got.n = 0; /* moved: only the array is left to free */
	ret = 0;
out:
	gc_resource_list_release(&got);
	xmlFreeDoc(doc);
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

int aws_xml_keypair_public(const char *body, size_t len, const char *name, char **out_line,
			   char **out_id, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr set;

	*out_line = NULL;
	*out_id = NULL;
	if (!doc)
		return -1;
	set = child(xmlDocGetRootElement(doc), "keySet");
	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		char *n;

		if (!is(it, "item"))
			continue;
		n = text(it, "keyName");
		if (n && strcmp(n, name) == 0) {
			*out_line = text(it, "publicKey");
			*out_id = text(it, "keyPairId");
			free(n);
			break;
		}
		free(n);
	}
	xmlFreeDoc(doc);
	return 0;
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

int aws_xml_images(const char *body, size_t len, struct aws_image **out, size_t *n, size_t *alloc,
		   char **next_token, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr root, set;

	if (next_token)
		*next_token = NULL;
	if (!doc)
		return -1;
	root = xmlDocGetRootElement(doc);
	set = child(root, "imagesSet");
	if (!set) {
		xmlFreeDoc(doc);
		return gc_error_set(err, GC_EINVALID, "the answer has no imagesSet");
	}
	for (xmlNodePtr it = set->children; it; it = it->next) {
		struct aws_image im;

		if (!is(it, "item"))
			continue;
		memset(&im, 0, sizeof(im));
		im.id = text(it, "imageId");
		if (!im.id || !*im.id) {
			aws_image_release(&im);
			continue;
		}
		im.name = text(it, "name");
		im.root_device = text(it, "rootDeviceName");
		im.created = text(it, "creationDate");
		if (!im.created || aws_parse_time(im.created, &im.created_at) != 0)
			im.created_at = 0;
		GC_ALLOC_GROW(*out, *n + 1, *alloc);
		(*out)[(*n)++] = im;
	}
	if (next_token)
		*next_token = next_token_of(root);
	xmlFreeDoc(doc);
	return 0;
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

int aws_xml_instance_types(const char *body, size_t len, struct gc_type_facts **out, size_t *n,
			   size_t *alloc, char **next_token, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr root, set;

	if (next_token)
		*next_token = NULL;
	if (!doc)
		return -1;
	root = xmlDocGetRootElement(doc);
	set = child(root, "instanceTypeSet");
	if (!set) {
		xmlFreeDoc(doc);
		return gc_error_set(err, GC_EINVALID, "the answer has no instanceTypeSet");
	}
	for (xmlNodePtr it = set->children; it; it = it->next) {
		struct gc_type_facts f;

		if (!is(it, "item"))
			continue;
		memset(&f, 0, sizeof(f));
		text_into(it, "instanceType", f.name, sizeof(f.name));
		if (!f.name[0])
			continue;
		f.vcpus = uint_at(it, "vCpuInfo/defaultVCpus");
		f.memory_mib = uint_at(it, "memoryInfo/sizeInMiB");
		/* one item per GPU model; a type with two models would sum their counts */
		for (xmlNodePtr g = child(path(it, "gpuInfo/gpus"), "item"); g; g = g->next) {
			if (!is(g, "item"))
				continue;
			f.gpus += uint_at(g, "count");
			if (!f.gpu_model[0]) {
				text_into(g, "name", f.gpu_model, sizeof(f.gpu_model));
				f.gpu_memory_mib = uint_at(g, "memoryInfo/sizeInMiB");
			}
		}
		GC_ALLOC_GROW(*out, *n + 1, *alloc);
		(*out)[(*n)++] = f;
	}
	if (next_token)
		*next_token = next_token_of(root);
	xmlFreeDoc(doc);
	return 0;
}

int aws_xml_spot_prices(const char *body, size_t len, struct aws_spot_price **out, size_t *n,
			size_t *alloc, char **next_token, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr root, set;

	if (next_token)
		*next_token = NULL;
	if (!doc)
		return -1;
	root = xmlDocGetRootElement(doc);
	set = child(root, "spotPriceHistorySet");
	if (!set) {
		xmlFreeDoc(doc);
		return gc_error_set(err, GC_EINVALID, "the answer has no spotPriceHistorySet");
	}
	for (xmlNodePtr it = set->children; it; it = it->next) {
		struct aws_spot_price sp;
		char *price, *when;

		if (!is(it, "item"))
			continue;
		memset(&sp, 0, sizeof(sp));
		sp.zone = text(it, "availabilityZone");
		price = text(it, "spotPrice");
		when = text(it, "timestamp");
		if (!sp.zone || !price || gc_parse_double(price, &sp.price) != 0 || sp.price < 0 ||
		    !when || aws_parse_time(when, &sp.at) != 0) {
			free(sp.zone);
			free(price);
			free(when);
			continue; /* a record we cannot read is no price at all */
		}
		free(price);
		free(when);
		GC_ALLOC_GROW(*out, *n + 1, *alloc);
		(*out)[(*n)++] = sp;
	}
	if (next_token)
		*next_token = next_token_of(root);
	xmlFreeDoc(doc);
	return 0;
}

int aws_xml_regions(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr set;
	size_t alloc = *n;

	if (!doc)
		return -1;
	set = child(xmlDocGetRootElement(doc), "regionInfo");
	if (!set) {
		xmlFreeDoc(doc);
		return gc_error_set(err, GC_EINVALID, "the answer has no regionInfo");
	}
	for (xmlNodePtr it = set->children; it; it = it->next) {
		char *r;

		if (!is(it, "item"))
			continue;
		r = text(it, "regionName");
		if (!r || !*r) {
			free(r);
			continue;
		}
		GC_ALLOC_GROW(*out, *n + 1, alloc);
		(*out)[(*n)++] = r;
	}
	xmlFreeDoc(doc);
	return 0;
}

int aws_xml_zones(const char *body, size_t len, char ***out, size_t *n, struct gc_error *err)
{
	xmlDocPtr doc = parse(body, len, err);
	xmlNodePtr set;
	size_t alloc = *n;

	if (!doc)
		return -1;
	set = child(xmlDocGetRootElement(doc), "availabilityZoneInfo");
	if (!set) {
		xmlFreeDoc(doc);
		return gc_error_set(err, GC_EINVALID, "the answer has no availabilityZoneInfo");
	}
	for (xmlNodePtr it = set->children; it; it = it->next) {
		char *z;

		if (!is(it, "item"))
			continue;
		z = text(it, "zoneName");
		if (!z || !*z) {
			free(z);
			continue;
		}
		GC_ALLOC_GROW(*out, *n + 1, alloc);
		(*out)[(*n)++] = z;
	}
	xmlFreeDoc(doc);
	return 0;
}
