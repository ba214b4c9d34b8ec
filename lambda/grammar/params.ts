// The URL parameters of the contract, one declarative record each (name,
// aliases, how to parse a value, when it changes the image, whether a viewer
// may give it). The order of PARAMS is the fixed order of ops in the
// canonical URI, so adding a parameter touches this file only.

import { invalidParameter, parseBoolean, parseChoice, parseColour, parseDecimal, parseInteger } from './validate';

export const FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const;
export type Fit = (typeof FITS)[number];

export const POSITIONS = [
  'center', 'top', 'right', 'bottom', 'left',
  'top-left', 'top-right', 'bottom-left', 'bottom-right',
  'entropy', 'attention',
] as const;
export type Position = (typeof POSITIONS)[number];

/** Formats a canonical URI can name. Absent means "the source's own family". */
export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
const REQUESTED_FORMATS = ['auto', 'jpeg', 'jpg', 'png', 'webp', 'avif', 'gif', 'json'] as const;
export type RequestedFormat = 'auto' | OutputFormat;
/** What the edge negotiated `format=auto` to from the viewer's Accept header. */
export const NEGOTIATED_FORMATS = ['avif', 'webp'] as const;
export type NegotiatedFormat = (typeof NEGOTIATED_FORMATS)[number];

export type Rotation = 90 | 180 | 270;

/** Default encoder quality per lossy format; a request for the default is a no-op. */
export const DEFAULT_QUALITY = { jpeg: 80, webp: 80, avif: 50 } as const;

/** The canonical operations: what a variant is made of. */
export interface Ops {
  width?: number;
  height?: number;
  fit?: Fit;
  position?: Position;
  enlarge?: boolean;
  rotate?: Rotation;
  flip?: boolean;
  flop?: boolean;
  grayscale?: boolean;
  blur?: number;
  sharpen?: number;
  /** `rrggbb` or `rrggbbaa`, lower-case. */
  background?: string;
  quality?: number;
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

/** What a viewer's query may say: the ops, plus `dpr`, plus `format=auto`, minus what only the edge writes. */
export interface ViewerParams extends Omit<Ops, 'format' | 'accept'> {
  dpr?: number;
  format?: RequestedFormat;
}

/** What the parameter records parse: a viewer's parameters, or the ops of a canonical URI. */
export type ParsedParams = ViewerParams & Pick<Ops, 'accept'>;

/** A named set of viewer parameters, e.g. `{ width: '200', height: '200', fit: 'cover' }`. */
export type Preset = { [name: string]: string };

export interface GrammarOptions {
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
}

export const DEFAULT_GRAMMAR_OPTIONS: GrammarOptions = { maxDimension: 8192 };

export interface Param {
  name: keyof ParsedParams;
  aliases: string[];
  parse(raw: string, options: GrammarOptions): ParsedParams[keyof ParsedParams];
  /** False when, given the other ops, the value cannot change the image; it is then dropped. */
  matters?(ops: Ops): boolean;
  /**
   * Written by the edge only: a canonical URI may hold it, but a viewer's
   * query cannot set it (the name is ignored there like any unknown one).
   */
  canonicalOnly?: boolean;
}

const bothSides = (ops: Ops) => ops.width !== undefined && ops.height !== undefined;
const effectiveFit = (ops: Ops): Fit => ops.fit || 'cover';
const isLossy = (format: OutputFormat | undefined) =>
  format === undefined || format === 'jpeg' || format === 'webp' || format === 'avif';

export const PARAMS: Param[] = [
  {
    name: 'width',
    aliases: ['w'],
    parse: (raw, options) => parseInteger('width', raw, 1, options.maxDimension),
  },
  {
    name: 'height',
    aliases: ['h'],
    parse: (raw, options) => parseInteger('height', raw, 1, options.maxDimension),
  },
  {
    name: 'dpr',
    aliases: [],
    parse: (raw) => parseDecimal('dpr', raw, 1, 4),
  },
  {
    name: 'fit',
    aliases: [],
    parse: (raw) => parseChoice('fit', raw, FITS),
    matters: (ops) => bothSides(ops) && ops.fit !== 'cover',
  },
  {
    name: 'position',
    aliases: ['pos', 'gravity'],
    parse: (raw) => parseChoice('position', raw, POSITIONS),
    matters: (ops) => {
      const fit = effectiveFit(ops);
      const strategy = ops.position === 'entropy' || ops.position === 'attention';
      // Only cover crops (where any position matters); contain only places the image.
      return bothSides(ops) && ops.position !== 'center' && (fit === 'cover' || (fit === 'contain' && !strategy));
    },
  },
  {
    name: 'enlarge',
    aliases: [],
    parse: (raw) => parseBoolean('enlarge', raw),
    matters: (ops) => ops.enlarge === true && (ops.width !== undefined || ops.height !== undefined),
  },
  {
    name: 'rotate',
    aliases: [],
    parse: (raw) => {
      // Leading zeros are fine (`090`), as for every integer.
      const angle = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
      if (!(angle >= 0 && angle <= 270 && angle % 90 === 0)) throw invalidParameter('rotate', raw, 'one of 0, 90, 180, 270');
      return angle as Rotation | 0;
    },
    matters: (ops) => ops.rotate !== (0 as number),
  },
  {
    name: 'flip',
    aliases: [],
    parse: (raw) => parseBoolean('flip', raw),
    matters: (ops) => ops.flip === true,
  },
  {
    name: 'flop',
    aliases: [],
    parse: (raw) => parseBoolean('flop', raw),
    matters: (ops) => ops.flop === true,
  },
  {
    name: 'grayscale',
    aliases: ['greyscale'],
    parse: (raw) => parseBoolean('grayscale', raw),
    matters: (ops) => ops.grayscale === true,
  },
  {
    name: 'blur',
    aliases: [],
    parse: (raw) => parseDecimal('blur', raw, 0.3, 100),
  },
  {
    name: 'sharpen',
    aliases: [],
    parse: (raw) => parseDecimal('sharpen', raw, 0.5, 10),
  },
  {
    name: 'background',
    aliases: ['bg'],
    parse: (raw) => parseColour('background', raw),
  },
  {
    name: 'quality',
    aliases: ['q'],
    parse: (raw) => parseInteger('quality', raw, 1, 100),
    // Without an explicit format the default is not known at the edge (with `accept` the origin
    // chooses among the accepted formats, and a signature covers the URI before negotiation),
    // so any quality given is kept.
    matters: (ops) =>
      ops.format === undefined || (isLossy(ops.format) && ops.quality !== DEFAULT_QUALITY[ops.format as 'jpeg']),
  },
  {
    name: 'format',
    aliases: ['fm', 'f'],
    parse: (raw) => {
      const format = parseChoice('format', raw, REQUESTED_FORMATS);
      return format === 'jpg' ? 'jpeg' : format;
    },
  },
  {
    // Stands where `format` would, which it excludes.
    name: 'accept',
    aliases: [],
    parse: (raw) => parseChoice('accept', raw, NEGOTIATED_FORMATS),
    matters: (ops) => ops.format === undefined,
    canonicalOnly: true,
  },
];

/** The parameters a viewer may give, in op order. */
export const VIEWER_PARAMS: Param[] = PARAMS.filter((param) => !param.canonicalOnly);

/** Every spelling a viewer may use for a parameter (lower-case) mapped to its record. */
export const PARAMS_BY_NAME: { [spelling: string]: Param } = {};
VIEWER_PARAMS.forEach((param) => {
  PARAMS_BY_NAME[param.name] = param;
  param.aliases.forEach((alias) => {
    PARAMS_BY_NAME[alias] = param;
  });
});
