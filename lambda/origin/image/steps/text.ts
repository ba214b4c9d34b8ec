// A text drawn on the output (`text` and the `text-*` ops): after any
// watermark, inside any border, on the first frame of an animation (like a
// watermark), in every output format. The render is text/render.ts's, with
// the packaged fonts or the deployment's own; its limits are 400s naming them, checked when the step
// is priced, before anything is decoded.

import type { Ops } from '../../../grammar';
import { checkText, renderText, TextLimitError, textPrice, type TextAlign, type TextSpec } from '../text/render';
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

/** What `ops` ask to be drawn; `room`, the width inside the pads, caps the wrap width (a text wraps within the image). */
function textSpecOf(ops: Ops, room?: number): TextSpec {
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

export const textStep: Step = {
  name: 'text',
  price: ({ ops, outputPixels }) => {
    if (!ops.text) return FREE;
    // Refused here, before the decode: the wrap width is the one asked for (the image's may add lines, checked again when drawn).
    if (ops.text.includes('/')) throw new TextLimitError('slash', SLASH);
    const spec = textSpecOf(ops);
    checkText(spec);
    const render = textPrice(spec);
    // The image it is drawn on as pixels (under a border, the result too), and the render.
    return { seconds: render.seconds + perMegapixel(RATES.composite, outputPixels), bytes: render.bytes + 2 * outputPixels * 4 };
  },
  carriesGainMap: (ops) => !ops.text,
  firstFrameOnly: (ops) => !!ops.text,
  apply(image, context) {
    const { ops } = context;
    if (!ops.text) return undefined;
    const pad = ops['text-pad'] ?? 0;
    return drawOver(
      image,
      context,
      ops['text-position'] ?? 'center',
      () => pad,
      (room) => renderText({ ...textSpecOf(ops, room[0]), fonts: context.fonts }),
    );
  },
};
