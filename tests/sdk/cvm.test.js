'use strict';
/*
 * cvm.test.js: tencentcloud-sdk-nodejs-cvm (TC3-HMAC-SHA256, JSON POST) against
 * gpucluster-sim's Tencent endpoint, plus the VPC security-group actions through the
 * common package's CommonClient (npm has no tencentcloud-sdk-nodejs-vpc), which is the
 * same AbstractClient the CVM client is built on. Both sign with the endpoint
 * "127.0.0.1:PORT", so the credential scope's service is "127" and the signed host has
 * no port. The tests run in order against one emulator.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { requireSdk, startSim, checkRequestLog, poll, sshPublicKey, sshRsaPublicKey, unique,
	rejects } = require('./lib/sim.js');

const CvmClient = requireSdk('tencentcloud-sdk-nodejs-cvm').cvm.v20170312.Client;
const { CommonClient } = requireSdk('tencentcloud-sdk-nodejs-common');

const REGION = 'ap-guangzhou';
const ZONE = 'ap-guangzhou-6';
const IMAGE = 'img-9qrfy1xt';
const TYPE = 'GN7.2XLARGE32';
/* the body is hashed byte for byte: raw UTF-8 and JSON escapes */
const ROLE = 'gpu worker (a) "quoted" \\ é 节点';

let sim;
let cvm;
let vpc;

function config(opts = {}) {
	return {
		credential: {
			secretId: opts.id || sim.creds.tencent.id,
			secretKey: opts.secret || sim.creds.tencent.secret,
		},
		region: REGION,
		profile: {
			httpProfile: { endpoint: sim.hostPort.tencent, protocol: 'http://', reqTimeout: 30 },
		},
	};
}

/* fn again while CVM throttles it (RunInstances: 10 a second, which a test launching
 * several times in a row after the others can meet), as a client backs off. */
async function unthrottled(fn) {
	for (let i = 0; ; i++) {
		try {
			return await fn();
		} catch (e) {
			if (e.code !== 'RequestLimitExceeded' || i >= 40)
				throw e;
			await new Promise((resolve) => setTimeout(resolve, 150));
		}
	}
}

/* Tencent answers errors in HTTP 200 bodies; the SDK puts the code on err.code. */
async function expectCode(what, codes, fn) {
	const err = await rejects(what, fn);
	assert.equal(err.httpCode, undefined, `${what}: an API error, not HTTP ${err.httpCode}`);
	assert.ok(codes.some((c) => (c instanceof RegExp ? c.test(err.code) : c === err.code)),
		  `${what}: err.code ${err.code} (${err.message}) is one of ${codes.join(' / ')}`);
	assert.match(err.requestId, /^[0-9a-f-]{36}$/i, `${what}: RequestId`);
	return err;
}

/* An international-site account (docs/sim.md, "Two sites"): prices in USD. */
const INTL = { id: 'AKIDgpuclusterintl01', secret: 'gpucluster-sim-tencent-intl-secret' };

before(async () => {
	sim = await startSim(['--cred', `tencent:${INTL.id}:${INTL.secret}:intl`]);
	cvm = new CvmClient(config());
	vpc = new CommonClient('vpc.tencentcloudapi.com', '2017-03-12', config());
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

function runReq(count, tags, clientToken, type = TYPE) {
	const r = {
		InstanceChargeType: 'POSTPAID_BY_HOUR',
		Placement: { Zone: ZONE, ProjectId: 0 },
		InstanceType: type,
		ImageId: IMAGE,
		SystemDisk: { DiskType: 'CLOUD_BSSD', DiskSize: 100, Encrypt: true },
		InternetAccessible: { InternetChargeType: 'TRAFFIC_POSTPAID_BY_HOUR',
			InternetMaxBandwidthOut: 10, PublicIpAssigned: true },
		InstanceCount: count,
		InstanceName: 'gpu-worker',
		SecurityGroupIds: sg ? [sg] : undefined,
		TagSpecification: [{ ResourceType: 'instance',
			Tags: tags.map(([Key, Value]) => ({ Key, Value })) }],
	};
	if (clientToken)
		r.ClientToken = clientToken;
	return r;
}

async function describeIds(ids) {
	const r = await cvm.DescribeInstances({ InstanceIds: ids, Limit: 100 });
	return new Map(r.InstanceSet.map((i) => [i.InstanceId, i]));
}

test('VPC CreateSecurityGroup, CreateSecurityGroupPolicies (SSH), describe', async () => {
	const c = await vpc.request('CreateSecurityGroup', {
		GroupName: unique('gc-sg-'), GroupDescription: 'gpucluster sdk test', ProjectId: '0',
		Tags: [{ Key: 'fleet', Value: fleet }],
	});
	assert.match(c.SecurityGroup.SecurityGroupId, /^sg-[0-9a-z]+$/);
	assert.match(c.RequestId, /^[0-9a-f-]{36}$/i);
	sg = c.SecurityGroup.SecurityGroupId;

	await vpc.request('CreateSecurityGroupPolicies', {
		SecurityGroupId: sg,
		SecurityGroupPolicySet: {
			Ingress: [{ Protocol: 'TCP', Port: '22', CidrBlock: '203.0.113.0/24',
				Action: 'ACCEPT', PolicyDescription: 'ssh from the lab' }],
		},
	});
	const d = await vpc.request('DescribeSecurityGroupPolicies', { SecurityGroupId: sg });
	const ingress = d.SecurityGroupPolicySet.Ingress;
	const ssh = ingress.find((p) => p.Port === '22');
	assert.ok(ssh, JSON.stringify(d.SecurityGroupPolicySet));
	assert.equal(ssh.Protocol.toUpperCase(), 'TCP');
	assert.equal(ssh.CidrBlock, '203.0.113.0/24');
	assert.equal(ssh.Action, 'ACCEPT');
	assert.equal(ssh.PolicyDescription, 'ssh from the lab');
});

test('RunInstances with tags and an InstanceCount', async () => {
	const a = await cvm.RunInstances(runReq(5, [['fleet', fleet], ['role', ROLE]], token));
	batchA = a.InstanceIdSet;
	assert.equal(batchA.length, 5);
	for (const id of batchA)
		assert.match(id, /^ins-[0-9a-z]{8}$/);
	const b = await cvm.RunInstances(runReq(3, [['fleet', fleet]], unique('tok-')));
	batchB = b.InstanceIdSet;
	const c = await cvm.RunInstances(runReq(2, [['fleet', `${fleet}-other`]]));
	others = c.InstanceIdSet;
	assert.equal(new Set([...batchA, ...batchB, ...others]).size, 10);

	const m = await describeIds(batchA);
	for (const id of batchA) {
		const i = m.get(id);
		assert.ok(i, `${id} described`);
		assert.ok(['PENDING', 'RUNNING'].includes(i.InstanceState), i.InstanceState);
		assert.equal(i.InstanceType, TYPE);
		assert.equal(i.ImageId, IMAGE);
		assert.equal(i.Placement.Zone, ZONE);
		assert.equal(i.CPU, 8);
		assert.equal(i.Memory, 32);
		assert.ok(!isNaN(Date.parse(i.CreatedTime)), `CreatedTime ${i.CreatedTime}`);
		assert.deepEqual(i.SecurityGroupIds, [sg]);
		const tags = Object.fromEntries(i.Tags.map((t) => [t.Key, t.Value]));
		assert.deepEqual(tags, { fleet, role: ROLE });
	}
});

test('DescribeInstances by tag filter, Offset/Limit 3, each found once', async () => {
	const want = [...batchA, ...batchB].sort();
	const filters = [{ Name: 'tag:fleet', Values: [fleet] }];
	const pages = [];
	let offset = 0;
	let total;
	do {
		const r = await cvm.DescribeInstances({ Filters: filters, Offset: offset, Limit: 3 });
		total = r.TotalCount;
		assert.ok(r.InstanceSet.length <= 3);
		pages.push(r.InstanceSet.map((i) => i.InstanceId));
		offset += 3;
		assert.ok(pages.length <= 10, 'pagination ends');
	} while (offset < total);
	assert.equal(total, 8);
	assert.equal(pages.length, 3);
	assert.deepEqual(pages.flat().sort(), want);

	const o = await cvm.DescribeInstances({ Filters: [{ Name: 'tag:fleet',
		Values: [`${fleet}-other`] }] });
	assert.deepEqual(o.InstanceSet.map((i) => i.InstanceId).sort(), [...others].sort());

	await poll('instances RUNNING', async () => {
		const m = await describeIds(want);
		return m.size === want.length && [...m.values()].every((i) => i.InstanceState === 'RUNNING');
	});
	const i = (await describeIds([batchA[0]])).get(batchA[0]);
	assert.match(i.PrivateIpAddresses[0], /^\d+\.\d+\.\d+\.\d+$/);
	assert.match(i.PublicIpAddresses[0], /^\d+\.\d+\.\d+\.\d+$/);
	assert.equal(i.LatestOperation, 'RunInstances');
	assert.equal(i.LatestOperationState, 'SUCCESS');
});

test('ClientToken replay returns the same ids; other params are refused', async () => {
	const again = await cvm.RunInstances(runReq(5, [['fleet', fleet], ['role', ROLE]],
						    token));
	assert.deepEqual([...again.InstanceIdSet].sort(), [...batchA].sort());
	/*
	 * Tencent documents no code for this; the emulator answers InvalidParameter naming
	 * the token. Accept that or an explicit idempotency code, never a success.
	 */
	const err = await expectCode('token reuse with another type',
				     ['IdempotentParameterMismatch', /^InvalidParameter(Value)?(\..*)?$/],
				     () => cvm.RunInstances(runReq(5, [['fleet', fleet]], token,
								   'GN7.20XLARGE320')));
	assert.match(err.message, /ClientToken/, 'the message names the ClientToken');
});

// what gpucluster sends when lifecycle.ttl changes: CVM's timers replaced, and the
// expires-at tag moved through the Tag service (2018-08-13, which shares STS's version)
test('ActionTimer describe/delete/import and the Tag service move an expiry', async () => {
	const when = new Date(Date.now() + 4 * 3600e3).toISOString().replace(/\.\d+Z$/, 'Z');
	const imp = await cvm.ImportInstancesActionTimer({
		InstanceIds: batchB, ActionTimer: { TimerAction: 'TerminateInstances', ActionTime: when },
	});
	assert.equal(imp.ActionTimerIds.length, batchB.length);
	const d = await cvm.DescribeInstancesActionTimer({ InstanceIds: batchB, StatusList: ['UNDO'] });
	assert.equal(d.ActionTimers.length, batchB.length);
	for (const t of d.ActionTimers) {
		assert.ok(batchB.includes(t.InstanceId));
		assert.equal(t.ActionTime, when);
		assert.equal(t.TimerAction, 'TerminateInstances');
	}
	await cvm.DeleteInstancesActionTimer({ ActionTimerIds: d.ActionTimers.map((t) => t.ActionTimerId) });
	const none = await cvm.DescribeInstancesActionTimer({ InstanceIds: batchB });
	assert.equal(none.ActionTimers.length, 0);

	const tag = new CommonClient('tag.tencentcloudapi.com', '2018-08-13', config());
	const res = { ServiceType: 'cvm', ResourceIds: batchB, ResourceRegion: REGION,
		      ResourcePrefix: 'instance', TagKey: 'gpucluster:expires-at' };
	await tag.request('AttachResourcesTag', { ...res, TagValue: when });
	for (const i of (await describeIds(batchB)).values())
		assert.equal(i.Tags.find((t) => t.Key === 'gpucluster:expires-at').Value, when);
	await tag.request('DetachResourcesTag', res);
	for (const i of (await describeIds(batchB)).values())
		assert.equal(i.Tags.find((t) => t.Key === 'gpucluster:expires-at'), undefined);
});

test('TerminateInstances and the instances go away', async () => {
	const ids = [...batchA, ...batchB, ...others];
	const r = await cvm.TerminateInstances({ InstanceIds: ids });
	assert.match(r.RequestId, /^[0-9a-f-]{36}$/i);
	await poll('instances gone', async () => (await describeIds(ids)).size === 0);
	const left = await cvm.DescribeInstances({ Filters: [{ Name: 'tag:fleet', Values: [fleet] }] });
	assert.equal(left.TotalCount, 0);
});

test('a shutdown from inside stops the instance, which keeps charging', async () => {
	const id = (await cvm.RunInstances(runReq(1, [['fleet', `${fleet}-off`]]))).InstanceIdSet[0];
	await poll('the instance RUNNING', async () =>
		(await describeIds([id])).get(id).InstanceState === 'RUNNING');
	assert.equal((await describeIds([id])).get(id).StopChargingMode, 'NOT_APPLICABLE');
	/* what the node's own `shutdown -h now` does (docs/sim.md, control API) */
	const r = await fetch(`${sim.ready.control}/nodes/${id}/shutdown`, { method: 'POST' });
	assert.equal(r.status, 200, await r.text());
	const i = (await describeIds([id])).get(id);
	assert.equal(i.InstanceState, 'STOPPED');
	assert.equal(i.StopChargingMode, 'KEEP_CHARGING');
	await cvm.TerminateInstances({ InstanceIds: [id] });
	await poll('the stopped instance gone', async () => (await describeIds([id])).size === 0);
});

// what gpucluster sends to reconcile a group's rules (issue 19): delete by content
// (protocol, port, source, action), all or nothing
test('VPC DeleteSecurityGroupPolicies by content and by PolicyIndex', async () => {
	const c = await vpc.request('CreateSecurityGroup', {
		GroupName: unique('gc-rv-'), GroupDescription: 'gpucluster sdk revoke', ProjectId: '0',
	});
	const id = c.SecurityGroup.SecurityGroupId;
	const ssh = (cidr, desc) => ({ Protocol: 'TCP', Port: '22', CidrBlock: cidr,
		Action: 'ACCEPT', PolicyDescription: desc });
	await vpc.request('CreateSecurityGroupPolicies', {
		SecurityGroupId: id,
		SecurityGroupPolicySet: { Ingress: [ssh('203.0.113.0/24', 'gpucluster ssh'),
			ssh('198.51.100.0/24', 'by hand'), { Protocol: 'ALL', Port: 'ALL',
				SecurityGroupId: id, Action: 'ACCEPT',
				PolicyDescription: 'gpucluster members' }] },
	});
	const ingress = async () => (await vpc.request('DescribeSecurityGroupPolicies',
		{ SecurityGroupId: id })).SecurityGroupPolicySet.Ingress;
	assert.equal((await ingress()).length, 3);
	await vpc.request('DeleteSecurityGroupPolicies', {
		SecurityGroupId: id,
		SecurityGroupPolicySet: { Ingress: [
			{ Protocol: 'TCP', Port: '22', CidrBlock: '203.0.113.0/24', Action: 'ACCEPT' },
			{ Protocol: 'ALL', Port: 'ALL', SecurityGroupId: id, Action: 'ACCEPT' }] },
	});
	let left = await ingress();
	assert.equal(left.length, 1, JSON.stringify(left));
	assert.equal(left[0].CidrBlock, '198.51.100.0/24');
	assert.equal(left[0].PolicyDescription, 'by hand');
	// a policy that is not there fails the request, and nothing goes
	await expectCode('a policy that is not there', ['ResourceNotFound'],
			 () => vpc.request('DeleteSecurityGroupPolicies', {
				 SecurityGroupId: id,
				 SecurityGroupPolicySet: { Ingress: [
					 { Protocol: 'TCP', Port: '22', CidrBlock: '198.51.100.0/24',
						 Action: 'ACCEPT' },
					 { Protocol: 'TCP', Port: '22', CidrBlock: '203.0.113.0/24',
						 Action: 'ACCEPT' }] },
			 }));
	assert.equal((await ingress()).length, 1);
	await vpc.request('DeleteSecurityGroupPolicies', {
		SecurityGroupId: id,
		SecurityGroupPolicySet: { Ingress: [{ PolicyIndex: left[0].PolicyIndex }] },
	});
	left = await ingress();
	assert.equal(left.length, 0);
	await vpc.request('DeleteSecurityGroup', { SecurityGroupId: id });
});

// IPv6 sources (issue 18): Ipv6CidrBlock in the policy set, on create, describe and
// delete by content; an IPv6 block in CidrBlock is refused
test('VPC IPv6 sources: Ipv6CidrBlock create, describe, delete; IPv6 in CidrBlock refused',
     async () => {
	const c = await vpc.request('CreateSecurityGroup', {
		GroupName: unique('gc-v6-'), GroupDescription: 'gpucluster sdk ipv6', ProjectId: '0',
	});
	const id = c.SecurityGroup.SecurityGroupId;
	await vpc.request('CreateSecurityGroupPolicies', {
		SecurityGroupId: id,
		SecurityGroupPolicySet: { Ingress: [
			{ Protocol: 'TCP', Port: '22', CidrBlock: '203.0.113.0/24', Action: 'ACCEPT',
				PolicyDescription: 'gpucluster ssh' },
			{ Protocol: 'TCP', Port: '22', Ipv6CidrBlock: '2001:db8::/32', Action: 'ACCEPT',
				PolicyDescription: 'gpucluster ssh' }] },
	});
	const ingress = async () => (await vpc.request('DescribeSecurityGroupPolicies',
		{ SecurityGroupId: id })).SecurityGroupPolicySet.Ingress;
	assert.deepEqual((await ingress()).map((p) => [p.CidrBlock, p.Ipv6CidrBlock]).sort(),
			 [['', '2001:db8::/32'], ['203.0.113.0/24', '']]);
	await expectCode('an IPv6 block in CidrBlock', ['InvalidParameterValue.Malformed'],
			 () => vpc.request('CreateSecurityGroupPolicies', {
				 SecurityGroupId: id,
				 SecurityGroupPolicySet: { Ingress: [{ Protocol: 'TCP', Port: '22',
					 CidrBlock: '2001:db8:1::/48', Action: 'ACCEPT' }] },
			 }));
	await vpc.request('DeleteSecurityGroupPolicies', {
		SecurityGroupId: id,
		SecurityGroupPolicySet: { Ingress: [{ Protocol: 'TCP', Port: '22',
			Ipv6CidrBlock: '2001:db8::/32', Action: 'ACCEPT' }] },
	});
	assert.deepEqual((await ingress()).map((p) => p.CidrBlock), ['203.0.113.0/24']);
	await vpc.request('DeleteSecurityGroup', { SecurityGroupId: id });
});

test('VPC DeleteSecurityGroup', async () => {
	await vpc.request('DeleteSecurityGroup', { SecurityGroupId: sg });
	let left;
	try {
		left = await vpc.request('DescribeSecurityGroups', { SecurityGroupIds: [sg] });
	} catch (e) {
		assert.match(e.code, /NotFound/, `describe deleted group: ${e.code} ${e.message}`);
		return;
	}
	assert.equal(left.TotalCount, 0);
});

test('ImportKeyPair, DescribeKeyPairs, DeleteKeyPairs', async () => {
	const name = unique('gc_key_').replace(/-/g, '_');
	const line = sshRsaPublicKey();
	const imp = await cvm.ImportKeyPair({ KeyName: name, ProjectId: 0, PublicKey: line });
	/* CVM takes the OpenSSH RSA format only */
	await expectCode('an Ed25519 key', ['InvalidPublicKey.Malformed'],
			 () => cvm.ImportKeyPair({ KeyName: `${name}_ed`, ProjectId: 0,
						   PublicKey: sshPublicKey() }));
	assert.match(imp.KeyId, /^skey-[0-9a-z]{8}$/);
	const d = await cvm.DescribeKeyPairs({ KeyIds: [imp.KeyId] });
	assert.equal(d.TotalCount, 1);
	assert.equal(d.KeyPairSet[0].KeyId, imp.KeyId);
	assert.equal(d.KeyPairSet[0].KeyName, name);
	assert.equal(d.KeyPairSet[0].PublicKey.split(' ').slice(0, 2).join(' '),
		     line.split(' ').slice(0, 2).join(' '));
	await cvm.DeleteKeyPairs({ KeyIds: [imp.KeyId] });
	let left;
	try {
		left = await cvm.DescribeKeyPairs({ KeyIds: [imp.KeyId] });
	} catch (e) {
		assert.match(e.code, /NotFound/, `describe deleted key: ${e.code} ${e.message}`);
		return;
	}
	assert.equal(left.TotalCount, 0);
});

test('a wrong SecretKey and an unknown SecretId are rejected', async () => {
	const bad = new CvmClient(config({ secret: 'not-the-secret-000000000000000000' }));
	await expectCode('wrong secret', ['AuthFailure.SignatureFailure'],
			 () => bad.DescribeInstances({}));
	const badVpc = new CommonClient('vpc.tencentcloudapi.com', '2017-03-12',
					config({ secret: 'not-the-secret-000000000000000000' }));
	await expectCode('wrong secret (vpc)', ['AuthFailure.SignatureFailure'],
			 () => badVpc.request('DescribeSecurityGroups', {}));
	const unknown = new CvmClient(config({ id: 'AKIDnosuchkey0000000' }));
	await expectCode('unknown SecretId', ['AuthFailure.SecretIdNotFound'],
			 () => unknown.DescribeInstances({}));
});

test('show-gpus live: DescribeInstanceTypeConfigs without filters, a row per zone and type',
     async () => {
	const t = await cvm.DescribeInstanceTypeConfigs({});
	const zones = {};
	for (const x of t.InstanceTypeConfigSet) {
		assert.ok(x.Zone && x.InstanceType && Number.isInteger(x.CPU), JSON.stringify(x));
		(zones[x.InstanceType] = zones[x.InstanceType] || []).push(x.Zone);
	}
	assert.ok(zones[TYPE].includes(ZONE));
	assert.ok(zones['GT4.41XLARGE948'].length >= 1);
	assert.ok(!zones['GT4.41XLARGE948'].includes('ap-guangzhou-7'));
	const gt4 = t.InstanceTypeConfigSet.find((x) => x.InstanceType === 'GT4.41XLARGE948');
	assert.equal(gt4.GpuCount, 8);
});

test('DescribeInstanceTypeConfigs, DescribeZoneInstanceConfigInfos, DescribeImages, ' +
     'InquiryPriceRunInstances', async () => {
	const t = await cvm.DescribeInstanceTypeConfigs({
		Filters: [{ Name: 'instance-type', Values: [TYPE, 'GT4.41XLARGE948'] },
			  { Name: 'zone', Values: [ZONE] }],
	});
	const by = Object.fromEntries(t.InstanceTypeConfigSet.map((x) => [x.InstanceType, x]));
	assert.deepEqual(Object.keys(by).sort(), ['GN7.2XLARGE32', 'GT4.41XLARGE948']);
	assert.equal(by[TYPE].Zone, ZONE);
	assert.equal(by[TYPE].InstanceFamily, 'GN7');
	assert.equal(by[TYPE].CPU, 8);
	assert.equal(by[TYPE].Memory, 32);
	assert.equal(by[TYPE].GpuCount, 1);
	assert.ok(by[TYPE].GPU >= 1);
	assert.equal(by['GT4.41XLARGE948'].GpuCount, 8);

	const z = await cvm.DescribeZoneInstanceConfigInfos({
		Filters: [{ Name: 'zone', Values: [ZONE] }, { Name: 'instance-type', Values: [TYPE] },
			  { Name: 'instance-charge-type', Values: ['POSTPAID_BY_HOUR'] }],
	});
	assert.ok(z.InstanceTypeQuotaSet.length >= 1);
	const q = z.InstanceTypeQuotaSet[0];
	assert.equal(q.InstanceType, TYPE);
	assert.equal(q.Zone, ZONE);
	assert.equal(q.Status, 'SELL');
	assert.ok(q.Gpu >= 1);
	assert.ok(Math.abs(q.Price.UnitPrice - 8.68) < 0.01, `unit price ${q.Price.UnitPrice}`);

	/* what plan asks: the zones that sell one type (ap-guangzhou-7 sells no GT4.41XLARGE948
	 * in the emulator's catalogue); an unknown type is an empty set, not an error */
	const gt4 = await cvm.DescribeZoneInstanceConfigInfos({
		Filters: [{ Name: 'instance-type', Values: ['GT4.41XLARGE948'] },
			  { Name: 'instance-charge-type', Values: ['POSTPAID_BY_HOUR'] }],
	});
	assert.deepEqual(gt4.InstanceTypeQuotaSet.map((x) => x.Zone),
			 ['ap-guangzhou-3', 'ap-guangzhou-4', 'ap-guangzhou-6']);
	const none = await cvm.DescribeZoneInstanceConfigInfos({
		Filters: [{ Name: 'instance-type', Values: ['GPU.HUGE9'] }],
	});
	assert.deepEqual(none.InstanceTypeQuotaSet, []);

	const im = await cvm.DescribeImages({ ImageIds: [IMAGE] });
	assert.equal(im.TotalCount, 1);
	assert.equal(im.ImageSet[0].ImageId, IMAGE);
	assert.equal(im.ImageSet[0].ImageType, 'PUBLIC_IMAGE');
	assert.match(im.ImageSet[0].ImageName, /driver 570/);

	const p = await cvm.InquiryPriceRunInstances({
		Placement: { Zone: ZONE }, ImageId: IMAGE, InstanceType: TYPE,
		InstanceChargeType: 'POSTPAID_BY_HOUR', InstanceCount: 1,
	});
	const ip = p.Price.InstancePrice;
	assert.equal(ip.ChargeUnit, 'HOUR');
	assert.ok(Math.abs(ip.UnitPrice - 8.68) < 0.01, `unit price ${ip.UnitPrice}`);
	const spot = await cvm.InquiryPriceRunInstances({
		Placement: { Zone: ZONE }, ImageId: IMAGE, InstanceType: TYPE,
		InstanceChargeType: 'SPOTPAID', InstanceCount: 1,
	});
	const sp = spot.Price.InstancePrice;
	assert.ok(sp.UnitPriceDiscount > 0 && sp.UnitPriceDiscount < ip.UnitPrice,
		  `spot ${sp.UnitPriceDiscount} below on-demand ${ip.UnitPrice}`);
	/* an international-site key: the same bare number, in USD (8.68 CNY / 7.2) */
	const intl = await new CvmClient(config(INTL)).InquiryPriceRunInstances({
		Placement: { Zone: ZONE }, ImageId: IMAGE, InstanceType: TYPE,
		InstanceChargeType: 'POSTPAID_BY_HOUR', InstanceCount: 1,
	});
	assert.ok(Math.abs(intl.Price.InstancePrice.UnitPrice - 1.2056) < 1e-6,
		  `intl unit price ${intl.Price.InstancePrice.UnitPrice}`);
});

test('InquiryPriceRunInstances prices a PREPAID subscription by months (reserved_price)',
     async () => {
	/* what tc_reserved_price sends: PREPAID, InstanceChargePrepaid.Period 12 and 36 */
	const prepaid = (period) => cvm.InquiryPriceRunInstances({
		Placement: { Zone: ZONE }, ImageId: IMAGE, InstanceType: TYPE,
		InstanceChargeType: 'PREPAID', InstanceChargePrepaid: { Period: period },
		InstanceCount: 1,
	});
	const y1 = (await prepaid(12)).Price.InstancePrice;
	const y3 = (await prepaid(36)).Price.InstancePrice;
	/* the emulator's shares of pay-as-you-go (8.68 CNY/h), 730 hours a month */
	assert.ok(Math.abs(y1.DiscountPrice - 8.68 * 12 * 730 * 0.62) < 1e-6,
		  `12 months ${y1.DiscountPrice}`);
	assert.ok(Math.abs(y3.DiscountPrice - 8.68 * 36 * 730 * 0.40) < 1e-6,
		  `36 months ${y3.DiscountPrice}`);
	assert.ok(Math.abs(y1.OriginalPrice - 8.68 * 12 * 730) < 1e-6);
	/* the periods InstanceChargePrepaid allows; without one; RunInstances stays postpaid */
	for (const period of [13, 0, 72]) {
		await expectCode(`Period ${period}`, ['InvalidPeriod'],
				 () => prepaid(period));
	}
	await expectCode('PREPAID without a period', ['MissingParameter'], () =>
		cvm.InquiryPriceRunInstances({
			Placement: { Zone: ZONE }, ImageId: IMAGE, InstanceType: TYPE,
			InstanceChargeType: 'PREPAID', InstanceCount: 1,
		}));
});

test('DescribeAccountQuota per zone and market; sold out and denied (plan\'s preflight)',
     async () => {
	await sim.setQuotas('tencent:on-demand=500', `tencent:sold-out=${ZONE}/${TYPE}`);
	try {
		const r = await cvm.DescribeAccountQuota({ Filters: [{ Name: 'zone', Values: [ZONE] }] });
		const q = r.AccountQuotaOverview.AccountQuota;
		assert.equal(r.AccountQuotaOverview.Region, REGION);
		assert.deepEqual(q.PostPaidQuotaSet.map((x) => x.Zone), [ZONE]);
		assert.equal(q.PostPaidQuotaSet[0].TotalQuota, 500);
		assert.equal(q.PostPaidQuotaSet[0].UsedQuota + q.PostPaidQuotaSet[0].RemainingQuota, 500);
		assert.equal(q.SpotPaidQuotaSet[0].TotalQuota, 100000);
		const spot = await cvm.DescribeAccountQuota({
			Filters: [{ Name: 'quota-type', Values: ['SpotPaidQuotaSet'] }],
		});
		assert.equal(spot.AccountQuotaOverview.AccountQuota.PostPaidQuotaSet, undefined);
		assert.ok(spot.AccountQuotaOverview.AccountQuota.SpotPaidQuotaSet.length >= 2);
		const z = await cvm.DescribeZoneInstanceConfigInfos({
			Filters: [{ Name: 'zone', Values: [ZONE] }, { Name: 'instance-type', Values: [TYPE] },
				  { Name: 'instance-charge-type', Values: ['POSTPAID_BY_HOUR'] }],
		});
		assert.equal(z.InstanceTypeQuotaSet[0].Status, 'SOLD_OUT');
		await sim.setQuotas('tencent:denied');
		await expectCode('denied', ['UnauthorizedOperation'], () => cvm.DescribeAccountQuota({}));
	} finally {
		await sim.clearQuotas();
	}
});

test('injected throttling and capacity errors carry the cloud codes', async () => {
	await sim.addFaults('tencent:DescribeInstances:throttle,times=1',
			    'tencent:RunInstances:capacity,times=1');
	try {
		await expectCode('throttled', ['RequestLimitExceeded'], () => cvm.DescribeInstances({}));
		await expectCode('no capacity', ['ResourceInsufficient.SpecifiedInstanceType'],
				 () => cvm.RunInstances({ ...runReq(1, [['fleet', fleet]]),
							  SecurityGroupIds: undefined }));
		// quotas per market (issue 18): the spot one, then the pay-as-you-go one
		await sim.addFaults('tencent:RunInstances:quota,market=spot,times=1',
				    'tencent:RunInstances:quota,market=on-demand,times=1');
		await expectCode('the spot quota', ['LimitExceeded.UserSpotQuota'],
				 () => cvm.RunInstances({ ...runReq(1, [['fleet', fleet]]),
					 SecurityGroupIds: undefined, InstanceChargeType: 'SPOTPAID',
					 InstanceMarketOptions: { MarketType: 'spot',
						 SpotOptions: { SpotInstanceType: 'one-time' } } }));
		await expectCode('the pay-as-you-go quota', ['LimitExceeded.InstanceQuota'],
				 () => cvm.RunInstances({ ...runReq(1, [['fleet', fleet]]),
							  SecurityGroupIds: undefined }));
	} finally {
		await sim.clearFaults();
	}
});

test('VPC DescribeVpcs, DescribeSubnets by filter; RunInstances into the user\'s subnet',
     async () => {
	const all = await vpc.request('DescribeVpcs', {});
	const mine = all.VpcSet.find((v) => !v.IsDefault);
	assert.ok(all.VpcSet.some((v) => v.IsDefault) && mine, 'the default VPC and the user\'s');
	assert.match(mine.VpcId, /^vpc-[0-9a-z]{8}$/);
	const byId = await vpc.request('DescribeVpcs', {
		Filters: [{ Name: 'vpc-id', Values: [mine.VpcId, 'vpc-nothere0'] }] });
	assert.deepEqual(byId.VpcSet.map((v) => v.VpcId), [mine.VpcId]);
	const subs = await vpc.request('DescribeSubnets', {
		Filters: [{ Name: 'vpc-id', Values: [mine.VpcId] }, { Name: 'zone', Values: [ZONE] }] });
	assert.equal(subs.TotalCount, 1);
	const sub = subs.SubnetSet[0];
	assert.match(sub.SubnetId, /^subnet-[0-9a-z]{8}$/);
	const one = await vpc.request('DescribeSubnets', {
		Filters: [{ Name: 'subnet-id', Values: [sub.SubnetId, 'subnet-nothere0'] }] });
	assert.deepEqual(one.SubnetSet.map((x) => [x.SubnetId, x.VpcId, x.Zone]),
			 [[sub.SubnetId, mine.VpcId, ZONE]]);

	const req = runReq(1, [['fleet', unique('net-')]]);
	delete req.SecurityGroupIds; /* the group of the earlier tests is gone */
	req.VirtualPrivateCloud = { VpcId: mine.VpcId, SubnetId: sub.SubnetId };
	const r = await cvm.RunInstances(req);
	const i = (await describeIds(r.InstanceIdSet)).get(r.InstanceIdSet[0]);
	assert.equal(i.VirtualPrivateCloud.VpcId, mine.VpcId);
	assert.equal(i.VirtualPrivateCloud.SubnetId, sub.SubnetId);
	const wrong = runReq(1, [['fleet', unique('net-')]]);
	delete wrong.SecurityGroupIds;
	wrong.Placement = { Zone: 'ap-guangzhou-7', ProjectId: 0 };
	wrong.VirtualPrivateCloud = { VpcId: mine.VpcId, SubnetId: sub.SubnetId };
	await expectCode('a subnet of another zone', ['InvalidParameterValue.SubnetIdZoneIdNotMatch'],
			 () => cvm.RunInstances(wrong));
	await cvm.TerminateInstances({ InstanceIds: r.InstanceIdSet });
});

test('an account without a default VPC: a launch must name the VPC and subnet', async () => {
	const saved = sim;
	sim = await startSim(['--no-default-vpc']);
	try {
		const c = new CvmClient(config());
		const v = new CommonClient('vpc.tencentcloudapi.com', '2017-03-12', config());
		const dflt = await v.request('DescribeVpcs', {
			Filters: [{ Name: 'is-default', Values: ['true'] }] });
		assert.equal(dflt.TotalCount, 0);
		const req = runReq(1, [['fleet', unique('net-')]]);
		delete req.SecurityGroupIds;
		await expectCode('RunInstances without VirtualPrivateCloud',
				 ['InvalidParameterValue.VpcIdNotExist'], () => c.RunInstances(req));
	} finally {
		await sim.stop();
		sim = saved;
	}
});

async function stateRole(id) {
	const st = await (await fetch(`${sim.ready.control}/state`)).json();
	return st.instances.find((i) => i.id === id).role;
}

test('an instance role: CamRoleName on RunInstances, in the emulator\'s state', async () => {
	const r = await cvm.RunInstances({ ...runReq(1, []), SecurityGroupIds: undefined,
		CamRoleName: 'gpu-data_reader' });
	const id = r.InstanceIdSet[0];
	assert.equal(await stateRole(id), 'gpu-data_reader');
	await expectCode('a malformed role name', ['InvalidParameterValue'],
			 () => cvm.RunInstances({ ...runReq(1, []), SecurityGroupIds: undefined,
				 CamRoleName: 'no spaces' }));
	await cvm.TerminateInstances({ InstanceIds: [id] });
});

test('HPC clusters: create tagged, launch HCC types into, the cluster\'s room, in use, delete',
     async () => {
	const HCC = 'HCCPNV4h.48XLARGE1152';
	const name = unique('gc-hpc-');
	const made = await cvm.CreateHpcCluster({ Zone: ZONE, Name: name, Remark: 'sdk test',
		TagSpecification: [{ ResourceType: 'hpc',
				     Tags: [{ Key: 'gpucluster:cluster', Value: name }] }] });
	const hpc = made.HpcClusterSet[0].HpcClusterId;
	assert.match(hpc, /^hpc-[0-9a-z]+$/);
	assert.equal(made.HpcClusterSet[0].Zone, ZONE);
	const listed = async () => (await cvm.DescribeHpcClusters({
		Filters: [{ Name: 'tag:gpucluster:cluster', Values: [name] }] })).HpcClusterSet;
	const [one] = await listed();
	assert.equal(one.HpcClusterId, hpc);
	assert.equal(one.Name, name);
	assert.deepEqual(one.Tags, [{ Key: 'gpucluster:cluster', Value: name }]);
	const room = one.CvmQuotaTotal;
	const run = (count, type, id = hpc) => unthrottled(() => cvm.RunInstances({
		...runReq(count, [], null, type), SecurityGroupIds: undefined, HpcClusterId: id }));
	const ids = (await run(2, HCC)).InstanceIdSet;
	assert.equal((await describeIds(ids)).get(ids[0]).HpcClusterId, hpc);
	assert.equal((await listed())[0].CurrentNum, 2);
	await expectCode('more than the cluster holds', ['ResourceInsufficient.SpecifiedInstanceType'],
			 () => run(room - 1, HCC));
	await expectCode('a type that is not HCC',
			 ['InvalidParameterValue.InstanceTypeNotSupportHpcCluster'], () => run(1, TYPE));
	await expectCode('an unknown cluster', ['ResourceNotFound.HpcCluster'],
			 () => run(1, HCC, `${hpc}x`));
	await expectCode('an HCC type outside an HPC cluster',
			 ['InvalidParameterValue.InstanceTypeRequiredHpcCluster'],
			 () => unthrottled(() => cvm.RunInstances({ ...runReq(1, [], null, HCC),
									SecurityGroupIds: undefined })));
	await expectCode('deleting a cluster in use', ['ResourceInUse.HpcCluster'],
			 () => cvm.DeleteHpcClusters({ HpcClusterIds: [hpc] }));
	await cvm.TerminateInstances({ InstanceIds: ids });
	await poll('the cluster is deleted once its instances are gone', async () => {
		try {
			await cvm.DeleteHpcClusters({ HpcClusterIds: [hpc] });
			return true;
		} catch (e) {
			assert.equal(e.code, 'ResourceInUse.HpcCluster');
			return false;
		}
	});
	assert.deepEqual(await listed(), []);
	await expectCode('deleting it again', ['ResourceNotFound.HpcCluster'],
			 () => cvm.DeleteHpcClusters({ HpcClusterIds: [hpc] }));
});

test('request log is well-formed', () => {
	checkRequestLog(sim, 'tencent',
			['CreateSecurityGroup', 'CreateSecurityGroupPolicies', 'DeleteSecurityGroupPolicies',
			 'RunInstances',
			 'DescribeInstances', 'TerminateInstances', 'ImportKeyPair', 'DescribeKeyPairs',
			 'DeleteKeyPairs', 'DescribeInstanceTypeConfigs', 'DescribeImages',
			 'InquiryPriceRunInstances', 'ImportInstancesActionTimer',
			 'DescribeInstancesActionTimer', 'DeleteInstancesActionTimer', 'AttachResourcesTag',
			 'DetachResourcesTag', 'CreateHpcCluster', 'DescribeHpcClusters',
			 'DeleteHpcClusters'],
			['AuthFailure.SignatureFailure', 'AuthFailure.SecretIdNotFound', 'RequestLimitExceeded',
			 'ResourceInsufficient.SpecifiedInstanceType']);
});

test('the emulator exits 0 on SIGTERM', async () => {
	const { code, signal } = await sim.stop();
	assert.equal(signal, null, `exit signal ${signal}\n${sim.output()}`);
	assert.equal(code, 0, `exit status ${code}\n${sim.output()}`);
});
