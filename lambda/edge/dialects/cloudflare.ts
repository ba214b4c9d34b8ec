// Cloudflare's URL grammar, `/cdn-cgi/image/<options>/<source>`, read as
// ours: the options are comma-separated `name=value` (full or short names),
// the source a path or an absolute URL. Each option is translated by what it
// does (Cloudflare's default `fit=scale-down` is our `fit=inside` without
// `enlarge`); what we cannot do alike is refused with a 400 naming
// Cloudflare and the option. The table is in docs/migrating.md ("From
// Cloudflare Images").
//
// An absolute source, `https://<host>/<path>`, reads as the key
// `<host>/<path>`: a deployment serves it by declaring a web origin for the
// prefix `<host>/` (`webOrigins`); without one the key is looked for in the
// bucket like any other. So no URL reaches a host the deployment did not name.
//
// Cloudflare's URLs carry no signature: verify says `unsigned`, so a
// deployment that signs refuses them.

import { grammarError } from '../../grammar/errors';
import { decodeKeyPath } from '../../grammar/key';
import type { Dialect, DialectRequest } from './dialect';
import { blurSigma, fitOf, hasOwn, hexColour, lookup, mirrors, refusal, table, type Lookup, type Pairs } from './words';

const CLOUDFLARE_PREFIX = '/cdn-cgi/image/';

/**
 * Cloudflare's words, data in one place (the edge reads them from its
 * store, Dialect.useData): short names as the full ones; options passed on as they are,
 * under the same name (our grammar reads and bounds them); fit modes as our
 * fit and whether it enlarges (`+`) (aspect-crop crops small sources to the aspect
 * ratio, which ours does not); gravity words as our position (auto: our
 * saliency crop); formats as ours (baseline-jpeg: the same pixels, sequential
 * rather than progressive); options that change nothing we serve
 * (`onerror=redirect` acts only when the transform fails, `anim=true` and
 * `zoom=0` are the defaults); and more options than Cloudflare has names for,
 * which is no request of theirs; and why a refusal refuses.
 */
export const CLOUDFLARE_WORDS = {
  title: 'cloudflare',
  short: /* @__PURE__ */ table('w=width h=height g=gravity q=quality f=format'),
  same: ' width height dpr quality brightness contrast saturation metadata ',
  fits: /* @__PURE__ */ table('scale-down=inside contain=inside+ cover=cover+ crop=cover pad=contain+ squeeze=fill+'),
  gravities: /* @__PURE__ */ table('auto=attention face=face center=center left=left right=right top=top bottom=bottom'),
  formats: /* @__PURE__ */ table('auto=auto avif=avif webp=webp jpeg=jpeg baseline-jpeg=jpeg png=png'),
  harmless: '^(onerror=redirect|anim=true|zoom=0)$',
  why: {
    unsupported: 'not supported',
    repeated: 'given more than once',
    options: 'more than $0 options',
    encoding: 'not valid percent-encoded UTF-8',
    blur: 'expected 1 to 250',
    hex: 'expected a hex colour',
    source: "a source URL's query cannot be kept",
  },
  maxOptions: 32,
};
/** The words in use: this code's, or at the edge its store's (useData; the bundle drops statements labelled `fromCode`). */
let WORDS: typeof CLOUDFLARE_WORDS;
fromCode: WORDS = CLOUDFLARE_WORDS;

type Options = { [name: string]: string };
const refused = refusal(() => WORDS);

/** The options segment read by name; each option percent-decoded on its own, so an encoded comma stays in its value. */
const readOptions = (segment: string): Options => {
  const options: Options = {};
  const parts = segment.split(',');
  if (parts.length > WORDS.maxOptions) throw refused('options', segment, 'options', String(WORDS.maxOptions));
  parts.forEach((part) => {
    let option: string;
    try {
      option = decodeURIComponent(part);
    } catch (_malformed) {
      throw refused('options', part, 'encoding');
    }
    const eq = option.indexOf('=');
    const written = (eq < 0 ? option : option.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? '' : option.slice(eq + 1);
    const name = hasOwn(WORDS.short, written) ? (WORDS.short[written] as string) : written;
    if (RegExp(WORDS.harmless).test(name + '=' + value)) return;
    if (hasOwn(options, name)) throw refused(written, value, 'repeated');
    options[name] = value;
  });
  return options;
};

/** What fit, gravity and flip become; Cloudflare mirrors before it turns, as we do. */
const geometry = (get: Lookup, out: Pairs) => {
  const fit = get('fit') || 'scale-down';
  const ours = fitOf(WORDS.fits, fit);
  if (!ours) throw refused('fit', fit);
  out.push(['fit', ours[0]]);
  if (ours[1]) out.push(['enlarge', '1']);
  const gravity = get('gravity');
  // Cloudflare places only crops by gravity.
  if (gravity != null && ours[0] === 'cover') {
    const point = /^([\d.]+)x([\d.]+)$/.exec(gravity);
    if (point) out.push(['fp', point[1] + ',' + point[2]]);
    else if (hasOwn(WORDS.gravities, gravity)) out.push(['position', WORDS.gravities[gravity] as string]);
    else throw refused('gravity', gravity);
  }
  const rotate = get('rotate');
  const flip = get('flip');
  if (rotate != null) out.push(['rotate', rotate]);
  if (flip != null) {
    const flips = mirrors(flip);
    if (!flips) throw refused('flip', flip);
    flips.forEach((pair) => out.push(pair));
  }
};

/** The other options: formats, blur and sharpen, background, gamma; anything else is refused. */
const finishing = (options: Options, out: Pairs) => {
  Object.keys(options).forEach((name) => {
    const value = options[name] as string;
    if (WORDS.same.indexOf(' ' + name + ' ') >= 0) out.push([name, value]);
    else if (name === 'format') {
      if (!hasOwn(WORDS.formats, value)) throw refused(name, value);
      out.push([name, WORDS.formats[value] as string]);
    } else if (name === 'blur') {
      const sigma = blurSigma(value, 2.5, 250);
      if (sigma == null) throw refused(name, value, 'blur');
      out.push([name, sigma]);
    } else if (name === 'background') {
      const hex = hexColour(value, false);
      if (hex == null) throw refused(name, value, 'hex');
      out.push([name, hex]);
    } else if (name === 'sharpen' || name === 'gamma') {
      // 0 is no sharpening, and a gamma Cloudflare ignores.
      if (+value !== 0) out.push([name, value]);
    } else if (' fit gravity rotate flip '.indexOf(' ' + name + ' ') < 0) throw refused(name, value);
  });
};

export const cloudflare: Dialect = {
  translate: (request: DialectRequest) => {
    const uri = request.uri;
    const slash = uri.indexOf('/', CLOUDFLARE_PREFIX.length);
    if (uri.indexOf(CLOUDFLARE_PREFIX) !== 0 || slash < 0) {
      throw grammarError('invalid_key', 'Invalid Cloudflare URL: expected ' + CLOUDFLARE_PREFIX + '<options>/<source>.');
    }
    const options = readOptions(uri.slice(CLOUDFLARE_PREFIX.length, slash));
    const out: Pairs = [];
    geometry(lookup(options), out);
    finishing(options, out);
    // An absolute source `https://host/path` (any slashes, any letter case, or encoded) is the key `host/path`.
    const source = uri.slice(slash).replace(/^\/https?(:|%3a)(\/|%2f)+/i, '/');
    if (source !== uri.slice(slash) && request.pairs.length) {
      throw refused('source', uri.slice(slash), 'source');
    }
    return { key: decodeKeyPath(source), pairs: out };
  },
  verify: () => 'unsigned',
  useData: (data) => {
    WORDS = data as typeof CLOUDFLARE_WORDS;
  },
};
