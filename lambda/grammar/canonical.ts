// Viewer query -> canonical ops -> canonical URI, and back. The canonical URI
// `/<key>/<op>=<value>,...` (or `/<key>/original`) is both the CloudFront
// cache key and the variant's key in the cache bucket, so two requests that
// mean the same image must produce the same string.

import { grammarError, isGrammarError } from './errors';
import { decodeKeyPath, encodeKeyPath } from './key';
import {
  DATA,
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
  type UnresolvedOps,
  type ViewerParams,
} from './params';
import { invalidParameter, oneOf, say } from './validate';

/** The value of `width` and `dpr` that the edge resolves from client hints. */
const AUTO = 'auto';

/** The ops segment of a request with no transformation. */
export const ORIGINAL = 'original';

export interface Negotiation {
  /** The viewer's `Accept` header, used only to resolve `format=auto`. */
  accept?: string;
  /** Whether `format=auto` may choose AVIF. Default true. */
  avif?: boolean;
  /**
   * The viewer's header of a lower-case name, repeated ones joined by commas:
   * `width=auto` and `dpr=auto` read the client hints (`sec-ch-width`,
   * `sec-ch-viewport-width`, `sec-ch-dpr`, `save-data`). No other request does.
   */
  header?: (name: string) => string | undefined;
}

/** A request's key and ops; before negotiation (signatures, the URL helper) the ops may hold `auto`. */
export interface CanonicalRequest<O extends UnresolvedOps = Ops> {
  key: string;
  ops: O;
  /** `/<encoded key>/<ops segment>` */
  uri: string;
}

/** Splits a raw query string into decoded name/value pairs (`+` is a space, as in forms). */
export const splitQuery = (query: string): [string, string][] =>
  query
    .split('&')
    .filter((part) => part !== '')
    .map(queryPair);

/** A raw `name=value` (a query's part, a Cloudflare option) as its decoded name and value; without `=`, the value is empty. */
export const queryPair = (part: string): [string, string] => {
  const eq = part.indexOf('=');
  return eq < 0 ? [decodeQueryComponent(part), ''] : [decodeQueryComponent(part.slice(0, eq)), decodeQueryComponent(part.slice(eq + 1))];
};

/** A query name or value decoded: `+` is a space; a malformed escape is refused. */
export const decodeQueryComponent = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch (_malformed) {
    throw grammarError('invalid_parameter', say('query', text.slice(0, 40)));
  }
};

export const hasOwn = (object: object, name: string) => ({}).hasOwnProperty.call(object, name);

/**
 * Every op under its canonical name, canonical-only ones included: the names a
 * canonical URI may use. Made per call rather than at load, so that the edge
 * function, which parses no canonical URI, leaves it out of its bundle.
 */
function canonicalParams(): { [name: string]: Param } {
  const named: { [name: string]: Param } = {};
  PARAMS.forEach((param) => {
    named[param.name] = param;
  });
  return named;
}

/** The refusal of a parameter given twice. */
const repeated = (name: string, value: string) => invalidParameter(name, value, say('repeated', name));

/** The value of the parameter spelled as `spellings` (the first its name), or undefined; throws when it is given twice. */
export const singleValue = (pairs: [string, string][], spellings: string[]): string | undefined => {
  const given = pairs.filter((pair) => spellings.indexOf(pair[0].toLowerCase()) !== -1);
  if (given.length > 1) throw repeated(spellings[0] as string, (given[0] as [string, string])[1]);
  return given.length ? (given[0] as [string, string])[1] : undefined;
};

/** The preset a viewer names (`preset` or `p`), or undefined; throws when one is named twice. */
export const presetName = (pairs: [string, string][]) => singleValue(pairs, PRESET_SPELLINGS);

/** The refusal of a preset the deployment does not define; `names` lists those it does, comma-separated. */
export const unknownPreset = (name: string, names: string) => invalidParameter('preset', name, oneOf(names, 'presets'));

/** The pairs a `preset` parameter stands for, or none. */
const presetPairs = (pairs: [string, string][], options: GrammarOptions): [string, string][] => {
  const name = presetName(pairs);
  if (name == null) return [];
  const presets = options.presets || {};
  if (!hasOwn(presets, name)) throw unknownPreset(name, Object.keys(presets).join(', '));
  const preset = presets[name] as Preset;
  return Object.keys(preset).map((param) => [param, preset[param] as string] as [string, string]);
};

/** A viewer's parameters: all of them (a preset's, overridden by the viewer's own), and the viewer's own. */
export interface ViewerQuery {
  params: ViewerParams;
  own: ViewerParams;
}

/**
 * Parses a viewer's parameters. Names are case-insensitive; unknown names are
 * ignored. A preset's parameters come first and the viewer's own override them.
 */
export const parseViewerQuery = (pairs: [string, string][], options: GrammarOptions): ViewerQuery =>
  parseParams(pairs, options, PARAMS_BY_NAME);

export const parseViewerParams = (pairs: [string, string][], options: GrammarOptions): ViewerParams =>
  parseViewerQuery(pairs, options).params;

/**
 * parseViewerQuery with `named` the spellings a viewer may use, or the ops of
 * a canonical URI with canonicalParams(). Own properties only, so `constructor`
 * is just unknown.
 */
const parseParams = (pairs: [string, string][], options: GrammarOptions, named: { [spelling: string]: Param }): ViewerQuery => {
  // A preset's names are a viewer's spellings; a canonical URI names no preset.
  const paramOf = (pair: [string, string]) => (hasOwn(named, pair[0].toLowerCase()) ? named[pair[0].toLowerCase()] : undefined);
  const params: { [name: string]: unknown } = {};
  // A dialect's function names no preset (dialect-function.ts).
  if (typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT)
    presetPairs(pairs, options).forEach((pair) => {
      const param = paramOf(pair);
      if (param) params[param.name] = param.read(pair[1], options);
    });
  const own: { [name: string]: unknown } = {};
  pairs.forEach((pair) => {
    const param = paramOf(pair);
    if (!param) return;
    if (options.presetsOnly) {
      throw invalidParameter(param.name, pair[1], say('presetsOnly'));
    }
    if (hasOwn(own, param.name)) throw repeated(param.name, pair[1]);
    params[param.name] = own[param.name] = param.read(pair[1], options);
  });
  return { params: params as ViewerParams, own: own as ViewerParams };
};

/** Whether an Accept header accepts a media type (case-insensitive; `q=0` means no). */
const accepts = (accept: string, type: string): boolean =>
  accept
    .toLowerCase()
    .split(',')
    .some((range) => {
      const fields = range.split(';');
      return (fields[0] as string).trim() === type && !fields.slice(1).some((field) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(field));
    });

/**
 * Resolves `format=auto` from Accept: AVIF (with WebP), then WebP, else absent
 * (the source's own family). AVIF only beside WebP, the fallback the origin
 * may choose when AVIF would cost too much.
 */
const negotiateFormat = (negotiation: Negotiation): NegotiatedFormat | undefined => {
  const accept = negotiation.accept || '';
  if (!accepts(accept, 'image/webp')) return undefined;
  return negotiation.avif !== false && accepts(accept, 'image/avif') ? 'avif' : 'webp';
};

/** Snaps a size up to the next allowed one (sizes ascending). */
const snap = (name: string, value: number, sizes: number[]): number => {
  const size = sizes.filter((allowed) => allowed >= value)[0];
  if (size == null) throw invalidParameter(name, String(value), say('largest', sizes[sizes.length - 1]));
  return size;
};

/**
 * `<name>.<version>` for a watermark or template the deployment names; a
 * version the viewer wrote (a word after a `.`) is replaced. Nothing else is
 * cut off: the value is signed as written, so a value holding `,quality=30`
 * would be the signed text of `watermark=...&quality=30` without its quality.
 */
const versioned = (param: string, value: string, names: { [name: string]: string }, what: 'watermarks' | 'templates'): string => {
  const name = value.replace(/\.\w*$/, '');
  if (!hasOwn(names, name)) throw invalidParameter(param, name, oneOf(Object.keys(names).join(', '), what));
  return name + '.' + names[name];
};

/** The ops that are sizes: `dpr` multiplies them, and the deployment's sizes bound them. */
const SIDES = ['width', 'height'] as const;

/** Folds `dpr` into the dimensions, keeping them within maxDimension and the aspect ratio. */
const applyDpr = (ops: Ops, dpr: number, maxDimension: number): void => {
  const scale = Math.min(dpr, maxDimension / Math.max(ops.width || 0, ops.height || 0));
  SIDES.forEach((side) => {
    if (ops[side] != null) ops[side] = Math.max(1, Math.round((ops[side] as number) * scale));
  });
};

type Header = (name: string) => string | undefined;
const noHeader: Header = () => undefined;

/** The ops while they are worked out: the viewer's `dpr` among them until it is folded in. */
type WorkingOps = Omit<UnresolvedOps, 'dpr'> & { dpr?: number | 'auto'; [name: string]: unknown };

/** The client hint `Sec-CH-<name>`'s number, else 0: absent, not a plain number (`1e3`, `-1`), or a list (sent twice: `390,390`). */
const hint = (header: Header, name: string): number => {
  const value = header('sec-ch-' + name) as string;
  return /^\d+(\.\d+)?$/.test(value) ? +value : 0;
};

/**
 * Resolves `width=auto` and `dpr=auto` from the client hints, in place. The
 * width is `Sec-CH-Width` (device pixels already), else `Sec-CH-Viewport-Width`
 * times the DPR, else AUTO_FALLBACK_WIDTH, snapped up to the sizes (or
 * AUTO_WIDTHS) and held within the largest and maxDimension. `dpr=auto` is
 * `Sec-CH-DPR` rounded up to a half, or 1 without it. `Save-Data: on` sets a
 * quality not given to SAVE_DATA_QUALITY. So no hint makes a variant that
 * explicit parameters could not.
 */
const resolveHints = (ops: WorkingOps, options: GrammarOptions, header: Header): void => {
  const dpr = hint(header, 'dpr') || 1;
  const ladder = options.sizes || DATA.autoWidths;
  if (/^on$/i.test(header('save-data') as string) && ops.quality == null) ops.quality = DATA.saveDataQuality;
  if (ops.width !== AUTO) ops.dpr = Math.ceil(dpr * 2) / 2;
  else {
    const wanted = hint(header, 'width') || hint(header, 'viewport-width') * dpr || DATA.autoWidth;
    ops.width = Math.min(snap('width', Math.min(wanted, ladder[ladder.length - 1] as number), ladder), options.maxDimension);
  }
};

/**
 * The canonical ops for a viewer's parameters: aliases resolved, defaults and
 * no-ops dropped. With a negotiation, `format=auto` (or none) becomes `accept`,
 * and `width=auto` and `dpr=auto` are resolved from the client hints; without,
 * `accept` is what `params` say (only a canonical URI can say it) and `auto`
 * stays, as signatures cover it.
 */
// No default parameter values here: cloudfront-js-2.0 lacks them and esbuild cannot lower them.
export function canonicalOps(params: ParsedParams, options: GrammarOptions, negotiation: Negotiation): Ops;
export function canonicalOps(params: ParsedParams, options: GrammarOptions, negotiation?: Negotiation): UnresolvedOps;
export function canonicalOps(params: ParsedParams, options: GrammarOptions, negotiation?: Negotiation): UnresolvedOps {
  // Metadata describes the source, so no other op can change it.
  // (No dialect's function reads it: dialect-function.ts.)
  if ((typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT) && params.format === 'json') return { format: 'json' };
  const ops: WorkingOps = {};
  PARAMS.forEach((param) => {
    (ops as { [name: string]: unknown })[param.name] = params[param.name];
  });
  // A function without client hints reads no `auto` (dialect-function.ts).
  if (typeof EDGE_HINTLESS === 'undefined' || !EDGE_HINTLESS) {
    // Beside width=auto a dpr is already counted in the hinted width.
    if (ops.width === AUTO) ops.dpr = undefined;
    if ((ops.width === AUTO || ops.dpr === AUTO) && negotiation) resolveHints(ops, options, negotiation.header || noHeader);
  }
  const dpr = ops.dpr;
  const sizes = options.sizes;
  // A function that reads no dpr has none to fold (dialect-function.ts).
  if ((typeof EDGE_READS_DPR === 'undefined' || EDGE_READS_DPR) && dpr !== AUTO) {
    ops.dpr = undefined;
    if (dpr && dpr !== 1) applyDpr(ops as Ops, dpr, options.maxDimension);
  }
  SIDES.forEach((side) => {
    // `auto` (before negotiation) is no size yet.
    if (sizes && typeof ops[side] === 'number') ops[side] = snap(side, ops[side] as number, sizes);
  });
  ops.format = params.format === 'auto' ? undefined : params.format;
  if (negotiation) {
    ops.accept = negotiateFormat(negotiation);
    // Versioned with the format: a signature covers the name only, so that a changed watermark or template keeps signed URLs valid.
    if (typeof EDGE_READS_WATERMARK === 'undefined' || EDGE_READS_WATERMARK)
      // Every overlay slot's (`watermark`, `watermark2`...).
      PARAMS.forEach((param) => {
        const name = param.name;
        if (!name.indexOf('watermark') && ops[name] != null)
          (ops as { [name: string]: unknown })[name] = versioned(name, ops[name] as string, options.watermarks || {}, 'watermarks');
      });
    // A deployment without templates refuses every name here, as its origin would.
    if ((typeof EDGE_READS_TEMPLATE === 'undefined' || EDGE_READS_TEMPLATE) && ops.template != null)
      ops.template = versioned('template', ops.template, options.templates || {}, 'templates');
    // The deployment's default written out, like the version: a changed default makes new keys, and signed URLs stay valid.
    if (ops.hdr == null) ops.hdr = options.hdr;
  }
  const canonical: { [name: string]: unknown } = {};
  PARAMS.forEach((param) => {
    const name = param.name;
    if (ops[name] != null && param.matters(ops as Ops)) canonical[name] = ops[name];
  });
  return canonical;
}

/** The ops named by `params` as name/text pairs in PARAMS order, booleans as `1`. */
const opEntries = (ops: UnresolvedOps, params: Param[]): [string, string][] =>
  params
    .filter((param) => ops[param.name as keyof UnresolvedOps] != null)
    .map((param) => {
      const value = ops[param.name as keyof UnresolvedOps];
      return [param.name, value === true ? '1' : String(value)];
    });

/** `width=640,accept=avif`, or `original` when there are no ops. */
export const opsSegment = (ops: UnresolvedOps): string =>
  opEntries(ops, PARAMS)
    // A text is percent-encoded, so that its commas and `=` stay within its op; S3 decodes it in the variant's key.
    // (So are the `text-*` ops' values, which encoding leaves as they are.)
    .map(
      (entry) =>
        entry[0] +
        '=' +
        ((typeof EDGE_READS_TEXT === 'undefined' || EDGE_READS_TEXT) && !entry[0].indexOf('text')
          ? encodeURIComponent(entry[1])
          : entry[1]),
    )
    .join(',') || ORIGINAL;

export const canonicalUri = (key: string, ops: UnresolvedOps): string => encodeKeyPath(key) + '/' + opsSegment(ops);

/** What the edge does to every request: path and query in, one canonical request out. */
export function canonicalRequest(
  path: string,
  pairs: [string, string][],
  options: GrammarOptions,
  negotiation: Negotiation,
): CanonicalRequest;
export function canonicalRequest(
  path: string,
  pairs: [string, string][],
  options: GrammarOptions,
  negotiation?: Negotiation,
): CanonicalRequest<UnresolvedOps>;
export function canonicalRequest(
  path: string,
  pairs: [string, string][],
  options: GrammarOptions,
  negotiation?: Negotiation,
): CanonicalRequest<UnresolvedOps> {
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
    const ops = canonicalRequest('/preset-check.jpg', [['preset', name]], options).ops;
    // The viewer-response function reads `auto` from the URL to add Vary; it cannot see a preset's.
    if (ops.width === 'auto' || ops.dpr) return 'width=auto and dpr=auto belong in the URL beside the preset, not in it.';
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
        // A text (and its `text-*` ops) is percent-encoded there (opsSegment): it is read decoded, as a viewer's is.
        segment.split(/,(?=[a-z][a-z0-9_-]*=|$)/).map((op) => {
          const eq = op.indexOf('=');
          const value = op.slice(eq + 1);
          return [op.slice(0, eq), !op.indexOf('text') ? decodeQueryComponent(value) : value] as [string, string];
        });
  // Re-serialising refuses aliases, defaults, dpr, format=auto, `accept` beside a format
  // and any other spelling. Presets are a viewer's shorthand: a canonical URI holds their expansion.
  const canonicalOptions: GrammarOptions = { maxDimension: options.maxDimension, sizes: options.sizes, fonts: options.fonts };
  const ops = canonicalOps(parseParams(pairs, canonicalOptions, canonicalParams()).params, canonicalOptions);
  const canonical = encodable(uri, () => canonicalUri(key, ops));
  // `auto` is resolved at the edge, never stored.
  if (canonical !== uri || ops.width === 'auto' || ops.dpr) throw notCanonical(uri);
  return { key, ops: ops as Ops, uri: canonical };
}

/** `make()`, or not canonical when it cannot percent-encode a text (a lone surrogate, which no URL's bytes decode to). */
function encodable(uri: string, make: () => string): string {
  try {
    return make();
  } catch (error) {
    if (error instanceof URIError) throw notCanonical(uri);
    throw error;
  }
}

function notCanonical(uri: string) {
  return grammarError('not_canonical', `Not a canonical image URI: "${uri.slice(0, 80)}".`);
}

/**
 * The query parameter that brings a dialect's request to the origin as the
 * viewer sent it: its URI and its query's pairs, `{"uri","pairs"}` as JSON
 * (lambda/edge/viewer-request.ts).
 */
export const DIALECT_REQUEST = 'dialect_request';

/**
 * The longest DIALECT_REQUEST an edge function forwards, encoded: with the
 * canonical URI (a key of at most 1,024 characters, escapes counted as one),
 * within CloudFront's 8,192 bytes for the URL it sends the origin.
 */
export const MAX_DIALECT_REQUEST = 4096;

/**
 * A viewer query that canonicalises to `ops` again. It leaves out what only
 * the edge writes: `accept` is negotiated anew, so it holds for the same
 * Accept header.
 */
export function viewerQuery(ops: UnresolvedOps): string {
  return queryText(opEntries(ops, VIEWER_PARAMS));
}

/** Name/value pairs as a query, names and values percent-encoded. */
export const queryText = (pairs: [string, string][]): string =>
  pairs.map((pair) => encodeURIComponent(pair[0]) + '=' + encodeURIComponent(pair[1])).join('&');
