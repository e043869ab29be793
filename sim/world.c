/*
 * world.c: the emulator's cloud-neutral state and life cycle (see world.h).
 *
 * Storage is plain arrays of pointers in creation order: listings come out stable and
 * ordered without sorting, and at the scale the emulator serves (a few thousand
 * instances) a linear scan costs microseconds. Removal keeps the order (memmove).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "sim/catalog.h"
#include "sim/node.h"
#include "sim/world.h"

const char *sim_state_name(enum sim_cloud c, enum sim_state s)
{
	_Static_assert(SIM_STOPPED + 1 == SIM_NSTATES, "a state without a name");
	if ((unsigned)c >= SIM_NCLOUDS || (unsigned)s >= SIM_NSTATES)
		return "?";
	return sim_frontend(c)->states[s];
}

/* --- tags ----------------------------------------------------------------------------- */

void sim_tags_release(struct sim_tags *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->items[i].key);
		free(t->items[i].value);
	}
	free(t->items);
	memset(t, 0, sizeof(*t));
}

void sim_tags_set(struct sim_tags *t, const char *key, const char *value)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->items[i].key, key)) {
			free(t->items[i].value);
			t->items[i].value = gc_xstrdup(value ? value : "");
			return;
		}
	}
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 4;
		t->items = gc_xreallocarray(t->items, t->alloc, sizeof(*t->items));
	}
	t->items[t->n].key = gc_xstrdup(key);
	t->items[t->n].value = gc_xstrdup(value ? value : "");
	t->n++;
}

bool sim_tags_remove(struct sim_tags *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->items[i].key, key)) {
			free(t->items[i].key);
			free(t->items[i].value);
			memmove(&t->items[i], &t->items[i + 1], (t->n - i - 1) * sizeof(*t->items));
			t->n--;
			return true;
		}
	}
	return false;
}

const char *sim_tags_get(const struct sim_tags *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->items[i].key, key))
			return t->items[i].value;
	return NULL;
}

void sim_tags_copy(struct sim_tags *dst, const struct sim_tags *src)
{
	if (!src)
		return;
	for (size_t i = 0; i < src->n; i++)
		sim_tags_set(dst, src->items[i].key, src->items[i].value);
}

/* --- the world ------------------------------------------------------------------------ */

/* Appends p to a pointer array. */
static void push(void ***arr, size_t *n, size_t *alloc, void *p)
{
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 16;
		*arr = gc_xreallocarray(*arr, *alloc, sizeof(**arr));
	}
	(*arr)[(*n)++] = p;
}

/* Removes p from a pointer array, keeping the order. */
static void pull(void **arr, size_t *n, const void *p)
{
	for (size_t i = 0; i < *n; i++) {
		if (arr[i] == p) {
			memmove(&arr[i], &arr[i + 1], (*n - i - 1) * sizeof(*arr));
			(*n)--;
			return;
		}
	}
}

struct sim_world *sim_world_new(const struct sim_timing *timing, uint64_t seed,
				const struct gc_clock *clock)
{
	struct sim_world *w = gc_xcalloc(1, sizeof(*w));

	pthread_mutex_init(&w->lock, NULL);
	w->clock = clock;
	if (timing)
		w->timing = *timing;
	w->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	w->next_seq = 1;
	return w;
}

static void instance_free(struct sim_instance *inst)
{
	for (size_t i = 0; i < inst->n_security_groups; i++)
		free(inst->security_groups[i]);
	free(inst->security_groups);
	sim_tags_release(&inst->tags);
	free(inst->user_data);
	free(inst);
}

static void keypair_free(struct sim_keypair *kp)
{
	free(kp->public_key);
	sim_tags_release(&kp->tags);
	free(kp);
}

static void secgroup_free(struct sim_secgroup *sg)
{
	sim_tags_release(&sg->tags);
	free(sg->rules);
	free(sg->egress);
	free(sg);
}

static void token_free(struct sim_token *t)
{
	for (size_t i = 0; i < t->n_ids; i++)
		free(t->ids[i]);
	free(t->ids);
	free(t);
}

/* Stops and forgets an instance's node. */
static void node_gone(struct sim_world *w, struct sim_instance *inst)
{
	if (!w->node_ops)
		return;
	if (inst->node_up)
		w->node_ops->stop(w->node_ctx, inst);
	inst->node_up = false;
	w->node_ops->destroy(w->node_ctx, inst->id);
}

static void clear_all(struct sim_world *w)
{
	for (size_t i = 0; i < w->n_instances; i++) {
		node_gone(w, w->instances[i]);
		instance_free(w->instances[i]);
	}
	for (size_t i = 0; i < w->n_keypairs; i++)
		keypair_free(w->keypairs[i]);
	for (size_t i = 0; i < w->n_secgroups; i++)
		secgroup_free(w->secgroups[i]);
	for (size_t i = 0; i < w->n_tokens; i++)
		token_free(w->tokens[i]);
	w->n_instances = w->n_keypairs = w->n_secgroups = w->n_tokens = 0;
	sim_world_clear_placements(w);
	sim_world_clear_addresses(w);
}

void sim_world_free(struct sim_world *w)
{
	if (!w)
		return;
	clear_all(w);
	free(w->instances);
	free(w->keypairs);
	free(w->secgroups);
	free(w->tokens);
	free(w->placements);
	free(w->addresses);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void sim_world_reset(struct sim_world *w)
{
	clear_all(w);
}

void sim_world_lock(struct sim_world *w)
{
	pthread_mutex_lock(&w->lock);
}

void sim_world_unlock(struct sim_world *w)
{
	pthread_mutex_unlock(&w->lock);
}

uint64_t sim_world_now_ns(const struct sim_world *w)
{
	return gc_clock_now_ns(w->clock);
}

int64_t sim_world_wall(const struct sim_world *w)
{
	return (int64_t)time(NULL) + w->wall_offset_s;
}

uint64_t sim_world_random(struct sim_world *w)
{
	/* xorshift64*: plenty for ids and dice, and reproducible from --seed */
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

void sim_world_new_id(struct sim_world *w, enum sim_cloud c, const char *prefix,
		      char out[SIM_ID_MAX])
{
	const struct sim_frontend *fe = sim_frontend(c);
	const char *set = fe->id_alphabet;
	size_t len, n = fe->id_len, i, setlen = strlen(set);

	len = strlen(prefix);
	if (len + n + 1 > SIM_ID_MAX)
		len = SIM_ID_MAX - n - 1;
	memcpy(out, prefix, len);
	for (i = 0; i < n; i++)
		out[len + i] = set[sim_world_random(w) % setlen];
	out[len + n] = '\0';
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* Starts or stops nodes and moves every instance along its life cycle. */
void sim_world_tick(struct sim_world *w)
{
	uint64_t now = sim_world_now_ns(w);
	int64_t wall = sim_world_wall(w);
	size_t i = 0;

	while (i < w->n_instances) {
		struct sim_instance *inst = w->instances[i];

		if (inst->release_at_wall && wall >= inst->release_at_wall &&
		    (inst->state == SIM_PENDING || inst->state == SIM_RUNNING ||
		     inst->state == SIM_RECYCLED || inst->state == SIM_STOPPED)) {
			copy_str(inst->state_reason, sizeof(inst->state_reason),
				 "Client.ScheduledRelease: released at its scheduled time");
			inst->state = SIM_RUNNING; /* the timer destroys, bypassing the bin */
			inst->terminate_calls = 1;
			sim_world_terminate(w, inst);
		}
		if (inst->reclaim_at_wall && wall >= inst->reclaim_at_wall &&
		    inst->state == SIM_RUNNING) {
			/* the cloud's own word for a spot reclaim, as Describe shows it */
			copy_str(inst->state_reason, sizeof(inst->state_reason),
				 sim_frontend(inst->cloud)->spot_reclaim_reason);
			inst->terminate_calls = 1; /* a reclaim bypasses the recycle bin */
			sim_world_terminate(w, inst);
		}
		if (inst->state == SIM_PENDING && now >= inst->running_at_ns) {
			inst->state = SIM_RUNNING;
			if (w->node_ops && !inst->node_up) {
				w->node_ops->start(w->node_ctx, inst);
				inst->node_up = true;
			}
		}
		/* the node powered itself off (shutdown -h, poweroff) */
		if (inst->state == SIM_RUNNING && inst->node_up && w->node_ops->powered_off &&
		    w->node_ops->powered_off(w->node_ctx, inst))
			sim_world_os_shutdown(w, inst);
		if (inst->state == SIM_SHUTTING_DOWN && now >= inst->terminated_at_ns) {
			inst->state = SIM_TERMINATED;
			/* EC2 keeps terminated instances listed for a while */
			inst->forget_at_ns = now +
				(sim_frontend(inst->cloud)->keeps_terminated
					 ? (uint64_t)w->timing.terminated_visible_ms * GC_NS_PER_MS
					 : 0);
		}
		if (inst->state == SIM_TERMINATED && now >= inst->forget_at_ns) {
			node_gone(w, inst);
			memmove(&w->instances[i], &w->instances[i + 1],
				(w->n_instances - i - 1) * sizeof(*w->instances));
			w->n_instances--;
			instance_free(inst);
			continue;
		}
		i++;
	}
}

void sim_world_launch(struct sim_world *w, const struct sim_launch *l, struct sim_instance ***out,
		      size_t *n_out, char reservation[SIM_ID_MAX])
{
	const struct sim_itype *type = sim_catalog_itype(l->cloud, l->type);
	const struct sim_image *image = sim_catalog_image(l->cloud, l->image);
	uint64_t now = sim_world_now_ns(w);
	int64_t wall = sim_world_wall(w);
	size_t base = *n_out;

	sim_world_new_id(w, l->cloud, "r-", reservation);
	*out = gc_xreallocarray(*out, base + l->count, sizeof(**out));
	for (unsigned k = 0; k < l->count; k++) {
		struct sim_instance *inst = gc_xcalloc(1, sizeof(*inst));
		uint64_t seq = w->next_seq++;

		inst->cloud = l->cloud;
		sim_world_new_id(w, l->cloud, sim_frontend(l->cloud)->instance_prefix, inst->id);
		copy_str(inst->region, sizeof(inst->region), l->region);
		copy_str(inst->zone, sizeof(inst->zone), l->zone);
		copy_str(inst->type, sizeof(inst->type), l->type);
		copy_str(inst->image, sizeof(inst->image), l->image);
		copy_str(inst->key_name, sizeof(inst->key_name), l->key_name);
		copy_str(inst->subnet, sizeof(inst->subnet), l->subnet);
		copy_str(inst->name, sizeof(inst->name), l->name);
		if (l->n_security_groups) {
			inst->security_groups =
				gc_xcalloc(l->n_security_groups, sizeof(*inst->security_groups));
			for (size_t g = 0; g < l->n_security_groups; g++)
				inst->security_groups[g] = gc_xstrdup(l->security_groups[g]);
			inst->n_security_groups = l->n_security_groups;
		}
		sim_tags_copy(&inst->tags, l->tags);
		inst->spot = l->spot;
		copy_str(inst->spot_max_price, sizeof(inst->spot_max_price), l->spot_max_price);
		copy_str(inst->client_token, sizeof(inst->client_token), l->client_token);
		copy_str(inst->reservation, sizeof(inst->reservation), reservation);
		inst->user_data = l->user_data ? gc_xstrdup(l->user_data) : NULL;
		inst->disk_gb = l->disk_gb;
		copy_str(inst->role, sizeof(inst->role), l->role);
		inst->shutdown_terminates = l->shutdown_terminates;
		inst->rdma_devices =
			l->rdma_by_launch || !type ? l->rdma_devices : type->rdma_interfaces;
		inst->seq = seq;
		inst->launch_wall = wall;
		inst->state = SIM_PENDING;
		inst->running_at_ns = now + (uint64_t)w->timing.pending_ms * GC_NS_PER_MS;
		inst->release_at_wall = l->release_at_wall;
		/* private addresses in each cloud's usual VPC range, unique by sequence */
		snprintf(inst->private_ip, sizeof(inst->private_ip), "%s.%u.%u",
			 sim_frontend(l->cloud)->private_net, (unsigned)(seq >> 8) & 255,
			 (unsigned)(seq & 255));
		/* API-only: still a loopback address, so nothing ever points off the host */
		snprintf(inst->public_ip, sizeof(inst->public_ip), "127.77.%u.%u",
			 (unsigned)(seq >> 8) & 255, (unsigned)(seq & 255));
		inst->ssh_port = 22;
		if (w->node_ops) {
			struct gc_error err;

			gc_error_init(&err);
			if (w->node_ops->create(w->node_ctx, inst, l->authorized_key, type, image,
						&err) < 0)
				snprintf(inst->state_reason, sizeof(inst->state_reason),
					 "node: %.100s", err.message);
		}
		push((void ***)&w->instances, &w->n_instances, &w->alloc_instances, inst);
		(*out)[base + k] = inst;
	}
	*n_out = base + l->count;
}

struct sim_instance *sim_world_instance(struct sim_world *w, enum sim_cloud c, const char *id)
{
	for (size_t i = 0; i < w->n_instances; i++)
		if (w->instances[i]->cloud == c && !strcmp(w->instances[i]->id, id))
			return w->instances[i];
	return NULL;
}

int sim_world_reclaim(struct sim_world *w, struct sim_instance *inst, unsigned notice_s)
{
	if (!inst->spot || inst->state != SIM_RUNNING || inst->reclaim_at_wall)
		return -1;
	inst->reclaim_at_wall = sim_world_wall(w) + (int64_t)notice_s;
	if (w->node_ops && w->node_ops->notice)
		w->node_ops->notice(w->node_ctx, inst);
	return 0;
}

int sim_world_os_shutdown(struct sim_world *w, struct sim_instance *inst)
{
	const char *reason = sim_frontend(inst->cloud)->os_shutdown_reason;

	if (inst->state != SIM_RUNNING)
		return -1;
	copy_str(inst->state_reason, sizeof(inst->state_reason), reason);
	if (inst->shutdown_terminates) {
		inst->terminate_calls = 1; /* a terminate, not a delete: no recycle bin */
		sim_world_terminate(w, inst);
		return 0;
	}
	if (w->node_ops && inst->node_up) {
		w->node_ops->stop(w->node_ctx, inst);
		inst->node_up = false;
	}
	inst->state = SIM_STOPPED;
	return 0;
}

void sim_world_terminate(struct sim_world *w, struct sim_instance *inst)
{
	uint64_t now = sim_world_now_ns(w);

	switch (inst->state) {
	case SIM_PENDING:
	case SIM_RUNNING:
	case SIM_LAUNCH_FAILED:
	case SIM_STOPPED:
		if (w->node_ops && inst->node_up) {
			w->node_ops->stop(w->node_ctx, inst);
			inst->node_up = false;
		}
		if (sim_frontend(inst->cloud)->recycle_bin && w->tencent_recycle &&
		    !inst->terminate_calls) {
			inst->terminate_calls = 1;
			inst->state = SIM_RECYCLED;
			return;
		}
		break;
	case SIM_RECYCLED: break;
	case SIM_SHUTTING_DOWN:
	case SIM_TERMINATED: return;
	}
	inst->terminate_calls++;
	inst->state = SIM_SHUTTING_DOWN;
	inst->terminated_at_ns = now + (uint64_t)w->timing.terminate_ms * GC_NS_PER_MS;
	if (!inst->state_reason[0])
		copy_str(inst->state_reason, sizeof(inst->state_reason),
			 "Client.UserInitiatedShutdown: User initiated shutdown");
}

size_t sim_world_list(struct sim_world *w, enum sim_cloud c, const char *region,
		      struct sim_instance ***out)
{
	size_t n = 0;

	*out = gc_xcalloc(w->n_instances ? w->n_instances : 1, sizeof(**out));
	for (size_t i = 0; i < w->n_instances; i++) {
		struct sim_instance *inst = w->instances[i];

		if (inst->cloud != c || (region && strcmp(inst->region, region)))
			continue;
		(*out)[n++] = inst;
	}
	return n;
}

/* --- client tokens -------------------------------------------------------------------- */

struct sim_token *sim_world_token(struct sim_world *w, enum sim_cloud c, const char *region,
				  const char *token)
{
	for (size_t i = 0; i < w->n_tokens; i++) {
		struct sim_token *t = w->tokens[i];

		if (t->cloud == c && !strcmp(t->region, region) && !strcmp(t->token, token))
			return t;
	}
	return NULL;
}

void sim_world_remember_token(struct sim_world *w, enum sim_cloud c, const char *region,
			      const char *token, const char *fingerprint, const char *reservation,
			      struct sim_instance *const *insts, size_t n)
{
	struct sim_token *t = gc_xcalloc(1, sizeof(*t));

	t->cloud = c;
	copy_str(t->region, sizeof(t->region), region);
	copy_str(t->token, sizeof(t->token), token);
	copy_str(t->fingerprint, sizeof(t->fingerprint), fingerprint);
	copy_str(t->reservation, sizeof(t->reservation), reservation);
	t->ids = gc_xcalloc(n ? n : 1, sizeof(*t->ids));
	for (size_t i = 0; i < n; i++)
		t->ids[i] = gc_xstrdup(insts[i]->id);
	t->n_ids = n;
	push((void ***)&w->tokens, &w->n_tokens, &w->alloc_tokens, t);
}

/* --- key pairs ------------------------------------------------------------------------ */

struct sim_keypair *sim_world_import_key(struct sim_world *w, enum sim_cloud c, const char *region,
					 const char *name, const char *public_key,
					 const struct sim_tags *tags, struct gc_error *err)
{
	char fpr[GC_SSH_FINGERPRINT_SIZE];
	struct sim_keypair *kp;

	if (gc_ssh_fingerprint(fpr, public_key, err) < 0)
		return NULL;
	kp = gc_xcalloc(1, sizeof(*kp));
	kp->cloud = c;
	copy_str(kp->region, sizeof(kp->region), region);
	copy_str(kp->name, sizeof(kp->name), name);
	if (sim_frontend(c)->key_prefix)
		sim_world_new_id(w, c, sim_frontend(c)->key_prefix, kp->id);
	else
		copy_str(kp->id, sizeof(kp->id), name);
	kp->public_key = gc_xstrdup(public_key);
	copy_str(kp->fingerprint, sizeof(kp->fingerprint), fpr);
	sim_tags_copy(&kp->tags, tags);
	kp->created_wall = sim_world_wall(w);
	push((void ***)&w->keypairs, &w->n_keypairs, &w->alloc_keypairs, kp);
	return kp;
}

/* An SSH wire-format blob being read: RFC 4251 strings and mpints. */
struct key_reader {
	const unsigned char *p;
	size_t left;
};

static int key_string(struct key_reader *r, const unsigned char **s, size_t *n)
{
	size_t len;

	if (r->left < 4)
		return -1;
	len = (size_t)r->p[0] << 24 | (size_t)r->p[1] << 16 | (size_t)r->p[2] << 8 | r->p[3];
	if (len > r->left - 4)
		return -1;
	*s = r->p + 4;
	*n = len;
	r->p += 4 + len;
	r->left -= 4 + len;
	return 0;
}

/* A positive mpint, minimal as RFC 4251 wants it; its size in bits goes to *bits. */
static int key_mpint(struct key_reader *r, size_t *bits)
{
	const unsigned char *s;
	size_t n, b;

	if (key_string(r, &s, &n) < 0 || n == 0 || (s[0] & 0x80))
		return -1;
	if (s[0] == 0 && (n == 1 || !(s[1] & 0x80)))
		return -1;
	if (s[0] == 0) {
		s++;
		n--;
	}
	for (b = 8; b > 0 && !(s[0] & (1u << (b - 1))); b--)
		;
	*bits = (n - 1) * 8 + b;
	return 0;
}

static bool key_is(const unsigned char *s, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(s, want, n);
}

/* The blob's fields after its type name; -1 when they do not make a key of that kind. */
static int key_fields(struct key_reader *r, enum sim_key_kind kind, const unsigned char *type,
		      size_t type_len)
{
	static const struct {
		const char *type, *curve;
		size_t point;
	} curves[] = { { "ecdsa-sha2-nistp256", "nistp256", 65 },
		       { "ecdsa-sha2-nistp384", "nistp384", 97 },
		       { "ecdsa-sha2-nistp521", "nistp521", 133 } };
	const unsigned char *s;
	size_t n, bits;

	switch (kind) {
	case SIM_KEY_RSA:
		if (key_mpint(r, &bits) < 0 || key_mpint(r, &bits) < 0 || bits < 1024)
			return -1;
		break;
	case SIM_KEY_DSA:
		for (int i = 0; i < 4; i++)
			if (key_mpint(r, &bits) < 0)
				return -1;
		break;
	case SIM_KEY_ECDSA:
		for (size_t i = 0; i < sizeof(curves) / sizeof(curves[0]); i++) {
			if (!key_is(type, type_len, curves[i].type))
				continue;
			if (key_string(r, &s, &n) < 0 || !key_is(s, n, curves[i].curve) ||
			    key_string(r, &s, &n) < 0 || n != curves[i].point || s[0] != 0x04)
				return -1;
			return r->left ? -1 : 0;
		}
		return -1;
	case SIM_KEY_ED25519:
		if (key_string(r, &s, &n) < 0 || n != 32)
			return -1;
		break;
	case SIM_KEY_OTHER: return 0;
	}
	return r->left ? -1 : 0;
}

int sim_ssh_key_kind(const char *line, enum sim_key_kind *kind, struct gc_error *err)
{
	struct gc_buf blob = GC_BUF_INIT(64 << 10);
	const char *b64, *end;
	const unsigned char *type;
	struct key_reader r;
	size_t type_len;
	int ret = -1;

	while (*line == ' ' || *line == '\t')
		line++;
	b64 = line + strcspn(line, " \t\r\n");
	while (*b64 == ' ' || *b64 == '\t')
		b64++;
	end = b64 + strcspn(b64, " \t\r\n");
	if (end == b64 || gc_base64_decode(&blob, b64, (size_t)(end - b64)) < 0) {
		gc_error_set(err, GC_EINVALID, "not an openssh public key line");
		goto out;
	}
	r = (struct key_reader){ (const unsigned char *)blob.data, blob.len };
	if (key_string(&r, &type, &type_len) < 0 || type_len != strcspn(line, " \t\r\n") ||
	    memcmp(type, line, type_len)) {
		gc_error_set(err, GC_EINVALID, "the key blob does not name the line's key type");
		goto out;
	}
	if (key_is(type, type_len, "ssh-rsa"))
		*kind = SIM_KEY_RSA;
	else if (key_is(type, type_len, "ssh-dss"))
		*kind = SIM_KEY_DSA;
	else if (type_len > 11 && !memcmp(type, "ecdsa-sha2-", 11))
		*kind = SIM_KEY_ECDSA;
	else if (key_is(type, type_len, "ssh-ed25519"))
		*kind = SIM_KEY_ED25519;
	else
		*kind = SIM_KEY_OTHER;
	if (key_fields(&r, *kind, type, type_len) < 0) {
		gc_error_set(err, GC_EINVALID, "the '%.*s' key blob is malformed",
			     (int)(type_len < 64 ? type_len : 64), (const char *)type);
		goto out;
	}
	ret = 0;
out:
	gc_buf_release(&blob);
	return ret;
}

struct sim_keypair *sim_world_keypair(struct sim_world *w, enum sim_cloud c, const char *region,
				      const char *name_or_id)
{
	for (size_t i = 0; i < w->n_keypairs; i++) {
		struct sim_keypair *kp = w->keypairs[i];

		if (kp->cloud != c || (region && strcmp(kp->region, region)))
			continue;
		if (!strcmp(kp->name, name_or_id) || !strcmp(kp->id, name_or_id))
			return kp;
	}
	return NULL;
}

void sim_world_delete_key(struct sim_world *w, struct sim_keypair *kp)
{
	pull((void **)w->keypairs, &w->n_keypairs, kp);
	keypair_free(kp);
}

size_t sim_world_list_keys(struct sim_world *w, enum sim_cloud c, const char *region,
			   struct sim_keypair ***out)
{
	size_t n = 0;

	*out = gc_xcalloc(w->n_keypairs ? w->n_keypairs : 1, sizeof(**out));
	for (size_t i = 0; i < w->n_keypairs; i++)
		if (w->keypairs[i]->cloud == c &&
		    (!region || !strcmp(w->keypairs[i]->region, region)))
			(*out)[n++] = w->keypairs[i];
	return n;
}

/* --- security groups ------------------------------------------------------------------ */

struct sim_secgroup *sim_world_create_sg(struct sim_world *w, enum sim_cloud c, const char *region,
					 const char *name, const char *description, const char *vpc,
					 const struct sim_tags *tags)
{
	struct sim_secgroup *sg = gc_xcalloc(1, sizeof(*sg));

	sg->cloud = c;
	copy_str(sg->region, sizeof(sg->region), region);
	sim_world_new_id(w, c, "sg-", sg->id);
	copy_str(sg->name, sizeof(sg->name), name);
	copy_str(sg->description, sizeof(sg->description), description);
	copy_str(sg->vpc, sizeof(sg->vpc), vpc);
	sim_tags_copy(&sg->tags, tags);
	sg->created_wall = sim_world_wall(w);
	push((void ***)&w->secgroups, &w->n_secgroups, &w->alloc_secgroups, sg);
	return sg;
}

struct sim_secgroup *sim_world_sg(struct sim_world *w, enum sim_cloud c, const char *region,
				  const char *id)
{
	for (size_t i = 0; i < w->n_secgroups; i++) {
		struct sim_secgroup *sg = w->secgroups[i];

		if (sg->cloud == c && (!region || !strcmp(sg->region, region)) &&
		    !strcmp(sg->id, id))
			return sg;
	}
	return NULL;
}

static bool rule_equal(const struct sim_rule *a, const struct sim_rule *b)
{
	return !strcmp(a->protocol, b->protocol) && a->from_port == b->from_port &&
		a->to_port == b->to_port && !strcmp(a->cidr, b->cidr) &&
		!strcmp(a->cidr_ipv6, b->cidr_ipv6) && !strcmp(a->source_group, b->source_group);
}

bool sim_world_add_rule(struct sim_secgroup *sg, const struct sim_rule *rule)
{
	for (size_t i = 0; i < sg->n_rules; i++)
		if (rule_equal(&sg->rules[i], rule))
			return false;
	sg->rules = gc_xreallocarray(sg->rules, sg->n_rules + 1, sizeof(*sg->rules));
	sg->rules[sg->n_rules++] = *rule;
	return true;
}

bool sim_world_has_rule(const struct sim_secgroup *sg, const struct sim_rule *rule)
{
	for (size_t i = 0; i < sg->n_rules; i++)
		if (rule_equal(&sg->rules[i], rule))
			return true;
	return false;
}

bool sim_world_remove_rule(struct sim_secgroup *sg, const struct sim_rule *rule)
{
	for (size_t i = 0; i < sg->n_rules; i++) {
		if (!rule_equal(&sg->rules[i], rule))
			continue;
		memmove(&sg->rules[i], &sg->rules[i + 1],
			(sg->n_rules - i - 1) * sizeof(*sg->rules));
		sg->n_rules--;
		return true;
	}
	return false;
}

bool sim_world_sg_in_use(struct sim_world *w, const struct sim_secgroup *sg)
{
	for (size_t i = 0; i < w->n_instances; i++) {
		const struct sim_instance *inst = w->instances[i];

		if (inst->cloud != sg->cloud || inst->state == SIM_TERMINATED)
			continue;
		for (size_t g = 0; g < inst->n_security_groups; g++)
			if (!strcmp(inst->security_groups[g], sg->id))
				return true;
	}
	return false;
}

void sim_world_delete_sg(struct sim_world *w, struct sim_secgroup *sg)
{
	pull((void **)w->secgroups, &w->n_secgroups, sg);
	secgroup_free(sg);
}

size_t sim_world_list_sgs(struct sim_world *w, enum sim_cloud c, const char *region,
			  struct sim_secgroup ***out)
{
	size_t n = 0;

	*out = gc_xcalloc(w->n_secgroups ? w->n_secgroups : 1, sizeof(**out));
	for (size_t i = 0; i < w->n_secgroups; i++)
		if (w->secgroups[i]->cloud == c &&
		    (!region || !strcmp(w->secgroups[i]->region, region)))
			(*out)[n++] = w->secgroups[i];
	return n;
}
