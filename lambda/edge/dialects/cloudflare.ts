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

import { queryPair } from '../../grammar/canonical';
import { decodeKeyPath } from '../../grammar/key';
import type { Dialect, DialectRequest } from './dialect';
import { hexRules, refusal, translateByRules, type RuleBook } from './rules';

/** A condition of Cloudflare's rules: a fit that crops, the only one gravity places. */
const CROPS = 'fit=cover|crop';

/**
 * Cloudflare's rules (rules.ts), data in one place: the edge reads them from
 * its store (Dialect.useData). Short names as the full ones; every option
 * without rules is refused; and what each value of the others is in ours.
 * Options passed on as they are, under the same name (our grammar reads and
 * bounds them); fit modes as our fit, enlarged or not (aspect-crop crops
 * small sources to the aspect ratio, which ours does not); gravity words as
 * our position (auto, Cloudflare's saliency crop: our subject crop, docs/subjects.md); segment=foreground,
 * the cut-out, as ours; formats as ours (baseline-jpeg: the
 * same pixels, sequential rather than progressive); options that change
 * nothing we serve (`onerror=redirect` acts only when the transform fails,
 * `anim=true` and `zoom=0` are the defaults, sharpen and gamma 0 none).
 * Built by a call the edge's bundle drops: the store holds the book.
 */
export const CLOUDFLARE_BOOK: RuleBook = /* @__PURE__ */ (() => ({
  title: 'cloudflare',
  spellings: { w: 'width', h: 'height', g: 'gravity', q: 'quality', f: 'format' },
  refused: '^',
  defaults: { fit: 'scale-down' },
  rules: {
    width: [['.*', 'width=$0']],
    height: [['.*', 'height=$0']],
    dpr: [['.*', 'dpr=$0']],
    quality: [['.*', 'quality=$0']],
    brightness: [['.*', 'brightness=$0']],
    contrast: [['.*', 'contrast=$0']],
    saturation: [['.*', 'saturation=$0']],
    metadata: [['.*', 'metadata=$0']],
    rotate: [['.*', 'rotate=$0']],
    fit: [
      ['scale-down', 'fit=inside'],
      ['contain', 'fit=inside&enlarge=1'],
      ['cover', 'fit=cover&enlarge=1'],
      ['crop', 'fit=cover'],
      ['pad', 'fit=contain&enlarge=1'],
      ['squeeze', 'fit=fill&enlarge=1'],
    ],
    gravity: [
      ['([\\d.]+)x([\\d.]+)', 'fp=$1,$2', CROPS],
      ['auto', 'position=auto', CROPS],
      ['face|center|left|right|top|bottom', 'position=$0', CROPS],
      ['.*', '!', CROPS],
      ['.*', ''],
    ],
    // Cloudflare mirrors before it turns, as we do.
    flip: [
      ['h', 'flop=1'],
      ['v', 'flip=1'],
      ['hv|vh', 'flip=1&flop=1'],
    ],
    format: [
      ['auto|avif|webp|jpeg|png', 'format=$0'],
      ['baseline-jpeg', 'format=jpeg'],
    ],
    blur: [
      // A radius from 1 to 250.
      ['0*(\\.0*)?', '!blur'],
      ['(\\d\\d?|1\\d\\d|2[0-4]\\d)(\\.\\d+)?|250', 'blur=sigma($0,2.5)'],
      ['.*', '!blur'],
    ],
    background: hexRules('background', false, []).concat([['.*', '!hex']]),
    sharpen: [
      ['0', ''],
      ['.*', 'sharpen=$0'],
    ],
    gamma: [
      ['0', ''],
      ['.*', 'gamma=$0'],
    ],
    segment: [['foreground', 'segment=foreground']],
    onerror: [['redirect', '']],
    anim: [['true', '']],
    zoom: [['0', '']],
  },
  why: {
    unsupported: 'not supported',
    repeated: 'given more than once',
    blur: 'expected 1 to 250',
    hex: 'expected a hex colour',
    source: "a source URL's query cannot be kept",
  },
}))();
/** The rules in use: this code's, or at the edge its store's (useData; the bundle drops statements labelled `fromCode`). */
let BOOK: RuleBook;
fromCode: BOOK = CLOUDFLARE_BOOK;

export const cloudflare: Dialect = {
  // Without the prefix or a source, the key is empty: a 400.
  translate: (request: DialectRequest) => {
    const parts = /^\/cdn-cgi\/image\/([^/]*)(\/[\s\S]*)?$/.exec(request.uri) || [];
    const written = parts[2] || '';
    // An absolute source `https://host/path` (any slashes, any letter case, or encoded) is the key `host/path`.
    const source = written.replace(/^\/https?(:|%3a)(\/|%2f)+/i, '/');
    if (source !== written && request.pairs.length) throw refusal(BOOK, 'source', written, 'source');
    const key = decodeKeyPath(source);
    // Each option decoded on its own, as a query's pairs, so an encoded comma stays in its value. Every
    // option we lack and every repeat is refused as it is read: a long list is refused at its first.
    return { key, pairs: translateByRules(BOOK, (parts[1] || '').split(',').map(queryPair)) };
  },
  verify: () => 'unsigned',
  useData: (data) => {
    BOOK = data as RuleBook;
  },
};
