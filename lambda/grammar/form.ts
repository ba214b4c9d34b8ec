// Where the playground's form (local/emulator/playground-form.ts) shows each
// parameter a viewer may give. Not the grammar's data: the edge's store and
// bundle hold none of it.

import { numberedSlots, type NumberedOverlayOps, type OverlayOps } from './overlays';
import type { ViewerParams } from './params';

/** Where the playground's form shows a parameter (FORM_PLACES). */
type FormPlace = { group: (typeof FORM_GROUPS)[number]; note?: string };

/** The groups of the playground's form, in its order; the page's Cards section sets the Cards group's, from a template's slots. */
export const FORM_GROUPS = ['Size', 'Format', 'Effects', 'Text', 'Overlays 2–4', 'Cards'] as const;

/** The numbered slots' places, from the first slot's: a group of their own. */
const numberedPlaces = (first: { [name: string]: FormPlace }) => {
  const places: { [name: string]: FormPlace } = {};
  Object.keys(first).forEach((name) => {
    places[name] = { ...first[name], group: 'Overlays 2–4' };
  });
  return numberedSlots(places);
};

/** A text's places, the first slot's. */
const TEXT_PLACES: { [name in Exclude<keyof OverlayOps, 'watermark'>]-?: FormPlace } = {
  text: { group: 'Text' },
  'text-size': { group: 'Text', note: 'px' },
  'text-color': { group: 'Text' },
  'text-font': { group: 'Text', note: 'sans, sans-bold, or your own' },
  'text-align': { group: 'Text' },
  'text-position': { group: 'Text' },
  'text-pad': { group: 'Text', note: 'px from the edges' },
  'text-shadow': { group: 'Text', note: 'px' },
  'text-width': { group: 'Text', note: 'px, wraps' },
};

/**
 * Where the playground's form (local/emulator/playground-form.ts) shows each parameter a viewer may
 * give: its group and, beside its name after its aliases, a word on its value that the rule does not
 * say. The entries' order is the form's; the control itself comes from the rule. Not the grammar's
 * data: the edge's store and bundle hold none of it.
 */
export const FORM_PLACES: { [name in keyof ViewerParams]-?: FormPlace } = /* @__PURE__ */ (() => ({
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
  ...TEXT_PLACES,
  // The numbered slots, watermark and text: drawn in slot order after the first (lambda/grammar/overlays.ts).
  .../* @__PURE__ */ (numberedPlaces({ watermark: { group: 'Effects' }, ...TEXT_PLACES }) as {
    [name in keyof NumberedOverlayOps]-?: FormPlace;
  }),
}))();
