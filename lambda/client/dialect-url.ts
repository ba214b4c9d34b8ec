// Image URLs in another service's dialect, for a staged move: the same image
// as imageUrl's, written as imgix's query (`/<key>?w=640&fit=max`),
// Cloudflare's path (`/cdn-cgi/image/width=640/<key>`) or DIT's base64 JSON
// request or Thumbor path (dit-url.ts), so that pages can keep
// producing the URLs the old service serves while this one serves them too
// (the edge's dialects translate them back to the same canonical URI).
//
// The parameters are canonicalised by the grammar first, then written in
// the dialect's words; what the dialect cannot say (our watermark, a cover
// crop that never enlarges in imgix, ...) throws, naming the dialect and the
// operation. docs/migrating.md has the tables.

import { canonicalOps, parseViewerParams } from '../grammar/canonical';
import { encodeKeyPath, validateKey } from '../grammar/key';
import { DEFAULT_GRAMMAR_OPTIONS, PRESET_SPELLINGS, type GrammarOptions } from '../grammar/params';
import { cannot, writer, type Ops, type UrlDialect, type Written } from './dialect-writer';
import { ditJsonPath, thumborPath } from './dit-url';
import { imageOrigin, imageParamPairs, type ImageParams } from './url';

export type { UrlDialect } from './dialect-writer';

/** The dialects that say a fit in a word of their own. */
type QueryDialect = 'imgix' | 'cloudflare';

/** Our (fit, enlarge) in each dialect's fit words (imgix: clip enlarges, max does not; Cloudflare: scale-down never enlarges). */
const FITS: { [dialect in QueryDialect]: { [fitAndEnlarge: string]: string } } = {
  imgix: {
    'inside,true': 'clip',
    'inside,false': 'max',
    'cover,true': 'crop',
    'contain,true': 'fill',
    'contain,false': 'fillmax',
    'fill,true': 'scale',
  },
  cloudflare: {
    'inside,false': 'scale-down',
    'inside,true': 'contain',
    'cover,true': 'cover',
    'cover,false': 'crop',
    'contain,true': 'pad',
    'fill,true': 'squeeze',
  },
};
/** Each dialect's default fit, left unwritten. */
const DEFAULT_FIT: { [dialect in QueryDialect]: string } = { imgix: 'clip', cloudflare: 'scale-down' };

/** Our fit and enlarge in the dialect's word; with one side, fit means nothing and inside stands for it. */
function fitWord(dialect: QueryDialect, ops: Ops): string | undefined {
  if (ops.width == null && ops.height == null) return undefined;
  const fit = ops.width != null && ops.height != null ? ops.fit || 'cover' : 'inside';
  const word = FITS[dialect][fit + ',' + Boolean(ops.enlarge)];
  if (!word) throw cannot(dialect, `fit=${fit}${ops.enlarge ? ' with' : ' without'} enlarge`);
  return word === DEFAULT_FIT[dialect] ? undefined : word;
}

/** The box in the dialect's words (its names for width and height, and its fit word, if not its default); returns the fit word. */
function box(
  dialect: QueryDialect,
  ops: Ops,
  push: (name: string, value: unknown) => void,
  width: string,
  height: string,
): string | undefined {
  push(width, ops.width);
  push(height, ops.height);
  const fit = fitWord(dialect, ops);
  push('fit', fit);
  return fit;
}

/** `h`, `v` or `hv`: imgix's and Cloudflare's mirrors of ours, flop left-right and flip top-bottom. */
const mirrorWord = (flop: unknown, flip: unknown): string => (flop ? 'h' : '') + (flip ? 'v' : '');

/** What a box's fit word makes of the image's place in it: the side words both dialects share. */
const SIDES = /^(top|bottom|left|right)$/;

/** Our crop strategies in imgix's crop words (imgix has no `attention`). */
const IMGIX_STRATEGIES: { [position: string]: string } = { face: 'faces', entropy: 'entropy', auto: 'auto' };

/** imgix's crop (with fit=crop): a focal point, faces, entropy, its subject crop, or sides (`top,left`). */
function imgixCrop(ops: Ops, crops: boolean): Written {
  if ((ops.fp != null || ops.position != null) && !crops) throw cannot('imgix', `position=${ops.position || ops.fp} outside fit=crop`);
  if (ops.fp != null) {
    const point = (ops.fp as string).split(',');
    return [
      ['crop', 'focalpoint'],
      ['fp-x', point[0]!],
      ['fp-y', point[1]!],
    ];
  }
  const position = ops.position as string | undefined;
  if (position == null) return [];
  const strategy = IMGIX_STRATEGIES[position];
  if (!strategy && !position.split('-').every((side) => SIDES.test(side))) throw cannot('imgix', `position=${position}`);
  return [['crop', strategy || position.replace('-', ',')]];
}

/** bri, con, sat: our factor 0..2 as imgix's offset -100..100. */
function offset(name: string, factor: number): string {
  if (factor > 2) throw cannot('imgix', `${name}=${factor} (above 2)`);
  return String(Math.round((factor - 1) * 100));
}

const IMGIX_WRITES =
  'width height fit enlarge position fp fill segment background format quality rotate flip flop trim blur brightness contrast saturation';

function imgixParams(ops: Ops): Written {
  if (ops.width === 'auto' || ops.dpr === 'auto') throw cannot('imgix', 'width=auto or dpr=auto');
  if (ops.format === 'json' || ops.quality === 'auto' || (ops.trim != null && ops.trim !== 10)) {
    throw cannot('imgix', `format=${ops.format}, quality=${ops.quality} or trim=${ops.trim}`);
  }
  const { written, push } = writer('imgix', ops, IMGIX_WRITES);
  const fit = box('imgix', ops, push, 'w', 'h');
  imgixCrop(ops, fit === 'crop').forEach((pair) => written.push(pair));
  push('fill', ops.fill);
  // imgix's cut-out, whose bg is the colour it is flattened on.
  push('bg-remove', ops.segment != null ? 'true' : undefined);
  const padded = fit === 'fill' || fit === 'fillmax';
  if (padded && ops.background == null) throw cannot('imgix', 'fit=contain without a background (imgix fills with white)');
  // imgix's hex colours put the alpha first.
  const background = ops.background as string | undefined;
  push(padded ? 'fill-color' : 'bg', background && background.length === 8 ? background.slice(6) + background.slice(0, 6) : background);
  push(ops.format == null ? 'auto' : 'fm', ops.format == null ? 'format' : ops.format === 'jpeg' ? 'jpg' : ops.format);
  push('q', ops.quality);
  push(ops.rotate === 180 ? 'rot' : 'or', ops.rotate);
  // imgix turns the frame before it mirrors, we after: a quarter turn swaps the mirrors.
  const quarter = ops.rotate === 90 || ops.rotate === 270;
  push('flip', quarter ? mirrorWord(ops.flip, ops.flop) : mirrorWord(ops.flop, ops.flip));
  push('trim', ops.trim != null ? 'auto' : undefined);
  push('blur', ops.blur != null ? Math.round((ops.blur as number) * 20) : undefined);
  (['brightness', 'contrast', 'saturation'] as const).forEach((name) => {
    if (ops[name] != null) push(name.slice(0, 3), offset(name, ops[name] as number));
  });
  return written;
}

/** Cloudflare's gravity (with fit=cover or crop): a point `XxY`, face, auto (its saliency crop, our auto) or a side. */
function gravity(ops: Ops, crops: boolean): string | undefined {
  if ((ops.fp != null || ops.position != null) && !crops)
    throw cannot('cloudflare', `position=${ops.position || ops.fp} outside a cover crop`);
  if (ops.fp != null) return (ops.fp as string).replace(',', 'x');
  const position = ops.position as string | undefined;
  if (position == null || position === 'face' || position === 'auto' || SIDES.test(position)) return position;
  throw cannot('cloudflare', `position=${position}`);
}

const CLOUDFLARE_WRITES =
  'width height fit enlarge position fp segment background format quality rotate flip flop blur sharpen brightness contrast saturation gamma metadata';

function cloudflareOptions(ops: Ops): Written {
  if (ops.dpr === 'auto') throw cannot('cloudflare', 'dpr=auto');
  // Cloudflare's blur radius is 2.5 of our sigmas, from 1.
  const blur = ops.blur != null ? (ops.blur as number) * 2.5 : undefined;
  if (ops.format === 'json' || ops.format === 'gif' || ops.quality === 'auto' || (blur != null && blur < 1)) {
    throw cannot('cloudflare', `format=${ops.format}, quality=${ops.quality} or blur=${ops.blur}`);
  }
  const { written, push } = writer('cloudflare', ops, CLOUDFLARE_WRITES);
  const fit = box('cloudflare', ops, push, 'width', 'height');
  push('gravity', gravity(ops, fit === 'cover' || fit === 'crop'));
  push('format', ops.format || 'auto');
  ['segment', 'quality', 'sharpen', 'brightness', 'contrast', 'saturation', 'gamma', 'metadata', 'rotate'].forEach((name) =>
    push(name, ops[name]),
  );
  push('blur', blur);
  push('background', ops.background != null ? '%23' + (ops.background as string) : undefined);
  // Cloudflare mirrors before it turns, as we do.
  push('flip', mirrorWord(ops.flop, ops.flip));
  return written;
}

/**
 * The URL of `key` transformed by `params`, as imageUrl's, in `dialect`: e.g.
 * `https://images.example.com/photos/cat.jpg?w=640&fit=max&auto=format` (imgix)
 * or `https://images.example.com/cdn-cgi/image/width=640,format=auto/photos/cat.jpg`
 * (Cloudflare), `https://images.example.com/eyJrZXkiOi...` (DIT's base64 JSON,
 * `dit-json`) or `https://images.example.com/fit-in/300x200/photos/cat.jpg`
 * (DIT's Thumbor path, `thumbor`). A preset, or an operation the dialect has no words for, throws.
 */
export function dialectImageUrl(
  dialect: UrlDialect,
  base: string,
  key: string,
  params: ImageParams = {},
  options: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS,
): string {
  const origin = imageOrigin(base);
  validateKey(key);
  const pairs = imageParamPairs(params);
  if (pairs.some((pair) => PRESET_SPELLINGS.indexOf(pair[0].toLowerCase()) !== -1)) throw cannot(dialect, 'a preset');
  const ops = canonicalOps(parseViewerParams(pairs, options), options) as Ops;
  if (dialect === 'dit-json') return origin + ditJsonPath(key, ops);
  if (dialect === 'thumbor') return origin + thumborPath(key, ops);
  if (dialect === 'imgix') {
    return (
      origin +
      encodeKeyPath(key) +
      '?' +
      imgixParams(ops)
        .map((pair) => pair[0] + '=' + encodeURIComponent(pair[1]))
        .join('&')
    );
  }
  return (
    origin +
    '/cdn-cgi/image/' +
    cloudflareOptions(ops)
      .map((pair) => pair[0] + '=' + pair[1])
      .join(',') +
    encodeKeyPath(key)
  );
}
