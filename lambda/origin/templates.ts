// Card templates by name: a canvas and the slots a URL fills (docs/templates.md).
// A template is JSON the deployment gives (the `templates` setting); it is
// checked at synth by the same code the origin runs at its start, and its
// version, a hash of the checked JSON, is written by the edge into every
// canonical URI that names it, so a changed template makes new keys for all
// its cards at once (as a watermark does).

import { createHash } from 'node:crypto';
import { mustBe, isObject } from '../common/checks';
import { POSITIONS, type Fit, type Position } from '../grammar';

/** A box on the canvas: left, top, width and height in pixels. */
export type Box = [x: number, y: number, width: number, height: number];

export const TEXT_ALIGNS = ['left', 'centre', 'right'] as const;
export type TextAlign = (typeof TEXT_ALIGNS)[number];

/** An image slot: a source image fitted into its box. */
export interface ImageSlot {
  kind: 'image';
  box: Box;
  /** `cover` (default) fills the box, cropping at `position`; `contain` fits inside it, the canvas showing around. */
  fit: Extract<Fit, 'cover' | 'contain'>;
  position: Position;
}

/** A text slot: the text in its box, at the largest size of its range at which it fits. */
export interface TextSlot {
  kind: 'text';
  box: Box;
  font: string;
  /** Smallest and largest size in pixels; the text is drawn at the largest that fits the box. */
  size: [min: number, max: number];
  /** `rrggbb` or `rrggbbaa`. */
  colour: string;
  align: TextAlign;
  /** Most characters (code points) a fill may have. */
  maxLength: number;
  /** Whether a URL must fill it (default true); an unfilled optional slot is left out. */
  required: boolean;
}

export type Slot = ImageSlot | TextSlot;

/** A checked template: what the origin draws. Its first image slot is filled by the URL's key. */
export interface TemplateDefinition {
  width: number;
  height: number;
  /** The canvas colour, `rrggbb` or `rrggbbaa` (default transparent white, `ffffff00`). */
  background: string;
  /** A source key drawn over the whole canvas (cover) beneath the slots, if any. */
  source?: string;
  slots: Record<string, Slot>;
  /** Eight hex digits of the hash of the rest (templateVersion). */
  version: string;
}

/** An image slot as a deployment writes it (ImageSlot has the defaults). */
export interface ImageSlotProps {
  kind: 'image';
  /** [x, y, width, height] in pixels, inside the canvas. */
  box: Box;
  /** @default 'cover' */
  fit?: 'cover' | 'contain';
  /** Where a cover crop is taken: a side, a corner, or `attention`, `face`, `auto`. @default 'center' */
  position?: Position;
}

/** A text slot as a deployment writes it (TextSlot has the defaults). */
export interface TextSlotProps {
  kind: 'text';
  /** [x, y, width, height] in pixels, inside the canvas: the text wraps at its width and is cut to it. */
  box: Box;
  /** A font's name: a packaged one (`sans`, `sans-bold`) or one of the deployment's own (its `fonts` setting). */
  font: string;
  /** [min, max] in pixels, at most 256 apart: drawn at the largest size at which the text fits the box. */
  size: [number, number];
  /** @default '#000000' */
  colour?: string;
  /** @default 'left' */
  align?: TextAlign;
  /** @default 100 (at most 500) */
  maxLength?: number;
  /** @default true */
  required?: boolean;
}

/** A card template as a deployment writes it (the `templates` setting, docs/templates.md). */
export interface TemplateProps {
  width: number;
  height: number;
  /** The canvas colour, `#rrggbb` or `#rrggbbaa`. @default transparent */
  background?: string;
  /** A source key drawn over the whole canvas (cover) beneath the slots. @default - none */
  source?: string;
  /** At most 8, by name (lower-case letters, digits and _): the URL's key fills the first image slot, `fills` the others. */
  slots: { [name: string]: ImageSlotProps | TextSlotProps };
}

/** A canvas's largest area: a 2400x1260 card (twice Open Graph's size) is about 3 MP. */
export const MAX_CANVAS_PIXELS = 4_000_000;
/** Most slots of one template, and most templates of one deployment (each one's version is in the edge's data). */
export const MAX_SLOTS = 8;
export const MAX_TEMPLATES = 20;
/** Longest text a slot may take, and widest size range: the fit tries at most log2(range) + 1 sizes. */
export const MAX_TEXT_LENGTH = 500;
export const MAX_SIZE_RANGE = 256;
/** Text sizes in pixels. */
export const MIN_TEXT_SIZE = 6;
export const MAX_TEXT_SIZE = 400;

const NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const SLOT_NAME = /^[a-z][a-z0-9_]{0,31}$/;
const HEX_COLOUR = /^#?([0-9a-f]{6}|[0-9a-f]{8})$/i;

/** The version of a template: its checked fields, in a fixed order, hashed. */
export function templateVersion(template: Omit<TemplateDefinition, 'version'>): string {
  const { width, height, background, source, slots } = template;
  return createHash('sha256')
    .update(JSON.stringify([width, height, background, source ?? null, slots]))
    .digest('hex')
    .slice(0, 8);
}

type Fail = (field: string, expected: string, value: unknown) => never;

const integerIn = (fail: Fail, field: string, value: unknown, low: number, high: number): number =>
  Number.isInteger(value) && (value as number) >= low && (value as number) <= high
    ? (value as number)
    : fail(field, `an integer from ${low} to ${high}`, value);

const colourOf = (fail: Fail, field: string, value: unknown): string => {
  if (typeof value !== 'string' || !HEX_COLOUR.test(value)) fail(field, 'a hex colour rrggbb or rrggbbaa', value);
  const hex = (value as string).replace(/^#/, '').toLowerCase();
  return hex.endsWith('ff') && hex.length === 8 ? hex.slice(0, 6) : hex;
};

const choiceOf = <T extends string>(fail: Fail, field: string, value: unknown, choices: readonly T[], fallback: T): T =>
  value === undefined ? fallback : choices.includes(value as T) ? (value as T) : fail(field, `one of ${choices.join(', ')}`, value);

/** A box inside a canvas of `width` x `height`. */
function boxOf(fail: Fail, field: string, value: unknown, width: number, height: number): Box {
  if (!Array.isArray(value) || value.length !== 4) fail(field, '[x, y, width, height] in pixels', value);
  const [x, y, w, h] = (value as unknown[]).map((part) => integerIn(fail, field, part, 0, Math.max(width, height)));
  if (!(w! > 0 && h! > 0 && x! + w! <= width && y! + h! <= height))
    fail(field, `a box of some size inside the ${width}x${height} canvas`, value);
  return [x!, y!, w!, h!];
}

function textSlot(fail: Fail, field: string, given: Record<string, unknown>, box: Box, fonts: readonly string[]): TextSlot {
  if (typeof given.font !== 'string' || !fonts.includes(given.font)) fail(`${field}.font`, `one of ${fonts.join(', ')}`, given.font);
  if (!Array.isArray(given.size) || given.size.length !== 2) fail(`${field}.size`, '[min, max] in pixels', given.size);
  const [min, max] = (given.size as unknown[]).map((size) => integerIn(fail, `${field}.size`, size, MIN_TEXT_SIZE, MAX_TEXT_SIZE));
  if (min! > max!) fail(`${field}.size`, 'a range [min, max] with min at most max', given.size);
  if (max! - min! > MAX_SIZE_RANGE) fail(`${field}.size`, `a range at most ${MAX_SIZE_RANGE} wide`, given.size);
  if (given.required !== undefined && typeof given.required !== 'boolean') fail(`${field}.required`, 'true or false', given.required);
  return {
    kind: 'text',
    box,
    font: given.font as string,
    size: [min!, max!],
    colour: given.colour === undefined ? '000000' : colourOf(fail, `${field}.colour`, given.colour),
    align: choiceOf(fail, `${field}.align`, given.align, TEXT_ALIGNS, 'left'),
    maxLength: integerIn(fail, `${field}.maxLength`, given.maxLength ?? 100, 1, MAX_TEXT_LENGTH),
    required: given.required !== false,
  };
}

function slotOf(fail: Fail, field: string, given: unknown, canvas: { width: number; height: number }, fonts: readonly string[]): Slot {
  if (!isObject(given)) return fail(field, 'an object with a kind, "image" or "text"', given);
  const box = boxOf(fail, `${field}.box`, given.box, canvas.width, canvas.height);
  if (given.kind === 'text') return textSlot(fail, field, given, box, fonts);
  if (given.kind !== 'image') return fail(`${field}.kind`, '"image" or "text"', given.kind);
  return {
    kind: 'image',
    box,
    fit: choiceOf(fail, `${field}.fit`, given.fit, ['cover', 'contain'] as const, 'cover'),
    position: choiceOf(fail, `${field}.position`, given.position, POSITIONS, 'center'),
  };
}

/**
 * The template with defaults filled in and its version; throws, naming the
 * template and the field, for anything that cannot be drawn (a deployment
 * mistake, found at synth). `fonts` are the font names the origin has.
 */
export function checkedTemplate(name: string, given: unknown, fonts: readonly string[]): TemplateDefinition {
  const fail: Fail = (field, expected, value) => {
    throw new Error(mustBe(`template "${name}": ${field}`, expected, value));
  };
  if (!NAME.test(name)) fail('its name', 'lower-case letters, digits and -, at most 32', name);
  if (!isObject(given)) return fail('the template', 'an object with width, height and slots', given);
  const width = integerIn(fail, 'width', given.width, 1, 8192);
  const height = integerIn(fail, 'height', given.height, 1, 8192);
  if (width * height > MAX_CANVAS_PIXELS) fail('width x height', `at most ${MAX_CANVAS_PIXELS} pixels`, `${width}x${height}`);
  if (given.source !== undefined && (typeof given.source !== 'string' || given.source === '')) fail('source', 'a source key', given.source);
  if (!isObject(given.slots)) return fail('slots', 'an object of slot names to slots', given.slots);
  const names = Object.keys(given.slots);
  if (names.length === 0 || names.length > MAX_SLOTS) fail('slots', `from 1 to ${MAX_SLOTS} slots`, names);
  const slots: Record<string, Slot> = {};
  for (const slot of names) {
    if (!SLOT_NAME.test(slot)) fail(`slot name "${slot}"`, 'lower-case letters, digits and _, starting with a letter, at most 32', slot);
    slots[slot] = slotOf(fail, `slots.${slot}`, given.slots[slot], { width, height }, fonts);
  }
  if (!Object.values(slots).some((slot) => slot.kind === 'image') && given.source === undefined)
    fail('slots', 'at least one image slot (the URL key fills the first), or the template a source', names);
  const background = given.background === undefined ? 'ffffff00' : colourOf(fail, 'background', given.background);
  const checked = { width, height, background, ...(given.source ? { source: given.source as string } : {}), slots };
  return { ...checked, version: templateVersion(checked) };
}

/** The slot the URL's key fills: the first image slot, or none (the key is then the template's source). */
export const keySlot = (template: TemplateDefinition): string | undefined =>
  Object.keys(template.slots).find((name) => template.slots[name]!.kind === 'image');
