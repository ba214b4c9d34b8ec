// A text drawn on the output (`text` and the `text-*` ops, `text2` and the
// `text2-*` ops in overlay slot 2...): after its slot's watermark, inside any
// border, on the first frame of an animation (like a watermark), in every
// output format. The render is text/render.ts's, with
// the packaged fonts or the deployment's own; its limits are 400s naming them, checked when the step
// is priced, before anything is decoded.

import { inSlot, OVERLAY_SLOTS, slotOps, type OverlayOps, type OverlaySlot } from '../../../grammar';
import { checkText, FONT_LOAD, renderPrice, renderText, TextLimitError, type TextAlign, type TextSpec } from '../text/render';
import { drawOver } from './composition';
import { FREE, perMegapixel, rgba, type Step } from './context';

/** CPU seconds per megapixel of the output: the text composited over it. */
const RATES = { composite: 0.1 };

/**
 * Why a text may not hold a `/`: S3 decodes the canonical URI into the
 * variant's key, where a `/` would start a segment, and the variant of one
 * source could take the key of another's (`a` with `text=x/width=5` is `a/text=x`'s `width=5`).
 */
const SLASH = 'The text contains a "/", which a variant\'s key cannot hold: write "∕" (U+2215, division slash) instead.';

/** The grammar's alignment words to the render's (Pango's `centre`). */
const ALIGNS: { [word: string]: TextAlign } = { left: 'left', center: 'centre', right: 'right' };

/** What a slot's `ops` ask to be drawn; `room`, the width inside the pads, caps the wrap width (a text wraps within the image). */
function textSpecOf(ops: OverlayOps, room?: number): TextSpec {
  const wrap = ops['text-width'] ?? room;
  return {
    text: ops.text as string,
    font: ops['text-font'] ?? 'sans',
    size: ops['text-size'] ?? 48,
    colour: rgba(ops['text-color'] ?? '000000'),
    align: ALIGNS[ops['text-align'] ?? 'left'] as TextAlign,
    ...(wrap !== undefined ? { width: room === undefined ? wrap : Math.min(wrap, room) } : {}),
    shadow: ops['text-shadow'] ?? 0,
  };
}

/** The text of overlay `slot` (`text`, `text2`...), drawn after the slot's watermark. */
export const textStep = (slot: OverlaySlot): Step => {
  const slotText = (ops: object) => slotOps(ops, slot);
  const earlierSlots = OVERLAY_SLOTS.slice(0, OVERLAY_SLOTS.indexOf(slot));
  return {
    name: inSlot('text', slot),
    price: ({ ops, outputPixels }) => {
      const overlay = slotText(ops);
      if (!overlay.text) return FREE;
      // Refused here, before the decode: the wrap width is the one asked for (the image's may add lines, checked again when drawn).
      if (overlay.text.includes('/')) throw new TextLimitError('slash', SLASH);
      const spec = textSpecOf(overlay);
      checkText(spec);
      const render = renderPrice(spec);
      // The fonts' load, by the first slot with a text; the image it is drawn on as pixels (under a border, the result too); the render.
      const load = earlierSlots.some((earlier) => slotOps(ops, earlier).text) ? FREE : FONT_LOAD;
      return {
        seconds: load.seconds + render.seconds + perMegapixel(RATES.composite, outputPixels),
        bytes: load.bytes + render.bytes + 2 * outputPixels * 4,
      };
    },
    carriesGainMap: (ops) => !slotText(ops).text,
    firstFrameOnly: (ops) => !!slotText(ops).text,
    apply(image, context) {
      const overlay = slotText(context.ops);
      if (!overlay.text) return undefined;
      const pad = overlay['text-pad'] ?? 0;
      return drawOver(
        image,
        context,
        overlay['text-position'] ?? 'center',
        () => pad,
        (room) => renderText({ ...textSpecOf(overlay, room[0]), fonts: context.fonts }),
      );
    },
  };
};
