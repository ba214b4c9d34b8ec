// The generated CloudFront Function file itself: under 10 KB, in the
// cloudfront-js-2.0 language subset, importing only what CloudFront provides,
// with the KeyValueStore id (a CDK token at synth time) intact.

import { App, Stack } from 'aws-cdk-lib';
import { KeyValueStore } from 'aws-cdk-lib/aws-cloudfront';
import { describe, expect, it } from 'vitest';
import { MAX_FUNCTION_BYTES, SIGNING_SECRETS_KEY, viewerRequestFunctionCode } from '../../lib/edge-function';
import { ANY_SIZE, KVS_ID, NO_AVIF, OPEN, PRESETS_ONLY, REALISTIC } from './fixtures';
import { loadFunction, viewerEvent } from '../../local/cloudfront-function';
import { unsupportedSyntax } from './runtime-syntax';

const CONFIGS = { REALISTIC, OPEN, ANY_SIZE, NO_AVIF, PRESETS_ONLY };

describe('size', () => {
  it('stays under 10 KB for a realistic configuration (sizes, six presets, signing)', () => {
    const bytes = Buffer.byteLength(viewerRequestFunctionCode(REALISTIC), 'utf8');
    console.info(`viewer-request function, realistic configuration: ${bytes} bytes of ${MAX_FUNCTION_BYTES}`);
    expect(bytes).toBeLessThan(MAX_FUNCTION_BYTES);
  });

  it('refuses to generate a function over 10 KB, and says why', () => {
    const presets: Record<string, Record<string, string>> = {};
    for (let i = 0; i < 100; i++) presets[`preset-number-${i}`] = { width: '640', height: '480', fit: 'inside' };
    expect(() => viewerRequestFunctionCode({ grammar: { maxDimension: 4096, presets }, avif: true })).toThrow(
      /viewer-request function is \d+ bytes, over CloudFront's limit of 10240/,
    );
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

  it('defines the top-level handler CloudFront calls, async only when it reads the KeyValueStore', () => {
    expect(viewerRequestFunctionCode(REALISTIC)).toMatch(/\nasync function handler\(event\)\{/);
    expect(viewerRequestFunctionCode(OPEN)).toMatch(/\nfunction handler\(event\)\{/);
  });

  it("imports only the runtime's own modules, at the top, and nothing else", () => {
    const lines = viewerRequestFunctionCode(REALISTIC).split('\n');
    expect(lines.slice(0, 2)).toEqual(["import crypto from 'crypto';", "import cf from 'cloudfront';"]);
    expect(lines.slice(2).join('\n')).not.toMatch(/\bimport\b|\brequire\(|\bexport\b/);
    expect(viewerRequestFunctionCode(OPEN)).not.toMatch(/cloudfront/);
  });

  it('bakes the settings in: nothing is read at run time but the signing secrets', () => {
    const code = viewerRequestFunctionCode(REALISTIC);
    expect(code).toContain('sizes:[16,32,48,64,96,128,256,384,640,750,828,1080,1200,1920,2048,3840]');
    expect(code).toContain('maxDimension:4096');
    expect(code).toContain('thumb:{width:"256",height:"256",fit:"contain",background:"fff"}');
    expect(code).not.toMatch(/process\.env|__EDGE_SETTINGS__/);
  });
});

describe('settings', () => {
  it('refuses a preset the grammar would refuse on every request', () => {
    const grammar = { maxDimension: 4096, sizes: [100, 200], presets: { big: { width: '300' } } };
    expect(() => viewerRequestFunctionCode({ grammar, avif: true })).toThrow(/preset "big" is not valid: Invalid width "300"/);
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
    const code = viewerRequestFunctionCode({ ...REALISTIC, signing: { keyValueStoreId: store.keyValueStoreId } });
    expect(code).toContain(`cf.kvs("${store.keyValueStoreId}")`);
    const resolved = JSON.stringify(stack.resolve(code));
    expect(resolved).toContain('Fn::GetAtt');
    expect(resolved).toMatch(/SecretsA[0-9A-F]+/);
  });

  it(`asks the store it was given for the key "${SIGNING_SECRETS_KEY}"`, async () => {
    const fn = loadFunction(viewerRequestFunctionCode(REALISTIC), { [SIGNING_SECRETS_KEY]: 's3cret' });
    await fn.handler(viewerEvent('/a.jpg', 'sig=x'));
    expect(fn.kvs.idsAsked).toEqual([KVS_ID]);
    expect(fn.kvs.keysRead).toEqual([SIGNING_SECRETS_KEY]);
  });

  it('does not touch a KeyValueStore when signing is off', async () => {
    const fn = loadFunction(viewerRequestFunctionCode(OPEN));
    await fn.handler(viewerEvent('/a.jpg', 'w=100'));
    expect(fn.kvs.idsAsked).toEqual([]);
  });
});
