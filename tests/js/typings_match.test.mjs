// The typings say what the code does: every error code the package can throw is in index.d.ts's ErrorCode, and
// every public member of a runtime (what init() returns) and of the model faces is declared. tsc (typings.test)
// checks the declarations are well formed; this checks they are complete, read from the code itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { NATIVE_CODES } from '../../bindings/native_constants.js';
import { ROWS } from '../../bindings/families.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dts = readFileSync(join(root, 'bindings/index.d.ts'), 'utf8');

function jsFiles(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? jsFiles(p) : n.endsWith('.js') ? [p] : [];
  });
}

/** The members declared in `export interface|class NAME { … }` of index.d.ts (two-space-indented names). */
function declared(name) {
  const m = new RegExp(`^export (?:interface|class|declare class) ${name}\\b[^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(dts);
  assert.ok(m, `index.d.ts declares ${name}`);
  return new Set([...m[1].matchAll(/^  (?:readonly |static |get )?(\w+)[?]?[(:<]/gm)].map((x) => x[1]));
}

/** Public members of an object: own properties and its prototype chain's methods and getters, not _private. */
function members(obj) {
  const out = new Set(Object.keys(obj));
  for (let p = Object.getPrototypeOf(obj); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) out.add(k);
  }
  return [...out].filter((k) => !k.startsWith('_') && k !== 'constructor');
}

test('every error code the package throws is in ErrorCode', () => {
  const union = /export type ErrorCode =([\s\S]*?';)\n/.exec(dts)[1];
  const typed = new Set([...union.matchAll(/'(ERR_\w+)'/g)].map((m) => m[1]));
  const thrown = new Set(NATIVE_CODES.filter((c) => c !== 'OK'));
  for (const f of jsFiles(join(root, 'bindings'))) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/AttnWasmError\(\s*'(ERR_\w+)'|code: '(ERR_\w+)'/g)) thrown.add(m[1] ?? m[2]);
  }
  assert.ok(thrown.size > 15, `found ${thrown.size} codes`);
  const missing = [...thrown].filter((c) => !typed.has(c));
  assert.deepEqual(missing, [], `codes thrown but not in index.d.ts ErrorCode: ${missing.join(', ')}`);
});

test('every public member of a runtime is declared in the AttnWasm interface', async () => {
  const aw = await init();
  try {
    const decl = declared('AttnWasm');
    const missing = members(aw).filter((k) => !decl.has(k));
    assert.deepEqual(missing, [], `aw.${missing.join(', aw.')} not in index.d.ts`);
  } finally {
    await aw.close();
  }
});

test('every public method of a model face is declared in its class', () => {
  const faces = Object.values(ROWS).flatMap((row) => [row.face, ...(row.faces ?? [])]);
  assert.ok(faces.some((f) => f.name === 'CrossEncoder'), 'a row\'s other faces are checked too');
  for (const face of faces) {
    // An interface that extends another (CrossEncoder extends TextClassifier extends EncoderHeadModel) declares its
    // ancestors' members too.
    const decl = new Set();
    for (let name = face.name; name; name = new RegExp(`^export interface ${name} extends (\\w+)`, 'm').exec(dts)?.[1]) {
      for (const k of declared(name)) decl.add(k);
    }
    const missing = members(face.prototype).filter((k) => !decl.has(k));
    assert.deepEqual(missing, [], `${face.name}: ${missing.join(', ')} not in index.d.ts`);
  }
});
