'use strict';
/*
 * foreign.js: makes resources that are NOT ours on the emulator, through the vendors'
 * own SDKs (tests/sdk/node_modules), for the e2e cases that check gpucluster never
 * touches them: an instance named like one of ours but without the cluster tag, and a key
 * pair under a name like ours. EC2 is done with curl --aws-sigv4 in lib.sh; this covers
 * the two clouds curl cannot sign for.
 *
 *   node foreign.js CLOUD HOST:PORT REGION instance NAME TYPE ZONE IMAGE  -> prints the id
 *   node foreign.js CLOUD HOST:PORT REGION keypair NAME
 *   node foreign.js CLOUD HOST:PORT REGION rule GROUP_ID CIDR PORT  (TCP, by hand)
 *   node foreign.js CLOUD HOST:PORT REGION terminate ID  (a node lost from outside: tokens.sh)
 */
const path = require('node:path');
const { CREDS, requireSdk, sshRsaPublicKey } =
	require(path.join(__dirname, '..', 'sdk', 'lib', 'sim.js'));

const [cloud, hostPort, region, what, name, type, zone, image] = process.argv.slice(2);
/* RSA: neither ECS nor CVM imports an Ed25519 key */
const PUB = sshRsaPublicKey('foreign');

async function alibaba() {
	const RPCClient = requireSdk('@alicloud/pop-core').RPCClient;
	const client = (version) => new RPCClient({
		accessKeyId: CREDS.alibaba.id, accessKeySecret: CREDS.alibaba.secret,
		endpoint: `http://${hostPort}`, apiVersion: version,
	});
	const ecs = client('2014-05-26');
	const opts = { method: 'POST' };

	if (what === 'rule') {
		await ecs.request('AuthorizeSecurityGroup', {
			RegionId: region, SecurityGroupId: name, IpProtocol: 'tcp',
			PortRange: `${zone}/${zone}`, SourceCidrIp: type, Policy: 'accept',
			Description: 'added by hand',
		}, opts);
		return '';
	}

	if (what === 'terminate') {
		await ecs.request('DeleteInstances', { RegionId: region, 'InstanceId.1': name,
						       Force: true }, opts);
		return '';
	}
	if (what === 'keypair') {
		await ecs.request('ImportKeyPair',
				  { RegionId: region, KeyPairName: name, PublicKeyBody: PUB }, opts);
		return '';
	}
	/* an instance in the region's default VPC, as the console would make it */
	const vpc = client('2016-04-28');
	const vpcs = await vpc.request('DescribeVpcs', { RegionId: region, IsDefault: true }, opts);
	const vpcId = vpcs.Vpcs.Vpc[0].VpcId;
	const vsw = await vpc.request('DescribeVSwitches',
				      { RegionId: region, VpcId: vpcId, ZoneId: zone }, opts);
	const sg = await ecs.request('CreateSecurityGroup', {
		RegionId: region, VpcId: vpcId, SecurityGroupName: `${name}-sg`,
	}, opts);
	const r = await ecs.request('RunInstances', {
		RegionId: region, ZoneId: zone, ImageId: image, InstanceType: type,
		VSwitchId: vsw.VSwitches.VSwitch[0].VSwitchId, SecurityGroupId: sg.SecurityGroupId,
		Amount: 1, InstanceName: name,
		'Tag.1.Key': 'Name', 'Tag.1.Value': name,
		'Tag.2.Key': 'gpucluster:group', 'Tag.2.Value': 'workers',
	}, opts);
	return r.InstanceIdSets.InstanceIdSet[0];
}

async function tencent() {
	const { CommonClient } = requireSdk('tencentcloud-sdk-nodejs-common');
	const cfg = {
		credential: { secretId: CREDS.tencent.id, secretKey: CREDS.tencent.secret },
		region,
		profile: { httpProfile: { endpoint: hostPort, protocol: 'http://', reqTimeout: 30 } },
	};
	const cvm = new CommonClient('cvm.tencentcloudapi.com', '2017-03-12', cfg);

	if (what === 'rule') {
		const vpc = new CommonClient('vpc.tencentcloudapi.com', '2017-03-12', cfg);
		await vpc.request('CreateSecurityGroupPolicies', {
			SecurityGroupId: name,
			SecurityGroupPolicySet: { Ingress: [{ Protocol: 'TCP', Port: zone,
				CidrBlock: type, Action: 'ACCEPT', PolicyDescription: 'added by hand' }] },
		});
		return '';
	}

	if (what === 'terminate') {
		await cvm.request('TerminateInstances', { InstanceIds: [name] });
		return '';
	}
	if (what === 'keypair') {
		await cvm.request('ImportKeyPair', { KeyName: name, ProjectId: 0, PublicKey: PUB });
		return '';
	}
	/* in the default VPC and its subnet in the zone, as the console would launch it */
	const vpc = new CommonClient('vpc.tencentcloudapi.com', '2017-03-12', cfg);
	const vpcs = await vpc.request('DescribeVpcs',
				       { Filters: [{ Name: 'is-default', Values: ['true'] }] });
	const vpcId = vpcs.VpcSet[0].VpcId;
	const subnets = await vpc.request('DescribeSubnets', { Filters: [
		{ Name: 'vpc-id', Values: [vpcId] }, { Name: 'zone', Values: [zone] }] });
	const r = await cvm.request('RunInstances', {
		Placement: { Zone: zone }, ImageId: image, InstanceType: type, InstanceCount: 1,
		InstanceName: name,
		VirtualPrivateCloud: { VpcId: vpcId, SubnetId: subnets.SubnetSet[0].SubnetId },
		TagSpecification: [{ ResourceType: 'instance', Tags: [
			{ Key: 'Name', Value: name }, { Key: 'gpucluster:group', Value: 'workers' }] }],
	});
	return r.InstanceIdSet[0];
}

const run = { alibaba, tencent }[cloud];
if (!run) {
	console.error(`foreign.js: unknown cloud '${cloud}'`);
	process.exit(2);
}
run().then((id) => {
	if (id)
		console.log(id);
}, (e) => {
	console.error(`foreign.js: ${cloud} ${what} '${name}': ${e.code || ''} ${e.message}`);
	process.exit(1);
});
