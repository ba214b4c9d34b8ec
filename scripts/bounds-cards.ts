// The card cases of `npm run bounds` (scripts/bounds.ts): an Open Graph card
// over a large photo; the largest template
// a deployment may define (a canvas at MAX_CANVAS_PIXELS, MAX_SLOTS slots:
// four images of large noise and four texts as long as a card's key allows,
// over the widest size range), filled to its limits and drawn in each format;
// and the same template filled with sources too large together.

import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { MAX_CARD_KEY_BYTES } from '../lambda/origin/card-fills';
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

/**
 * The canonical ops of the largest card: its template, its fills (the hex of
 * their JSON), then `tail`. Its texts are as long as the key allows (S3's
 * 1,024 bytes hold the key and the ops, fills included), in words of Latin
 * letters, which make the most glyphs per byte.
 */
export function largestCardAsk(key: string, tail: string): string {
  const fills: Record<string, string> = {};
  CARD_SLOT_KEYS.forEach((slotKey, index) => {
    fills[`image${index + 1}`] = slotKey;
  });
  QUADRANTS.forEach((_, index) => {
    fills[`text${index}`] = '';
  });
  const around = `${key}/template=largest.${LARGEST_TEMPLATE.version},fills=,${tail}`.length;
  const each = Math.floor((Math.floor((MAX_CARD_KEY_BYTES - around) / 2) - JSON.stringify(fills).length) / QUADRANTS.length);
  QUADRANTS.forEach((_, index) => {
    fills[`text${index}`] = Array.from({ length: each }, (_, i) => (i % 8 === 7 ? ' ' : 'Wm'[i % 2])).join('');
  });
  return cardAsk('largest', LARGEST_TEMPLATE, fills, tail);
}

/** The canonical ops of a card of `template` with `fills`, then `tail`. */
const cardAsk = (name: string, template: TemplateDefinition, fills: Record<string, string>, tail: string) =>
  `template=${name}.${template.version},fills=${Buffer.from(JSON.stringify(fills)).toString('hex')},${tail}`;

/** The card docs/templates.md shows: a photo on the left half, a bold title on the right. */
export const OG_TEMPLATE: TemplateDefinition = checkedTemplate(
  'og',
  {
    width: 1200,
    height: 630,
    background: '#101828',
    slots: {
      photo: { kind: 'image', box: [0, 0, 600, 630], position: 'attention' },
      title: { kind: 'text', box: [640, 60, 520, 510], font: 'sans-bold', size: [32, 96], colour: '#ffffff', maxLength: 120 },
    },
  },
  ['sans', 'sans-bold'],
);

/** An Open Graph card's ops with a title of 120 characters. */
export const ogCardAsk = (tail: string) =>
  cardAsk(
    'og',
    OG_TEMPLATE,
    { title: 'Summer sale: forty per cent off every lens, bag and tripod in the shop, until Sunday night only. '.padEnd(120, '!') },
    tail,
  );

/** A noise JPEG of `side` pixels: four of the largest that fit MAX_SOURCE_BYTES together. */
export const noiseJpeg = (side: number) =>
  sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
