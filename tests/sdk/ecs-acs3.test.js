'use strict';
/*
 * ecs-acs3.test.js: @alicloud/ecs20140526 (on @alicloud/openapi-core, ACS3-HMAC-SHA256)
 * against gpucluster-sim's Alibaba endpoint. The typed client casts every response into
 * its models and throws on a type mismatch, so a passing call also proves the shapes.
 * The tests run in order against one emulator.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { requireSdk, startSim, checkRequestLog, poll, sshPublicKey, sshRsaPublicKey, unique,
	rejects } = require('./lib/sim.js');

const Ecs = requireSdk('@alicloud/ecs20140526');
const { $OpenApiUtil } = requireSdk('@alicloud/openapi-core');
const EcsClient = Ecs.default;

const REGION = 'cn-hangzhou';
const ZONE = 'cn-hangzhou-i';
/* the emulator's default VPC and its vSwitch in ZONE (docs/sim.md, VPC) */
const VPC = 'vpc-gpuclustersim';
const VSWITCH = `vsw-gpuclustersim-${ZONE}`;
const IMAGE = 'ubuntu_22_04_x64_20G_alibase_20261015.vhd';
const TYPE = 'ecs.gn7i-c8g1.2xlarge';
/*
 * The SDK puts * ( ) ! ' raw in the wire query (querystring.stringify) but encodes them in
 * the canonical one; UTF-8 checks the decoding.
 */
const ROLE = "gpu worker (a) *~!'/ é 节点";

let sim;
let ecs;

function client(opts = {}) {
	return new EcsClient(new $OpenApiUtil.Config({
		accessKeyId: opts.id || sim.creds.alibaba.id,
		accessKeySecret: opts.secret || sim.creds.alibaba.secret,
		endpoint: sim.hostPort.alibaba, /* "127.0.0.1:PORT": used as the host header */
		protocol: 'http',
		regionId: REGION,
	}));
}

/* Expects an openapi-core error with err.code one of codes and a 4xx status. */
async function expectCode(what, codes, fn, status) {
	const err = await rejects(what, fn);
	assert.ok(codes.includes(err.code), `${what}: err.code ${err.code} (${err.message}) ` +
		  `is one of ${codes.join('/')}`);
	if (status)
		assert.equal(err.statusCode, status, `${what}: HTTP status`);
	assert.equal(err.name, err.statusCode >= 500 ? 'ServerError' : 'ClientError');
	assert.match(err.requestId, /^[0-9A-F-]{36}$/, `${what}: RequestId`);
	return err;
}

function tagMap(tags) {
	return Object.fromEntries(((tags && tags.tag) || []).map((t) => [t.tagKey, t.tagValue]));
}

async function describeIds(ids) {
	const r = await ecs.describeInstances(new Ecs.DescribeInstancesRequest({
		regionId: REGION, instanceIds: JSON.stringify(ids), maxResults: 100,
	}));
	return new Map((r.body.instances.instance || []).map((i) => [i.instanceId, i]));
}

before(async () => {
	sim = await startSim();
	ecs = client();
});

after(async () => {
	if (sim)
		await sim.stop();
});

const fleet = unique('fleet-');
const token = unique('tok-');
let sg;
let batchA = [];
let batchB = [];
let others = [];

function runReq(amount, tags, clientToken, type = TYPE) {
	return new Ecs.RunInstancesRequest({
		regionId: REGION,
		zoneId: ZONE,
		vSwitchId: VSWITCH,
		imageId: IMAGE,
		instanceType: type,
		securityGroupId: sg,
		amount,
		clientToken,
		instanceName: 'gpu-worker',
		internetMaxBandwidthOut: 10,
		tag: tags.map(([key, value]) => new Ecs.RunInstancesRequestTag({ key, value })),
	});
}

test('CreateSecurityGroup, AuthorizeSecurityGroup (SSH), describe', async () => {
	const c = await ecs.createSecurityGroup(new Ecs.CreateSecurityGroupRequest({
		regionId: REGION,
		vpcId: VPC,
		securityGroupName: unique('gc-sg-'),
		description: 'gpucluster sdk test',
		tag: [new Ecs.CreateSecurityGroupRequestTag({ key: 'fleet', value: fleet })],
	}));
	assert.equal(c.statusCode, 200);
	assert.match(c.body.securityGroupId, /^sg-[0-9a-z]+$/);
	sg = c.body.securityGroupId;

	await ecs.authorizeSecurityGroup(new Ecs.AuthorizeSecurityGroupRequest({
		regionId: REGION,
		securityGroupId: sg,
		ipProtocol: 'tcp',
		portRange: '22/22',
		sourceCidrIp: '203.0.113.0/24',
		policy: 'accept',
		description: 'ssh from the lab',
	}));

	const d = await ecs.describeSecurityGroupAttribute(
		new Ecs.DescribeSecurityGroupAttributeRequest({ regionId: REGION, securityGroupId: sg }));
	assert.equal(d.body.securityGroupId, sg);
	const perms = d.body.permissions.permission;
	const ssh = perms.find((p) => p.portRange === '22/22');
	assert.ok(ssh, `permissions: ${JSON.stringify(perms)}`);
	assert.equal(ssh.ipProtocol.toLowerCase(), 'tcp');
	assert.equal(ssh.sourceCidrIp, '203.0.113.0/24');
	assert.equal(ssh.policy.toLowerCase(), 'accept');
	assert.equal(ssh.direction, 'ingress');
	assert.equal(ssh.description, 'ssh from the lab');
});

// what gpucluster sends to reconcile a group's rules (issue 19): the ingress rules, then
// RevokeSecurityGroup by Permissions (protocol, range, source, policy, NIC type)
test('DescribeSecurityGroupAttribute (ingress), RevokeSecurityGroup by Permissions and by id',
     async () => {
	const c = await ecs.createSecurityGroup(new Ecs.CreateSecurityGroupRequest({
		regionId: REGION, vpcId: VPC, securityGroupName: unique('gc-rv-'),
		description: 'gpucluster sdk revoke',
	}));
	const id = c.body.securityGroupId;
	const perm = (cidr, desc) => new Ecs.AuthorizeSecurityGroupRequestPermissions({
		ipProtocol: 'TCP', portRange: '22/22', sourceCidrIp: cidr, policy: 'Accept',
		nicType: 'intranet', priority: '1', description: desc });
	await ecs.authorizeSecurityGroup(new Ecs.AuthorizeSecurityGroupRequest({
		regionId: REGION, securityGroupId: id,
		permissions: [perm('203.0.113.0/24', 'gpucluster ssh'), perm('198.51.100.0/24', 'by hand'),
			perm('192.0.2.0/24', 'by hand too')],
	}));
	const rules = async () => (await ecs.describeSecurityGroupAttribute(
		new Ecs.DescribeSecurityGroupAttributeRequest({ regionId: REGION, securityGroupId: id,
			direction: 'ingress' }))).body.permissions.permission;
	assert.equal((await rules()).length, 3);
	// pages of MaxResults (10..1000; gpucluster asks for 1000 and refuses a second page)
	const page = await ecs.describeSecurityGroupAttribute(
		new Ecs.DescribeSecurityGroupAttributeRequest({ regionId: REGION, securityGroupId: id,
			direction: 'ingress', maxResults: 1000 }));
	assert.equal(page.body.permissions.permission.length, 3);
	assert.ok(!page.body.nextToken, `nextToken ${page.body.nextToken}`);
	await expectCode('MaxResults below 10', ['InvalidParameter'],
			 () => ecs.describeSecurityGroupAttribute(
				 new Ecs.DescribeSecurityGroupAttributeRequest({ regionId: REGION,
					 securityGroupId: id, maxResults: 5 })));

	const revoke = (cidr) => ecs.revokeSecurityGroup(new Ecs.RevokeSecurityGroupRequest({
		regionId: REGION, securityGroupId: id,
		permissions: [new Ecs.RevokeSecurityGroupRequestPermissions({ ipProtocol: 'tcp',
			portRange: '22/22', sourceCidrIp: cidr, policy: 'Accept', nicType: 'intranet' })],
	}));
	const r = await revoke('203.0.113.0/24');
	assert.equal(r.statusCode, 200);
	let left = await rules();
	assert.deepEqual(left.map((p) => p.sourceCidrIp).sort(), ['192.0.2.0/24', '198.51.100.0/24']);
	// Permissions that match no rule: no error, nothing goes
	await revoke('203.0.113.0/24');
	assert.equal((await rules()).length, 2);

	// by rule id; an id that does not exist fails the call (since July 2024)
	const byId = left.find((p) => p.sourceCidrIp === '192.0.2.0/24').securityGroupRuleId;
	await ecs.revokeSecurityGroup(new Ecs.RevokeSecurityGroupRequest({
		regionId: REGION, securityGroupId: id, securityGroupRuleId: [byId] }));
	left = await rules();
	assert.deepEqual(left.map((p) => p.sourceCidrIp), ['198.51.100.0/24']);
	assert.equal(left[0].description, 'by hand');
	await expectCode('an unknown rule id', ['InvalidParam.SecurityGroupRuleId'],
			 () => ecs.revokeSecurityGroup(new Ecs.RevokeSecurityGroupRequest({
				 regionId: REGION, securityGroupId: id,
				 securityGroupRuleId: ['sgr-doesnotexist'] })));
	await ecs.deleteSecurityGroup(new Ecs.DeleteSecurityGroupRequest({
		regionId: REGION, securityGroupId: id }));
});

// IPv6 sources (issue 18): Permissions.N.Ipv6SourceCidrIp on authorize and revoke, read
// back from DescribeSecurityGroupAttribute; an IPv6 block in SourceCidrIp is refused
test('IPv6 sources: Ipv6SourceCidrIp authorize, describe, revoke; IPv6 in SourceCidrIp refused',
     async () => {
	const c = await ecs.createSecurityGroup(new Ecs.CreateSecurityGroupRequest({
		regionId: REGION, vpcId: VPC, securityGroupName: unique('gc-v6-'),
		description: 'gpucluster sdk ipv6',
	}));
	const id = c.body.securityGroupId;
	const base = { ipProtocol: 'TCP', portRange: '22/22', policy: 'Accept', nicType: 'intranet',
		priority: '1', description: 'gpucluster ssh' };
	await ecs.authorizeSecurityGroup(new Ecs.AuthorizeSecurityGroupRequest({
		regionId: REGION, securityGroupId: id,
		permissions: [
			new Ecs.AuthorizeSecurityGroupRequestPermissions({ ...base,
				sourceCidrIp: '203.0.113.0/24' }),
			new Ecs.AuthorizeSecurityGroupRequestPermissions({ ...base,
				ipv6SourceCidrIp: '2001:db8::/32' })],
	}));
	const rules = async () => (await ecs.describeSecurityGroupAttribute(
		new Ecs.DescribeSecurityGroupAttributeRequest({ regionId: REGION, securityGroupId: id,
			direction: 'ingress', maxResults: 1000 }))).body.permissions.permission;
	let got = await rules();
	assert.deepEqual(got.map((p) => [p.sourceCidrIp, p.ipv6SourceCidrIp]).sort(),
			 [['', '2001:db8::/32'], ['203.0.113.0/24', '']]);
	await expectCode('an IPv6 block in SourceCidrIp', ['InvalidSourceCidrIp.Malformed'],
			 () => ecs.authorizeSecurityGroup(new Ecs.AuthorizeSecurityGroupRequest({
				 regionId: REGION, securityGroupId: id,
				 permissions: [new Ecs.AuthorizeSecurityGroupRequestPermissions({
					 ...base, sourceCidrIp: '2001:db8:1::/48' })],
			 })));
	await ecs.revokeSecurityGroup(new Ecs.RevokeSecurityGroupRequest({
		regionId: REGION, securityGroupId: id,
		permissions: [new Ecs.RevokeSecurityGroupRequestPermissions({ ipProtocol: 'tcp',
			portRange: '22/22', ipv6SourceCidrIp: '2001:db8::/32', policy: 'Accept',
			nicType: 'intranet' })],
	}));
	got = await rules();
	assert.deepEqual(got.map((p) => p.sourceCidrIp), ['203.0.113.0/24']);
	await ecs.deleteSecurityGroup(new Ecs.DeleteSecurityGroupRequest({
		regionId: REGION, securityGroupId: id }));
});

test('RunInstances with tags and an Amount', async () => {
	const a = await ecs.runInstances(runReq(5, [['fleet', fleet], ['role', ROLE]], token));
	const ids = a.body.instanceIdSets.instanceIdSet;
	assert.equal(ids.length, 5);
	for (const id of ids)
		assert.match(id, /^i-[0-9a-z]{8,24}$/);
	assert.equal(new Set(ids).size, 5);
	batchA = ids;

	const b = await ecs.runInstances(runReq(3, [['fleet', fleet]], unique('tok-')));
	batchB = b.body.instanceIdSets.instanceIdSet;
	assert.equal(batchB.length, 3);
	const c = await ecs.runInstances(runReq(2, [['fleet', `${fleet}-other`]], undefined));
	others = c.body.instanceIdSets.instanceIdSet;
	assert.equal(new Set([...batchA, ...batchB, ...others]).size, 10);

	const m = await describeIds(batchA);
	for (const id of batchA) {
		const i = m.get(id);
		assert.ok(i, `${id} is described`);
		assert.ok(['Pending', 'Running'].includes(i.status), `status ${i.status}`);
		assert.equal(i.instanceType, TYPE);
		assert.equal(i.imageId, IMAGE);
		assert.equal(i.regionId, REGION);
		assert.equal(i.zoneId, ZONE);
		assert.equal(i.GPUAmount, 1);
		assert.equal(i.GPUSpec, 'NVIDIA A10');
		assert.deepEqual(i.securityGroupIds.securityGroupId, [sg]);
		assert.match(i.creationTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?Z$/);
		assert.deepEqual(tagMap(i.tags), { fleet, role: ROLE });
	}
});

test('DescribeInstances by tag, NextToken pages of 3 and PageNumber pages of 3', async () => {
	const want = [...batchA, ...batchB].sort();
	const tag = [new Ecs.DescribeInstancesRequestTag({ key: 'fleet', value: fleet })];

	const pages = [];
	let next;
	do {
		const r = await ecs.describeInstances(new Ecs.DescribeInstancesRequest({
			regionId: REGION, tag, maxResults: 3, nextToken: next,
		}));
		const ids = (r.body.instances.instance || []).map((i) => i.instanceId);
		assert.ok(ids.length <= 3, `page of ${ids.length}`);
		pages.push(ids);
		next = r.body.nextToken;
		assert.ok(pages.length <= 10, 'pagination ends');
	} while (next);
	assert.ok(pages.length >= 3, `8 instances in pages of 3: ${JSON.stringify(pages)}`);
	assert.deepEqual(pages.flat().sort(), want, 'each instance exactly once (NextToken)');

	const numbered = [];
	for (let n = 1; n <= 10; n++) {
		const r = await ecs.describeInstances(new Ecs.DescribeInstancesRequest({
			regionId: REGION, tag, pageSize: 3, pageNumber: n,
		}));
		assert.equal(r.body.totalCount, 8);
		assert.equal(r.body.pageNumber, n);
		assert.equal(r.body.pageSize, 3);
		const ids = (r.body.instances.instance || []).map((i) => i.instanceId);
		if (ids.length === 0)
			break;
		numbered.push(ids);
	}
	assert.equal(numbered.length, 3);
	assert.deepEqual(numbered.flat().sort(), want, 'each instance exactly once (PageNumber)');

	const o = await ecs.describeInstances(new Ecs.DescribeInstancesRequest({
		regionId: REGION,
		tag: [new Ecs.DescribeInstancesRequestTag({ key: 'fleet', value: `${fleet}-other` })],
	}));
	assert.deepEqual(o.body.instances.instance.map((i) => i.instanceId).sort(), [...others].sort());

	await poll('instances Running', async () => {
		const m = await describeIds(want);
		return m.size === want.length && [...m.values()].every((i) => i.status === 'Running');
	});
	const i = (await describeIds([batchA[0]])).get(batchA[0]);
	assert.match(i.vpcAttributes.privateIpAddress.ipAddress[0], /^\d+\.\d+\.\d+\.\d+$/);
	assert.match(i.publicIpAddress.ipAddress[0], /^\d+\.\d+\.\d+\.\d+$/,
		     'InternetMaxBandwidthOut > 0 gives a public address');
});

test('ClientToken replay returns the same ids; other params mismatch', async () => {
	const again = await ecs.runInstances(runReq(5, [['fleet', fleet], ['role', ROLE]],
						    token));
	assert.deepEqual([...again.body.instanceIdSets.instanceIdSet].sort(), [...batchA].sort());
	const err = await expectCode('token reuse with another type', ['IdempotentParameterMismatch'],
				     () => ecs.runInstances(runReq(5, [['fleet', fleet]], token,
								   'ecs.gn6i-c4g1.xlarge')));
	assert.ok(err.statusCode >= 400 && err.statusCode < 500, `status ${err.statusCode}`);
});

test('DeleteInstances and the instances go away', async () => {
	const ids = [...batchA, ...batchB, ...others];
	const r = await ecs.deleteInstances(new Ecs.DeleteInstancesRequest({
		regionId: REGION, instanceId: ids, force: true,
	}));
	assert.equal(r.statusCode, 200);
	assert.match(r.body.requestId, /^[0-9A-F-]{36}$/);
	await poll('instances gone', async () => (await describeIds(ids)).size === 0);
	const left = await ecs.describeInstances(new Ecs.DescribeInstancesRequest({
		regionId: REGION, tag: [new Ecs.DescribeInstancesRequestTag({ key: 'fleet', value: fleet })],
	}));
	assert.equal(left.body.totalCount, 0);
	assert.deepEqual(left.body.instances.instance || [], []);
});

test('DeleteSecurityGroup', async () => {
	await ecs.deleteSecurityGroup(new Ecs.DeleteSecurityGroupRequest({
		regionId: REGION, securityGroupId: sg,
	}));
	await expectCode('describe deleted group', ['InvalidSecurityGroupId.NotFound'],
			 () => ecs.describeSecurityGroupAttribute(
				 new Ecs.DescribeSecurityGroupAttributeRequest({
					 regionId: REGION, securityGroupId: sg,
				 })));
});

test('ImportKeyPair, DescribeKeyPairs, DeleteKeyPairs', async () => {
	const name = unique('gc-key-');
	const line = sshRsaPublicKey();
	const imp = await ecs.importKeyPair(new Ecs.ImportKeyPairRequest({
		regionId: REGION, keyPairName: name, publicKeyBody: line,
	}));
	/* ECS takes RSA, DSA and ECDSA keys, not Ed25519 */
	await expectCode('an Ed25519 key', ['InvalidPublicKeyBody.Malformed'],
			 () => ecs.importKeyPair(new Ecs.ImportKeyPairRequest({
				 regionId: REGION, keyPairName: `${name}-ed`,
				 publicKeyBody: sshPublicKey(),
			 })), 400);
	assert.equal(imp.body.keyPairName, name);
	assert.ok(imp.body.keyPairFingerPrint, 'a fingerprint');

	const d = await ecs.describeKeyPairs(new Ecs.DescribeKeyPairsRequest({
		regionId: REGION, keyPairName: name,
	}));
	const kps = d.body.keyPairs.keyPair;
	assert.equal(kps.length, 1);
	assert.equal(kps[0].keyPairName, name);
	assert.equal(kps[0].keyPairFingerPrint, imp.body.keyPairFingerPrint);

	await ecs.deleteKeyPairs(new Ecs.DeleteKeyPairsRequest({
		regionId: REGION, keyPairNames: JSON.stringify([name]),
	}));
	const gone = await ecs.describeKeyPairs(new Ecs.DescribeKeyPairsRequest({
		regionId: REGION, keyPairName: name,
	}));
	assert.deepEqual(gone.body.keyPairs.keyPair || [], []);
	assert.equal(gone.body.totalCount, 0);
});

test('a wrong secret and an unknown AccessKeyId are rejected', async () => {
	const bad = client({ secret: 'not-the-secret-000000000000000000' });
	await expectCode('wrong secret', ['SignatureDoesNotMatch'],
			 () => bad.describeInstances(new Ecs.DescribeInstancesRequest({ regionId: REGION })));
	const unknown = client({ id: 'LTAInosuchkey000000' });
	await expectCode('unknown key id', ['InvalidAccessKeyId.NotFound'],
			 () => unknown.describeInstances(new Ecs.DescribeInstancesRequest({
				 regionId: REGION,
			 })));
});

test('DescribeInstanceTypes, DescribeImages, DescribePrice, DescribeSpotPriceHistory', async () => {
	const t = await ecs.describeInstanceTypes(new Ecs.DescribeInstanceTypesRequest({
		instanceTypes: [TYPE, 'ecs.gn7e-c16g1.32xlarge'],
	}));
	const by = Object.fromEntries(t.body.instanceTypes.instanceType.map((x) => [x.instanceTypeId, x]));
	assert.deepEqual(Object.keys(by).sort(), ['ecs.gn7e-c16g1.32xlarge', TYPE]);
	assert.equal(by[TYPE].GPUAmount, 1);
	assert.equal(by[TYPE].GPUSpec, 'NVIDIA A10');
	assert.equal(by[TYPE].GPUMemorySize, 24);
	assert.equal(by[TYPE].cpuCoreCount, 8);
	assert.equal(by[TYPE].memorySize, 30);
	assert.equal(by['ecs.gn7e-c16g1.32xlarge'].GPUAmount, 8);
	assert.equal(by['ecs.gn7e-c16g1.32xlarge'].GPUSpec, 'NVIDIA A100 80G');
	assert.equal(by['ecs.gn7e-c16g1.32xlarge'].GPUMemorySize, 80);

	const fam = await ecs.describeInstanceTypes(new Ecs.DescribeInstanceTypesRequest({
		instanceTypeFamily: 'ecs.gn6i',
	}));
	assert.ok(fam.body.instanceTypes.instanceType.length >= 2);
	for (const x of fam.body.instanceTypes.instanceType)
		assert.match(x.instanceTypeId, /^ecs\.gn6i-/);

	const im = await ecs.describeImages(new Ecs.DescribeImagesRequest({
		regionId: REGION, imageId: 'm-bp1gpu2204cuda128drv570',
	}));
	assert.equal(im.body.images.image.length, 1);
	assert.equal(im.body.images.image[0].imageId, 'm-bp1gpu2204cuda128drv570');
	assert.match(im.body.images.image[0].imageName, /NVIDIA driver 570/);
	const sys = await ecs.describeImages(new Ecs.DescribeImagesRequest({
		regionId: REGION, imageOwnerAlias: 'system', pageSize: 50,
	}));
	const sysIds = sys.body.images.image.map((x) => x.imageId);
	assert.ok(sysIds.includes(IMAGE), `system images: ${sysIds}`);
	for (const x of sys.body.images.image)
		assert.equal(x.imageOwnerAlias, 'system');

	const p = await ecs.describePrice(new Ecs.DescribePriceRequest({
		regionId: REGION, resourceType: 'instance', instanceType: TYPE, zoneId: ZONE,
	}));
	const price = p.body.priceInfo.price;
	assert.equal(price.currency, 'CNY');
	assert.ok(Math.abs(price.tradePrice - 13.80) < 0.01, `trade price ${price.tradePrice}`);
	assert.ok(price.originalPrice >= price.tradePrice);

	const sp = await ecs.describeSpotPriceHistory(new Ecs.DescribeSpotPriceHistoryRequest({
		regionId: REGION, networkType: 'vpc', instanceType: TYPE, zoneId: ZONE,
	}));
	const spots = sp.body.spotPrices.spotPriceType;
	assert.ok(spots.length >= 1);
	for (const s of spots) {
		assert.equal(s.instanceType, TYPE);
		assert.equal(s.zoneId, ZONE);
		assert.ok(s.spotPrice > 0 && s.spotPrice < s.originPrice,
			  `spot ${s.spotPrice} < ${s.originPrice}`);
	}
});

test('DescribeAvailableResource: the zones selling a type, and the types of a zone', async () => {
	/* what plan asks: cn-hangzhou-j sells no ecs.gn8is-2x.8xlarge in the emulator's
	 * catalogue, as real zones each sell a subset */
	const r = await ecs.describeAvailableResource(new Ecs.DescribeAvailableResourceRequest({
		regionId: REGION, destinationResource: 'InstanceType',
		instanceType: 'ecs.gn8is-2x.8xlarge',
	}));
	const zones = r.body.availableZones.availableZone;
	assert.deepEqual(zones.map((z) => z.zoneId),
			 ['cn-hangzhou-h', 'cn-hangzhou-i', 'cn-hangzhou-k']);
	for (const z of zones) {
		assert.equal(z.regionId, REGION);
		const res = z.availableResources.availableResource;
		assert.equal(res.length, 1);
		assert.equal(res[0].type, 'InstanceType');
		assert.deepEqual(res[0].supportedResources.supportedResource.map((s) => s.value),
				 ['ecs.gn8is-2x.8xlarge']);
		assert.equal(res[0].supportedResources.supportedResource[0].status, 'Available');
	}

	const j = await ecs.describeAvailableResource(new Ecs.DescribeAvailableResourceRequest({
		regionId: REGION, destinationResource: 'InstanceType', zoneId: 'cn-hangzhou-j',
	}));
	const types = j.body.availableZones.availableZone[0].availableResources
		.availableResource[0].supportedResources.supportedResource.map((s) => s.value);
	assert.ok(types.includes(TYPE), `types of cn-hangzhou-j: ${types}`);
	assert.ok(!types.includes('ecs.gn8is-2x.8xlarge'));

	/* an unknown type: no zone sells it, and no list at all */
	const none = await ecs.describeAvailableResource(new Ecs.DescribeAvailableResourceRequest({
		regionId: REGION, destinationResource: 'InstanceType', instanceType: 'ecs.gpu-huge9',
	}));
	assert.equal(none.body.availableZones, undefined);
});

test('show-gpus live: the GPU types, and every zone with the types it sells', async () => {
	/* what ops->gpu_types asks: DescribeInstanceTypes with MinimumGPUAmount, and
	 * DescribeAvailableResource for InstanceType without a type or zone */
	const t = await ecs.describeInstanceTypes(new Ecs.DescribeInstanceTypesRequest({
		minimumGPUAmount: 1, maxResults: 1600,
	}));
	const types = t.body.instanceTypes.instanceType;
	assert.ok(types.length >= 5);
	for (const x of types)
		assert.ok(x.GPUAmount >= 1, `${x.instanceTypeId} has no GPU`);
	assert.ok(types.some((x) => x.instanceTypeId === 'ecs.gn8is-2x.8xlarge'));
	const r = await ecs.describeAvailableResource(new Ecs.DescribeAvailableResourceRequest({
		regionId: REGION, destinationResource: 'InstanceType',
	}));
	const sells = {};
	for (const z of r.body.availableZones.availableZone)
		sells[z.zoneId] = z.availableResources.availableResource[0].supportedResources
			.supportedResource.map((s) => s.value);
	assert.ok(Object.keys(sells).length >= 3, `${Object.keys(sells)}`);
	assert.ok(sells['cn-hangzhou-h'].includes('ecs.gn8is-2x.8xlarge'));
	assert.ok(!sells['cn-hangzhou-j'].includes('ecs.gn8is-2x.8xlarge'));
});

test('injected throttling and capacity errors are classified by the SDK', async () => {
	await sim.addFaults('alibaba:DescribeInstances:throttle,times=1',
			    'alibaba:RunInstances:capacity,times=1');
	try {
		const t = await rejects('throttled', () => ecs.describeInstances(
			new Ecs.DescribeInstancesRequest({ regionId: REGION })));
		assert.equal(t.name, 'ThrottlingError', `${t.name}: ${t.message}`);
		assert.match(t.code, /^Throttling/);
		assert.equal(t.statusCode, 400);
		/* parameters are checked before faults: the launch needs a live group */
		sg = (await ecs.createSecurityGroup(new Ecs.CreateSecurityGroupRequest({
			regionId: REGION, vpcId: VPC, securityGroupName: unique('gc-sg-'),
		}))).body.securityGroupId;
		const c = await expectCode('no capacity', ['OperationDenied.NoStock'],
					   () => ecs.runInstances(runReq(1, [['fleet', fleet]], undefined)));
		assert.equal(c.statusCode, 403);
	} finally {
		await sim.clearFaults();
	}
});

test('request log is well-formed', () => {
	checkRequestLog(sim, 'alibaba',
			['CreateSecurityGroup', 'AuthorizeSecurityGroup', 'RevokeSecurityGroup',
			 'DescribeSecurityGroupAttribute', 'RunInstances',
			 'DescribeInstances', 'DeleteInstances', 'ImportKeyPair', 'DescribeKeyPairs',
			 'DeleteKeyPairs', 'DescribeInstanceTypes', 'DescribeImages', 'DescribePrice'],
			['IdempotentParameterMismatch', 'SignatureDoesNotMatch',
			 'InvalidAccessKeyId.NotFound', 'OperationDenied.NoStock']);
});

test('the emulator exits 0 on SIGTERM', async () => {
	const { code, signal } = await sim.stop();
	assert.equal(signal, null, `exit signal ${signal}\n${sim.output()}`);
	assert.equal(code, 0, `exit status ${code}\n${sim.output()}`);
});
