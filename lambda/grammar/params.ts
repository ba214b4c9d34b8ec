// The URL parameters of the contract: one declarative record each (aliases, the kind of value, its
// bounds or choices, whether a viewer may give it), which is data (the edge function reads it from its
// KeyValueStore), and in MATTERS the code that says when a value changes the image. The order of
// PARAM_TABLE is the fixed order of ops in the canonical URI. Adding an operation is one record here
// and one step in the origin's pipeline: the client's types, the edge's lookups, the canonical URI and
// the playground's form derive from this table, and tests check the README's parameter table and the
// form as served against it.

import {
  BOOLEANS,
  NUMBER_PATTERNS,
  readValue,
  SYNONYMS,
  useReaderData,
  WORDS,
  type ReaderData,
  type Value,
  type ValueRule,
} from './validate';
import type { CardGrammarOptions, CardOps } from './cards';

export const FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const;
export type Fit = (typeof FITS)[number];
/** `pad` is another name for `contain`: the whole image inside the box, the rest filled. */
// Pure: nothing but the data needs it, which the edge's bundle leaves out.
const FIT_SPELLINGS = /* @__PURE__ */ (FITS as readonly string[]).concat('pad');

/** What fills the rest of contain's box: the background colour, or a blurred copy of the image. */
export const FILLS = ['background', 'blur'] as const;
export type Fill = (typeof FILLS)[number];

/** sharp's trim threshold when `trim` is given without one. */
export const DEFAULT_TRIM = 10;

export const POSITIONS = [
  'center',
  'top',
  'right',
  'bottom',
  'left',
  'top-left',
  'top-right',
  'bottom-left',
  'bottom-right',
  'entropy',
  'attention',
  'face',
  'auto',
] as const;
export type Position = (typeof POSITIONS)[number];
/**
 * The positions that choose a cover crop from the image's content: they place
 * nothing else. `auto` keeps the salient subject (faces first), docs/subjects.md.
 */
export const CROP_STRATEGIES: Position[] = ['entropy', 'attention', 'face', 'auto'];

/** Where a text's box sits on the output: the positions that place, a watermark's placements (corners, sides, centre). */
export const TEXT_POSITIONS = /* @__PURE__ */ POSITIONS.filter((position) => CROP_STRATEGIES.indexOf(position) < 0);
export type TextPosition = Exclude<Position, 'entropy' | 'attention' | 'face' | 'auto'>;

/** Formats a canonical URI can name. Absent means "the source's own family". */
export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
const REQUESTED_FORMATS = ['auto', 'jpeg', 'jpg', 'png', 'webp', 'avif', 'gif', 'json'] as const;
export type RequestedFormat = 'auto' | OutputFormat;
/** What the edge negotiated `format=auto` to from the viewer's Accept header. */
export const NEGOTIATED_FORMATS = ['avif', 'webp'] as const;
export type NegotiatedFormat = (typeof NEGOTIATED_FORMATS)[number];

export type Rotation = 90 | 180 | 270;

/** What of the source's EXIF, XMP and IPTC an output keeps: nothing, the copyright and credit, or all but location and serial numbers. */
export const METADATA_MODES = ['none', 'copyright', 'keep'] as const;
export type MetadataMode = (typeof METADATA_MODES)[number];

/** The fonts a text may name: the packaged Noto Sans, regular and bold (other scripts fall back to their packaged Noto fonts). */
export const TEXT_FONTS = ['sans', 'sans-bold'] as const;

/** How a text's lines sit within its box. */
export const TEXT_ALIGNS = ['left', 'center', 'right'] as const;
export type TextAlignment = (typeof TEXT_ALIGNS)[number];

/** What `segment` cuts out of the image: its salient subject (Cloudflare's word); the rest becomes transparent. */
export const SEGMENTS = ['foreground'] as const;
export type Segment = (typeof SEGMENTS)[number];

/** What a JPEG output does with a source's HDR gain map: keeps it, fitted to the output, or drops it (the SDR image alone). */
export const HDR_MODES = ['keep', 'drop'] as const;
export type HdrMode = (typeof HDR_MODES)[number];

/** Default encoder quality per lossy format; a request for the default is a no-op. */
export const DEFAULT_QUALITY = { jpeg: 80, webp: 80, avif: 50 } as const;

/**
 * The widths `width=auto` snaps up to when the deployment sets no sizes: few,
 * so that hints make few variants (a deployment's sizes replace them).
 */
export const AUTO_WIDTHS = [160, 320, 640, 960, 1280, 1920, 2560, 3840];
/** What `width=auto` asks for without a usable hint (Firefox, Safari): a full-width image on most screens. */
export const AUTO_FALLBACK_WIDTH = 1280;
/** The quality of a `width=auto` or `dpr=auto` request that says `Save-Data: on` and gives none. */
export const SAVE_DATA_QUALITY = 40;

/** The canonical operations: what a variant is made of. */
export interface Ops extends CardOps {
  width?: number;
  height?: number;
  fit?: Fit;
  fill?: Fill;
  position?: Position;
  /**
   * `x,y`: the focal point, fractions of the source as displayed (after EXIF
   * orientation, before the other ops), on which a cover crop is centred.
   */
  fp?: string;
  enlarge?: boolean;
  rotate?: Rotation;
  flip?: boolean;
  flop?: boolean;
  /** Trim threshold: the largest difference from the corner's colour that is trimmed. */
  trim?: number;
  /** `x,y,width,height`, fractions of the image as it stands after orientation, turns and trim. */
  crop?: string;
  /**
   * `foreground`: a cut-out, the output's alpha the salient subject's mask
   * (lambda/origin/image/steps/segment.ts); JPEG or a `background` flattens it.
   */
  segment?: Segment;
  grayscale?: boolean;
  blur?: number;
  sharpen?: number;
  /**
   * Colour adjustments, Cloudflare's factors (1 changes nothing): lightness
   * (brightness), its spread around mid-grey (contrast) and chroma
   * (saturation, 0 is grey), in CIE LCh; `gamma` lightens above 1 and
   * darkens below it (each sRGB value to the power 1/gamma).
   */
  brightness?: number;
  contrast?: number;
  saturation?: number;
  gamma?: number;
  /**
   * A watermark the deployment names: `<name>` as a viewer asks, `<name>.<version>`
   * in a canonical URI (the edge adds the version, so a changed watermark makes new keys).
   */
  watermark?: string;
  /**
   * A text drawn on the output, after any watermark and inside any border
   * (lambda/origin/image/steps/text.ts): percent-encoded in a canonical URI;
   * the `text-*` ops say how, and matter only beside it.
   */
  text?: string;
  /** The font's size in pixels. */
  'text-size'?: number;
  /** `rrggbb` or `rrggbbaa`, lower-case. */
  'text-color'?: string;
  /** A packaged font: `sans`, `sans-bold`; other scripts fall back to their packaged fonts. */
  'text-font'?: (typeof TEXT_FONTS)[number];
  /** The lines' alignment within the text's box. */
  'text-align'?: TextAlignment;
  /** Where the box sits on the output. */
  'text-position'?: TextPosition;
  /** Pixels between the box and the output's edges. */
  'text-pad'?: number;
  /** A dark shadow's offset (and blur) in pixels. */
  'text-shadow'?: number;
  /** The box's largest width in pixels: longer lines wrap. */
  'text-width'?: number;
  /** `<width>,<rrggbb or rrggbbaa>`: pixels around the output, and their colour. */
  border?: string;
  /** `rrggbb` or `rrggbbaa`, lower-case. */
  background?: string;
  /** 1..100, or `auto`: the origin chooses an AVIF's per image, for a perceptual target (lambda/origin/image/auto-quality.ts). */
  quality?: number | 'auto';
  /** imgproxy's: the most bytes the output may have; a lossy encode's quality is lowered until it fits (steps/encode.ts). */
  max_bytes?: number;
  /** What of the source's metadata the output carries (lambda/origin/image/metadata.ts); absent: none. */
  metadata?: MetadataMode;
  /**
   * A source with an HDR gain map (Ultra HDR, ISO 21496-1): `drop` makes the
   * SDR image alone; absent, a JPEG output keeps the gain map and `format=auto`
   * stays JPEG for it (lambda/origin/image/gain-map.ts).
   */
  hdr?: HdrMode;
  /** Asked for explicitly: the origin makes exactly this format. */
  format?: OutputFormat;
  /**
   * Negotiated (no format, or `format=auto`): `avif` when the viewer accepts
   * AVIF and WebP and AVIF is enabled, `webp` when it accepts WebP. The origin
   * may then fall back to a cheaper accepted format. Absent with `format`, and
   * when the viewer accepts neither (the source's own family).
   */
  accept?: NegotiatedFormat;
}

/**
 * What a viewer's query may say: the ops, plus `dpr`, plus `format=auto`, minus
 * what only the edge writes. `width=auto` and `dpr=auto` are resolved by the
 * edge from the viewer's client hints.
 */
export interface ViewerParams extends Omit<Ops, 'width' | 'format' | 'accept'> {
  width?: number | 'auto';
  dpr?: number | 'auto';
  format?: RequestedFormat;
}

/**
 * The ops before the edge has resolved client hints: what a signature covers
 * and the URL helper writes. `width=auto` and `dpr=auto` stay; a canonical URI
 * never holds them.
 */
export type UnresolvedOps = Omit<Ops, 'width'> & { width?: number | 'auto'; dpr?: 'auto' };

/** What the parameter records parse: a viewer's parameters, or the ops of a canonical URI. */
export type ParsedParams = ViewerParams & Pick<Ops, 'accept'>;

/** A named set of viewer parameters, e.g. `{ width: '200', height: '200', fit: 'cover' }`. */
export type Preset = { [name: string]: string };

export interface GrammarOptions extends CardGrammarOptions {
  /** Largest width or height a request may ask for (and the output may have). */
  maxDimension: number;
  /**
   * Allowed widths and heights, ascending (breakpoints). A requested size
   * snaps up to the next one; one above the largest is refused. Absent: any size.
   */
  sizes?: number[];
  /** Named parameter sets that `preset=<name>` expands to. */
  presets?: { [name: string]: Preset };
  /** When true, `preset` is the only parameter a viewer may give. */
  presetsOnly?: boolean;
  /** The deployment's watermarks, name to version: the edge writes `<name>.<version>` for `watermark=<name>`. */
  watermarks?: { [name: string]: string };
  /** What a URL without `hdr` means, which the edge writes into the canonical URI (absent: `keep`). */
  hdr?: HdrMode;
}

export const DEFAULT_GRAMMAR_OPTIONS: GrammarOptions = { maxDimension: 8192 };

export interface Param {
  name: keyof ParsedParams;
  /** Other spellings a viewer may use (lower-case). */
  aliases: string[];
  /** Reads one value; throws a GrammarError naming the parameter, the value and what is allowed. */
  read(raw: string, options: GrammarOptions): ParsedParams[keyof ParsedParams];
  /** False when, given the other ops, the value cannot change the image; it is then dropped. */
  matters(ops: Ops): boolean;
  /**
   * Written by the edge only: a canonical URI may hold it, but a viewer's
   * query cannot set it (the name is ignored there like any unknown one).
   */
  canonicalOnly?: boolean;
}

/**
 * A record of the table, data only (the edge function reads it from its
 * KeyValueStore): what the parameter's values may be (validate.ts reads and
 * refuses them all by this rule), its other spellings, `none`, the value that
 * changes nothing (dropped like a value that does not matter), and whether
 * only the edge writes it.
 */
export interface ParamRecord extends ValueRule {
  aliases?: string[];
  none?: Value;
  canonicalOnly?: boolean;
}

/**
 * The grammar's data: the parameters in op order, what the readers read (the
 * words of refusals among it), and the values its code reads from here rather
 * than holds (at the edge, from the store): CROP_STRATEGIES, DEFAULT_QUALITY,
 * AUTO_WIDTHS, AUTO_FALLBACK_WIDTH and SAVE_DATA_QUALITY.
 */
export interface GrammarData extends ReaderData {
  params: { [name: string]: ParamRecord };
  cropStrategies: string[];
  defaultQuality: { [format: string]: number };
  autoWidths: number[];
  autoWidth: number;
  saveDataQuality: number;
}

const bothSides = (ops: Ops) => ops.width != null && ops.height != null;
const effectiveFit = (ops: Ops): Fit => ops.fit || 'cover';
/** A crop that fills the whole box: where a position or a focal point places the image. */
export const coverCrop = (ops: Ops) => bothSides(ops) && effectiveFit(ops) === 'cover';
const contained = (ops: Ops) => bothSides(ops) && ops.fit === 'contain';
const isLossy = (format: OutputFormat | undefined) => format == null || format === 'jpeg' || format === 'webp' || format === 'avif';

/** Every parameter, in op order; the mapped type makes a record for each field of ParsedParams required. */
const PARAM_TABLE: { [name in keyof ParsedParams]-?: ParamRecord } = {
  width: { aliases: ['w'], kind: 'integer', low: 1, auto: true },
  height: { aliases: ['h'], kind: 'integer', low: 1 },
  dpr: { kind: 'number', low: 1, high: 4, auto: true },
  fit: { kind: 'choice', choices: FIT_SPELLINGS },
  fill: { kind: 'choice', choices: FILLS, none: 'background' },
  position: {
    aliases: ['pos', 'gravity'],
    kind: 'choice',
    choices: POSITIONS,
    none: 'center',
  },
  fp: { kind: 'point' },
  enlarge: { kind: 'boolean', none: false },
  rotate: { kind: 'choice', choices: [0, 90, 180, 270], none: 0 },
  flip: { kind: 'boolean', none: false },
  flop: { kind: 'boolean', none: false },
  trim: { kind: 'integer', low: 0, high: 255, bare: DEFAULT_TRIM },
  crop: { kind: 'region', none: '0,0,1,1' },
  segment: { kind: 'choice', choices: SEGMENTS },
  grayscale: { aliases: ['greyscale'], kind: 'boolean', none: false },
  blur: { kind: 'number', low: 0.3, high: 100 },
  sharpen: { kind: 'number', low: 0.5, high: 10 },
  brightness: { kind: 'factor', low: 0, high: 10, none: 1 },
  contrast: { kind: 'factor', low: 0, high: 10, none: 1 },
  saturation: { kind: 'factor', low: 0, high: 10, none: 1 },
  // sharp's gamma takes exponents from 1 to 3, one way or the other.
  gamma: { kind: 'factor', low: 0.34, high: 3, none: 1 },
  watermark: { aliases: ['wm'], kind: 'named' },
  template: { kind: 'named' },
  fills: { kind: 'named', none: '' },
  text: { kind: 'text', none: '' },
  'text-size': { kind: 'integer', low: 4, high: 512, none: 48 },
  'text-color': { kind: 'colour', none: '000000' },
  'text-font': { kind: 'choice', choices: TEXT_FONTS, none: 'sans' },
  'text-align': { kind: 'choice', choices: TEXT_ALIGNS, none: 'left' },
  'text-position': { kind: 'choice', choices: TEXT_POSITIONS, none: 'center' },
  'text-pad': { kind: 'integer', low: 0, high: 4096, none: 0 },
  'text-shadow': { kind: 'integer', low: 0, high: 64, none: 0 },
  'text-width': { kind: 'integer', low: 1 },
  border: { kind: 'border' },
  background: { aliases: ['bg'], kind: 'colour' },
  quality: { aliases: ['q'], kind: 'integer', low: 1, high: 100, auto: true },
  max_bytes: { aliases: ['mb'], kind: 'integer', low: 1, high: 100_000_000 },
  metadata: { kind: 'choice', choices: METADATA_MODES, none: 'none' },
  hdr: { kind: 'choice', choices: HDR_MODES, none: 'keep' },
  format: { aliases: ['fm', 'f'], kind: 'choice', choices: REQUESTED_FORMATS },
  accept: { kind: 'choice', choices: NEGOTIATED_FORMATS, canonicalOnly: true },
};

/** The groups of the playground's form, in its order; the page's Cards section sets the Cards group's, from a template's slots. */
export const FORM_GROUPS = ['Size', 'Format', 'Effects', 'Text', 'Cards'] as const;

/**
 * Where the playground's form (local/emulator/playground-form.ts) shows each parameter a viewer may
 * give: its group and, beside its name after its aliases, a word on its value that the rule does not
 * say. The entries' order is the form's; the control itself comes from the rule. Not the grammar's
 * data: the edge's store and bundle hold none of it.
 */
export const FORM_PLACES: { [name in keyof ViewerParams]-?: { group: (typeof FORM_GROUPS)[number]; note?: string } } = {
  width: { group: 'Size' },
  height: { group: 'Size' },
  dpr: { group: 'Size' },
  fit: { group: 'Size' },
  fill: { group: 'Size' },
  position: { group: 'Size' },
  fp: { group: 'Size', note: 'focal point x,y' },
  enlarge: { group: 'Size', note: 'past the source size' },
  format: { group: 'Format' },
  quality: { group: 'Format' },
  max_bytes: { group: 'Format' },
  metadata: { group: 'Format' },
  hdr: { group: 'Format' },
  background: { group: 'Format' },
  blur: { group: 'Effects', note: 'σ' },
  sharpen: { group: 'Effects', note: 'σ' },
  rotate: { group: 'Effects' },
  trim: { group: 'Effects', note: 'threshold' },
  crop: { group: 'Effects' },
  segment: { group: 'Effects', note: 'cut-out' },
  border: { group: 'Effects' },
  brightness: { group: 'Effects' },
  contrast: { group: 'Effects' },
  saturation: { group: 'Effects' },
  gamma: { group: 'Effects' },
  watermark: { group: 'Effects' },
  template: { group: 'Cards', note: 'card (docs/templates.md)' },
  fills: { group: 'Cards', note: 'hex of a JSON object' },
  grayscale: { group: 'Effects' },
  flip: { group: 'Effects', note: 'top–bottom' },
  flop: { group: 'Effects', note: 'left–right' },
  text: { group: 'Text' },
  'text-size': { group: 'Text', note: 'px' },
  'text-color': { group: 'Text' },
  'text-font': { group: 'Text', note: 'sans, sans-bold' },
  'text-align': { group: 'Text' },
  'text-position': { group: 'Text' },
  'text-pad': { group: 'Text', note: 'px from the edges' },
  'text-shadow': { group: 'Text', note: 'px' },
  'text-width': { group: 'Text', note: 'px, wraps' },
};

/** This code's grammar data: what the origin reads, and what a deploy writes into the edge's store. */
// Of identifiers only, so that the edge's bundle, which never uses it, can drop it (and the data with it).
export const GRAMMAR_DATA: GrammarData = {
  words: WORDS,
  patterns: NUMBER_PATTERNS,
  booleans: BOOLEANS,
  synonyms: SYNONYMS,
  params: PARAM_TABLE,
  cropStrategies: CROP_STRATEGIES,
  defaultQuality: DEFAULT_QUALITY,
  autoWidths: AUTO_WIDTHS,
  autoWidth: AUTO_FALLBACK_WIDTH,
  saveDataQuality: SAVE_DATA_QUALITY,
};

/** The grammar's data in use (useGrammarData). */
export let DATA: GrammarData;

/**
 * When, given the other ops, a parameter's value can change the image (a
 * parameter not named here: whenever it is not its `none`). Code, which the
 * edge function holds beside the readers.
 */
const MATTERS: { [name in keyof ParsedParams]?: (ops: Ops) => boolean } = {
  fit: (ops) => bothSides(ops) && !coverCrop(ops),
  fill: contained,
  // Cover crops (where any position matters, unless a focal point places them); contain only places the image.
  position: (ops) => (coverCrop(ops) ? !ops.fp : contained(ops) && DATA.cropStrategies.indexOf(ops.position!) < 0),
  // A point that places a cover crop; it wins over position (above).
  fp: coverCrop,
  enlarge: (ops) => ops.width != null || ops.height != null,
  // Cloudflare ignores a brightness or contrast of 0; saturation 0 is grey, which grayscale already is.
  brightness: (ops) => ops.brightness !== 0,
  contrast: (ops) => ops.contrast !== 0,
  saturation: (ops) => !ops.grayscale,
  // Without an explicit format the default is not known at the edge (with `accept` the origin
  // chooses among the accepted formats, and a signature covers the URI before negotiation),
  // so any quality given is kept.
  quality: (ops) => ops.format == null || (isLossy(ops.format) && ops.quality !== DATA.defaultQuality[ops.format as 'jpeg']),
  // PNG and GIF have no quality to lower.
  max_bytes: (ops) => isLossy(ops.format),
  // Only a JPEG carries a gain map.
  hdr: (ops) => ops.format == null || ops.format === 'jpeg',
  // Stands where `format` would, which it excludes.
  accept: (ops) => ops.format == null,
  fills: (ops) => ops.template != null, // a card's slots: beside no template they fill nothing
};

/** Every parameter, in op order. */
export let PARAMS: Param[];
/** The parameters a viewer may give, in op order. */
export let VIEWER_PARAMS: Param[];
/** Every spelling a viewer may use for a parameter (lower-case) mapped to its record. */
export let PARAMS_BY_NAME: { [spelling: string]: Param };

/** Makes `data` the grammar's: this code's, or at the edge its store's. */
export const useGrammarData = (data: GrammarData): void => {
  DATA = data;
  useReaderData(data);
  PARAMS = Object.keys(data.params).map((key) => {
    const name = key as keyof ParsedParams;
    const record = data.params[name] as ParamRecord;
    const matters = MATTERS[name];
    return {
      name,
      aliases: record.aliases || [],
      read: (raw: string, options: GrammarOptions) => readValue(record, name, raw, options) as ParsedParams[keyof ParsedParams],
      // A `text-*` op says how a text is drawn: beside none, it changes nothing.
      matters: (ops: Ops) =>
        ops[name as keyof Ops] !== record.none &&
        (!matters || matters(ops)) &&
        (!(typeof EDGE_READS_TEXT === 'undefined' || EDGE_READS_TEXT) || !!ops.text || name.indexOf('text-') != 0),
      canonicalOnly: record.canonicalOnly,
    };
  });
  VIEWER_PARAMS = PARAMS.filter((param) => !param.canonicalOnly);
  PARAMS_BY_NAME = {};
  VIEWER_PARAMS.forEach((param) => {
    PARAMS_BY_NAME[param.name] = param;
    param.aliases.forEach((alias) => {
      PARAMS_BY_NAME[alias] = param;
    });
  });
};

// The edge's bundle drops statements labelled `fromCode` (lib/edge-function.ts) and with them the data.
fromCode: useGrammarData(GRAMMAR_DATA);

/** The spellings of the parameter that names a preset. */
export const PRESET_SPELLINGS = ['preset', 'p'];
/** The parameter that carries a URL's signature. */
export const SIGNATURE_PARAM = 'sig';

/**
 * A URL's signature and what it covers beyond one canonical URI, named by the
 * parameters that give them: `sig`; `exp`, when the URL stops working (Unix
 * seconds); `prefix`, a folder whose every key the signature covers; `allow`,
 * with a prefix, the variants allowed (canonical ops segments separated by
 * spaces; absent: any). None enters the canonical URI or the cache key. */
export interface SignatureParams {
  sig?: string;
  exp?: string;
  prefix?: string;
  allow?: string;
}

/** The names of the SignatureParams, as a URL gives them (in any letter case). */
export const SIGNATURE_PARAMS: (keyof SignatureParams)[] = [SIGNATURE_PARAM, 'exp', 'prefix', 'allow'];
