// Watermarks by name. A watermark is an image file deployed with the origin
// function (not an object in a bucket), so its version, a hash of its bytes
// and its placement, is known when the deployment is made: the edge writes it
// into every canonical URI that asks for the watermark, and a changed
// watermark makes new keys for every source's variants at once. A file is
// read once per environment and kept in memory.

import { createHash } from 'node:crypto';
import { CROP_STRATEGIES, inSlot, OVERLAY_SLOTS, POSITIONS, slotOps, type Ops, type Position } from '../grammar';
import { deployedVersion, HttpError } from './errors';
import { readOnce } from './packaged-file';

/** Where a watermark goes on the output, and how large and opaque it is. */
export interface WatermarkPlacement {
  /** The corner, side or centre it sits at (default `bottom-right`). */
  position: WatermarkPosition;
  /** Its distance from the output's edges, as a fraction of the output's shorter side (default 0.03). */
  margin: number;
  /** Its width as a fraction of the output's width (default 0.25); it also never exceeds the output's height less the margins. */
  size: number;
  /** Multiplies its own alpha, from 0.05 to 1 (default 1). */
  opacity: number;
}

/** Placements are positions without the content-aware ones. */
export const WATERMARK_POSITIONS = POSITIONS.filter((position) => !CROP_STRATEGIES.includes(position));
export type WatermarkPosition = Exclude<Position, 'entropy' | 'attention' | 'face' | 'auto'>;

export const DEFAULT_PLACEMENT: WatermarkPlacement = { position: 'bottom-right', margin: 0.03, size: 0.25, opacity: 1 };

/** A deployed watermark: its file (in the function's package) and version beside its placement. */
export interface WatermarkDefinition extends WatermarkPlacement {
  file: string;
  /** Eight hex digits of the hash of the file's bytes and the placement (watermarkVersion). */
  version: string;
}

/** What the transform composites: the watermark's bytes and where they go. */
export interface WatermarkImage {
  bytes: Buffer;
  placement: WatermarkPlacement;
}

/** Largest watermark file, and its largest size in pixels: a logo, decoded on every miss that asks for it. */
export const MAX_WATERMARK_BYTES = 1024 * 1024;
export const MAX_WATERMARK_PIXELS = 1024 * 1024;

export function watermarkVersion(bytes: Buffer, placement: WatermarkPlacement): string {
  const { position, margin, size, opacity } = placement;
  return createHash('sha256')
    .update(bytes)
    .update(JSON.stringify([position, margin, size, opacity]))
    .digest('hex')
    .slice(0, 8);
}

/**
 * The placement with defaults filled in; throws, naming the watermark and the
 * field, for a value out of range (a deployment mistake, found at synth).
 */
export function checkedPlacement(name: string, given: Partial<WatermarkPlacement>): WatermarkPlacement {
  const placement = { ...DEFAULT_PLACEMENT, ...given };
  const invalid = (field: string, expected: string) => new Error(`Watermark "${name}": ${field} must be ${expected}.`);
  if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(name)) throw invalid('its name', 'lower-case letters, digits and -, at most 32');
  if (!WATERMARK_POSITIONS.includes(placement.position)) throw invalid('position', `one of ${WATERMARK_POSITIONS.join(', ')}`);
  if (!(placement.margin >= 0 && placement.margin <= 0.25)) throw invalid('margin', 'from 0 to 0.25');
  if (!(placement.size > 0 && placement.size <= 1)) throw invalid('size', 'above 0 and at most 1');
  if (!(placement.opacity >= 0.05 && placement.opacity <= 1)) throw invalid('opacity', 'from 0.05 to 1');
  return placement;
}

/** The prefix of `key` that requires a watermark, and the watermark it requires; the longest prefix wins. */
export function requiredWatermark(key: string, rules: Record<string, string>): { prefix: string; name: string } | undefined {
  const prefix = Object.keys(rules)
    .filter((candidate) => key.startsWith(candidate))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? undefined : { prefix, name: rules[prefix] as string };
}

/** What stands for a text among the overlays drawn: no watermark's name has a space. */
const A_TEXT = ' text';

/**
 * Throws a 403 when `key` lies under a prefix that requires a watermark and
 * `ops` do not draw it last: absent, or under a text or another watermark
 * drawn after it (which could hide it).
 */
export function checkRequiredWatermark(key: string, ops: Ops, rules: Record<string, string>): void {
  const required = requiredWatermark(key, rules);
  if (!required) return;
  const drawn = OVERLAY_SLOTS.flatMap((slot) => {
    const overlay = slotOps(ops, slot);
    return [overlay.watermark?.split('.')[0], overlay.text ? A_TEXT : undefined].filter((name) => name !== undefined);
  });
  if (drawn[drawn.length - 1] === required.name) return;
  throw watermarkRequired(
    required,
    drawn.includes(required.name)
      ? " drawn over everything else: draw no text or watermark after it (a slot's text follows its watermark)."
      : `: add wm=${required.name} to the URL.`,
  );
}

/** The 403 of a prefix that requires a watermark, `what` saying what to do. */
const watermarkRequired = (required: { prefix: string; name: string }, what: string) =>
  new HttpError('watermark_required', `Images under "${required.prefix}" are served only with the watermark "${required.name}"${what}`);

/**
 * Throws a 403 when a card's image slot shows a key under a prefix that
 * requires a watermark: a card draws none, so it cannot show such an image.
 */
export function checkCardImages(keys: string[], rules: Record<string, string>): void {
  for (const key of keys) {
    const required = requiredWatermark(key, rules);
    if (required) throw watermarkRequired(required, `, which a card does not draw: no card may show "${key}".`);
  }
}

/** The images of the watermarks `ops` name, by op (`watermark`, `watermark2`...), read by `read`. */
export async function watermarkImages(
  ops: Ops,
  read: (canonical: string) => Promise<WatermarkImage>,
): Promise<{ [op: string]: WatermarkImage }> {
  const named = OVERLAY_SLOTS.map((slot): [string, string | undefined] => [inSlot('watermark', slot), slotOps(ops, slot).watermark]);
  const images = await Promise.all(
    named.filter(([, canonical]) => canonical !== undefined).map(async ([op, canonical]) => [op, await read(canonical as string)] as const),
  );
  return Object.fromEntries(images);
}

/** Reads each watermark's file once per environment, for the version the canonical URI names. */
export function watermarkFiles(definitions: Record<string, WatermarkDefinition>) {
  const read = new Map<string, () => Promise<Buffer>>();
  return async function watermarkImage(canonical: string): Promise<WatermarkImage> {
    const definition = deployedVersion(canonical, definitions, 'watermark_unavailable', 'watermark');
    const name = canonical.split('.')[0] as string;
    let bytes = read.get(name);
    if (!bytes) {
      bytes = readOnce(definition.file);
      read.set(name, bytes);
    }
    const { file: _file, version: _version, ...placement } = definition;
    return { bytes: await bytes(), placement };
  };
}
