// imgix's URL grammar, `/<path>?w=640&h=480&fit=crop&crop=faces&s=<md5>`, read
// as ours: the path is the source key, the query imgix's parameters. Each is
// translated by what it does, not by its name (imgix's `fit=clip` is our
// `fit=inside` with `enlarge`: imgix enlarges unless told `max`); what we
// cannot do alike is refused with a 400 naming imgix and the parameter. The
// table of what maps to what, exactly or approximately, is in
// docs/migrating.md ("From imgix"). A name imgix does not define is ignored,
// as imgix ignores it.
//
// Signatures (`s`): the MD5, in hex, of the source's secure URL token, the
// path as sent and the query before `s` with its `?` (imgix's documented
// scheme); `expires` (Unix seconds) is among what it covers.

import crypto from 'crypto';
import { decodeKeyPath } from '../../grammar/key';
import { sameText } from '../../grammar/sign';
import type { Dialect, DialectRequest, SignatureCheck } from './dialect';
import { blurSigma, fitOf, hasOwn, hexColour, lookup, mirrors, refusal, table, type Lookup, type Pairs } from './words';

/**
 * imgix's words, data in one place (the edge reads them from its store,
 * Dialect.useData): the parameters translated here under imgix's main names, their other
 * spellings, and the parameters imgix has that change the image and that we
 * lack (refused rather than ignored, every `…64` base64 form among them; from
 * imgix's list, github.com/imgix/imgix-url-params); fit modes as our fit and
 * whether it enlarges (`+`) (facearea, min and clamp crop or extend as ours does
 * not); formats (`pjpg` is a progressive JPEG, the same pixels); `or` (EXIF
 * values and degrees clockwise) as our rotate; crop strategies as our
 * position (focalpoint: our fp); and auto=compress's quality when none is
 * given (imgix's documented 45); and why a refusal refuses.
 */
export const IMGIX_WORDS = {
  title: 'imgix',
  known: ' w h fit crop fp-x fp-y fp-z auto fm q dpr blur bri con sat bg fill fill-color rot or flip trim ',
  spellings: /* @__PURE__ */ table('width=w height=h f=fit fillcolor=fill-color orient=or'),
  lacked:
    '^([bm][a-z]?|balph|malph|mtile|ar|rect|exp|gam|high|hue|inv(ert)?|mono(chrome)?|nrs?|px|htn|sepia|shad|sharp|usm(rad)?|vib|cs|dl|dpi|lossless|chromasub|colorquant|colors|palette|prefix|page|ch|faceindex|facepad|faces|transparency|corner-radius|annotation|fp-debug|(blend|mark|txt|border|pad|mask|duotone|grid|pdf|max-|min-|trim-|fill-|bg-re|upscale).*|.*64)$',
  fits: /* @__PURE__ */ table('clip=inside+ max=inside crop=cover+ fill=contain+ fillmax=contain scale=fill+'),
  formats: /* @__PURE__ */ table('jpg=jpeg pjpg=jpeg png=png webp=webp avif=avif gif=gif'),
  orientations: /* @__PURE__ */ table('1=0 3=180 6=90 8=270 90=90 180=180 270=270'),
  strategies: /* @__PURE__ */ table('faces=face entropy=entropy focalpoint=fp'),
  compressQuality: '45',
  why: {
    unsupported: 'not supported',
    repeated: 'given more than once',
    relative: 'sizes relative to the source are not supported',
    fallback: 'a fallback after $0 is not supported',
    background: 'a background other than fill-color is not supported',
    hex: 'expected a hex colour',
    offset: 'expected -99 to 100',
    rotation: 'only 0 and 180 turn the image as ours does',
    blur: 'expected 0 to 2000',
  },
};
type ImgixWords = typeof IMGIX_WORDS;

/** The words in use: this code's, or at the edge its store's (useData; the bundle drops statements labelled `fromCode`). */
let WORDS: ImgixWords;
fromCode: WORDS = IMGIX_WORDS;

const refused = refusal(() => WORDS);

/** The query's imgix parameters under their main names; `auto`, which imgix lets repeat, joined by commas. */
const readParams = (pairs: Pairs): Lookup => {
  const params: { [name: string]: string } = {};
  pairs.forEach((pair) => {
    const spelling = pair[0].toLowerCase();
    const name = hasOwn(WORDS.spellings, spelling) ? (WORDS.spellings[spelling] as string) : spelling;
    if (WORDS.known.indexOf(' ' + name + ' ') < 0) {
      if (RegExp(WORDS.lacked).test(name)) throw refused(pair[0], pair[1]);
      return;
    }
    if (hasOwn(params, name) && name !== 'auto') throw refused(pair[0], pair[1], 'repeated');
    params[name] = hasOwn(params, name) ? params[name] + ',' + pair[1] : pair[1];
  });
  return lookup(params);
};

/** A size: imgix's fractions of the source (`w=0.5`) are refused, pixels passed on. */
const size = (get: Lookup, name: string, out: Pairs, native: string) => {
  const value = get(name);
  if (value == null) return;
  if (/\./.test(value)) throw refused(name, value, 'relative');
  out.push([native, value]);
};

/** `crop` (with fit=crop): a strategy (faces, entropy, focalpoint with fp-x and fp-y) or sides (top,left). */
const cropping = (get: Lookup, out: Pairs) => {
  const crop = get('crop');
  if (crop == null) return;
  // At most two words mean anything (a strategy alone, or two sides): the third says the list is refused.
  const words = crop.toLowerCase().split(',', 3);
  const strategy = hasOwn(WORDS.strategies, words[0] as string) ? WORDS.strategies[words[0] as string] : undefined;
  if (strategy && words.length > 1) throw refused('crop', crop, 'fallback', words[0]);
  if (strategy === 'fp') {
    const zoom = get('fp-z');
    if (zoom != null && +zoom !== 1) throw refused('fp-z', zoom);
    out.push(['fp', (get('fp-x') || '0.5') + ',' + (get('fp-y') || '0.5')]);
    return;
  }
  if (strategy) {
    out.push(['position', strategy]);
    return;
  }
  // One side of each axis at most, in either order.
  const sides = /^(?:(top|bottom)(?:,(left|right))?|(left|right)(?:,(top|bottom))?)$/.exec(words.join());
  if (!sides) throw refused('crop', crop);
  out.push(['position', [sides[1] || sides[4], sides[2] || sides[3]].filter((side) => side).join('-')]);
};

/** `fit` (default clip), its crop, and what fills the rest of fit=fill's box (fill, fill-color, else white as imgix). */
const fitting = (get: Lookup, out: Pairs) => {
  const fit = (get('fit') || 'clip').toLowerCase();
  const ours = fitOf(WORDS.fits, fit);
  if (!ours) throw refused('fit', fit);
  out.push(['fit', ours[0]]);
  if (ours[1]) out.push(['enlarge', '1']);
  if (fit === 'crop') cropping(get, out);
  const padded = ours[0] === 'contain';
  const fill = get('fill');
  const bg = get('bg');
  if (padded && fill === 'blur') out.push(['fill', 'blur']);
  else if (padded && fill != null && fill !== 'solid') throw refused('fill', fill);
  const fillColour = padded && fill !== 'blur' ? get('fill-color') || bg || 'fff' : undefined;
  if (fillColour != null && bg != null && hexColour(bg, true) !== hexColour(fillColour, true)) {
    throw refused('bg', bg, 'background');
  }
  const colour = fillColour || bg;
  if (colour == null) return;
  const hex = hexColour(colour, true);
  if (hex == null) throw refused(fillColour ? 'fill-color' : 'bg', colour, 'hex');
  out.push(['background', hex]);
};

/** `auto` (format: negotiated; compress: quality 45 unless q), `fm` and `q`. */
const encoding = (get: Lookup, out: Pairs) => {
  const auto = (get('auto') || '')
    .toLowerCase()
    .split(',')
    .filter((word) => word !== '');
  auto.forEach((word) => {
    if (word !== 'format' && word !== 'compress') throw refused('auto', word);
  });
  const fm = get('fm');
  if (fm != null) {
    if (!hasOwn(WORDS.formats, fm.toLowerCase())) throw refused('fm', fm);
    out.push(['format', WORDS.formats[fm.toLowerCase()] as string]);
  } else if (auto.indexOf('format') >= 0) out.push(['format', 'auto']);
  const quality = get('q') || (auto.indexOf('compress') >= 0 ? WORDS.compressQuality : undefined);
  if (quality != null) out.push(['quality', quality]);
};

/** bri, con, sat: offsets -100..100, 0 unchanged, as our factors 0..2 (1 unchanged); -100 is black or flat, which our 0 is not (ignored). */
const adjustment = (get: Lookup, name: string, out: Pairs, native: string) => {
  const value = get(name);
  if (value == null) return;
  const offset = /^-?\d{1,3}$/.test(value) ? +value : NaN;
  if (!(offset >= -100 && offset <= 100) || (offset === -100 && native !== 'saturation')) throw refused(name, value, 'offset');
  out.push([native, String((100 + offset) / 100)]);
};

/** `or` (the frame turned) and `rot` (the image turned within its frame, counter-clockwise, zoomed to cover it): half turns alike, quarter turns by `or` only. */
const turning = (get: Lookup, out: Pairs) => {
  const or = get('or');
  const orientation = or == null ? 0 : hasOwn(WORDS.orientations, or) ? +(WORDS.orientations[or] as string) : -1;
  if (orientation < 0) throw refused('or', or as string);
  const rotation = get('rot');
  const rot = rotation == null ? 0 : +rotation;
  if (rot !== 0 && rot !== 180) throw refused('rot', rotation as string, 'rotation');
  if (orientation + rot) out.push(['rotate', String((orientation + rot) % 360)]);
  return orientation % 180;
};

const finishing = (get: Lookup, out: Pairs) => {
  // imgix turns the frame (or) before it mirrors, we after: a quarter turn swaps the mirrors.
  const quarter = turning(get, out);
  const flip = get('flip');
  if (flip != null) {
    const flips = mirrors(flip.toLowerCase(), quarter);
    if (!flips) throw refused('flip', flip);
    flips.forEach((pair) => out.push(pair));
  }
  const trim = get('trim');
  if (trim != null) {
    if (trim.toLowerCase() !== 'auto') throw refused('trim', trim);
    out.push(['trim', '']);
  }
  const blur = get('blur');
  if (blur != null && +blur !== 0) {
    const sigma = blurSigma(blur, 20, 2000);
    if (sigma == null) throw refused('blur', blur, 'blur');
    out.push(['blur', sigma]);
  }
  adjustment(get, 'bri', out, 'brightness');
  adjustment(get, 'con', out, 'contrast');
  adjustment(get, 'sat', out, 'saturation');
};

/**
 * What imgix signed: the path as sent and the query before `s`, every pair but
 * `s` in order as `?a=b&c=d` (nothing when none), in the two ways a signed
 * query is commonly written: every reserved character escaped (imgix's
 * libraries), or with commas as they are (`auto=format,compress` written by
 * hand). CloudFront hands the function decoded values, so these are rebuilt;
 * a query signed in any other spelling (`+` for a space, lower-case escapes)
 * does not verify.
 */
const signedTexts = (request: DialectRequest): string[] => {
  const query = request.pairs
    .filter((pair) => pair[0] !== 's')
    .map((pair) => encodeURIComponent(pair[0]) + '=' + encodeURIComponent(pair[1]));
  const text = request.uri + (query.length ? '?' + query.join('&') : '');
  // An escaped comma is %2C wherever it is, and `=` and `&` are none.
  return [text, text.replace(/%2C/g, ',')];
};

export const imgix: Dialect = {
  translate: (request: DialectRequest) => {
    const get = readParams(request.pairs);
    const out: Pairs = [];
    size(get, 'w', out, 'width');
    size(get, 'h', out, 'height');
    const dpr = get('dpr');
    if (dpr != null) out.push(['dpr', dpr]);
    fitting(get, out);
    encoding(get, out);
    finishing(get, out);
    return { key: decodeKeyPath(request.uri), pairs: out };
  },
  verify: (request: DialectRequest, secrets: string[], nowSeconds: number): SignatureCheck => {
    const signatures = request.pairs.filter((pair) => pair[0] === 's');
    if (signatures.length === 0) return 'unsigned';
    const signature = (signatures[0] as [string, string])[1].toLowerCase();
    const texts = signedTexts(request);
    // Every secret and spelling is tried whatever the outcome, so timing tells nothing.
    const matches = secrets.filter(
      (secret) =>
        texts.filter((text) =>
          sameText(
            crypto
              .createHash('md5')
              .update(secret + text)
              .digest('hex') as string,
            signature,
          ),
        ).length > 0,
    );
    if (signatures.length > 1 || matches.length === 0) return 'invalid';
    const expires = request.pairs.filter((pair) => pair[0] === 'expires')[0];
    return expires && !(+expires[1] > nowSeconds) ? 'expired' : 'valid';
  },
  useData: (data) => {
    WORDS = data as ImgixWords;
  },
};
