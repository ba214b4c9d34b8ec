// Several overlays in one request, through the real handler on LocalStack as
// the edge rewrites a viewer's request: four slots, each a watermark then a
// text, drawn in slot order, each where its own ops place it; a prefix that
// requires a watermark is served only with it drawn over everything else,
// and never on a card (which draws none).

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest, splitQuery, TEXT_FONTS, type GrammarOptions } from '../../lambda/grammar';
import { checkedTemplate } from '../../lambda/origin/templates';
import { checkedPlacement, watermarkVersion, type WatermarkDefinition, type WatermarkPlacement } from '../../lambda/origin/watermarks';
import { isNear, pixelAt } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const WHITE = { r: 255, g: 255, b: 255 };
const RED = { r: 255, g: 0, b: 0 };
const BLUE = { r: 0, g: 0, b: 255 };
const BLACK = { r: 0, g: 0, b: 0 };
const GREEN = { r: 0, g: 255, b: 0 };

let origin: TestOrigin;
let grammar: GrammarOptions;

/** A square watermark of one colour, placed as given, as a deployment defines it. */
async function squareMark(folder: string, name: string, colour: object, given: Partial<WatermarkPlacement>): Promise<WatermarkDefinition> {
  const bytes = await sharp({ create: { width: 40, height: 40, channels: 3, background: colour } })
    .png()
    .toBuffer();
  const placement = checkedPlacement(name, { margin: 0, size: 0.2, ...given });
  const file = join(folder, `${name}.png`);
  await writeFile(file, bytes);
  return { ...placement, file, version: watermarkVersion(bytes, placement) };
}

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'overlays-'));
  const definitions = {
    logo: await squareMark(folder, 'logo', RED, { position: 'top-left' }),
    badge: await squareMark(folder, 'badge', BLUE, { position: 'bottom-right' }),
  };
  // A card of two photos side by side: a card draws no watermark.
  const duo = checkedTemplate(
    'duo',
    {
      width: 400,
      height: 200,
      slots: { left: { kind: 'image', box: [0, 0, 200, 200] }, right: { kind: 'image', box: [200, 0, 200, 200] } },
    },
    TEXT_FONTS,
  );
  grammar = {
    maxDimension: 8192,
    watermarks: { logo: definitions.logo.version, badge: definitions.badge.version },
    templates: { duo: duo.version },
  };
  origin = await createTestOrigin('overlays', {
    watermarkDefinitions: definitions,
    requireWatermark: { 'private/': 'logo' },
    templateDefinitions: { duo },
  });
  const white = await sharp({ create: { width: 400, height: 200, channels: 3, background: WHITE } })
    .png()
    .toBuffer();
  await origin.putSource('card.png', white);
  await origin.putSource('private/card.png', white);
});

/** The canonical URI the edge makes of a viewer's query. */
const edgeUri = (key: string, query: string) => canonicalRequest(`/${key}`, splitQuery(query), grammar, { accept: '' }).uri;

/** A black square glyph, 100 px, in the top-left corner: it covers the logo there. */
const square = (slot: string) => `text${slot}=%E2%96%A0&text${slot}-size=100&text${slot}-position=top-left`;

describe('several overlays through the handler', () => {
  it('draws every slot where its own ops place it: two watermarks and two texts', async () => {
    const uri = edgeUri(
      'card.png',
      'wm=logo&text=%E2%96%A0&text-size=100&text-color=0f0&text-position=right&watermark2=badge&text2=%E2%96%A0&text2-size=100&text2-position=left&format=png',
    );
    expect(uri, 'the numbered slot after the first, each op under its own name').toMatch(
      /watermark=logo\.\w+,text=.*,watermark2=badge\.\w+,text2=/,
    );
    const response = await origin.request(uri);
    expect(response.status, response.body.toString('utf8', 0, 200)).toBe(200);
    expect(isNear(await pixelAt(response.body, 10, 10), RED, 10), 'the logo, top left').toBe(true);
    expect(isNear(await pixelAt(response.body, 390, 190), BLUE, 10), 'the badge, bottom right').toBe(true);
    expect(isNear(await pixelAt(response.body, 370, 100), GREEN, 10), "the first text's green square, right").toBe(true);
    expect(isNear(await pixelAt(response.body, 30, 100), BLACK, 10), "the second text's black square, left").toBe(true);
    expect(isNear(await pixelAt(response.body, 200, 100), WHITE, 10), 'the image between them').toBe(true);
  });

  it('draws in slot order: a later slot covers an earlier one, whatever the query’s order', async () => {
    const textOverLogo = await origin.request(edgeUri('card.png', `${square('2')}&wm=logo&format=png`));
    const logoOverText = await origin.request(edgeUri('card.png', `watermark2=logo&${square('')}&format=png`));
    expect(isNear(await pixelAt(textOverLogo.body, 10, 10), BLACK, 10), "slot 2's text over slot 1's logo").toBe(true);
    expect(isNear(await pixelAt(logoOverText.body, 10, 10), RED, 10), "slot 2's logo over slot 1's text").toBe(true);
  });

  it('serves a prefix that requires a watermark only with it drawn last, so nothing can cover it', async () => {
    const covered = await origin.request(edgeUri('private/card.png', `wm=logo&${square('2')}&format=png`));
    expect(covered.status).toBe(403);
    expect(JSON.parse(covered.body.toString('utf8'))).toMatchObject({
      error: 'watermark_required',
      message: expect.stringContaining('drawn over everything else'),
    });
    const coveredInItsSlot = await origin.request(edgeUri('private/card.png', `wm=logo&${square('')}&format=png`));
    expect(coveredInItsSlot.status, "its own slot's text is drawn after it").toBe(403);
    const last = await origin.request(edgeUri('private/card.png', `${square('')}&wm=badge&watermark3=logo&format=png`));
    expect(last.status, last.body.toString('utf8', 0, 200)).toBe(200);
    expect(isNear(await pixelAt(last.body, 10, 10), RED, 10)).toBe(true);
  });

  it('shows no image of such a prefix on a card, which draws no watermark, in any slot', async () => {
    const fills = (right: string) => Buffer.from(JSON.stringify({ right })).toString('hex');
    const shown = await origin.request(edgeUri('card.png', `template=duo&fills=${fills('card.png')}&format=png`));
    expect(shown.status, shown.body.toString('utf8', 0, 200)).toBe(200);
    for (const [key, right] of [
      ['card.png', 'private/card.png'],
      ['private/card.png', 'card.png'],
    ]) {
      const refused = await origin.request(edgeUri(key!, `template=duo&fills=${fills(right!)}&format=png`));
      expect(refused.status, `${key} beside ${right}`).toBe(403);
      expect(JSON.parse(refused.body.toString('utf8'))).toEqual({
        error: 'watermark_required',
        message: `Images under "private/" are served only with the watermark "logo", which a card does not draw: no card may show "private/card.png".`,
      });
    }
  });

  it("refuses a numbered slot's text over the limits with a 400 naming the limit, and keeps no variant", async () => {
    const before = await origin.cachedKeys();
    const response = await origin.request(edgeUri('card.png', `text=ok&text4=${'x'.repeat(201)}&format=png`));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({
      error: 'invalid_parameter',
      message: 'The text has 201 characters, over the limit of 200.',
    });
    expect(await origin.cachedKeys()).toEqual(before);
  });

  it("drops a numbered slot's text-* ops beside no text in that slot, as the first slot's", () => {
    expect(edgeUri('card.png', 'text=a&text2-size=20&text3-color=fff&format=png')).toBe(edgeUri('card.png', 'text=a&format=png'));
    expect(edgeUri('card.png', 'text3=b&text3-size=20&format=png')).toContain('text3=b,text3-size=20');
  });
});
