// The URL helper's paths in DIT's two forms: its base64 JSON request
// (`/<base64 of {"key","edits"}>`, sharp's operations by name) and its Thumbor
// path (`/fit-in/300x200/filters:quality(60)/<key>`). The edge's DIT
// translators read both back to the canonical URI of the native URL.
//
// Written only as DIT itself reads them, so that during a staged move the same
// URL is served by DIT and by us: its Thumbor mapper knows no flips,
// halign/valign, `trim/` or `full-fit-in/` (it would read them as part of the
// key or as fit-in), and an overlay names an object in DIT's bucket, which the
// helper does not know. Those throw, as the dialect's other gaps do.

import { encodeKeyPath } from '../grammar/key';
import { cannot, refuseUnsaid, type Ops } from './dialect-writer';

/** Our positions in sharp's words, as DIT's resize reads them (top, left, entropy... are the same). */
const SHARP_POSITIONS: { [ours: string]: string } = {
  center: 'centre',
  'top-left': 'left top',
  'top-right': 'right top',
  'bottom-left': 'left bottom',
  'bottom-right': 'right bottom',
};

/** The formats DIT's JSON gives a quality to (`edits.<format>.quality`). */
const QUALITY_FORMATS = ['jpeg', 'png', 'webp', 'avif'];

/** What both forms refuse alike: client hints, metadata output, and an automatic quality. */
function refuseAutos(dialect: 'dit-json' | 'thumbor', ops: Ops): void {
  if (ops.width === 'auto' || ops.dpr === 'auto' || ops.format === 'json' || ops.quality === 'auto') {
    throw cannot(dialect, `width=${ops.width}, dpr=${ops.dpr}, format=${ops.format} or quality=${ops.quality}`);
  }
}

/** A face-placed crop needs both sides, as the edge's smartCrop does. */
function refuseLoneFace(dialect: 'dit-json' | 'thumbor', ops: Ops): void {
  if (ops.position === 'face' && (ops.width == null || ops.height == null)) throw cannot(dialect, 'position=face without width and height');
}

/** DIT's smartCrop is Rekognition's faces alone (its label crops name the object sought): it has no word for a salient-subject crop. */
function refuseSubjectCrop(dialect: 'dit-json' | 'thumbor', ops: Ops): void {
  if (ops.position === 'auto') throw cannot(dialect, "position=auto (DIT's smart crop is faces alone)");
}

/** Our hex background (`rrggbb`, `rrggbbaa`) as sharp's `{ r, g, b, alpha }`, alpha from 0 to 1. */
function sharpColour(hex: string): { [channel: string]: number } {
  const channel = (at: number) => parseInt(hex.slice(at, at + 2), 16);
  const colour: { [channel: string]: number } = { r: channel(0), g: channel(2), b: channel(4) };
  // Three decimals bring every 8-bit alpha back to itself.
  if (hex.length === 8) colour.alpha = Math.round((channel(6) / 255) * 1000) / 1000;
  return colour;
}

const DIT_JSON_WRITES = 'width height fit enlarge position background format quality rotate flip flop grayscale blur sharpen';

/** DIT's edits for `ops`: sharp's resize options, its operations, the output format and that format's quality. */
function ditEdits(ops: Ops): { [edit: string]: unknown } {
  refuseAutos('dit-json', ops);
  refuseUnsaid('dit-json', ops, DIT_JSON_WRITES);
  refuseLoneFace('dit-json', ops);
  refuseSubjectCrop('dit-json', ops);
  if (ops.quality != null && QUALITY_FORMATS.indexOf(ops.format as string) < 0) {
    throw cannot('dit-json', `quality=${ops.quality} with format=${ops.format} (DIT's quality is one output format's)`);
  }
  const edits: { [edit: string]: unknown } = {};
  const resize: { [option: string]: unknown } = {};
  const set = (object: { [name: string]: unknown }, name: string, value: unknown) => {
    if (value != null) object[name] = value;
  };
  set(resize, 'width', ops.width);
  set(resize, 'height', ops.height);
  set(resize, 'fit', ops.fit);
  if (ops.position !== 'face') set(resize, 'position', ops.position && (SHARP_POSITIONS[ops.position] || ops.position));
  set(resize, 'background', ops.background && sharpColour(ops.background as string));
  // sharp enlarges unless told not to; we do not unless told to.
  if ((ops.width != null || ops.height != null) && !ops.enlarge) resize.withoutEnlargement = true;
  if (Object.keys(resize).length) edits.resize = resize;
  (['rotate', 'flip', 'flop', 'grayscale', 'blur', 'sharpen'] as const).forEach((name) => set(edits, name, ops[name]));
  set(edits, 'toFormat', ops.format);
  if (ops.quality != null) edits[ops.format as string] = { quality: ops.quality };
  if (ops.position === 'face') edits.smartCrop = true;
  return edits;
}

/** DIT's base64 JSON request for `key` and `ops`, as its documentation builds it (`btoa(JSON.stringify(...))`), with a leading `/`. */
export function ditJsonPath(key: string, ops: Ops): string {
  const json = JSON.stringify({ key, edits: ditEdits(ops) });
  // btoa takes bytes as characters: the JSON's UTF-8, one character per byte.
  const bytes = encodeURIComponent(json).replace(/%([0-9A-F]{2})/g, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return '/' + btoa(bytes);
}

/**
 * A key folder that a reader would take for an option: the edge's Thumbor
 * segments where the key starts, and anywhere what DIT's key parser strips
 * (sizes, crops, `fit-in`, filters, buckets).
 */
const THUMBOR_FIRST_FOLDER =
  /^(unsafe|smart|left|right|center|top|bottom|middle|trim(:[^/]*)?|[\w-]{27}=|(full-|adaptive-)?fit-in|-?\d*x-?\d*(:\d+x\d+)?|filters:[^/]*|s3:[^/]*)\//;
const DIT_STRIPPED_FOLDER = /(^|\/)(\d+x\d+(:\d+x\d+)?|fit-in|filters:[^/]*|s3:[^/]*)\//;

const THUMBOR_WRITES = 'width height fit enlarge position background format quality rotate grayscale blur sharpen';

/** The Thumbor path's filters for `ops` (`quality(60)`...), and whether it fits in. */
function thumborOptions(ops: Ops): { fitIn: boolean; filters: string[] } {
  refuseAutos('thumbor', ops);
  refuseUnsaid('thumbor', ops, THUMBOR_WRITES);
  refuseLoneFace('thumbor', ops);
  refuseSubjectCrop('thumbor', ops);
  if (ops.position != null && ops.position !== 'face') throw cannot('thumbor', `position=${ops.position} (DIT ignores halign and valign)`);
  if (ops.fit === 'outside') throw cannot('thumbor', 'fit=outside (DIT reads full-fit-in as fit-in)');
  if (ops.fit === 'contain' && ops.background == null)
    throw cannot('thumbor', 'fit=contain without a background (DIT fills with a colour)');
  if ((ops.sharpen as number) < 1) throw cannot('thumbor', `sharpen=${ops.sharpen} (DIT's sharpen filter is a sigma of 1 or more)`);
  const filters: string[] = [];
  const filter = (when: boolean, name: string, argument: unknown = '') => {
    if (when) filters.push(`${name}(${String(argument)})`);
  };
  filter(ops.fit === 'contain', 'fill', ops.background);
  filter(ops.fit !== 'contain' && ops.background != null, 'background_color', ops.background);
  filter(ops.fit === 'fill', 'stretch');
  filter((ops.width != null || ops.height != null) && !ops.enlarge, 'no_upscale');
  filter(ops.position === 'face', 'smart_crop');
  filter(ops.format != null, 'format', ops.format);
  filter(ops.quality != null, 'quality', ops.quality);
  filter(ops.rotate != null, 'rotate', ops.rotate);
  filter(Boolean(ops.grayscale), 'grayscale');
  // DIT's blur without a sigma is a radius, twice the sigma; its sharpen's sigma is 1 + radius / 2.
  filter(ops.blur != null, 'blur', (ops.blur as number) * 2);
  filter(ops.sharpen != null, 'sharpen', '1,' + Math.round(((ops.sharpen as number) - 1) * 2000) / 1000 + ',false');
  return { fitIn: ops.fit === 'inside' || ops.fit === 'contain', filters };
}

/** DIT's Thumbor path for `key` and `ops`: `[/fit-in][/WxH][/filters:...]/<key>`, a 0 side following the aspect ratio. */
export function thumborPath(key: string, ops: Ops): string {
  if (THUMBOR_FIRST_FOLDER.test(key) || DIT_STRIPPED_FOLDER.test(key))
    throw cannot('thumbor', `the key ${key} (a folder reads as an option)`);
  const { fitIn, filters } = thumborOptions(ops);
  const size = ops.width != null || ops.height != null ? `/${ops.width || 0}x${ops.height || 0}` : '';
  const filterSegment = filters.length ? '/filters:' + filters.join(':') : '';
  return (fitIn ? '/fit-in' : '') + size + filterSegment + encodeKeyPath(key);
}
