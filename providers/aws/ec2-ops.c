/*
 * ec2-ops.c: the AWS driver's operations on the EC2 Query API 2016-11-15; the mapping is
 * tabulated in docs/internals/providers.md. Each checks what the cloud answered where a
 * mistake would cost money or touch what is not ours: discover keeps only instances that
 * carry every filter tag exactly, whatever the server's filtering did.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/cidr.h"
#include "core/hash.h"
#include "core/rules.h"
#include "core/str.h"
#include "providers/aws/ec2.h"

/* Canonical's account, which publishes the Ubuntu images. */
#define AWS_CANONICAL_OWNER "099720109477"

/* ---- small helpers ------------------------------------------------------------------ */

static void addf(struct gc_params *p, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void addf(struct gc_params *p, const char *value, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	gc_params_add(p, name, value);
}

static void addu(struct gc_params *p, const char *name, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	gc_params_add(p, name, buf);
}

/* EC2 filter values take * and ? as wildcards; a backslash makes one literal. */
static char *filter_value(const char *v)
{
	struct gc_buf b = GC_BUF_INIT(4096);

	for (const char *s = v; *s; s++) {
		if (*s == '*' || *s == '?' || *s == '\\')
			gc_buf_addch(&b, '\\');
		gc_buf_addch(&b, *s);
	}
	return gc_buf_detach(&b, NULL);
}

/* Filter.N for each tag filter, from *idx on: tag:KEY=VALUE, or tag-key=KEY. */
static void add_tag_filters(struct gc_params *p, const struct gc_tag_filter *tags, size_t n,
			    unsigned *idx)
{
	for (size_t i = 0; i < n; i++, (*idx)++) {
		char *v;

		if (tags[i].value) {
			char *name = gc_xasprintf("tag:%s", tags[i].key);
			addf(p, name, "Filter.%u.Name", *idx);
			free(name);
			v = filter_value(tags[i].value);
		} else {
			addf(p, "tag-key", "Filter.%u.Name", *idx);
			v = filter_value(tags[i].key);
		}
		addf(p, v, "Filter.%u.Value.1", *idx);
		free(v);
	}
}

/* TagSpecification.N for a resource type with every tag. */
static void add_tag_spec(struct gc_params *p, unsigned n, const char *type,
			 const struct gc_tag *tags, size_t n_tags)
{
	if (!n_tags)
		return;
	addf(p, type, "TagSpecification.%u.ResourceType", n);
	for (size_t i = 0; i < n_tags; i++) {
		addf(p, tags[i].key, "TagSpecification.%u.Tag.%zu.Key", n, i + 1);
		addf(p, tags[i].value ? tags[i].value : "", "TagSpecification.%u.Tag.%zu.Value", n,
		     i + 1);
	}
}

static void iso_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 32, "1970-01-01T00:00:00Z");
}

/* A well-formed answer we could not read: name the action and the endpoint. */
static int bad_answer(struct gc_provider *p, const char *action, struct gc_error *err)
{
	return gc_error_prefix(err, "cannot read the %s answer from '%s'", action,
			       aws_driver(p)->ec2_host);
}

/* One call whose answer says nothing beyond its success; params are released. */
static int call_only(struct gc_provider *p, const char *action, struct gc_params *params,
		     struct gc_error *err)
{
	struct gc_buf body;
	int ret = aws_ec2_call(p, action, params, 0, false, &body, err);

	gc_params_release(params);
	gc_buf_release(&body);
	return ret;
}

/* ---- discover ------------------------------------------------------------------------ */

static int discover_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			 struct gc_buf *body, struct gc_error *err)
{
	static const char *const live[] = { "pending", "running", "shutting-down", "stopping",
					    "stopped" };
	const struct gc_discover_query *q = ((struct gc_driver_discover *)ctx)->q;
	struct gc_params params = GC_PARAMS_INIT;
	unsigned idx = 1;
	int ret;

	add_tag_filters(&params, q->tags, q->n_tags, &idx);
	if (!q->include_terminated) {
		addf(&params, "instance-state-name", "Filter.%u.Name", idx);
		for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
			addf(&params, live[i], "Filter.%u.Value.%zu", idx, i + 1);
		idx++;
	}
	addu(&params, "MaxResults", AWS_INSTANCE_PAGE_SIZE);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	ret = aws_ec2_call(p, "DescribeInstances", &params, 0, false, body, err);
	gc_params_release(&params);
	if (ret != 0)
		gc_error_prefix(err, "cannot list instances in '%s'", p->region);
	return ret;
}

static int discover_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			  struct gc_page *pg, struct gc_error *err)
{
	struct gc_instance_list page;

	gc_instance_list_init(&page);
	if (aws_xml_instances(body->data, body->len, &page, &pg->next, err) != 0) {
		gc_instance_list_release(&page);
		return bad_answer(p, "DescribeInstances", err);
	}
	for (size_t i = 0; i < page.n; i++)
		gc_driver_discover_keep(ctx, &page.items[i]);
	free(page.items);
	return 0;
}

int aws_discover(struct gc_provider *p, const struct gc_discover_query *q,
		 struct gc_instance_list *out, struct gc_error *err)
{
	static const struct gc_pager hooks = { NULL, NULL, discover_send, discover_parse };

	return gc_driver_discover(p, &hooks, q, out, err);
}

/* ---- images --------------------------------------------------------------------------- */

static const struct aws_image *image_cached(struct aws_driver *d, const char *id)
{
	for (size_t i = 0; i < d->n_images; i++)
		if (strcmp(d->images[i].id, id) == 0)
			return &d->images[i];
	return NULL;
}

/* Keeps what a DescribeImages answer told us (first answer wins for an id). */
static void cache_images(struct aws_driver *d, struct aws_image *ims, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (image_cached(d, ims[i].id)) {
			aws_image_release(&ims[i]);
			continue;
		}
		GC_ALLOC_GROW(d->images, d->n_images + 1, d->alloc_images);
		d->images[d->n_images++] = ims[i];
		memset(&ims[i], 0, sizeof(ims[i]));
	}
}

struct images_ctx {
	const struct gc_params *base;
	struct aws_image *out;
	size_t n, alloc;
};

static int images_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
		       struct gc_buf *body, struct gc_error *err)
{
	const struct gc_params *base = ((struct images_ctx *)ctx)->base;
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add_all(&params, base);
	if (!gc_params_get(base, "ImageId.1")) /* MaxResults cannot go with ImageId.N */
		addu(&params, "MaxResults", AWS_PAGE_SIZE);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	ret = aws_ec2_call(p, "DescribeImages", &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int images_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			struct gc_page *pg, struct gc_error *err)
{
	struct images_ctx *c = ctx;

	if (aws_xml_images(body->data, body->len, &c->out, &c->n, &c->alloc, &pg->next, err) != 0)
		return bad_answer(p, "DescribeImages", err);
	return 0;
}

/* DescribeImages over all pages into *out (caller releases each and frees). */
static int describe_images(struct gc_provider *p, const struct gc_params *base,
			   struct aws_image **out, size_t *n, struct gc_error *err)
{
	static const struct gc_pager pager = { "DescribeImages", NULL, images_send, images_parse };
	struct images_ctx c = { .base = base };
	int ret = gc_driver_pages(p, &pager, &c, err);

	if (ret != 0) {
		for (size_t i = 0; i < c.n; i++)
			aws_image_release(&c.out[i]);
		free(c.out);
		c.out = NULL;
		c.n = 0;
	}
	*out = c.out;
	*n = c.n;
	return ret;
}

/* The image with this id, from the cache or DescribeImages ImageId.1. */
static int image_by_id(struct gc_provider *p, const char *id, const struct aws_image **out,
		       struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct aws_image *ims = NULL;
	size_t n = 0;

	if ((*out = image_cached(d, id)))
		return 0;
	if (!gc_starts_with(id, "ami-") || strlen(id) < 5)
		return gc_error_set(err, GC_EINVALID, "'%s' is not an AMI id (ami-...)", id);
	gc_params_add(&params, "ImageId.1", id);
	if (describe_images(p, &params, &ims, &n, err) != 0) {
		gc_params_release(&params);
		if (err &&
		    (err->code == GC_ENOTFOUND ||
		     strcmp(err->cloud_code, "InvalidAMIID.Malformed") == 0)) {
			struct gc_error was = *err;

			gc_error_set(err, was.code, "image '%s' not found in %s", id, p->region);
			gc_error_set_cloud(err, was.cloud_code, was.request_id, was.http_status);
		}
		return -1;
	}
	gc_params_release(&params);
	cache_images(d, ims, n);
	free(ims);
	if (!(*out = image_cached(d, id)))
		return gc_error_set(err, GC_ENOTFOUND, "image '%s' not found in %s", id, p->region);
	return 0;
}

struct aws_alias_def {
	const char *alias;
	const char *owner;
	const char *name; /* DescribeImages name filter, with wildcards */
};

/* The aliases of docs/spec.md (image:), as AWS publishes them. */
static const struct aws_alias_def alias_defs[] = {
	{ "ubuntu-22.04", AWS_CANONICAL_OWNER,
	  "ubuntu/images/hvm-ssd*/ubuntu-jammy-22.04-amd64-server-*" },
	{ "ubuntu-24.04", AWS_CANONICAL_OWNER,
	  "ubuntu/images/hvm-ssd*/ubuntu-noble-24.04-amd64-server-*" },
	{ "gpu-ready", "amazon", "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*" },
	{ "dlami", "amazon", "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*" },
};

static int resolve_alias(struct gc_provider *p, const char *alias, char **out_id,
			 struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	const struct aws_alias_def *def = NULL;
	const char *cached;
	struct gc_params params = GC_PARAMS_INIT;
	struct aws_image *ims = NULL, *best = NULL;
	size_t n = 0;

	if ((cached = gc_params_get(&d->aliases, alias))) {
		*out_id = gc_xstrdup(cached);
		return 0;
	}
	for (size_t i = 0; i < sizeof(alias_defs) / sizeof(alias_defs[0]); i++)
		if (strcmp(alias_defs[i].alias, alias) == 0)
			def = &alias_defs[i];
	if (!def)
		return gc_error_set(err, GC_EINVALID,
				    "unknown image alias '%s' (aws has ubuntu-22.04, ubuntu-24.04, "
				    "gpu-ready, dlami, or an ami-... id)",
				    alias);
	gc_params_add(&params, "Owner.1", def->owner);
	gc_params_add(&params, "Filter.1.Name", "name");
	gc_params_add(&params, "Filter.1.Value.1", def->name);
	gc_params_add(&params, "Filter.2.Name", "architecture");
	gc_params_add(&params, "Filter.2.Value.1", "x86_64");
	gc_params_add(&params, "Filter.3.Name", "state");
	gc_params_add(&params, "Filter.3.Value.1", "available");
	if (describe_images(p, &params, &ims, &n, err) != 0) {
		gc_params_release(&params);
		return gc_error_prefix(err, "cannot resolve image alias '%s'", alias);
	}
	gc_params_release(&params);
	/* the newest build; ids break a tie so the answer does not depend on list order */
	for (size_t i = 0; i < n; i++)
		if (!best || ims[i].created_at > best->created_at ||
		    (ims[i].created_at == best->created_at && strcmp(ims[i].id, best->id) > 0))
			best = &ims[i];
	if (!best) {
		free(ims);
		return gc_error_set(err, GC_ENOTFOUND,
				    "image alias '%s': no image named '%s' owned by '%s' in %s",
				    alias, def->name, def->owner, p->region);
	}
	*out_id = gc_xstrdup(best->id);
	gc_params_add(&d->aliases, alias, best->id);
	cache_images(d, ims, n);
	free(ims);
	return 0;
}

int aws_resolve_image(struct gc_provider *p, const char *image, bool is_alias, char **out_id,
		      struct gc_error *err)
{
	const struct aws_image *im;

	if (!image || !*image)
		return gc_error_set(err, GC_EINVALID, "no image given");
	if (is_alias)
		return resolve_alias(p, image, out_id, err);
	if (image_by_id(p, image, &im, err) != 0)
		return -1;
	*out_id = gc_xstrdup(im->id);
	return 0;
}

/* ---- create ---------------------------------------------------------------------------- */

/* The user-data script that powers the node off at expires_at (docs/internals/providers.md). */
static char *aws_ttl_user_data(int64_t expires_at)
{
	time_t t = (time_t)expires_at;
	struct tm tm;
	char when[32];

	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		return NULL;
	/*
	 * Powering off is enough: the instance is launched with
	 * InstanceInitiatedShutdownBehavior=terminate, so EC2 terminates it. The timer is
	 * persistent, so a node that was rebooted or stopped past the deadline goes at boot;
	 * and a node that boots after the deadline (it never had the timer) goes at once.
	 */
	return gc_xasprintf(
		"#!/bin/sh\n"
		"# gpucluster: this node expires at %s UTC (gpucluster:expires-at).\n"
		"cat >/etc/systemd/system/gpucluster-expire.service <<'EOF'\n"
		"[Unit]\n"
		"Description=gpucluster: power off at the cluster's expiry time\n"
		"[Service]\n"
		"Type=oneshot\n"
		"ExecStart=/bin/systemctl --no-block poweroff\n"
		"EOF\n"
		"cat >/etc/systemd/system/gpucluster-expire.timer <<'EOF'\n"
		"[Unit]\n"
		"Description=gpucluster: the expiry time of this node\n"
		"[Timer]\n"
		"OnCalendar=%s UTC\n"
		"Persistent=true\n"
		"[Install]\n"
		"WantedBy=timers.target\n"
		"EOF\n"
		"systemctl daemon-reload\n"
		"systemctl enable --now gpucluster-expire.timer\n"
		"if [ \"$(date -u +%%s)\" -ge %lld ]; then systemctl --no-block poweroff; fi\n",
		when, when, (long long)expires_at);
}

/* An account without a default VPC (VPCIdNotSpecified, on CreateSecurityGroup without
 * VpcId and RunInstances without SubnetId): say what to set. */
static void no_default_vpc(struct gc_provider *p, struct gc_error *err)
{
	if (err && strcmp(err->cloud_code, "VPCIdNotSpecified") == 0)
		gc_error_prefix(err,
				"%s has no default VPC: set provider.network (the VPC and a subnet "
				"for each zone; docs/spec.md), or create a default VPC "
				"('aws ec2 create-default-vpc')",
				p->region);
}

/*
 * EFA (docs/internals/fabric.md): network card 0 an EFA with ENA (InterfaceType efa, the
 * primary interface), each further card an EFA-only interface at device index 0, as
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.md describes. The
 * group and subnet go with each interface: RunInstances refuses them at the top as well.
 * A public address is asked for only with one interface (EC2 refuses it with several).
 */
static void add_efa(struct gc_params *params, const struct gc_create_request *req)
{
	for (unsigned i = 0; i < req->rdma_interfaces; i++) {
		char key[64];

		snprintf(key, sizeof(key), "NetworkInterface.%u.NetworkCardIndex", i + 1);
		addu(params, key, i);
		snprintf(key, sizeof(key), "NetworkInterface.%u.DeviceIndex", i + 1);
		addu(params, key, 0);
		snprintf(key, sizeof(key), "NetworkInterface.%u.InterfaceType", i + 1);
		gc_params_add(params, key, i ? "efa-only" : "efa");
		snprintf(key, sizeof(key), "NetworkInterface.%u.DeleteOnTermination", i + 1);
		gc_params_add(params, key, "true");
		if (req->security_group_id) {
			snprintf(key, sizeof(key), "NetworkInterface.%u.SecurityGroupId.1", i + 1);
			gc_params_add(params, key, req->security_group_id);
		}
		if (req->subnet_id) {
			snprintf(key, sizeof(key), "NetworkInterface.%u.SubnetId", i + 1);
			gc_params_add(params, key, req->subnet_id);
		}
	}
	if (req->rdma_interfaces == 1)
		gc_params_add(params, "NetworkInterface.1.AssociatePublicIpAddress", "true");
}

static int create_params(struct gc_provider *p, const struct gc_create_request *req,
			 struct gc_params *params, struct gc_error *err)
{
	const struct aws_image *im;

	if (image_by_id(p, req->image_id, &im, err) != 0)
		return -1;
	gc_params_add(params, "ImageId", req->image_id);
	gc_params_add(params, "InstanceType", req->type);
	addu(params, "MinCount", req->count);
	addu(params, "MaxCount", req->count);
	if (req->client_token)
		gc_params_add(params, "ClientToken", req->client_token);
	if (req->key_name)
		gc_params_add(params, "KeyName", req->key_name);
	/* node_groups[].role: the instance profile (docs/internals/mounts.md) */
	if (req->instance_role)
		gc_params_add(params, "IamInstanceProfile.Name", req->instance_role);
	if (req->rdma_interfaces)
		add_efa(params, req);
	if (req->security_group_id && !req->rdma_interfaces)
		gc_params_add(params, "SecurityGroupId.1", req->security_group_id);
	if (req->zone)
		gc_params_add(params, "Placement.AvailabilityZone", req->zone);
	if (req->placement_id) /* placement: cluster (docs/internals/fabric.md) */
		gc_params_add(params, "Placement.GroupName", req->placement_id);
	/* provider.network: the zone's subnet; else the default VPC's subnet in the zone */
	if (req->subnet_id && !req->rdma_interfaces)
		gc_params_add(params, "SubnetId", req->subnet_id);
	add_tag_spec(params, 1, "instance", req->tags, req->n_tags);
	add_tag_spec(params, 2, "volume", req->tags, req->n_tags);
	if (req->spot) {
		gc_params_add(params, "InstanceMarketOptions.MarketType", "spot");
		gc_params_add(params, "InstanceMarketOptions.SpotOptions.SpotInstanceType",
			      "one-time");
		gc_params_add(params,
			      "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
			      "terminate");
		if (req->spot_max_price > 0) {
			char price[32];
			if (gc_format_bid(req->spot_max_price, 5, price, err) != 0)
				return -1;
			gc_params_add(params, "InstanceMarketOptions.SpotOptions.MaxPrice", price);
		}
	}
	gc_params_add(params, "MetadataOptions.HttpTokens", "required");
	gc_params_add(params, "MetadataOptions.HttpPutResponseHopLimit", "2");
	gc_params_add(params, "MetadataOptions.HttpEndpoint", "enabled");
	if (im->root_device && *im->root_device) {
		gc_params_add(params, "BlockDeviceMapping.1.DeviceName", im->root_device);
		if (req->disk_gb)
			addu(params, "BlockDeviceMapping.1.Ebs.VolumeSize", req->disk_gb);
		gc_params_add(params, "BlockDeviceMapping.1.Ebs.VolumeType", "gp3");
		gc_params_add(params, "BlockDeviceMapping.1.Ebs.Encrypted", "true");
		gc_params_add(params, "BlockDeviceMapping.1.Ebs.DeleteOnTermination", "true");
	}
	gc_params_add(params, "InstanceInitiatedShutdownBehavior", "terminate");
	if (req->expires_at > 0) {
		char *script = aws_ttl_user_data(req->expires_at);
		struct gc_buf b64 = GC_BUF_INIT(64 << 10);

		if (!script || gc_base64_encode(&b64, script, strlen(script)) != 0) {
			free(script);
			gc_buf_release(&b64);
			return gc_error_set(err, GC_EINVALID, "cannot write the TTL user-data");
		}
		gc_params_add(params, "UserData", b64.data);
		free(script);
		gc_buf_release(&b64);
	}
	return 0;
}

/*
 * A launch refused for a vCPU quota: which quota, named as Service Quotas names it, since
 * a user asks for more of exactly that one. Quotas are per market and per family group
 * (EC2 user guide, "On-Demand Instance quotas" and "Spot Instance quotas").
 */
static void name_quota(struct gc_provider *p, const struct gc_create_request *req,
		       struct gc_error *err)
{
	static const struct {
		const char *prefix, *od, *spot;
	} fams[] = {
		{ "p5", "P", "P5" },
		{ "p", "P", "P4, P3 and P2" },
		{ "g", "G and VT", "G and VT" },
		{ "vt", "G and VT", "G and VT" },
		{ "inf", "Inf", "Inf" },
		{ "trn", "Trn", "Trn" },
		{ "dl", "DL", "DL" },
		{ "f", "F", "F" },
		{ "x", "X", "X" },
	};
	const char *od = "Standard (A, C, D, H, I, M, R, T, Z)", *spot = od;

	if (!err || (err->code != GC_EQUOTA && err->code != GC_ESPOTQUOTA) ||
	    (strcmp(err->cloud_code, "VcpuLimitExceeded") != 0 &&
	     strcmp(err->cloud_code, "InstanceLimitExceeded") != 0 &&
	     strcmp(err->cloud_code, "MaxSpotInstanceCountExceeded") != 0))
		return;
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		size_t n = strlen(fams[i].prefix);

		/* the family is the letters before the generation's digit */
		if (strncmp(req->type, fams[i].prefix, n) == 0 &&
		    (isdigit((unsigned char)fams[i].prefix[n - 1]) ||
		     isdigit((unsigned char)req->type[n]))) {
			od = fams[i].od;
			spot = fams[i].spot;
			break;
		}
	}
	if (err->code == GC_ESPOTQUOTA)
		gc_error_prefix(
			err,
			"the spot vCPU quota 'All %s Spot Instance Requests' of region '%s' "
			"is used up (ask for more in Service Quotas, Amazon EC2)",
			spot, p->region);
	else
		gc_error_prefix(
			err,
			"the on-demand vCPU quota 'Running On-Demand %s instances' of region "
			"'%s' is used up (ask for more in Service Quotas, Amazon EC2)",
			od, p->region);
}

/* NotFound for the group or key pair this run just made: EC2 has not caught up yet */
static const char *const unseen_launch[] = { "InvalidGroup.NotFound", "InvalidKeyPair.NotFound",
					     NULL };

int aws_create(struct gc_provider *p, const struct gc_create_request *req,
	       struct gc_instance_list *out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_instance_list got;
	struct gc_buf body = GC_BUF_INIT(1);
	const char *where = req->zone ? req->zone : p->region;
	const char *made[] = { req->security_group_id, req->key_name };
	struct gc_driver_call rc = {
		aws_ec2_call, "RunInstances", &params, req->count, req->client_token == NULL, &body
	};
	int ret = -1;

	gc_instance_list_init(&got);
	if (!req->type || !req->image_id || req->count == 0 || req->count > AWS_CREATE_BATCH)
		return gc_error_set(err, GC_EINVALID,
				    "cannot launch: a type, an image and 1 to %u instances are "
				    "needed",
				    AWS_CREATE_BATCH);
	if (req->n_tags > AWS_MAX_TAGS)
		return gc_error_set(err, GC_EINVALID, "cannot launch: %zu tags, EC2 takes %d",
				    req->n_tags, AWS_MAX_TAGS);
	if (create_params(p, req, &params, err) != 0)
		goto fail;
	/* with a client token a repeat is answered with the first launch; without one a
	 * repeat after a lost answer could launch twice, so only throttling is retried (a
	 * NotFound launched nothing: that one is repeated either way) */
	if (gc_driver_retry_unseen(p, gc_driver_call_attempt, &rc, made, 2, unseen_launch,
				   "the new security group or key pair is not known to EC2 yet",
				   err) != 0)
		goto fail;
	if (aws_xml_instances(body.data, body.len, &got, NULL, err) != 0) {
		bad_answer(p, "RunInstances", err);
		goto fail;
	}
	if (got.n == 0) {
		gc_error_set(err, GC_EBADRESPONSE, "RunInstances answered without instances");
		goto fail;
	}
	for (size_t i = 0; i < got.n; i++)
		if (got.items[i].n_tags == 0) /* an answer that does not echo the tags */
			for (size_t k = 0; k < req->n_tags; k++)
				gc_instance_set_tag(&got.items[i], req->tags[k].key,
						    req->tags[k].value ? req->tags[k].value : "");
	gc_log_debug(p->log, "aws: launched %zu '%s' in '%s'%s", got.n, req->type, where,
		     req->spot ? " (spot)" : "");
	gc_instance_list_take(out, &got);
	ret = 0;
	goto out;
fail:
	name_quota(p, req, err);
	no_default_vpc(p, err);
	gc_error_prefix(err, "cannot launch %u '%s' instance%s in '%s'", req->count, req->type,
			req->count == 1 ? "" : "s", where);
out:
	gc_instance_list_release(&got);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/* ---- terminate ----------------------------------------------------------------------------- */

static int terminate_call(struct gc_provider *p, const char *const *ids, size_t n,
			  struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	int ret;

	for (size_t i = 0; i < n; i++)
		addf(&params, ids[i], "InstanceId.%zu", i + 1);
	ret = aws_ec2_call(p, "TerminateInstances", &params, (unsigned)n, false, &body, err);
	gc_params_release(&params);
	/* a termination counts once the answer names it (instancesSet, with its state) */
	for (size_t i = 0; ret == 0 && i < n; i++) {
		char *want = gc_xasprintf("<instanceId>%s</instanceId>", ids[i]);

		if (!strstr(body.data ? body.data : "", want))
			ret = gc_error_set(err, GC_EBADRESPONSE,
					   "TerminateInstances: the answer does not list instance "
					   "'%s'",
					   ids[i]);
		free(want);
	}
	gc_buf_release(&body);
	return ret;
}

int aws_terminate(struct gc_provider *p, const char *const *ids, size_t n, struct gc_error *err)
{
	/* an unknown id fails the whole call with InvalidInstanceID.NotFound naming it: long
	 * gone, or launched a moment ago and not known here yet (eventual consistency), so
	 * the rest go on and the teardown's Describe is the judge (executor.md) */
	return gc_driver_terminate_dropping_gone(p, ids, n, AWS_TERMINATE_BATCH, terminate_call,
						 "InvalidInstanceID.NotFound", err);
}

/* ---- expiry ------------------------------------------------------------------------------- */

/* A tag set by CreateTags or, without a value, removed by DeleteTags (whatever its value). */
int aws_set_tag(struct gc_provider *p, const char *const *ids, size_t n, const char *key,
		const char *value, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	int ret;

	for (size_t i = 0; i < n; i++)
		addf(&params, ids[i], "ResourceId.%zu", i + 1);
	gc_params_add(&params, "Tag.1.Key", key);
	if (value)
		gc_params_add(&params, "Tag.1.Value", value);
	ret = aws_ec2_call(p, value ? "CreateTags" : "DeleteTags", &params, 0, false, &body, err);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/* The expires-at tag only. EC2's own timer is the power-off the launch's user-data set up,
 * which no API call reaches: it stays (no GC_CAP_TTL_MOVES). */
int aws_set_expiry(struct gc_provider *p, const char *const *ids, size_t n, int64_t expires_at,
		   struct gc_error *err)
{
	char when[21];

	if (expires_at)
		gc_format_rfc3339(expires_at, when);
	return aws_set_tag(p, ids, n, GC_TAG_EXPIRES_AT, expires_at ? when : NULL, err);
}

/* ---- key pairs and security groups --------------------------------------------------------- */

/* A Describe without paging (one answer holds every resource of the region), by tag,
 * parsed by parse: DescribeKeyPairs and DescribePlacementGroups. */
static int list_unpaged(struct gc_provider *p, const char *action,
			int (*parse)(const char *xml, size_t len, struct gc_resource_list *out,
				     struct gc_error *err),
			const struct gc_tag_filter *tags, size_t n_tags,
			struct gc_resource_list *out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_resource_list got;
	struct gc_buf body;
	unsigned idx = 1;
	int ret;

	gc_resource_list_init(&got);
	add_tag_filters(&params, tags, n_tags, &idx);
	ret = aws_ec2_call(p, action, &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 && (ret = parse(body.data, body.len, &got, err)) != 0)
		bad_answer(p, action, err);
	gc_buf_release(&body);
	if (ret == 0)
		gc_resource_list_take_tagged(out, &got, tags, n_tags);
	gc_resource_list_release(&got);
	return ret;
}

static int list_keypairs(struct gc_provider *p, const struct gc_tag_filter *tags, size_t n_tags,
			 struct gc_resource_list *out, struct gc_error *err)
{
	return list_unpaged(p, "DescribeKeyPairs", aws_xml_keypairs, tags, n_tags, out, err);
}

struct secgroups_ctx {
	const struct gc_params *extra;
	const struct gc_tag_filter *tags;
	size_t n_tags;
	struct gc_resource_list got;
};

static int secgroups_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			  struct gc_buf *body, struct gc_error *err)
{
	const struct secgroups_ctx *c = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	unsigned idx = 1;
	int ret;

	if (c->extra) {
		/* extra holds whole filters (Filter.N.*); ours follow them */
		gc_params_add_all(&params, c->extra);
		for (size_t i = 0; i < c->extra->n; i++)
			if (gc_starts_with(c->extra->items[i].name, "Filter.") &&
			    gc_ends_with(c->extra->items[i].name, ".Name"))
				idx++;
	}
	add_tag_filters(&params, c->tags, c->n_tags, &idx);
	addu(&params, "MaxResults", AWS_PAGE_SIZE);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	ret = aws_ec2_call(p, "DescribeSecurityGroups", &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int secgroups_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			   struct gc_page *pg, struct gc_error *err)
{
	struct secgroups_ctx *c = ctx;

	if (aws_xml_secgroups(body->data, body->len, &c->got, &pg->next, err) != 0)
		return bad_answer(p, "DescribeSecurityGroups", err);
	return 0;
}

static int list_secgroups(struct gc_provider *p, const struct gc_params *extra,
			  const struct gc_tag_filter *tags, size_t n_tags,
			  struct gc_resource_list *out, struct gc_error *err)
{
	static const struct gc_pager pager = { "DescribeSecurityGroups", NULL, secgroups_send,
					       secgroups_parse };
	struct secgroups_ctx c = { .extra = extra, .tags = tags, .n_tags = n_tags };
	int ret;

	gc_resource_list_init(&c.got);
	ret = gc_driver_pages(p, &pager, &c, err);
	if (ret == 0)
		gc_resource_list_take_tagged(out, &c.got, tags, n_tags);
	gc_resource_list_release(&c.got);
	return ret;
}

static int list_placements(struct gc_provider *p, const struct gc_tag_filter *tags, size_t n_tags,
			   struct gc_resource_list *out, struct gc_error *err)
{
	return list_unpaged(p, "DescribePlacementGroups", aws_xml_placement_groups, tags, n_tags,
			    out, err);
}

int aws_list_resources(struct gc_provider *p, enum gc_resource_kind kind,
		       const struct gc_tag_filter *tags, size_t n_tags,
		       struct gc_resource_list *out, struct gc_error *err)
{
	switch (kind) {
	case GC_RESOURCE_KEYPAIR:
		if (list_keypairs(p, tags, n_tags, out, err) != 0)
			return gc_error_prefix(err, "cannot list key pairs in '%s'", p->region);
		return 0;
	case GC_RESOURCE_SECGROUP:
		if (list_secgroups(p, NULL, tags, n_tags, out, err) != 0)
			return gc_error_prefix(err, "cannot list security groups in '%s'",
					       p->region);
		return 0;
	case GC_RESOURCE_PLACEMENT:
		if (list_placements(p, tags, n_tags, out, err) != 0)
			return gc_error_prefix(err, "cannot list placement groups in '%s'",
					       p->region);
		return 0;
	case GC_RESOURCE_ADDRESS:
		if (list_unpaged(p, "DescribeAddresses", aws_xml_addresses, tags, n_tags, out, err))
			return gc_error_prefix(err, "cannot list Elastic IP addresses in '%s'",
					       p->region);
		return 0;
	}
	return gc_error_set(err, GC_EINVALID, "unknown resource kind %d", (int)kind);
}

static int lookup_keypair(struct gc_provider *p, const char *name, char **line, char **id,
			  struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	int ret;

	gc_params_add(&params, "KeyName.1", name);
	gc_params_add(&params, "IncludePublicKey", "true");
	ret = aws_ec2_call(p, "DescribeKeyPairs", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 &&
	    (ret = aws_xml_keypair_public(body.data, body.len, name, line, id, err)) != 0)
		bad_answer(p, "DescribeKeyPairs", err);
	gc_buf_release(&body);
	return ret;
}

static int import_keypair(struct gc_provider *p, const struct gc_keypair_request *req,
			  char **out_id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf b64 = GC_BUF_INIT(64 << 10), body = GC_BUF_INIT(1);
	char *id = NULL;
	int ret = -1;

	if (gc_base64_encode(&b64, req->public_key_line, strlen(req->public_key_line)) != 0) {
		gc_error_set(err, GC_ETOOBIG, "the public key is too long");
		goto out;
	}
	gc_params_add(&params, "KeyName", req->name);
	gc_params_add(&params, "PublicKeyMaterial", b64.data);
	add_tag_spec(&params, 1, "key-pair", req->tags, req->n_tags);
	if (aws_ec2_call(p, "ImportKeyPair", &params, 0, false, &body, err) != 0)
		goto out;
	if (aws_xml_root_text(body.data, body.len, "keyPairId", &id, err) != 0) {
		bad_answer(p, "ImportKeyPair", err);
		goto out;
	}
	if (!id || !*id) {
		gc_error_set(err, GC_EBADRESPONSE, "ImportKeyPair answered without a keyPairId");
		goto out;
	}
	gc_driver_made(p, req->name); /* RunInstances names it */
	*out_id = id;
	id = NULL;
	ret = 0;
out:
	free(id);
	gc_params_release(&params);
	gc_buf_release(&b64);
	gc_buf_release(&body);
	return ret;
}

static const struct gc_driver_keypair keypair_import = {
	import_keypair,
	lookup_keypair,
	(const char *const[]){ "InvalidKeyPair.Duplicate", NULL },
	NULL,
	400,
};

int aws_import_keypair(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		       struct gc_error *err)
{
	return gc_driver_import_keypair(p, &keypair_import, req, out_id, err);
}

int aws_delete_keypair(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "KeyPairId", id);
	ret = call_only(p, "DeleteKeyPair", &params, err);
	if (ret != 0 && err && err->code == GC_ENOTFOUND)
		return 0; /* already gone: what we wanted */
	if (ret != 0)
		return gc_error_prefix(err, "cannot delete key pair '%s'", id);
	return 0;
}

/*
 * One AuthorizeSecurityGroupIngress: the SSH port from cidrs (n = 0: no SSH permission)
 * and, with members, every protocol and port from the group itself: IpProtocol -1 (every
 * port, whatever the range) with the group as its source, IpPermissions.N.Groups.M.GroupId
 * in the Query API. One call carries both, and EC2 adds all of it or none.
 */
static int authorize(struct gc_provider *p, const char *group_id, unsigned port,
		     const char *const *cidrs, size_t n, const char *description, bool members,
		     struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	char port_s[16];
	unsigned perm = 0;

	snprintf(port_s, sizeof(port_s), "%u", port);
	gc_params_add(&params, "GroupId", group_id);
	if (n) {
		perm++;
		addf(&params, "tcp", "IpPermissions.%u.IpProtocol", perm);
		addf(&params, port_s, "IpPermissions.%u.FromPort", perm);
		addf(&params, port_s, "IpPermissions.%u.ToPort", perm);
		for (size_t i = 0, v4 = 0, v6 = 0; i < n; i++) {
			/* an IPv6 block has a list of its own: IpRanges refuses it */
			bool six = gc_cidr_text_is_ipv6(cidrs[i]);
			const char *list = six ? "Ipv6Ranges" : "IpRanges";
			size_t m = six ? ++v6 : ++v4;

			addf(&params, cidrs[i],
			     six ? "IpPermissions.%u.%s.%zu.CidrIpv6"
				 : "IpPermissions.%u.%s.%zu.CidrIp",
			     perm, list, m);
			addf(&params, description, "IpPermissions.%u.%s.%zu.Description", perm,
			     list, m);
		}
	}
	if (members) {
		perm++;
		addf(&params, "-1", "IpPermissions.%u.IpProtocol", perm);
		addf(&params, group_id, "IpPermissions.%u.Groups.1.GroupId", perm);
		addf(&params, "gpucluster members", "IpPermissions.%u.Groups.1.Description", perm);
	}
	return call_only(p, "AuthorizeSecurityGroupIngress", &params, err);
}

/*
 * The self-referencing egress rule that EFA requires besides the members' ingress rule
 * ("Prepare an EFA-enabled security group", EC2 User Guide): every protocol to the group
 * itself. EC2's default allow-all egress rule stays (docs/internals/fabric.md).
 */
static int authorize_egress(struct gc_provider *p, const char *group_id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;

	gc_params_add(&params, "GroupId", group_id);
	gc_params_add(&params, "IpPermissions.1.IpProtocol", "-1");
	gc_params_add(&params, "IpPermissions.1.Groups.1.GroupId", group_id);
	gc_params_add(&params, "IpPermissions.1.Groups.1.Description", GC_RULE_MEMBERS);
	return call_only(p, "AuthorizeSecurityGroupEgress", &params, err);
}

/* The group's ingress and egress rules, one per source (DescribeSecurityGroups by
 * GroupId). */
static int list_rules(struct gc_provider *p, const char *group_id, struct aws_sg_rule **out,
		      size_t *n, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	int ret;

	gc_params_add(&params, "GroupId.1", group_id);
	ret = aws_ec2_call(p, "DescribeSecurityGroups", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 && (ret = aws_xml_sg_rules(body.data, body.len, out, n, err)) != 0)
		bad_answer(p, "DescribeSecurityGroups", err);
	gc_buf_release(&body);
	return ret;
}

/* One RevokeSecurityGroupIngress for the rules marked in drop, as EC2 listed them (the
 * description need not be given: EC2 matches protocol, ports and source). */
static int revoke(struct gc_provider *p, const char *group_id, const struct aws_sg_rule *r,
		  const bool *drop, size_t n, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	unsigned perm = 0;
	char port[16];

	gc_params_add(&params, "GroupId", group_id);
	for (size_t i = 0; i < n; i++) {
		if (!drop[i])
			continue;
		perm++;
		addf(&params, r[i].protocol, "IpPermissions.%u.IpProtocol", perm);
		if (strcmp(r[i].protocol, "-1") != 0) {
			snprintf(port, sizeof(port), "%d", r[i].from);
			addf(&params, port, "IpPermissions.%u.FromPort", perm);
			snprintf(port, sizeof(port), "%d", r[i].to);
			addf(&params, port, "IpPermissions.%u.ToPort", perm);
		}
		if (r[i].group)
			addf(&params, r[i].group, "IpPermissions.%u.Groups.1.GroupId", perm);
		else if (r[i].cidr && gc_cidr_text_is_ipv6(r[i].cidr))
			addf(&params, r[i].cidr, "IpPermissions.%u.Ipv6Ranges.1.CidrIpv6", perm);
		else
			addf(&params, r[i].cidr ? r[i].cidr : "",
			     "IpPermissions.%u.IpRanges.1.CidrIp", perm);
	}
	return call_only(p, "RevokeSecurityGroupIngress", &params, err);
}

/*
 * One pass of the reconciliation: list, diff (core/rules.h), authorize what is missing
 * (SSH first, so that a changed allow_from never leaves a gap) and the members' egress
 * rule, revoke ours that the spec no longer wants (an egress rule never is).
 */
static int reconcile_once(struct gc_provider *p, const struct gc_secgroup_request *req,
			  const char *group_id, bool fresh, struct gc_error *err)
{
	struct aws_sg_rule *raw = NULL;
	struct gc_rule *have = NULL, *want = NULL;
	const char **cidrs = NULL;
	bool *add = NULL, *drop = NULL, members = false, egress_self = false;
	size_t n_raw = 0, n_want, n_cidrs = 0, n_drop = 0, n_mon;
	int ret = -1;

	if (!fresh && list_rules(p, group_id, &raw, &n_raw, err) != 0)
		return -1;
	have = gc_xcalloc(n_raw + 1, sizeof(*have));
	for (size_t i = 0; i < n_raw; i++) {
		/* an egress rule stays a zeroed have[i]: foreign, and like no wanted rule */
		if (raw[i].egress) {
			egress_self = egress_self ||
				(strcmp(raw[i].protocol, "-1") == 0 && raw[i].group &&
				 !strcmp(raw[i].group, group_id));
			continue;
		}
		have[i].all = strcmp(raw[i].protocol, "-1") == 0;
		if (strcmp(raw[i].protocol, "tcp") == 0 && raw[i].from == raw[i].to &&
		    raw[i].from > 0)
			have[i].port = (unsigned)raw[i].from;
		have[i].cidr = raw[i].cidr;
		have[i].group = raw[i].group;
		have[i].ours = gc_rule_is_ours(raw[i].description);
	}
	n_want = gc_rules_wanted(req, group_id, true, &want);
	add = gc_xcalloc(n_want + 1, sizeof(*add));
	drop = gc_xcalloc(n_raw + 1, sizeof(*drop));
	gc_rules_diff(want, n_want, have, n_raw, add, drop);
	cidrs = gc_xcalloc(n_want + 1, sizeof(*cidrs));
	for (size_t i = 0; i < n_want; i++)
		members = members || (add[i] && want[i].all);
	n_cidrs = gc_rules_cidrs(want, add, n_want, req->ssh_port, cidrs);
	for (size_t i = 0; i < n_raw; i++)
		n_drop += drop[i];
	if ((n_cidrs || members) &&
	    authorize(p, group_id, req->ssh_port, cidrs, n_cidrs, GC_RULE_SSH, members, err) != 0)
		goto out;
	n_mon = gc_rules_cidrs(want, add, n_want, req->monitoring_port, cidrs);
	if (n_mon && req->monitoring_port != req->ssh_port &&
	    authorize(p, group_id, req->monitoring_port, cidrs, n_mon, GC_RULE_MONITORING, false,
		      err) != 0)
		goto out;
	if (req->allow_members && !egress_self && authorize_egress(p, group_id, err) != 0)
		goto out;
	if (n_drop && revoke(p, group_id, raw, drop, n_raw, err) != 0)
		goto out;
	ret = 0;
out:
	free(cidrs);
	free(add);
	free(drop);
	free(want);
	free(have);
	aws_sg_rules_release(raw, n_raw);
	return ret;
}

/*
 * The group's rules made to match the request: missing ones added, ours that are no
 * longer wanted revoked, foreign ones left alone. A rule that appeared or went between
 * the listing and the change (a retried call whose first answer was lost, a concurrent
 * run) fails the change with Duplicate or NotFound: then one more pass judges afresh.
 * A group made by this call (fresh) has no rules to list.
 */
struct rules_call {
	const struct gc_secgroup_request *req;
	const char *group_id;
	bool fresh;
};

static int rules_call(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	const struct rules_call *rc = ctx;

	return reconcile_once(p, rc->req, rc->group_id, rc->fresh, err);
}

static int ensure_rules(struct gc_provider *p, const struct gc_secgroup_request *req,
			const char *group_id, bool fresh, struct gc_error *err)
{
	static const char *const unseen[] = { "InvalidGroup.NotFound", NULL };
	struct rules_call rc = { req, group_id, fresh };

	/* a group just made may be NotFound to AuthorizeSecurityGroupIngress for a while */
	if (gc_driver_retry_unseen(p, rules_call, &rc, &group_id, 1, unseen,
				   "the new security group is not known to EC2 yet", err) == 0)
		return 0;
	if (!err ||
	    (strcmp(err->cloud_code, "InvalidPermission.Duplicate") != 0 &&
	     strcmp(err->cloud_code, "InvalidPermission.NotFound") != 0))
		return -1;
	gc_error_init(err);
	return reconcile_once(p, req, group_id, false, err);
}

/* CreateSecurityGroup answered InvalidGroup.Duplicate: ours if it carries our tags. */
static int adopt_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req,
			  char **out_id, struct gc_error *err)
{
	struct gc_params by_name = GC_PARAMS_INIT;
	struct gc_resource_list found;
	struct gc_tag_filter *want = gc_xcalloc(req->n_tags + 1, sizeof(*want));
	int ret;

	for (size_t i = 0; i < req->n_tags; i++) {
		want[i].key = req->tags[i].key;
		want[i].value = req->tags[i].value;
	}
	gc_resource_list_init(&found);
	gc_params_add(&by_name, "Filter.1.Name", "group-name");
	gc_params_add(&by_name, "Filter.1.Value.1", req->name);
	ret = list_secgroups(p, &by_name, want, req->n_tags, &found, err);
	if (ret == 0 && found.n != 1) {
		ret = gc_error_set(err, GC_EINVALID,
				   "a security group named '%s' already exists and is not ours",
				   req->name);
		gc_error_set_cloud(err, "InvalidGroup.Duplicate", NULL, 400);
	}
	if (ret == 0) {
		*out_id = found.items[0].id;
		found.items[0].id = NULL;
	}
	gc_resource_list_release(&found);
	gc_params_release(&by_name);
	free(want);
	return ret;
}

int aws_create_secgroup(struct gc_provider *p, const struct gc_secgroup_request *req, char **out_id,
			struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	char *id = NULL;
	bool created = false;
	int ret = -1;

	if (!req->name || !req->n_allow_from || req->ssh_port == 0 || req->ssh_port > 65535)
		return gc_error_set(err, GC_EINVALID,
				    "cannot create a security group without a "
				    "name, a port and an address to allow");
	if (req->id) {
		id = gc_xstrdup(req->id);
		goto rules;
	}
	gc_params_add(&params, "GroupName", req->name);
	gc_params_add(&params, "GroupDescription",
		      req->description && *req->description ? req->description : "gpucluster");
	if (req->vpc_id)
		gc_params_add(&params, "VpcId", req->vpc_id);
	add_tag_spec(&params, 1, "security-group", req->tags, req->n_tags);
	if (aws_ec2_call(p, "CreateSecurityGroup", &params, 0, false, &body, err) == 0) {
		if (aws_xml_root_text(body.data, body.len, "groupId", &id, err) != 0) {
			bad_answer(p, "CreateSecurityGroup", err);
			goto fail;
		}
		if (!id || !*id) {
			gc_error_set(err, GC_EBADRESPONSE,
				     "CreateSecurityGroup answered without a "
				     "groupId");
			goto fail;
		}
		created = true;
		gc_driver_made(p, id);
	} else if (!err || strcmp(err->cloud_code, "InvalidGroup.Duplicate") != 0 ||
		   adopt_secgroup(p, req, &id, err) != 0) {
		goto fail;
	}
rules:
	if (ensure_rules(p, req, id, created, err) != 0) {
		if (created)
			gc_driver_discard_secgroup(p, id, aws_delete_secgroup);
		goto fail;
	}
	*out_id = id;
	id = NULL;
	ret = 0;
	goto out;
fail:
	no_default_vpc(p, err);
	gc_driver_secgroup_failed(req, err);
out:
	free(id);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/*
 * One DeleteSecurityGroup. DependencyViolation while instances that used the group are
 * still shutting down (their network interfaces go a little after them) is a wait, not a
 * failure: gc_driver_delete_secgroup waits it out.
 */
static int delete_secgroup_once(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "GroupId", id);
	ret = call_only(p, "DeleteSecurityGroup", &params, err);
	if (ret != 0 && strcmp(err->cloud_code, "DependencyViolation") == 0)
		return 1;
	return ret;
}

int aws_delete_secgroup(struct gc_provider *p, const char *id, struct gc_error *err)
{
	return gc_driver_delete_secgroup(p, id, delete_secgroup_once, err);
}

/* ---- placement groups (placement: cluster, docs/internals/fabric.md) ---------------------- */

/* A cluster placement group, tagged at creation; its name is its id for the other calls. */
int aws_create_placement(struct gc_provider *p, const struct gc_placement_request *req,
			 char **out_id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "GroupName", req->name);
	gc_params_add(&params, "Strategy", "cluster");
	add_tag_spec(&params, 1, "placement-group", req->tags, req->n_tags);
	ret = call_only(p, "CreatePlacementGroup", &params, err);
	if (ret == 0)
		*out_id = gc_xstrdup(req->name);
	return ret;
}

/* DeletePlacementGroup refuses a group instances still use (InvalidPlacementGroup.InUse):
 * teardown asks once every instance is gone. A group already gone is not an error. */
int aws_delete_placement(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "GroupName", id);
	ret = call_only(p, "DeletePlacementGroup", &params, err);
	if (ret != 0 && err && strcmp(err->cloud_code, "InvalidPlacementGroup.Unknown") == 0) {
		gc_error_init(err);
		return 0;
	}
	return ret;
}

/* ---- Elastic IP addresses (docs/internals/fabric.md, "A reachable address") ----------------- */

/* AllocateAddress in the VPC domain, tagged at allocation. Not repeated after an ambiguous
 * failure: a second address would be billed; the next apply allocates again. */
int aws_create_address(struct gc_provider *p, const struct gc_tag *tags, size_t n_tags,
		       char **out_id, char **out_ip, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	char *id = NULL, *ip = NULL;
	int ret;

	gc_params_add(&params, "Domain", "vpc");
	add_tag_spec(&params, 1, "elastic-ip", tags, n_tags);
	ret = aws_ec2_call(p, "AllocateAddress", &params, 0, true, &body, err);
	gc_params_release(&params);
	if (ret == 0 &&
	    (aws_xml_root_text(body.data, body.len, "allocationId", &id, err) != 0 ||
	     aws_xml_root_text(body.data, body.len, "publicIp", &ip, err) != 0 || !id || !*id ||
	     !ip || !*ip)) {
		if (err && err->code == GC_OK)
			gc_error_set(err, GC_EBADRESPONSE,
				     "the answer has no allocationId or publicIp");
		ret = bad_answer(p, "AllocateAddress", err);
	}
	gc_buf_release(&body);
	if (ret != 0) {
		free(id);
		free(ip);
		return ret;
	}
	*out_id = id;
	*out_ip = ip;
	return 0;
}

/* AssociateAddress names the primary interface: EC2 refuses an instance id when the
 * instance has several interfaces (InvalidInstanceID), and an EFA-only one takes no IP. */
int aws_attach_address(struct gc_provider *p, const char *id, const char *instance_id,
		       struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	char *eni = NULL;
	int ret;

	gc_params_add(&params, "InstanceId.1", instance_id);
	ret = aws_ec2_call(p, "DescribeInstances", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 && (ret = aws_xml_primary_interface(body.data, body.len, &eni, err)) != 0)
		bad_answer(p, "DescribeInstances", err);
	gc_buf_release(&body);
	if (ret != 0)
		return gc_error_prefix(err, "cannot find the primary interface of '%s'",
				       instance_id);
	params = (struct gc_params)GC_PARAMS_INIT;
	gc_params_add(&params, "AllocationId", id);
	gc_params_add(&params, "NetworkInterfaceId", eni);
	ret = call_only(p, "AssociateAddress", &params, err);
	free(eni);
	return ret;
}

/* ReleaseAddress refuses an address still associated (InvalidIPAddress.InUse): teardown
 * asks once the instance is terminated. An address already gone is not an error. */
int aws_delete_address(struct gc_provider *p, const char *id, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "AllocationId", id);
	ret = call_only(p, "ReleaseAddress", &params, err);
	if (ret != 0 && err && strcmp(err->cloud_code, "InvalidAllocationID.NotFound") == 0) {
		gc_error_init(err);
		return 0;
	}
	return ret;
}

/* ---- catalogue: types, prices, zones ---------------------------------------------------------- */

int aws_instance_type(struct gc_provider *p, const char *type, struct gc_type_facts *out,
		      struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	struct gc_type_facts *got = NULL;
	size_t n = 0, alloc = 0;
	int ret;

	for (size_t i = 0; i < d->n_types; i++)
		if (strcmp(d->types[i].name, type) == 0) {
			*out = d->types[i];
			return 0;
		}
	gc_params_add(&params, "InstanceType.1", type);
	ret = aws_ec2_call(p, "DescribeInstanceTypes", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 &&
	    (ret = aws_xml_instance_types(body.data, body.len, &got, &n, &alloc, NULL, err)) != 0)
		bad_answer(p, "DescribeInstanceTypes", err);
	gc_buf_release(&body);
	if (ret != 0 && err && strcmp(err->cloud_code, "InvalidInstanceType") == 0) {
		err->code = GC_ENOTFOUND;
		ret = gc_error_prefix(err, "instance type '%s' is not offered in %s", type,
				      p->region);
	} else if (ret != 0) {
		ret = gc_error_prefix(err, "cannot look up instance type '%s'", type);
	}
	for (size_t i = 0; ret == 0 && i < n; i++)
		if (strcmp(got[i].name, type) == 0) {
			GC_ALLOC_GROW(d->types, d->n_types + 1, d->alloc_types);
			d->types[d->n_types++] = got[i];
			*out = got[i];
			free(got);
			return 0;
		}
	free(got);
	if (ret == 0)
		ret = gc_error_set(err, GC_ENOTFOUND, "instance type '%s' is not offered in %s",
				   type, p->region);
	return ret;
}

/*
 * The current spot price of type in every zone (DescribeSpotPriceHistory with StartTime
 * now answers the price in effect per zone), cached per zone and as the region's lowest.
 */
struct spot_ctx {
	const char *type;
	char now[32];
	struct aws_spot_price *sp;
	size_t n, alloc;
};

static int spot_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
		     struct gc_buf *body, struct gc_error *err)
{
	const struct spot_ctx *c = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "InstanceType.1", c->type);
	gc_params_add(&params, "ProductDescription.1", "Linux/UNIX");
	gc_params_add(&params, "StartTime", c->now);
	addu(&params, "MaxResults", AWS_PAGE_SIZE);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	ret = aws_ec2_call(p, "DescribeSpotPriceHistory", &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int spot_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
		      struct gc_page *pg, struct gc_error *err)
{
	struct spot_ctx *c = ctx;

	if (aws_xml_spot_prices(body->data, body->len, &c->sp, &c->n, &c->alloc, &pg->next, err) !=
	    0)
		return bad_answer(p, "DescribeSpotPriceHistory", err);
	return 0;
}

static int fetch_spot(struct gc_provider *p, const char *type, struct gc_error *err)
{
	static const struct gc_pager pager = { "DescribeSpotPriceHistory", NULL, spot_send,
					       spot_parse };
	struct aws_driver *d = aws_driver(p);
	struct spot_ctx c = { .type = type };
	struct aws_spot_price *sp;
	size_t n;
	int ret;

	iso_now(c.now);
	ret = gc_driver_pages(p, &pager, &c, err);
	sp = c.sp;
	n = c.n;
	if (ret == 0) {
		double lowest = -1;

		/* the latest record of each zone is its price now */
		for (size_t i = 0; i < n; i++) {
			bool latest = true;

			for (size_t k = 0; k < n && latest; k++)
				latest = k == i || strcmp(sp[k].zone, sp[i].zone) != 0 ||
					sp[k].at < sp[i].at || (sp[k].at == sp[i].at && k > i);
			if (!latest || gc_price_cache_find(&d->prices, type, sp[i].zone, true))
				continue;
			gc_price_cache_add(&d->prices, type, sp[i].zone, true, sp[i].price, "USD");
			if (lowest < 0 || sp[i].price < lowest)
				lowest = sp[i].price;
		}
		if (lowest >= 0)
			gc_price_cache_add(&d->prices, type, NULL, true, lowest, "USD");
	}
	for (size_t i = 0; i < n; i++)
		free(sp[i].zone);
	free(sp);
	return ret;
}

/* AWS Price List and spot price history answer in USD, whatever the account. */
int aws_price(struct gc_provider *p, const char *type, const char *zone, bool spot, double *out,
	      char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	const struct gc_price_entry *c;
	double usd;

	if (!spot) {
		/* on-demand prices are per region, the zone does not matter */
		if ((c = gc_price_cache_find(&d->prices, type, NULL, false))) {
			*out = c->amount;
			snprintf(out_currency, GC_CURRENCY_SIZE, "%s", c->currency);
			return 0;
		}
		if (aws_pricing_on_demand(p, type, &usd, err) != 0)
			return gc_error_prefix(err, "cannot get the on-demand price of '%s' in %s",
					       type, p->region);
		gc_price_cache_add(&d->prices, type, NULL, false, usd, "USD");
		*out = usd;
		snprintf(out_currency, GC_CURRENCY_SIZE, "USD");
		return 0;
	}
	if (!(c = gc_price_cache_find(&d->prices, type, zone, true)) &&
	    !gc_price_cache_find(&d->prices, type, NULL, true)) {
		if (fetch_spot(p, type, err) != 0)
			return gc_error_prefix(err, "cannot get the spot price of '%s' in %s", type,
					       p->region);
		c = gc_price_cache_find(&d->prices, type, zone, true);
	}
	if (!c)
		return gc_error_set(err, GC_ENOTFOUND, "no spot price for '%s' in %s", type,
				    zone ? zone : p->region);
	*out = c->amount;
	snprintf(out_currency, GC_CURRENCY_SIZE, "%s", c->currency);
	return 0;
}

int aws_zones(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	char **zones = NULL;
	size_t n = 0;
	int ret;

	/* availability zones only: local and wavelength zones are not for GPU clusters */
	gc_params_add(&params, "Filter.1.Name", "zone-type");
	gc_params_add(&params, "Filter.1.Value.1", "availability-zone");
	gc_params_add(&params, "Filter.2.Name", "state");
	gc_params_add(&params, "Filter.2.Value.1", "available");
	ret = aws_ec2_call(p, "DescribeAvailabilityZones", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 && (ret = aws_xml_zones(body.data, body.len, &zones, &n, err)) != 0)
		bad_answer(p, "DescribeAvailabilityZones", err);
	gc_buf_release(&body);
	if (ret != 0) {
		gc_strv_free(zones, n);
		return gc_error_prefix(err, "cannot list the zones of %s", p->region);
	}
	*out = zones;
	*n_out = n;
	return 0;
}

/*
 * provider.network at plan time: DescribeVpcs and DescribeSubnets by filter, not by id,
 * so that an id that does not exist is an empty answer rather than the whole call's
 * InvalidVpcID.NotFound / InvalidSubnetID.NotFound.
 */
int aws_network(struct gc_provider *p, const char *vpc, const char *const *subnets, size_t n,
		bool *vpc_found, struct gc_subnet_facts *out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1);
	char **vpcs = NULL, name[48];
	size_t n_vpcs = 0;
	int ret = -1;

	gc_params_add(&params, "Filter.1.Name", "vpc-id");
	gc_params_add(&params, "Filter.1.Value.1", vpc);
	if (aws_ec2_call(p, "DescribeVpcs", &params, 0, false, &body, err) != 0)
		goto out;
	if (aws_xml_vpcs(body.data, body.len, &vpcs, &n_vpcs, err) != 0) {
		bad_answer(p, "DescribeVpcs", err);
		goto out;
	}
	*vpc_found = false;
	for (size_t i = 0; i < n_vpcs; i++)
		*vpc_found |= strcmp(vpcs[i], vpc) == 0;
	gc_params_release(&params);
	gc_buf_release(&body);
	gc_params_add(&params, "Filter.1.Name", "subnet-id");
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "Filter.1.Value.%zu", i + 1);
		gc_params_add(&params, name, subnets[i]);
	}
	if (aws_ec2_call(p, "DescribeSubnets", &params, 0, false, &body, err) != 0)
		goto out;
	if (aws_xml_subnets(body.data, body.len, subnets, n, out, err) != 0) {
		bad_answer(p, "DescribeSubnets", err);
		goto out;
	}
	ret = 0;
out:
	gc_strv_free(vpcs, n_vpcs);
	gc_params_release(&params);
	gc_buf_release(&body);
	return ret;
}

/* The zones offering type (DescribeInstanceTypeOfferings by availability zone, every page):
 * an offering says EC2 sells the type there, not that it has stock now. */
struct offer_ctx {
	const char *type;
	char **zones;
	size_t n;
};

static int offer_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
		      struct gc_buf *body, struct gc_error *err)
{
	const struct offer_ctx *c = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	int ret;

	gc_params_add(&params, "LocationType", "availability-zone");
	gc_params_add(&params, "Filter.1.Name", "instance-type");
	gc_params_add(&params, "Filter.1.Value.1", c->type);
	addu(&params, "MaxResults", AWS_PAGE_SIZE);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	ret = aws_ec2_call(p, "DescribeInstanceTypeOfferings", &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int offer_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
		       struct gc_page *pg, struct gc_error *err)
{
	struct offer_ctx *c = ctx;

	if (aws_xml_offerings(body->data, body->len, &c->zones, &c->n, &pg->next, err) != 0)
		return bad_answer(p, "DescribeInstanceTypeOfferings", err);
	return 0;
}

int aws_type_zones(struct gc_provider *p, const char *type, char ***out, size_t *n_out,
		   struct gc_error *err)
{
	static const struct gc_pager pager = { "DescribeInstanceTypeOfferings", NULL, offer_send,
					       offer_parse };
	struct offer_ctx c = { .type = type };

	if (gc_driver_pages(p, &pager, &c, err) != 0) {
		gc_strv_free(c.zones, c.n);
		return gc_error_prefix(err, "cannot list the zones offering '%s' in %s", type,
				       p->region);
	}
	*out = c.zones;
	*n_out = c.n;
	return 0;
}

/* The regions the account can use: without AllRegions, EC2 leaves out the opt-in regions
 * that are not enabled, where nothing of ours can be. */
int aws_regions(struct gc_provider *p, char ***out, size_t *n_out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body;
	char **regions = NULL;
	size_t n = 0;
	int ret;

	ret = aws_ec2_call(p, "DescribeRegions", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 && (ret = aws_xml_regions(body.data, body.len, &regions, &n, err)) != 0)
		bad_answer(p, "DescribeRegions", err);
	gc_buf_release(&body);
	if (ret != 0) {
		gc_strv_free(regions, n);
		return gc_error_prefix(err, "cannot list the regions of AWS");
	}
	*out = regions;
	*n_out = n;
	return 0;
}

int aws_console_output(struct gc_provider *p, const char *id, char **out, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_buf body, text = GC_BUF_INIT(AWS_CONSOLE_MAX);
	char *b64 = NULL;
	int ret;

	gc_params_add(&params, "InstanceId", id);
	ret = aws_ec2_call(p, "GetConsoleOutput", &params, 0, false, &body, err);
	gc_params_release(&params);
	if (ret == 0 && (ret = aws_xml_root_text(body.data, body.len, "output", &b64, err)) != 0)
		bad_answer(p, "GetConsoleOutput", err);
	gc_buf_release(&body);
	if (ret == 0 && b64 && gc_base64_decode(&text, b64, strlen(b64)) != 0)
		ret = gc_error_set(err, GC_EBADRESPONSE,
				   "GetConsoleOutput: the output is not base64 or over %zu bytes",
				   (size_t)AWS_CONSOLE_MAX);
	free(b64);
	if (ret != 0) {
		gc_buf_release(&text);
		return gc_error_prefix(err, "cannot read the console of '%s'", id);
	}
	/* NUL-terminated by the buffer; a NUL inside would only cut the text short */
	*out = gc_buf_detach(&text, NULL);
	return 0;
}
