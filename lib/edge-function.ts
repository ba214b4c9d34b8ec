// Generates the viewer-request CloudFront Function file from
// lambda/edge/viewer-request.ts and the grammar: one self-contained,
// minified file in the cloudfront-js-2.0 language subset, with the
// deployment's fixed settings baked in. Its data (the grammar's parameters
// and words, the sizes and watermarks) and its presets are read from the
// KeyValueStore (lambda/edge/store.ts), so the file's size does not depend on
// them. Every deployment has a store, so the data never enters the code.

import { buildSync } from 'esbuild';
import { join } from 'node:path';
import { presetRefusal, type GrammarOptions } from '../lambda/grammar/index';
import type { EdgeSettings } from '../lambda/edge/viewer-request';
import { DATA_FIELDS, SIGNING_SECRETS_KEY, storedData } from '../lambda/edge/store';
import type { EdgeGrammar } from '../lambda/edge/dialects/dialect';
import { dialectModule, NATIVE_READERS, type DialectModule } from '../lambda/edge/dialects/index';
import { PROJECT_ROOT } from './project-root';

export { SIGNING_SECRETS_KEY };

/** CloudFront's limit on a function's code, in bytes. */
export const MAX_FUNCTION_BYTES = 10_240;

/**
 * What a generated viewer-request function, native or a dialect's, may grow to
 * in any deployment, every feature on included: a test fails past it, so that
 * a change that eats the headroom under CloudFront's limit is caught in review
 * (docs/development.md).
 */
export const EDGE_BUDGET_BYTES = 8_250;

/** Each generated function's budget, every feature on: the same for all. */
export const FUNCTION_BUDGETS: { [grammar in EdgeGrammar]: number } = {
  native: EDGE_BUDGET_BYTES,
  'dit-json': EDGE_BUDGET_BYTES,
  thumbor: EDGE_BUDGET_BYTES,
  cloudflare: EDGE_BUDGET_BYTES,
  imgix: EDGE_BUDGET_BYTES,
};

/** Length of a KeyValueStore id (a UUID); a CDK token standing in for one may be shorter. */
const KVS_ID_LENGTH = 36;

export interface EdgeFunctionSettings {
  /**
   * The URL grammar's deployment options: `maxDimension` (required; the
   * grammar's own default is 8192), `sizes` (default: any size),
   * `presets` (default: none), `presetsOnly` (default: false) and
   * `watermarks` (name to version, default: none). Must
   * equal what the origin Lambda is given, or the two disagree about URLs.
   */
  grammar: GrammarOptions;
  /** Whether `format=auto` may choose AVIF for browsers that accept it. No default: say which. */
  avif: boolean;
  /**
   * Signed URLs: every request needs a valid `sig`, checked against the
   * secrets under `signing-secrets` (SIGNING_SECRETS_KEY) in the store: the
   * active secrets separated by newlines or commas. False: `sig` is ignored.
   */
  signing: boolean;
  /**
   * The KeyValueStore the function reads (associate it with the function):
   * its data and presets, which a deploy writes there (deploymentEntries),
   * and with signing its secrets. Its id, `KeyValueStore.keyValueStoreId`;
   * a CDK token is fine.
   */
  keyValueStoreId: string;
  /**
   * The URL grammar the function reads: the native one (the default), or a
   * dialect's (lambda/edge/dialects/index.ts), whose function holds that
   * dialect's translator and reads that dialect's data from the store.
   */
  edgeGrammar?: EdgeGrammar;
}

// The TypeScript sources, in a checkout or the installed package: bundled at synth.
const RUNTIME_CRYPTO = join(PROJECT_ROOT, 'lambda', 'edge', 'runtime-crypto.ts');
const ENTRY = join(PROJECT_ROOT, 'lambda', 'edge', 'viewer-request.ts');
const DIALECTS = join(PROJECT_ROOT, 'lambda', 'edge', 'dialects');

/**
 * Properties of the grammar's and the edge's own objects, which the bundle
 * renames; the data's (EdgeData) to the names the store holds them under
 * (DATA_FIELDS). Not a dialect's (`translate`, `pairs`: a translator's test
 * calls its bundle by them), nor a name a dialect's request holds (`key`, `bucket`).
 */
const MANGLED_PROPERTIES = new RegExp(
  `^(name|code|read|matters|maxDimension|presetsOnly|presets|header|own|${Object.keys(DATA_FIELDS).join('|')})$`,
);

/** The label of statements the bundle drops: the grammar's own data, which the function reads from its store. */
const CODE_DATA_LABEL = 'fromCode';

/** Global a bundle assigns its function to; the handler around it calls it. */
const GLOBAL = 'edge';

/**
 * Features of cloudfront-js-2.0 beyond ES5 that esbuild may leave in the
 * output (per the runtime's documentation). Everything else esbuild lowers to
 * ES5 or refuses to build (generators, for instance).
 */
const RUNTIME_SUPPORTS = {
  'const-and-let': true,
  arrow: true,
  'template-literal': true,
  'exponent-operator': true,
  'rest-argument': true,
} as const;

/**
 * A CloudFront Function's TypeScript module `entry` bundled into one
 * minified script that assigns its export `exported` to the global GLOBAL,
 * with `constants` (`{ EDGE: settings }`) baked in field by field, so that
 * what a deployment does not use is left out.
 */
export function bundleFunction(entry: string, exported: string, constants: { [name: string]: object }, dialect?: DialectModule): string {
  const define: { [name: string]: string } = {};
  // Whether the bundle is a dialect's (lambda/grammar/dialect-function.ts).
  define.EDGE_DIALECT = String(!!dialect);
  define.EDGE_HINTLESS = String(!!dialect && !dialect.clientHints);
  define.EDGE_TRANSLATED = String(!!dialect && !dialect.nativeQuery);
  NATIVE_READERS.forEach((reader) => {
    define[`EDGE_READS_${reader.toUpperCase()}`] = String(!dialect || (dialect.reads || []).indexOf(reader) >= 0);
  });
  Object.entries(constants).forEach(([constant, fields]) => {
    Object.entries(fields).forEach(([name, value]) => {
      define[`${constant}.${name}`] = JSON.stringify(value);
    });
  });
  const result = buildSync({
    stdin: {
      contents: dialect
        ? // The function of a dialect: `exported` made for the dialect's module, the only one in the bundle.
          `import { ${exported} as make } from ${JSON.stringify(entry)};\n` +
          `import { ${dialect.exported} as dialect } from ${JSON.stringify(join(DIALECTS, dialect.file + '.ts'))};\n${GLOBAL} = make(dialect);\n`
        : `import { ${exported} as run } from ${JSON.stringify(entry)};\n${GLOBAL} = run;\n`,
      resolveDir: PROJECT_ROOT,
      sourcefile: 'function-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    define,
    write: false,
    format: 'iife',
    platform: 'neutral',
    target: 'es5',
    supported: RUNTIME_SUPPORTS,
    minify: true,
    // Internal property names, shortened: none is a name CloudFront, the runtime or a
    // canonical URI knows. Quoted ones too, so the settings literal above matches.
    mangleProps: MANGLED_PROPERTIES,
    mangleQuoted: true,
    mangleCache: { ...DATA_FIELDS },
    dropLabels: [CODE_DATA_LABEL],
    legalComments: 'none',
    charset: 'ascii',
    // The grammar imports `crypto` (sign.ts); the runtime provides it, bound by
    // the generated file's first line (see lambda/edge/runtime-crypto.ts).
    alias: { crypto: RUNTIME_CRYPTO },
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no function from ${entry}.`);
  return `var ${GLOBAL};\n${file.text.trim()}`;
}

/** A top-level handler that answers what the bundle's function answers for the event. */
export const plainHandler = (): string => `function handler(event){return ${GLOBAL}(event)}`;

/**
 * The top-level handler CloudFront calls: the bundle's answer for the
 * deployment's data, read from the store's parts under `data.keyPrefix` (a
 * part that cannot be read fails the request: CloudFront answers 503), after
 * reading from the store the keys it asks for. One of those that cannot be
 * read (missing, or a failed read) is left out; the bundle decides what that
 * means. Reads are awaited one by one: CloudFront advises against promise
 * combinators, which cost function memory.
 */
function wrapper(storeId: string, settings: EdgeFunctionSettings, dialect?: DialectModule): string {
  const data = storedData(settings.grammar, dialect && dialect.data);
  return (
    `async function handler(e){var s=cf.kvs(${JSON.stringify(storeId)}),d="",v={},k=0,r;` +
    `while(k<${data.parts.length})d+=await s.get(${JSON.stringify(data.keyPrefix)}+k++);r=${GLOBAL}(e,JSON.parse(d));` +
    `if(r.keys){while(k=r.keys.shift())try{v[k]=await s.get(k)}catch(e){}r=r.next(v)}return r}`
  );
}

/** Throws, naming it, for a preset the grammar would refuse on every request. */
function checkPresets(grammar: GrammarOptions): void {
  for (const name of Object.keys(grammar.presets ?? {})) {
    const refusal = presetRefusal(name, grammar);
    if (refusal) throw new Error(`The preset "${name}" is not valid: ${refusal}`);
  }
}

/**
 * The viewer-request function's code, ready for `FunctionCode.fromInline`
 * with `FunctionRuntime.JS_2_0`. Throws when it exceeds CloudFront's 10 KB.
 */
export function viewerRequestFunctionCode(settings: EdgeFunctionSettings): string {
  checkPresets(settings.grammar);
  const storeId = settings.keyValueStoreId;
  const grammar = settings.edgeGrammar ?? 'native';
  const dialect = grammar === 'native' ? undefined : dialectModule(grammar);
  const edge: EdgeSettings = {
    dimensionLimit: settings.grammar.maxDimension,
    onlyPresets: !!settings.grammar.presetsOnly,
    avif: settings.avif,
    signing: settings.signing,
    presetsInStore: !dialect && Object.keys(settings.grammar.presets ?? {}).length > 0,
    translating: !!dialect,
    namedBuckets: !!(dialect && dialect.buckets),
  };
  const imports = ["import crypto from 'crypto';", "import cf from 'cloudfront';"];
  const bundle = dialect
    ? bundleFunction(ENTRY, 'dialectRequest', { EDGE: edge }, dialect)
    : bundleFunction(ENTRY, 'viewerRequest', { EDGE: edge });
  const code = [...imports, bundle, wrapper(storeId, settings, dialect), ''].join('\n');

  checkFunctionSize(code, storeId, grammar === 'native' ? undefined : `viewer-request (${grammar})`);
  return code;
}

/** Throws when `code` exceeds CloudFront's 10 KB, counting the store id as long as the real one. */
export function checkFunctionSize(code: string, storeId?: string, name = 'viewer-request'): void {
  // At synth time the store id is a CDK token, which may be shorter than the id it becomes.
  const idShortfall = storeId !== undefined ? Math.max(0, KVS_ID_LENGTH - storeId.length) : 0;
  const bytes = Buffer.byteLength(code, 'utf8') + idShortfall;
  if (bytes > MAX_FUNCTION_BYTES) {
    throw new Error(
      `The ${name} function is ${bytes} bytes, over CloudFront's limit of ${MAX_FUNCTION_BYTES}. ` +
        'Shorten the grammar or the edge function.',
    );
  }
}
