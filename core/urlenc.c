/*
 * urlenc.c: RFC 3986 percent-encoding and decoding, and the name/value list the
 * request signers canonicalise (see urlenc.h). Every signature the three clouds check
 * is computed over text this file produces, so the rules here are the strict ones:
 * upper-case hex, '~' kept, nothing but the unreserved set left raw.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/urlenc.h"

static const char hexdigits[] = "0123456789ABCDEF";

/* Whether c is in RFC 3986's unreserved set. */
static bool url_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_' || c == '.' || c == '~';
}

static int encode(struct gc_buf *out, const char *s, size_t len, bool keep_slash)
{
	size_t start = out->len;
	size_t i = 0;

	while (i < len) {
		size_t run = i;
		char esc[3];

		/* copy runs of raw bytes in one append: most parameter text is plain */
		while (run < len &&
		       (url_unreserved((unsigned char)s[run]) || (keep_slash && s[run] == '/')))
			run++;
		if (run > i && gc_buf_add(out, s + i, run - i) < 0)
			goto fail;
		if (run == len)
			break;
		esc[0] = '%';
		esc[1] = hexdigits[(unsigned char)s[run] >> 4];
		esc[2] = hexdigits[(unsigned char)s[run] & 15];
		if (gc_buf_add(out, esc, 3) < 0)
			goto fail;
		i = run + 1;
	}
	return 0;
fail:
	gc_buf_truncate(out, start);
	return -1;
}

int gc_urlenc(struct gc_buf *out, const char *s, size_t len)
{
	return encode(out, s, len, false);
}

int gc_urlenc_str(struct gc_buf *out, const char *s)
{
	return encode(out, s, strlen(s), false);
}

int gc_urlenc_path(struct gc_buf *out, const char *s, size_t len)
{
	return encode(out, s, len, true);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int gc_urldec(struct gc_buf *out, const char *s, size_t len, enum gc_urldec_mode mode,
	      struct gc_error *err)
{
	size_t start = out->len;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '%') {
			/* both digits must be there: i + 2 is the last one */
			int hi = len - i > 2 ? hexval(s[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				gc_buf_truncate(out, start);
				return gc_error_set(err, GC_EINVALID,
						    "malformed percent-escape at offset %zu", i);
			}
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (c == '+' && mode == GC_URLDEC_FORM) {
			c = ' ';
		}
		if (gc_buf_addch(out, c) < 0) {
			gc_buf_truncate(out, start);
			return gc_error_set(err, GC_ETOOBIG, "decoded text is too long");
		}
	}
	return 0;
}

void gc_params_init(struct gc_params *p)
{
	p->items = NULL;
	p->n = 0;
	p->alloc = 0;
}

void gc_params_release(struct gc_params *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->items[i].name);
		free(p->items[i].value);
	}
	free(p->items);
	gc_params_init(p);
}

static void add_take(struct gc_params *p, char *name, char *value)
{
	GC_ALLOC_GROW(p->items, p->n + 1, p->alloc);
	p->items[p->n].name = name;
	p->items[p->n].value = value;
	p->n++;
}

void gc_params_add(struct gc_params *p, const char *name, const char *value)
{
	add_take(p, gc_xstrdup(name), gc_xstrdup(value));
}

void gc_params_add_all(struct gc_params *p, const struct gc_params *src)
{
	for (size_t i = 0; i < src->n; i++)
		gc_params_add(p, src->items[i].name, src->items[i].value);
}

const char *gc_params_get(const struct gc_params *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->items[i].name, name))
			return p->items[i].value;
	return NULL;
}

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

const char *gc_params_get_ci(const struct gc_params *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcasecmp(p->items[i].name, name) == 0) /* ASCII: no setlocale */
			return p->items[i].value;
	return NULL;
}

size_t gc_params_count(const struct gc_params *p, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->items[i].name, name))
			n++;
	return n;
}

size_t gc_params_remove(struct gc_params *p, const char *name)
{
	size_t kept = 0, removed;

	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->items[i].name, name)) {
			free(p->items[i].name);
			free(p->items[i].value);
		} else {
			p->items[kept++] = p->items[i];
		}
	}
	removed = p->n - kept;
	p->n = kept;
	return removed;
}

/* Decodes one side of a pair into a new C string; NUL bytes inside are refused
 * because every consumer treats names and values as C strings. */
static int decode_part(char **out, const char *s, size_t len, enum gc_urldec_mode mode,
		       struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	if (gc_urldec(&b, s, len, mode, err) < 0)
		return -1;
	if (memchr(b.data, '\0', b.len)) {
		gc_buf_release(&b);
		return gc_error_set(err, GC_EINVALID, "parameter holds a NUL byte");
	}
	*out = gc_buf_detach(&b, NULL);
	return 0;
}

int gc_params_parse(struct gc_params *out, const char *text, size_t len, enum gc_urldec_mode mode,
		    struct gc_error *err)
{
	struct gc_params got = GC_PARAMS_INIT;
	const char *end = text + len;
	const char *p = text;

	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		char *name = NULL, *value = NULL;

		if (stop > p) {
			const char *nend = eq ? eq : stop;

			if (decode_part(&name, p, (size_t)(nend - p), mode, err) < 0)
				goto fail;
			if (eq) {
				if (decode_part(&value, eq + 1, (size_t)(stop - eq - 1), mode,
						err) < 0) {
					free(name);
					goto fail;
				}
			} else {
				value = gc_xstrdup("");
			}
			add_take(&got, name, value);
		}
		p = amp ? amp + 1 : end;
	}
	for (size_t i = 0; i < got.n; i++)
		add_take(out, got.items[i].name, got.items[i].value);
	free(got.items);
	return 0;
fail:
	gc_params_release(&got);
	return -1;
}

/*
 * Walks the percent-encoding of a string one output byte at a time, so that two
 * strings can be compared in encoded order without building the encodings.
 */
struct enc_iter {
	const unsigned char *s;
	char pend[2];
	int npend;
};

static int enc_next(struct enc_iter *it)
{
	unsigned char c;

	if (it->npend) {
		char out = it->pend[2 - it->npend];

		it->npend--;
		return (unsigned char)out;
	}
	c = *it->s;
	if (!c)
		return -1;
	it->s++;
	if (url_unreserved(c))
		return c;
	it->pend[0] = hexdigits[c >> 4];
	it->pend[1] = hexdigits[c & 15];
	it->npend = 2;
	return '%';
}

static int enc_cmp(const char *a, const char *b)
{
	struct enc_iter ia = { (const unsigned char *)a, { 0, 0 }, 0 };
	struct enc_iter ib = { (const unsigned char *)b, { 0, 0 }, 0 };

	for (;;) {
		int ca = enc_next(&ia), cb = enc_next(&ib);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			return 0;
	}
}

struct sort_item {
	const struct gc_param *param;
	size_t index;
};

static int sort_item_cmp(const void *va, const void *vb)
{
	const struct sort_item *a = va, *b = vb;
	int c = enc_cmp(a->param->name, b->param->name);

	if (!c)
		c = enc_cmp(a->param->value, b->param->value);
	if (!c)
		c = a->index < b->index ? -1 : a->index > b->index;
	return c;
}

/* A sorted view of p; the caller frees it. */
static struct sort_item *sorted_view(const struct gc_params *p)
{
	struct sort_item *v = gc_xreallocarray(NULL, p->n ? p->n : 1, sizeof(*v));

	for (size_t i = 0; i < p->n; i++) {
		v[i].param = &p->items[i];
		v[i].index = i;
	}
	if (p->n > 1)
		qsort(v, p->n, sizeof(*v), sort_item_cmp);
	return v;
}

void gc_params_sort(struct gc_params *p)
{
	struct sort_item *v;
	struct gc_param *items;

	if (p->n < 2)
		return;
	v = sorted_view(p);
	items = gc_xreallocarray(NULL, p->n, sizeof(*items));
	for (size_t i = 0; i < p->n; i++)
		items[i] = *v[i].param;
	free(p->items);
	p->items = items;
	p->alloc = p->n;
	free(v);
}

static int encode_pair(struct gc_buf *out, const struct gc_param *param, bool first)
{
	if (!first && gc_buf_addch(out, '&') < 0)
		return -1;
	if (gc_urlenc_str(out, param->name) < 0 || gc_buf_addch(out, '=') < 0 ||
	    gc_urlenc_str(out, param->value) < 0)
		return -1;
	return 0;
}

int gc_params_encode(struct gc_buf *out, const struct gc_params *p)
{
	size_t start = out->len;

	for (size_t i = 0; i < p->n; i++) {
		if (encode_pair(out, &p->items[i], i == 0) < 0) {
			gc_buf_truncate(out, start);
			return -1;
		}
	}
	return 0;
}

int gc_params_encode_sorted(struct gc_buf *out, const struct gc_params *p)
{
	size_t start = out->len;
	struct sort_item *v = sorted_view(p);
	int ret = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (encode_pair(out, v[i].param, i == 0) < 0) {
			gc_buf_truncate(out, start);
			ret = -1;
			break;
		}
	}
	free(v);
	return ret;
}

int gc_sign_request_query(struct gc_params *out, const struct gc_sign_request *req,
			  struct gc_error *err)
{
	if (req->query) {
		gc_params_add_all(out, req->query);
		return 0;
	}
	if (req->query_string)
		return gc_params_parse(out, req->query_string, strlen(req->query_string),
				       GC_URLDEC_RFC3986, err);
	return 0;
}

static bool is_token_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		(c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int param_name_cmp(const void *va, const void *vb)
{
	const struct gc_param *a = va, *b = vb;

	return strcmp(a->name, b->name);
}

/* Adds one header to the merged list, lower-casing its name; a repeat is joined. */
static int merge_header(struct gc_params *out, const char *name, const char *value,
			struct gc_error *err)
{
	char *lower;

	if (!*name)
		return gc_error_set(err, GC_EINVALID, "empty header name");
	lower = gc_xstrdup(name);
	for (char *c = lower; *c; c++) {
		if (!is_token_char((unsigned char)*c)) {
			free(lower);
			return gc_error_set(err, GC_EINVALID, "bad header name '%s'", name);
		}
		*c = (char)ascii_lower((unsigned char)*c);
	}
	for (size_t i = 0; i < out->n; i++) {
		if (!strcmp(out->items[i].name, lower)) {
			/* each value trimmed before the join, as SigV4 specifies: "a, b" is a,b */
			size_t n = strlen(out->items[i].value), m = strlen(value);
			const char *a = out->items[i].value, *b = value;
			char *joined;

			while (n && is_blank(a[n - 1]))
				n--;
			while (m && is_blank(*b)) {
				b++;
				m--;
			}
			joined = gc_xasprintf("%.*s,%s", (int)n, a, b);

			free(out->items[i].value);
			out->items[i].value = joined;
			free(lower);
			return 0;
		}
	}
	add_take(out, lower, gc_xstrdup(value));
	return 0;
}

int gc_sign_request_headers(struct gc_params *out, const struct gc_sign_request *req,
			    const struct gc_params *extra, struct gc_error *err)
{
	const struct gc_params *lists[2] = { req->headers, extra };

	for (size_t l = 0; l < 2; l++) {
		if (!lists[l])
			continue;
		for (size_t i = 0; i < lists[l]->n; i++) {
			const struct gc_param *h = &lists[l]->items[i];

			if (merge_header(out, h->name, h->value, err) < 0)
				goto fail;
		}
	}
	if (!gc_params_get(out, "host")) {
		if (!req->host || !*req->host) {
			gc_error_set(err, GC_EINVALID, "request has no host");
			goto fail;
		}
		gc_params_add(out, "host", req->host);
	}
	qsort(out->items, out->n, sizeof(*out->items), param_name_cmp);
	return 0;
fail:
	gc_params_release(out);
	return -1;
}

static int add_normalised(struct gc_buf *b, const char *v, enum gc_hdr_norm norm)
{
	const char *end = v + strlen(v);

	while (v < end && is_blank(*v))
		v++;
	while (end > v && is_blank(end[-1]))
		end--;
	for (; v < end; v++) {
		char c = *v;

		if (norm == GC_HDR_COLLAPSE && is_blank(c)) {
			while (v + 1 < end && is_blank(v[1]))
				v++;
			c = ' ';
		} else if (norm == GC_HDR_LOWER) {
			c = (char)ascii_lower((unsigned char)c);
		}
		if (gc_buf_addch(b, c) < 0)
			return -1;
	}
	return 0;
}

static int add_header_line(struct gc_buf *canon, struct gc_buf *signed_list,
			   const struct gc_param *h, enum gc_hdr_norm norm)
{
	if (signed_list->len && gc_buf_addch(signed_list, ';') < 0)
		return -1;
	if (gc_buf_addstr(signed_list, h->name) < 0)
		return -1;
	if (gc_buf_addstr(canon, h->name) < 0 || gc_buf_addch(canon, ':') < 0 ||
	    add_normalised(canon, h->value, norm) < 0 || gc_buf_addch(canon, '\n') < 0)
		return -1;
	return 0;
}

int gc_sign_canonical_headers(struct gc_buf *canon, struct gc_buf *signed_list,
			      const struct gc_params *headers, const char *only,
			      bool (*want)(const char *name, const void *ctx), const void *ctx,
			      enum gc_hdr_norm norm, struct gc_error *err)
{
	size_t canon_start = canon->len, list_start = signed_list->len;

	if (!only) {
		for (size_t i = 0; i < headers->n; i++) {
			if (!want(headers->items[i].name, ctx))
				continue;
			if (add_header_line(canon, signed_list, &headers->items[i], norm) < 0)
				goto toobig;
		}
		return 0;
	}
	for (const char *p = only; *p;) {
		const char *semi = strchr(p, ';');
		size_t n = semi ? (size_t)(semi - p) : strlen(p);
		const struct gc_param *found = NULL;

		/* the list may be in any case */
		for (size_t i = 0; i < headers->n && !found; i++)
			if (!strncasecmp(p, headers->items[i].name, n) &&
			    !headers->items[i].name[n])
				found = &headers->items[i];
		if (!found) {
			gc_buf_truncate(canon, canon_start);
			gc_buf_truncate(signed_list, list_start);
			return gc_error_set(err, GC_EINVALID,
					    "signed header '%.*s' is not in the request",
					    (int)(n > 200 ? 200 : n), p);
		}
		if (add_header_line(canon, signed_list, found, norm) < 0)
			goto toobig;
		p = semi ? semi + 1 : p + n;
	}
	if (signed_list->len == list_start)
		return gc_error_set(err, GC_EINVALID, "empty signed header list");
	return 0;
toobig:
	gc_buf_truncate(canon, canon_start);
	gc_buf_truncate(signed_list, list_start);
	return gc_error_set(err, GC_ETOOBIG, "canonical headers are too long");
}

bool gc_sign_equal(const char *a, const char *b)
{
	size_t n = strlen(a);
	unsigned char diff = 0;

	/* lengths are public (a hex or base64 digest has a fixed size) */
	if (n != strlen(b))
		return false;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

void gc_sign_auth_release(struct gc_sign_auth *a)
{
	if (!a)
		return;
	free(a->credential);
	free(a->signed_headers);
	free(a->signature);
	a->credential = a->signed_headers = a->signature = NULL;
}

int gc_sign_parse_authorization(struct gc_sign_auth *out, const char *value, const char *algorithm,
				struct gc_error *err)
{
	struct gc_sign_auth got = { NULL, NULL, NULL };
	size_t alen = strlen(algorithm);
	const char *p;

	if (strncmp(value, algorithm, alen) || value[alen] != ' ')
		return gc_error_set(err, GC_EAUTH, "authorization is not %s", algorithm);
	p = value + alen;
	while (*p) {
		const char *comma, *eq;
		char **slot;
		size_t klen;

		while (*p == ' ')
			p++;
		comma = strchr(p, ',');
		if (!comma)
			comma = p + strlen(p);
		eq = memchr(p, '=', (size_t)(comma - p));
		klen = eq ? (size_t)(eq - p) : 0;
		if (klen == 10 && !strncmp(p, "Credential", klen))
			slot = &got.credential;
		else if (klen == 13 && !strncmp(p, "SignedHeaders", klen))
			slot = &got.signed_headers;
		else if (klen == 9 && !strncmp(p, "Signature", klen))
			slot = &got.signature;
		else {
			gc_error_set(err, GC_EAUTH, "unexpected part '%.*s' in authorization",
				     (int)((size_t)(comma - p) > 64 ? 64 : (size_t)(comma - p)), p);
			goto fail;
		}
		if (*slot || eq + 1 == comma) {
			gc_error_set(err, GC_EAUTH, "repeated or empty '%.*s' in authorization",
				     (int)klen, p);
			goto fail;
		}
		*slot = gc_xstrndup(eq + 1, (size_t)(comma - eq - 1));
		p = *comma ? comma + 1 : comma;
	}
	if (!got.credential || !got.signed_headers || !got.signature) {
		const char *missing = "Signature";

		if (!got.credential)
			missing = "Credential";
		else if (!got.signed_headers)
			missing = "SignedHeaders";
		gc_error_set(err, GC_EAUTH, "authorization lacks %s", missing);
		goto fail;
	}
	*out = got;
	return 0;
fail:
	gc_sign_auth_release(&got);
	return -1;
}

void gc_sign_result_init(struct gc_sign_result *r)
{
	r->payload_hash[0] = '\0';
	r->signature[0] = '\0';
	r->date[0] = '\0';
	gc_buf_init(&r->canonical_request, 0);
	gc_buf_init(&r->string_to_sign, 0);
	gc_buf_init(&r->credential_scope, 0);
	gc_buf_init(&r->signed_headers, 0);
	gc_buf_init(&r->authorization, 0);
	gc_params_init(&r->added_headers);
}

void gc_sign_result_release(struct gc_sign_result *r)
{
	if (!r)
		return;
	gc_buf_release(&r->canonical_request);
	gc_buf_release(&r->string_to_sign);
	gc_buf_release(&r->credential_scope);
	gc_buf_release(&r->signed_headers);
	gc_buf_release(&r->authorization);
	gc_params_release(&r->added_headers);
}

int gc_sign_result_give(struct gc_sign_result *debug, struct gc_sign_result *r, int ret)
{
	if (debug) {
		gc_sign_result_release(debug);
		*debug = *r;
	} else {
		gc_sign_result_release(r);
	}
	return ret;
}

bool gc_sign_present(const char *s)
{
	return s && *s;
}
