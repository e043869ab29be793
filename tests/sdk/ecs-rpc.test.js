'use strict';
/*
 * ecs-rpc.test.js: Alibaba's RPC signature (HMAC-SHA1, "V2") against gpucluster-sim,
 * through @alicloud/pop-core (GET with everything in the query, and POST with a form
 * body) and through @alicloud/openapi-core with signatureAlgorithm "v2" (POST with the
 * parameters in the query, Format=json in lower case). The tests run in order against
 * one emulator.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { requireSdk, startSim, checkRequestLog, poll, sshPublicKey, sshRsaPublicKey, unique,
	rejects } = require('./lib/sim.js');

const RPCClient = requireSdk('@alicloud/pop-core').RPCClient;
const Ecs = requireSdk('@alicloud/ecs20140526');
const { $OpenApiUtil } = requireSdk('@alicloud/openapi-core');

const REGION = 'cn-beijing';
const ZONE = 'cn-beijing-g';
/* the emulator's default VPC and its vSwitch in ZONE (docs/sim.md, VPC) */
const VPC = 'vpc-gpuclustersim';
const VSWITCH = `vsw-gpuclustersim-${ZONE}`;
const IMAGE = 'm-bp1gpu2204cuda128drv570';
const TYPE = 'ecs.gn6i-c4g1.xlarge';

let sim;
let pop;

function client(opts = {}) {
	return new RPCClient({
		accessKeyId: opts.id || sim.creds.alibaba.id,
		accessKeySecret: opts.secret || sim.creds.alibaba.secret,
		endpoint: sim.ready.alibaba, /* "http://127.0.0.1:PORT" */
		apiVersion: '2014-05-26',
	});
}

const GET = {};
const POST = { method: 'POST' };

/* pop-core throws for any body with a Code: err.code is the cloud's error code. */
async function expectCode(what, codes, fn) {
	const err = await rejects(what, fn);
	assert.ok(codes.includes(err.code), `${what}: err.code ${err.code} (${err.message}) ` +
		  `is one of ${codes.join('/')}`);
	assert.equal(err.name, `${err.code}Error`);
	assert.equal(err.data.Code, err.code);
	assert.match(err.data.RequestId, /^[0-9A-F-]{36}$/);
	const status = err.entry.response.statusCode;
	assert.ok(status >= 400 && status < 500, `${what}: HTTP status ${status}`);
	return err;
}

async function describeIds(ids) {
	const r = await pop.request('DescribeInstances', {
		RegionId: REGION, InstanceIds: JSON.stringify(ids), MaxResults: 100,
	}, GET);
	return new Map(r.Instances.Instance.map((i) => [i.InstanceId, i]));
}

/* An international-site account (docs/sim.md, "Two sites"): prices in USD. */
const INTL = { id: 'LTAIgpuclusterintl01', secret: 'gpucluster-sim-alibaba-intl-secret' };

before(async () => {
	sim = await startSim(['--cred', `alibaba:${INTL.id}:${INTL.secret}:intl`]);
	pop = client();
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

function runParams(amount, tags, clientToken, type = TYPE) {
	const p = {
		RegionId: REGION, ZoneId: ZONE, VSwitchId: VSWITCH, ImageId: IMAGE, InstanceType: type,
		SecurityGroupId: sg, Amount: amount,
		Tag: tags.map(([Key, Value]) => ({ Key, Value })),
		'SystemDisk.Category': 'cloud_essd',
		'SystemDisk.Size': 100,
		'SystemDisk.Encrypted': 'true',
	};
	if (clientToken)
		p.ClientToken = clientToken;
	return p;
}

test('CreateSecurityGroup (POST), AuthorizeSecurityGroup (GET), describe', async () => {
	const c = await pop.request('CreateSecurityGroup', {
		RegionId: REGION, VpcId: VPC, SecurityGroupName: unique('gc-sg-'),
		Description: 'sdk test: ssh (22) only',
	}, POST);
	assert.match(c.SecurityGroupId, /^sg-[0-9a-z]+$/);
	assert.ok(!('Code' in c), 'a success body has no Code');
	sg = c.SecurityGroupId;
	await pop.request('AuthorizeSecurityGroup', {
		RegionId: REGION, SecurityGroupId: sg, IpProtocol: 'tcp', PortRange: '22/22',
		SourceCidrIp: '0.0.0.0/0', Policy: 'accept', Description: "ssh (anyone's)",
	}, GET);
	const d = await pop.request('DescribeSecurityGroupAttribute', {
		RegionId: REGION, SecurityGroupId: sg,
	}, GET);
	assert.equal(d.Description, 'sdk test: ssh (22) only');
	const ssh = d.Permissions.Permission.find((p) => p.PortRange === '22/22');
	assert.ok(ssh, JSON.stringify(d.Permissions));
	assert.equal(ssh.SourceCidrIp, '0.0.0.0/0');
	assert.equal(ssh.Description, "ssh (anyone's)");
});

test('RunInstances with tags and an Amount (GET and POST)', async () => {
	const a = await pop.request('RunInstances',
				    runParams(4, [['fleet', fleet], ['note', 'a*b (c) ~d!']], token), POST);
	batchA = a.InstanceIdSets.InstanceIdSet;
	assert.equal(batchA.length, 4);
	const b = await pop.request('RunInstances', runParams(3, [['fleet', fleet]], unique('tok-')),
				    GET);
	batchB = b.InstanceIdSets.InstanceIdSet;
	assert.equal(batchB.length, 3);
	assert.equal(new Set([...batchA, ...batchB]).size, 7);

	const m = await describeIds(batchA);
	for (const id of batchA) {
		const i = m.get(id);
		assert.ok(i, `${id} described`);
		assert.equal(i.InstanceType, TYPE);
		assert.equal(i.ZoneId, ZONE);
		assert.equal(i.GPUAmount, 1);
		assert.equal(i.GPUSpec, 'NVIDIA T4');
		const tags = Object.fromEntries(i.Tags.Tag.map((t) => [t.TagKey, t.TagValue]));
		assert.deepEqual(tags, { fleet, note: 'a*b (c) ~d!' });
	}
});

test('DescribeInstances by tag: MaxResults/NextToken and PageSize 2 (GET and POST)', async () => {
	const want = [...batchA, ...batchB].sort();
	const tag = [{ Key: 'fleet', Value: fleet }];
	const pages = [];
	let next;
	do {
		const p = { RegionId: REGION, Tag: tag, MaxResults: 2 };
		if (next)
			p.NextToken = next;
		const r = await pop.request('DescribeInstances', p, pages.length % 2 ? POST : GET);
		const ids = r.Instances.Instance.map((i) => i.InstanceId);
		assert.ok(ids.length <= 2);
		pages.push(ids);
		next = r.NextToken;
		assert.ok(pages.length <= 10, 'pagination ends');
	} while (next);
	assert.ok(pages.length >= 4, `7 in pages of 2: ${JSON.stringify(pages)}`);
	assert.deepEqual(pages.flat().sort(), want);

	const numbered = [];
	for (let n = 1; n <= 5; n++) {
		const r = await pop.request('DescribeInstances',
					    { RegionId: REGION, Tag: tag, PageSize: 2, PageNumber: n }, GET);
		assert.equal(r.TotalCount, 7);
		numbered.push(...r.Instances.Instance.map((i) => i.InstanceId));
	}
	assert.deepEqual(numbered.sort(), want);

	await poll('instances Running', async () => {
		const m = await describeIds(want);
		return m.size === want.length && [...m.values()].every((i) => i.Status === 'Running');
	});
});

test('ClientToken replay returns the same ids; other params mismatch', async () => {
	const again = await pop.request('RunInstances',
					runParams(4, [['fleet', fleet], ['note', 'a*b (c) ~d!']], token),
					GET);
	assert.deepEqual([...again.InstanceIdSets.InstanceIdSet].sort(), [...batchA].sort());
	await expectCode('token reuse with another Amount', ['IdempotentParameterMismatch'],
			 () => pop.request('RunInstances',
					   runParams(2, [['fleet', fleet]], token), POST));
});

test('openapi-core with signatureAlgorithm v2 (Format=json, POST, query params)', async () => {
	const v2 = new Ecs.default(new $OpenApiUtil.Config({
		accessKeyId: sim.creds.alibaba.id,
		accessKeySecret: sim.creds.alibaba.secret,
		endpoint: sim.hostPort.alibaba,
		protocol: 'http',
		regionId: REGION,
		signatureAlgorithm: 'v2',
	}));
	const r = await v2.describeInstances(new Ecs.DescribeInstancesRequest({
		regionId: REGION, instanceIds: JSON.stringify(batchA),
	}));
	assert.deepEqual(r.body.instances.instance.map((i) => i.instanceId).sort(), [...batchA].sort());
	const t = await v2.describeInstanceTypes(new Ecs.DescribeInstanceTypesRequest({
		instanceTypes: [TYPE],
	}));
	assert.equal(t.body.instanceTypes.instanceType[0].GPUSpec, 'NVIDIA T4');
	assert.equal(t.body.instanceTypes.instanceType[0].GPUAmount, 1);
	assert.equal(t.body.instanceTypes.instanceType[0].GPUMemorySize, 16);
});

// what gpucluster sends when lifecycle.ttl changes: AutoReleaseTime moved (one instance a
// call, cancelled without it) and the expires-at tag moved
test('ModifyInstanceAutoReleaseTime and TagResources/UntagResources move an expiry',
     async () => {
	const at = new Date(Date.now() + 4 * 3600e3);
	at.setUTCSeconds(0, 0);
	const when = at.toISOString().replace(/\.\d+Z$/, 'Z');
	const id = batchA[0];
	await pop.request('ModifyInstanceAutoReleaseTime',
			  { RegionId: REGION, InstanceId: id, AutoReleaseTime: when }, POST);
	assert.equal((await describeIds([id])).get(id).AutoReleaseTime, when);
	await pop.request('ModifyInstanceAutoReleaseTime', { RegionId: REGION, InstanceId: id }, GET);
	assert.ok(!(await describeIds([id])).get(id).AutoReleaseTime);

	const tags = () => describeIds(batchA).then((m) => [...m.values()].map((i) =>
		((i.Tags && i.Tags.Tag) || []).find((t) => t.TagKey === 'gpucluster:expires-at')));
	await pop.request('TagResources', { RegionId: REGION, ResourceType: 'instance',
		ResourceId: batchA, Tag: [{ Key: 'gpucluster:expires-at', Value: when }] }, POST);
	for (const t of await tags())
		assert.equal(t && t.TagValue, when);
	await pop.request('UntagResources', { RegionId: REGION, ResourceType: 'instance',
		ResourceId: batchA, TagKey: ['gpucluster:expires-at'] }, POST);
	for (const t of await tags())
		assert.equal(t, undefined);
});

test('ERIs: DescribeInstanceTypes EriQuantity; RunInstances with HighPerformance ENIs',
     async () => {
	const t = await pop.request('DescribeInstanceTypes', {
		'InstanceTypes.1': 'ecs.ebmgn7ex.32xlarge', 'InstanceTypes.2': TYPE,
	}, GET);
	const eri = Object.fromEntries(t.InstanceTypes.InstanceType.map((x) =>
		[x.InstanceTypeId, x.EriQuantity]));
	assert.deepEqual(eri, { 'ecs.ebmgn7ex.32xlarge': 2, [TYPE]: 0 });
	const eris = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [
		[`NetworkInterface.${i + 2}.InstanceType`, 'Secondary'],
		[`NetworkInterface.${i + 2}.VSwitchId`, VSWITCH],
		[`NetworkInterface.${i + 2}.SecurityGroupId`, sg],
		[`NetworkInterface.${i + 2}.NetworkInterfaceTrafficMode`, 'HighPerformance'],
	]).flat());
	const ok = await pop.request('RunInstances', {
		...runParams(1, [['fleet', unique('eri-')]], null, 'ecs.ebmgn7ex.32xlarge'), ...eris(2),
	}, POST);
	assert.equal(ok.InstanceIdSets.InstanceIdSet.length, 1);
	await expectCode('3 ERIs on a type that takes 2', ['InvalidParameter.EriQuantityExceeded'], () => pop.request('RunInstances', {
		...runParams(1, [], null, 'ecs.ebmgn7ex.32xlarge'), ...eris(3) }, POST));
	await expectCode('an ERI on a type without', ['InvalidParameter.EriNotSupported'], () => pop.request('RunInstances', {
		...runParams(1, [], null), ...eris(1) }, POST));
	await pop.request('DeleteInstances', {
		RegionId: REGION, InstanceId: ok.InstanceIdSets.InstanceIdSet, Force: true }, POST);
});

async function stateRole(id) {
	const st = await (await fetch(`${sim.ready.control}/state`)).json();
	return st.instances.find((i) => i.id === id).role;
}

test('an instance role: RamRoleName on RunInstances, in the emulator\'s state', async () => {
	const ok = await pop.request('RunInstances', {
		...runParams(1, [['fleet', unique('role-')]], null), RamRoleName: 'gpu-data.reader',
	}, POST);
	const id = ok.InstanceIdSets.InstanceIdSet[0];
	assert.equal(await stateRole(id), 'gpu-data.reader');
	await expectCode('a malformed role name', ['InvalidRamRole.NotFound'], () => pop.request(
		'RunInstances', { ...runParams(1, [], null), RamRoleName: 'no_underscore' }, POST));
	await pop.request('DeleteInstances', { RegionId: REGION, InstanceId: [id], Force: true },
			  POST);
});

test('deployment sets: LowLatency, launch into, the set\'s limit, in use, describe, delete',
     async () => {
	const name = unique('gc-ds-');
	const token = unique('tok-');
	const create = () => pop.request('CreateDeploymentSet', {
		RegionId: REGION, DeploymentSetName: name, Strategy: 'LowLatency',
		Description: `gpucluster:cluster=${name}`, ClientToken: token }, POST);
	const ds = (await create()).DeploymentSetId;
	assert.match(ds, /^ds-[0-9a-z]+$/);
	assert.equal((await create()).DeploymentSetId, ds, 'a retried ClientToken answers the set');
	await expectCode('an unknown strategy', ['InvalidParameter.Strategy'], () => pop.request(
		'CreateDeploymentSet', { RegionId: REGION, Strategy: 'Nearby' }, POST));
	const listed = async () => (await pop.request('DescribeDeploymentSets', {
		RegionId: REGION, DeploymentSetName: name, PageNumber: 1, PageSize: 50 }, GET))
		.DeploymentSets.DeploymentSet;
	const [one] = await listed();
	assert.equal(one.DeploymentSetId, ds);
	assert.equal(one.Strategy, 'LowLatency');
	assert.equal(one.DeploymentSetDescription, `gpucluster:cluster=${name}`);
	const ok = await pop.request('RunInstances', {
		...runParams(2, [['fleet', unique('ds-')]], null, 'ecs.ebmgn7ex.32xlarge'),
		DeploymentSetId: ds }, POST);
	const ids = ok.InstanceIdSets.InstanceIdSet;
	assert.equal((await describeIds(ids)).get(ids[0]).DeploymentSetId, ds);
	assert.equal((await listed())[0].InstanceAmount, 2);
	await expectCode('more than the set holds', ['DeploymentSet.InstanceLimitExceeded'],
			 () => pop.request('RunInstances', {
				 ...runParams(7, [], null, 'ecs.ebmgn7ex.32xlarge'),
				 DeploymentSetId: ds }, POST));
	await expectCode('an unknown set', ['DeploymentSet.InvalidId'], () => pop.request(
		'RunInstances', { ...runParams(1, [], null), DeploymentSetId: `${ds}x` }, POST));
	await expectCode('deleting a set in use', ['DependencyViolation.NotEmpty'], () =>
		pop.request('DeleteDeploymentSet', { RegionId: REGION, DeploymentSetId: ds }, POST));
	await pop.request('DeleteInstances', { RegionId: REGION, InstanceId: ids, Force: true },
			  POST);
	await poll('the set is deleted once its instances are gone', async () => {
		try {
			await pop.request('DeleteDeploymentSet',
					  { RegionId: REGION, DeploymentSetId: ds }, POST);
			return true;
		} catch (e) {
			assert.equal(e.code, 'DependencyViolation.NotEmpty');
			return false;
		}
	});
	assert.deepEqual(await listed(), []);
	await expectCode('deleting it again', ['DeploymentSet.InvalidId'], () => pop.request(
		'DeleteDeploymentSet', { RegionId: REGION, DeploymentSetId: ds }, POST));
});

test('a shutdown from inside stops the instance, in standard (charging) stop mode',
     async () => {
	const run = await pop.request('RunInstances', runParams(1, [['fleet', unique('off-')]], null),
				      POST);
	const id = run.InstanceIdSets.InstanceIdSet[0];
	await poll('the instance Running', async () =>
		(await describeIds([id])).get(id).Status === 'Running');
	/* what the node's own `shutdown -h now` does (docs/sim.md, control API) */
	const r = await fetch(`${sim.ready.control}/nodes/${id}/shutdown`, { method: 'POST' });
	assert.equal(r.status, 200, await r.text());
	const i = (await describeIds([id])).get(id);
	assert.equal(i.Status, 'Stopped');
	assert.equal(i.StoppedMode, 'KeepCharging');
	await pop.request('DeleteInstances', { RegionId: REGION, InstanceId: [id], Force: true },
			  POST);
	await poll('the stopped instance gone', async () => (await describeIds([id])).size === 0);
});

test('DeleteInstances and the instances go away; DeleteSecurityGroup', async () => {
	const ids = [...batchA, ...batchB];
	await pop.request('DeleteInstances', { RegionId: REGION, InstanceId: ids, Force: true }, POST);
	await poll('instances gone', async () => (await describeIds(ids)).size === 0);
	await pop.request('DeleteSecurityGroup', { RegionId: REGION, SecurityGroupId: sg }, GET);
	await expectCode('describe deleted group', ['InvalidSecurityGroupId.NotFound'],
			 () => pop.request('DescribeSecurityGroupAttribute',
					   { RegionId: REGION, SecurityGroupId: sg }, GET));
});

test('ImportKeyPair, DescribeKeyPairs, DeleteKeyPairs', async () => {
	const name = unique('gc-key-');
	const imp = await pop.request('ImportKeyPair', {
		RegionId: REGION, KeyPairName: name, PublicKeyBody: sshRsaPublicKey('user@host'),
	}, POST);
	await expectCode('an Ed25519 key', ['InvalidPublicKeyBody.Malformed'],
			 () => pop.request('ImportKeyPair', {
				 RegionId: REGION, KeyPairName: `${name}-ed`,
				 PublicKeyBody: sshPublicKey('user@host'),
			 }, POST));
	assert.equal(imp.KeyPairName, name);
	assert.ok(imp.KeyPairFingerPrint);
	const d = await pop.request('DescribeKeyPairs', { RegionId: REGION, KeyPairName: name }, GET);
	assert.equal(d.KeyPairs.KeyPair.length, 1);
	assert.equal(d.KeyPairs.KeyPair[0].KeyPairFingerPrint, imp.KeyPairFingerPrint);
	await pop.request('DeleteKeyPairs',
			  { RegionId: REGION, KeyPairNames: JSON.stringify([name]) }, GET);
	const gone = await pop.request('DescribeKeyPairs', { RegionId: REGION, KeyPairName: name }, GET);
	assert.equal(gone.TotalCount, 0);
});

test('a wrong secret and an unknown AccessKeyId are rejected (GET and POST)', async () => {
	const bad = client({ secret: 'not-the-secret-000000000000000000' });
	await expectCode('wrong secret, GET', ['SignatureDoesNotMatch'],
			 () => bad.request('DescribeInstances', { RegionId: REGION }, GET));
	await expectCode('wrong secret, POST', ['SignatureDoesNotMatch'],
			 () => bad.request('DescribeInstances', { RegionId: REGION }, POST));
	const unknown = client({ id: 'LTAInosuchkey000000' });
	await expectCode('unknown key id', ['InvalidAccessKeyId.NotFound'],
			 () => unknown.request('DescribeInstances', { RegionId: REGION }, GET));
});

test('DescribeInstanceTypes, DescribeImages, DescribePrice parse with GPU facts', async () => {
	const t = await pop.request('DescribeInstanceTypes', {
		InstanceTypes: ['ecs.gn7i-c32g1.32xlarge', 'ecs.gn8is-2x.8xlarge'],
	}, GET);
	const by = Object.fromEntries(t.InstanceTypes.InstanceType.map((x) => [x.InstanceTypeId, x]));
	assert.equal(by['ecs.gn7i-c32g1.32xlarge'].GPUAmount, 4);
	assert.equal(by['ecs.gn7i-c32g1.32xlarge'].GPUSpec, 'NVIDIA A10');
	assert.equal(by['ecs.gn8is-2x.8xlarge'].GPUAmount, 2);
	assert.equal(by['ecs.gn8is-2x.8xlarge'].GPUSpec, 'NVIDIA L20');
	assert.equal(by['ecs.gn8is-2x.8xlarge'].GPUMemorySize, 48);
	assert.equal(by['ecs.gn8is-2x.8xlarge'].CpuCoreCount, 32);

	const im = await pop.request('DescribeImages', { RegionId: REGION, ImageId: IMAGE }, POST);
	assert.equal(im.Images.Image[0].ImageId, IMAGE);

	const p = await pop.request('DescribePrice', {
		RegionId: REGION, ResourceType: 'instance', InstanceType: TYPE, ZoneId: ZONE,
		SpotStrategy: 'SpotAsPriceGo',
	}, GET);
	assert.equal(p.PriceInfo.Price.Currency, 'CNY');
	const tp = Number(p.PriceInfo.Price.TradePrice);
	assert.ok(tp > 0 && tp < 8.68, `spot trade price ${tp} below on-demand 8.68`);
});

test('DescribePrice answers in the currency of the key\'s site: CNY (China), USD (intl)',
     async () => {
	const q = { RegionId: REGION, ResourceType: 'instance', InstanceType: TYPE, ZoneId: ZONE,
		    PriceUnit: 'Hour', Amount: 1 };
	const cn = await pop.request('DescribePrice', q, GET);
	assert.equal(cn.PriceInfo.Price.Currency, 'CNY');
	assert.ok(Math.abs(Number(cn.PriceInfo.Price.TradePrice) - 8.68) < 1e-6);
	const intl = await client(INTL).request('DescribePrice', q, GET);
	assert.equal(intl.PriceInfo.Price.Currency, 'USD');
	assert.ok(Math.abs(Number(intl.PriceInfo.Price.TradePrice) - 1.2056) < 1e-6,
		  `intl price ${intl.PriceInfo.Price.TradePrice}`);
	/* the typed SDK reads the same field */
	const ecs = new Ecs.default(new $OpenApiUtil.Config({
		accessKeyId: INTL.id, accessKeySecret: INTL.secret,
		endpoint: sim.hostPort.alibaba, protocol: 'http', regionId: REGION,
	}));
	const typed = await ecs.describePrice(new Ecs.DescribePriceRequest({
		regionId: REGION, resourceType: 'instance', instanceType: TYPE, zoneId: ZONE,
		priceUnit: 'Hour', amount: 1,
	}));
	assert.equal(typed.body.priceInfo.price.currency, 'USD');
});

test('DescribePrice prices a subscription by PriceUnit and Period (reserved_price)', async () => {
	/* what ali_reserved_price sends: PriceUnit Year, Period 1 and 3, no zone */
	const year = (period) => pop.request('DescribePrice', {
		RegionId: REGION, ResourceType: 'instance', InstanceType: TYPE, PriceUnit: 'Year',
		Period: period, Amount: 1,
	}, GET);
	const y1 = await year(1);
	const y3 = await year(3);
	assert.equal(y1.PriceInfo.Price.Currency, 'CNY');
	const line = (r) => r.PriceInfo.Price.DetailInfos.DetailInfo.find(
		(d) => d.Resource === 'instanceType');
	/* the emulator's shares of on-demand (8.68 CNY/h) for the hours of the term */
	assert.ok(Math.abs(line(y1).TradePrice - 8.68 * 8760 * 0.62) < 1e-6,
		  `1 year ${line(y1).TradePrice}`);
	assert.ok(Math.abs(line(y3).TradePrice - 8.68 * 3 * 8760 * 0.40) < 1e-6,
		  `3 years ${line(y3).TradePrice}`);
	assert.ok(line(y1).OriginalPrice > line(y1).TradePrice);
	/* the typed SDK sends the same parameters */
	const ecs = new Ecs.default(new $OpenApiUtil.Config({
		accessKeyId: sim.creds.alibaba.id, accessKeySecret: sim.creds.alibaba.secret,
		endpoint: sim.hostPort.alibaba, protocol: 'http', regionId: REGION,
	}));
	const month = await ecs.describePrice(new Ecs.DescribePriceRequest({
		regionId: REGION, resourceType: 'instance', instanceType: TYPE, priceUnit: 'Month',
		period: 9, amount: 1,
	}));
	assert.ok(Math.abs(month.body.priceInfo.price.tradePrice - 8.68 * 9 * 730 * 0.85) < 1e-6,
		  `9 months ${month.body.priceInfo.price.tradePrice}`);
	/* the periods the reference allows per unit, and the units */
	for (const [unit, period] of [['Year', 6], ['Month', 10], ['Week', 5], ['Hour', 2],
				      ['Year', 0]]) {
		await expectCode(`PriceUnit ${unit} Period ${period}`, ['InvalidParameter'], () =>
			pop.request('DescribePrice', { RegionId: REGION, InstanceType: TYPE,
						       PriceUnit: unit, Period: period }, GET));
	}
	await expectCode('PriceUnit Decade', ['InvalidPriceUnit.ValueNotSupported'], () =>
		pop.request('DescribePrice', { RegionId: REGION, InstanceType: TYPE,
					       PriceUnit: 'Decade' }, GET));
});

test('DescribeAccountAttributes vCPU quotas; SoldOut stock; denied (plan\'s preflight)',
     async () => {
	await sim.setQuotas('alibaba:on-demand=640', `alibaba:sold-out=${ZONE}/${TYPE}`);
	try {
		const a = await pop.request('DescribeAccountAttributes', {
			RegionId: REGION,
			AttributeName: ['max-postpaid-instance-vcpu-count',
					'used-postpaid-instance-vcpu-count'],
		}, GET);
		const by = Object.fromEntries(a.AccountAttributeItems.AccountAttributeItem.map(
			(x) => [x.AttributeName, x.AttributeValues.ValueItem[0].Value]));
		assert.deepEqual(Object.keys(by).sort(), ['max-postpaid-instance-vcpu-count',
							  'used-postpaid-instance-vcpu-count']);
		assert.equal(by['max-postpaid-instance-vcpu-count'], '640');
		assert.match(by['used-postpaid-instance-vcpu-count'], /^[0-9]+$/);
		const r = await pop.request('DescribeAvailableResource', {
			RegionId: REGION, DestinationResource: 'InstanceType', InstanceType: TYPE,
			ZoneId: ZONE,
		}, GET);
		const s = r.AvailableZones.AvailableZone[0].AvailableResources.AvailableResource[0]
			.SupportedResources.SupportedResource[0];
		assert.equal(s.Status, 'SoldOut');
		await sim.setQuotas('alibaba:denied');
		const d = await rejects('denied', () => pop.request('DescribeAccountAttributes',
			{ RegionId: REGION }, GET));
		assert.equal(d.code, 'Forbidden.RAM');
	} finally {
		await sim.clearQuotas();
	}
});

test('injected throttling and capacity errors carry the cloud codes', async () => {
	await sim.addFaults('alibaba:DescribeRegions:throttle,times=1',
			    'alibaba:RunInstances:capacity,times=1');
	try {
		const t = await rejects('throttled', () => pop.request('DescribeRegions', {}, GET));
		assert.match(t.code, /^Throttling/, `${t.code}: ${t.message}`);
		/* parameters are checked before faults: the launch needs a live group */
		sg = (await pop.request('CreateSecurityGroup', {
			RegionId: REGION, VpcId: VPC, SecurityGroupName: unique('gc-sg-'),
		}, POST)).SecurityGroupId;
		const c = await rejects('no capacity', () => pop.request('RunInstances',
			runParams(1, [['fleet', fleet]], undefined), POST));
		assert.equal(c.code, 'OperationDenied.NoStock');
		assert.equal(c.entry.response.statusCode, 403);
	} finally {
		await sim.clearFaults();
	}
});

test('the VPC and STS APIs on the same endpoint (pop-core, other versions)', async () => {
	const vpc = new RPCClient({
		accessKeyId: sim.creds.alibaba.id, accessKeySecret: sim.creds.alibaba.secret,
		endpoint: sim.ready.alibaba, apiVersion: '2016-04-28',
	});
	const vpcs = await vpc.request('DescribeVpcs', { RegionId: REGION, IsDefault: true }, POST);
	assert.equal(vpcs.Vpcs.Vpc.length, 1);
	assert.equal(vpcs.Vpcs.Vpc[0].VpcId, VPC);
	assert.equal(vpcs.Vpcs.Vpc[0].IsDefault, true);
	const vsw = await vpc.request('DescribeVSwitches',
				      { RegionId: REGION, VpcId: VPC, ZoneId: ZONE }, GET);
	assert.equal(vsw.TotalCount, 1);
	assert.equal(vsw.VSwitches.VSwitch[0].VSwitchId, VSWITCH);
	assert.equal(vsw.VSwitches.VSwitch[0].ZoneId, ZONE);

	/* the user's own VPC beside the default one: by VpcId, and its vSwitch by VSwitchId */
	const others = await vpc.request('DescribeVpcs', { RegionId: REGION, IsDefault: false }, GET);
	assert.equal(others.Vpcs.Vpc.length, 1);
	const mine = others.Vpcs.Vpc[0];
	assert.match(mine.VpcId, /^vpc-[a-z0-9]{24}$/);
	const byId = await vpc.request('DescribeVpcs', { RegionId: REGION, VpcId: mine.VpcId }, POST);
	assert.deepEqual(byId.Vpcs.Vpc.map((v) => v.VpcId), [mine.VpcId]);
	const none = await vpc.request('DescribeVpcs',
				       { RegionId: REGION, VpcId: 'vpc-bp1nothere0000000000' }, POST);
	assert.equal(none.TotalCount, 0);
	const userVsw = await vpc.request('DescribeVSwitches',
					  { RegionId: REGION, VpcId: mine.VpcId, ZoneId: ZONE }, GET);
	assert.equal(userVsw.TotalCount, 1);
	const one = userVsw.VSwitches.VSwitch[0];
	assert.match(one.VSwitchId, /^vsw-[a-z0-9]{24}$/);
	const byVsw = await vpc.request('DescribeVSwitches',
					{ RegionId: REGION, VSwitchId: one.VSwitchId }, POST);
	assert.equal(byVsw.VSwitches.VSwitch[0].VpcId, mine.VpcId);
	assert.equal(byVsw.VSwitches.VSwitch[0].ZoneId, ZONE);

	const sts = new RPCClient({
		accessKeyId: sim.creds.alibaba.id, accessKeySecret: sim.creds.alibaba.secret,
		endpoint: sim.ready.alibaba, apiVersion: '2015-04-01',
	});
	const role = await sts.request('AssumeRole', {
		RoleArn: 'acs:ram::5123456789012345:role/sdk-test', RoleSessionName: 'sdk-rpc',
		DurationSeconds: 900,
	}, POST);
	const c = role.Credentials;
	assert.match(c.AccessKeyId, /^STS\./);
	assert.match(c.Expiration, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
	assert.equal(role.AssumedRoleUser.Arn,
		     'acs:ram::5123456789012345:role/sdk-test/sdk-rpc');
	/* pop-core sends the token as SecurityToken: ECS takes the temporary key */
	const tmp = new RPCClient({
		accessKeyId: c.AccessKeyId, accessKeySecret: c.AccessKeySecret,
		securityToken: c.SecurityToken, endpoint: sim.ready.alibaba, apiVersion: '2014-05-26',
	});
	const regions = await tmp.request('DescribeRegions', {}, GET);
	assert.ok(regions.Regions.Region.length >= 3);
	const noToken = client({ id: c.AccessKeyId, secret: c.AccessKeySecret });
	await expectCode('no token', ['MissingSecurityToken'],
			 () => noToken.request('DescribeRegions', {}, GET));
});

test('request log is well-formed', () => {
	checkRequestLog(sim, 'alibaba',
			['CreateSecurityGroup', 'AuthorizeSecurityGroup', 'RunInstances',
			 'DescribeInstances', 'DeleteInstances', 'ImportKeyPair', 'DescribeKeyPairs',
			 'DeleteKeyPairs', 'DescribeInstanceTypes', 'DescribeImages', 'DescribePrice',
			 'ModifyInstanceAutoReleaseTime', 'TagResources', 'UntagResources',
			 'CreateDeploymentSet', 'DescribeDeploymentSets', 'DeleteDeploymentSet'],
			['IdempotentParameterMismatch', 'SignatureDoesNotMatch',
			 'InvalidAccessKeyId.NotFound', 'OperationDenied.NoStock']);
});

test('the emulator exits 0 on SIGTERM', async () => {
	const { code, signal } = await sim.stop();
	assert.equal(signal, null, `exit signal ${signal}\n${sim.output()}`);
	assert.equal(code, 0, `exit status ${code}\n${sim.output()}`);
});
