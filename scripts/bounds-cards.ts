// The card cases of `npm run bounds` (scripts/bounds.ts): the largest template
// a deployment may define (a canvas at MAX_CANVAS_PIXELS, MAX_SLOTS slots:
// four images of large noise and four texts of MAX_TEXT_LENGTH characters
// over the widest size range), filled to its limits and drawn in each format;
// and the same template filled with sources too large together.

import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { checkedTemplate, MAX_SIZE_RANGE, MAX_TEXT_LENGTH, type TemplateDefinition } from '../lambda/origin/templates';

/** The source keys the largest card's other image slots name, beside the case's own key. */
export const CARD_SLOT_KEYS = ['card-slot-1', 'card-slot-2', 'card-slot-3'];

/** 2500x1600: MAX_CANVAS_PIXELS exactly, in four quadrants of an image and a text each. */
const QUADRANTS: [number, number][] = [
  [0, 0],
  [1250, 0],
  [0, 800],
  [1250, 800],
];

export const LARGEST_TEMPLATE: TemplateDefinition = checkedTemplate(
  'largest',
  {
    width: 2500,
    height: 1600,
    background: '#20202080',
    slots: Object.fromEntries(
      QUADRANTS.flatMap(([x, y], index) => [
        [`image${index}`, { kind: 'image', box: [x, y, 1250, 800], position: 'attention' }],
        [`text${index}`, { kind: 'text', box: [x, y, 1250, 800], font: 'sans', size: [6, 6 + MAX_SIZE_RANGE], maxLength: MAX_TEXT_LENGTH }],
      ]),
    ),
  },
  ['sans', 'sans-bold'],
);

/** Korean, whose wide glyphs make the largest render per character, MAX_TEXT_LENGTH of it in words. */
const LONGEST_TEXT = Array.from({ length: MAX_TEXT_LENGTH }, (_, i) => (i % 6 === 5 ? ' ' : '한')).join('');

/** The canonical ops of the largest card: its template, its fills (the hex of their JSON), then `tail`. */
export function largestCardAsk(tail: string): string {
  const fills: Record<string, string> = {};
  CARD_SLOT_KEYS.forEach((key, index) => {
    fills[`image${index + 1}`] = key;
  });
  QUADRANTS.forEach((_, index) => {
    fills[`text${index}`] = LONGEST_TEXT;
  });
  return `template=largest.${LARGEST_TEMPLATE.version},fills=${Buffer.from(JSON.stringify(fills)).toString('hex')},${tail}`;
}

/** A noise JPEG of `side` pixels: four of the largest that fit MAX_SOURCE_BYTES together. */
export const noiseJpeg = (side: number) =>
  sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
