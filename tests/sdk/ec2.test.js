'use strict';
/*
 * ec2.test.js: @aws-sdk/client-ec2 against gpucluster-sim's EC2 endpoint (SigV4, Query
 * API 2016-11-15, XML). The tests run in order and share one emulator; each creates what
 * it needs under a unique tag so they do not depend on one another's resources.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { requireSdk, startSim, checkRequestLog, poll, sshPublicKey, unique, rejects } =
	require('./lib/sim.js');

const ec2sdk = requireSdk('@aws-sdk/client-ec2');
const {
	EC2Client, RunInstancesCommand, DescribeInstancesCommand, TerminateInstancesCommand,
	ImportKeyPairCommand, DescribeKeyPairsCommand, DeleteKeyPairCommand,
	CreateSecurityGroupCommand, AuthorizeSecurityGroupIngressCommand,
	DescribeSecurityGroupsCommand, DeleteSecurityGroupCommand, DescribeInstanceTypesCommand,
	RevokeSecurityGroupIngressCommand, AuthorizeSecurityGroupEgressCommand,
	DescribeImagesCommand, DescribeSpotPriceHistoryCommand, paginateDescribeInstances,
	CreateTagsCommand, DeleteTagsCommand,
	DescribeVpcsCommand, DescribeSubnetsCommand,
	DescribeInstanceTypeOfferingsCommand, paginateDescribeInstanceTypeOfferings,
	paginateDescribeInstanceTypes,
	CreatePlacementGroupCommand, DescribePlacementGroupsCommand, DeletePlacementGroupCommand,
	AllocateAddressCommand, AssociateAddressCommand, DescribeAddressesCommand,
	ReleaseAddressCommand,
} = ec2sdk;

const REGION = 'us-east-1';
const IMAGE = 'ami-0d1e5f7a9b3c5e570'; /* Deep Learning Base OSS Nvidia Driver GPU AMI */
const TYPE = 'g5.xlarge';
/* reserved characters and UTF-8 exercise the form encoding and the payload hash */
const NAME_A = "gpu worker (a) *~!'/ é 节点";

let sim;
let ec2;

function client(opts = {}) {
	return new EC2Client({
		endpoint: sim.ready.aws,
		region: REGION,
		credentials: {
			accessKeyId: opts.id || sim.creds.aws.id,
			secretAccessKey: opts.secret || sim.creds.aws.secret,
		},
		maxAttempts: opts.maxAttempts || 3,
	});
}

function tagMap(tags) {
	return Object.fromEntries((tags || []).map((t) => [t.Key, t.Value]));
}

async function describeByIds(ids) {
	const out = new Map();
	const r = await ec2.send(new DescribeInstancesCommand({ InstanceIds: ids }));
	for (const res of r.Reservations || [])
		for (const i of res.Instances || [])
			out.set(i.InstanceId, i);
	return out;
}

/* Expects an SDK error whose name (the EC2 error code) is one of codes. */
async function expectCode(what, codes, fn, status) {
	const err = await rejects(what, fn);
	assert.ok(codes.includes(err.name),
		  `${what}: err.name ${err.name} (${err.message}) is one of ${codes.join('/')}`);
	assert.equal(err.Code || err.name, err.name);
	if (status)
		assert.equal(err.$metadata.httpStatusCode, status, `${what}: HTTP status`);
	else
		assert.ok(err.$metadata.httpStatusCode >= 400, `${what}: HTTP error status`);
	return err;
}

before(async () => {
	sim = await startSim();
	ec2 = client();
});

after(async () => {
	if (sim)
		await sim.stop();
});

const fleet = unique('fleet-');
const token = unique('tok-');
let batchA = [];
let batchB = [];
let others = [];

test('RunInstances with tags and a count', async () => {
	const run = (count, tags, clientToken) => ec2.send(new RunInstancesCommand({
		ImageId: IMAGE,
		InstanceType: TYPE,
		MinCount: count,
		MaxCount: count,
		ClientToken: clientToken,
		Placement: { AvailabilityZone: 'us-east-1b' },
		TagSpecifications: [{
			ResourceType: 'instance',
			Tags: tags,
		}],
	}));
	const a = await run(7, [{ Key: 'fleet', Value: fleet }, { Key: 'Name', Value: NAME_A }],
			    token);
	assert.match(a.ReservationId, /^r-[0-9a-f]{8,17}$/);
	assert.equal(a.Instances.length, 7);
	for (const i of a.Instances) {
		assert.match(i.InstanceId, /^i-[0-9a-f]{8,17}$/);
		assert.equal(i.InstanceType, TYPE);
		assert.equal(i.ImageId, IMAGE);
		assert.equal(i.ClientToken, token);
		assert.ok(['pending', 'running'].includes(i.State.Name), `state ${i.State.Name}`);
		assert.equal(i.State.Code & 0xff, i.State.Name === 'pending' ? 0 : 16);
		assert.equal(i.Placement.AvailabilityZone, 'us-east-1b');
		assert.ok(i.LaunchTime instanceof Date && !isNaN(i.LaunchTime), 'LaunchTime parses');
		assert.deepEqual(tagMap(i.Tags), { fleet, Name: NAME_A });
	}
	batchA = a.Instances.map((i) => i.InstanceId);
	assert.equal(new Set(batchA).size, 7, 'ids are unique');

	/* no ClientToken: the SDK fills one in itself */
	const b = await run(5, [{ Key: 'fleet', Value: fleet }], undefined);
	assert.equal(b.Instances.length, 5);
	assert.match(b.Instances[0].ClientToken, /^[0-9a-f-]{36}$/, 'SDK-generated token echoed');
	batchB = b.Instances.map((i) => i.InstanceId);

	const c = await run(2, [{ Key: 'fleet', Value: `${fleet}-other` }], unique('tok-'));
	others = c.Instances.map((i) => i.InstanceId);
	assert.equal(new Set([...batchA, ...batchB, ...others]).size, 14);
});

test('DescribeInstances by tag filter pages with MaxResults 5 and finds each once', async () => {
	const want = [...batchA, ...batchB];
	const pages = [];
	const paginator = paginateDescribeInstances({ client: ec2 }, {
		Filters: [{ Name: 'tag:fleet', Values: [fleet] }],
		MaxResults: 5,
	});
	for await (const page of paginator) {
		const ids = (page.Reservations || []).flatMap((r) => r.Instances.map((i) => i.InstanceId));
		pages.push(ids);
		assert.ok(ids.length <= 5, `page has ${ids.length} > 5 instances`);
		assert.ok(pages.length <= 10, 'pagination ends');
	}
	const all = pages.flat();
	assert.ok(pages.length >= 3, `12 instances in pages of 5 take >= 3 pages, got ${pages.length}`);
	assert.equal(all.length, want.length, `each instance once: ${JSON.stringify(pages)}`);
	assert.deepEqual([...all].sort(), [...want].sort());

	/* the other fleet, by tag-key + tag-value filters */
	const r = await ec2.send(new DescribeInstancesCommand({
		Filters: [{ Name: 'tag:fleet', Values: [`${fleet}-other`] }],
	}));
	const ids = r.Reservations.flatMap((x) => x.Instances.map((i) => i.InstanceId));
	assert.deepEqual(ids.sort(), [...others].sort());

	/* and they all come up: pending -> running */
	await poll('instances running', async () => {
		const m = await describeByIds(want);
		return [...m.values()].every((i) => i.State.Name === 'running' && i.State.Code === 16);
	});
	const m = await describeByIds(batchA.slice(0, 1));
	const i = m.get(batchA[0]);
	assert.match(i.PrivateIpAddress, /^\d+\.\d+\.\d+\.\d+$/);
	assert.equal(i.Placement.AvailabilityZone, 'us-east-1b');
});

test('ClientToken replay returns the same instances; other params mismatch', async () => {
	const same = await ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: TYPE, MinCount: 7, MaxCount: 7, ClientToken: token,
		Placement: { AvailabilityZone: 'us-east-1b' },
		TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'fleet', Value: fleet },
			{ Key: 'Name', Value: NAME_A }] }],
	}));
	assert.deepEqual(same.Instances.map((i) => i.InstanceId).sort(), [...batchA].sort());

	const ec2once = client({ maxAttempts: 1 });
	await expectCode('token reuse with another type', ['IdempotentParameterMismatch'],
			 () => ec2once.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: 'g5.2xlarge', MinCount: 7, MaxCount: 7,
				 ClientToken: token, Placement: { AvailabilityZone: 'us-east-1b' },
			 })), 400);
});

test('CreateTags and DeleteTags move the expires-at tag of running instances', async () => {
	const expiry = (m) => [...m.values()].map((i) =>
		(i.Tags || []).find((t) => t.Key === 'gpucluster:expires-at'));
	await ec2.send(new CreateTagsCommand({
		Resources: batchA, Tags: [{ Key: 'gpucluster:expires-at', Value: '2031-01-01T04:00:00Z' }],
	}));
	for (const t of expiry(await describeByIds(batchA)))
		assert.equal(t && t.Value, '2031-01-01T04:00:00Z');
	await ec2.send(new DeleteTagsCommand({
		Resources: batchA, Tags: [{ Key: 'gpucluster:expires-at' }],
	}));
	for (const t of expiry(await describeByIds(batchA)))
		assert.equal(t, undefined);
});

test('TerminateInstances and the instances go to terminated', async () => {
	const ids = [...batchA, ...batchB, ...others];
	const r = await ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
	assert.equal(r.TerminatingInstances.length, ids.length);
	for (const t of r.TerminatingInstances) {
		assert.ok(ids.includes(t.InstanceId));
		assert.ok(['shutting-down', 'terminated'].includes(t.CurrentState.Name),
			  `current ${t.CurrentState.Name}`);
		assert.equal(t.PreviousState.Name, 'running');
		assert.equal(t.PreviousState.Code, 16);
	}
	await poll('instances terminated', async () => {
		const m = await describeByIds(ids);
		/* terminated instances stay visible (about an hour on AWS) */
		return m.size === ids.length &&
			[...m.values()].every((i) => i.State.Name === 'terminated' && i.State.Code === 48);
	});
	/* terminating again is idempotent */
	const again = await ec2.send(new TerminateInstancesCommand({ InstanceIds: [batchA[0]] }));
	assert.equal(again.TerminatingInstances[0].CurrentState.Name, 'terminated');

	/* the filter can exclude them */
	const live = await ec2.send(new DescribeInstancesCommand({
		Filters: [{ Name: 'tag:fleet', Values: [fleet] },
			  { Name: 'instance-state-name', Values: ['pending', 'running'] }],
	}));
	assert.equal((live.Reservations || []).length, 0);
});

test('ImportKeyPair, DescribeKeyPairs, DeleteKeyPair', async () => {
	const name = unique('gc-key-');
	const line = sshPublicKey();
	const blob = Buffer.from(line.split(' ')[1], 'base64');
	const sha = crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
	const imp = await ec2.send(new ImportKeyPairCommand({
		KeyName: name,
		PublicKeyMaterial: Buffer.from(line),
		TagSpecifications: [{ ResourceType: 'key-pair', Tags: [{ Key: 'fleet', Value: fleet }] }],
	}));
	assert.equal(imp.KeyName, name);
	assert.match(imp.KeyPairId, /^key-[0-9a-f]{8,17}$/);
	assert.ok(imp.KeyFingerprint.replace(/^SHA256:/, '').replace(/=+$/, '') === sha,
		  `fingerprint ${imp.KeyFingerprint} is the SHA-256 of the key blob (${sha})`);

	const d = await ec2.send(new DescribeKeyPairsCommand({ KeyNames: [name] }));
	assert.equal(d.KeyPairs.length, 1);
	assert.equal(d.KeyPairs[0].KeyName, name);
	assert.equal(d.KeyPairs[0].KeyPairId, imp.KeyPairId);
	assert.equal(d.KeyPairs[0].KeyFingerprint, imp.KeyFingerprint);

	const once = client({ maxAttempts: 1 });
	await expectCode('duplicate key name', ['InvalidKeyPair.Duplicate'],
			 () => once.send(new ImportKeyPairCommand({
				 KeyName: name, PublicKeyMaterial: Buffer.from(sshPublicKey()),
			 })));

	await ec2.send(new DeleteKeyPairCommand({ KeyName: name }));
	await expectCode('describe deleted key', ['InvalidKeyPair.NotFound'],
			 () => once.send(new DescribeKeyPairsCommand({ KeyNames: [name] })));
});

test('CreateSecurityGroup, AuthorizeSecurityGroupIngress (SSH), describe, delete', async () => {
	const name = unique('gc-sg-');
	const sg = await ec2.send(new CreateSecurityGroupCommand({
		GroupName: name,
		Description: 'gpucluster sdk test',
		TagSpecifications: [{ ResourceType: 'security-group',
			Tags: [{ Key: 'fleet', Value: fleet }] }],
	}));
	assert.match(sg.GroupId, /^sg-[0-9a-f]{8,17}$/);

	const perm = {
		IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
		IpRanges: [{ CidrIp: '203.0.113.0/24', Description: 'ssh from the lab' }],
	};
	const auth = await ec2.send(new AuthorizeSecurityGroupIngressCommand({
		GroupId: sg.GroupId, IpPermissions: [perm],
	}));
	assert.equal(auth.Return, true);

	const once = client({ maxAttempts: 1 });
	await expectCode('duplicate rule', ['InvalidPermission.Duplicate'],
			 () => once.send(new AuthorizeSecurityGroupIngressCommand({
				 GroupId: sg.GroupId, IpPermissions: [perm],
			 })));

	const d = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] }));
	assert.equal(d.SecurityGroups.length, 1);
	const g = d.SecurityGroups[0];
	assert.equal(g.GroupId, sg.GroupId);
	assert.equal(g.GroupName, name);
	assert.equal(g.Description, 'gpucluster sdk test');
	const ssh = (g.IpPermissions || []).find((p) => p.FromPort === 22);
	assert.ok(ssh, `ingress rules: ${JSON.stringify(g.IpPermissions)}`);
	assert.equal(ssh.IpProtocol, 'tcp');
	assert.equal(ssh.ToPort, 22);
	assert.deepEqual(ssh.IpRanges.map((r) => r.CidrIp), ['203.0.113.0/24']);
	assert.equal(ssh.IpRanges[0].Description, 'ssh from the lab');

	// the group itself as a source (its members), as the SDK serialises UserIdGroupPairs
	await ec2.send(new AuthorizeSecurityGroupIngressCommand({
		GroupId: sg.GroupId,
		IpPermissions: [{ IpProtocol: '-1',
			UserIdGroupPairs: [{ GroupId: sg.GroupId, Description: 'members' }] }],
	}));
	await expectCode('an unknown source group', ['InvalidGroup.NotFound'],
			 () => once.send(new AuthorizeSecurityGroupIngressCommand({
				 GroupId: sg.GroupId,
				 IpPermissions: [{ IpProtocol: '-1',
					 UserIdGroupPairs: [{ GroupId: 'sg-0000000000000dead' }] }],
			 })));
	const m = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] }));
	const members = (m.SecurityGroups[0].IpPermissions || [])
		.find((p) => (p.UserIdGroupPairs || []).length > 0);
	assert.ok(members, `ingress rules: ${JSON.stringify(m.SecurityGroups[0].IpPermissions)}`);
	assert.equal(members.IpProtocol, '-1');
	assert.equal(members.UserIdGroupPairs[0].GroupId, sg.GroupId);
	assert.equal(members.UserIdGroupPairs[0].Description, 'members');
	assert.deepEqual(members.IpRanges, []);

	await ec2.send(new DeleteSecurityGroupCommand({ GroupId: sg.GroupId }));
	await expectCode('describe deleted group', ['InvalidGroup.NotFound'],
			 () => once.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] })));
});

// what gpucluster sends for EFA (issue 13): all traffic to the group itself, beside EC2's
// default allow-all egress rule, which every group lists from its creation
test('AuthorizeSecurityGroupEgress: the self rule EFA requires; duplicates refused', async () => {
	const once = client({ maxAttempts: 1 });
	const sg = await ec2.send(new CreateSecurityGroupCommand({
		GroupName: unique('gc-eg-'), Description: 'gpucluster sdk egress',
	}));
	const egress = async () => (await ec2.send(new DescribeSecurityGroupsCommand({
		GroupIds: [sg.GroupId] }))).SecurityGroups[0].IpPermissionsEgress;
	const fresh = await egress();
	assert.equal(fresh.length, 1, `egress rules: ${JSON.stringify(fresh)}`);
	assert.equal(fresh[0].IpProtocol, '-1');
	assert.deepEqual(fresh[0].IpRanges.map((r) => r.CidrIp), ['0.0.0.0/0']);

	const self = { IpProtocol: '-1',
		UserIdGroupPairs: [{ GroupId: sg.GroupId, Description: 'gpucluster members' }] };
	const auth = await ec2.send(new AuthorizeSecurityGroupEgressCommand({
		GroupId: sg.GroupId, IpPermissions: [self] }));
	assert.equal(auth.Return, true);
	assert.equal(auth.SecurityGroupRules.length, 1);
	assert.equal(auth.SecurityGroupRules[0].IsEgress, true);
	assert.equal(auth.SecurityGroupRules[0].ReferencedGroupInfo.GroupId, sg.GroupId);
	const after = await egress();
	assert.equal(after.length, 2, `egress rules: ${JSON.stringify(after)}`);
	const mine = after.find((p) => (p.UserIdGroupPairs || []).length > 0);
	assert.ok(mine, `egress rules: ${JSON.stringify(after)}`);
	assert.equal(mine.IpProtocol, '-1');
	assert.equal(mine.UserIdGroupPairs[0].GroupId, sg.GroupId);
	assert.equal(mine.UserIdGroupPairs[0].Description, 'gpucluster members');
	// the ingress side is untouched
	const d = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] }));
	assert.deepEqual(d.SecurityGroups[0].IpPermissions, []);

	await expectCode('the same egress rule again', ['InvalidPermission.Duplicate'],
			 () => once.send(new AuthorizeSecurityGroupEgressCommand({
				 GroupId: sg.GroupId, IpPermissions: [self] })));
	await expectCode('the default egress rule again', ['InvalidPermission.Duplicate'],
			 () => once.send(new AuthorizeSecurityGroupEgressCommand({
				 GroupId: sg.GroupId,
				 IpPermissions: [{ IpProtocol: '-1', IpRanges: [{ CidrIp: '0.0.0.0/0' }] }] })));
	await expectCode('an unknown group', ['InvalidGroup.NotFound'],
			 () => once.send(new AuthorizeSecurityGroupEgressCommand({
				 GroupId: 'sg-0000000000000dead', IpPermissions: [self] })));
	await expectCode('an unknown destination group', ['InvalidGroup.NotFound'],
			 () => once.send(new AuthorizeSecurityGroupEgressCommand({
				 GroupId: sg.GroupId,
				 IpPermissions: [{ IpProtocol: '-1',
					 UserIdGroupPairs: [{ GroupId: 'sg-0000000000000dead' }] }] })));
	// the model still has the top-level members, which the API reference documents as
	// "Not supported. Use IP permissions instead": EC2 answers UnknownParameter
	// (github.com/boto/boto3/issues/790), and nothing is added
	const flat = [{ CidrIp: '10.0.0.0/8' }, { IpProtocol: 'tcp' }, { FromPort: 22 }, { ToPort: 22 },
		{ SourceSecurityGroupName: 'default' }, { SourceSecurityGroupOwnerId: '123456789012' },
		{ IpProtocol: '-1', FromPort: -1, ToPort: -1, CidrIp: '10.0.0.0/8' }];
	for (const f of flat) {
		const err = await expectCode(`egress with ${Object.keys(f).join(', ')}`,
			['UnknownParameter'], () => once.send(new AuthorizeSecurityGroupEgressCommand({
				GroupId: sg.GroupId, ...f })), 400);
		assert.match(err.message, /^The parameter \w+ is not recognized$/);
		assert.ok(Object.keys(f).some((k) => err.message.includes(k)), err.message);
	}
	await expectCode('CidrIp beside IpPermissions', ['UnknownParameter'],
			 () => once.send(new AuthorizeSecurityGroupEgressCommand({
				 GroupId: sg.GroupId, CidrIp: '10.0.0.0/8',
				 IpPermissions: [{ IpProtocol: '-1', IpRanges: [{ CidrIp: '10.0.0.0/8' }] }] })));
	assert.equal((await egress()).length, 2);
	await ec2.send(new DeleteSecurityGroupCommand({ GroupId: sg.GroupId }));
});

// what gpucluster sends to reconcile a group's rules (issue 19): revoke by rule
// properties, without the description
test('RevokeSecurityGroupIngress by rule properties; an unknown rule is reported', async () => {
	const once = client({ maxAttempts: 1 });
	const sg = await ec2.send(new CreateSecurityGroupCommand({
		GroupName: unique('gc-rv-'), Description: 'gpucluster sdk revoke',
	}));
	const ssh = (cidr, desc) => ({ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
		IpRanges: [{ CidrIp: cidr, Description: desc }] });
	await ec2.send(new AuthorizeSecurityGroupIngressCommand({
		GroupId: sg.GroupId,
		IpPermissions: [ssh('203.0.113.0/24', 'gpucluster ssh'), ssh('198.51.100.0/24', 'by hand'),
			{ IpProtocol: '-1', UserIdGroupPairs: [{ GroupId: sg.GroupId,
				Description: 'gpucluster members' }] }],
	}));
	const r = await ec2.send(new RevokeSecurityGroupIngressCommand({
		GroupId: sg.GroupId,
		IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
			IpRanges: [{ CidrIp: '203.0.113.0/24' }] },
		{ IpProtocol: '-1', UserIdGroupPairs: [{ GroupId: sg.GroupId }] }],
	}));
	assert.equal(r.Return, true);
	assert.deepEqual(r.UnknownIpPermissions || [], []);
	const d = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] }));
	const left = d.SecurityGroups[0].IpPermissions || [];
	assert.equal(left.length, 1, JSON.stringify(left));
	assert.deepEqual(left[0].IpRanges, [{ CidrIp: '198.51.100.0/24', Description: 'by hand' }]);

	// in the default VPC a rule that is not there is listed back, not an error
	const again = await ec2.send(new RevokeSecurityGroupIngressCommand({
		GroupId: sg.GroupId,
		IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
			IpRanges: [{ CidrIp: '203.0.113.0/24' }] }],
	}));
	assert.equal(again.Return, true);
	assert.equal(again.UnknownIpPermissions.length, 1);
	assert.equal(again.UnknownIpPermissions[0].IpRanges[0].CidrIp, '203.0.113.0/24');
	await expectCode('a malformed CIDR', ['InvalidParameterValue'],
			 () => once.send(new RevokeSecurityGroupIngressCommand({
				 GroupId: sg.GroupId,
				 IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
					 IpRanges: [{ CidrIp: '203.0.113/99' }] }],
			 })));
	await expectCode('an unknown group', ['InvalidGroup.NotFound'],
			 () => once.send(new RevokeSecurityGroupIngressCommand({
				 GroupId: 'sg-0000000000000dead',
				 IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
					 IpRanges: [{ CidrIp: '203.0.113.0/24' }] }],
			 })));
	await ec2.send(new DeleteSecurityGroupCommand({ GroupId: sg.GroupId }));
});

// IPv6 sources (issue 18): Ipv6Ranges.N.CidrIpv6 on authorize and revoke, read back from
// ipv6Ranges; an IPv6 block in IpRanges.N.CidrIp is refused, as EC2 does
test('IPv6 ranges: Ipv6Ranges authorize, describe, revoke; IPv6 in CidrIp refused', async () => {
	const once = client({ maxAttempts: 1 });
	const sg = await ec2.send(new CreateSecurityGroupCommand({
		GroupName: unique('gc-v6-'), Description: 'gpucluster sdk ipv6',
	}));
	await ec2.send(new AuthorizeSecurityGroupIngressCommand({
		GroupId: sg.GroupId,
		IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
			IpRanges: [{ CidrIp: '203.0.113.0/24', Description: 'gpucluster ssh' }],
			Ipv6Ranges: [{ CidrIpv6: '2001:db8::/32', Description: 'gpucluster ssh' }] }],
	}));
	const d = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] }));
	const perms = d.SecurityGroups[0].IpPermissions || [];
	assert.deepEqual(perms.flatMap((p) => (p.Ipv6Ranges || []).map((r) => r.CidrIpv6)),
			 ['2001:db8::/32']);
	assert.deepEqual(perms.flatMap((p) => (p.IpRanges || []).map((r) => r.CidrIp)),
			 ['203.0.113.0/24']);
	assert.equal(perms.find((p) => (p.Ipv6Ranges || []).length).Ipv6Ranges[0].Description,
		     'gpucluster ssh');
	await expectCode('an IPv6 block in CidrIp', ['InvalidParameterValue'],
			 () => once.send(new AuthorizeSecurityGroupIngressCommand({
				 GroupId: sg.GroupId,
				 IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
					 IpRanges: [{ CidrIp: '2001:db8:1::/48' }] }],
			 })));
	await expectCode('an IPv4 block in CidrIpv6', ['InvalidParameterValue'],
			 () => once.send(new AuthorizeSecurityGroupIngressCommand({
				 GroupId: sg.GroupId,
				 IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
					 Ipv6Ranges: [{ CidrIpv6: '198.51.100.0/24' }] }],
			 })));
	const r = await ec2.send(new RevokeSecurityGroupIngressCommand({
		GroupId: sg.GroupId,
		IpPermissions: [{ IpProtocol: 'tcp', FromPort: 22, ToPort: 22,
			Ipv6Ranges: [{ CidrIpv6: '2001:db8::/32' }] }],
	}));
	assert.deepEqual(r.UnknownIpPermissions || [], []);
	const left = (await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sg.GroupId] })))
		.SecurityGroups[0].IpPermissions || [];
	assert.deepEqual(left.flatMap((p) => p.Ipv6Ranges || []), []);
	assert.deepEqual(left.flatMap((p) => (p.IpRanges || []).map((x) => x.CidrIp)),
			 ['203.0.113.0/24']);
	await ec2.send(new DeleteSecurityGroupCommand({ GroupId: sg.GroupId }));
});

test('a wrong secret and an unknown key id are rejected', async () => {
	const bad = client({ secret: 'not-the-secret-0000000000000000000000000', maxAttempts: 1 });
	// EC2 answers a wrong secret as an unknown key: AuthFailure, 401
	const e1 = await expectCode('wrong secret', ['AuthFailure'],
				    () => bad.send(new DescribeInstancesCommand({})));
	assert.equal(e1.$metadata.httpStatusCode, 401);
	assert.equal(e1.$fault, 'client');

	const unknown = client({ id: 'AKIANOSUCHKEY0000000', maxAttempts: 1 });
	await expectCode('unknown key id', ['AuthFailure', 'InvalidClientTokenId'],
			 () => unknown.send(new DescribeInstancesCommand({})));
});

test('DescribeInstanceTypes, DescribeImages, DescribeSpotPriceHistory parse with GPU facts',
     async () => {
	const t = await ec2.send(new DescribeInstanceTypesCommand({
		InstanceTypes: ['g5.12xlarge', 'p4d.24xlarge'],
	}));
	const by = Object.fromEntries(t.InstanceTypes.map((x) => [x.InstanceType, x]));
	assert.deepEqual(Object.keys(by).sort(), ['g5.12xlarge', 'p4d.24xlarge']);
	const g5 = by['g5.12xlarge'];
	assert.equal(g5.VCpuInfo.DefaultVCpus, 48);
	assert.equal(g5.MemoryInfo.SizeInMiB, 192 * 1024);
	assert.equal(g5.GpuInfo.Gpus.length, 1);
	assert.equal(g5.GpuInfo.Gpus[0].Name, 'A10G');
	assert.equal(g5.GpuInfo.Gpus[0].Manufacturer, 'NVIDIA');
	assert.equal(g5.GpuInfo.Gpus[0].Count, 4);
	assert.equal(g5.GpuInfo.Gpus[0].MemoryInfo.SizeInMiB, 24576);
	assert.equal(g5.GpuInfo.TotalGpuMemoryInMiB, 4 * 24576);
	const p4d = by['p4d.24xlarge'];
	assert.equal(p4d.GpuInfo.Gpus[0].Name, 'A100');
	assert.equal(p4d.GpuInfo.Gpus[0].Count, 8);
	assert.equal(p4d.GpuInfo.Gpus[0].MemoryInfo.SizeInMiB, 40960);

	const fam = await ec2.send(new DescribeInstanceTypesCommand({
		Filters: [{ Name: 'instance-type', Values: ['g5.*'] }],
	}));
	assert.ok(fam.InstanceTypes.length >= 4, 'g5.* matches the g5 family');
	for (const x of fam.InstanceTypes) {
		assert.match(x.InstanceType, /^g5\./);
		assert.ok(x.GpuInfo.Gpus[0].Count >= 1);
	}

	const imgs = await ec2.send(new DescribeImagesCommand({
		Owners: ['amazon'],
		Filters: [{ Name: 'name',
			Values: ['Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*'] }],
	}));
	assert.ok(imgs.Images.length >= 2, `DLAMIs: ${JSON.stringify(imgs.Images)}`);
	for (const im of imgs.Images) {
		assert.match(im.ImageId, /^ami-[0-9a-f]{8,17}$/);
		assert.match(im.Name, /^Deep Learning Base OSS Nvidia Driver GPU AMI \(Ubuntu 22\.04\)/);
		assert.ok(!isNaN(Date.parse(im.CreationDate)), `CreationDate ${im.CreationDate}`);
	}
	const newest = [...imgs.Images].sort((a, b) => Date.parse(b.CreationDate) -
					     Date.parse(a.CreationDate))[0];
	assert.equal(newest.ImageId, IMAGE);

	const sp = await ec2.send(new DescribeSpotPriceHistoryCommand({
		InstanceTypes: [TYPE],
		ProductDescriptions: ['Linux/UNIX'],
		StartTime: new Date(),
	}));
	assert.ok(sp.SpotPriceHistory.length >= 1);
	for (const p of sp.SpotPriceHistory) {
		assert.equal(p.InstanceType, TYPE);
		assert.equal(p.ProductDescription, 'Linux/UNIX');
		assert.match(p.AvailabilityZone, /^us-east-1[a-f]$/);
		const price = parseFloat(p.SpotPrice);
		assert.ok(price > 0 && price < 1.006, `spot ${p.SpotPrice} below on-demand`);
		assert.ok(p.Timestamp instanceof Date && !isNaN(p.Timestamp));
	}
});

test('show-gpus live: every DescribeInstanceTypes page, and every offering by zone', async () => {
	/* what ops->gpu_types asks: the region's types, all pages (EC2 has no "has GPUs"
	 * filter), and every (type, zone) offering, all pages */
	const gpu = {};
	let pages = 0;
	for await (const page of paginateDescribeInstanceTypes({ client: ec2, pageSize: 5 }, {})) {
		pages++;
		for (const x of page.InstanceTypes)
			if (x.GpuInfo)
				gpu[x.InstanceType] = x.GpuInfo.Gpus[0];
	}
	assert.ok(pages > 1, `${pages} pages`);
	assert.equal(gpu['p5.48xlarge'].Name, 'H100');
	assert.equal(gpu['p5.48xlarge'].Count, 8);
	assert.equal(gpu['g6.12xlarge'].MemoryInfo.SizeInMiB, 22888);
	assert.equal(gpu['t3.medium'], undefined);
	const g6 = [];
	let rows = 0;
	for await (const page of paginateDescribeInstanceTypeOfferings({ client: ec2, pageSize: 5 }, {
		LocationType: 'availability-zone',
	})) {
		for (const o of page.InstanceTypeOfferings) {
			rows++;
			if (o.InstanceType === 'g6.12xlarge')
				g6.push(o.Location);
		}
	}
	assert.ok(rows > 20, `${rows} offerings`);
	assert.deepEqual(g6, ['us-east-1a', 'us-east-1c', 'us-east-1d', 'us-east-1f']);
});

test('DescribeInstanceTypeOfferings by zone and by region, filtered and paged', async () => {
	/* what plan asks: the zones of the region that sell one type (us-east-1b sells no
	 * g6.12xlarge in the emulator's catalogue, as real zones each sell a subset) */
	const zones = [];
	for await (const page of paginateDescribeInstanceTypeOfferings({ client: ec2, pageSize: 5 }, {
		LocationType: 'availability-zone',
		Filters: [{ Name: 'instance-type', Values: ['g6.12xlarge'] }],
	})) {
		for (const o of page.InstanceTypeOfferings) {
			assert.equal(o.InstanceType, 'g6.12xlarge');
			assert.equal(o.LocationType, 'availability-zone');
			zones.push(o.Location);
		}
	}
	assert.deepEqual(zones, ['us-east-1a', 'us-east-1c', 'us-east-1d', 'us-east-1f']);

	const one = await ec2.send(new DescribeInstanceTypeOfferingsCommand({
		LocationType: 'availability-zone',
		Filters: [{ Name: 'location', Values: ['us-east-1b'] },
			  { Name: 'instance-type', Values: [TYPE, 'g6.12xlarge'] }],
	}));
	assert.deepEqual(one.InstanceTypeOfferings.map((o) => o.InstanceType), [TYPE]);

	/* no LocationType: the region */
	const reg = await ec2.send(new DescribeInstanceTypeOfferingsCommand({
		Filters: [{ Name: 'instance-type', Values: [TYPE] }],
	}));
	assert.deepEqual(reg.InstanceTypeOfferings,
			 [{ InstanceType: TYPE, LocationType: 'region', Location: REGION }]);

	/* a type that does not exist is not an error: nothing offers it */
	const none = await ec2.send(new DescribeInstanceTypeOfferingsCommand({
		LocationType: 'availability-zone',
		Filters: [{ Name: 'instance-type', Values: ['gpu.huge9'] }],
	}));
	assert.deepEqual(none.InstanceTypeOfferings || [], []);
	assert.equal(none.NextToken, undefined);
});

test('injected throttling and capacity errors are classified by the SDK', async () => {
	await sim.addFaults('aws:DescribeInstances:throttle,times=1',
			    'aws:RunInstances:capacity,times=1');
	try {
		/* the SDK's standard retry strategy retries RequestLimitExceeded by itself */
		const r = await ec2.send(new DescribeInstancesCommand({}));
		assert.equal(r.$metadata.attempts, 2, 'one throttled attempt, then success');

		await sim.addFaults('aws:DescribeInstances:throttle,times=1');
		const once = client({ maxAttempts: 1 });
		await expectCode('throttled', ['RequestLimitExceeded'],
				 () => once.send(new DescribeInstancesCommand({})), 503);

		await expectCode('no capacity', ['InsufficientInstanceCapacity'],
				 () => once.send(new RunInstancesCommand({
					 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
				 })));

		// quotas per market (issue 18): the spot one, then the on-demand one
		await sim.addFaults('aws:RunInstances:quota,market=spot,times=1',
				    'aws:RunInstances:quota,market=on-demand,times=1');
		await expectCode('the spot quota', ['MaxSpotInstanceCountExceeded'],
				 () => once.send(new RunInstancesCommand({
					 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
					 InstanceMarketOptions: { MarketType: 'spot' },
				 })), 400);
		await expectCode('the on-demand quota', ['VcpuLimitExceeded'],
				 () => once.send(new RunInstancesCommand({
					 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
				 })), 400);
	} finally {
		await sim.clearFaults();
	}
});

test('DescribeVpcs and DescribeSubnets; a launch into a subnet of the user\'s VPC', async () => {
	const vpcs = await ec2.send(new DescribeVpcsCommand({}));
	const def = vpcs.Vpcs.find((v) => v.IsDefault);
	const mine = vpcs.Vpcs.find((v) => !v.IsDefault);
	assert.ok(def && mine, 'the default VPC and the user\'s');
	assert.match(mine.VpcId, /^vpc-[0-9a-f]{17}$/);
	assert.equal(mine.State, 'available');
	const byFilter = await ec2.send(new DescribeVpcsCommand({
		Filters: [{ Name: 'vpc-id', Values: [mine.VpcId, 'vpc-0123456789abcdef0'] }] }));
	assert.deepEqual(byFilter.Vpcs.map((v) => v.VpcId), [mine.VpcId]);
	await expectCode('DescribeVpcs of an unknown id', ['InvalidVpcID.NotFound'],
			 () => ec2.send(new DescribeVpcsCommand({ VpcIds: ['vpc-0123456789abcdef0'] })));

	const subs = await ec2.send(new DescribeSubnetsCommand({
		Filters: [{ Name: 'vpc-id', Values: [mine.VpcId] }] }));
	assert.ok(subs.Subnets.length >= 2);
	const inB = subs.Subnets.find((x) => x.AvailabilityZone === 'us-east-1b');
	assert.match(inB.SubnetId, /^subnet-[0-9a-f]{17}$/);
	assert.equal(inB.VpcId, mine.VpcId);
	assert.equal(inB.DefaultForAz, false);
	const one = await ec2.send(new DescribeSubnetsCommand({
		Filters: [{ Name: 'subnet-id', Values: [inB.SubnetId, 'subnet-0123456789abcdef0'] }] }));
	assert.deepEqual(one.Subnets.map((x) => x.SubnetId), [inB.SubnetId]);
	await expectCode('DescribeSubnets of an unknown id', ['InvalidSubnetID.NotFound'],
			 () => ec2.send(new DescribeSubnetsCommand({
				 SubnetIds: ['subnet-0123456789abcdef0'] })));

	/* a group of the user's VPC and a launch into its subnet: the zone is the subnet's */
	const sg = await ec2.send(new CreateSecurityGroupCommand({
		GroupName: unique('gc-net-'), Description: 'net', VpcId: mine.VpcId }));
	await expectCode('CreateSecurityGroup in an unknown VPC', ['InvalidVpcID.NotFound'],
			 () => ec2.send(new CreateSecurityGroupCommand({
				 GroupName: unique('gc-net-'), Description: 'net',
				 VpcId: 'vpc-0123456789abcdef0' })));
	const run = await ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
		SubnetId: inB.SubnetId, SecurityGroupIds: [sg.GroupId] }));
	const inst = run.Instances[0];
	assert.equal(inst.SubnetId, inB.SubnetId);
	assert.equal(inst.VpcId, mine.VpcId);
	assert.equal(inst.Placement.AvailabilityZone, 'us-east-1b');
	await expectCode('a subnet in another zone than Placement', ['InvalidParameterValue'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
				 SubnetId: inB.SubnetId,
				 Placement: { AvailabilityZone: 'us-east-1a' } })));
	const dsub = (await ec2.send(new DescribeSubnetsCommand({
		Filters: [{ Name: 'vpc-id', Values: [def.VpcId] },
			  { Name: 'availability-zone', Values: ['us-east-1b'] }] }))).Subnets[0];
	await expectCode('a group of another VPC than the subnet', ['InvalidParameter'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
				 SubnetId: dsub.SubnetId, SecurityGroupIds: [sg.GroupId] })));
	await ec2.send(new TerminateInstancesCommand({ InstanceIds: [inst.InstanceId] }));
});

test('an account without a default VPC: VPCIdNotSpecified without a subnet or VpcId', async () => {
	const other = await startSim(['--no-default-vpc']);
	try {
		const c = new EC2Client({
			endpoint: other.ready.aws, region: REGION, maxAttempts: 1,
			credentials: { accessKeyId: other.creds.aws.id,
				       secretAccessKey: other.creds.aws.secret },
		});
		const vpcs = await c.send(new DescribeVpcsCommand({}));
		assert.equal(vpcs.Vpcs.length, 1);
		assert.equal(vpcs.Vpcs[0].IsDefault, false);
		await expectCode('RunInstances without a subnet', ['VPCIdNotSpecified'],
				 () => c.send(new RunInstancesCommand({
					 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1,
					 MaxCount: 1 })));
		await expectCode('CreateSecurityGroup without VpcId', ['VPCIdNotSpecified'],
				 () => c.send(new CreateSecurityGroupCommand({
					 GroupName: unique('gc-net-'), Description: 'net' })));
	} finally {
		await other.stop();
	}
});

test('EFA: DescribeInstanceTypes gives EfaInfo; RunInstances with efa and efa-only cards',
     async () => {
	const t = await ec2.send(new DescribeInstanceTypesCommand({
		InstanceTypes: ['p4d.24xlarge', 'p5.48xlarge', TYPE] }));
	const efa = Object.fromEntries(t.InstanceTypes.map((x) => [x.InstanceType,
		x.NetworkInfo.EfaSupported ? x.NetworkInfo.EfaInfo.MaximumEfaInterfaces : 0]));
	assert.deepEqual(efa, { 'p4d.24xlarge': 4, 'p5.48xlarge': 32, [TYPE]: 0 });
	const nics = (n) => Array.from({ length: n }, (_, i) => ({
		NetworkCardIndex: i, DeviceIndex: 0, InterfaceType: i ? 'efa-only' : 'efa',
		DeleteOnTermination: true }));
	const run = await ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 1, MaxCount: 1,
		Placement: { AvailabilityZone: 'us-east-1a' }, NetworkInterfaces: nics(4) }));
	assert.equal(run.Instances.length, 1);
	await expectCode('5 EFAs on p4d', ['InvalidParameterCombination'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 1,
				 MaxCount: 1, NetworkInterfaces: nics(5) })));
	await expectCode('an EFA on a type without', ['InvalidParameterCombination'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
				 NetworkInterfaces: nics(1) })));
	const two = nics(2);
	two[0].AssociatePublicIpAddress = true;
	await expectCode('a public address with two interfaces', ['InvalidParameterCombination'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 1,
				 MaxCount: 1, NetworkInterfaces: two })));
	await ec2.send(new TerminateInstancesCommand({
		InstanceIds: [run.Instances[0].InstanceId] }));
});

test('placement groups: create tagged, launch into, capacity, in use, describe, delete',
     async () => {
	const name = unique('gpucluster-pg');
	const made = await ec2.send(new CreatePlacementGroupCommand({
		GroupName: name, Strategy: 'cluster',
		TagSpecifications: [{ ResourceType: 'placement-group',
				      Tags: [{ Key: 'gpucluster:cluster', Value: name }] }] }));
	assert.equal(made.PlacementGroup.GroupName, name);
	assert.equal(made.PlacementGroup.Strategy, 'cluster');
	await expectCode('a second group of that name', ['InvalidPlacementGroup.Duplicate'],
			 () => ec2.send(new CreatePlacementGroupCommand({
				 GroupName: name, Strategy: 'cluster' })));
	const listed = await ec2.send(new DescribePlacementGroupsCommand({
		Filters: [{ Name: 'tag:gpucluster:cluster', Values: [name] }] }));
	assert.equal(listed.PlacementGroups.length, 1);
	assert.equal(tagMap(listed.PlacementGroups[0].Tags)['gpucluster:cluster'], name);
	const run = await ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 2, MaxCount: 2,
		Placement: { AvailabilityZone: 'us-east-1a', GroupName: name } }));
	const ids = run.Instances.map((i) => i.InstanceId);
	assert.equal((await describeByIds(ids)).get(ids[0]).Placement.GroupName, name);
	await expectCode('more than the group holds', ['InsufficientInstanceCapacity'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 7,
				 MaxCount: 7, Placement: { GroupName: name } })), 500);
	await expectCode('an unknown group', ['InvalidPlacementGroup.Unknown'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 1,
				 MaxCount: 1, Placement: { GroupName: `${name}-x` } })));
	await expectCode('deleting a group in use', ['InvalidPlacementGroup.InUse'],
			 () => ec2.send(new DeletePlacementGroupCommand({ GroupName: name })));
	await ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
	await poll('the group\'s instances terminate', async () => {
		const now = await describeByIds(ids);
		return ids.every((id) => now.get(id).State.Name === 'terminated');
	});
	await ec2.send(new DeletePlacementGroupCommand({ GroupName: name }));
	await expectCode('describing a deleted group', ['InvalidPlacementGroup.Unknown'],
			 () => ec2.send(new DescribePlacementGroupsCommand({ GroupNames: [name] })));
});

test('Elastic IPs: a node with EFA cards has no public address until one is associated to '
     + 'its primary interface; in use, limit, non-running instance, release', async () => {
	const name = unique('gpucluster-eip');
	const nics = (n) => Array.from({ length: n }, (_, i) => ({
		NetworkCardIndex: i, DeviceIndex: 0, InterfaceType: i ? 'efa-only' : 'efa',
		DeleteOnTermination: true }));
	const run = await ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: 'p4d.24xlarge', MinCount: 1, MaxCount: 1,
		Placement: { AvailabilityZone: 'us-east-1a' }, NetworkInterfaces: nics(4) }));
	const id = run.Instances[0].InstanceId;
	const made = await ec2.send(new AllocateAddressCommand({
		Domain: 'vpc', TagSpecifications: [{ ResourceType: 'elastic-ip',
			Tags: [{ Key: 'gpucluster:cluster', Value: name },
			       { Key: 'gpucluster:instance', Value: id }] }] }));
	assert.match(made.AllocationId, /^eipalloc-/);
	assert.match(made.PublicIp, /^127\./);
	assert.equal(made.Domain, 'vpc');
	const listed = await ec2.send(new DescribeAddressesCommand({
		Filters: [{ Name: 'tag:gpucluster:cluster', Values: [name] }] }));
	assert.equal(listed.Addresses.length, 1);
	assert.equal(tagMap(listed.Addresses[0].Tags)['gpucluster:instance'], id);
	assert.equal(listed.Addresses[0].InstanceId, undefined);
	/* the launch's interfaces, the primary one first, and no public address of its own */
	let inst = (await describeByIds([id])).get(id);
	const primary = inst.NetworkInterfaces.find((n) => n.Attachment.NetworkCardIndex === 0);
	assert.equal(inst.NetworkInterfaces.length, 4);
	assert.equal(primary.InterfaceType, 'efa');
	assert.equal(inst.PublicIpAddress, undefined);
	if (inst.State.Name === 'pending')
		await expectCode('associating to a pending instance', ['IncorrectInstanceState'],
				 () => ec2.send(new AssociateAddressCommand({
					 AllocationId: made.AllocationId,
					 NetworkInterfaceId: primary.NetworkInterfaceId })));
	await poll('the node runs', async () =>
		(await describeByIds([id])).get(id).State.Name === 'running');
	await expectCode('an instance id with several interfaces', ['InvalidInstanceID'],
			 () => ec2.send(new AssociateAddressCommand({
				 AllocationId: made.AllocationId, InstanceId: id })));
	await expectCode('an EFA-only interface', ['InvalidParameterValue'],
			 () => ec2.send(new AssociateAddressCommand({
				 AllocationId: made.AllocationId,
				 NetworkInterfaceId: inst.NetworkInterfaces.find(
					 (n) => n.Attachment.NetworkCardIndex === 1).NetworkInterfaceId })));
	const assoc = await ec2.send(new AssociateAddressCommand({
		AllocationId: made.AllocationId, NetworkInterfaceId: primary.NetworkInterfaceId }));
	assert.match(assoc.AssociationId, /^eipassoc-/);
	inst = (await describeByIds([id])).get(id);
	assert.equal(inst.PublicIpAddress, made.PublicIp);
	const on = await ec2.send(new DescribeAddressesCommand({
		AllocationIds: [made.AllocationId] }));
	assert.equal(on.Addresses[0].InstanceId, id);
	assert.equal(on.Addresses[0].NetworkInterfaceId, primary.NetworkInterfaceId);
	await expectCode('releasing an associated address', ['InvalidIPAddress.InUse'],
			 () => ec2.send(new ReleaseAddressCommand({
				 AllocationId: made.AllocationId })));
	/* EC2's default quota of 5 addresses per region */
	const more = [];
	await expectCode('past the address limit', ['AddressLimitExceeded'], async () => {
		for (;;)
			more.push((await ec2.send(new AllocateAddressCommand({ Domain: 'vpc' })))
				.AllocationId);
	});
	assert.ok(more.length <= 4, `${more.length} more addresses`);
	for (const a of more)
		await ec2.send(new ReleaseAddressCommand({ AllocationId: a }));
	/* terminating the instance detaches the address; then it is released */
	await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
	await poll('the node terminates', async () =>
		(await describeByIds([id])).get(id).State.Name === 'terminated');
	await ec2.send(new ReleaseAddressCommand({ AllocationId: made.AllocationId }));
	await expectCode('describing a released address', ['InvalidAllocationID.NotFound'],
			 () => ec2.send(new DescribeAddressesCommand({
				 AllocationIds: [made.AllocationId] })));
});

async function stateRole(id) {
	const st = await (await fetch(`${sim.ready.control}/state`)).json();
	return st.instances.find((i) => i.id === id).role;
}

test('an instance role: IamInstanceProfile.Name on RunInstances, in the emulator\'s state',
     async () => {
	const run = await ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
		IamInstanceProfile: { Name: 'gpu-data_reader' } }));
	const id = run.Instances[0].InstanceId;
	assert.equal(await stateRole(id), 'gpu-data_reader');
	await expectCode('a malformed profile name', ['InvalidParameterValue'],
			 () => ec2.send(new RunInstancesCommand({
				 ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
				 IamInstanceProfile: { Name: 'no spaces' } })));
	await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
});

test('InstanceInitiatedShutdownBehavior: a shutdown from inside terminates or stops',
     async () => {
	/* what gpucluster's driver sends on every launch (providers/aws/ec2-ops.c) */
	const run = (beh) => ec2.send(new RunInstancesCommand({
		ImageId: IMAGE, InstanceType: TYPE, MinCount: 1, MaxCount: 1,
		...(beh ? { InstanceInitiatedShutdownBehavior: beh } : {}) }));
	const term = (await run('terminate')).Instances[0].InstanceId;
	const stop = (await run()).Instances[0].InstanceId;
	await expectCode('an unknown behaviour', ['InvalidParameterValue'], () => run('hibernate'));
	const running = async () => {
		const m = await describeByIds([term, stop]);
		return [...m.values()].every((i) => i.State.Name === 'running');
	};
	await poll('both instances running', running);
	/* what the node's own `shutdown -h now` does (docs/sim.md, control API) */
	for (const id of [term, stop]) {
		const r = await fetch(`${sim.ready.control}/nodes/${id}/shutdown`, { method: 'POST' });
		assert.equal(r.status, 200, await r.text());
	}
	const m = await poll('the instances to go', async () => {
		const d = await describeByIds([term, stop]);
		return d.get(term).State.Name === 'terminated' && d.get(stop).State.Name === 'stopped'
			? d : null;
	});
	for (const id of [term, stop]) {
		assert.equal(m.get(id).StateReason.Code, 'Client.InstanceInitiatedShutdown');
	}
	assert.equal(m.get(stop).State.Code, 80);
	const again = await fetch(`${sim.ready.control}/nodes/${stop}/shutdown`, { method: 'POST' });
	assert.equal(again.status, 409, 'a stopped instance cannot shut down again');
	await ec2.send(new TerminateInstancesCommand({ InstanceIds: [stop] }));
	await poll('the stopped instance to terminate', async () =>
		(await describeByIds([stop])).get(stop).State.Name === 'terminated');
});

test('request log is well-formed', () => {
	checkRequestLog(sim, 'aws',
			['RunInstances', 'DescribeInstances', 'TerminateInstances', 'ImportKeyPair',
			 'CreateSecurityGroup', 'AuthorizeSecurityGroupIngress',
			 'AuthorizeSecurityGroupEgress', 'RevokeSecurityGroupIngress', 'DescribeInstanceTypes', 'DescribeImages', 'DescribeSpotPriceHistory',
			 'CreateTags', 'DeleteTags', 'CreatePlacementGroup',
			 'DescribePlacementGroups', 'DeletePlacementGroup', 'AllocateAddress',
			 'AssociateAddress', 'DescribeAddresses', 'ReleaseAddress'],
			['IdempotentParameterMismatch', 'InvalidKeyPair.Duplicate', 'RequestLimitExceeded',
			 'InsufficientInstanceCapacity', 'AuthFailure']);
});

test('the emulator exits 0 on SIGTERM', async () => {
	const { code, signal } = await sim.stop();
	assert.equal(signal, null, `exit signal ${signal}\n${sim.output()}`);
	assert.equal(code, 0, `exit status ${code}\n${sim.output()}`);
});
