// spec-fields.js GPUCLUSTER SCHEMA SPEC: every key that the JSON Schema of the spec names
// (docs/cluster.schema.json, walked through its properties, list items and $refs) must
// appear, with a value, in `gpucluster validate -o json SPEC`, where SPEC sets every key
// (tests/specs/good/every-key.yaml). A key added to the schema without JSON output, or
// left out of SPEC, fails here. Plain node, no packages.
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");

const [bin, schemaFile, specFile] = process.argv.slice(2);
if (!specFile) {
	console.error("usage: spec-fields.js GPUCLUSTER SCHEMA SPEC");
	process.exit(2);
}
const schema = JSON.parse(fs.readFileSync(schemaFile, "utf8"));

function resolve(node) {
	while (node && node.$ref) {
		const m = /^#\/\$defs\/([^/]+)$/.exec(node.$ref);
		if (!m) throw new Error(`unexpected $ref ${node.$ref}`);
		node = schema.$defs[m[1]];
	}
	return node;
}

// Paths such as ["bootstrap", "steps", "[]", "run"]: every property, at any depth. Only
// properties and items are followed: allOf and if/then restate keys already listed.
function walk(node, path, out) {
	node = resolve(node);
	if (!node || typeof node !== "object") return;
	for (const [key, sub] of Object.entries(node.properties || {})) {
		out.push([...path, key]);
		walk(sub, [...path, key], out);
	}
	if (node.items) walk(node.items, [...path, "[]"], out);
	for (const alt of node.anyOf || []) if (!alt.$ref || !/envRef$/.test(alt.$ref)) walk(alt, path, out);
}

const paths = [];
walk(schema, [], paths);
if (paths.length < 30) {
	console.error(`spec-fields: only ${paths.length} keys found in ${schemaFile}; is the walk right?`);
	process.exit(1);
}

const doc = JSON.parse(execFileSync(bin, ["validate", "-o", "json", specFile], { encoding: "utf8" }));
const spec = doc.files[0].spec;
if (!spec) {
	console.error(`spec-fields: ${specFile} is not valid: ${JSON.stringify(doc.files[0].errors)}`);
	process.exit(1);
}

// The values at path: lists are entered (each entry must have the rest of the path).
function values(value, path) {
	if (path.length === 0) return [value];
	if (path[0] === "[]") {
		if (!Array.isArray(value) || value.length === 0) return [undefined];
		return value.flatMap((v) => values(v, path.slice(1)));
	}
	if (value === null || typeof value !== "object" || !(path[0] in value)) return [undefined];
	return values(value[path[0]], path.slice(1));
}

let failures = 0;
for (const path of paths) {
	const name = path.join(".").replace(/\.\[\]/g, "[]");
	const found = values(spec, path);
	if (found.some((v) => v === undefined || v === null)) {
		console.error(`FAIL ${name}: not in validate -o json (or null) for ${specFile}`);
		failures++;
	}
}
if (failures) {
	console.error(`spec-fields: ${failures} of ${paths.length} keys missing`);
	process.exit(1);
}
console.log(`spec-fields: all ${paths.length} keys of the schema are in validate -o json`);
