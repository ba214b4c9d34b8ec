// The viewer-request CloudFront Function (cloudfront-js-2.0): every request in,
// either the request rewritten to its canonical URI or a 400/403 answered at
// the edge. lib/edge-function.ts bundles this file with the grammar into the
// one self-contained file CloudFront runs, with the deployment's fixed
// settings baked in; it adds the top-level `async function handler(event)`
// that reads from the KeyValueStore (lambda/edge/store.ts) the deployment's
// data, hands it to the function made here (the grammar's parameters and
// words, the sizes and watermarks), and then reads the keys that function
// asks for (the signing secrets, a preset, a dialect's buckets). A dialect's
// function (dialectRequest) is the same code with the dialect's translator in
// front of the grammar.
//
// Nothing here may be `async`: the runtime allows `async` on top-level
// function declarations only ("async closures are not supported"), and
// esbuild cannot lower async functions without generators, which the runtime
// lacks too. So the function returns a StoreRead when it needs values, and
// the generated wrapper reads them and calls its `next`.
//
// What CloudFront hands a Function (checked against the CloudFront docs and
// field reports): `uri` and the query string names and values exactly as the
// viewer sent them, still percent-encoded; a name given more than once
// appears once with every value in `multiValue`; header names lower-case.
// What the Function leaves in `querystring` is sent to the origin as written,
// so values put there must be percent-encoded here.

import {
  canonicalOps,
  canonicalUri,
  decodeKeyPath,
  decodeQueryComponent,
  DIALECT_REQUEST,
  hasOwn,
  isGrammarError,
  MAX_DIALECT_REQUEST,
  parseViewerQuery,
  presetName,
  say,
  signatureParams,
  signedText,
  unknownPreset,
  useGrammarData,
  validateKey,
  verifySignature,
  type GrammarOptions,
  type Preset,
} from '../grammar/index';
import type { CloudFrontFunctionsEvent, CloudFrontFunctionsHeaders, CloudFrontFunctionsQuerystring } from 'aws-lambda';
import type { Dialect, DialectRequest, DialectTitle, NativeRequest } from './dialects/dialect';
import { BUCKETS_KEY, PRESET_KEY_PREFIX, PRESET_NAMES_KEY, SIGNING_SECRETS_KEY, type EdgeData } from './store';

/**
 * The deployment's settings baked into the function; its data and presets
 * are in the store. lib/edge-function.ts defines each field as a constant
 * when it bundles this file (EDGE below), so a deployment's function leaves
 * out the code of what it does not use.
 */
export interface EdgeSettings {
  /** The grammar's maxDimension (named apart from it: the bundle renames that property). */
  dimensionLimit: number;
  /** The grammar's presetsOnly. */
  onlyPresets: boolean;
  /** Whether `format=auto` may choose AVIF. */
  avif: boolean;
  /** Whether every request must carry a valid `sig`. */
  signing: boolean;
  /** Whether the store holds presets. */
  presetsInStore: boolean;
  /**
   * Whether the function translates a dialect (lambda/edge/dialects/): then
   * every URL is the dialect's, signed its way, and names no preset. Not named
   * `dialect`, which the bundle renames as a data field.
   */
  translating: boolean;
  /** Whether the dialect's requests may name a bucket (DialectModule.buckets): only then does the function read the store's buckets. */
  namedBuckets: boolean;
}

/** The settings, each field defined by the bundler. */
declare const EDGE: EdgeSettings;

/** One query parameter, header or cookie in CloudFront's event object, and a set of them. */
export type CloudFrontValues = CloudFrontFunctionsQuerystring;
export type CloudFrontValue = CloudFrontValues[string];

export type CloudFrontRequest = CloudFrontFunctionsEvent['request'];

/** A response the function answers itself: CloudFront's event types have no body for it. */
export interface CloudFrontResponse {
  statusCode: number;
  statusDescription: string;
  headers: CloudFrontFunctionsHeaders;
  body: { encoding: 'text'; data: string };
}

/** A viewer-request event: no response yet. */
export type ViewerRequestEvent = Omit<CloudFrontFunctionsEvent, 'response'>;

/** KeyValueStore values by key; a key that could not be read is absent. */
export type StoreValues = { [key: string]: string | undefined };

/** What the function needs read from the KeyValueStore before it can answer. */
export interface StoreRead {
  keys: string[];
  next(values: StoreValues): Answer;
}

/** A rewritten request, or a response answered at the edge. */
export type Answer = CloudFrontRequest | CloudFrontResponse;

export type Outcome = Answer | StoreRead;

/** The function, given the deployment's data (EdgeData). */
export type ViewerRequestFunction = (event: ViewerRequestEvent, data: EdgeData) => Outcome;

/**
 * The active secrets in the KeyValueStore value: separated by newlines or
 * commas, surrounding white space ignored, empty entries skipped. The first
 * is the one new URLs are signed with by convention; all of them verify.
 */
export const parseSecrets = (value: string | undefined): string[] =>
  (value || '')
    .split(/[\r\n,]/)
    .map((secret) => secret.trim())
    .filter((secret) => secret);

/** Every value of a parameter or header, in order (`multiValue` holds them all when repeated). */
const valuesOf = (field: CloudFrontValue): string[] =>
  field.multiValue && field.multiValue.length ? field.multiValue.map((item) => item.value) : [field.value];

/** The query's name/value pairs, decoded by the grammar's own rules (`+` as a space, malformed escapes refused). */
const queryPairs = (querystring: CloudFrontValues): [string, string][] => {
  const pairs: [string, string][] = [];
  Object.keys(querystring).forEach((name) => {
    valuesOf(querystring[name] as CloudFrontValue).forEach((value) => {
      pairs.push([decodeQueryComponent(name), decodeQueryComponent(value)]);
    });
  });
  return pairs;
};

/** A response answered at the edge: `statusCode` with a JSON body of `code` and `message`, and the data's headers and status description. */
const response = (data: EdgeData, statusCode: number, code: string, message: string): CloudFrontResponse => ({
  statusCode,
  statusDescription: data.statusTexts[statusCode] as string,
  headers: data.refusalHeaders,
  body: { encoding: 'text', data: JSON.stringify({ error: code, message }) },
});

const forbidden = (data: EdgeData, word: 'unsigned' | 'expired' | 'badSignature') => response(data, 403, 'invalid_signature', say(word));

/** Adds each of `values` to an origin's query, encoded. */
const forwardTo = (querystring: CloudFrontValues, values: object): void =>
  Object.keys(values).forEach((name) => {
    querystring[name] = { value: encodeURIComponent(String((values as { [name: string]: unknown })[name])) };
  });

/** Runs `answer`, turning the grammar's refusals into a 400 with its code and message. */
const refusing = <T extends Outcome>(data: EdgeData, answer: () => T): T | CloudFrontResponse => {
  try {
    return answer();
  } catch (error) {
    // Where every native pair is the translator's (dialect-function.ts), a refusal of the native
    // grammar (`Invalid quality "low"`) names the dialect too; the translator's own start with its name.
    if (isGrammarError(error))
      return response(
        data,
        400,
        error.code,
        typeof EDGE_TRANSLATED !== 'undefined' && EDGE_TRANSLATED && error.message.indexOf((data.dialect as DialectTitle).title)
          ? (data.dialect as DialectTitle).title + ': ' + error.message
          : error.message,
      );
    throw error;
  }
};

/**
 * The answer for `event`; with a dialect, its URL is translated into the
 * native grammar first (lambda/edge/dialects/), its own signature verified,
 * and the native grammar run on the result, so that the canonical URI is the
 * native URL's: the same cache entry, variant and purge. The distribution
 * allows GET and HEAD only (CloudFront refuses the rest itself); should a
 * behaviour ever allow more, that request is not ours to rewrite: it passes
 * untouched.
 */
const answer = (event: ViewerRequestEvent, data: EdgeData, dialect?: Dialect): Outcome => {
  const request = event.request;
  if (!/^(GET|HEAD)$/.test(request.method)) return request;
  useGrammarData(data);
  if (EDGE.translating) dialect!.useData(data.dialect as object);

  return refusing<Outcome>(data, () => {
    let pairs = queryPairs(request.querystring);
    // A dialect's request as sent, and its translation. EDGE conditions are constants: what a function does not do is left out.
    let viewer: DialectRequest, translated: NativeRequest;
    if (EDGE.translating) pairs = (translated = dialect!.translate((viewer = { uri: request.uri, pairs }))).pairs;
    let key = EDGE.translating ? validateKey(translated!.key) : decodeKeyPath(request.uri);
    // A dialect's URL names no preset (a declaration without a value is shorter in its code).
    let preset: string | undefined;
    if (!EDGE.translating) preset = presetName(pairs);
    // Read before the store, so that a repeated sig is a 400 like any repeated parameter. A
    // dialect's function verifies the dialect's signature on every URL, native ones too.
    const signature = EDGE.signing && !EDGE.translating ? signatureParams(pairs) : {};
    // The buckets a dialect's request names: its key's, an overlay's.
    const named = EDGE.namedBuckets ? [translated!.bucket, translated!.overlay].filter((bucket) => bucket) : [];
    const keys = ([] as string[]).concat(
      EDGE.signing ? SIGNING_SECRETS_KEY : [],
      // The names only word the refusal of an unknown preset; one read more is simpler than a second round.
      !EDGE.translating && preset != null && EDGE.presetsInStore ? [PRESET_KEY_PREFIX + preset, PRESET_NAMES_KEY] : [],
      EDGE.namedBuckets && named.length ? BUCKETS_KEY : [],
    );

    const rewrite = (values: StoreValues): Answer => {
      if (EDGE.signing && values[SIGNING_SECRETS_KEY] == null) console.log('signing secrets unavailable');
      // A dialect's signature covers its request as sent, so it is checked before the native grammar reads
      // what that was translated to: a request its signer could not have written is a 403, whatever it reads as.
      if (EDGE.signing && EDGE.translating) {
        const check = dialect!.verify(viewer!, parseSecrets(values[SIGNING_SECRETS_KEY]), Date.now() / 1000);
        if (check !== 'valid') return forbidden(data, check);
      }
      if (EDGE.namedBuckets && named.length) {
        // The store's map of bucket names to the key prefixes the deployment serves them under.
        const prefixes = JSON.parse(values[BUCKETS_KEY] || '{}') as { [bucket: string]: string };
        // As DIT answers a bucket outside its SOURCE_BUCKETS.
        if (named.some((bucket) => !hasOwn(prefixes, bucket as string))) return response(data, 403, 'forbidden_bucket', say('bucket'));
        if (translated!.bucket) key = validateKey(prefixes[translated!.bucket] + key);
      }
      const options: GrammarOptions = {
        maxDimension: EDGE.dimensionLimit,
        presetsOnly: EDGE.onlyPresets,
        sizes: data.sizes,
        presets: {},
        watermarks: data.watermarks,
        hdr: data.hdr,
      };
      // Only a deployment with card templates versions them (lib/edge-function.ts).
      if (typeof EDGE_READS_TEMPLATE === 'undefined' || EDGE_READS_TEMPLATE) options.templates = data.templates;
      if (!EDGE.translating && preset != null) {
        const definition = values[PRESET_KEY_PREFIX + preset];
        if (definition == null) throw unknownPreset(preset, values[PRESET_NAMES_KEY] || '');
        (options.presets as { [name: string]: Preset })[preset] = JSON.parse(definition) as Preset;
      }
      const query = parseViewerQuery(pairs, options);
      // Signatures cover the URI before format=auto is negotiated, so that
      // one signed URL serves every browser (see lambda/grammar/sign.ts).
      if (EDGE.signing && !EDGE.translating) {
        if (signature.sig == null) return forbidden(data, 'unsigned');
        // On every request, cached variant or not: this function runs before the cache. (NaN without exp.)
        if (+(signature.exp as string) <= Date.now() / 1000) return forbidden(data, 'expired');
        const text = signedText(key, canonicalOps(query.params, options), signature);
        if (text == null || !verifySignature(text, signature.sig, parseSecrets(values[SIGNING_SECRETS_KEY])))
          return forbidden(data, 'badSignature');
      }

      // The cache key is the URI alone: it records what Accept allowed
      // (`accept=avif` or `accept=webp`) and the width the client hints
      // gave `width=auto`, so no header has to enter it.
      const header = (name: string) => valuesOf(request.headers[name] || { value: '' }).join(',');
      request.uri = canonicalUri(key, canonicalOps(query.params, options, { accept: header('accept'), avif: EDGE.avif, header }));
      // The origin sees only the preset and the viewer's own recognised
      // parameters, with their canonical names and values, and the
      // signature with its scope; or a dialect's request, as one parameter:
      // nothing else a viewer adds (S3's response-content-type or versionId,
      // say) reaches an origin as a parameter of its own. They make the same
      // canonical URI and signature again, for any Accept and in presets-only
      // mode, so the origin can send a viewer back through the edge with them
      // (lambda/origin/phases.ts, oversized variants).
      const querystring: CloudFrontValues = {};
      if (EDGE.translating) {
        // A dialect's request, as one parameter: as the viewer sent it, which this function reads and
        // verifies again when the origin sends the viewer back there (lambda/origin/phases.ts). A
        // longer one is left out: the origin then sends the viewer to the native URL.
        const sent = encodeURIComponent(JSON.stringify(viewer));
        if (sent.length <= MAX_DIALECT_REQUEST) querystring[DIALECT_REQUEST] = { value: sent };
      } else {
        // The preset under its first spelling, `preset`.
        [preset != null ? { preset } : {}, query.own, signature].forEach((values) => forwardTo(querystring, values));
      }
      request.querystring = querystring;
      return request;
    };
    return keys.length ? { keys, next: (values) => refusing(data, () => rewrite(values)) } : rewrite({});
  });
};

export const viewerRequest: ViewerRequestFunction = answer;

/** The function of a dialect's grammar (lambda/edge/dialects/index.ts). */
export const dialectRequest =
  (dialect: Dialect): ViewerRequestFunction =>
  (event, data) =>
    answer(event, data, dialect);
