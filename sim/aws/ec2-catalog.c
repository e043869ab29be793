/*
 * ec2-catalog.c: EC2's read-only catalogue actions, rendered from sim/catalog.c:
 * DescribeImages, DescribeInstanceTypes, DescribeSpotPriceHistory,
 * DescribeAvailabilityZones and DescribeRegions. Pagination tokens carry an offset into
 * the static lists.
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

/* --- catalogue ------------------------------------------------------------------------ */

static const char *image_owner_id(const struct sim_image *im)
{
	return strcmp(im->owner, "amazon") == 0 ? EC2_AMAZON_ID : im->owner;
}

static const char *const image_filters[] = {
	"name",	       "architecture",	   "state",	"image-id",	    "owner-alias",
	"owner-id",    "image-type",	   "is-public", "root-device-type", "virtualization-type",
	"description", "platform-details", "tag:",	"tag-key",	    "tag-value",
	NULL,
};

static bool image_matches(const struct sim_image *im, const struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		const char *n = f->name;
		bool m = false;

		if (!strcmp(n, "name"))
			m = ec2_any_value(f, im->name);
		else if (!strcmp(n, "architecture"))
			m = ec2_any_value(f, "x86_64");
		else if (!strcmp(n, "state"))
			m = ec2_any_value(f, "available");
		else if (!strcmp(n, "image-id"))
			m = ec2_any_value(f, im->id);
		else if (!strcmp(n, "owner-alias"))
			m = ec2_any_value(f, strcmp(im->owner, "amazon") == 0 ? "amazon" : "");
		else if (!strcmp(n, "owner-id"))
			m = ec2_any_value(f, image_owner_id(im));
		else if (!strcmp(n, "image-type"))
			m = ec2_any_value(f, "machine");
		else if (!strcmp(n, "is-public"))
			m = ec2_any_value(f, "true");
		else if (!strcmp(n, "root-device-type"))
			m = ec2_any_value(f, "ebs");
		else if (!strcmp(n, "virtualization-type"))
			m = ec2_any_value(f, "hvm");
		else if (!strcmp(n, "description"))
			m = ec2_any_value(f, im->description);
		else if (!strcmp(n, "platform-details"))
			m = ec2_any_value(f, "Linux/UNIX");
		if (!m)
			return false;
	}
	return true;
}

static int describe_images(struct ec2 *c)
{
	const struct sim_image *imgs;
	size_t n = sim_catalog_images(SIM_AWS, &imgs);
	const char **ids = NULL, **owners = NULL;
	size_t ni = ec2_list(c, "ImageId", &ids), no = ec2_list(c, "Owner", &owners);
	struct ec2_filters fs = { 0 };
	int64_t max;
	bool has_max, b;
	uint64_t start;
	size_t shown = 0, pos;
	int ret = -1;

	if (ec2_max_results(c, 5, 1000, &max, &has_max) || ec2_parse_token(c, 'm', &start) ||
	    ec2_get_filters(c, image_filters, &fs) || ec2_bool(c, "IncludeDeprecated", false, &b) ||
	    ec2_bool(c, "IncludeDisabled", false, &b))
		goto out;
	for (size_t i = 0; i < ni; i++) {
		if (!ec2_id_ok(ids[i], "ami-")) {
			EC2_FAIL400(c, "InvalidAMIID.Malformed",
				    "Invalid id: \"%s\" (expecting \"ami-...\")", ids[i]);
			goto out;
		}
		if (!sim_catalog_image(SIM_AWS, ids[i])) {
			EC2_FAIL400(c, "InvalidAMIID.NotFound",
				    "The image id '[%s]' does not exist", ids[i]);
			goto out;
		}
	}
	ec2_begin(c);
	ec2_open(c, "imagesSet");
	for (pos = (size_t)start; pos < n && (int64_t)shown < max; pos++) {
		const struct sim_image *im = &imgs[pos];
		bool wanted = ni == 0, owner_ok = no == 0;
		char root[128];

		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(ids[i], im->id) == 0;
		for (size_t i = 0; i < no; i++)
			owner_ok = owner_ok || strcmp(owners[i], im->owner) == 0 ||
				strcmp(owners[i], image_owner_id(im)) == 0 ||
				(strcmp(owners[i], "self") == 0 &&
				 strcmp(image_owner_id(im), c->sim->cfg.aws_account) == 0);
		if (!wanted || !owner_ok || !image_matches(im, &fs))
			continue;
		shown++;
		ec2_open(c, "item");
		ec2_el(c, "imageId", im->id);
		ec2_elf(c, "imageLocation", "%s/%s", im->owner, im->name);
		ec2_el(c, "imageState", "available");
		ec2_el(c, "imageOwnerId", image_owner_id(im));
		ec2_el(c, "creationDate", im->created);
		ec2_el(c, "isPublic", "true");
		ec2_el(c, "architecture", "x86_64");
		ec2_el(c, "imageType", "machine");
		ec2_el(c, "platformDetails", "Linux/UNIX");
		ec2_el(c, "usageOperation", "RunInstances");
		if (!strcmp(im->owner, "amazon"))
			ec2_el(c, "imageOwnerAlias", "amazon");
		ec2_el(c, "name", im->name);
		ec2_el(c, "description", im->description);
		ec2_el(c, "rootDeviceType", "ebs");
		ec2_el(c, "rootDeviceName", "/dev/sda1");
		ec2_open(c, "blockDeviceMapping");
		ec2_open(c, "item");
		ec2_el(c, "deviceName", "/dev/sda1");
		ec2_open(c, "ebs");
		snprintf(root, sizeof(root), "snap-%s", im->id + 4);
		ec2_el(c, "snapshotId", root);
		ec2_el(c, "volumeSize", im->gpu_ready ? "75" : "8");
		ec2_el(c, "deleteOnTermination", "true");
		ec2_el(c, "volumeType", "gp3");
		ec2_el(c, "encrypted", "false");
		ec2_close(c);
		ec2_close(c);
		ec2_close(c);
		ec2_el(c, "virtualizationType", "hvm");
		ec2_el(c, "hypervisor", "xen");
		ec2_el(c, "enaSupport", "true");
		ec2_el(c, "bootMode", "uefi-preferred");
		ec2_close(c);
	}
	ec2_close(c);
	if (has_max) {
		bool more = false;
		for (size_t k = pos; k < n && !more; k++)
			more = image_matches(&imgs[k], &fs);
		if (more)
			ec2_next_token(c, 'm', pos);
	}
	ret = ec2_finish(c);
out:
	free(ids);
	free(owners);
	ec2_filters_release(&fs);
	return ret;
}

static const char *const itype_filters[] = { "instance-type", "current-generation",
					     "processor-info.supported-architecture",
					     "free-tier-eligible", NULL };

static bool itype_matches(const struct sim_itype *t, const struct ec2_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct ec2_filter *f = &fs->f[i];
		bool m = false;

		if (!strcmp(f->name, "instance-type"))
			m = ec2_any_value(f, t->name);
		else if (!strcmp(f->name, "current-generation"))
			m = ec2_any_value(f, "true");
		else if (!strcmp(f->name, "processor-info.supported-architecture"))
			m = ec2_any_value(f, "x86_64");
		else if (!strcmp(f->name, "free-tier-eligible"))
			m = ec2_any_value(f, "false");
		if (!m)
			return false;
	}
	return true;
}

static void write_itype(struct ec2 *c, const struct sim_itype *t)
{
	ec2_open(c, "item");
	ec2_el(c, "instanceType", t->name);
	ec2_el(c, "currentGeneration", "true");
	ec2_el(c, "freeTierEligible", "false");
	ec2_open(c, "supportedUsageClasses");
	ec2_el(c, "item", "on-demand");
	ec2_el(c, "item", "spot");
	ec2_close(c);
	ec2_open(c, "supportedRootDeviceTypes");
	ec2_el(c, "item", "ebs");
	ec2_close(c);
	ec2_open(c, "supportedVirtualizationTypes");
	ec2_el(c, "item", "hvm");
	ec2_close(c);
	ec2_el(c, "bareMetal", "false");
	ec2_el(c, "hypervisor", "nitro");
	ec2_open(c, "processorInfo");
	ec2_open(c, "supportedArchitectures");
	ec2_el(c, "item", "x86_64");
	ec2_close(c);
	ec2_close(c);
	ec2_open(c, "vCpuInfo");
	ec2_elf(c, "defaultVCpus", "%u", t->vcpu);
	ec2_close(c);
	ec2_open(c, "memoryInfo");
	ec2_elf(c, "sizeInMiB", "%u", t->memory_mib);
	ec2_close(c);
	ec2_el(c, "instanceStorageSupported", "false");
	ec2_open(c, "ebsInfo");
	ec2_el(c, "ebsOptimizedSupport", "default");
	ec2_el(c, "encryptionSupport", "supported");
	ec2_el(c, "nvmeSupport", "required");
	ec2_close(c);
	ec2_open(c, "networkInfo");
	ec2_el(c, "networkPerformance", t->gpus >= 8 ? "100 Gigabit" : "Up to 25 Gigabit");
	ec2_el(c, "enaSupport", "required");
	ec2_el(c, "efaSupported", t->rdma_interfaces ? "true" : "false");
	if (t->rdma_interfaces) {
		ec2_open(c, "efaInfo");
		ec2_elf(c, "maximumEfaInterfaces", "%u", t->rdma_interfaces);
		ec2_close(c);
	}
	ec2_close(c);
	if (t->gpus) {
		ec2_open(c, "gpuInfo");
		ec2_open(c, "gpus");
		ec2_open(c, "item");
		ec2_el(c, "name", t->gpu_model);
		ec2_el(c, "manufacturer", t->gpu_vendor);
		ec2_elf(c, "count", "%u", t->gpus);
		ec2_open(c, "memoryInfo");
		ec2_elf(c, "sizeInMiB", "%u", t->gpu_memory_mib);
		ec2_close(c);
		ec2_close(c);
		ec2_close(c);
		ec2_elf(c, "totalGpuMemoryInMiB", "%u", t->gpus * t->gpu_memory_mib);
		ec2_close(c);
	}
	ec2_open(c, "placementGroupInfo");
	ec2_open(c, "supportedStrategies");
	ec2_el(c, "item", "cluster");
	ec2_el(c, "item", "partition");
	ec2_el(c, "item", "spread");
	ec2_close(c);
	ec2_close(c);
	ec2_el(c, "hibernationSupported", "false");
	ec2_el(c, "burstablePerformanceSupported", gc_starts_with(t->name, "t") ? "true" : "false");
	ec2_el(c, "autoRecoverySupported", "true");
	ec2_open(c, "supportedBootModes");
	ec2_el(c, "item", "legacy-bios");
	ec2_el(c, "item", "uefi");
	ec2_close(c);
	ec2_close(c);
}

static int describe_instance_types(struct ec2 *c)
{
	const struct sim_itype *types;
	size_t n = sim_catalog_itypes(SIM_AWS, &types), pos, shown = 0;
	const char **want = NULL;
	size_t nw = ec2_list(c, "InstanceType", &want);
	struct ec2_filters fs = { 0 };
	struct gc_buf missing = GC_BUF_INIT(4096);
	int64_t max;
	bool has_max;
	uint64_t start;
	int ret = -1;

	if (ec2_max_results(c, 5, 100, &max, &has_max) || ec2_parse_token(c, 't', &start) ||
	    ec2_get_filters(c, itype_filters, &fs))
		goto out;
	for (size_t i = 0; i < nw; i++)
		if (!sim_catalog_itype(SIM_AWS, want[i]))
			gc_buf_addf(&missing, "%s%s", missing.len ? ", " : "", want[i]);
	if (missing.len) {
		EC2_FAIL400(c, "InvalidInstanceType",
			    "The following supplied instance types do not exist: [%s]",
			    missing.data);
		goto out;
	}
	ec2_begin(c);
	ec2_open(c, "instanceTypeSet");
	for (pos = (size_t)start; pos < n && (int64_t)shown < max; pos++) {
		bool wanted = nw == 0;
		for (size_t i = 0; i < nw; i++)
			wanted = wanted || strcmp(want[i], types[pos].name) == 0;
		if (!wanted || !itype_matches(&types[pos], &fs))
			continue;
		write_itype(c, &types[pos]);
		shown++;
	}
	ec2_close(c);
	{
		bool more = false;
		for (size_t k = pos; k < n && !more; k++) {
			bool wanted = nw == 0;
			for (size_t i = 0; i < nw; i++)
				wanted = wanted || strcmp(want[i], types[k].name) == 0;
			more = wanted && itype_matches(&types[k], &fs);
		}
		if (more)
			ec2_next_token(c, 't', pos);
	}
	ret = ec2_finish(c);
out:
	free(want);
	gc_buf_release(&missing);
	ec2_filters_release(&fs);
	return ret;
}

/* DescribeInstanceTypeOfferings: (type, location) rows by LocationType, region (the
 * default) or availability-zone, filtered by instance-type and location; a zone's gaps
 * (sim/catalog.h) are left out. An unknown type in a filter matches nothing, as on EC2. */
static const char *const offering_filters[] = { "instance-type", "location", NULL };

static int describe_instance_type_offerings(struct ec2 *c)
{
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_AWS, &types), nz = 0;
	const char *lt = ec2_param(c, "LocationType");
	struct ec2_filters fs = { 0 };
	int64_t max;
	bool has_max, by_zone;
	uint64_t start, row = 0, shown = 0;
	bool more = false;
	int ret = -1;

	if (!lt)
		lt = "region";
	by_zone = strcmp(lt, "availability-zone") == 0;
	if (!by_zone && strcmp(lt, "region") != 0) {
		/* availability-zone-id and outpost exist on EC2; not emulated */
		EC2_FAIL400(c, "InvalidParameterValue",
			    "The location type '%s' is not supported by this emulator", lt);
		return -1;
	}
	if (ec2_max_results(c, 5, 1000, &max, &has_max) || ec2_parse_token(c, 'o', &start) ||
	    ec2_get_filters(c, offering_filters, &fs))
		goto out;
	while (by_zone && region->zones[nz])
		nz++;
	ec2_begin(c);
	ec2_open(c, "instanceTypeOfferingSet");
	for (size_t t = 0; t < nt && !more; t++) {
		for (size_t z = 0; z < (by_zone ? nz : 1) && !more; z++) {
			const char *loc = by_zone ? region->zones[z] : c->region;
			bool m = !by_zone || sim_catalog_offered(SIM_AWS, loc, types[t].name);

			for (size_t f = 0; f < fs.n && m; f++)
				m = ec2_any_value(&fs.f[f],
						  strcmp(fs.f[f].name, "location") == 0
							  ? loc
							  : types[t].name);
			if (!m || row++ < start)
				continue;
			if ((int64_t)shown == max) {
				more = true;
				break;
			}
			ec2_open(c, "item");
			ec2_el(c, "instanceType", types[t].name);
			ec2_el(c, "locationType", lt);
			ec2_el(c, "location", loc);
			ec2_close(c);
			shown++;
		}
	}
	ec2_close(c);
	if (more)
		ec2_next_token(c, 'o', row - 1);
	ret = ec2_finish(c);
out:
	ec2_filters_release(&fs);
	return ret;
}

static const char *const spot_filters[] = { "availability-zone",   "instance-type",
					    "product-description", "spot-price",
					    "timestamp",	   NULL };

static int describe_spot_price_history(struct ec2 *c)
{
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const struct sim_itype *types;
	size_t nt = sim_catalog_itypes(SIM_AWS, &types);
	const char **want = NULL, **prods = NULL;
	size_t nw = ec2_list(c, "InstanceType", &want),
	       np = ec2_list(c, "ProductDescription", &prods);
	const char *zone = ec2_param(c, "AvailabilityZone"), *st = ec2_param(c, "StartTime"),
		   *et = ec2_param(c, "EndTime");
	struct ec2_filters fs = { 0 };
	int64_t max, t0, t1, stamp;
	bool has_max, linux_ok = np == 0;
	uint64_t start, pos = 0, shown = 0;
	size_t nz = 0;
	char ts[32];
	int ret = -1;

	if (ec2_max_results(c, 1, 1000, &max, &has_max) || ec2_parse_token(c, 's', &start) ||
	    ec2_get_filters(c, spot_filters, &fs))
		goto out;
	if ((st && sim_aws_parse_iso(st, &t0) != 0) || (et && sim_aws_parse_iso(et, &t1) != 0)) {
		EC2_FAIL400(c, "InvalidParameterValue", "Invalid value '%s' for %s", st ? st : et,
			    st && sim_aws_parse_iso(st, &t0) != 0 ? "startTime" : "endTime");
		goto out;
	}
	if (zone && !sim_catalog_zone_ok(region, zone)) {
		EC2_FAIL400(c, "InvalidParameterValue", "Invalid availability zone: [%s]", zone);
		goto out;
	}
	for (size_t i = 0; i < nw; i++)
		if (!sim_catalog_itype(SIM_AWS, want[i])) {
			ec2_bad_value(c, "InstanceType", want[i]);
			goto out;
		}
	for (size_t i = 0; i < np; i++)
		linux_ok = linux_ok || gc_starts_with(prods[i], "Linux/UNIX");
	for (; region->zones[nz]; nz++)
		;
	/* the price is fixed, so one record an hour old describes the whole window */
	stamp = (int64_t)c->req->now - (int64_t)c->req->now % 3600;
	ec2_iso_time(stamp, ts);

	ec2_begin(c);
	ec2_open(c, "spotPriceHistorySet");
	for (size_t t = 0; t < nt && linux_ok; t++) {
		bool wanted = nw == 0;
		for (size_t i = 0; i < nw; i++)
			wanted = wanted || strcmp(want[i], types[t].name) == 0;
		if (!wanted)
			continue;
		for (size_t z = 0; z < nz; z++, pos++) {
			char price[32];
			bool m = true;

			if (pos < start || (int64_t)shown >= max)
				continue;
			if (zone && strcmp(zone, region->zones[z]) != 0)
				continue;
			snprintf(price, sizeof(price), "%.6f", sim_catalog_price(&types[t], true));
			for (size_t f = 0; f < fs.n && m; f++) {
				const char *fn = fs.f[f].name;
				m = !strcmp(fn, "availability-zone")
					? ec2_any_value(&fs.f[f], region->zones[z])
					: !strcmp(fn, "instance-type")
					? ec2_any_value(&fs.f[f], types[t].name)
					: !strcmp(fn, "product-description")
					? ec2_any_value(&fs.f[f], "Linux/UNIX")
					: !strcmp(fn, "spot-price") ? ec2_any_value(&fs.f[f], price)
								    : ec2_any_value(&fs.f[f], ts);
			}
			if (!m)
				continue;
			ec2_open(c, "item");
			ec2_el(c, "instanceType", types[t].name);
			ec2_el(c, "productDescription", "Linux/UNIX");
			ec2_el(c, "spotPrice", price);
			ec2_el(c, "timestamp", ts);
			ec2_el(c, "availabilityZone", region->zones[z]);
			ec2_close(c);
			shown++;
		}
	}
	ec2_close(c);
	if ((int64_t)shown >= max && pos > start) {
		/* pos counted every (type, zone) slot; the next page starts after the last
		 * one shown, found again by counting */
		uint64_t seen = 0, slot = 0, next = 0;
		for (size_t t = 0; t < nt; t++) {
			bool wanted = nw == 0;
			for (size_t i = 0; i < nw; i++)
				wanted = wanted || strcmp(want[i], types[t].name) == 0;
			if (!wanted)
				continue;
			for (size_t z = 0; z < nz; z++, slot++)
				if (slot >= start && (!zone || !strcmp(zone, region->zones[z])) &&
				    seen < (uint64_t)max) {
					seen++;
					next = slot + 1;
				}
		}
		if (next < pos)
			ec2_next_token(c, 's', next);
	}
	ret = ec2_finish(c);
out:
	free(want);
	free(prods);
	ec2_filters_release(&fs);
	return ret;
}

static const char *const zone_filters[] = { "zone-name", "region-name",	  "state", "zone-type",
					    "zone-id",	 "opt-in-status", NULL };

static int describe_availability_zones(struct ec2 *c)
{
	const struct sim_region *region = sim_catalog_region(SIM_AWS, c->region);
	const char **names = NULL, **ids = NULL;
	size_t nn = ec2_list(c, "ZoneName", &names), ni = ec2_list(c, "ZoneId", &ids);
	struct ec2_filters fs = { 0 };
	bool all;
	int ret = -1;

	if (ec2_bool(c, "AllAvailabilityZones", false, &all) ||
	    ec2_get_filters(c, zone_filters, &fs))
		goto out;
	for (size_t i = 0; i < nn; i++)
		if (!sim_catalog_zone_ok(region, names[i])) {
			EC2_FAIL400(c, "InvalidParameterValue",
				    "The zone '%s' does not exist in the region %s", names[i],
				    c->region);
			goto out;
		}
	ec2_begin(c);
	ec2_open(c, "availabilityZoneInfo");
	for (size_t z = 0; region->zones[z]; z++) {
		const char *zn = region->zones[z];
		char zid[32], prefix[8] = "";
		bool wanted = nn + ni == 0, m = true;
		size_t pl = 0;

		/* zone ids look like "use1-az1": the region's initials, a number */
		for (const char *s = c->region; *s && pl < 4; s++)
			if (s == c->region || s[-1] == '-')
				prefix[pl++] = *s;
		snprintf(zid, sizeof(zid), "%.3s%c-az%zu", prefix, c->region[strlen(c->region) - 1],
			 z + 1);
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(names[i], zn) == 0;
		for (size_t i = 0; i < ni; i++)
			wanted = wanted || strcmp(ids[i], zid) == 0;
		for (size_t f = 0; f < fs.n && m; f++) {
			const char *fn = fs.f[f].name;
			m = !strcmp(fn, "zone-name")	     ? ec2_any_value(&fs.f[f], zn)
				: !strcmp(fn, "region-name") ? ec2_any_value(&fs.f[f], c->region)
				: !strcmp(fn, "state")	     ? ec2_any_value(&fs.f[f], "available")
				: !strcmp(fn, "zone-type")
				? ec2_any_value(&fs.f[f], "availability-zone")
				: !strcmp(fn, "zone-id")
				? ec2_any_value(&fs.f[f], zid)
				: ec2_any_value(&fs.f[f], "opt-in-not-required");
		}
		if (!wanted || !m)
			continue;
		ec2_open(c, "item");
		ec2_el(c, "optInStatus", "opt-in-not-required");
		ec2_el(c, "zoneName", zn);
		ec2_el(c, "zoneId", zid);
		ec2_el(c, "groupName", c->region);
		ec2_el(c, "networkBorderGroup", c->region);
		ec2_el(c, "zoneType", "availability-zone");
		ec2_el(c, "zoneState", "available");
		ec2_el(c, "regionName", c->region);
		ec2_open(c, "messageSet");
		ec2_close(c);
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(names);
	free(ids);
	ec2_filters_release(&fs);
	return ret;
}

static const char *const region_filters[] = { "region-name", "endpoint", "opt-in-status", NULL };

static int describe_regions(struct ec2 *c)
{
	const struct sim_region *regions;
	size_t n = sim_catalog_regions(SIM_AWS, &regions);
	const char **names = NULL;
	size_t nn = ec2_list(c, "RegionName", &names);
	struct ec2_filters fs = { 0 };
	bool all;
	int ret = -1;

	if (ec2_bool(c, "AllRegions", false, &all) || ec2_get_filters(c, region_filters, &fs))
		goto out;
	for (size_t i = 0; i < nn; i++)
		if (!sim_catalog_region(SIM_AWS, names[i])) {
			EC2_FAIL400(c, "InvalidParameterValue", "Invalid region: %s", names[i]);
			goto out;
		}
	ec2_begin(c);
	ec2_open(c, "regionInfo");
	for (size_t r = 0; r < n; r++) {
		char endpoint[96];
		bool wanted = nn == 0, m = true;

		snprintf(endpoint, sizeof(endpoint), "ec2.%s.amazonaws.com", regions[r].name);
		for (size_t i = 0; i < nn; i++)
			wanted = wanted || strcmp(names[i], regions[r].name) == 0;
		for (size_t f = 0; f < fs.n && m; f++) {
			const char *fn = fs.f[f].name;
			m = !strcmp(fn, "region-name") ? ec2_any_value(&fs.f[f], regions[r].name)
				: !strcmp(fn, "endpoint")
				? ec2_any_value(&fs.f[f], endpoint)
				: ec2_any_value(&fs.f[f], "opt-in-not-required");
		}
		if (!wanted || !m)
			continue;
		ec2_open(c, "item");
		ec2_el(c, "regionName", regions[r].name);
		ec2_el(c, "regionEndpoint", endpoint);
		ec2_el(c, "optInStatus", "opt-in-not-required");
		ec2_close(c);
	}
	ec2_close(c);
	ret = ec2_finish(c);
out:
	free(names);
	ec2_filters_release(&fs);
	return ret;
}

/* --- the action table --------------------------------------------------------------*/

static const char *const p_zones[] = { "ZoneName.N", "ZoneId.N", "AllAvailabilityZones",
				       EC2_FILTERS, NULL };
static const char *const p_images[] = { "ImageId.N",	   "Owner.N",
					"ExecutableBy.N",  "IncludeDeprecated",
					"IncludeDisabled", EC2_FILTERS,
					EC2_PAGING,	   NULL };
static const char *const p_itypes[] = { "InstanceType.N", EC2_FILTERS, EC2_PAGING, NULL };
static const char *const p_offerings[] = { "LocationType", EC2_FILTERS, EC2_PAGING, NULL };
static const char *const p_regions[] = { "RegionName.N", "AllRegions", EC2_FILTERS, NULL };
static const char *const p_spot[] = { "InstanceType.N",	  "ProductDescription.N",
				      "AvailabilityZone", "StartTime",
				      "EndTime",	  EC2_FILTERS,
				      EC2_PAGING,	  NULL };

const struct ec2_action ec2_catalog_actions[] = {
	{ "DescribeAvailabilityZones", describe_availability_zones, true, p_zones, false },
	{ "DescribeImages", describe_images, true, p_images, false },
	{ "DescribeInstanceTypeOfferings", describe_instance_type_offerings, true, p_offerings,
	  false },
	{ "DescribeInstanceTypes", describe_instance_types, true, p_itypes, false },
	{ "DescribeRegions", describe_regions, true, p_regions, false },
	{ "DescribeSpotPriceHistory", describe_spot_price_history, true, p_spot, false },
	{ NULL, NULL, false, NULL, false },
};
