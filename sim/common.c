/*
 * common.c: what the frontends share: the default configuration, the response object,
 * request ids, credentials lookup, the Host without its port, Alibaba's nonce memory,
 * the parameter-name patterns behind every strictness table, the client-token
 * fingerprint and what a fault hit does around an action.
 *
 * Everything here is safe from any thread; the nonce memory has its own mutex because
 * it is shared by every connection thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/sim.h"

void sim_config_defaults(struct sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int c = 0; c < SIM_NCLOUDS; c++) {
		const struct sim_frontend *fe = sim_frontend((enum sim_cloud)c);

		snprintf(cfg->creds[c][0].id, sizeof(cfg->creds[c][0].id), "%s", fe->key_id);
		snprintf(cfg->creds[c][0].secret, sizeof(cfg->creds[c][0].secret), "%s",
			 fe->secret);
		cfg->n_creds[c] = 1;
	}
	/* the account id AWS uses in its own documentation examples */
	snprintf(cfg->aws_account, sizeof(cfg->aws_account), "%s", "111122223333");
	/* EC2 caps a Query request at about 1 MB (user data alone may be 16 KiB base64'd);
	 * anything larger is a client bug or an attack on the emulator */
	cfg->max_body = (size_t)1 << 20;
	/* random, so that session tokens from an earlier run do not verify in this one */
	if (gc_random_bytes(cfg->sts_key, sizeof(cfg->sts_key)) != 0)
		memset(cfg->sts_key, 0x5a, sizeof(cfg->sts_key));
}

void sim_resp_init(struct sim_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 200;
	r->content_type = "text/plain; charset=utf-8";
	gc_buf_init(&r->body, GC_BUF_DEFAULT_MAX);
	gc_params_init(&r->headers);
}

void sim_resp_release(struct sim_resp *r)
{
	if (!r)
		return;
	gc_buf_release(&r->body);
	gc_params_release(&r->headers);
	json_decref(r->log_params);
	r->log_params = NULL;
}

void sim_resp_json(struct sim_resp *r, int status, json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	r->status = status;
	r->content_type = "application/json";
	gc_buf_reset(&r->body);
	if (text) {
		gc_buf_addstr(&r->body, text);
		gc_buf_addch(&r->body, '\n');
	}
	free(text);
	json_decref(doc);
}

int sim_fault_before(struct sim_resp *resp, const struct sim_fault_hit *hit)
{
	if (hit->kind == SIM_FAULT_SLOW) {
		resp->delay_ms = hit->delay_ms;
	} else if (hit->kind == SIM_FAULT_HOSTILE) {
		resp->hostile = *hit;
		if (!sim_hostile_applies(hit->hostile))
			return -1; /* the answer is replaced: nothing is done */
	} else if (hit->kind == SIM_FAULT_DROP && !hit->after) {
		resp->drop = true;
		return -1;
	} else if (hit->kind != SIM_FAULT_NONE && hit->kind != SIM_FAULT_DROP && !hit->after) {
		return 1;
	}
	return 0;
}

int sim_fault_after(struct sim_resp *resp, const struct sim_fault_hit *hit)
{
	if (hit->after && hit->kind == SIM_FAULT_DROP) {
		resp->drop = true;
		return -1;
	}
	return hit->after && hit->kind == SIM_FAULT_5XX ? 1 : 0;
}

void sim_request_id(struct sim *sim, bool upper, char out[37])
{
	unsigned char b[16];
	char hex[33];
	size_t o = 0;

	(void)sim;
	if (gc_random_bytes(b, sizeof(b)) != 0)
		memset(b, 0x5a, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	gc_hex(b, sizeof(b), hex);
	for (size_t i = 0; i < 32; i++) {
		if (i == 8 || i == 12 || i == 16 || i == 20)
			out[o++] = '-';
		char ch = hex[i];
		if (upper && ch >= 'a' && ch <= 'f')
			ch = (char)(ch - 'a' + 'A');
		out[o++] = ch;
	}
	out[o] = '\0';
}

const char *sim_cred_secret(const struct sim *sim, enum sim_cloud c, const char *id)
{
	if (!id || (unsigned)c >= SIM_NCLOUDS)
		return NULL;
	for (unsigned i = 0; i < sim->cfg.n_creds[c] && i < SIM_MAX_CREDS; i++)
		if (strcmp(sim->cfg.creds[c][i].id, id) == 0)
			return sim->cfg.creds[c][i].secret;
	return NULL;
}

bool sim_cred_intl(const struct sim *sim, enum sim_cloud c, const char *id)
{
	for (unsigned i = 0;
	     id && (unsigned)c < SIM_NCLOUDS && i < sim->cfg.n_creds[c] && i < SIM_MAX_CREDS; i++)
		if (strcmp(sim->cfg.creds[c][i].id, id) == 0)
			return sim->cfg.creds[c][i].intl;
	return false;
}

bool sim_headers_without_port(const struct gc_params *in, struct gc_params *out)
{
	bool changed = false;

	for (size_t i = 0; i < in->n; i++) {
		const char *v = in->items[i].value;
		const char *colon = strrchr(v, ':');

		if (!strcasecmp(in->items[i].name, "host") && colon && !strchr(colon, ']')) {
			char *bare = gc_xstrndup(v, (size_t)(colon - v));

			gc_params_add(out, in->items[i].name, bare);
			free(bare);
			changed = true;
			continue;
		}
		gc_params_add(out, in->items[i].name, v);
	}
	return changed;
}

/* --- sealed session tokens -------------------------------------------------------------- */

char *sim_session_seal(const struct sim *sim, const char *prefix, const char *magic,
		       const struct sim_session *s)
{
	struct gc_buf payload = GC_BUF_INIT(SIM_SESSION_TOKEN_MAX);
	struct gc_buf out = GC_BUF_INIT(SIM_SESSION_TOKEN_MAX * 2);
	unsigned char mac[GC_SHA256_LEN];

	gc_buf_addf(&payload, "%s\n%s\n%lld\n%s", magic, s->key_id, (long long)s->expiry, s->arn);
	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), payload.data, payload.len, mac);
	gc_buf_add(&payload, mac, sizeof(mac));
	gc_buf_addstr(&out, prefix);
	gc_base64_encode(&out, payload.data, payload.len);
	gc_buf_release(&payload);
	return gc_buf_detach(&out, NULL);
}

enum sim_session_check sim_session_open(const struct sim *sim, const char *prefix,
					const char *magic, const char *token, const char *key_id,
					int64_t now, struct sim_session *out)
{
	struct gc_buf raw = GC_BUF_INIT(SIM_SESSION_TOKEN_MAX);
	unsigned char mac[GC_SHA256_LEN];
	char want[GC_SHA256_HEX_LEN], got[GC_SHA256_HEX_LEN], num[24];
	enum sim_session_check ret = SIM_SESSION_MALFORMED;
	size_t plen, mlen = strlen(magic), klen;
	const char *p, *nl;
	int64_t expiry;

	if (!token || !key_id || strlen(token) > SIM_SESSION_TOKEN_MAX ||
	    strncmp(token, prefix, strlen(prefix)) != 0 ||
	    gc_base64_decode(&raw, token + strlen(prefix), strlen(token) - strlen(prefix)) != 0 ||
	    raw.len <= sizeof(mac))
		goto out;
	plen = raw.len - sizeof(mac);
	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), raw.data, plen, mac);
	gc_hex(mac, sizeof(mac), want);
	gc_hex((const unsigned char *)raw.data + plen, sizeof(mac), got);
	if (!gc_sign_equal(want, got))
		goto out;
	raw.data[plen] = '\0';
	/* sealed by us, so well-formed unless another cloud's magic sealed it */
	p = raw.data;
	if (strncmp(p, magic, mlen) != 0 || p[mlen] != '\n')
		goto out;
	p += mlen + 1;
	nl = strchr(p, '\n');
	if (!nl || (size_t)(nl - p) >= sizeof(out->key_id))
		goto out;
	snprintf(out->key_id, sizeof(out->key_id), "%.*s", (int)(nl - p), p);
	p = nl + 1;
	nl = strchr(p, '\n');
	if (!nl || (size_t)(nl - p) >= sizeof(num))
		goto out;
	snprintf(num, sizeof(num), "%.*s", (int)(nl - p), p);
	if (gc_parse_i64(num, 0, INT64_MAX, &expiry) != 0)
		goto out;
	out->expiry = expiry;
	snprintf(out->arn, sizeof(out->arn), "%s", nl + 1);
	klen = strlen(out->key_id);
	if (strlen(key_id) != klen || strcmp(out->key_id, key_id) != 0)
		ret = SIM_SESSION_MISMATCH;
	else
		ret = now >= expiry ? SIM_SESSION_EXPIRED : SIM_SESSION_OK;
out:
	gc_buf_release(&raw);
	return ret;
}

void sim_session_derive(const struct sim *sim, const char *text, const char *alphabet, char *out,
			size_t n)
{
	unsigned char block[GC_SHA256_LEN];
	size_t i = 0, an = strlen(alphabet);

	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), text, strlen(text), block);
	while (i < n) {
		for (size_t k = 0; k < sizeof(block) && i < n; k++)
			out[i++] = alphabet[block[k] % an];
		gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), block, sizeof(block),
			       block);
	}
	out[n] = '\0';
}

/* --- nonces --------------------------------------------------------------------------- */

/*
 * A chained hash table. Expired entries are dropped from a chain whenever that chain
 * is walked, so memory stays proportional to the nonces of the last 15 minutes without
 * a sweeper thread.
 */
#define NONCE_BUCKETS 4096
#define NONCE_WINDOW  (15 * 60)

struct nonce {
	struct nonce *next;
	time_t seen;
	char text[];
};

struct sim_nonces {
	pthread_mutex_t lock;
	struct nonce *buckets[NONCE_BUCKETS];
};

struct sim_nonces *sim_nonces_new(void)
{
	struct sim_nonces *n = gc_xcalloc(1, sizeof(*n));

	pthread_mutex_init(&n->lock, NULL);
	return n;
}

void sim_nonces_free(struct sim_nonces *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < NONCE_BUCKETS; i++) {
		struct nonce *e = n->buckets[i];
		while (e) {
			struct nonce *next = e->next;
			free(e);
			e = next;
		}
	}
	pthread_mutex_destroy(&n->lock);
	free(n);
}

bool sim_nonce_fresh(struct sim *sim, const char *nonce, time_t now)
{
	struct sim_nonces *n = sim->nonces;
	unsigned char h[GC_SHA256_LEN];
	size_t b, len = strlen(nonce);
	bool fresh = true;

	if (!n)
		return true;
	gc_sha256(nonce, len, h);
	b = (((size_t)h[0] << 8) | h[1]) % NONCE_BUCKETS;

	pthread_mutex_lock(&n->lock);
	for (struct nonce **p = &n->buckets[b]; *p;) {
		struct nonce *e = *p;
		if (now - e->seen > NONCE_WINDOW) {
			*p = e->next;
			free(e);
			continue;
		}
		if (strcmp(e->text, nonce) == 0)
			fresh = false;
		p = &e->next;
	}
	if (fresh) {
		struct nonce *e = gc_xmalloc(sizeof(*e) + len + 1);
		memcpy(e->text, nonce, len + 1);
		e->seen = now;
		e->next = n->buckets[b];
		n->buckets[b] = e;
	}
	pthread_mutex_unlock(&n->lock);
	return fresh;
}

/* --- parameter patterns --------------------------------------------------------------- */

/* Matches a decimal index at *s (digits up to '.' or the end); leading zeros are not
 * an index the clouds' serialisers ever write, so they do not match. */
static bool match_index(const char **s, unsigned max, unsigned *bad_index)
{
	const char *p = *s;
	unsigned long v = 0;

	if (*p < '1' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9') {
		if (v < 100000000ul)
			v = v * 10 + (unsigned long)(*p - '0');
		p++;
	}
	if (*p != '\0' && *p != '.')
		return false;
	if (v > max && bad_index && *bad_index == 0)
		*bad_index = v > 4000000000ul ? 4000000000u : (unsigned)v;
	*s = p;
	return true;
}

bool sim_param_match(const char *pattern, const char *name, unsigned max, unsigned *bad_index)
{
	const char *p = pattern, *s = name;
	unsigned bad = 0;

	while (*p) {
		/* "N" as a whole segment: between dots or at an end */
		bool seg_start = p == pattern || p[-1] == '.';
		if (seg_start && p[0] == 'N' && (p[1] == '.' || p[1] == '\0')) {
			if (!match_index(&s, max, &bad))
				return false;
			p++;
			continue;
		}
		if (*p != *s)
			return false;
		p++;
		s++;
	}
	if (*s != '\0')
		return false;
	if (bad_index)
		*bad_index = bad;
	return true;
}

void sim_params_fingerprint(const struct gc_params *p, const char *const *skip, char out[65])
{
	struct gc_params keep = GC_PARAMS_INIT;
	struct gc_buf text = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	for (size_t i = 0; i < p->n; i++) {
		bool skipped = false;
		for (const char *const *k = skip; k && *k; k++)
			if (strcmp(p->items[i].name, *k) == 0)
				skipped = true;
		if (!skipped)
			gc_params_add(&keep, p->items[i].name, p->items[i].value);
	}
	/* cannot fail below the 64 MiB cap: a request body is capped far lower */
	(void)gc_params_encode_sorted(&text, &keep);
	gc_sha256_hex(text.data, text.len, out);
	gc_buf_release(&text);
	gc_params_release(&keep);
}
