/*
 * hostile.c: hostile answers (hostile.h). The replacing modes write a whole document
 * of their own; the distorting modes rewrite what the action rendered: EC2's XML as
 * text (it is the emulator's own, regular output), JSON as a tree. What differs
 * between the clouds comes from the frontend's struct sim_hostile_style.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/alloc.h"
#include "sim/hostile.h"
#include "sim/sim.h"

#define EC2_NS		"http://ec2.amazonaws.com/doc/2016-11-15/"
#define HUGE_TOTAL	1000000000
#define HUGE_BODY_BYTES (17u << 20) /* past the clients' 16 MiB cap */
#define SLOW_BODY_MS	500
#define XML_DECL	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
#define HOSTILE_REQUEST "00000000-0000-4000-8000-0000000000%02u"
#define HTML_PAGE                                                                           \
	"<!DOCTYPE html>\n<html><head><title>%d Bad Gateway</title></head>\n<body><h1>Bad " \
	"Gateway</h1><p>The proxy received an invalid response from an upstream "           \
	"server.</p></body></html>\n"

static const char *const names[] = {
	[SIM_HOSTILE_ENDLESS_TOKEN] = "endless-token",
	[SIM_HOSTILE_REPEAT_TOKEN] = "repeat-token",
	[SIM_HOSTILE_EMPTY_PAGE_TOKEN] = "empty-page-token",
	[SIM_HOSTILE_HUGE_TOTAL] = "huge-total",
	[SIM_HOSTILE_EMPTY_ENVELOPE] = "empty-envelope",
	[SIM_HOSTILE_MISSING_FIELDS] = "missing-fields",
	[SIM_HOSTILE_WRONG_DOCUMENT] = "wrong-document",
	[SIM_HOSTILE_HTML] = "html",
	[SIM_HOSTILE_HUGE_BODY] = "huge-body",
	[SIM_HOSTILE_SLOW_BODY] = "slow-body",
	[SIM_HOSTILE_ESCAPE_SEQUENCES] = "escape-sequences",
	[SIM_HOSTILE_ESCAPE_TAGS] = "escape-tags",
	[SIM_HOSTILE_DUPLICATE_IDS] = "duplicate-ids",
};
#define NMODES (sizeof(names) / sizeof(names[0]))

static atomic_uint token_serial;

int sim_hostile_parse(const char *name, enum sim_hostile *out)
{
	for (size_t i = 1; i < NMODES; i++) {
		if (!strcmp(name, names[i])) {
			*out = (enum sim_hostile)i;
			return 0;
		}
	}
	return -1;
}

const char *sim_hostile_name(enum sim_hostile m)
{
	return m > SIM_HOSTILE_NONE && (size_t)m < NMODES ? names[m] : "?";
}

const char *sim_hostile_names(void)
{
	return "endless-token, repeat-token, empty-page-token, huge-total, empty-envelope, "
	       "missing-fields, wrong-document, html, huge-body, slow-body, escape-sequences, "
	       "escape-tags, duplicate-ids";
}

bool sim_hostile_applies(enum sim_hostile m)
{
	switch (m) {
	case SIM_HOSTILE_EMPTY_ENVELOPE:
	case SIM_HOSTILE_WRONG_DOCUMENT:
	case SIM_HOSTILE_HTML:
	case SIM_HOSTILE_HUGE_BODY:
	case SIM_HOSTILE_ESCAPE_SEQUENCES: return false;
	default: return true;
	}
}

static void set_body(struct sim_resp *resp, const char *text)
{
	gc_buf_reset(&resp->body);
	(void)gc_buf_addstr(&resp->body, text);
}

bool sim_hostile_token(const char *token)
{
	return token && !strncmp(token, "hostile-", 8);
}

static void fresh_token(char out[48])
{
	snprintf(out, 48, "hostile-%u", atomic_fetch_add(&token_serial, 1) + 1);
}

/* --- EC2: XML as text ------------------------------------------------------------------- */

/* Replaces n bytes at `at` of the NUL-ended *s with ins. */
static void splice(char **s, size_t at, size_t n, const char *ins, size_t ins_len)
{
	size_t len = strlen(*s);
	char *out = gc_xmalloc(len - n + ins_len + 1);

	memcpy(out, *s, at);
	memcpy(out + at, ins, ins_len);
	memcpy(out + at + ins_len, *s + at + n, len - at - n + 1);
	free(*s);
	*s = out;
}

/* The end (past its close tag) of the element named `name` that opens at `at`, balanced
 * against nested elements of the same name; 0 when unbalanced. */
static size_t element_end(const char *s, size_t at, const char *name)
{
	char open[72], close[72];
	size_t depth = 0, i = at;

	snprintf(open, sizeof(open), "<%s>", name);
	snprintf(close, sizeof(close), "</%s>", name);
	while (s[i]) {
		if (!strncmp(s + i, open, strlen(open))) {
			depth++;
			i += strlen(open);
		} else if (!strncmp(s + i, close, strlen(close))) {
			i += strlen(close);
			if (--depth == 0)
				return i;
		} else {
			i++;
		}
	}
	return 0;
}

/* Removes every <name>...</name> and <name/>. */
static void xml_remove(char **s, const char *name)
{
	char open[72], empty[72];
	const char *p;

	snprintf(open, sizeof(open), "<%s>", name);
	snprintf(empty, sizeof(empty), "<%s/>", name);
	while ((p = strstr(*s, open))) {
		size_t at = (size_t)(p - *s), end = element_end(*s, at, name);

		if (!end)
			break;
		splice(s, at, end - at, "", 0);
	}
	while ((p = strstr(*s, empty)))
		splice(s, (size_t)(p - *s), strlen(empty), "", 0);
}

/* Sets the root's nextToken to token (an existing one is replaced). */
static void xml_set_token(char **s, const char *token)
{
	char el[96];
	const char *end;

	xml_remove(s, "nextToken");
	end = strrchr(*s, '<');
	if (!end || end[1] != '/')
		return;
	snprintf(el, sizeof(el), "<nextToken>%s</nextToken>", token);
	splice(s, (size_t)(end - *s), 0, el, strlen(el));
}

/* The first list's items: removed (empty), or the first instance (the first item when
 * there is none) doubled (duplicate). */
static void xml_first_list(char **s, bool duplicate)
{
	const char *inst = strstr(*s, "<item><instanceId>");
	const char *p = duplicate && inst ? inst : strstr(*s, "<item>");
	size_t at, end;

	if (!p)
		return;
	at = (size_t)(p - *s);
	if (duplicate) {
		char *copy;

		end = element_end(*s, at, "item");
		if (!end)
			return;
		copy = gc_xstrndup(*s + at, end - at);
		splice(s, end, 0, copy, end - at);
		free(copy);
		return;
	}
	while (!strncmp(*s + at, "<item>", 6) && (end = element_end(*s, at, "item")))
		splice(s, at, end - at, "", 0);
}

/* Every <value> (EC2's tag values) becomes SIM_HOSTILE_TEXT. */
static void xml_escape_values(char **s)
{
	size_t from = 0;
	const char *p;

	while ((p = strstr(*s + from, "<value>"))) {
		size_t at = (size_t)(p - *s) + 7;
		const char *close = strstr(*s + at, "</value>");

		if (!close)
			return;
		splice(s, at, (size_t)(close - *s) - at, SIM_HOSTILE_TEXT,
		       strlen(SIM_HOSTILE_TEXT));
		from = at + strlen(SIM_HOSTILE_TEXT) + 8;
	}
}

static void ec2_distort(enum sim_hostile m, struct sim_resp *resp)
{
	static const char *const required[] = {
		"instanceId",	 "instanceState", "tagSet",	   "groupId",
		"groupName",	 "keyName",	  "keyPairId",	   "keyFingerprint",
		"imageId",	 "instanceType",  "ipPermissions", "privateIpAddress",
		"reservationId", "currentState",  "nextToken",
	};
	char *s = gc_xstrndup(resp->body.data ? resp->body.data : "", resp->body.len);
	char token[48];

	switch (m) {
	case SIM_HOSTILE_ENDLESS_TOKEN:
	case SIM_HOSTILE_HUGE_TOTAL: /* EC2 has no total: its nearest is a page that never ends */
		fresh_token(token);
		xml_set_token(&s, token);
		break;
	case SIM_HOSTILE_REPEAT_TOKEN: xml_set_token(&s, "hostile-repeat"); break;
	case SIM_HOSTILE_EMPTY_PAGE_TOKEN:
		fresh_token(token);
		xml_first_list(&s, false);
		xml_set_token(&s, token);
		break;
	case SIM_HOSTILE_MISSING_FIELDS:
		for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
			xml_remove(&s, required[i]);
		break;
	case SIM_HOSTILE_ESCAPE_TAGS: xml_escape_values(&s); break;
	case SIM_HOSTILE_DUPLICATE_IDS: xml_first_list(&s, true); break;
	default: break;
	}
	set_body(resp, s);
	free(s);
}

static void ec2_replace(const struct sim_hostile_style *st, enum sim_hostile m, const char *action,
			struct sim_resp *resp)
{
	struct gc_buf *b = &resp->body;

	gc_buf_reset(b);
	switch (m) {
	case SIM_HOSTILE_EMPTY_ENVELOPE:
		gc_buf_addf(b, XML_DECL "<%sResponse xmlns=\"" EC2_NS "\"/>\n", action);
		break;
	case SIM_HOSTILE_HUGE_BODY:
		gc_buf_addf(b,
			    XML_DECL "<%sResponse xmlns=\"" EC2_NS "\"><requestId>" HOSTILE_REQUEST
				     "</requestId><padding>",
			    action, 2u);
		break;
	case SIM_HOSTILE_ESCAPE_SEQUENCES:
		resp->status = st->error_status;
		snprintf(resp->error_code, sizeof(resp->error_code), "%s", st->error_code);
		gc_buf_addf(b,
			    XML_DECL "<Response><Errors><Error><Code>%s</Code><Message>%s</Message>"
				     "</Error></Errors><RequestID>" HOSTILE_REQUEST
				     "</RequestID></Response>\n",
			    st->error_code, SIM_HOSTILE_TEXT, 3u);
		break;
	default: break;
	}
}

/* --- ECS and CVM: JSON ------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* The answer's first list of objects: CVM's "InstanceSet": [...], ECS's "Instances":
 * {"Instance": [...]}. */
static json_t *first_list(json_t *o)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		if (json_is_array(v) && json_is_object(json_array_get(v, 0)))
			return v;
		if (json_is_object(v) && json_object_size(v) == 1) {
			json_t *inner = json_object_iter_value(json_object_iter(v));

			if (json_is_array(inner))
				return inner;
		}
	}
	json_object_foreach(o, k, v)
	{
		if (json_is_array(v))
			return v;
	}
	return NULL;
}

/* Drops the fields a reader relies on from an item: ids, states, names, tags. */
static void strip_required(json_t *item)
{
	static const char *const suffixes[] = { "Id",	"Ids",	"State", "Status",
						"Name", "Tags", "TagSet" };
	const char *k;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(item, tmp, k, v)
	{
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
			if (ends_with(k, suffixes[i])) {
				json_object_del(item, k);
				break;
			}
		}
	}
}

/* Every tag value (Value, TagValue) and instance name becomes SIM_HOSTILE_TEXT. */
static void escape_tags(json_t *v)
{
	const char *k;
	json_t *child;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, child) escape_tags(child);
		return;
	}
	if (!json_is_object(v))
		return;
	json_object_foreach(v, k, child)
	{
		if (json_is_string(child) &&
		    (!strcmp(k, "Value") || !strcmp(k, "TagValue") || !strcmp(k, "InstanceName")))
			json_object_set_new(v, k, json_string(SIM_HOSTILE_TEXT));
		else
			escape_tags(child);
	}
}

/* Pagination in the cloud's terms: ECS has NextToken, CVM only Offset and TotalCount. */
static void json_token(const struct sim_hostile_style *st, json_t *doc, const char *token)
{
	if (st->next_token)
		json_object_set_new(doc, st->next_token, json_string(token));
	else
		json_object_set_new(doc, "TotalCount", json_integer(HUGE_TOTAL));
}

static void json_distort(const struct sim_hostile_style *st, enum sim_hostile m,
			 struct sim_resp *resp)
{
	json_t *root = json_loadb(resp->body.data ? resp->body.data : "", resp->body.len, 0, NULL);
	json_t *doc = st->envelope ? json_object_get(root, st->envelope) : root;
	json_t *list;
	char token[48];
	char *text;
	size_t i;
	json_t *item;

	if (!json_is_object(doc))
		goto out;
	list = first_list(doc);
	switch (m) {
	case SIM_HOSTILE_ENDLESS_TOKEN:
		fresh_token(token);
		json_token(st, doc, token);
		break;
	case SIM_HOSTILE_REPEAT_TOKEN: json_token(st, doc, "hostile-repeat"); break;
	case SIM_HOSTILE_EMPTY_PAGE_TOKEN:
		fresh_token(token);
		if (list)
			json_array_clear(list);
		json_token(st, doc, token);
		break;
	case SIM_HOSTILE_HUGE_TOTAL:
		json_object_set_new(doc, "TotalCount", json_integer(HUGE_TOTAL));
		break;
	case SIM_HOSTILE_MISSING_FIELDS:
		json_object_del(doc, "TotalCount");
		if (st->next_token)
			json_object_del(doc, st->next_token);
		json_array_foreach(list, i, item) strip_required(item);
		break;
	case SIM_HOSTILE_ESCAPE_TAGS: escape_tags(doc); break;
	case SIM_HOSTILE_DUPLICATE_IDS:
		if (json_array_size(list))
			json_array_append_new(list, json_deep_copy(json_array_get(list, 0)));
		break;
	default: break;
	}
	text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text)
		set_body(resp, text);
	free(text);
out:
	json_decref(root);
}

static void json_replace(const struct sim_hostile_style *st, enum sim_hostile m,
			 struct sim_resp *resp)
{
	json_t *doc = NULL;
	char rid[40];
	char *text;

	snprintf(rid, sizeof(rid), HOSTILE_REQUEST, 4u);
	switch (m) {
	case SIM_HOSTILE_EMPTY_ENVELOPE: doc = json_object(); break;
	case SIM_HOSTILE_HUGE_BODY:
		/* written by hand: the padding string is never closed */
		gc_buf_reset(&resp->body);
		gc_buf_addf(&resp->body, "{%s%s%s\"RequestId\":\"%s\",\"Padding\":\"",
			    st->envelope ? "\"" : "", st->envelope ? st->envelope : "",
			    st->envelope ? "\":{" : "", rid);
		return;
	case SIM_HOSTILE_ESCAPE_SEQUENCES:
		resp->status = st->error_status;
		snprintf(resp->error_code, sizeof(resp->error_code), "%s", st->error_code);
		if (st->envelope)
			doc = json_pack("{s:{s:s, s:s}, s:s}", "Error", "Code", st->error_code,
					"Message", SIM_HOSTILE_TEXT, "RequestId", rid);
		else
			doc = json_pack("{s:s, s:s, s:s}", "RequestId", rid, "Code", st->error_code,
					"Message", SIM_HOSTILE_TEXT);
		break;
	default: return;
	}
	if (st->envelope)
		doc = json_pack("{s:o}", st->envelope, doc);
	text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text)
		set_body(resp, text);
	free(text);
	json_decref(doc);
}

/* --- the entry point -------------------------------------------------------------------- */

void sim_hostile_answer(const struct sim_hostile_style *st, const char *action,
			const struct sim_fault_hit *hit, struct sim_resp *resp)
{
	enum sim_hostile m = hit->hostile;
	char page[512];

	if (hit->kind != SIM_FAULT_HOSTILE || m == SIM_HOSTILE_NONE)
		return;
	resp->drop = false;
	switch (m) {
	case SIM_HOSTILE_HTML:
		resp->status = hit->status ? (int)hit->status : 200;
		resp->content_type = "text/html; charset=utf-8";
		resp->error_code[0] = '\0';
		snprintf(page, sizeof(page), HTML_PAGE, resp->status == 200 ? 502 : resp->status);
		set_body(resp, page);
		return;
	case SIM_HOSTILE_SLOW_BODY:
		resp->trickle_ms = hit->delay_ms ? hit->delay_ms : SLOW_BODY_MS;
		return;
	case SIM_HOSTILE_HUGE_BODY:
		resp->stream_bytes = hit->bytes ? hit->bytes : HUGE_BODY_BYTES;
		break;
	default: break;
	}
	resp->content_type = st->content_type;
	if (m == SIM_HOSTILE_WRONG_DOCUMENT) {
		resp->status = 200;
		resp->error_code[0] = '\0';
		set_body(resp,
			 !strcmp(action, "DescribeKeyPairs") ? st->wrong_document_keys
							     : st->wrong_document);
	} else if (!sim_hostile_applies(m)) {
		resp->status = 200;
		resp->error_code[0] = '\0';
		if (st->xml)
			ec2_replace(st, m, action, resp);
		else
			json_replace(st, m, resp);
	} else if (st->xml) {
		ec2_distort(m, resp);
	} else {
		json_distort(st, m, resp);
	}
}
