// Generates the viewer-request CloudFront Function file from
// lambda/edge/viewer-request.ts and the grammar: one self-contained,
// minified file in the cloudfront-js-2.0 language subset, with the
// deployment's settings baked in, under CloudFront's 10 KB limit.

import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { presetRefusal, type GrammarOptions } from '../lambda/grammar/index';
import { SIGNING_SECRETS_KEY, type EdgeSettings } from '../lambda/edge/viewer-request';

export { SIGNING_SECRETS_KEY };

/** CloudFront's limit on a function's code, in bytes. */
export const MAX_FUNCTION_BYTES = 10_240;

/** Length of a KeyValueStore id (a UUID); a CDK token standing in for one may be shorter. */
const KVS_ID_LENGTH = 36;

export interface EdgeFunctionSettings {
  /**
   * The URL grammar's deployment options: `maxDimension` (required; the
   * grammar's own default is 8192), `sizes` (default: any size),
   * `presets` (default: none) and `presetsOnly` (default: false). Must
   * equal what the origin Lambda is given, or the two disagree about URLs.
   */
  grammar: GrammarOptions;
  /** Whether `format=auto` may choose AVIF for browsers that accept it. No default: say which. */
  avif: boolean;
  /**
   * Signed URLs. Absent (the default): signing is off and `sig` is ignored.
   * Present: every request needs a valid `sig`; the secrets are read at
   * request time from this KeyValueStore (associate it with the function),
   * key `signing-secrets` (SIGNING_SECRETS_KEY), value: the active secrets
   * separated by newlines or commas.
   */
  signing?: {
    /** The KeyValueStore's id (`KeyValueStore.keyValueStoreId`; a CDK token is fine). */
    keyValueStoreId: string;
  };
}

const RUNTIME_CRYPTO = fileURLToPath(new URL('../lambda/edge/runtime-crypto.ts', import.meta.url));
const ENTRY = fileURLToPath(new URL('../lambda/edge/viewer-request.ts', import.meta.url));

/** Global the bundle assigns the request function to; the wrapper below calls it. */
const GLOBAL = 'viewerRequest';

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

/** The bundled grammar and request function, defining the global `viewerRequest`. */
function bundle(settings: EdgeSettings): string {
  const result = buildSync({
    stdin: {
      contents: `import { createViewerRequest } from ${JSON.stringify(ENTRY)};\n${GLOBAL} = createViewerRequest(__EDGE_SETTINGS__);\n`,
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
      sourcefile: 'edge-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'neutral',
    target: 'es5',
    supported: RUNTIME_SUPPORTS,
    minify: true,
    legalComments: 'none',
    charset: 'ascii',
    // The grammar imports `crypto` (sign.ts); the runtime provides it, bound by
    // the generated file's first line (see lambda/edge/runtime-crypto.ts).
    alias: { crypto: RUNTIME_CRYPTO },
    define: { __EDGE_SETTINGS__: JSON.stringify(settings) },
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild produced no viewer-request function.');
  return file.text.trim();
}

/** The top-level handler CloudFront calls: reads the secrets when signing is on, then the bundle. */
function wrapper(settings: EdgeFunctionSettings): string {
  if (!settings.signing) return `function handler(event){return ${GLOBAL}(event)}`;
  const id = JSON.stringify(settings.signing.keyValueStoreId);
  const key = JSON.stringify(SIGNING_SECRETS_KEY);
  // A missing key or a failed read leaves no secret to verify with: every
  // signed request is refused (403), and the reason is logged.
  return (
    `async function handler(event){var s;try{s=await cf.kvs(${id}).get(${key})}` +
    `catch(e){console.log("signing secrets unavailable: "+e)}return ${GLOBAL}(event,s)}`
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
  const edge: EdgeSettings = { grammar: settings.grammar, avif: settings.avif, signing: !!settings.signing };
  const imports = ["import crypto from 'crypto';"];
  if (settings.signing) imports.push("import cf from 'cloudfront';");
  const code = [...imports, `var ${GLOBAL};`, bundle(edge), wrapper(settings), ''].join('\n');

  // At synth time the store id is a CDK token, which may be shorter than the id it becomes.
  const idShortfall = settings.signing ? Math.max(0, KVS_ID_LENGTH - settings.signing.keyValueStoreId.length) : 0;
  const bytes = Buffer.byteLength(code, 'utf8') + idShortfall;
  if (bytes > MAX_FUNCTION_BYTES) {
    throw new Error(
      `The viewer-request function is ${bytes} bytes, over CloudFront's limit of ${MAX_FUNCTION_BYTES}. ` +
        'Define fewer or smaller presets or sizes, or shorten the grammar.',
    );
  }
  return code;
}
