/*
 * log.c: levelled logging through the caller's sink, and the one redactor that every
 * line passes through on its way there (see log.h). What is masked, how the mask works
 * and how to add a rule: docs/internals/logging.md. The rules err towards masking too
 * much: a log that hides a harmless value costs a little debugging, one that shows a key
 * costs the account.
 */
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/provider.h"

#define SECRET_MIN   4 /* shorter values would garble ordinary text */
#define B64_CORE_MIN 4 /* shortest base64 fragment of a secret worth masking */
#define FORMAT_STACK 1024

/*
 * Names whose values are masked. Matching ignores case and, unless `strict`, does not look
 * at what precedes the name, so "MasterUserPassword" and "TmpSecretKey" are caught by
 * "Password" and "SecretKey". A strict name must start at a non-identifier byte: "Token"
 * is one cloud's session token field, but "NextToken" and "ClientToken" are not secrets.
 * What follows the name decides the form (see mark_named_value), so "PasswordInherit" or
 * "SignatureMethod" are not matches. To add a name, add a line here (or, for a name only
 * one cloud uses, in its facts' secret_names) and a test.
 */
static const struct {
	const char *name;
	bool strict;
} names[] = {
	/* HTTP headers (also caught in other forms) */
	{ "Authorization", false },
	{ "Proxy-Authorization", false },
	/* signing and credentials, as several clouds name them; each cloud's own names are
	 * in its facts (secret_names) */
	{ "Signature", false },
	{ "SecurityToken", false },
	{ "SessionToken", false },
	{ "Token", true },
	{ "SecretKey", false },
	{ "secret_key", false },
	/* things handed to machines */
	{ "Password", false },
	{ "UserData", false }, /* also "userdata": names ignore case */
	{ "user_data", false },
	{ "PrivateKey", false },
	{ "PrivateKeyBody", false },
	{ "KeyMaterial", false },
};

/* ---- the life cycle ---- */

void gc_log_init(struct gc_log *log, enum gc_log_level level, gc_log_sink_fn sink, void *ctx)
{
	log->level = level;
	log->sink = sink;
	log->sink_ctx = ctx;
	log->secrets = NULL;
	log->n_secrets = 0;
	log->alloc_secrets = 0;
	pthread_mutex_init(&log->lock, NULL);
}

void gc_log_release(struct gc_log *log)
{
	if (!log)
		return;
	for (size_t i = 0; i < log->n_secrets; i++) {
		OPENSSL_cleanse(log->secrets[i], strlen(log->secrets[i]));
		free(log->secrets[i]);
	}
	free(log->secrets);
	log->secrets = NULL;
	log->n_secrets = 0;
	log->alloc_secrets = 0;
	pthread_mutex_destroy(&log->lock);
}

/* Adds one form of a secret unless present. Caller holds the lock. */
static void add_form(struct gc_log *log, const char *s, size_t len)
{
	if (len < SECRET_MIN)
		return;
	for (size_t i = 0; i < log->n_secrets; i++)
		if (strlen(log->secrets[i]) == len && !memcmp(log->secrets[i], s, len))
			return;
	GC_ALLOC_GROW(log->secrets, log->n_secrets + 1, log->alloc_secrets);
	log->secrets[log->n_secrets++] = gc_xstrndup(s, len);
}

/*
 * Secrets travel base64-encoded too (user data, basic auth). Inside a longer base64 text
 * a secret may start at any of three byte offsets, and the characters at its edges mix
 * in neighbouring bits; only the characters that depend on secret bits alone are fixed.
 * For offset k, base64 character c covers bits [6c, 6c+6) of the stream, the secret
 * bits [8k, 8k+8len): we keep the characters inside that range.
 */
static void add_base64_forms(struct gc_log *log, const char *s, size_t len)
{
	for (size_t k = 0; k < 3; k++) {
		struct gc_buf raw = GC_BUF_INIT(0), enc = GC_BUF_INIT(0);
		size_t first = (8 * k + 5) / 6, end = (8 * k + 8 * len) / 6;

		gc_buf_add(&raw, "\0\0", k);
		gc_buf_add(&raw, s, len);
		if (gc_base64_encode(&enc, raw.data, raw.len) == 0 && end > first &&
		    end - first >= B64_CORE_MIN && end <= enc.len)
			add_form(log, enc.data + first, end - first);
		OPENSSL_cleanse(raw.data, raw.len);
		OPENSSL_cleanse(enc.data, enc.len);
		gc_buf_release(&raw);
		gc_buf_release(&enc);
	}
}

void gc_log_add_secret(struct gc_log *log, const char *secret)
{
	size_t len;

	if (!log || !secret)
		return;
	len = strlen(secret);
	if (len < SECRET_MIN)
		return;
	pthread_mutex_lock(&log->lock);
	add_form(log, secret, len);
	add_base64_forms(log, secret, len);
	pthread_mutex_unlock(&log->lock);
}

/* ---- the redactor ---- */

struct redactor {
	const char *t;
	size_t n;
	unsigned char *mask; /* 1 where the output shows "***" */
	bool prose;	     /* a message: "name: text" is a sentence, not a header */
};

static void mark(struct redactor *r, size_t from, size_t to)
{
	if (to > r->n)
		to = r->n;
	if (from < to)
		memset(r->mask + from, 1, to - from);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '-';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * How many bytes of t from i spell secret s, each secret byte written either as itself
 * or percent-encoded in either hex case (a space also as '+'), so that one matcher covers
 * the raw value and every URL encoding of it. 0: no match. With `partial`, text that ends
 * in the middle of the secret matches too: a cut message must not show half a key.
 */
static size_t match_secret(const char *t, size_t n, size_t i, const char *s, bool partial)
{
	size_t p = i;

	for (; *s; s++) {
		char c = *s;

		if (p >= n)
			return partial && p > i ? p - i : 0;
		if (t[p] == c) {
			p++;
		} else if (t[p] == '%') {
			int hi, lo;

			if (p + 2 >= n)
				return partial ? n - i : 0;
			hi = hexval(t[p + 1]);
			lo = hexval(t[p + 2]);
			if (hi < 0 || lo < 0 || (unsigned char)(hi * 16 + lo) != (unsigned char)c)
				return 0;
			p += 3;
		} else if (c == ' ' && t[p] == '+') {
			p++;
		} else {
			return 0;
		}
	}
	return p - i;
}

static void mark_secrets(struct redactor *r, char *const *secrets, size_t n_secrets, bool truncated)
{
	for (size_t k = 0; k < n_secrets; k++) {
		const char *s = secrets[k];

		for (size_t i = 0; i < r->n; i++) {
			size_t len;

			if (r->t[i] != s[0] && r->t[i] != '%' && !(s[0] == ' ' && r->t[i] == '+'))
				continue;
			len = match_secret(r->t, r->n, i, s, truncated);
			if (len)
				mark(r, i, i + len);
		}
	}
}

/* PEM private key blocks: the body between the BEGIN and END lines goes. */
static void mark_pem(struct redactor *r)
{
	static const char begin[] = "-----BEGIN ", end[] = "-----END ", dashes[] = "-----";
	static const char kind[] = "PRIVATE KEY";
	const char *p = r->t;

	while ((p = strstr(p, begin))) {
		const char *label = p + strlen(begin), *close = label, *body, *stop;

		while (*close && *close != '\n' && strncmp(close, dashes, 5))
			close++;
		if (strncmp(close, dashes, 5) || (size_t)(close - label) < strlen(kind) ||
		    strncmp(close - strlen(kind), kind, strlen(kind))) {
			p = label;
			continue;
		}
		body = close + 5;
		if (*body == '\r')
			body++;
		if (*body == '\n')
			body++;
		stop = strstr(body, end);
		if (!stop) {
			mark(r, (size_t)(body - r->t), r->n);
			return;
		}
		p = stop + strlen(end);
		if (stop > body && stop[-1] == '\n')
			stop--;
		if (stop > body && stop[-1] == '\r')
			stop--;
		mark(r, (size_t)(body - r->t), (size_t)(stop - r->t));
	}
}

static bool is_base64(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '+' || c == '/' || c == '=';
}

/* An OpenSSH private key that lost its PEM lines: base64 of "openssh-key-v1". */
static void mark_openssh_base64(struct redactor *r)
{
	static const char magic[] = "b3BlbnNzaC1rZXktdjE";
	const char *p = r->t;

	while ((p = strstr(p, magic))) {
		const char *q = p;

		while (*q && is_base64(*q))
			q++;
		mark(r, (size_t)(p - r->t), (size_t)(q - r->t));
		p = q;
	}
}

/* Access key ids: a prefix and [A-Z0-9] up to len characters; the prefix stays, it says
 * which kind of key it is. */
static void mark_key_ids(struct redactor *r, const char *prefix, size_t len)
{
	size_t p = strlen(prefix);

	for (size_t i = 0; p < len && i + len <= r->n; i++) {
		const char *t = r->t + i;
		size_t k = p;

		if (memcmp(t, prefix, p) != 0)
			continue;
		while (k < len && ((t[k] >= 'A' && t[k] <= 'Z') || (t[k] >= '0' && t[k] <= '9')))
			k++;
		if (k == len)
			mark(r, i + p, i + len);
	}
}

static void mark_cloud_key_ids(struct redactor *r)
{
	const struct gc_provider_ops *c;

	for (size_t i = 0; (c = gc_provider_at(i)); i++)
		for (const char *const *p = c->facts->key_id_prefixes; p && *p; p++)
			mark_key_ids(r, *p, c->facts->key_id_len);
}

enum quote { Q_NONE, Q_DOUBLE, Q_SINGLE, Q_ESCAPED };

/* The quote at p, if any: ", ' or \" (JSON logged inside a JSON string); its length. */
static size_t quote_at(const struct redactor *r, size_t p, enum quote *q)
{
	*q = Q_NONE;
	if (p >= r->n)
		return 0;
	if (r->t[p] == '"')
		*q = Q_DOUBLE;
	else if (r->t[p] == '\'')
		*q = Q_SINGLE;
	else if (r->t[p] == '\\' && p + 1 < r->n && r->t[p + 1] == '"')
		*q = Q_ESCAPED;
	return *q == Q_NONE ? 0 : *q == Q_ESCAPED ? 2 : 1;
}

/*
 * Where the string that starts at p (after its opening quote) ends: at the closing quote,
 * or the end of the text when it is unterminated. Inside \"...\", \\ is an escaped
 * backslash of the inner JSON and escapes the unit after it, so \\\" does not close.
 */
static size_t string_end(const struct redactor *r, size_t p, enum quote q)
{
	const char *t = r->t;
	size_t n = r->n;

	while (p < n) {
		if (q == Q_ESCAPED) {
			if (t[p] == '\\' && p + 1 < n && t[p + 1] == '"')
				return p;
			if (t[p] == '\\' && p + 1 < n && t[p + 1] == '\\') {
				p += 2;
				p += (p + 1 < n && t[p] == '\\') ? 2 : 1;
				continue;
			}
			p += t[p] == '\\' ? 2 : 1;
			continue;
		}
		if (t[p] == '\\') {
			p += 2;
			continue;
		}
		if ((q == Q_DOUBLE && t[p] == '"') || (q == Q_SINGLE && t[p] == '\''))
			return p;
		p++;
	}
	return n;
}

static size_t skip_blanks(const struct redactor *r, size_t p)
{
	while (p < r->n && (r->t[p] == ' ' || r->t[p] == '\t'))
		p++;
	return p;
}

static size_t line_end(const struct redactor *r, size_t p)
{
	while (p < r->n && r->t[p] != '\n' && r->t[p] != '\r')
		p++;
	return p;
}

/* A value after '=' or a JSON ':': a quoted string, or a token up to a stop byte. */
static void mark_value(struct redactor *r, size_t p, const char *stops)
{
	enum quote q;
	size_t ql = quote_at(r, p, &q), e;

	if (ql) {
		mark(r, p + ql, string_end(r, p + ql, q));
		return;
	}
	for (e = p; e < r->n && !is_space(r->t[e]) && !strchr(stops, r->t[e]); e++)
		;
	mark(r, p, e);
}

/*
 * URLs and query strings: the password of a URL's userinfo ("scheme://user:PASSWORD@"),
 * or the whole userinfo when it has no ':' (a token as the user name); and the value of
 * a query parameter ("?name=" or "&name=") whose name ends with one of query_ends or is
 * one of query_names, ignoring case: the signed URLs of the three clouds, presigned links.
 */
static const char *const query_ends[] = {
	"signature",   "credential", "securitytoken", "security-token",
	"accesskeyid", "password",   "secret",	      NULL,
};
static const char *const query_names[] = { "token", "access_token", "id_token", "sig", NULL };

static bool is_url_stop(char c)
{
	return is_space(c) || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\0';
}

static void mark_userinfo(struct redactor *r)
{
	for (size_t i = 0; i + 3 <= r->n; i++) {
		size_t p, e, at = 0, colon = 0;

		if (memcmp(r->t + i, "://", 3) != 0)
			continue;
		p = i + 3;
		for (e = p; e < r->n && !is_url_stop(r->t[e]) && !strchr("/?#", r->t[e]); e++)
			if (r->t[e] == '@')
				at = e;
		for (size_t k = p; at && k < at && !colon; k++)
			if (r->t[k] == ':')
				colon = k;
		if (at)
			mark(r, colon ? colon + 1 : p, at);
	}
}

static bool ends_with_ci(const char *t, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	if (m > n)
		return false;
	for (size_t k = 0; k < m; k++)
		if (lower(t[n - m + k]) != suffix[k])
			return false;
	return true;
}

static void mark_query(struct redactor *r)
{
	for (size_t i = 0; i < r->n; i++) {
		size_t name, eq;
		bool hit = false;

		if (r->t[i] != '?' && r->t[i] != '&')
			continue;
		name = i + 1;
		for (eq = name; eq < r->n && (is_ident(r->t[eq]) || r->t[eq] == '.'); eq++)
			;
		if (eq == name || eq >= r->n || r->t[eq] != '=')
			continue;
		for (const char *const *q = query_ends; *q && !hit; q++)
			hit = ends_with_ci(r->t + name, eq - name, *q);
		for (const char *const *q = query_names; *q && !hit; q++)
			hit = strlen(*q) == eq - name && ends_with_ci(r->t + name, eq - name, *q);
		if (hit)
			mark_value(r, eq + 1, "&#\"'<>");
	}
}

static size_t indent_of(const struct redactor *r, size_t line)
{
	size_t k = line;

	while (k < r->n && r->t[k] == ' ')
		k++;
	return k - line;
}

/*
 * "name: value" (HTTP header, YAML): the rest of the line. An empty value or a YAML block
 * scalar ("|", ">-", ...) continues on the lines indented deeper than the key's line.
 */
static void mark_line_value(struct redactor *r, size_t name, size_t p)
{
	size_t v = skip_blanks(r, p), e = line_end(r, v), last, ls, indent, k;
	bool block = true;

	for (k = v; k < e; k++)
		if (!strchr("|>-+0123456789 \t", r->t[k]) || (k == v && !strchr("|>", r->t[k])))
			block = false;
	mark(r, v, e);
	if (!block)
		return;
	for (ls = name; ls > 0 && r->t[ls - 1] != '\n'; ls--)
		;
	indent = indent_of(r, ls);
	last = e;
	while (e < r->n) {
		size_t line = e + (r->t[e] == '\r' && e + 1 < r->n && r->t[e + 1] == '\n' ? 2 : 1);
		size_t ind = indent_of(r, line), end = line_end(r, line);

		if (skip_blanks(r, line) == end) {
			e = end;
			continue; /* blank lines neither end nor extend the block */
		}
		if (ind <= indent)
			break;
		last = end;
		e = end;
	}
	mark(r, v, last);
}

/* "<name>value</name>", or the whole element content when it nests. */
static void mark_xml_value(struct redactor *r, size_t tag, size_t tag_len, size_t p)
{
	for (size_t k = p; k + 2 + tag_len < r->n; k++) {
		if (r->t[k] == '<' && r->t[k + 1] == '/' &&
		    !memcmp(r->t + k + 2, r->t + tag, tag_len) && r->t[k + 2 + tag_len] == '>') {
			mark(r, p, k);
			return;
		}
	}
	mark(r, p, r->n);
}

/* Whether the name at [i, j) is shaped like an HTTP header: Authorization, or with a '-'. */
static bool header_name(const struct redactor *r, size_t i, size_t j)
{
	static const char auth[] = "authorization";

	if (j - i == strlen(auth) && ends_with_ci(r->t + i, j - i, auth))
		return true;
	return memchr(r->t + i, '-', j - i) != NULL;
}

/* Decides the form from what follows a name found at [i, j), and masks its value. */
static void mark_named_value(struct redactor *r, size_t i, size_t j)
{
	const char *t = r->t;
	enum quote q;
	size_t ql = quote_at(r, j, &q), k;

	if (ql) { /* "name": value, 'name': value, \"name\":\"value\" */
		k = skip_blanks(r, j + ql);
		if (k < r->n && (t[k] == ':' || t[k] == '='))
			mark_value(r, skip_blanks(r, k + 1), ",}]&<>");
		return;
	}
	if (j < r->n && t[j] == '>') { /* <name>, possibly <MasterPassword> */
		for (k = i; k > 0 && (is_ident(t[k - 1]) || t[k - 1] == ':' || t[k - 1] == '.');
		     k--)
			;
		if (k > 0 && t[k - 1] == '<')
			mark_xml_value(r, k, j - k, j + 1);
		return;
	}
	if (j + 3 <= r->n && t[j] == '%' && t[j + 1] == '3' && lower(t[j + 2]) == 'd') {
		/* name%3Dvalue: a URL inside a URL-encoded parameter; value ends at %26 */
		for (k = j + 3; k < r->n && !is_space(t[k]) && t[k] != '&'; k++)
			if (t[k] == '%' && k + 2 < r->n && t[k + 1] == '2' && t[k + 2] == '6')
				break;
		mark(r, j + 3, k);
		return;
	}
	k = skip_blanks(r, j);
	if (k < r->n && t[k] == ':' && (!r->prose || header_name(r, i, j)))
		mark_line_value(r, i, k + 1);
	else if (k < r->n && t[k] == '=')
		mark_value(r, skip_blanks(r, k + 1), "&\"'<>");
}

/* Marks the value after the name nm when t[i..] starts with it; a strict name only after a
 * non-identifier byte. */
static void mark_name_at(struct redactor *r, size_t i, const char *nm, bool strict)
{
	size_t m = 0;

	if (strict && i > 0 && is_ident(r->t[i - 1]))
		return;
	while (nm[m] && i + m < r->n && lower(r->t[i + m]) == lower(nm[m]))
		m++;
	if (!nm[m])
		mark_named_value(r, i, i + m);
}

static void mark_names(struct redactor *r)
{
	const struct gc_provider_ops *c;
	bool first[256] = { false };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		first[(unsigned char)lower(names[k].name[0])] = true;
	for (size_t k = 0; (c = gc_provider_at(k)); k++)
		for (const char *const *nm = c->facts->secret_names; nm && *nm; nm++)
			first[(unsigned char)lower((*nm)[0])] = true;
	for (size_t i = 0; i < r->n; i++) {
		if (!first[(unsigned char)lower(r->t[i])])
			continue;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			mark_name_at(r, i, names[k].name, names[k].strict);
		for (size_t k = 0; (c = gc_provider_at(k)); k++)
			for (const char *const *nm = c->facts->secret_names; nm && *nm; nm++)
				mark_name_at(r, i, *nm, false);
	}
}

/* Redacts t[0..n) into out. Caller holds the lock when secrets are given. */
static void redact(char *const *secrets, size_t n_secrets, const char *t, size_t n, bool truncated,
		   bool prose, struct gc_buf *out)
{
	struct redactor r = { t, n, gc_xcalloc(n ? n : 1, 1), prose };
	size_t i = 0;

	mark_secrets(&r, secrets, n_secrets, truncated);
	mark_pem(&r);
	mark_openssh_base64(&r);
	mark_names(&r);
	mark_userinfo(&r);
	mark_query(&r);
	mark_cloud_key_ids(&r);
	while (i < n) {
		size_t j = i;

		while (j < n && r.mask[j] == r.mask[i])
			j++;
		/* cannot fail: out's cap is set by the caller above the worst case */
		if (r.mask[i])
			gc_buf_add(out, "***", 3);
		else
			gc_buf_add(out, t + i, j - i);
		i = j;
	}
	free(r.mask);
}

/* Every masked run of >= 1 byte becomes 3 bytes: output <= 3n, plus the marker. */
static size_t out_cap(size_t n)
{
	return n > ((size_t)-1 - 64) / 3 ? (size_t)-1 - 1 : 3 * n + 64;
}

static char *redact_text(struct gc_log *log, const char *text, bool prose)
{
	size_t n = strlen(text);
	struct gc_buf out = GC_BUF_INIT(out_cap(n));

	if (log) {
		pthread_mutex_lock(&log->lock);
		redact(log->secrets, log->n_secrets, text, n, false, prose, &out);
		pthread_mutex_unlock(&log->lock);
	} else {
		redact(NULL, 0, text, n, false, prose, &out);
	}
	return gc_buf_detach(&out, NULL);
}

char *gc_log_redact(struct gc_log *log, const char *text)
{
	return redact_text(log, text, false);
}

char *gc_log_redact_message(struct gc_log *log, const char *text)
{
	return redact_text(log, text, true);
}

/* ---- messages ---- */

void gc_log_msg(struct gc_log *log, enum gc_log_level level, const char *fmt, ...)
{
	char small[FORMAT_STACK], *text = small;
	size_t len, size = sizeof(small);
	struct gc_buf out;
	bool truncated = false;
	va_list ap;
	int n;

	if (!log || !log->sink || level > log->level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		n = snprintf(small, sizeof(small), "(unformattable log message)");
	} else if ((size_t)n >= sizeof(small)) {
		/* one byte past the cap is formatted, to see whether the cut splits a character */
		len = (size_t)n <= GC_LOG_LINE_MAX ? (size_t)n : GC_LOG_LINE_MAX + 1;
		size = len + 1;
		text = gc_xmalloc(size);
		va_start(ap, fmt);
		vsnprintf(text, size, fmt, ap);
		va_end(ap);
	}
	len = (size_t)n;
	if (len > GC_LOG_LINE_MAX) {
		truncated = true;
		len = GC_LOG_LINE_MAX;
		/* do not split a UTF-8 sequence: back up over continuation bytes */
		for (int k = 0; k < 3 && len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80; k++)
			len--;
		text[len] = '\0';
	}
	len = strnlen(text, len); /* a %c of 0 ends the line as the sink will see it */
	gc_buf_init(&out, out_cap(len));
	pthread_mutex_lock(&log->lock);
	redact(log->secrets, log->n_secrets, text, len, truncated, false, &out);
	if (truncated)
		gc_buf_addstr(&out, GC_LOG_TRUNCATED);
	log->sink(log->sink_ctx, level, out.data);
	pthread_mutex_unlock(&log->lock);
	/* the unredacted text held whatever the caller formatted */
	OPENSSL_cleanse(text, size);
	if (text != small)
		free(text);
	gc_buf_release(&out);
}
