#!/usr/bin/env node
// Checks docs/cluster.schema.json, the JSON Schema editors use for cluster specs, against
// the same corpus that `gpucluster validate` is tested with:
//
// - the schema compiles under ajv's strict mode (draft 2020-12), and every property in it
//   has a description, so editors always have help to show;
// - every example spec (templates/specs/*.yaml) and extra valid case (tests/specs/good)
//   loads and is accepted;
// - every bad spec (tests/specs/bad/*.yaml) is rejected, either while loading (invalid
//   UTF-8, a YAML error, a duplicate key, more than one document, an unset variable) or by
//   the schema, and the schema complains somewhere on the path of a problem the spec's
//   "# expect:" lines name, not about something unrelated;
// - a bad spec marked "# schema: skip REASON" holds a problem beyond JSON Schema (unique
//   names, host bits, file limits, ...): it must be *accepted*, which proves both that the
//   rest of it is sound and that the skip is still needed.
//
// Specs are loaded the way gpucluster reads them, as far as that matters here: strict
// UTF-8, one document, YAML 1.2 core types (no merge keys, no timestamps), duplicate keys
// rejected, and ${NAME}, ${NAME:-default} and $$ expanded once from the process
// environment plus the spec's "# env: NAME=value" lines before validation. The expansion
// is textual (line by line, leaving whole-line comments alone), which is what gpucluster's
// per-value expansion amounts to for these files. The schema itself accepts any value
// holding a well-formed ${...} reference, since an editor cannot know the environment.
//
// Usage: node check-schema.js [--root REPO] [--deps-dir DIR]
// ajv and js-yaml come from tests/schema/node_modules when that holds the locked versions,
// otherwise from DIR/node_modules, installed there with `npm ci` when missing or stale.
// Prints one line per file and ends with "N passed, M failed"; exits 1 if any failed.
"use strict";

const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const { createRequire } = require("module");

const here = __dirname;
let root = path.resolve(here, "..", "..");
let depsDir = null;
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i];
	const more = i + 1 < process.argv.length;
	if (a === "--root" && more) root = path.resolve(process.argv[++i]);
	else if (a === "--deps-dir" && more) depsDir = path.resolve(process.argv[++i]);
	else {
		console.error("usage: check-schema.js [--root REPO] [--deps-dir DIR]");
		process.exit(2);
	}
}

// Whether DIR/node_modules holds exactly the versions package-lock.json pins.
function depsMatchLock(dir) {
	const lock = JSON.parse(fs.readFileSync(path.join(here, "package-lock.json"), "utf8"));
	for (const [key, entry] of Object.entries(lock.packages)) {
		if (!key.startsWith("node_modules/")) continue;
		try {
			const file = path.join(dir, key, "package.json");
			const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
			if (pkg.version !== entry.version) return false;
		} catch (e) {
			return false;
		}
	}
	return true;
}

function loadDeps() {
	let dir = here;
	if (!depsMatchLock(dir)) {
		if (!depsDir) {
			console.log("tests/schema/node_modules is missing or stale: " +
				"run npm ci there, or pass --deps-dir");
			process.exit(1);
		}
		dir = depsDir;
		if (!depsMatchLock(dir)) {
			fs.mkdirSync(dir, { recursive: true });
			for (const f of ["package.json", "package-lock.json"])
				fs.copyFileSync(path.join(here, f), path.join(dir, f));
			console.log(`installing ajv and js-yaml into ${dir} (npm ci)`);
			const args = ["ci", "--no-audit", "--no-fund", "--prefer-offline"];
			const r = spawnSync("npm", args,
				{ cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
			if (r.status !== 0 || !depsMatchLock(dir)) {
				console.log("npm ci failed: no ajv and js-yaml to check with");
				process.exit(1);
			}
		}
	}
	const req = createRequire(path.join(dir, "package.json"));
	return { Ajv2020: req("ajv/dist/2020"), yaml: req("js-yaml") };
}

const { Ajv2020, yaml } = loadDeps();

let passed = 0;
let failed = 0;
function ok(name, note) {
	console.log(`ok   ${name}${note ? "  (" + note + ")" : ""}`);
	passed++;
}
function bad(name, ...lines) {
	console.log(`FAIL ${name}`);
	for (const l of lines) console.log(`       ${l}`);
	failed++;
}

// ---- the schema itself ------------------------------------------------------------------

const schemaFile = path.join(root, "docs", "cluster.schema.json");
const schema = JSON.parse(fs.readFileSync(schemaFile, "utf8"));
let validate = null;
try {
	const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
	validate = ajv.compile(schema);
	ok("docs/cluster.schema.json compiles (ajv strict, draft 2020-12)");
} catch (e) {
	bad("docs/cluster.schema.json compiles (ajv strict, draft 2020-12)", e.message);
}

// Every entry of every "properties" needs a description: it is what editors show.
const undocumented = [];
(function walk(node, where) {
	if (Array.isArray(node)) {
		node.forEach((n, i) => walk(n, `${where}/${i}`));
		return;
	}
	if (!node || typeof node !== "object") return;
	for (const [k, v] of Object.entries(node)) {
		if (k === "properties" && v && typeof v === "object" && !Array.isArray(v)) {
			// Properties inside if/then only narrow a documented property.
			const narrowing = /\/(if|then|not)(\/|$)/.test(where);
			for (const [name, sub] of Object.entries(v)) {
				if (!narrowing && !(sub && sub.description))
					undocumented.push(`${where}/properties/${name}`);
			}
		}
		walk(v, `${where}/${k}`);
	}
})(schema, "#");
if (undocumented.length === 0) ok("every property of the schema has a description");
else bad("every property of the schema has a description", ...undocumented);

if (!validate) {
	console.log(`${passed} passed, ${failed} failed`);
	process.exit(1);
}

// ---- loading a spec ---------------------------------------------------------------------

function header(text) {
	const h = { env: {}, skip: null, expects: [] };
	for (const line of text.split("\n")) {
		if (!line.startsWith("#")) break;
		let m;
		if ((m = /^# env: ([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)))
			h.env[m[1]] = m[2];
		else if ((m = /^# schema: skip (.+)$/.exec(line)))
			h.skip = m[1];
		else if ((m = /^# expect(?:-exact)?: \d+:\d+: (.*)$/.exec(line)))
			h.expects.push(m[1]);
	}
	return h;
}

const REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;

// ${NAME}, ${NAME:-default} and $$, once, as gpucluster expands them; a lone $ stays.
function expand(text, env) {
	return text.split("\n").map((line, i) => {
		if (/^\s*#/.test(line)) return line;
		let out = "";
		for (let k = 0; k < line.length;) {
			if (line.startsWith("$$", k)) {
				out += "$";
				k += 2;
			} else if (line.startsWith("${", k)) {
				const end = line.indexOf("}", k);
				const ref = end < 0 ? line.slice(k) : line.slice(k, end + 1);
				const m = REF.exec(ref);
				const at = `line ${i + 1}`;
				if (!m) throw new Error(`${at}: bad variable reference '${ref}'`);
				const val = env[m[1]];
				if (m[2] !== undefined) out += val ? val : m[2];
				else if (val !== undefined) out += val;
				else throw new Error(`${at}: variable '${m[1]}' is not set`);
				k = end + 1;
			} else {
				out += line[k++];
			}
		}
		return out;
	}).join("\n");
}

// Returns { data, h } or throws with the reason the spec cannot be loaded.
function load(file) {
	const bytes = fs.readFileSync(file);
	let text;
	try {
		text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
	} catch (e) {
		throw new Error("invalid UTF-8");
	}
	const h = header(text);
	const env = { ...process.env, ...h.env };
	const data = yaml.load(expand(text, env), { schema: yaml.CORE_SCHEMA, filename: file });
	return { data, h };
}

// ---- what the schema says about a spec ----------------------------------------------------

function describe(errors) {
	// The deepest error is usually the telling one; anyOf branches add noise above it.
	const e = [...errors].sort((a, b) => b.instancePath.length - a.instancePath.length)[0];
	const extra = e.params && (e.params.additionalProperty || e.params.missingProperty ||
		e.params.propertyName);
	// A pattern is long and says little here: the path and the keyword are enough.
	const msg = e.keyword === "pattern" ? "must match its pattern" : e.message;
	return `${e.instancePath || "/"} ${msg}${extra ? ` '${extra}'` : ""}`;
}

// Where an expected diagnostic points, as JSON pointer segments, or null if its message
// does not say ("node_groups[0].count: ..." -> ["node_groups", "0", "count"]).
function expectedPath(msg) {
	const seg = (p) => p === "" ? [] : p.replace(/\[(\d+)\]/g, ".$1").split(".");
	let m;
	if ((m = /^unknown key '([^']*)'(?: in ([^;]+))?/.exec(msg))) return seg(m[2] || "");
	if ((m = /^missing required key '([^']*)'(?: in (.+))?$/.exec(msg))) return seg(m[2] || "");
	if ((m = /^([a-z_]+(?:\[\d+\]|\.[a-z_]+)*): /.exec(msg))) return seg(m[1]);
	return null;
}

function related(a, b) {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
	return true;
}

function onPath(errors, expects) {
	const wanted = expects.map(expectedPath).filter((p) => p !== null);
	if (wanted.length === 0) return true;
	return errors.some((e) => {
		const at = e.instancePath.split("/").slice(1)
			.map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
		return wanted.some((w) => related(at, w));
	});
}

function rel(file) {
	return path.relative(root, file);
}

function list(dir) {
	const d = path.join(root, dir);
	if (!fs.existsSync(d)) return [];
	return fs.readdirSync(d).filter((f) => f.endsWith(".yaml")).sort()
		.map((f) => path.join(d, f));
}

// ---- the corpus -----------------------------------------------------------------------------

const good = [...list("templates/specs"), ...list("tests/specs/good")];
if (good.length === 0) bad("templates/specs", "no example specs found");
for (const file of good) {
	let spec;
	try {
		spec = load(file);
	} catch (e) {
		bad(rel(file), `does not load: ${e.message.split("\n")[0]}`);
		continue;
	}
	if (validate(spec.data)) ok(rel(file));
	else bad(rel(file), "rejected by the schema:", ...validate.errors.map((e) =>
		`${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`));
}

const badSpecs = list("tests/specs/bad");
if (badSpecs.length === 0) bad("tests/specs/bad", "no bad specs found");
for (const file of badSpecs) {
	const h = header(new TextDecoder("utf-8").decode(fs.readFileSync(file)));
	let spec;
	try {
		spec = load(file);
	} catch (e) {
		const why = e.message.split("\n")[0];
		if (h.skip) bad(rel(file), `says "schema: skip" but does not even load: ${why}`);
		else ok(rel(file), `does not load: ${why}`);
		continue;
	}
	const accepted = validate(spec.data);
	if (h.skip) {
		if (accepted) ok(rel(file), `accepted: beyond a schema: ${h.skip}`);
		else bad(rel(file), "says \"schema: skip\" but the schema rejects it: " +
			describe(validate.errors), "drop that line, or fix the rest of the spec");
	} else if (accepted) {
		bad(rel(file), "the schema accepts it");
	} else if (!onPath(validate.errors, h.expects)) {
		bad(rel(file), "rejected, but not where its expect lines point:",
			...validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`));
	} else {
		ok(rel(file), `rejected: ${describe(validate.errors)}`);
	}
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
