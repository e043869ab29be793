'use strict';
/*
 * quotas.test.js: @aws-sdk/client-service-quotas against gpucluster-sim's Service Quotas
 * (GetServiceQuota, JSON 1.1, SigV4 service "servicequotas"), the call plan's quota
 * preflight makes on AWS (docs/internals/quota.md): the EC2 vCPU quota codes answer the
 * limits POST /quotas set, an unknown code is NoSuchResourceException, `aws:denied` is
 * AccessDeniedException, a wrong key is refused.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { requireSdk, startSim, checkRequestLog, rejects } = require('./lib/sim.js');

const { ServiceQuotasClient, GetServiceQuotaCommand } =
	requireSdk('@aws-sdk/client-service-quotas');

const REGION = 'us-east-1';
let sim;
let sq;

function client(opts = {}) {
	return new ServiceQuotasClient({
		endpoint: sim.ready.aws,
		region: REGION,
		credentials: {
			accessKeyId: sim.creds.aws.id,
			secretAccessKey: opts.secret || sim.creds.aws.secret,
		},
		maxAttempts: 1,
	});
}

const get = (code) => sq.send(new GetServiceQuotaCommand({ ServiceCode: 'ec2', QuotaCode: code }));

before(async () => {
	sim = await startSim();
	sq = client();
});

after(async () => {
	if (sim)
		await sim.stop();
});

test('GetServiceQuota answers the vCPU quotas per family and market', async () => {
	await sim.setQuotas('aws:on-demand=64', 'aws:spot=16');
	const g = await get('L-DB2E81BA');
	assert.equal(g.Quota.QuotaCode, 'L-DB2E81BA');
	assert.equal(g.Quota.ServiceCode, 'ec2');
	assert.equal(g.Quota.QuotaName, 'Running On-Demand G and VT instances');
	assert.equal(g.Quota.Value, 64);
	assert.equal(g.Quota.UsageMetric.MetricDimensions.Resource, 'vCPU');
	assert.match(g.Quota.QuotaArn, /^arn:aws:servicequotas:us-east-1::ec2\/L-DB2E81BA$/);
	for (const code of ['L-417A185B', 'L-1216C47A'])
		assert.equal((await get(code)).Quota.Value, 64, code);
	for (const code of ['L-7212CCBC', 'L-3819A6DF', 'L-34B43A08'])
		assert.equal((await get(code)).Quota.Value, 16, code);
	await sim.clearQuotas();
	assert.equal((await get('L-DB2E81BA')).Quota.Value, 100000, 'the default limit');
});

test('an unknown code, a denied caller and a wrong key are the service errors', async () => {
	let err = await rejects('unknown code', () => get('L-00000000'));
	assert.equal(err.name, 'NoSuchResourceException');
	assert.equal(err.$metadata.httpStatusCode, 400);
	err = await rejects('unknown service', () =>
		sq.send(new GetServiceQuotaCommand({ ServiceCode: 'nope', QuotaCode: 'L-DB2E81BA' })));
	assert.equal(err.name, 'NoSuchResourceException');
	await sim.setQuotas('aws:denied');
	err = await rejects('denied', () => get('L-DB2E81BA'));
	assert.equal(err.name, 'AccessDeniedException');
	await sim.clearQuotas();
	err = await rejects('wrong secret', () =>
		client({ secret: 'wrong' }).send(
			new GetServiceQuotaCommand({ ServiceCode: 'ec2', QuotaCode: 'L-DB2E81BA' })));
	assert.equal(err.name, 'InvalidSignatureException');
	checkRequestLog(sim, 'aws', ['GetServiceQuota'],
			['NoSuchResourceException', 'AccessDeniedException', 'InvalidSignatureException']);
});
