// The viewer-request CloudFront Function (cloudfront-js-2.0): every request in,
// either the request rewritten to its canonical URI or a 400/403 answered at
// the edge. lib/edge-function.ts bundles this file with the grammar into the
// one self-contained file CloudFront runs, with the deployment's settings
// baked in; it adds the top-level `async function handler(event)` that reads
// the signing secrets from the KeyValueStore and calls the function made here.
//
// Nothing here may be `async`: the runtime allows `async` on top-level
// function declarations only ("async closures are not supported"), and
// esbuild cannot lower async functions without generators, which the runtime
// lacks too. The KeyValueStore read therefore happens in the generated wrapper.
//
// What CloudFront hands a Function (checked against the CloudFront docs and
// field reports): `uri` and the query string names and values exactly as the
// viewer sent them, still percent-encoded; a name given more than once
// appears once with every value in `multiValue`; header names lower-case.
// What the Function leaves in `querystring` is sent to the origin as written,
// so values put there must be percent-encoded here.

import {
  canonicalRequest,
  isGrammarError,
  PARAMS_BY_NAME,
  splitQuery,
  verifySignature,
  type GrammarOptions,
  type Param,
} from '../grammar/index';

/** The deployment's settings, fixed when the function file is generated. */
export interface EdgeSettings {
  grammar: GrammarOptions;
  /** Whether `format=auto` may choose AVIF. */
  avif: boolean;
  /** Whether every request must carry a valid `sig`. */
  signing: boolean;
}

/** The KeyValueStore key whose value holds the active signing secrets. */
export const SIGNING_SECRETS_KEY = 'signing-secrets';

/** One query parameter, header or cookie in CloudFront's event object. */
export interface CloudFrontValue {
  value: string;
  multiValue?: { value: string }[];
}

export type CloudFrontValues = { [name: string]: CloudFrontValue };

export interface CloudFrontRequest {
  method: string;
  uri: string;
  querystring: CloudFrontValues;
  headers: CloudFrontValues;
  cookies: CloudFrontValues;
}

export interface CloudFrontResponse {
  statusCode: number;
  statusDescription: string;
  headers: CloudFrontValues;
  body: { encoding: 'text'; data: string };
}

export interface ViewerRequestEvent {
  version: string;
  context: { [field: string]: string | undefined };
  viewer: { ip: string };
  request: CloudFrontRequest;
}

export type ViewerRequestFunction = (
  event: ViewerRequestEvent,
  secrets?: string,
) => CloudFrontRequest | CloudFrontResponse;

/**
 * The active secrets in the KeyValueStore value: separated by newlines or
 * commas, surrounding white space ignored, empty entries skipped. The first
 * is the one new URLs are signed with by convention; all of them verify.
 */
export function parseSecrets(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(/[\r\n,]+/)
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '');
}

const hasOwn = (object: object, name: string) => Object.prototype.hasOwnProperty.call(object, name);

/** Every value of a parameter or header, in order (`multiValue` holds them all when repeated). */
function valuesOf(field: CloudFrontValue): string[] {
  return field.multiValue && field.multiValue.length ? field.multiValue.map((item) => item.value) : [field.value];
}

/**
 * The query string as the viewer sent it, rebuilt from CloudFront's object
 * form, so that the grammar's own `splitQuery` decodes it (`+` as a space,
 * malformed escapes refused) exactly as it does everywhere else.
 */
function rawQuery(querystring: CloudFrontValues): string {
  const parts: string[] = [];
  Object.keys(querystring).forEach((name) => {
    valuesOf(querystring[name] as CloudFrontValue).forEach((value) => {
      parts.push(name + '=' + value);
    });
  });
  return parts.join('&');
}

/**
 * A recognised parameter as the origin is sent it: canonical name, value as
 * the grammar reads it (`W=0640` is `width=640`), or undefined for any other
 * name, canonical-only ones (`accept`) included. Only called once the grammar
 * has accepted the request.
 */
function forwarded(pair: [string, string], options: GrammarOptions): [string, string] | undefined {
  const name = pair[0].toLowerCase();
  if (name === 'preset' || name === 'p') return ['preset', pair[1]];
  if (!hasOwn(PARAMS_BY_NAME, name)) return undefined;
  const param = PARAMS_BY_NAME[name] as Param;
  return [param.name, String(param.parse(pair[1], options))];
}

function response(statusCode: number, statusDescription: string, code: string, message: string): CloudFrontResponse {
  return {
    statusCode,
    statusDescription,
    headers: {
      'content-type': { value: 'application/json' },
      // A client error: cacheable briefly, like the origin's own 4xx.
      'cache-control': { value: 'public, max-age=10' },
      'x-content-type-options': { value: 'nosniff' },
    },
    body: { encoding: 'text', data: JSON.stringify({ error: code, message }) },
  };
}

const forbidden = (message: string) => response(403, 'Forbidden', 'invalid_signature', message);

export function createViewerRequest(settings: EdgeSettings): ViewerRequestFunction {
  const options = settings.grammar;

  return (event, secrets) => {
    const request = event.request;
    // The distribution allows GET and HEAD only; anything else CloudFront
    // refuses itself. Should a behaviour ever allow more, it is not ours to
    // rewrite: pass it through untouched.
    if (request.method !== 'GET' && request.method !== 'HEAD') return request;

    const accept = request.headers.accept ? valuesOf(request.headers.accept).join(',') : '';
    let pairs: [string, string][];
    let signed: string;
    let uri: string;
    try {
      pairs = splitQuery(rawQuery(request.querystring));
      // Signatures cover the URI before format=auto is negotiated, so that
      // one signed URL serves every browser (see lambda/grammar/sign.ts).
      signed = canonicalRequest(request.uri, pairs, options).uri;
      uri = canonicalRequest(request.uri, pairs, options, { accept, avif: settings.avif }).uri;
    } catch (error) {
      if (isGrammarError(error)) return response(400, 'Bad Request', error.code, error.message);
      throw error;
    }

    const sigs = pairs.filter((pair) => pair[0].toLowerCase() === 'sig').map((pair) => pair[1]);
    if (settings.signing) {
      if (sigs.length === 0) return forbidden('This URL must be signed: add its sig parameter.');
      if (sigs.length > 1) return forbidden('The sig parameter is given more than once.');
      if (!verifySignature(signed, sigs[0] as string, parseSecrets(secrets))) {
        return forbidden('The URL signature is not valid for this image and these parameters.');
      }
    }

    // The cache key is the URI alone: it records what Accept allowed
    // (`accept=avif` or `accept=webp`), so Accept never has to enter it.
    request.uri = uri;
    // The origin sees only the viewer's recognised parameters, with their
    // canonical names and values, and the signature: nothing else a viewer
    // adds (S3's response-content-type or versionId, say) reaches an origin.
    // The same parameters make the same canonical URI again, for any Accept
    // and in presets-only mode, so the origin can send a viewer back through
    // the edge with them (lambda/origin/handler.ts, oversized variants).
    const querystring: CloudFrontValues = {};
    pairs.forEach((pair) => {
      const param = forwarded(pair, options);
      if (param) querystring[param[0]] = { value: encodeURIComponent(param[1]) };
    });
    if (settings.signing) querystring.sig = { value: encodeURIComponent(sigs[0] as string) };
    request.querystring = querystring;
    return request;
  };
}
