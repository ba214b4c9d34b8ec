// The examples of imgix's and Cloudflare's own public documentation, each with
// where it came from and the native URL that means the same image (or the
// refusal we answer instead), and how a dialect URL is taken to its canonical
// URI the way the edge does it: the dialect translates, the native grammar
// canonicalises. Exported for the tests that serve them through the emulator.

import type { Dialect } from '../../../lambda/edge/dialects/dialect';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  canonicalOps,
  canonicalRequest,
  canonicalUri,
  parseViewerQuery,
  splitQuery,
  type GrammarOptions,
  type Negotiation,
} from '../../../lambda/grammar/index';

export interface DialectExample {
  /** Where the example is documented. */
  source: string;
  /** The dialect's URL: path and query, as a viewer sends it. */
  url: string;
  /** The native URL for the same image (path and query); absent when refused. */
  native?: string;
  /** What the refusal's message says, when the example is refused. */
  refused?: RegExp;
}

const [pathOf, queryOf] = [(url: string) => url.split('?')[0]!, (url: string) => url.split('?').slice(1).join('?')];

/** The canonical URI the edge rewrites a native URL to. */
export function nativeCanonicalUri(url: string, options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS, negotiation: Negotiation = {}): string {
  return canonicalRequest(pathOf(url), splitQuery(queryOf(url)), options, negotiation).uri;
}

/** The canonical URI the edge rewrites a dialect URL to: translated, then read by the native grammar. */
export function dialectCanonicalUri(
  dialect: Dialect,
  url: string,
  options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS,
  negotiation: Negotiation = {},
): string {
  const native = dialect.translate({ uri: pathOf(url), pairs: splitQuery(queryOf(url)) });
  return canonicalUri(native.key, canonicalOps(parseViewerQuery(native.pairs, options).params, options, negotiation));
}

const IMGIX_FIT = 'https://docs.imgix.com/apis/rendering/size/resize-fit-mode';
const IMGIX_CROP = 'https://docs.imgix.com/en-US/apis/rendering/size/crop-mode';
/** The crop page as it stands since imgix added its subject crop, `crop=auto` (and COCO object classes). */
const IMGIX_CROP_AUTO = 'https://docs.imgix.com/en-US/apis/rendering/size/crop';
const IMGIX_AUTO = 'https://docs.imgix.com/apis/rendering/auto/auto';
const IMGIX_FILL_MAX = 'https://docs.imgix.com/apis/rendering/fill/fill-max';
const IMGIX_BG_REMOVE = 'https://docs.imgix.com/apis/rendering/background/bg-remove';
const IMGIX_BG_REMOVE_FALLBACK = 'https://docs.imgix.com/apis/rendering/background/background-removal-fallback';
const IMGIX_TXT = 'https://docs.imgix.com/apis/url/text/txt';
const IMGIX_TXT_ALIGN = 'https://docs.imgix.com/apis/url/text/txtalign';
const IMGIX_TXT_FONT = 'https://docs.imgix.com/apis/url/text/txtfont';
const IMGIX_TXT_FIT = 'https://docs.imgix.com/apis/url/text/txt-fit';
/** What imgix's txt means when nothing else is said: 12 px, 10 px from the bottom right corner. */
const IMGIX_TXT_DEFAULTS = 'text-size=12&text-pad=10&text-position=bottom-right&text-align=right';
const IMGIX_BLUEPRINT = 'https://github.com/imgix/imgix-blueprint#url-parameters';
const IMGIX_PYTHON = 'https://github.com/imgix/imgix-python#signed-urls';

export const IMGIX_EXAMPLES: DialectExample[] = [
  { source: IMGIX_BLUEPRINT, url: '/users/1.png?w=400&h=300', native: '/users/1.png?width=400&height=300&fit=inside&enlarge=1' },
  { source: IMGIX_PYTHON, url: '/bridge.png?h=100&w=100', native: '/bridge.png?width=100&height=100&fit=inside&enlarge=1' },
  { source: IMGIX_FIT, url: '/photo.jpg?fit=clip&w=100&h=100', native: '/photo.jpg?width=100&height=100&fit=inside&enlarge=1' },
  { source: IMGIX_FIT, url: '/photo.jpg?fit=crop&w=300&h=100', native: '/photo.jpg?width=300&height=100&fit=cover&enlarge=1' },
  { source: IMGIX_FIT, url: '/photo.jpg?fit=crop&w=200&h=200', native: '/photo.jpg?width=200&height=200&enlarge=1' },
  { source: IMGIX_FIT, url: '/photo.jpg?fit=facearea&w=300&h=200', refused: /^imgix fit=facearea: not supported\.$/ },
  {
    source: IMGIX_FIT,
    url: '/photo.jpg?fit=facearea&faceindex=2&facepad=1.5&w=300&h=300',
    refused: /^imgix faceindex=2: not supported\.$/,
  },
  {
    source: IMGIX_FILL_MAX,
    url: '/photo.jpg?fit=fillmax&w=400&h=400',
    native: '/photo.jpg?width=400&height=400&fit=contain&background=fff',
  },
  { source: IMGIX_FILL_MAX, url: '/photo.jpg?fit=fillmax&w=400&h=150', native: '/photo.jpg?width=400&height=150&fit=pad&bg=ffffff' },
  { source: IMGIX_FILL_MAX, url: '/photo.jpg?fit=fillmax&w=400&fill-max=source', refused: /^imgix fill-max=source: not supported\.$/ },
  {
    source: IMGIX_CROP,
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=top,left',
    native: '/photo.jpg?w=300&h=300&position=top-left&enlarge=1',
  },
  { source: IMGIX_CROP, url: '/photo.jpg?fit=crop&w=300&h=300&crop=faces', native: '/photo.jpg?w=300&h=300&position=face&enlarge=1' },
  {
    source: IMGIX_CROP,
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=faces,top,right',
    refused: /^imgix crop=faces,top,right: a fallback after faces/,
  },
  {
    source: IMGIX_CROP,
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=faces,edges',
    refused: /^imgix crop=faces,edges: a fallback after faces/,
  },
  { source: IMGIX_CROP, url: '/photo.jpg?fit=crop&w=300&h=300&crop=edges', refused: /^imgix crop=edges: not supported\.$/ },
  { source: IMGIX_CROP, url: '/photo.jpg?fit=crop&w=300&h=300&crop=entropy', native: '/photo.jpg?w=300&h=300&position=entropy&enlarge=1' },
  { source: IMGIX_CROP_AUTO, url: '/photo.jpg?fit=crop&w=300&h=300&crop=auto', native: '/photo.jpg?w=300&h=300&position=auto&enlarge=1' },
  {
    source: IMGIX_CROP_AUTO + ' (a fallback chain: faces, else the subject)',
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=faces,auto',
    native: '/photo.jpg?w=300&h=300&position=auto&enlarge=1',
  },
  {
    source: IMGIX_CROP_AUTO,
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=auto,entropy',
    refused: /^imgix crop=auto,entropy: a fallback after auto/,
  },
  { source: IMGIX_CROP_AUTO, url: '/photo.jpg?fit=crop&w=300&h=300&crop=car', refused: /^imgix crop=car: not supported\.$/ },
  { source: IMGIX_CROP_AUTO, url: '/photo.jpg?w=300&h=300&crop=auto', native: '/photo.jpg?width=300&height=300&fit=inside&enlarge=1' },
  {
    source: IMGIX_CROP,
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=focalpoint&fp-x=0.25&fp-y=0.75',
    native: '/photo.jpg?w=300&h=300&fp=0.25,0.75&enlarge=1',
  },
  {
    source: IMGIX_CROP,
    url: '/photo.jpg?fit=crop&w=300&h=300&crop=focalpoint&fp-x=0.25&fp-y=0.75&fp-z=2',
    refused: /^imgix fp-z=2: not supported\.$/,
  },
  { source: IMGIX_BG_REMOVE, url: '/woman.jpeg?bg-remove=true', native: '/woman.jpeg?segment=foreground' },
  {
    source: IMGIX_BG_REMOVE,
    url: '/woman.jpeg?bg-remove=true&bg=DB2BBBD9&auto=compress,format&w=620',
    native: '/woman.jpeg?w=620&enlarge=1&segment=foreground&bg=2bbbd9db&q=45',
  },
  {
    source: IMGIX_BG_REMOVE_FALLBACK,
    url: '/woman.jpeg?bg-remove=true&bg-remove-fallback=false',
    native: '/woman.jpeg?segment=foreground',
  },
  {
    source: IMGIX_BG_REMOVE_FALLBACK,
    url: '/woman.jpeg?bg-remove=true&bg-remove-fallback=true',
    refused: /^imgix bg-remove-fallback=true: a cut-out that cannot be made is an error here, never the original\.$/,
  },
  { source: IMGIX_TXT, url: '/photo.jpg?txt=Hello%20World!', native: '/photo.jpg?text=Hello%20World!&' + IMGIX_TXT_DEFAULTS },
  {
    source: IMGIX_TXT,
    url: '/photo.jpg?txt=HELLO%20WORLD!&txt-size=62&txt-color=ff2e4357&txt-align=middle,center&txt-font=Futura%20Condensed%20Medium',
    native:
      '/photo.jpg?text=HELLO%20WORLD!&text-size=62&text-color=2e4357ff&text-position=center&text-align=center&text-pad=10&text-font=sans',
  },
  {
    source: IMGIX_TXT,
    url: '/photo.jpg?txt=%E4%BD%A0%E5%A5%BD&txt-size=62&txt-color=ff2e4357&txt-align=middle,center&txt-font=Futura%20Condensed%20Medium',
    native: '/photo.jpg?text=%E4%BD%A0%E5%A5%BD&text-size=62&text-color=2e4357ff&text-position=center&text-align=center&text-pad=10',
  },
  {
    source: IMGIX_TXT_ALIGN,
    url: '/photo.jpg?txt=Hi&txt-align=top,left',
    native: '/photo.jpg?text=Hi&text-size=12&text-pad=10&text-position=top-left',
  },
  {
    source: IMGIX_TXT_ALIGN,
    url: '/photo.jpg?txt=Hi&txt-align=top',
    native: '/photo.jpg?text=Hi&text-size=12&text-pad=10&text-position=top-right&text-align=right',
  },
  {
    source: IMGIX_TXT_ALIGN,
    url: '/photo.jpg?txt=Hi&txt-align=center',
    native: '/photo.jpg?text=Hi&text-size=12&text-pad=10&text-position=bottom&text-align=center',
  },
  {
    source: IMGIX_TXT_ALIGN,
    url: '/photo.jpg?txt=Hi&txt-align=top,bottom',
    refused: /^imgix txt-align=top,bottom: expected top, middle or bottom and left, center or right\.$/,
  },
  { source: IMGIX_TXT_ALIGN, url: '/photo.jpg?txt-align=top,bottom', native: '/photo.jpg' },
  {
    source: IMGIX_TXT_FONT,
    url: '/photo.jpg?txt=Hi&txt-font=sans-serif,bold',
    native: '/photo.jpg?text=Hi&text-font=sans-bold&' + IMGIX_TXT_DEFAULTS,
  },
  {
    source: IMGIX_TXT_FONT,
    url: '/photo.jpg?txt=Hi&txt-font=sans-serif,bold,italic',
    refused: /^imgix txt-font=sans-serif,bold,italic: italic is not among the packaged fonts\.$/,
  },
  {
    source: IMGIX_TXT_FIT,
    url: '/photo.jpg?txt=Hi&txt-width=300&txt-fit=max',
    refused: /^imgix txt-fit=max: text shrunk to fit is not supported/,
  },
  {
    source: IMGIX_TXT_FIT,
    url: '/photo.jpg?txt=Hi&txt-width=300',
    refused: /^imgix txt-width=300: a line cut at txt-width is not supported; txt-fit=wrap wraps it\.$/,
  },
  {
    source: IMGIX_TXT_FIT,
    url: '/photo.jpg?txt=Hi&txt-width=300&txt-fit=wrap',
    native: '/photo.jpg?text=Hi&text-width=300&' + IMGIX_TXT_DEFAULTS,
  },
  { source: IMGIX_AUTO, url: '/photo.jpg?auto=compress', native: '/photo.jpg?quality=45' },
  { source: IMGIX_AUTO, url: '/photo.jpg?auto=compress&auto=format', native: '/photo.jpg?format=auto&quality=45' },
  { source: IMGIX_AUTO, url: '/photo.jpg?auto=compress,enhance', refused: /^imgix auto=enhance: not supported\.$/ },
  { source: IMGIX_AUTO, url: '/photo.jpg?auto=compress&cs=origin', refused: /^imgix cs=origin: not supported\.$/ },
  { source: IMGIX_AUTO, url: '/photo.jpg?auto=compress&q=60', native: '/photo.jpg?q=60' },
];

const CLOUDFLARE_URL = 'https://developers.cloudflare.com/images/transform-images/transform-via-url/';
/** The option pages of Cloudflare's features reference, from cloudflare/cloudflare-docs (src/content/partials/images/<option>.mdx). */
const CLOUDFLARE_FEATURES = 'https://developers.cloudflare.com/images/optimization/features/';
const cf = (option: string) => CLOUDFLARE_FEATURES + '#' + option;

export const CLOUDFLARE_EXAMPLES: DialectExample[] = [
  {
    source: CLOUDFLARE_URL,
    url: '/cdn-cgi/image/width=80,quality=75/uploads/avatar1.jpg',
    native: '/uploads/avatar1.jpg?width=80&quality=75',
  },
  {
    source: CLOUDFLARE_URL,
    url: '/cdn-cgi/image/width=100/https://s3.example.com/bucket/image.png',
    native: '/s3.example.com/bucket/image.png?width=100',
  },
  {
    source: cf('fit'),
    url: '/cdn-cgi/image/width=500,height=500,fit=scale-down/pete.jpg',
    native: '/pete.jpg?width=500&height=500&fit=inside',
  },
  {
    source: cf('fit'),
    url: '/cdn-cgi/image/width=500,height=500,fit=contain/pete.jpg',
    native: '/pete.jpg?width=500&height=500&fit=inside&enlarge=1',
  },
  { source: cf('fit'), url: '/cdn-cgi/image/width=500,height=500,fit=cover/pete.jpg', native: '/pete.jpg?width=500&height=500&enlarge=1' },
  { source: cf('fit'), url: '/cdn-cgi/image/width=1296,height=1296,fit=crop/pete.jpg', native: '/pete.jpg?width=1296&height=1296' },
  {
    source: cf('fit'),
    url: '/cdn-cgi/image/width=1080,height=1080,fit=pad/pete.jpg',
    native: '/pete.jpg?width=1080&height=1080&fit=pad&enlarge=1',
  },
  {
    source: cf('fit'),
    url: '/cdn-cgi/image/width=1080,height=540,fit=squeeze/pete.jpg',
    native: '/pete.jpg?width=1080&height=540&fit=fill&enlarge=1',
  },
  {
    source: cf('fit'),
    url: '/cdn-cgi/image/width=1920,height=1120,fit=aspect-crop/a.jpg',
    refused: /^cloudflare fit=aspect-crop: not supported\.$/,
  },
  {
    source: cf('gravity'),
    url: '/cdn-cgi/image/w=300,h=300,fit=cover,gravity=auto/a.jpg',
    native: '/a.jpg?w=300&h=300&enlarge=1&position=auto',
  },
  {
    source: cf('gravity'),
    url: '/cdn-cgi/image/w=300,h=300,fit=crop,g=auto/a.jpg',
    native: '/a.jpg?w=300&h=300&gravity=auto',
  },
  {
    source: cf('gravity') + ' (gravity places only a crop)',
    url: '/cdn-cgi/image/w=300,h=300,fit=pad,gravity=auto/a.jpg',
    native: '/a.jpg?w=300&h=300&fit=pad&enlarge=1',
  },
  { source: cf('gravity'), url: '/cdn-cgi/image/w=300,h=300,fit=cover,g=left/a.jpg', native: '/a.jpg?w=300&h=300&enlarge=1&position=left' },
  { source: cf('gravity'), url: '/cdn-cgi/image/w=300,h=300,fit=cover,gravity=0x1/a.jpg', native: '/a.jpg?w=300&h=300&enlarge=1&fp=0,1' },
  { source: cf('gravity'), url: '/cdn-cgi/image/w=300,h=300,fit=crop,g=0.5x0.33/a.jpg', native: '/a.jpg?w=300&h=300&fp=0.5,0.33' },
  {
    source: cf('gravity'),
    url: '/cdn-cgi/image/w=300,h=300,fit=cover,gravity=face/a.jpg',
    native: '/a.jpg?w=300&h=300&enlarge=1&position=face',
  },
  { source: cf('brightness'), url: '/cdn-cgi/image/brightness=0.5/a.jpg', native: '/a.jpg?brightness=0.5' },
  { source: cf('contrast'), url: '/cdn-cgi/image/contrast=0.5/a.jpg', native: '/a.jpg?contrast=0.5' },
  { source: cf('gamma'), url: '/cdn-cgi/image/gamma=0.5/a.jpg', native: '/a.jpg?gamma=0.5' },
  { source: cf('saturation'), url: '/cdn-cgi/image/saturation=0.5/a.jpg', native: '/a.jpg?saturation=0.5' },
  { source: cf('blur'), url: '/cdn-cgi/image/blur=50/a.jpg', native: '/a.jpg?blur=20' },
  { source: cf('sharpen'), url: '/cdn-cgi/image/sharpen=2/a.jpg', native: '/a.jpg?sharpen=2' },
  { source: cf('rotate'), url: '/cdn-cgi/image/rotate=90/a.jpg', native: '/a.jpg?rotate=90' },
  { source: cf('flip'), url: '/cdn-cgi/image/flip=h/a.jpg', native: '/a.jpg?flop=1' },
  { source: cf('flip'), url: '/cdn-cgi/image/flip=h,rotate=90/a.jpg', native: '/a.jpg?rotate=90&flop=1' },
  { source: cf('dpr'), url: '/cdn-cgi/image/width=300,height=200,dpr=2/a.jpg', native: '/a.jpg?width=600&height=400&fit=inside' },
  { source: cf('format'), url: '/cdn-cgi/image/format=auto/a.jpg', native: '/a.jpg?format=auto' },
  { source: cf('format'), url: '/cdn-cgi/image/f=avif/a.jpg', native: '/a.jpg?format=avif' },
  { source: cf('format'), url: '/cdn-cgi/image/format=baseline-jpeg/a.jpg', native: '/a.jpg?format=jpeg' },
  { source: cf('format'), url: '/cdn-cgi/image/format=json/a.jpg', refused: /^cloudflare format=json: not supported\.$/ },
  { source: cf('quality'), url: '/cdn-cgi/image/quality=50/a.jpg', native: '/a.jpg?quality=50' },
  { source: cf('quality'), url: '/cdn-cgi/image/q=50/a.jpg', native: '/a.jpg?quality=50' },
  { source: cf('quality'), url: '/cdn-cgi/image/quality=low/a.jpg', refused: /^(cloudflare: )?Invalid quality "low"/ },
  {
    source: cf('background'),
    url: '/cdn-cgi/image/width=400,height=400,fit=pad,background=%23ff8000/a.png',
    native: '/a.png?w=400&h=400&fit=pad&enlarge=1&bg=ff8000',
  },
  { source: cf('background'), url: '/cdn-cgi/image/background=red/a.png', refused: /^cloudflare background=red: expected a hex colour\.$/ },
  {
    source: cf('background'),
    url: '/cdn-cgi/image/background=rgb%28240%2C40%2C145%29/a.png',
    refused: /^cloudflare background=rgb\(240,40,145\): expected a hex colour\.$/,
  },
  { source: cf('metadata'), url: '/cdn-cgi/image/metadata=keep/a.jpg', native: '/a.jpg?metadata=keep' },
  { source: cf('metadata'), url: '/cdn-cgi/image/metadata=none/a.jpg', native: '/a.jpg' },
  { source: cf('trim'), url: '/cdn-cgi/image/trim=20;30;20;0/a.jpg', refused: /^cloudflare trim=20;30;20;0: not supported\.$/ },
  { source: cf('trim'), url: '/cdn-cgi/image/trim.width=678/a.jpg', refused: /^cloudflare trim\.width=678: not supported\.$/ },
  { source: cf('segment'), url: '/cdn-cgi/image/segment=foreground,format=png/a.jpg', native: '/a.jpg?segment=foreground&format=png' },
  { source: cf('segment'), url: '/cdn-cgi/image/segment=background/a.jpg', refused: /^cloudflare segment=background: not supported\.$/ },
  { source: cf('width'), url: '/cdn-cgi/image/w=250/a.jpg', native: '/a.jpg?width=250' },
  { source: cf('width'), url: '/cdn-cgi/image/width=auto/a.jpg', native: '/a.jpg?width=auto' },
];
