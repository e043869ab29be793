/*
 * cloudinit.c: builds the #cloud-config user-data of cloudinit.h. Values are written as
 * plain YAML scalars when they can be, else double-quoted with escapes, so a comment in
 * a public key line cannot change the document's meaning.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cloudinit.h"
#include "core/keygen.h"

/* Whether s can stand as a plain YAML scalar as it is. */
static bool yaml_plain(const char *s)
{
	if (!*s || strstr(s, ": ") || strstr(s, " #") || s[strlen(s) - 1] == ' ')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("+/=@._- ", *s)))
			return false;
	return true;
}

/* Appends s as a YAML scalar; nonzero when an append hit the buffer's cap. */
static int scalar(struct gc_buf *b, const char *s)
{
	int bad = 0;

	if (yaml_plain(s))
		return gc_buf_addstr(b, s) != 0;
	bad |= gc_buf_addch(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			bad |= gc_buf_addch(b, '\\');
		bad |= gc_buf_addch(b, *s == '\n' || *s == '\r' || *s == '\t' ? ' ' : *s);
	}
	bad |= gc_buf_addch(b, '"');
	return bad != 0;
}

char *gc_cloud_config(const struct gc_create_request *req)
{
	bool host_key = req->host_key_private && req->host_key_public;
	struct gc_buf b = GC_BUF_INIT(64 << 10);
	int bad = 0;

	if (!req->authorized_key && !host_key)
		return NULL;
	bad |= gc_buf_addstr(&b, "#cloud-config\n");
	if (req->authorized_key) {
		bad |= gc_buf_addstr(&b, "ssh_pwauth: false\nssh_authorized_keys:\n  - ");
		bad |= scalar(&b, req->authorized_key);
		bad |= gc_buf_addch(&b, '\n');
	}
	if (host_key) {
		bad |= gc_buf_addstr(&b,
				     "ssh_deletekeys: true\n"
				     "ssh_genkeytypes: []\n"
				     "ssh_keys:\n"
				     "  ed25519_private: |\n");
		for (const char *line = req->host_key_private, *end; *line;
		     line = *end ? end + 1 : end) {
			end = line + strcspn(line, "\n");
			bad |= gc_buf_addstr(&b, "    ");
			bad |= gc_buf_add(&b, line, (size_t)(end - line));
			bad |= gc_buf_addch(&b, '\n');
		}
		bad |= gc_buf_addstr(&b, "  ed25519_public: ");
		bad |= scalar(&b, req->host_key_public);
		bad |= gc_buf_addch(&b, '\n');
	}
	if (bad) { /* over 64 KiB: no key material is that long; a caller's bug */
		gc_keypair_wipe_buf(&b);
		return NULL;
	}
	return gc_buf_detach(&b, NULL);
}

void gc_cloud_config_free(char *doc)
{
	if (!doc)
		return;
	gc_wipe(doc, strlen(doc));
	free(doc);
}
