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
import { queryText } from '../../grammar/canonical';
import { decodeKeyPath } from '../../grammar/key';
import { sameText } from '../../grammar/sign';
import type { Dialect, DialectRequest, SignatureCheck } from './dialect';
import { hexRules, translateByRules, type Rule, type RuleBook } from './rules';

// Conditions of imgix's rules: a frame turned by a quarter (`or`), under which imgix's
// mirrors swap; a padded image (fit=fill or fillmax), whose rest fill-color, else bg,
// else white fills, unless fill=blur.
const QUARTER = 'or=6|8|90|270';
const PADDED = 'fit=fill|fillmax';
const SOLID = 'fill=|solid';
/** Values: an offset from -99 to 100 (-100, black or flat, is not ours); a blur radius up to 2000. */
const OFFSET = '-?\\d\\d?|100';
const RADIUS = '1?\\d{1,3}(\\.\\d+)?|2000';
/** A whole number of pixels; and the rule that drops a text parameter beside no text. */
const PIXELS = '\\d{1,4}';
const NO_TEXT: Rule = ['.*', '', 'txt='];

/**
 * imgix's rules (rules.ts), data in one place: the edge reads them from its
 * store (Dialect.useData). Other spellings; the parameters imgix has that
 * change the image and that we lack (refused rather than ignored, every
 * `…64` base64 form among them; from imgix's list,
 * github.com/imgix/imgix-url-params); and what each value of the others is
 * in ours. fit: our fit, enlarged unless `max` (facearea, min and clamp crop
 * or extend as ours does not); `or` (EXIF values and degrees clockwise) and
 * `rot` (half turns only) sum to our rotate; `pjpg` is a progressive JPEG,
 * the same pixels; crop strategies (with fit=crop) as our position
 * (focalpoint: our fp; auto, its subject crop, our auto; edges and object
 * classes refused, docs/subjects.md); auto=compress is imgix's documented quality 45 when
 * no `q` is given; bri, con and sat are offsets (0 unchanged) as our factors
 * (1 unchanged), and -100 brightness or contrast, black or flat, is not ours;
 * bg-remove is our cut-out (segment=foreground), and bg its background;
 * txt and its family are our text, with imgix's defaults (12 px, 10 px from
 * the bottom right) and without what ours cannot draw alike (a line cut at
 * txt-width, text shrunk to fit, italic, outlines).
 * Built by a call the edge's bundle drops: the store holds the book.
 */
export const IMGIX_BOOK: RuleBook = /* @__PURE__ */ (() => ({
  title: 'imgix',
  spellings: {
    width: 'w',
    height: 'h',
    f: 'fit',
    fillcolor: 'fill-color',
    orient: 'or',
    'background-remove': 'bg-remove',
    txtalign: 'txt-align',
    txtclip: 'txt-clip',
    txtcolor: 'txt-color',
    'txt-clr': 'txt-color',
    txtclr: 'txt-color',
    txtfit: 'txt-fit',
    txtfont: 'txt-font',
    txtpad: 'txt-pad',
    txtshad: 'txt-shad',
    txtsize: 'txt-size',
    txtwidth: 'txt-width',
  },
  refused:
    '^([bm][a-z]?|balph|malph|mtile|ar|rect|exp|gam|high|hue|inv(ert)?|mono(chrome)?|nrs?|px|htn|sepia|shad|sharp|usm(rad)?|vib|cs|dl|dpi|lossless|chromasub|colorquant|colors|palette|prefix|page|ch|faceindex|facepad|faces|transparency|corner-radius|annotation|fp-debug|t(a|cl?|f|l|p|sh|sz|t)?|lp-blur|fps|frame|interval|reverse|skip|rott|rasterize-bypass|(blend|mark|txt|border|pad|mask|duotone|grid|pdf|max-|min-|trim.|fill-|bg-re|background-re|upscale|face-|license-plate|object-removal|rot-?type).*|.*64)$',
  defaults: { fit: 'clip', 'txt-size': '12', 'txt-pad': '10', 'txt-align': 'bottom,right' },
  list: 'auto',
  rules: {
    w: [
      ['[^.]*\\.[\\s\\S]*', '!relative'],
      ['.*', 'width=$0'],
    ],
    h: [
      ['[^.]*\\.[\\s\\S]*', '!relative'],
      ['.*', 'height=$0'],
    ],
    dpr: [['.*', 'dpr=$0']],
    fit: [
      ['clip', 'fit=inside&enlarge=1'],
      ['max', 'fit=inside'],
      ['crop', 'fit=cover&enlarge=1'],
      ['scale', 'fit=fill&enlarge=1'],
      ['fill', 'fit=contain&enlarge=1&background=fff', SOLID, 'fill-color=', 'bg='],
      ['fill', 'fit=contain&enlarge=1'],
      ['fillmax', 'fit=contain&background=fff', SOLID, 'fill-color=', 'bg='],
      ['fillmax', 'fit=contain'],
    ],
    crop: [
      // Faces, else the subject: what our auto does.
      ['faces,auto', 'position=auto', 'fit=crop'],
      // At most one strategy means anything: a list after one is refused.
      ['(faces|entropy|focalpoint|auto),.*', '!fallback', 'fit=crop'],
      ['faces', 'position=face', 'fit=crop'],
      ['entropy', 'position=entropy', 'fit=crop'],
      ['auto', 'position=auto', 'fit=crop'],
      ['focalpoint', 'fp=$1,$2', 'fit=crop', 'fp-x=(.+)', 'fp-y=(.+)'],
      ['focalpoint', 'fp=$1,0.5', 'fit=crop', 'fp-x=(.+)'],
      ['focalpoint', 'fp=0.5,$1', 'fit=crop', 'fp-y=(.+)'],
      ['focalpoint', 'fp=0.5,0.5', 'fit=crop'],
      // One side of each axis at most, in either order.
      ['(top|bottom),(left|right)', 'position=$1-$2', 'fit=crop'],
      ['(left|right),(top|bottom)', 'position=$2-$1', 'fit=crop'],
      ['top|bottom|left|right', 'position=$0', 'fit=crop'],
      ['.*', '!', 'fit=crop'],
      ['.*', ''],
    ],
    'fp-x': [['.*', '']],
    'fp-y': [['.*', '']],
    'fp-z': [
      ['1', ''],
      ['.*', '!', 'crop=focalpoint', 'fit=crop'],
      ['.*', ''],
    ],
    fill: [
      ['blur', 'fill=blur', PADDED],
      ['solid', ''],
      ['.*', '!', PADDED],
      ['.*', ''],
    ],
    'fill-color': hexRules('background', true, [PADDED, SOLID]).concat([
      ['.*', '!hex', PADDED, SOLID],
      ['.*', ''],
    ]),
    bg: [['.*', '!background', PADDED, SOLID, 'fill-color=.+']].concat(hexRules('background', true, []), [['.*', '!hex']]),
    auto: [
      ['format', 'format=auto', 'fm='],
      ['compress', 'quality=45', 'q='],
      ['format|compress|', ''],
    ],
    fm: [
      ['jpg|pjpg', 'format=jpeg'],
      ['png|webp|avif|gif', 'format=$0'],
    ],
    q: [
      ['.+', 'quality=$0'],
      ['', ''],
    ],
    // The frame turned (or) and the image turned within it (rot): one turn, written where rot is.
    or: [
      ['1|3|6|8|90|180|270', '', 'rot=180'],
      ['1', ''],
      ['3|180', 'rotate=180'],
      ['6|90', 'rotate=90'],
      ['8|270', 'rotate=270'],
    ],
    rot: [
      ['0', ''],
      ['180', 'rotate=180', 'or=|1'],
      ['180', 'rotate=270', 'or=6|90'],
      ['180', 'rotate=90', 'or=8|270'],
      ['180', ''],
      ['.*', '!rotation'],
    ],
    // imgix turns the frame (or) before it mirrors, we after: a quarter turn swaps the mirrors.
    flip: [
      ['h', 'flip=1', QUARTER],
      ['h', 'flop=1'],
      ['v', 'flop=1', QUARTER],
      ['v', 'flip=1'],
      ['hv|vh', 'flip=1&flop=1'],
    ],
    trim: [['auto', 'trim=']],
    blur: [
      ['0*(\\.0*)?', ''],
      [RADIUS, 'blur=sigma($0,20)'],
      ['.*', '!blur'],
    ],
    // A cut-out that cannot be made is an error here: imgix's fallback to the original is not ours.
    'bg-remove': [
      ['true|1', 'segment=foreground'],
      ['false|0', ''],
    ],
    'bg-remove-fallback': [
      ['false|0', ''],
      ['true|1', '!original', 'bg-remove=true|1'],
      ['true|1', ''],
    ],
    bri: [
      [OFFSET, 'brightness=factor($0)'],
      ['.*', '!offset'],
    ],
    con: [
      [OFFSET, 'contrast=factor($0)'],
      ['.*', '!offset'],
    ],
    sat: [
      [OFFSET + '|-100', 'saturation=factor($0)'],
      ['.*', '!offset'],
    ],
    // Text: its parameters mean nothing without txt, as imgix ignores them then.
    txt: [['.*', 'text=$0']],
    'txt-size': [NO_TEXT, [PIXELS, 'text-size=$0'], ['.*', '!pixels']],
    'txt-color': [NO_TEXT as Rule].concat(hexRules('text-color', true, []), [['.*', '!hex']]),
    'txt-font': [NO_TEXT, ['[^,]*,(bold,)?italic(,bold)?', '!italic'], ['[^,]*,bold', 'text-font=sans-bold'], ['[^,]*', 'text-font=sans']],
    // Each axis alone keeps the default's other (bottom, right); the horizontal word also aligns the lines.
    'txt-align': [
      NO_TEXT,
      ['(top|bottom),(left|right)', 'text-position=$1-$2&text-align=$2'],
      ['(left|right),(top|bottom)', 'text-position=$2-$1&text-align=$1'],
      ['(top|bottom),center|center,(top|bottom)', 'text-position=$1$2&text-align=center'],
      ['middle,(left|right)|(left|right),middle', 'text-position=$1$2&text-align=$1$2'],
      ['middle,center|center,middle', 'text-position=center&text-align=center'],
      ['top|bottom', 'text-position=$0-right&text-align=right'],
      ['left|right', 'text-position=bottom-$0&text-align=$0'],
      ['middle', 'text-position=right&text-align=right'],
      ['center', 'text-position=bottom&text-align=center'],
      ['.*', '!align'],
    ],
    'txt-pad': [NO_TEXT, [PIXELS, 'text-pad=$0'], ['.*', '!pixels']],
    // imgix's soft halo of strength 0 to 10, as our shadow of as many pixels.
    'txt-shad': [NO_TEXT, ['0*(\\.0*)?', ''], ['(\\d|10)(\\.\\d*)?', 'text-shadow=$1'], ['.*', '!unsupported']],
    'txt-width': [NO_TEXT, [PIXELS, 'text-width=$0', 'txt-fit=wrap'], [PIXELS, '!clipped', 'txt-fit='], [PIXELS, ''], ['.*', '!pixels']],
    'txt-fit': [NO_TEXT, ['wrap', ''], ['max|wrapmax', '!shrunk']],
    // What is cut only matters where a line is cut, which txt-width refuses.
    'txt-clip': [['.*', '']],
  },
  why: {
    unsupported: 'not supported',
    align: 'expected top, middle or bottom and left, center or right',
    italic: 'italic is not among the packaged fonts',
    clipped: 'a line cut at txt-width is not supported; txt-fit=wrap wraps it',
    shrunk: 'text shrunk to fit is not supported (card templates shrink theirs)',
    pixels: 'expected whole pixels',
    repeated: 'given more than once',
    relative: 'sizes relative to the source are not supported',
    fallback: 'a fallback after $1 is not supported',
    background: 'a background beside fill-color is not supported',
    hex: 'expected a hex colour',
    offset: 'expected -99 to 100',
    rotation: 'only 0 and 180 turn the image as ours does',
    blur: 'expected 0 to 2000',
    original: 'a cut-out that cannot be made is an error here, never the original',
  },
}))();

/** The rules in use: this code's, or at the edge its store's (useData; the bundle drops statements labelled `fromCode`). */
let BOOK: RuleBook;
fromCode: BOOK = IMGIX_BOOK;

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
  const query = queryText(request.pairs.filter((pair) => pair[0] !== 's'));
  const text = request.uri + (query ? '?' + query : '');
  // An escaped comma is %2C wherever it is, and `=` and `&` are none.
  return [text, text.replace(/%2C/g, ',')];
};

export const imgix: Dialect = {
  translate: (request: DialectRequest) => ({ key: decodeKeyPath(request.uri), pairs: translateByRules(BOOK, request.pairs) }),
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
    if (signatures.length > 1 || matches.length === 0) return 'badSignature';
    const expires = request.pairs.filter((pair) => pair[0] === 'expires')[0];
    return expires && !(+expires[1] > nowSeconds) ? 'expired' : 'valid';
  },
  useData: (data) => {
    BOOK = data as RuleBook;
  },
};
