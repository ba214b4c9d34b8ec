// Viewer query -> canonical ops -> canonical URI, and back. The canonical URI
// `/<key>/<op>=<value>,...` (or `/<key>/original`) is both the CloudFront
// cache key and the variant's key in the cache bucket, so two requests that
// mean the same image must produce the same string.

import { grammarError, isGrammarError } from './errors';
import { decodeKeyPath, encodeKeyPath } from './key';
import {
  PARAMS,
  PARAMS_BY_NAME,
  PRESET_SPELLINGS,
  VIEWER_PARAMS,
  type GrammarOptions,
  type NegotiatedFormat,
  type Ops,
  type Param,
  type ParsedParams,
  type Preset,
  type ViewerParams,
} from './params';
import { invalidParameter } from './validate';

/** The ops segment of a request with no transformation. */
export const ORIGINAL = 'original';

export interface Negotiation {
  /** The viewer's `Accept` header, used only to resolve `format=auto`. */
  accept?: string;
  /** Whether `format=auto` may choose AVIF. Default true. */
  avif?: boolean;
}

export interface CanonicalRequest {
  key: string;
  ops: Ops;
  /** `/<encoded key>/<ops segment>` */
  uri: string;
}

/** Splits a raw query string into decoded name/value pairs (`+` is a space, as in forms). */
export function splitQuery(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  query.split('&').forEach((part) => {
    if (part === '') return;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? '' : part.slice(eq + 1);
    pairs.push([decodeQueryComponent(name), decodeQueryComponent(value)]);
  });
  return pairs;
}

/** A query name or value decoded: `+` is a space; a malformed escape is refused. */
export function decodeQueryComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch (_malformed) {
    throw grammarError('invalid_parameter', `Invalid query string: "${text.slice(0, 40)}" is not valid percent-encoded UTF-8.`);
  }
}

const hasOwn = (object: object, name: string) => Object.prototype.hasOwnProperty.call(object, name);

/** Every op under its canonical name, canonical-only ones included: the names a canonical URI may use. */
const CANONICAL_PARAMS: { [name: string]: Param } = {};
PARAMS.forEach((param) => {
  CANONICAL_PARAMS[param.name] = param;
});

/** The refusal of a parameter given twice. */
const repeated = (name: string, value: string) => invalidParameter(name, value, `a single value (${name} is given more than once)`);

/** The value of the parameter spelled as `spellings` (the first its name), or undefined; throws when it is given twice. */
export function singleValue(pairs: [string, string][], spellings: string[]): string | undefined {
  const given = pairs.filter((pair) => spellings.indexOf(pair[0].toLowerCase()) !== -1);
  if (given.length === 0) return undefined;
  const value = (given[0] as [string, string])[1];
  if (given.length > 1) throw repeated(spellings[0] as string, value);
  return value;
}

/** The preset a viewer names (`preset` or `p`), or undefined; throws when one is named twice. */
export const presetName = (pairs: [string, string][]) => singleValue(pairs, PRESET_SPELLINGS);

/** The refusal of a preset the deployment does not define; `names` lists those it does, comma-separated. */
export function unknownPreset(name: string, names: string) {
  return invalidParameter('preset', name, `one of ${names || '(no presets are defined)'}`);
}

/** The pairs a `preset` parameter stands for, or none. */
function presetPairs(pairs: [string, string][], options: GrammarOptions): [string, string][] {
  const name = presetName(pairs);
  if (name === undefined) return [];
  const presets = options.presets || {};
  if (!hasOwn(presets, name)) throw unknownPreset(name, Object.keys(presets).join(', '));
  const preset = presets[name] as Preset;
  return Object.keys(preset).map((param) => [param, preset[param] as string] as [string, string]);
}

/** A viewer's parameters: all of them (a preset's, overridden by the viewer's own), and the viewer's own. */
export interface ViewerQuery {
  params: ViewerParams;
  own: ViewerParams;
}

/**
 * Parses a viewer's parameters. Names are case-insensitive; unknown names are
 * ignored. A preset's parameters come first and the viewer's own override them.
 */
export function parseViewerQuery(pairs: [string, string][], options: GrammarOptions): ViewerQuery {
  return parseParams(pairs, options, PARAMS_BY_NAME);
}

export function parseViewerParams(pairs: [string, string][], options: GrammarOptions): ViewerParams {
  return parseViewerQuery(pairs, options).params;
}

/**
 * parseViewerQuery with `named` the spellings a viewer may use, or the ops of
 * a canonical URI with CANONICAL_PARAMS. Own properties only, so `constructor`
 * is just unknown.
 */
function parseParams(pairs: [string, string][], options: GrammarOptions, named: { [spelling: string]: Param }): ViewerQuery {
  const params: { [name: string]: unknown } = {};
  presetPairs(pairs, options).forEach((pair) => {
    const spelling = pair[0].toLowerCase();
    const param = hasOwn(PARAMS_BY_NAME, spelling) ? PARAMS_BY_NAME[spelling] : undefined;
    if (param) params[param.name] = param.parse(pair[1], options);
  });
  const own: { [name: string]: unknown } = {};
  pairs.forEach((pair) => {
    const spelling = pair[0].toLowerCase();
    if (!hasOwn(named, spelling)) return;
    const param = named[spelling] as Param;
    if (options.presetsOnly) {
      throw invalidParameter(param.name, pair[1], 'no parameter but preset (this deployment serves presets only)');
    }
    if (hasOwn(own, param.name)) throw repeated(param.name, pair[1]);
    params[param.name] = own[param.name] = param.parse(pair[1], options);
  });
  return { params: params as ViewerParams, own: own as ViewerParams };
}

/** Whether an Accept header accepts a media type (case-insensitive; `q=0` means no). */
function accepts(accept: string, type: string): boolean {
  return accept
    .toLowerCase()
    .split(',')
    .some((range) => {
      const fields = range.split(';');
      if ((fields[0] as string).trim() !== type) return false;
      return !fields.slice(1).some((field) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(field));
    });
}

/**
 * Resolves `format=auto` from Accept: AVIF (with WebP), then WebP, else absent
 * (the source's own family). AVIF only beside WebP, the fallback the origin
 * may choose when AVIF would cost too much.
 */
function negotiateFormat(negotiation: Negotiation): NegotiatedFormat | undefined {
  const accept = negotiation.accept || '';
  if (!accepts(accept, 'image/webp')) return undefined;
  return negotiation.avif !== false && accepts(accept, 'image/avif') ? 'avif' : 'webp';
}

/** Snaps a size up to the next allowed one (sizes ascending). */
function snap(name: string, value: number, sizes: number[]): number {
  for (let i = 0; i < sizes.length; i++) {
    if ((sizes[i] as number) >= value) return sizes[i] as number;
  }
  throw invalidParameter(name, String(value), `at most ${sizes[sizes.length - 1]}, the largest allowed size`);
}

/** Folds `dpr` into the dimensions, keeping them within maxDimension and the aspect ratio. */
function applyDpr(ops: Ops, dpr: number, maxDimension: number): void {
  const scale = Math.min(dpr, maxDimension / Math.max(ops.width || 0, ops.height || 0));
  if (ops.width !== undefined) ops.width = Math.max(1, Math.round(ops.width * scale));
  if (ops.height !== undefined) ops.height = Math.max(1, Math.round(ops.height * scale));
}

/**
 * The canonical ops for a viewer's parameters: aliases resolved, defaults and
 * no-ops dropped. With a negotiation, `format=auto` (or none) becomes `accept`;
 * without, `accept` is what `params` say (only a canonical URI can say it).
 */
// No default parameter values here: cloudfront-js-2.0 lacks them and esbuild cannot lower them.
export function canonicalOps(params: ParsedParams, options: GrammarOptions, negotiation?: Negotiation): Ops {
  // Metadata describes the source, so no other op can change it.
  if (params.format === 'json') return { format: 'json' };
  const ops: Ops = {};
  PARAMS.forEach((param) => {
    if (param.name !== 'dpr') (ops as { [name: string]: unknown })[param.name] = params[param.name];
  });
  if (params.dpr !== undefined && params.dpr !== 1) applyDpr(ops, params.dpr, options.maxDimension);
  const sizes = options.sizes;
  if (sizes && ops.width !== undefined) ops.width = snap('width', ops.width, sizes);
  if (sizes && ops.height !== undefined) ops.height = snap('height', ops.height, sizes);
  ops.format = params.format === 'auto' ? undefined : params.format;
  if (negotiation) ops.accept = negotiateFormat(negotiation);
  const canonical: Ops = {};
  PARAMS.forEach((param) => {
    const name = param.name as keyof Ops;
    if (ops[name] !== undefined && (!param.matters || param.matters(ops))) {
      (canonical as { [name: string]: unknown })[name] = ops[name];
    }
  });
  return canonical;
}

/** The ops named by `params` as name/text pairs in PARAMS order, booleans as `1`. */
function opEntries(ops: Ops, params: Param[]): [string, string][] {
  const entries: [string, string][] = [];
  params.forEach((param) => {
    const value = ops[param.name as keyof Ops];
    if (value !== undefined) entries.push([param.name, value === true ? '1' : String(value)]);
  });
  return entries;
}

/** `width=640,accept=avif`, or `original` when there are no ops. */
export function opsSegment(ops: Ops): string {
  const entries = opEntries(ops, PARAMS);
  return entries.length ? entries.map((entry) => entry[0] + '=' + entry[1]).join(',') : ORIGINAL;
}

export function canonicalUri(key: string, ops: Ops): string {
  return encodeKeyPath(key) + '/' + opsSegment(ops);
}

/** The variant's key in the cache bucket: the canonical URI as S3 decodes it, without the leading slash. */
export function variantKey(key: string, ops: Ops): string {
  return key + '/' + opsSegment(ops);
}

/** What the edge does to every request: path and query in, one canonical request out. */
export function canonicalRequest(
  path: string,
  pairs: [string, string][],
  options: GrammarOptions,
  negotiation?: Negotiation,
): CanonicalRequest {
  const key = decodeKeyPath(path);
  const ops = canonicalOps(parseViewerParams(pairs, options), options, negotiation);
  return { key, ops, uri: canonicalUri(key, ops) };
}

/**
 * Why the grammar refuses every request for the preset `name`, or undefined
 * when it accepts them: how a deployment checks its presets before a viewer
 * trips over one.
 */
export function presetRefusal(name: string, options: GrammarOptions): string | undefined {
  try {
    canonicalRequest('/preset-check.jpg', [['preset', name]], options, { accept: 'image/webp' });
    return undefined;
  } catch (error) {
    if (isGrammarError(error)) return error.message;
    throw error;
  }
}

/**
 * Parses a canonical URI back to its key and ops. Anything that is not exactly
 * the canonical spelling is refused, so one variant has one key.
 */
export function parseCanonicalUri(uri: string, options: GrammarOptions): CanonicalRequest {
  const slash = uri.lastIndexOf('/');
  if (slash <= 0) throw notCanonical(uri);
  const key = decodeKeyPath(uri.slice(0, slash));
  const segment = uri.slice(slash + 1);
  const pairs: [string, string][] =
    segment === ORIGINAL
      ? []
      : // Ops are comma-separated, and a value may hold commas (`crop=0,0,0.5,0.5`): an op starts at a name and `=`.
        segment.split(/,(?=[a-z]+=|$)/).map((op) => {
          const eq = op.indexOf('=');
          return [op.slice(0, eq), op.slice(eq + 1)] as [string, string];
        });
  // Re-serialising refuses aliases, defaults, dpr, format=auto, `accept` beside a format
  // and any other spelling. Presets are a viewer's shorthand: a canonical URI holds their expansion.
  const canonicalOptions: GrammarOptions = { maxDimension: options.maxDimension, sizes: options.sizes };
  const ops = canonicalOps(parseParams(pairs, canonicalOptions, CANONICAL_PARAMS).params, canonicalOptions);
  const canonical = canonicalUri(key, ops);
  if (canonical !== uri) throw notCanonical(uri);
  return { key, ops, uri: canonical };
}

function notCanonical(uri: string) {
  return grammarError('not_canonical', `Not a canonical image URI: "${uri.slice(0, 80)}".`);
}

/**
 * A viewer query that canonicalises to `ops` again. It leaves out what only
 * the edge writes: `accept` is negotiated anew, so it holds for the same
 * Accept header.
 */
export function viewerQuery(ops: Ops): string {
  return opEntries(ops, VIEWER_PARAMS)
    .map((entry) => entry[0] + '=' + encodeURIComponent(entry[1]))
    .join('&');
}
