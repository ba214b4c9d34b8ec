// The generated CloudFront Function file itself: within its byte budget, in the
// cloudfront-js-2.0 language subset, importing only what CloudFront provides,
// with the KeyValueStore id (a CDK token at synth time) intact.

import { App, Stack } from 'aws-cdk-lib';
import { KeyValueStore } from 'aws-cdk-lib/aws-cloudfront';
import { describe, expect, it } from 'vitest';
import {
  checkFunctionSize,
  EDGE_BUDGET_BYTES,
  FUNCTION_BUDGETS,
  MAX_FUNCTION_BYTES,
  SIGNING_SECRETS_KEY,
  viewerRequestFunctionCode,
  type EdgeFunctionSettings,
} from '../../lib/edge-function';
import { deploymentEntries, PRESET_NAMES_KEY, storedData } from '../../lambda/edge/store';
import { ANY_SIZE, KVS_ID, loadEdge, NO_AVIF, OPEN, PRESETS_ONLY, REALISTIC, SIZES } from './fixtures';
import { loadFunction, viewerEvent } from '../../local/emulator/cloudfront-function';
import { unsupportedSyntax } from './runtime-syntax';
import { docTables, EVERY_FEATURE, functionSizes } from '../../scripts/edge-size';

const CONFIGS = { REALISTIC, OPEN, ANY_SIZE, NO_AVIF, PRESETS_ONLY };

/** 100 presets and 30 sizes: more than any deployment we know of. */
function manyPresetsAndSizes(): EdgeFunctionSettings {
  const presets: Record<string, Record<string, string>> = {};
  for (let i = 0; i < 100; i++)
    presets[`preset-number-${i}`] = { width: String(32 * ((i % 30) + 1)), height: '480', fit: 'inside', quality: '70' };
  const sizes = Array.from({ length: 30 }, (_, i) => 32 * (i + 1));
  return { grammar: { maxDimension: 4096, sizes, presets }, avif: true, signing: true, keyValueStoreId: KVS_ID };
}

describe('size', () => {
  const bytes = (settings: EdgeFunctionSettings) => Buffer.byteLength(viewerRequestFunctionCode(settings), 'utf8');

  it(`stays within its budget of ${EDGE_BUDGET_BYTES} bytes in every deployment, and has the same size whatever the presets and sizes`, () => {
    const table = {
      'no signing, sizes or presets': bytes(ANY_SIZE),
      'sizes and 6 presets': bytes(OPEN),
      'signing, sizes and 6 presets': bytes(REALISTIC),
      'signing, 30 sizes and 100 presets': bytes(manyPresetsAndSizes()),
      'every feature (signing, sizes, presets, watermarks)': bytes(EVERY_FEATURE),
    };
    console.info(
      `viewer-request function, bytes of CloudFront's ${MAX_FUNCTION_BYTES} (budget ${EDGE_BUDGET_BYTES}):\n` +
        Object.entries(table)
          .map(([name, size]) => `  ${name}: ${size}`)
          .join('\n'),
    );
    for (const size of Object.values(table)) expect(size).toBeLessThanOrEqual(EDGE_BUDGET_BYTES);
    expect(table['signing, 30 sizes and 100 presets']).toBe(table['signing, sizes and 6 presets']);
    // What a deployment does not use is left out.
    expect(table['sizes and 6 presets']).toBeLessThan(table['signing, sizes and 6 presets']);
    // The grammar's data is in the store whatever the deployment, never in the code.
    expect(table['no signing, sizes or presets']).toBeLessThanOrEqual(table['sizes and 6 presets']);
  });

  it(`prints every generated function, native and dialect, each within its budget of ${EDGE_BUDGET_BYTES}`, () => {
    const sizes = functionSizes();
    console.info(
      `viewer-request functions with every feature on, bytes (budget) of CloudFront's ${MAX_FUNCTION_BYTES}:\n` +
        Object.entries(sizes)
          .map(([name, size]) => `  ${name}: ${size.bytes} (${FUNCTION_BUDGETS[size.grammar]})`)
          .join('\n'),
    );
    for (const [name, size] of Object.entries(sizes)) expect(size.bytes, name).toBeLessThanOrEqual(FUNCTION_BUDGETS[size.grammar]);
    // Every edge grammar has its function printed and held.
    expect(
      Object.values(sizes)
        .map((size) => size.grammar)
        .sort(),
    ).toEqual(Object.keys(FUNCTION_BUDGETS).sort());
  });

  it('has the per-feature table in docs/development.md that npm run edge-size writes', () => {
    const { current, generated } = docTables();
    expect(current, 'run npm run edge-size').toBe(generated);
  });

  it('refuses a function over 10 KB, and says why', () => {
    expect(() => checkFunctionSize('x'.repeat(MAX_FUNCTION_BYTES))).not.toThrow();
    expect(() => checkFunctionSize('x'.repeat(MAX_FUNCTION_BYTES + 1))).toThrow(
      /viewer-request function is 10241 bytes, over CloudFront's limit of 10240/,
    );
    // A store id is a token at synth time, shorter than the 36-character id it becomes.
    const token = '${Token[TOKEN.1]}';
    const code = `${'x'.repeat(MAX_FUNCTION_BYTES - 40)}cf.kvs("${token}")`;
    expect(() => checkFunctionSize(code)).not.toThrow();
    expect(() => checkFunctionSize(code, token)).toThrow(/is 10246 bytes, over/);
  });

  it('is plain ASCII, so bytes and characters agree', () => {
    expect(viewerRequestFunctionCode(REALISTIC)).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
  });
});

describe('language', () => {
  for (const [name, settings] of Object.entries(CONFIGS)) {
    it(`uses only cloudfront-js-2.0 syntax (${name})`, () => {
      expect(unsupportedSyntax(viewerRequestFunctionCode(settings))).toEqual([]);
    });
  }

  it('defines the top-level handler CloudFront calls, async since it reads the KeyValueStore', () => {
    for (const settings of Object.values(CONFIGS)) expect(viewerRequestFunctionCode(settings)).toMatch(/\nasync function handler\(e\)\{/);
  });

  it("imports only the runtime's own modules, at the top, and nothing else", () => {
    const lines = viewerRequestFunctionCode(REALISTIC).split('\n');
    expect(lines.slice(0, 2)).toEqual(["import crypto from 'crypto';", "import cf from 'cloudfront';"]);
    expect(lines.slice(2).join('\n')).not.toMatch(/\bimport\b|\brequire\(|\bexport\b/);
  });

  it('bakes in only the fixed settings: sizes and presets are read from the store', () => {
    const code = viewerRequestFunctionCode(REALISTIC);
    // maxDimension, as a constant of the code.
    expect(code).toMatch(/\w:4096\b/);
    // The sizes as any list would spell them (width=auto's own ladder shares some numbers).
    expect(code).not.toContain(SIZES.join(','));
    expect(code).not.toMatch(/thumb|"256"/);
    expect(code).not.toMatch(/process\.env|__EDGE_SETTINGS__/);
  });
});

describe('settings', () => {
  it('refuses a preset the grammar would refuse on every request', () => {
    const grammar = { maxDimension: 4096, sizes: [100, 200], presets: { big: { width: '300' } } };
    expect(() => viewerRequestFunctionCode({ grammar, avif: true, signing: false, keyValueStoreId: KVS_ID })).toThrow(
      /preset "big" is not valid: Invalid width "300"/,
    );
  });
});

// The checker must catch what it is there to catch, or the tests above prove nothing.
describe('the syntax checker', () => {
  const refused: Record<string, string> = {
    class: 'class A {}',
    'class expression': 'var A = class {};',
    spread: 'f(...a);',
    'array spread': 'var a = [...b];',
    'object spread': 'var a = {...b};',
    'object destructuring': 'var {a} = b;',
    'array destructuring': 'var [a] = b;',
    'destructuring parameter': 'function f({a}) {}',
    'default parameter': 'function f(a = 1) {}',
    'for-of': 'for (var a of b) {}',
    'optional chaining': 'a?.b;',
    'optional call': 'a?.();',
    'nullish coalescing': 'a ?? b;',
    'logical assignment': 'a ||= b;',
    'optional catch binding': 'try {} catch {}',
    generator: 'function* g() {}',
    'async arrow': 'var f = async () => 1;',
    'async closure': 'var f = async function () {};',
    'nested async declaration': 'function f() { async function g() {} }',
    'top-level await': 'await a;',
    'shorthand property': 'var o = {a};',
    method: 'var o = {f() {}};',
    'computed property': 'var o = {[a]: 1};',
    'tagged template': 'tag`x`;',
    'sticky regexp': 'var r = /a/y;',
    bigint: 'var n = 1n;',
    'other module': "import fs from 'fs';",
  };
  for (const [name, source] of Object.entries(refused)) {
    it(`refuses ${name}`, () => {
      expect(unsupportedSyntax(source)).not.toEqual([]);
    });
  }

  it('accepts what the runtime documents', () => {
    const source = [
      "import crypto from 'crypto';",
      "import cf from 'cloudfront';",
      'const a = 1; let b = `x${a}`;',
      'var f = (x, ...rest) => x ** 2;',
      'var o = { a: 1, get b() { return 2; } };',
      'for (var k in o) {}',
      'try { f(); } catch (e) {}',
      'async function handler(event) { return await f(event); }',
    ].join('\n');
    expect(unsupportedSyntax(source)).toEqual([]);
  });
});

describe('KeyValueStore', () => {
  it('keeps a CDK token for the store id as a plain substring that CloudFormation resolves', () => {
    const stack = new Stack(new App(), 'EdgeTest');
    const store = new KeyValueStore(stack, 'Secrets');
    const code = viewerRequestFunctionCode({ ...REALISTIC, keyValueStoreId: store.keyValueStoreId });
    expect(code).toContain(`cf.kvs("${store.keyValueStoreId}")`);
    const resolved = JSON.stringify(stack.resolve(code));
    expect(resolved).toContain('Fn::GetAtt');
    expect(resolved).toMatch(/SecretsA[0-9A-F]+/);
  });

  it(`asks the store it was given for its own data's parts and "${SIGNING_SECRETS_KEY}", and for a preset only when one is named`, async () => {
    const fn = loadEdge(REALISTIC, 's3cret');
    const data = storedData(REALISTIC.grammar);
    const parts = data.parts.map((_part, index) => data.keyPrefix + index);
    expect(parts.length).toBeGreaterThan(1);
    await fn.handler(viewerEvent('/a.jpg', 'sig=x'));
    expect(fn.kvs.idsAsked).toEqual([KVS_ID]);
    expect(fn.kvs.keysRead).toEqual([...parts, SIGNING_SECRETS_KEY]);
    await fn.handler(viewerEvent('/a.jpg', 'p=thumb&sig=x'));
    expect(fn.kvs.keysRead.slice(parts.length + 1)).toEqual([...parts, SIGNING_SECRETS_KEY, 'preset:thumb', PRESET_NAMES_KEY]);
  });

  it('reads only the data of its own deploy, under keys that change with it', async () => {
    const before = storedData(OPEN.grammar).keyPrefix;
    const changed = { ...OPEN.grammar, sizes: [100, 2000] };
    const after = storedData(changed).keyPrefix;
    expect(after).not.toBe(before);
    // The store during a deploy: the previous deploy's data beside the new one's.
    const store = { ...deploymentEntries(OPEN.grammar), ...deploymentEntries(changed) };
    const previous = loadFunction(viewerRequestFunctionCode(OPEN), store);
    const next = loadFunction(viewerRequestFunctionCode({ ...OPEN, grammar: changed }), store);
    expect(((await previous.handler(viewerEvent('/a.jpg', 'w=500'))) as { uri: string }).uri).toBe('/a.jpg/width=640');
    expect(((await next.handler(viewerEvent('/a.jpg', 'w=500'))) as { uri: string }).uri).toBe('/a.jpg/width=2000');
    expect(previous.kvs.keysRead.every((key) => key.startsWith(before))).toBe(true);
    expect(next.kvs.keysRead.every((key) => key.startsWith(after))).toBe(true);
  });

  it('refuses an unknown preset with the list of names in the store', async () => {
    const fn = loadEdge(OPEN);
    const result = await fn.handler(viewerEvent('/a.jpg', 'p=nope'));
    expect(fn.kvs.keysRead.slice(-2)).toEqual(['preset:nope', PRESET_NAMES_KEY]);
    expect(JSON.parse((result as { body: { data: string } }).body.data).message).toBe(
      'Invalid preset "nope": expected one of thumb, avatar, hero, gallery, og, mono.',
    );
  });

  it('answers nothing (CloudFront then answers 503) when a part of its data cannot be read, rather than allow any size', async () => {
    const store = deploymentEntries(OPEN.grammar);
    const data = storedData(OPEN.grammar);
    delete store[data.keyPrefix + (data.parts.length - 1)];
    const fn = loadFunction(viewerRequestFunctionCode(OPEN), store);
    await expect(fn.handler(viewerEvent('/a.jpg', 'w=100'))).rejects.toThrow(/not found/);
  });

  it('reads its data from the store without signing, sizes or presets too, and nothing else', async () => {
    const fn = loadEdge(ANY_SIZE);
    const data = storedData(ANY_SIZE.grammar);
    await fn.handler(viewerEvent('/a.jpg', 'w=100'));
    expect(fn.kvs.idsAsked).toEqual([KVS_ID]);
    expect(fn.kvs.keysRead).toEqual(data.parts.map((_part, index) => data.keyPrefix + index));
  });
});
