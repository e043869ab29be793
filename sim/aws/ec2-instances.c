/*
 * ec2-instances.c: EC2's instance actions: RunInstances (market options, block devices,
 * client tokens, the shutdown timer a TTL sets), DescribeInstances (filters and
 * pagination by creation sequence), TerminateInstances and GetConsoleOutput, and the
 * instance document they share. Called by ec2.c with the world locked.
 */
#include <libxml/xmlwriter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/aws/aws.h"
#include "sim/aws/ec2.h"
#include "sim/catalog.h"
#include "sim/quota.h"

/* --- instances ------------------------------------------------------------------------ */

static int state_code(enum sim_state s)
{
	switch (s) {
	case SIM_PENDING: return 0;
	case SIM_RUNNING: return 16;
	case SIM_SHUTTING_DOWN: return 32;
	case SIM_STOPPED: return 80;
	default: return 48;
	}
}

static const char *state_name(enum sim_state s)
{
	switch (s) {
	case SIM_PENDING: return "pending";
	case SIM_RUNNING: return "running";
	case SIM_SHUTTING_DOWN: return "shutting-down";
	case SIM_STOPPED: return "stopped";
	default: return "terminated";
	}
}

static void write_state(struct ec2 *c, const char *elem, enum sim_state s)
{
	ec2_open(c, elem);
	ec2_elf(c, "code", "%d", state_code(s));
	ec2_el(c, "name", state_name(s));
	ec2_close(c);
}

static const char *sg_name(struct ec2 *c, const char *id)
{
	struct sim_secgroup *g = sim_world_sg(c->sim->world, SIM_AWS, c->region, id);

	return g ? g->name : id;
}

/* The instance's public address: its Elastic IP, else its own, which EC2 does not give
 * one launched with several interfaces (docs/internals/fabric.md). With SSH nodes the node's
 * own address stays, since only it reaches the node's sshd. */
static const char *public_address(struct ec2 *c, const struct sim_instance *in)
{
	const struct sim_address *a = sim_world_address_of(c->sim->world, in);

	if (a)
		return a->public_ip;
	if (in->interfaces > 1 && !c->sim->world->node_ops)
		return NULL;
	return in->public_ip[0] ? in->public_ip : NULL;
}

/* networkInterfaceSet: the primary interface (an EFA with ENA when it was launched as one
 * or there are several) on card 0, and an EFA-only interface on each further card */
static void write_interfaces(struct ec2 *c, const struct sim_instance *in)
{
	unsigned n = in->interfaces ? in->interfaces : 1;
	bool efa = n > 1 || in->rdma_devices;

	ec2_open(c, "networkInterfaceSet");
	for (unsigned k = 0; k < n; k++) {
		char id[SIM_ID_MAX];

		ec2_eni_id(in, k, id);
		ec2_open(c, "item");
		ec2_el(c, "networkInterfaceId", id);
		ec2_el(c, "interfaceType", k ? "efa-only" : efa ? "efa" : "interface");
		ec2_open(c, "attachment");
		ec2_el(c, "deviceIndex", "0");
		ec2_elf(c, "networkCardIndex", "%u", k);
		ec2_el(c, "status", "attached");
		ec2_close(c);
		ec2_close(c);
	}
	ec2_close(c);
}

static void write_instance(struct ec2 *c, const struct sim_instance *in, unsigned launch_index)
{
	char t[32], host[64];
	bool live = in->state == SIM_PENDING || in->state == SIM_RUNNING;

	ec2_iso_time(in->launch_wall, t);
	snprintf(host, sizeof(host), "ip-%s.ec2.internal", in->private_ip);
	for (char *p = host; *p; p++)
		if (*p == '.' && p < host + 3 + strlen(in->private_ip))
			*p = '-';
	ec2_open(c, "item");
	ec2_el(c, "instanceId", in->id);
	ec2_el(c, "imageId", in->image);
	write_state(c, "instanceState", in->state);
	ec2_el(c, "privateDnsName", live ? host : "");
	/* left empty: a made-up public name would send clients to a DNS lookup */
	ec2_el(c, "dnsName", "");
	ec2_el(c, "reason", in->state >= SIM_SHUTTING_DOWN ? in->state_reason : "");
	if (in->key_name[0])
		ec2_el(c, "keyName", in->key_name);
	ec2_elf(c, "amiLaunchIndex", "%u", launch_index);
	ec2_open(c, "productCodes");
	ec2_close(c);
	ec2_el(c, "instanceType", in->type);
	ec2_el(c, "launchTime", t);
	ec2_open(c, "placement");
	ec2_el(c, "availabilityZone", in->zone);
	ec2_el(c, "groupName",
	       in->placement[0] && sim_world_placement(c->sim->world, SIM_AWS, NULL, in->placement)
		       ? sim_world_placement(c->sim->world, SIM_AWS, NULL, in->placement)->name
		       : "");
	ec2_el(c, "tenancy", "default");
	ec2_close(c);
	ec2_open(c, "monitoring");
	ec2_el(c, "state", "disabled");
	ec2_close(c);
	if (in->state != SIM_TERMINATED) {
		char vpc[SIM_ID_MAX] = EC2_DEFAULT_VPC;

		if (in->subnet[0])
			ec2_subnet_zone(c, in->subnet, vpc);
		ec2_el(c, "subnetId", in->subnet[0] ? in->subnet : "subnet-0a1b2c3d4e5f60001");
		ec2_el(c, "vpcId", vpc);
		ec2_el(c, "privateIpAddress", in->private_ip);
		if (live && public_address(c, in))
			ec2_el(c, "ipAddress", public_address(c, in));
	}
	ec2_el(c, "sourceDestCheck", "true");
	ec2_open(c, "groupSet");
	for (size_t i = 0; i < in->n_security_groups; i++) {
		ec2_open(c, "item");
		ec2_el(c, "groupId", in->security_groups[i]);
		ec2_el(c, "groupName", sg_name(c, in->security_groups[i]));
		ec2_close(c);
	}
	ec2_close(c);
	if (in->state != SIM_TERMINATED)
		write_interfaces(c, in);
	if (in->state >= SIM_SHUTTING_DOWN && in->state_reason[0]) {
		const char *colon = strchr(in->state_reason, ':');
		char code[SIM_NAME_MAX];

		snprintf(code, sizeof(code), "%.*s",
			 colon ? (int)(colon - in->state_reason) : (int)strlen(in->state_reason),
			 in->state_reason);
		ec2_open(c, "stateReason");
		ec2_el(c, "code", code);
		ec2_el(c, "message", in->state_reason);
		ec2_close(c);
	}
	ec2_el(c, "architecture", "x86_64");
	ec2_el(c, "rootDeviceType", "ebs");
	ec2_el(c, "rootDeviceName", "/dev/sda1");
	ec2_open(c, "blockDeviceMapping");
	if (in->state != SIM_TERMINATED) {
		ec2_open(c, "item");
		ec2_el(c, "deviceName", "/dev/sda1");
		ec2_open(c, "ebs");
		ec2_elf(c, "volumeId", "vol-%s", in->id + 2);
		ec2_el(c, "status", in->state == SIM_SHUTTING_DOWN ? "detaching" : "attached");
		ec2_el(c, "attachTime", t);
		ec2_el(c, "deleteOnTermination", "true");
		ec2_close(c);
		ec2_close(c);
	}
	ec2_close(c);
	if (in->spot)
		ec2_el(c, "instanceLifecycle", "spot");
	ec2_el(c, "virtualizationType", "hvm");
	ec2_el(c, "clientToken", in->client_token);
	ec2_write_tags(c, &in->tags);
	ec2_el(c, "hypervisor", "xen");
	ec2_el(c, "ebsOptimized", "false");
	ec2_el(c, "enaSupport", "true");
	ec2_open(c, "metadataOptions");
	ec2_el(c, "state", live ? "applied" : "pending");
	ec2_el(c, "httpTokens", "required");
	ec2_el(c, "httpPutResponseHopLimit", "2");
	ec2_el(c, "httpEndpoint", "enabled");
	ec2_close(c);
	ec2_close(c);
}

/* An instance of this region by id, or NULL (other clouds and regions are invisible). */
struct sim_instance *ec2_find_instance(struct ec2 *c, const char *id)
{
	struct sim_instance *in = sim_world_instance(c->sim->world, SIM_AWS, id);

	return in && strcmp(in->region, c->region) == 0 ? in : NULL;
}

/*
 * Resolves InstanceId.N: malformed ids and unknown ids fail the whole call, as EC2 does.
 * *out receives the instances in the order given.
 */
static int resolve_instances(struct ec2 *c, const char **ids, size_t n, struct sim_instance ***out)
{
	struct gc_buf missing = GC_BUF_INIT(4096);
	size_t n_missing = 0;

	*out = gc_xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		if (!ec2_id_ok(ids[i], "i-")) {
			gc_buf_release(&missing);
			return EC2_FAIL400(c, "InvalidInstanceID.Malformed", "Invalid id: \"%s\"",
					   ids[i]);
		}
		(*out)[i] = ec2_find_instance(c, ids[i]);
		if (!(*out)[i]) {
			gc_buf_addf(&missing, "%s%s", n_missing ? ", " : "", ids[i]);
			n_missing++;
		}
	}
	if (n_missing) {
		int r = EC2_FAIL400(c, "InvalidInstanceID.NotFound",
				    n_missing == 1 ? "The instance ID '%s' does not exist"
						   : "The instance IDs '%s' do not exist",
				    missing.data);
		gc_buf_release(&missing);
		return r;
	}
	gc_buf_release(&missing);
	return 0;
}

/* --- RunInstances --------------------------------------------------------------------- */

struct run {
	const struct sim_itype *type;
	const struct sim_image *image;
	const char *zone;
	struct sim_keypair *key;
	const char **sgs;
	size_t n_sgs;
	const char *subnet;
	struct sim_tags tags;
	bool spot;
	const char *max_price;
	const char *token;
	struct gc_buf user_data;
	unsigned disk_gb;
	int64_t min, max;
	unsigned interfaces; /* NetworkInterface.N given; 0: none */
	unsigned efas;	     /* of them, InterfaceType efa or efa-only */
};

static int run_network(struct ec2 *c, struct run *r);
static int run_efa(struct ec2 *c, struct run *r);

/* IamInstanceProfile.Name: an instance profile's name, [\w+=,.@-]{1,128} (IAM's
 * pattern); the emulator has no IAM, so any name of that shape exists. The Arn form is
 * accepted by the model but not by the emulator. */
static int run_role(struct ec2 *c)
{
	const char *n = ec2_param(c, "IamInstanceProfile.Name");
	size_t len = n ? strlen(n) : 0;

	if (ec2_param(c, "IamInstanceProfile.Arn"))
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "The emulator takes IamInstanceProfile.Name only");
	if (n &&
	    (len < 1 || len > 128 ||
	     strspn(n,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789"
		    "_+=,.@-") != len))
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Value (%s) for parameter iamInstanceProfile.name is invalid. "
				   "Invalid IAM Instance Profile name",
				   n);
	return 0;
}

static int run_market(struct ec2 *c, struct run *r)
{
	static const char *const markets[] = { "spot", "capacity-block", NULL };
	static const char *const kinds[] = { "one-time", "persistent", NULL };
	static const char *const behaviours[] = { "hibernate", "stop", "terminate", NULL };
	const char *market = ec2_param(c, "InstanceMarketOptions.MarketType");
	const char *kind = ec2_param(c, "InstanceMarketOptions.SpotOptions.SpotInstanceType");
	const char *beh =
		ec2_param(c, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior");
	const char *price = ec2_param(c, "InstanceMarketOptions.SpotOptions.MaxPrice");
	double p;

	if (ec2_one_of(c, "InstanceMarketOptions.MarketType", markets) ||
	    ec2_one_of(c, "InstanceMarketOptions.SpotOptions.SpotInstanceType", kinds) ||
	    ec2_one_of(c, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
		       behaviours))
		return -1;
	if (!market) {
		for (size_t i = 0; i < c->p.n; i++)
			if (gc_starts_with(c->p.items[i].name, "InstanceMarketOptions."))
				return EC2_FAIL400(c, "MissingParameter",
						   "The request must contain the parameter "
						   "InstanceMarketOptions.MarketType");
		return 0;
	}
	if (strcmp(market, "spot") != 0)
		return EC2_FAIL400(c, "Unsupported", "The market type '%s' is not supported here",
				   market);
	r->spot = true;
	if (!kind)
		kind = "one-time";
	if (!beh)
		beh = "terminate";
	if (strcmp(kind, "persistent") == 0 && strcmp(beh, "terminate") == 0)
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "A persistent Spot Instance request requires an interruption "
				   "behavior of stop or hibernate");
	if (strcmp(kind, "one-time") == 0 && strcmp(beh, "terminate") != 0)
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "The interruption behavior '%s' requires a persistent Spot "
				   "Instance request",
				   beh);
	if (price) {
		if (gc_parse_double(price, &p) != 0 || p <= 0)
			return ec2_bad_value(c, "InstanceMarketOptions.SpotOptions.MaxPrice",
					     price);
		if (r->type && p < sim_catalog_price(r->type, true))
			return EC2_FAIL400(
				c, "SpotMaxPriceTooLow",
				"Your Spot request price of %s is lower than the minimum "
				"required Spot request fulfillment price of %.4f.",
				price, sim_catalog_price(r->type, true));
		r->max_price = price;
	}
	return 0;
}

static int run_block_devices(struct ec2 *c, struct run *r)
{
	static const char *const vtypes[] = { "standard", "io1", "io2", "gp2",
					      "gp3",	  "sc1", "st1", NULL };
	unsigned *idx;
	size_t n = ec2_indexes(c, "BlockDeviceMapping", &idx);
	int ret = 0;

	for (size_t i = 0; i < n && ret == 0; i++) {
		char name[96];
		const char *dev = ec2_paramf(c, "BlockDeviceMapping.%u.DeviceName", idx[i]);
		int64_t size;
		bool has_size, b;

		if (!dev) {
			ret = EC2_FAIL400(c, "MissingParameter",
					  "The request must contain the parameter "
					  "BlockDeviceMapping.%u.DeviceName",
					  idx[i]);
			break;
		}
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.VolumeSize", idx[i]);
		if ((ret = ec2_int(c, name, 1, 16384, &size, &has_size)) != 0)
			break;
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.VolumeType", idx[i]);
		if ((ret = ec2_one_of(c, name, vtypes)) != 0)
			break;
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.DeleteOnTermination",
			 idx[i]);
		if ((ret = ec2_bool(c, name, true, &b)) != 0)
			break;
		snprintf(name, sizeof(name), "BlockDeviceMapping.%u.Ebs.Encrypted", idx[i]);
		if ((ret = ec2_bool(c, name, false, &b)) != 0)
			break;
		/* the root volume's size is the node's disk */
		if (has_size &&
		    (r->disk_gb == 0 || strcmp(dev, "/dev/sda1") == 0 ||
		     strcmp(dev, "/dev/xvda") == 0))
			r->disk_gb = (unsigned)size;
	}
	free(idx);
	return ret;
}

static int run_validate(struct ec2 *c, struct run *r)
{
	static const char *const tag_types[] = { "instance", "volume", "network-interface",
						 "spot-instances-request", NULL };
	static const char *const tokens[] = { "optional", "required", NULL };
	static const char *const onoff[] = { "enabled", "disabled", NULL };
	static const char *const shutdown[] = { "stop", "terminate", NULL };
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const char *image, *type, *ud, *key;
	int64_t hops;
	bool b;

	if (ec2_require(c, "ImageId", &image) || ec2_require(c, "MinCount", &type) ||
	    ec2_require(c, "MaxCount", &type))
		return -1;
	if (ec2_int(c, "MinCount", 1, INT32_MAX, &r->min, NULL) ||
	    ec2_int(c, "MaxCount", 1, INT32_MAX, &r->max, NULL))
		return -1;
	if (r->min > r->max)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "MinCount (%lld) must not be greater than MaxCount (%lld)",
				   (long long)r->min, (long long)r->max);
	if (!gc_starts_with(image, "ami-") || !ec2_id_ok(image, "ami-"))
		return EC2_FAIL400(c, "InvalidAMIID.Malformed",
				   "Invalid id: \"%s\" (expecting \"ami-...\")", image);
	r->image = sim_catalog_image(SIM_AWS, image);
	if (!r->image)
		return EC2_FAIL400(c, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist",
				   image);
	type = ec2_param(c, "InstanceType");
	if (!type)
		return EC2_FAIL400(c, "MissingParameter",
				   "The request must contain the parameter InstanceType");
	r->type = sim_catalog_itype(SIM_AWS, type);
	if (!r->type)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Invalid value '%s' for InstanceType.", type);

	r->zone = ec2_param(c, "Placement.AvailabilityZone");
	if (r->zone && !sim_catalog_zone_ok(region, r->zone))
		return EC2_FAIL400(c, "InvalidParameterValue", "Invalid availability zone: [%s]",
				   r->zone);
	if (r->zone && !sim_catalog_offered(SIM_AWS, r->zone, r->type->name))
		return EC2_FAIL400(c, "Unsupported",
				   "Your requested instance type (%s) is not supported in your "
				   "requested Availability Zone (%s).",
				   r->type->name, r->zone);
	for (size_t z = 0; !r->zone && region->zones[z]; z++)
		if (sim_catalog_offered(SIM_AWS, region->zones[z], r->type->name))
			r->zone = region->zones[z]; /* EC2 picks one: the first offering it */
	if (!r->zone)
		r->zone = region->zones[0];

	key = ec2_param(c, "KeyName");
	if (key) {
		r->key = sim_world_keypair(c->sim->world, SIM_AWS, c->region, key);
		if (!r->key || strcmp(r->key->name, key) != 0 || sim_ec_miss(&r->key->ec_launch))
			return EC2_FAIL400(c, "InvalidKeyPair.NotFound",
					   "The key pair '%s' does not exist", key);
	}

	r->n_sgs = ec2_list(c, "SecurityGroupId", &r->sgs);
	if (!r->n_sgs) {
		free(r->sgs);
		r->n_sgs = ec2_list(c, "NetworkInterface.1.SecurityGroupId", &r->sgs);
	}
	for (size_t i = 0; i < r->n_sgs; i++) {
		struct sim_secgroup *g = sim_world_sg(c->sim->world, SIM_AWS, c->region, r->sgs[i]);

		if (!g || sim_ec_miss(&g->ec_launch))
			return EC2_FAIL400(c, "InvalidGroup.NotFound",
					   "The security group '%s' does not exist", r->sgs[i]);
	}
	if (!r->n_sgs) {
		/* by name (EC2-Classic style SecurityGroup.N) */
		const char **names;
		size_t nn = ec2_list(c, "SecurityGroup", &names);
		struct sim_secgroup **all;
		size_t na = sim_world_list_sgs(c->sim->world, SIM_AWS, c->region, &all);

		free(r->sgs);
		r->sgs = gc_xcalloc(nn + 1, sizeof(*r->sgs));
		for (size_t i = 0; i < nn; i++) {
			for (size_t k = 0; k < na; k++)
				if (strcmp(all[k]->name, names[i]) == 0)
					r->sgs[r->n_sgs] = all[k]->id;
			if (!r->sgs[r->n_sgs]) {
				free(all);
				int ret = EC2_FAIL400(c, "InvalidGroup.NotFound",
						      "The security group '%s' does not exist in "
						      "default VPC '%s'",
						      names[i], EC2_DEFAULT_VPC);
				free(names);
				return ret;
			}
			r->n_sgs++;
		}
		free(all);
		free(names);
	}

	if (run_efa(c, r) || run_role(c))
		return -1;
	r->subnet = ec2_param(c, "SubnetId");
	if (!r->subnet)
		r->subnet = ec2_param(c, "NetworkInterface.1.SubnetId");
	if (r->subnet && !gc_starts_with(r->subnet, "subnet-"))
		return EC2_FAIL400(c, "InvalidSubnetID.Malformed", "Invalid id: \"%s\"", r->subnet);
	if (run_network(c, r) != 0)
		return -1;

	ud = ec2_param(c, "UserData");
	if (ud) {
		if (gc_base64_decode(&r->user_data, ud, strlen(ud)) != 0)
			return EC2_FAIL400(c, "InvalidParameterValue",
					   "Invalid BASE64 encoding of user data.");
		if (r->user_data.len > 16384)
			return EC2_FAIL400(c, "InvalidParameterValue",
					   "User data is limited to 16384 bytes");
		if (memchr(r->user_data.data, '\0', r->user_data.len))
			return EC2_FAIL400(c, "InvalidParameterValue",
					   "User data must not contain NUL bytes here");
	}

	r->token = ec2_param(c, "ClientToken");
	if (r->token) {
		size_t len = strlen(r->token);
		bool ascii = true;
		for (const char *s = r->token; *s; s++)
			ascii = ascii && *s >= 0x20 && *s < 0x7f;
		if (len > SIM_TOKEN_MAX || !ascii)
			return EC2_FAIL400(
				c, "InvalidParameterValue",
				"Value (%s) for parameter clientToken is invalid. The client "
				"token must be at most 64 ASCII characters",
				r->token);
		if (len == 0)
			r->token = NULL;
	}

	if (ec2_tag_specs(c, tag_types, "instance", &r->tags) != 0)
		return -1;
	if (run_market(c, r) || run_block_devices(c, r))
		return -1;
	if (ec2_one_of(c, "MetadataOptions.HttpTokens", tokens) ||
	    ec2_one_of(c, "MetadataOptions.HttpEndpoint", onoff) ||
	    ec2_one_of(c, "MetadataOptions.HttpProtocolIpv6", onoff) ||
	    ec2_one_of(c, "MetadataOptions.InstanceMetadataTags", onoff) ||
	    ec2_int(c, "MetadataOptions.HttpPutResponseHopLimit", 1, 64, &hops, NULL) ||
	    ec2_one_of(c, "InstanceInitiatedShutdownBehavior", shutdown) ||
	    ec2_bool(c, "EbsOptimized", false, &b) ||
	    ec2_bool(c, "Monitoring.Enabled", false, &b) ||
	    ec2_bool(c, "DisableApiTermination", false, &b) ||
	    ec2_bool(c, "NetworkInterface.1.AssociatePublicIpAddress", false, &b))
		return -1;
	return 0;
}

/*
 * NetworkInterface.N with InterfaceType efa or efa-only: at most the type's
 * EfaInfo.MaximumEfaInterfaces, one per network card; a public address only with one
 * interface; groups and subnet at the top or per interface, not both (fabric.md).
 */
static int run_efa(struct ec2 *c, struct run *r)
{
	unsigned efa = 0, n = 0;

	for (unsigned i = 1; i <= 64; i++) {
		char key[64];
		const char *kind;

		snprintf(key, sizeof(key), "NetworkInterface.%u.DeviceIndex", i);
		if (!ec2_param(c, key))
			break;
		n++;
		snprintf(key, sizeof(key), "NetworkInterface.%u.InterfaceType", i);
		kind = ec2_param(c, key);
		if (kind && strcmp(kind, "interface") && strcmp(kind, "efa") &&
		    strcmp(kind, "efa-only"))
			return EC2_FAIL400(c, "InvalidParameterValue",
					   "Value (%s) for parameter interfaceType is invalid.",
					   kind);
		if (kind && strcmp(kind, "efa-only") == 0 && i == 1)
			return EC2_FAIL400(c, "InvalidParameterCombination",
					   "An EFA-only interface cannot be the primary network "
					   "interface.");
		efa += kind && strncmp(kind, "efa", 3) == 0;
	}
	if (efa && !r->type->rdma_interfaces)
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "EFA interfaces are not supported on %s.", r->type->name);
	if (efa > r->type->rdma_interfaces)
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "You can attach at most %u EFA interfaces to %s.",
				   r->type->rdma_interfaces, r->type->name);
	if (n > 1 && ec2_param(c, "NetworkInterface.1.AssociatePublicIpAddress"))
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "The associatePublicIPAddress parameter cannot be specified "
				   "when launching with multiple network interfaces.");
	if (n && (ec2_param(c, "SecurityGroupId.1") || ec2_param(c, "SubnetId")))
		return EC2_FAIL400(c, "InvalidParameterCombination",
				   "Network interfaces and an instance-level security groups or "
				   "subnet may not be specified on the same request");
	r->interfaces = n;
	r->efas = efa;
	return 0;
}

/*
 * The subnet a launch lands in. Without one EC2 uses the default VPC's subnet in the zone;
 * an account without a default VPC answers VPCIdNotSpecified ("No default VPC for this
 * user", as users of such accounts report it; docs/internals/emulator.md). A subnet must
 * exist, decides the zone, and must be in the security groups' VPC.
 */
static int run_network(struct ec2 *c, struct run *r)
{
	char vpc[SIM_ID_MAX];
	const char *zone;

	if (!r->subnet) {
		if (c->sim->cfg.no_default_vpc)
			return EC2_FAIL400(c, "VPCIdNotSpecified", "No default VPC for this user");
		return 0;
	}
	if (!(zone = ec2_subnet_zone(c, r->subnet, vpc)))
		return EC2_FAIL400(c, "InvalidSubnetID.NotFound",
				   "The subnet ID '%s' does not exist", r->subnet);
	if (ec2_param(c, "Placement.AvailabilityZone") && strcmp(r->zone, zone) != 0)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "Value (%s) for parameter availabilityZone is invalid. Subnet "
				   "'%s' is in the availability zone %s",
				   r->zone, r->subnet, zone);
	r->zone = zone;
	for (size_t i = 0; i < r->n_sgs; i++) {
		const struct sim_secgroup *g =
			sim_world_sg(c->sim->world, SIM_AWS, c->region, r->sgs[i]);

		if (g && strcmp(g->vpc, vpc) != 0)
			return EC2_FAIL400(c, "InvalidParameter",
					   "Security group %s and subnet %s belong to different "
					   "networks.",
					   r->sgs[i], r->subnet);
	}
	return 0;
}

static void write_reservation_head(struct ec2 *c, const char *reservation)
{
	ec2_el(c, "reservationId", reservation);
	ec2_el(c, "ownerId", c->sim->cfg.aws_account);
	ec2_open(c, "groupSet");
	ec2_close(c);
}

/*
 * The node's own expiry timer, as systemd on the node would run it. gpucluster's TTL
 * user-data installs a persistent timer (a line "OnCalendar=YYYY-MM-DD HH:MM:SS UTC")
 * that powers the machine off, and with InstanceInitiatedShutdownBehavior=terminate EC2
 * then terminates it. Nodes run no systemd here, so the emulator reads the timer and
 * schedules the release itself, as it does for Alibaba's AutoReleaseTime. 0: none.
 */
static int64_t shutdown_timer(struct ec2 *c, const struct run *r)
{
	const char *beh = ec2_param(c, "InstanceInitiatedShutdownBehavior");

	if (!beh || strcmp(beh, "terminate") != 0 || !ec2_param(c, "UserData"))
		return 0;
	for (const char *line = r->user_data.data; line && *line;) {
		const char *nl = strchr(line, '\n');
		unsigned Y, M, D, h, m, sec;
		char zone[8], iso[32];
		int64_t at;

		if (sscanf(line, "OnCalendar=%4u-%2u-%2u %2u:%2u:%2u %7s", &Y, &M, &D, &h, &m, &sec,
			   zone) == 7 &&
		    strcmp(zone, "UTC") == 0) {
			snprintf(iso, sizeof(iso), "%04u-%02u-%02uT%02u:%02u:%02uZ", Y, M, D, h, m,
				 sec);
			if (sim_aws_parse_iso(iso, &at) == 0)
				return at;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

static void launch(struct ec2 *c, const struct run *r, struct sim_instance ***insts, size_t *n,
		   char reservation[SIM_ID_MAX])
{
	struct sim_launch l = {
		.cloud = SIM_AWS,
		.region = c->region,
		.zone = r->zone,
		.type = r->type->name,
		.image = r->image->id,
		.key_name = r->key ? r->key->name : NULL,
		.authorized_key = r->key ? r->key->public_key : NULL,
		.security_groups = r->sgs,
		.n_security_groups = r->n_sgs,
		.subnet = r->subnet,
		.name = sim_tags_get(&r->tags, "Name"),
		.tags = &r->tags,
		.spot = r->spot,
		.spot_max_price = r->max_price,
		.client_token = r->token,
		.user_data = ec2_param(c, "UserData") ? r->user_data.data : NULL,
		.disk_gb = r->disk_gb,
		.release_at_wall = shutdown_timer(c, r),
		.count = (unsigned)r->max,
		.role = ec2_param(c, "IamInstanceProfile.Name"),
		/* an instance has the EFA devices it was launched with, none otherwise */
		.rdma_by_launch = true,
		.rdma_devices = r->efas,
	};
	const char *beh = ec2_param(c, "InstanceInitiatedShutdownBehavior");

	/* "stop" unless the launch said otherwise (docs/internals/idle.md) */
	l.shutdown_terminates = beh && strcmp(beh, "terminate") == 0;
	sim_world_launch(c->sim->world, &l, insts, n, reservation);
	for (size_t i = 0; i < *n; i++) /* eventual consistency (docs/sim.md) */
		(*insts)[i]->ec_list = (*insts)[i]->ec_terminate = c->sim->world->eventual;
}

static int run_instances(struct ec2 *c)
{
	static const char *const skip[] = { "ClientToken", "Placement.AvailabilityZone", NULL };
	struct sim_world *w = c->sim->world;
	struct run r;
	struct sim_instance **insts = NULL;
	size_t n = 0;
	char reservation[SIM_ID_MAX], fpr[65];
	struct sim_fault_hit hit;
	struct sim_token *tok;
	const struct sim_placement *pg = NULL;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	gc_buf_init(&r.user_data, 65536);
	if (run_validate(c, &r) != 0)
		goto out;
	if (c->dry) {
		ec2_fail(c, 412, "DryRunOperation",
			 "Request would have succeeded, but DryRun flag is set.");
		goto out;
	}

	sim_params_fingerprint(&c->p, skip, fpr);
	tok = r.token ? sim_world_token(w, SIM_AWS, c->region, r.token) : NULL;
	if (tok) {
		if (strcmp(tok->fingerprint, fpr) != 0) {
			EC2_FAIL400(c, "IdempotentParameterMismatch",
				    "Arguments on this idempotent request are inconsistent with "
				    "arguments used in previous request(s).");
			goto out;
		}
		/* a replay: the same reservation, as it stands now */
		ec2_begin(c);
		write_reservation_head(c, tok->reservation);
		ec2_open(c, "instancesSet");
		for (size_t i = 0; i < tok->n_ids; i++) {
			struct sim_instance *in = ec2_find_instance(c, tok->ids[i]);
			struct sim_instance gone;

			if (!in) {
				/* no longer listed, but EC2 honours the token for at least 24
				 * hours after termination: the instance, terminated (issue 18) */
				memset(&gone, 0, sizeof(gone));
				snprintf(gone.id, sizeof(gone.id), "%s", tok->ids[i]);
				gone.cloud = SIM_AWS;
				snprintf(gone.region, sizeof(gone.region), "%s", c->region);
				snprintf(gone.client_token, sizeof(gone.client_token), "%s",
					 tok->token);
				snprintf(gone.reservation, sizeof(gone.reservation), "%s",
					 tok->reservation);
				snprintf(gone.type, sizeof(gone.type), "%s", r.type->name);
				snprintf(gone.image, sizeof(gone.image), "%s", r.image->id);
				snprintf(gone.zone, sizeof(gone.zone), "%s", r.zone ? r.zone : "");
				gone.state = SIM_TERMINATED;
				in = &gone;
			}
			write_instance(c, in, (unsigned)i);
		}
		ec2_close(c);
		ret = ec2_finish(c);
		goto out;
	}

	if (r.min > EC2_MAX_LAUNCH) {
		ec2_fail(c, 400, "InstanceLimitExceeded",
			 "Your quota allows for %d more running instance(s). You requested at "
			 "least %lld",
			 EC2_MAX_LAUNCH, (long long)r.min);
		goto out;
	}
	if (r.max > EC2_MAX_LAUNCH)
		r.max = EC2_MAX_LAUNCH;

	sim_faults_launch(c->sim->faults, SIM_AWS, "RunInstances", r.zone, r.type->name, r.spot,
			  (unsigned)r.max, &hit);
	sim_quota_launch(w, SIM_AWS, c->region, r.zone, r.type->name, r.spot, (unsigned)r.max,
			 &hit);
	/* each market has its quotas (EC2 user guide, "Spot Instance quotas") */
	if (hit.kind == SIM_FAULT_QUOTA && hit.spot) {
		ec2_fail(c, 400, "MaxSpotInstanceCountExceeded",
			 "Max spot instance count exceeded");
		goto out;
	}
	if (hit.kind == SIM_FAULT_QUOTA) {
		ec2_fail(c, 400, "VcpuLimitExceeded",
			 "You have requested more vCPU capacity than your current vCPU limit "
			 "allows for the instance bucket that the specified instance type belongs "
			 "to. Please visit http://aws.amazon.com/contact-us/ec2-request to request "
			 "an adjustment to this limit.");
		goto out;
	}
	if (hit.kind == SIM_FAULT_UNSUPPORTED) { /* fabric.md: a type a group does not take */
		EC2_FAIL400(c, "Unsupported",
			    "The requested configuration is currently not supported. Please check "
			    "the documentation for supported configurations.");
		goto out;
	}
	if (hit.kind == SIM_FAULT_CAPACITY) {
		ec2_fail(c, 500, "InsufficientInstanceCapacity",
			 "We currently do not have sufficient %s capacity in the Availability "
			 "Zone you requested (%s). Our system will be working on provisioning "
			 "additional capacity. You can currently get %s capacity by not "
			 "specifying an Availability Zone in your request or choosing a "
			 "different Availability Zone.",
			 r.type->name, r.zone, r.type->name);
		goto out;
	}
	if (hit.kind == SIM_FAULT_THROTTLE) {
		ec2_fail(c, 503, "RequestLimitExceeded", "Request limit exceeded.");
		goto out;
	}

	if (ec2_run_placement(c, r.zone, (unsigned)r.max, &pg) != 0)
		goto out;
	launch(c, &r, &insts, &n, reservation);
	for (size_t i = 0; pg && i < n; i++)
		snprintf(insts[i]->placement, sizeof(insts[i]->placement), "%s", pg->id);
	for (size_t i = 0; i < n; i++)
		insts[i]->interfaces = r.interfaces;
	if (r.token)
		sim_world_remember_token(w, SIM_AWS, c->region, r.token, fpr, reservation, insts,
					 n);

	ec2_begin(c);
	write_reservation_head(c, reservation);
	ec2_open(c, "instancesSet");
	for (size_t i = 0; i < n; i++)
		write_instance(c, insts[i], (unsigned)i);
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(insts);
	free(r.sgs);
	sim_tags_release(&r.tags);
	gc_buf_release(&r.user_data);
	return ret;
}

/* --- DescribeInstances ---------------------------------------------------------------- */

static const char *const instance_filters[] = {
	"tag:",
	"tag-key",
	"tag-value",
	"instance-state-name",
	"instance-state-code",
	"instance-id",
	"client-token",
	"instance-type",
	"availability-zone",
	"instance-lifecycle",
	"image-id",
	"key-name",
	"reservation-id",
	"private-ip-address",
	"ip-address",
	"vpc-id",
	"subnet-id",
	"instance.group-id",
	"architecture",
	NULL,
};

static bool instance_matches(const struct sim_instance *in, const struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		const char *n = f->name;
		char code[8];
		bool m = false;

		if (ec2_is_tag_filter(n)) {
			m = ec2_tag_filter(f, &in->tags);
		} else if (!strcmp(n, "instance-state-name")) {
			m = ec2_any_value(f, state_name(in->state));
		} else if (!strcmp(n, "instance-state-code")) {
			snprintf(code, sizeof(code), "%d", state_code(in->state));
			m = ec2_any_value(f, code);
		} else if (!strcmp(n, "instance-id")) {
			m = ec2_any_value(f, in->id);
		} else if (!strcmp(n, "client-token")) {
			m = ec2_any_value(f, in->client_token);
		} else if (!strcmp(n, "instance-type")) {
			m = ec2_any_value(f, in->type);
		} else if (!strcmp(n, "availability-zone")) {
			m = ec2_any_value(f, in->zone);
		} else if (!strcmp(n, "instance-lifecycle")) {
			m = in->spot && ec2_any_value(f, "spot");
		} else if (!strcmp(n, "image-id")) {
			m = ec2_any_value(f, in->image);
		} else if (!strcmp(n, "key-name")) {
			m = ec2_any_value(f, in->key_name);
		} else if (!strcmp(n, "reservation-id")) {
			m = ec2_any_value(f, in->reservation);
		} else if (!strcmp(n, "private-ip-address")) {
			m = ec2_any_value(f, in->private_ip);
		} else if (!strcmp(n, "ip-address")) {
			m = ec2_any_value(f, in->public_ip);
		} else if (!strcmp(n, "vpc-id")) {
			m = ec2_any_value(f, EC2_DEFAULT_VPC);
		} else if (!strcmp(n, "subnet-id")) {
			m = ec2_any_value(f, in->subnet);
		} else if (!strcmp(n, "instance.group-id")) {
			for (size_t k = 0; k < in->n_security_groups && !m; k++)
				m = ec2_any_value(f, in->security_groups[k]);
		} else if (!strcmp(n, "architecture")) {
			m = ec2_any_value(f, "x86_64");
		}
		if (!m)
			return false;
	}
	return true;
}

static int describe_instances(struct ec2 *c)
{
	static const char *const states[] = { "pending",    "running",	"shutting-down",
					      "terminated", "stopping", "stopped" };
	const char **ids = NULL;
	size_t n_ids = ec2_list(c, "InstanceId", &ids), n_all, n_sel = 0, last = 0;
	struct sim_instance **all = NULL, **sel = NULL;
	struct ec2_filters fs = { 0 };
	int64_t max;
	bool has_max;
	uint64_t after;
	int ret = -1;

	if (ec2_max_results(c, 5, 1000, &max, &has_max) || ec2_parse_token(c, 'i', &after) ||
	    ec2_get_filters(c, instance_filters, &fs))
		goto out;
	if (has_max && n_ids) {
		EC2_FAIL400(
			c, "InvalidParameterCombination",
			"The parameter instancesSet cannot be used with the parameter maxResults");
		goto out;
	}
	for (size_t i = 0; i < fs.n; i++) {
		if (strcmp(fs.f[i].name, "instance-state-name") != 0)
			continue;
		for (size_t k = 0; k < fs.f[i].n; k++) {
			bool ok = false;
			for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++)
				ok = ok || ec2_wild(fs.f[i].values[k], states[s]);
			if (!ok) {
				EC2_FAIL400(c, "InvalidParameterValue",
					    "The filter value '%s' is invalid for "
					    "instance-state-name",
					    fs.f[i].values[k]);
				goto out;
			}
		}
	}

	if (n_ids) {
		if (resolve_instances(c, ids, n_ids, &sel) != 0)
			goto out;
		n_sel = n_ids;
	} else {
		n_all = sim_world_list(c->sim->world, SIM_AWS, c->region, &all);
		sel = gc_xcalloc(n_all + 1, sizeof(*sel));
		for (size_t i = 0; i < n_all; i++)
			if (all[i]->seq >= after && !sim_ec_miss(&all[i]->ec_list))
				sel[n_sel++] = all[i];
	}

	ec2_begin(c);
	ec2_open(c, "reservationSet");
	{
		size_t shown = 0, i = 0;
		unsigned launch_index = 0;

		while (i < n_sel && (int64_t)shown < max) {
			const char *res = sel[i]->reservation;
			/* one reservationSet item per run of the same reservation */
			if (!instance_matches(sel[i], &fs)) {
				i++;
				continue;
			}
			ec2_open(c, "item");
			write_reservation_head(c, res);
			ec2_open(c, "instancesSet");
			launch_index = 0;
			while (i < n_sel && (int64_t)shown < max &&
			       strcmp(sel[i]->reservation, res) == 0) {
				if (instance_matches(sel[i], &fs)) {
					write_instance(c, sel[i], launch_index);
					shown++;
					last = i;
				}
				launch_index++;
				i++;
			}
			ec2_close(c);
			ec2_close(c);
		}
		ec2_close(c);
		/* a next page only when something beyond this one still matches */
		if (!n_ids) {
			bool more = false;
			for (size_t k = last + 1; k < n_sel && shown && !more; k++)
				more = instance_matches(sel[k], &fs);
			if (more && (int64_t)shown >= max)
				ec2_next_token(c, 'i', sel[last]->seq + 1);
		}
	}
	ret = ec2_finish(c);
out:
	ec2_filters_release(&fs);
	free(ids);
	free(all);
	free(sel);
	return ret;
}

/* --- TerminateInstances --------------------------------------------------------------- */

/* Eventual consistency: an instance launched a moment ago is NotFound to the first
 * terminate naming it, and runs on ("Eventual consistency in the Amazon EC2 API"). */
static int unseen_terminate(struct ec2 *c, struct sim_instance **insts, size_t n)
{
	struct gc_buf missing = GC_BUF_INIT(4096);
	size_t n_missing = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		if (sim_ec_miss(&insts[i]->ec_terminate))
			gc_buf_addf(&missing, "%s%s", n_missing++ ? ", " : "", insts[i]->id);
	if (n_missing)
		ret = EC2_FAIL400(c, "InvalidInstanceID.NotFound",
				  n_missing == 1 ? "The instance ID '%s' does not exist"
						 : "The instance IDs '%s' do not exist",
				  missing.data);
	gc_buf_release(&missing);
	return ret;
}

static int terminate_instances(struct ec2 *c)
{
	const char **ids = NULL;
	size_t n = ec2_list(c, "InstanceId", &ids);
	struct sim_instance **insts = NULL;
	enum sim_state *prev = NULL;
	struct sim_fault_hit hit;
	int ret = -1;

	if (!n) {
		EC2_FAIL400(c, "MissingParameter",
			    "The request must contain the parameter InstanceId");
		goto out;
	}
	if (resolve_instances(c, ids, n, &insts) != 0 || unseen_terminate(c, insts, n) != 0)
		goto out;
	if (c->dry) {
		ec2_fail(c, 412, "DryRunOperation",
			 "Request would have succeeded, but DryRun flag is set.");
		goto out;
	}
	sim_faults_terminate(c->sim->faults, SIM_AWS, "TerminateInstances", (unsigned)n, &hit);
	if (hit.kind == SIM_FAULT_THROTTLE) {
		ec2_fail(c, 503, "RequestLimitExceeded", "Request limit exceeded.");
		goto out;
	}
	prev = gc_xcalloc(n, sizeof(*prev));
	for (size_t i = 0; i < n; i++) {
		prev[i] = insts[i]->state;
		sim_world_terminate(c->sim->world, insts[i]);
	}
	ec2_begin(c);
	ec2_open(c, "instancesSet");
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < i; k++)
			dup = dup || insts[k] == insts[i];
		if (dup)
			continue;
		ec2_open(c, "item");
		ec2_el(c, "instanceId", insts[i]->id);
		write_state(c, "currentState", insts[i]->state);
		write_state(c, "previousState", prev[i]);
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(ids);
	free(insts);
	free(prev);
	return ret;
}

static int get_console_output(struct ec2 *c)
{
	const char *id;
	struct sim_instance *in;
	struct gc_buf out = GC_BUF_INIT(16384);
	char ts[32];
	bool latest;

	if (ec2_require(c, "InstanceId", &id) || ec2_bool(c, "Latest", false, &latest))
		return -1;
	if (!ec2_id_ok(id, "i-"))
		return EC2_FAIL400(c, "InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id);
	in = ec2_find_instance(c, id);
	if (!in)
		return EC2_FAIL400(c, "InvalidInstanceID.NotFound",
				   "The instance ID '%s' does not exist", id);
	/* nothing is printed before the instance boots */
	if (in->state != SIM_PENDING)
		gc_base64_encode(&out, in->console, strlen(in->console));
	ec2_iso_time((int64_t)c->req->now, ts);
	ec2_begin(c);
	ec2_el(c, "instanceId", in->id);
	ec2_el(c, "timestamp", ts);
	ec2_el(c, "output", out.data);
	gc_buf_release(&out);
	return ec2_finish(c);
}

/* --- the action table --------------------------------------------------------------*/

static const char *const p_describe_instances[] = { "InstanceId.N", EC2_FILTERS, EC2_PAGING, NULL };
static const char *const p_console[] = { "InstanceId", "Latest", NULL };
static const char *const p_run[] = {
	"ImageId",
	"InstanceType",
	"MinCount",
	"MaxCount",
	"KeyName",
	"SecurityGroupId.N",
	"SecurityGroup.N",
	"SubnetId",
	"UserData",
	"ClientToken",
	"PrivateIpAddress",
	"EbsOptimized",
	"DisableApiTermination",
	"DisableApiStop",
	"InstanceInitiatedShutdownBehavior",
	"Monitoring.Enabled",
	"IamInstanceProfile.Name",
	"IamInstanceProfile.Arn",
	"Placement.AvailabilityZone",
	"Placement.GroupName",
	"Placement.Tenancy",
	"Placement.PartitionNumber",
	"BlockDeviceMapping.N.DeviceName",
	"BlockDeviceMapping.N.NoDevice",
	"BlockDeviceMapping.N.VirtualName",
	"BlockDeviceMapping.N.Ebs.VolumeSize",
	"BlockDeviceMapping.N.Ebs.VolumeType",
	"BlockDeviceMapping.N.Ebs.DeleteOnTermination",
	"BlockDeviceMapping.N.Ebs.Encrypted",
	"BlockDeviceMapping.N.Ebs.Iops",
	"BlockDeviceMapping.N.Ebs.Throughput",
	"BlockDeviceMapping.N.Ebs.SnapshotId",
	"BlockDeviceMapping.N.Ebs.KmsKeyId",
	"NetworkInterface.N.DeviceIndex",
	"NetworkInterface.N.SubnetId",
	"NetworkInterface.N.AssociatePublicIpAddress",
	"NetworkInterface.N.DeleteOnTermination",
	"NetworkInterface.N.Description",
	"NetworkInterface.N.SecurityGroupId.N",
	"NetworkInterface.N.InterfaceType",
	"NetworkInterface.N.NetworkCardIndex",
	"InstanceMarketOptions.MarketType",
	"InstanceMarketOptions.SpotOptions.SpotInstanceType",
	"InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
	"InstanceMarketOptions.SpotOptions.MaxPrice",
	"InstanceMarketOptions.SpotOptions.ValidUntil",
	"InstanceMarketOptions.SpotOptions.BlockDurationMinutes",
	"MetadataOptions.HttpTokens",
	"MetadataOptions.HttpEndpoint",
	"MetadataOptions.HttpPutResponseHopLimit",
	"MetadataOptions.HttpProtocolIpv6",
	"MetadataOptions.InstanceMetadataTags",
	EC2_TAGSPEC,
	NULL,
};
static const char *const p_terminate[] = { "InstanceId.N", "Force", "SkipOsShutdown", NULL };

const struct ec2_action ec2_instance_actions[] = {
	{ "DescribeInstances", describe_instances, true, p_describe_instances, false },
	{ "GetConsoleOutput", get_console_output, false, p_console, false },
	{ "RunInstances", run_instances, false, p_run, true },
	{ "TerminateInstances", terminate_instances, false, p_terminate, true },
	{ NULL, NULL, false, NULL, false },
};
