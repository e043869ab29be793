/*
 * ec2-address.c: EC2 Elastic IP addresses (AllocateAddress, AssociateAddress,
 * DescribeAddresses, ReleaseAddress) for the nodes of a group launched with several
 * network interfaces, which EC2 gives no public address (docs/internals/fabric.md, "A
 * reachable address"), and the network interface ids DescribeInstances lists. Called by
 * ec2.c with the world locked.
 * https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_AllocateAddress.html
 * https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_AssociateAddress.html
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/aws/aws.h"
#include "sim/aws/ec2.h"

void ec2_eni_id(const struct sim_instance *in, unsigned k, char out[SIM_ID_MAX])
{
	/* eni- and 17 hex digits: the card's index in two, then the instance id's tail */
	snprintf(out, SIM_ID_MAX, "eni-%02x%.15s", k & 255, strlen(in->id) > 4 ? in->id + 4 : "0");
}

/* The instance whose interface k is eni, or NULL. */
static struct sim_instance *eni_instance(struct ec2 *c, const char *eni, unsigned *k)
{
	struct sim_world *w = c->sim->world;

	for (size_t i = 0; i < w->n_instances; i++) {
		struct sim_instance *in = w->instances[i];
		unsigned n = in->interfaces ? in->interfaces : 1;

		if (in->cloud != SIM_AWS || strcmp(in->region, c->region) != 0 ||
		    in->state == SIM_TERMINATED)
			continue;
		for (unsigned j = 0; j < n; j++) {
			char id[SIM_ID_MAX];

			ec2_eni_id(in, j, id);
			if (!strcmp(id, eni)) {
				*k = j;
				return in;
			}
		}
	}
	return NULL;
}

static void write_address(struct ec2 *c, struct sim_address *a)
{
	struct sim_instance *in = sim_world_address_on(c->sim->world, a);

	ec2_el(c, "publicIp", a->public_ip);
	ec2_el(c, "allocationId", a->id);
	ec2_el(c, "domain", "vpc");
	if (in) {
		ec2_el(c, "instanceId", in->id);
		ec2_el(c, "associationId", a->association);
		ec2_el(c, "networkInterfaceId", a->interface);
		ec2_el(c, "networkInterfaceOwnerId", "123456789012");
		ec2_el(c, "privateIpAddress", in->private_ip);
	}
	ec2_write_tags(c, &a->tags);
	ec2_el(c, "publicIpv4Pool", "amazon");
	ec2_el(c, "networkBorderGroup", c->region);
}

static size_t region_addresses(struct ec2 *c)
{
	struct sim_address **all = NULL;
	size_t n = sim_world_list_addresses(c->sim->world, SIM_AWS, c->region, &all);

	free(all);
	return n;
}

static int allocate_address(struct ec2 *c)
{
	static const char *const types[] = { "elastic-ip", NULL };
	static const char *const domains[] = { "vpc", "standard", NULL };
	const char *domain = ec2_param(c, "Domain");
	struct sim_tags tags = { 0 };
	struct sim_address *a;
	int ret = -1;

	if (ec2_one_of(c, "Domain", domains) || ec2_tag_specs(c, types, "elastic-ip", &tags))
		goto out;
	if (domain && !strcmp(domain, "standard")) {
		EC2_FAIL400(c, "InvalidParameterValue",
			    "EC2-Classic has been retired: the domain must be 'vpc'");
		goto out;
	}
	if (ec2_param(c, "Address") || ec2_param(c, "PublicIpv4Pool") ||
	    ec2_param(c, "CustomerOwnedIpv4Pool")) {
		EC2_FAIL400(c, "InvalidParameterCombination",
			    "The emulator allocates from Amazon's pool only");
		goto out;
	}
	if (region_addresses(c) >= SIM_ADDRESS_LIMIT) {
		EC2_FAIL400(c, "AddressLimitExceeded",
			    "The maximum number of addresses has been reached.");
		goto out;
	}
	a = sim_world_create_address(c->sim->world, SIM_AWS, c->region, &tags);
	ec2_begin(c);
	ec2_el(c, "publicIp", a->public_ip);
	ec2_el(c, "domain", "vpc");
	ec2_el(c, "allocationId", a->id);
	ec2_el(c, "publicIpv4Pool", "amazon");
	ec2_el(c, "networkBorderGroup", c->region);
	ret = ec2_finish(c);
out:
	sim_tags_release(&tags);
	return ret;
}

static int not_found(struct ec2 *c, const char *id)
{
	return EC2_FAIL400(c, "InvalidAllocationID.NotFound",
			   "The allocation ID '%s' does not exist", id);
}

/* The instance (and its interface k) an AssociateAddress names, or an EC2 error. */
static struct sim_instance *associate_target(struct ec2 *c, const char *inst_id, const char *eni,
					     unsigned *k)
{
	struct sim_instance *in;

	if (eni) {
		if (!(in = eni_instance(c, eni, k))) {
			EC2_FAIL400(c, "InvalidNetworkInterfaceID.NotFound",
				    "The networkInterface ID '%s' does not exist", eni);
			return NULL;
		}
		if (in->state != SIM_RUNNING) {
			EC2_FAIL400(c, "IncorrectInstanceState",
				    "The %s instance to which '%s' is attached is not in a valid "
				    "state for this operation",
				    sim_state_name(SIM_AWS, in->state), eni);
			return NULL;
		}
		return in;
	}
	in = sim_world_instance(c->sim->world, SIM_AWS, inst_id);
	if (!in || strcmp(in->region, c->region) != 0) {
		EC2_FAIL400(c, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist",
			    inst_id);
		return NULL;
	}
	if (in->interfaces > 1) {
		EC2_FAIL400(c, "InvalidInstanceID",
			    "There are multiple interfaces attached to instance '%s'. Please "
			    "specify an interface ID for the operation instead.",
			    inst_id);
		return NULL;
	}
	if (in->state != SIM_RUNNING) {
		EC2_FAIL400(c, "InvalidInstanceID",
			    "The %s instance '%s' is not in a valid state for this operation.",
			    sim_state_name(SIM_AWS, in->state), inst_id);
		return NULL;
	}
	*k = 0;
	return in;
}

static int associate_address(struct ec2 *c)
{
	const char *alloc = ec2_param(c, "AllocationId"), *inst_id = ec2_param(c, "InstanceId");
	const char *eni = ec2_param(c, "NetworkInterfaceId");
	struct sim_address *a, *old;
	struct sim_instance *in;
	unsigned k = 0;

	if (!alloc)
		return EC2_FAIL400(c,
				   ec2_param(c, "PublicIp") ? "InvalidParameterCombination"
							    : "MissingParameter",
				   "The request must contain the parameter AllocationId");
	if (!inst_id == !eni)
		return EC2_FAIL400(c, inst_id ? "InvalidParameterCombination" : "MissingParameter",
				   "Either an instance ID or a network interface ID is required, "
				   "not both");
	if (!(a = sim_world_address(c->sim->world, SIM_AWS, c->region, alloc)))
		return not_found(c, alloc);
	if (!(in = associate_target(c, inst_id, eni, &k)))
		return -1;
	if (k > 0)
		return EC2_FAIL400(c, "InvalidParameterValue",
				   "An EFA-only network interface cannot have an IP address: '%s'",
				   eni);
	/* the instance's other address, if any, is disassociated; so is a's from its own */
	if ((old = sim_world_address_of(c->sim->world, in)) && old != a)
		old->instance[0] = old->association[0] = old->interface[0] = '\0';
	if (strcmp(a->instance, in->id) != 0 || !a->association[0]) {
		snprintf(a->instance, sizeof(a->instance), "%s", in->id);
		sim_world_new_id(c->sim->world, SIM_AWS, "eipassoc-", a->association);
	}
	ec2_eni_id(in, 0, a->interface);
	ec2_begin(c);
	ec2_el(c, "return", "true");
	ec2_el(c, "associationId", a->association);
	return ec2_finish(c);
}

static const char *const addr_filters[] = { "tag:",
					    "tag-key",
					    "tag-value",
					    "domain",
					    "allocation-id",
					    "association-id",
					    "instance-id",
					    "network-interface-id",
					    "public-ip",
					    "private-ip-address",
					    NULL };

static bool addr_matches(struct ec2 *c, struct sim_address *a, const struct ec2_filters *fs)
{
	struct sim_instance *in = sim_world_address_on(c->sim->world, a);

	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		bool m = false;

		if (ec2_is_tag_filter(f->name))
			m = ec2_tag_filter(f, &a->tags);
		else if (!strcmp(f->name, "domain"))
			m = ec2_any_value(f, "vpc");
		else if (!strcmp(f->name, "allocation-id"))
			m = ec2_any_value(f, a->id);
		else if (!strcmp(f->name, "public-ip"))
			m = ec2_any_value(f, a->public_ip);
		else if (!strcmp(f->name, "association-id"))
			m = in && ec2_any_value(f, a->association);
		else if (!strcmp(f->name, "instance-id"))
			m = in && ec2_any_value(f, in->id);
		else if (!strcmp(f->name, "network-interface-id"))
			m = in && ec2_any_value(f, a->interface);
		else if (!strcmp(f->name, "private-ip-address"))
			m = in && ec2_any_value(f, in->private_ip);
		if (!m)
			return false;
	}
	return true;
}

static int describe_addresses(struct ec2 *c)
{
	const char **ids = NULL, **ips = NULL;
	size_t ni = ec2_list(c, "AllocationId", &ids), np = ec2_list(c, "PublicIp", &ips), n;
	struct sim_address **all = NULL;
	struct ec2_filters fs = { 0 };
	int ret = -1;

	if (ec2_get_filters(c, addr_filters, &fs))
		goto out;
	n = sim_world_list_addresses(c->sim->world, SIM_AWS, c->region, &all);
	for (size_t i = 0; i < ni + np; i++) {
		const char *want = i < ni ? ids[i] : ips[i - ni];
		bool found = false;

		for (size_t k = 0; k < n && !found; k++)
			found = !strcmp(i < ni ? all[k]->id : all[k]->public_ip, want);
		if (!found) {
			if (i < ni)
				not_found(c, want);
			else
				EC2_FAIL400(c, "InvalidAddress.NotFound", "Address '%s' not found.",
					    want);
			goto out;
		}
	}
	ec2_begin(c);
	ec2_open(c, "addressesSet");
	for (size_t k = 0; k < n; k++) {
		bool wanted = ni + np == 0;

		for (size_t i = 0; i < ni; i++)
			wanted = wanted || !strcmp(all[k]->id, ids[i]);
		for (size_t i = 0; i < np; i++)
			wanted = wanted || !strcmp(all[k]->public_ip, ips[i]);
		if (!wanted || !addr_matches(c, all[k], &fs))
			continue;
		ec2_open(c, "item");
		write_address(c, all[k]);
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(ids);
	free(ips);
	free(all);
	ec2_filters_release(&fs);
	return ret;
}

/* ReleaseAddress refuses an address still associated (InvalidIPAddress.InUse): release it
 * once its instance is terminated, which disassociates it. */
static int release_address(struct ec2 *c)
{
	const char *alloc = ec2_param(c, "AllocationId");
	struct sim_address *a;

	if (!alloc)
		return EC2_FAIL400(c,
				   ec2_param(c, "PublicIp") ? "InvalidParameterCombination"
							    : "MissingParameter",
				   "The request must contain the parameter AllocationId");
	if (!(a = sim_world_address(c->sim->world, SIM_AWS, c->region, alloc)))
		return not_found(c, alloc);
	if (sim_world_address_on(c->sim->world, a))
		return EC2_FAIL400(c, "InvalidIPAddress.InUse", "Address %s is in use.",
				   a->public_ip);
	sim_world_delete_address(c->sim->world, a);
	ec2_begin(c);
	ec2_el(c, "return", "true");
	return ec2_finish(c);
}

static const char *const p_allocate[] = {
	"Domain",    "Address", "PublicIpv4Pool", "NetworkBorderGroup", "CustomerOwnedIpv4Pool",
	EC2_TAGSPEC, NULL
};
static const char *const p_associate[] = { "AllocationId",
					   "InstanceId",
					   "NetworkInterfaceId",
					   "PrivateIpAddress",
					   "AllowReassociation",
					   "PublicIp",
					   NULL };
static const char *const p_describe[] = { "AllocationId.N", "PublicIp.N", EC2_FILTERS, NULL };
static const char *const p_release[] = { "AllocationId", "PublicIp", "NetworkBorderGroup", NULL };

const struct ec2_action ec2_address_actions[] = {
	{ "AllocateAddress", allocate_address, false, p_allocate, false },
	{ "AssociateAddress", associate_address, false, p_associate, false },
	{ "DescribeAddresses", describe_addresses, true, p_describe, false },
	{ "ReleaseAddress", release_address, false, p_release, false },
	{ NULL, NULL, false, NULL, false },
};
