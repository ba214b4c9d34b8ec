// A deployment's own font (the `fonts` setting), drawn for real: Noto Sans JP
// renamed Zeta Sans JP (test/support/own-font.ts) draws its Latin letters
// unlike Noto Sans, exactly as sharp draws the file itself; `text-font=zeta`
// passes the generated edge function and the origin handler on LocalStack,
// and an unknown font is the same 400 at both, listing every name; a
// deployment without the font, in the same process, still refuses it.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest, splitQuery, type GrammarOptions } from '../../lambda/grammar';
import type { DeploymentFonts } from '../../lambda/origin/image/text/fonts';
import { renderText, TextLimitError, type TextSpec } from '../../lambda/origin/image/text/render';
import { isResponse, viewerEvent, type FunctionResult, type LoadedFunction } from '../../local/emulator/cloudfront-function';
import { KVS_ID, loadEdge } from '../edge/fixtures';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { OWN_FAMILY, ownFont } from '../support/own-font';
import { inkOnly } from '../support/text';

let fonts: DeploymentFonts;
let file: string;

beforeAll(() => {
  file = ownFont();
  fonts = { zeta: { family: OWN_FAMILY, weight: '', file } };
});

const BLACK = { r: 0, g: 0, b: 0, alpha: 1 };
const TEXT = 'Sphinx of black quartz';

/** The ink of `spec`'s render: its alpha cut to the glyphs. */
async function inkOf(more: Partial<TextSpec>) {
  const rendered = await renderText({ text: TEXT, font: 'sans', size: 40, colour: BLACK, align: 'left', ...more });
  const alpha = await sharp(rendered.data, { raw: { width: rendered.width, height: rendered.height, channels: 4 } })
    .extractChannel(3)
    .raw()
    .toBuffer();
  return inkOnly({ data: alpha, width: rendered.width, height: rendered.height });
}

describe("a deployment's own font, drawn", () => {
  it('draws its own Latin letters, unlike Noto Sans, and exactly as sharp draws the file itself', async () => {
    const own = await inkOf({ font: 'zeta', fonts });
    const noto = await inkOf({ font: 'sans', fonts });
    expect(own.width === noto.width && own.data.equals(noto.data)).toBe(false);
    const { data, info } = await sharp({ text: { text: TEXT, font: `${OWN_FAMILY} 40`, fontfile: file, dpi: 72 } })
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const direct = await inkOnly({ data, width: info.width, height: info.height });
    expect([own.width, own.height]).toEqual([direct.width, direct.height]);
    expect(own.data.equals(direct.data)).toBe(true);
  });

  it('is refused, listing every name, where the deployment has no such font', async () => {
    const refusal = inkOf({ font: 'comic', fonts });
    await expect(refusal).rejects.toBeInstanceOf(TextLimitError);
    await expect(refusal).rejects.toThrow('The font "comic" is not one of sans, sans-bold, zeta.');
    await expect(inkOf({ font: 'zeta' })).rejects.toThrow('The font "zeta" is not one of sans, sans-bold.');
  });
});

describe("in Lambda, a deployment's own fonts' folder", () => {
  it('is in the private fontconfig from the start: the font is drawn by its family alone, before any text names its file', () => {
    const root = mkdtempSync(join(tmpdir(), 'own-font-task-'));
    mkdirSync(join(root, 'text-fonts'));
    copyFileSync(file, join(root, 'text-fonts', 'zeta'));
    // A process of its own, as Lambda's: fontconfig reads its configuration once per process.
    const script = `
      const { readFileSync } = await import('node:fs');
      const { renderText } = await import(${JSON.stringify(join(__dirname, '../../lambda/origin/image/text/render.ts'))});
      const spec = { text: ${JSON.stringify(TEXT)}, size: 40, colour: { r: 0, g: 0, b: 0, alpha: 1 }, align: 'left' };
      const own = await renderText({ ...spec, font: 'zeta', fonts: { zeta: { family: ${JSON.stringify(OWN_FAMILY)}, weight: '' } } });
      const noto = await renderText({ ...spec, font: 'sans' });
      const dirs = [...readFileSync(process.env.FONTCONFIG_FILE, 'utf8').matchAll(/<dir>([^<]*)<\\/dir>/g)].map((match) => match[1]);
      console.log(JSON.stringify({ dirs, same: own.width === noto.width && own.data.equals(noto.data) }));`;
    const { FONTCONFIG_FILE: _ours, ...env } = process.env;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...env, LAMBDA_TASK_ROOT: root },
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ dirs: [process.env.TEXT_FONTS_DIR, join(root, 'text-fonts')], same: false });
  });
});

describe("a deployment's own font through the edge and the origin", () => {
  const grammar: GrammarOptions = { maxDimension: 8192, fonts: { zeta: {} } };
  let edge: LoadedFunction;
  let origin: TestOrigin;
  let plain: TestOrigin;

  beforeAll(async () => {
    edge = loadEdge({ grammar, avif: true, signing: false, keyValueStoreId: KVS_ID });
    [origin, plain] = await Promise.all([createTestOrigin('own-font', { fonts }), createTestOrigin('no-own-font')]);
    const white = await sharp({ create: { width: 600, height: 120, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer();
    await Promise.all([origin.putSource('card.png', white), plain.putSource('card.png', white)]);
  });

  const refusal = /^Invalid text-font "comic": expected one of sans, sans-bold, zeta\.$/;
  const messageOf = (result: FunctionResult) => (isResponse(result) ? JSON.parse(result.body!.data).message : result.uri);

  /** The canonical URI the edge function makes of a viewer's query. */
  const uriOf = async (font: string, text = TEXT) => {
    const result = await edge.handler(viewerEvent('/card.png', `text=${encodeURIComponent(text)}&text-font=${font}&format=png`));
    expect(isResponse(result)).toBe(false);
    return (result as { uri: string }).uri;
  };

  it('serves text-font=zeta, drawn unlike the same text in Noto Sans', async () => {
    const uri = await uriOf('ZETA');
    expect(uri).toContain('text-font=zeta');
    const [own, noto] = await Promise.all([origin.request(uri), origin.request(await uriOf('sans'))]);
    expect(own.status, own.body.toString('utf8', 0, 200)).toBe(200);
    expect(noto.status).toBe(200);
    const pixels = (body: Buffer) => sharp(body).raw().toBuffer();
    expect((await pixels(own.body)).equals(await pixels(noto.body))).toBe(false);
  });

  it('refuses an unknown font with the same 400 at the edge and the origin, naming every font', async () => {
    const result = await edge.handler(viewerEvent('/card.png', 'text=Hi&text-font=comic'));
    expect(isResponse(result) && result.statusCode).toBe(400);
    expect(messageOf(result)).toMatch(refusal);
    // The canonical URI the edge would make, were comic a font.
    const uri = (await uriOf('zeta', 'Hi')).replace('text-font=zeta', 'text-font=comic');
    const response = await origin.request(uri);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString()).message).toMatch(refusal);
    expect((await origin.cachedKeys()).filter((key) => key.includes('comic'))).toEqual([]);
  });

  it('is no font of another deployment in the same process', async () => {
    const uri = await uriOf('zeta', 'Hi');
    expect(canonicalRequest('/card.png', splitQuery('text=Hi&text-font=zeta&format=png'), grammar, { accept: '' }).uri).toBe(uri);
    const response = await plain.request(uri);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString()).message).toBe('Invalid text-font "zeta": expected one of sans, sans-bold.');
  });
});
