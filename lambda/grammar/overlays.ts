// Several overlays in one request (docs/text.md#several-overlays): four
// slots, each a watermark and a text, drawn in slot order, a slot's watermark
// before its text. The first slot's ops are `watermark`, `text` and `text-*`;
// slot n's are the same with n after the family's name (`watermark2`,
// `text2`, `text2-size`), their records the first slot's, renamed. A number
// places an overlay, as the canonical URI keeps no query's order.

import type { TextAlignment, TextPosition } from './params';

/** The ops of one overlay slot, as the first slot names them. */
export interface OverlayOps {
  /**
   * A watermark the deployment names: `<name>` as a viewer asks, `<name>.<version>`
   * in a canonical URI (the edge adds the version, so a changed watermark makes new keys).
   */
  watermark?: string;
  /**
   * A text drawn on the output, after its slot's watermark and inside any border
   * (lambda/origin/image/steps/text.ts): percent-encoded in a canonical URI;
   * the `text-*` ops say how, and matter only beside it.
   */
  text?: string;
  /** The font's size in pixels. */
  'text-size'?: number;
  /** `rrggbb` or `rrggbbaa`, lower-case. */
  'text-color'?: string;
  /** A packaged font, `sans` or `sans-bold`, or the deployment's own; other scripts fall back to their packaged fonts. */
  'text-font'?: string;
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
}

/** Every slot, in drawing order, by the number its ops carry: the first's carry none. */
export const OVERLAY_SLOTS = ['', '2', '3', '4'] as const;
export type OverlaySlot = (typeof OVERLAY_SLOTS)[number];
/** The slots after the first. */
const NUMBERED_SLOTS = /* @__PURE__ */ OVERLAY_SLOTS.slice(1);

/** An overlay op's name in slot `N`: `text-size` in slot 2 is `text2-size`. */
type InSlot<Name extends string, N extends string> = Name extends `${infer Family}-${infer Rest}` ? `${Family}${N}-${Rest}` : `${Name}${N}`;

/** The ops of slot `N`, under their names there. */
export type SlotOps<N extends string> = { [Name in keyof OverlayOps as InSlot<Name, N>]: OverlayOps[Name] };

/** The ops of every numbered slot. */
export type NumberedOverlayOps = SlotOps<'2'> & SlotOps<'3'> & SlotOps<'4'>;

/** An op's `name` in `slot`: the number follows the family's name. */
export const inSlot = (name: string, slot: string): string => name.replace(/^[a-z]+/, (family) => family + slot);

/**
 * The first slot's entries (records, places, cases) renamed for every
 * numbered slot, in slot order. A numbered op has no other spelling: `wm` is
 * the first slot's alone, so that one table row documents the numbered ones.
 */
export function numberedSlots<Entry extends object>(first: { [name: string]: Entry }): { [name: string]: Entry } {
  const entries: { [name: string]: Entry } = {};
  NUMBERED_SLOTS.forEach((slot) => {
    Object.keys(first).forEach((name) => {
      const entry = first[name] as Entry;
      entries[inSlot(name, slot)] = 'aliases' in entry ? ({ ...entry, aliases: undefined } as Entry) : entry;
    });
  });
  return entries;
}

/** The first slot's op names, each once (the type holds every one). */
const SLOT_OP_NAMES = /* @__PURE__ */ Object.keys({
  watermark: 1,
  text: 1,
  'text-size': 1,
  'text-color': 1,
  'text-font': 1,
  'text-align': 1,
  'text-position': 1,
  'text-pad': 1,
  'text-shadow': 1,
  'text-width': 1,
} satisfies { [name in keyof OverlayOps]-?: 1 });

/** The ops of `slot` of `ops`, under the first slot's names. */
export function slotOps(ops: object, slot: OverlaySlot): OverlayOps {
  const named = ops as { [name: string]: unknown };
  const view: { [name: string]: unknown } = {};
  SLOT_OP_NAMES.forEach((name) => {
    const value = named[inSlot(name, slot)];
    if (value !== undefined) view[name] = value;
  });
  return view as OverlayOps;
}
