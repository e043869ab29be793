'use strict';
/*
 * lib/sim.js: the harness shared by the SDK conformance tests. It starts one
 * gpucluster-sim per test file (API only, fast life cycle, request log on) in a
 * mkdtemp directory, hands the endpoints and default credentials to the test, and
 * stops it with SIGTERM at the end.
 *
 * Life cycle: call requireSdk() for each package before use (a missing node_modules
 * fails loudly, never skips), then startSim() in a before() hook and sim.stop() in the
 * last test (so a bad exit status fails the file). One sim per file; node --test runs
 * files in separate processes, so nothing here is shared between files.
 */
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const SDK_DIR = path.resolve(__dirname, '..');

/* The emulator's default credentials (docs/sim.md). */
const CREDS = {
	aws: { id: 'AKIAGPUCLUSTERSIM001', secret: 'gpucluster-sim-aws-secret-key-0000000000' },
	alibaba: { id: 'LTAIgpuclustersim001', secret: 'gpucluster-sim-alibaba-secret-000000' },
	tencent: { id: 'AKIDgpuclustersim001', secret: 'gpucluster-sim-tencent-secret-000000' },
};

/*
 * The host's proxy and AWS settings must not reach the SDKs: node-fetch (Tencent) uses
 * http_proxy even for 127.0.0.1, and the AWS SDK reads ~/.aws for defaults.
 */
function cleanEnv() {
	for (const k of Object.keys(process.env)) {
		if (/_proxy$/i.test(k) || /^AWS_/.test(k) || /^ALIBABA_CLOUD_/.test(k) ||
		    /^TENCENTCLOUD_/.test(k))
			delete process.env[k];
	}
	process.env.AWS_CONFIG_FILE = path.join(os.tmpdir(), 'gc-sdk-no-aws-config');
	process.env.AWS_SHARED_CREDENTIALS_FILE = process.env.AWS_CONFIG_FILE;
	process.env.AWS_EC2_METADATA_DISABLED = 'true';
	/* the SDK warns once that node 20 is nearing its end of support: noise here */
	process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
}
cleanEnv();

/* Loads an SDK package from tests/sdk/node_modules, failing with a message that says
 * how to install it (scripts/install-deps.sh) rather than a bare MODULE_NOT_FOUND. */
function requireSdk(name) {
	const nm = path.join(SDK_DIR, 'node_modules');
	if (!fs.existsSync(nm))
		throw new Error(`tests/sdk/node_modules is missing: run scripts/install-deps.sh ` +
				`(npm ci in tests/sdk) before the sdk tests`);
	try {
		return require(require.resolve(name, { paths: [SDK_DIR] }));
	} catch (e) {
		throw new Error(`SDK package ${name} is not installed in tests/sdk/node_modules ` +
				`(run scripts/install-deps.sh): ${e.message}`);
	}
}

function simBin() {
	const bin = process.env.GC_SIM_BIN;
	if (!bin)
		throw new Error('GC_SIM_BIN is not set: point it at the gpucluster-sim binary');
	if (!fs.existsSync(bin))
		throw new Error(`GC_SIM_BIN=${bin} does not exist: build target gpucluster-sim`);
	return bin;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/*
 * Starts gpucluster-sim and resolves once its ready file is complete. The object has
 * the endpoints from the ready file (aws, alibaba, tencent, control as URLs), hostPort
 * (the same as "127.0.0.1:PORT"), the request-log path, and stop().
 */
async function startSim(extraArgs = []) {
	const bin = simBin();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gc-sdk-'));
	const readyFile = path.join(dir, 'ready.json');
	const requestLog = path.join(dir, 'requests.jsonl');
	const args = ['--no-ssh', '--ready-file', readyFile, '--request-log', requestLog,
		      '--pending-ms', '200', '--terminate-ms', '200', ...extraArgs];
	const child = spawn(bin, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	const keep = (d) => {
		output += d.toString();
		if (output.length > 65536)
			output = output.slice(-65536);
	};
	child.stdout.on('data', keep);
	child.stderr.on('data', keep);
	const exited = new Promise((resolve) => {
		child.on('exit', (code, signal) => resolve({ code, signal }));
	});
	let exitInfo = null;
	exited.then((e) => { exitInfo = e; });

	let ready = null;
	const deadline = Date.now() + 20000;
	while (!ready) {
		if (exitInfo) {
			fs.rmSync(dir, { recursive: true, force: true });
			throw new Error(`gpucluster-sim exited before it was ready (code ${exitInfo.code}, ` +
					`signal ${exitInfo.signal}): ${bin} ${args.join(' ')}\n${output}`);
		}
		if (Date.now() > deadline) {
			child.kill('SIGKILL');
			await exited;
			fs.rmSync(dir, { recursive: true, force: true });
			throw new Error(`gpucluster-sim wrote no ready file in 20 s\n${output}`);
		}
		try {
			ready = JSON.parse(fs.readFileSync(readyFile, 'utf8'));
		} catch {
			/* not there yet, or half written */
			ready = null;
			await sleep(25);
		}
	}
	for (const k of ['pid', 'aws', 'alibaba', 'tencent', 'control'])
		assert.ok(k in ready, `ready file lacks "${k}": ${JSON.stringify(ready)}`);
	assert.equal(ready.pid, child.pid, 'ready file pid is the process we started');
	const hostPort = {};
	for (const k of ['aws', 'alibaba', 'tencent', 'control']) {
		const u = new URL(ready[k]);
		assert.equal(u.protocol, 'http:', `${k} endpoint is plain http`);
		assert.match(u.hostname, /^127\./, `${k} endpoint is on loopback`);
		hostPort[k] = u.host;
	}

	let stopped = null;
	return {
		ready,
		hostPort,
		dir,
		requestLog,
		creds: CREDS,
		output: () => output,
		/* SIGTERM, then waits (SIGKILL after 10 s); resolves {code, signal}. */
		stop() {
			if (stopped)
				return stopped;
			stopped = (async () => {
				if (!exitInfo)
					child.kill('SIGTERM');
				const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
				const res = await exited;
				clearTimeout(timer);
				fs.rmSync(dir, { recursive: true, force: true });
				return res;
			})();
			return stopped;
		},
		/* Adds fault rules through the control API (one per line, see sim/faults.h). */
		async addFaults(...rules) {
			const r = await fetch(`${ready.control}/faults`, {
				method: 'POST', body: rules.join('\n') + '\n',
			});
			assert.equal(r.status, 200, `POST /faults: ${r.status} ${await r.text()}`);
		},
		async clearFaults() {
			const r = await fetch(`${ready.control}/faults`, { method: 'DELETE' });
			assert.equal(r.status, 200, `DELETE /faults: ${r.status}`);
		},
		/* Account quotas and stock through the control API (one per line, sim/quota.h). */
		async setQuotas(...lines) {
			const r = await fetch(`${ready.control}/quotas`, {
				method: 'POST', body: lines.join('\n') + '\n',
			});
			assert.equal(r.status, 200, `POST /quotas: ${r.status} ${await r.text()}`);
		},
		async clearQuotas() {
			const r = await fetch(`${ready.control}/quotas`, { method: 'DELETE' });
			assert.equal(r.status, 200, `DELETE /quotas: ${r.status}`);
		},
		/* The request log as parsed lines (read before stop(), which removes it). */
		readLog() {
			const text = fs.readFileSync(requestLog, 'utf8');
			const lines = text.split('\n');
			assert.equal(lines.pop(), '', 'request log ends with a newline');
			return lines.map((l, i) => {
				try {
					return JSON.parse(l);
				} catch (e) {
					assert.fail(`request log line ${i + 1} is not JSON (${e.message}): ${l}`);
				}
			});
		},
	};
}

/*
 * Checks the request log: every line has provider/action/version/params/status/
 * error_code of the right types, the provider is this cloud, every action in
 * `actions` was logged, and every error code in `codes` appears.
 */
function checkRequestLog(sim, provider, actions, codes = []) {
	const lines = sim.readLog();
	/* GC_SDK_DUMP_LOG=FILE keeps a copy for debugging (the sim's dir goes at stop) */
	if (process.env.GC_SDK_DUMP_LOG)
		fs.copyFileSync(sim.requestLog, process.env.GC_SDK_DUMP_LOG);
	assert.ok(lines.length > 0, 'request log has lines');
	for (const [i, l] of lines.entries()) {
		const where = `request log line ${i + 1}: ${JSON.stringify(l)}`;
		assert.equal(typeof l, 'object', where);
		for (const f of ['provider', 'action', 'version', 'params', 'status', 'error_code'])
			assert.ok(f in l, `${where} lacks "${f}"`);
		assert.equal(l.provider, provider, where);
		assert.equal(typeof l.action, 'string', where);
		assert.equal(typeof l.version, 'string', where);
		assert.ok(l.params === null || (typeof l.params === 'object' && !Array.isArray(l.params)),
			  `${where}: params is an object or null`);
		assert.ok(Number.isInteger(l.status) && l.status >= 100 && l.status < 600,
			  `${where}: status is an HTTP status`);
		assert.ok(l.error_code === null || typeof l.error_code === 'string',
			  `${where}: error_code is a string or null`);
		/*
		 * Every SDK request names its action and version (docs/sim.md: "as the
		 * request named them"), failed ones included: a log that drops them for
		 * auth failures hides which call was refused.
		 */
		assert.match(l.action, /^[A-Z][A-Za-z0-9]+$/, `${where}: the action is logged`);
		assert.match(l.version, /^\d{4}-\d{2}-\d{2}$/, `${where}: the version is logged`);
		if (l.error_code)
			assert.match(l.error_code, /^[A-Za-z][A-Za-z0-9.]*$/, `${where}: error_code shape`);
	}
	const seen = new Set(lines.map((l) => l.action));
	for (const a of actions)
		assert.ok(seen.has(a), `request log has ${a} (seen: ${[...seen].join(', ')})`);
	const errs = new Set(lines.map((l) => l.error_code).filter(Boolean));
	for (const c of codes)
		assert.ok(errs.has(c), `request log has error_code ${c} (seen: ${[...errs].join(', ')})`);
	return lines;
}

/* Polls fn() until it returns a truthy value; fails after timeoutMs. */
async function poll(what, fn, timeoutMs = 15000, intervalMs = 100) {
	const deadline = Date.now() + timeoutMs;
	let last;
	for (;;) {
		last = await fn();
		if (last)
			return last;
		if (Date.now() > deadline)
			assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await sleep(intervalMs);
	}
}

/* A fresh Ed25519 public key as an OpenSSH line: "ssh-ed25519 AAAA... comment". */
function sshPublicKey(comment = 'gc-sdk-test') {
	const { publicKey } = crypto.generateKeyPairSync('ed25519');
	const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
	const str = (b) => {
		const len = Buffer.alloc(4);
		len.writeUInt32BE(b.length);
		return Buffer.concat([len, b]);
	};
	const blob = Buffer.concat([str(Buffer.from('ssh-ed25519')), str(raw)]);
	return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

/*
 * A fresh 2048-bit RSA public key as an OpenSSH line: "ssh-rsa AAAA... comment", the only
 * kind Tencent CVM imports (Alibaba ECS takes RSA, DSA and ECDSA; neither takes Ed25519).
 * The blob is the string "ssh-rsa" and the mpints e and n (RFC 4253 6.6).
 */
function sshRsaPublicKey(comment = 'gc-sdk-test') {
	const { publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
	const jwk = publicKey.export({ format: 'jwk' });
	const str = (b) => {
		const len = Buffer.alloc(4);
		len.writeUInt32BE(b.length);
		return Buffer.concat([len, b]);
	};
	/* An mpint is big-endian and signed: a set top bit needs a leading zero byte. */
	const mpint = (b64url) => {
		const b = Buffer.from(b64url, 'base64url');
		return str(b[0] & 0x80 ? Buffer.concat([Buffer.alloc(1), b]) : b);
	};
	const blob = Buffer.concat([str(Buffer.from('ssh-rsa')), mpint(jwk.e), mpint(jwk.n)]);
	return `ssh-rsa ${blob.toString('base64')} ${comment}`;
}

/* A unique short name/token with a prefix, safe for every cloud's name rules. */
function unique(prefix) {
	return `${prefix}${crypto.randomBytes(5).toString('hex')}`;
}

/*
 * Runs fn, expecting it to reject; returns the error. Fails when it resolves, and
 * shows the value it resolved with.
 */
async function rejects(what, fn) {
	let value;
	try {
		value = await fn();
	} catch (e) {
		return e;
	}
	assert.fail(`${what}: expected an error, got ${JSON.stringify(value)}`);
}

module.exports = { CREDS, requireSdk, startSim, checkRequestLog, poll, sshPublicKey,
		   sshRsaPublicKey, unique, rejects, sleep };
