// The playground and the URL helper in a real browser: Debian's Chromium,
// driven by playwright-core, against the emulator started in-process on this
// run's LocalStack. Also where Chromium's own behaviour is checked: which
// srcset candidate it picks, and that format=auto gives it AVIF.

import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cardParams, imageUrl, srcset } from '../../lambda/client';
import { signedImageUrl } from '../../lambda/client/sign';
import { GRAMMAR_DATA, POSITIONS } from '../../lambda/grammar';
import { startEmulator, type RunningEmulator } from '../../local/emulator/start';
import { listKeys, putObject, testS3Client } from '../support/s3';
import { chromiumMissing, launchChromium, playgroundSettled as settled } from './chromium';
import type { PageDocument, PageElement, PageImage } from './page-globals';

// Globals of the page, for the functions that run there (see ./page-globals.ts).
declare const document: PageDocument;
declare const Image: new () => PageImage;
declare const devicePixelRatio: number;
declare const DataTransfer: new () => { items: { add(file: unknown): void } };
declare const File: new (parts: unknown[], name: string, options: { type: string }) => unknown;

const missing = chromiumMissing();
const CI = process.env.CI === 'true';
if (missing && !CI) console.warn(`[test/browser] skipped: ${missing}`);

const PHOTO = 'samples/mountains.jpg'; // 2400 x 1600 JPEG
const VIEWPORT = { width: 1280, height: 900 };

describe.skipIf(missing !== undefined && !CI)('the playground in Chromium', () => {
  let emulator: RunningEmulator;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // On CI a missing browser is a failure, with the same message.
    if (missing) throw new Error(missing);
    [emulator, browser] = await Promise.all([
      startEmulator({ s3: testS3Client(), port: 0, edgeCache: true, log: () => {} }),
      launchChromium(),
    ]);
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });

  afterAll(async () => {
    await browser?.close();
    await emulator?.close();
  });

  async function newPage(options: { viewport?: { width: number; height: number }; deviceScaleFactor?: number } = {}) {
    const context = await browser.newContext({ viewport: options.viewport ?? VIEWPORT, deviceScaleFactor: options.deviceScaleFactor ?? 1 });
    contexts.push(context);
    // Pages opened on /_health have no <link rel=icon>: Chromium's /favicon.ico would be a 404, a console error.
    await context.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
    return { page, errors };
  }

  /** The `dt → dd` pairs of a stats list. */
  async function stats(page: Page, list: string): Promise<Record<string, string>> {
    return page.$eval(list, (dl: PageElement) => {
      const entries: Record<string, string> = {};
      dl.querySelectorAll('dt').forEach((dt) => {
        entries[dt.textContent ?? ''] = (dt.nextElementSibling?.textContent ?? '').replace(/\s+/g, ' ').trim();
      });
      return entries;
    });
  }

  async function waitForResult(page: Page, predicate: string) {
    await page.waitForFunction((text) => document.querySelector('#result-stats')?.textContent?.includes(text) === true, predicate, {
      timeout: 15_000,
    });
    await settled(page);
  }

  it('loads with no console errors, and every <img> on it decodes', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await page.waitForSelector('#result-image');
    await page.waitForSelector('#demo-stats dd');
    await settled(page);

    const images = await page.$$eval('img', (all) =>
      (all as PageImage[]).map((image) => ({ id: image.id || image.alt, src: image.currentSrc, width: image.naturalWidth })),
    );
    expect(images.map((image) => image.id).sort()).toEqual(['original-image', 'responsive demo', 'result-image']);
    expect(images.filter((image) => image.width === 0)).toEqual([]);

    // The configuration reached the controls and the header.
    expect(await page.$eval('input[name=height]', (input) => (input as unknown as { max: string }).max)).toBe('8192');
    expect(await page.$$eval('#preset option', (options) => options.map((o) => (o as unknown as { value: string }).value))).toEqual([
      '',
      'thumbnail',
      'hero',
      'branded',
    ]);
    expect(await page.textContent('#source')).toContain(PHOTO);
    expect(await page.textContent('#url')).toBe(imageUrl(emulator.url, PHOTO, { width: 800 }));
    expect(errors).toEqual([]);
  });

  it('works at localhost too: the emulator answers its loopback names, not only 127.0.0.1', async () => {
    const { page, errors } = await newPage();
    const url = emulator.url.replace('127.0.0.1', 'localhost');
    await page.goto(`${url}/`);
    await page.waitForSelector('#demo-stats dd');
    await settled(page);
    const widths = await page.$$eval('img', (all) => (all as PageImage[]).map((image) => image.naturalWidth));
    expect(widths).toHaveLength(3);
    expect(widths.filter((width) => width === 0)).toEqual([]);
    expect(await page.textContent('#url')).toBe(imageUrl(url, PHOTO, { width: 800 }));
    expect(errors).toEqual([]);
  });

  it('updates the result, its dimensions and its format as the controls change', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    expect(await stats(page, '#original-stats')).toMatchObject({ dimensions: '2400 × 1600 px', format: 'image/jpeg', status: '200' });

    await page.fill('input[name=width]', '320');
    await page.fill('input[name=height]', '320');
    await page.selectOption('select[name=format]', 'webp');
    await page.check('input[name=grayscale]');
    await waitForResult(page, '320 × 320 px');
    const result = await stats(page, '#result-stats');
    expect(result).toMatchObject({ status: '200', format: 'image/webp' });
    expect(result.served).toMatch(/^Miss from cloudfront · X-Origin: lambda$/);
    expect(result.time).toMatch(/fetch [\d.]+ ms.*transform [\d.]+ ms.*edge, S3 miss, network [\d.]+ ms/);
    expect(await page.$eval('#result-image', (image) => (image as PageImage).naturalWidth)).toBe(320);
    const expected = imageUrl(emulator.url, PHOTO, { width: 320, height: 320, format: 'webp', grayscale: true });
    expect(await page.textContent('#url')).toBe(expected);

    // format=json: the metadata, pretty-printed, and no pixels but its placeholder.
    await page.selectOption('select[name=format]', 'json');
    await page.waitForSelector('#json-card:not([hidden])');
    await waitForResult(page, 'application/json');
    const metadata = JSON.parse((await page.textContent('#json')) ?? '');
    expect(metadata).toMatchObject({ width: 2400, height: 1600, format: 'jpeg', frames: 1 });
    expect(await page.textContent('#json')).toContain('\n  "width": 2400');
    expect(await page.$eval('#result-image', (image) => (image as PageImage).naturalWidth)).toBeGreaterThan(0);

    // A colour's picker writes its field, and its field the picker.
    await page.fill('input[type=color][data-for=background]', '#336699');
    expect(await page.inputValue('input[name=background]')).toBe('#336699');
    await page.fill('input[name=background]', 'f00');
    expect(await page.inputValue('input[type=color][data-for=background]')).toBe('#ff0000');
    expect(errors).toEqual([]);
  });

  it('offers every position the grammar has (auto among them once it is built), a cut-out once segment is, and draws the faces and subject format=json finds', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    const offered = await page.$$eval('select[name=position] option', (options) =>
      options.map((o) => (o as unknown as { value: string }).value),
    );
    expect(offered).toEqual(['', ...POSITIONS.filter((position) => position !== 'center')]);
    // The controls are made from the grammar: a segment control appears with its parameter.
    if ('segment' in GRAMMAR_DATA.params) {
      await page.selectOption('select[name=segment]', 'foreground');
      await page.waitForFunction(() => document.querySelector('#url')?.textContent?.includes('segment=foreground') === true);
    } else expect(await page.$('[name=segment]')).toBeNull();

    // The json view draws what the server answers: here its faces and subject as they come...
    await page.selectOption('select[name=format]', 'json');
    await waitForResult(page, 'application/json');
    const metadata = JSON.parse((await page.textContent('#json')) ?? '');
    expect(await page.$$('#json-figure .box.face')).toHaveLength(metadata.faces?.length ?? 0);
    expect(await page.$$('#json-figure .box.subject')).toHaveLength(metadata.subject ? 1 : 0);

    // ...and, with a subject and a face put in the JSON the page receives, each drawn where its fractions say.
    const subject = { x: 0.5, y: 0.25, width: 0.25, height: 0.5 };
    // A confidence no real answer has, to know the page shows this JSON and not the one before it.
    const face = { x: 0.1, y: 0.1, width: 0.2, height: 0.2, confidence: 0.4321 };
    await page.route(
      (url) => url.href.includes('format=json'),
      async (route) => {
        const response = await route.fetch();
        await route.fulfill({ response, json: { ...(await response.json()), faces: [face], subject } });
      },
    );
    await page.fill('input[name=width]', '640');
    await page.waitForFunction(() => document.querySelector('#json')?.textContent?.includes('0.4321') === true, undefined, {
      timeout: 15_000,
    });
    await page.waitForFunction(() => document.querySelector('#json-figure .box.face') !== null, undefined, { timeout: 15_000 });
    const placed = await page.$$eval('#json-figure, #json-figure .box', (nodes) =>
      nodes.map((node) => {
        type Rect = { left: number; top: number; width: number; height: number };
        const { left, top, width, height } = (node as unknown as { getBoundingClientRect(): Rect }).getBoundingClientRect();
        return { left, top, width, height };
      }),
    );
    const [figure, ...boxes] = placed;
    // The figure has the photo's aspect (2400 x 1600).
    expect(figure!.width / figure!.height).toBeCloseTo(1.5, 1);
    const inFractions = boxes.map(({ left, top, width, height }) => ({
      x: (left - figure!.left) / figure!.width,
      y: (top - figure!.top) / figure!.height,
      width: width / figure!.width,
      height: height / figure!.height,
    }));
    for (const [drawn, expected] of [
      [inFractions[0]!, face],
      [inFractions[1]!, subject],
    ] as const) {
      for (const side of ['x', 'y', 'width', 'height'] as const) expect(drawn[side]).toBeCloseTo(expected[side], 2);
    }
    expect(errors).toEqual([]);
  });

  it('resolves width=auto from the hints the page opted in to: a 1280 px viewport at DPR 2 gets the whole 2400 px photo', async () => {
    const { page, errors } = await newPage({ deviceScaleFactor: 2 });
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    await page.fill('input[name=width]', 'auto');
    // 1280 CSS px x 2 snaps up to 2560, above the source: without hints it would be the 1280 px fallback.
    await waitForResult(page, '2400 × 1600 px');
    expect(await page.textContent('#url')).toBe(imageUrl(emulator.url, PHOTO, { width: 'auto' }));
    // What the browser was told, as CloudFront's viewer-response function says it: Vary on the hints it sent.
    const result = await stats(page, '#result-stats');
    expect(result.vary).toBe('Accept, Sec-CH-Width, Sec-CH-Viewport-Width, Sec-CH-DPR, Save-Data');
    expect(result.headers).toMatch(/response headers, as this browser got them.*\bvary: Accept, Sec-CH-Width/);
    expect(result.headers).toContain(`cache-control: ${result['cache-control']}`);
    expect(errors).toEqual([]);
  });

  it('shows each composition operation from its example button, each a variant of its own size', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    // The 2400 x 1600 photo: each example's URL and the size the emulator answered with.
    const examples: [string, Record<string, string | number>, string][] = [
      ['pad, blurred fill', { width: 600, height: 600, fit: 'contain', fill: 'blur' }, '600 × 600 px'],
      // The sky's top-left colour runs along the top: trim takes a band off.
      ['trim', { width: 600, trim: 10 }, '600 × 37'],
      ['crop', { width: 600, crop: '0.25,0.25,0.5,0.5' }, '600 × 400 px'],
      ['border', { width: 600, border: '12,1b2838' }, '624 × 424 px'],
      ['watermark', { width: 600, watermark: 'logo' }, '600 × 400 px'],
      [
        'all at once',
        { width: 600, height: 600, fit: 'contain', fill: 'blur', crop: '0.1,0,0.8,1', watermark: 'logo', border: '8,ffffff' },
        '616 × 616 px',
      ],
    ];
    expect(
      await page.$$eval('#examples button', (buttons) => buttons.map((b) => (b as unknown as { textContent: string }).textContent)),
    ).toEqual(examples.map(([label]) => label));
    for (const [label, params, dimensions] of examples) {
      await page.click(`#examples button[data-example="${label}"]`);
      await waitForResult(page, dimensions);
      expect(await page.textContent('#url'), label).toBe(imageUrl(emulator.url, PHOTO, params));
      expect((await stats(page, '#result-stats')).status, label).toBe('200');
    }
    expect(errors).toEqual([]);
  });

  it('picks the srcset candidate for a 400px slot at deviceScaleFactor 2: the 800w one', async () => {
    const { page, errors } = await newPage({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 2 });
    const set = srcset(emulator.url, PHOTO, [400, 800, 1200, 1600]);
    const expected = imageUrl(emulator.url, PHOTO, { width: 800 });
    expect(set).toContain(`${expected} 800w`);
    await page.goto(`${emulator.url}/_health`); // same origin as the images, like a real page
    await page.setContent(
      `<!doctype html><body style="margin:0"><img id="photo" alt="" sizes="400px" style="width:400px" srcset="${set}"></body>`,
    );
    await page.waitForFunction(() => (document.getElementById('photo') as PageImage).complete);

    const picked = await page.$eval('#photo', async (image) => {
      const img = image as PageImage;
      const pixels = new Image();
      pixels.src = img.currentSrc;
      await pixels.decode();
      return { currentSrc: img.currentSrc, naturalWidth: img.naturalWidth, decodedWidth: pixels.naturalWidth, dpr: devicePixelRatio };
    });
    expect(picked.dpr).toBe(2);
    expect(picked.currentSrc).toBe(expected);
    expect(picked.decodedWidth).toBe(800);
    // An image chosen by a w descriptor has a density of 800w / 400px = 2, so its natural (CSS) width is 400.
    expect(picked.naturalWidth).toBe(400);

    // The playground's own demo reports the same choice.
    await page.goto(`${emulator.url}/#source=${encodeURIComponent(PHOTO)}&width=800`);
    // sizes first: with the default 100vw the 1600w candidate would be loaded, and Chromium then
    // picks it from its memory cache over the 800w one (a higher density already there).
    await page.fill('#sizes-attr', '400px');
    await page.fill('#widths', '400, 800, 1200, 1600');
    await page.waitForFunction(() => document.querySelector('#demo img')?.getAttribute('sizes') === '400px');
    await page.waitForFunction(() => (document.querySelector('#demo img') as PageImage | null)?.dataset.picked === '800');
    // The stats follow the pick once its image has decoded: until then they may show an earlier candidate's.
    await page
      .waitForFunction(
        () => /^800\s/.test((document.querySelector('#demo-stats')?.textContent ?? '').replace(/[\s\S]*decoded/, '').trim()),
        undefined,
        { timeout: 10_000 },
      )
      .catch(() => undefined);
    expect((await stats(page, '#demo-stats')).decoded).toBe('800 × 533 px');
    expect(await page.textContent('#markup .picked')).toContain(`${expected} 800w`);
    expect(errors).toEqual([]);
  });

  it('gets AVIF for format=auto, as Chromium announces it in Accept', async () => {
    const { page, errors } = await newPage();
    const images: { url: string; accept: string; contentType: string; xCache: string }[] = [];
    page.on('response', async (response) => {
      if (response.request().resourceType() !== 'image' || !response.url().startsWith(emulator.url)) return;
      images.push({
        url: response.url(),
        accept: (await response.request().allHeaders()).accept ?? '',
        contentType: response.headers()['content-type'] ?? '',
        xCache: response.headers()['x-cache'] ?? '',
      });
    });
    await page.goto(`${emulator.url}/_health`);
    const url = imageUrl(emulator.url, PHOTO, { width: 300 });
    await page.setContent(`<!doctype html><img id="photo" alt="" src="${url}">`);
    await page.waitForFunction(() => (document.getElementById('photo') as PageImage).complete);
    expect(await page.$eval('#photo', (image) => (image as PageImage).naturalWidth)).toBe(300);
    expect(images.find((image) => image.url === url)).toMatchObject({
      contentType: 'image/avif',
      accept: expect.stringContaining('image/avif'),
    });

    // The playground's responsive demo is a plain <img srcset>: the browser negotiates it too.
    // A first view whose AVIF would keep it waiting gets WebP, and the AVIF is made after the
    // answer; a second browser (its own cache) then gets AVIF everywhere.
    images.length = 0;
    await page.goto(`${emulator.url}/`);
    await page.waitForSelector('#demo-stats dd');
    await settled(page);
    const first = images.filter((image) => image.url.includes('/samples/'));
    expect(first.length).toBeGreaterThan(0);
    for (const image of first) expect(['image/avif', 'image/webp']).toContain(image.contentType);
    expect(errors).toEqual([]);
    await emulator.settled();

    const again = await newPage();
    images.length = 0;
    again.page.on('response', async (response) => {
      if (response.request().resourceType() === 'image' && response.url().includes('/samples/')) {
        images.push({ url: response.url(), accept: '', contentType: response.headers()['content-type'] ?? '', xCache: '' });
      }
    });
    await again.page.goto(`${emulator.url}/`);
    await again.page.waitForSelector('#demo-stats dd');
    await settled(again.page);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image.contentType).toBe('image/avif');
    expect((await stats(again.page, '#result-stats')).format).toBe('image/avif');
    expect(again.errors).toEqual([]);
  });

  /** Chooses `file` in the playground's file input, and waits for the upload's outcome: its status, ended good or bad. */
  async function uploadThroughPage(page: Page, file: { name: string; mimeType: string; buffer: Buffer }) {
    // The change event starts the upload, which clears the status's kind before setInputFiles returns.
    await page.setInputFiles('#upload', file);
    // The emulator's watcher finds a staged upload within 2 s; then the validator runs.
    await page.waitForSelector('#upload-status.good, #upload-status.bad', { timeout: 30_000 });
    return (await page.textContent('#upload-status')) ?? '';
  }

  const sourceKeys = (page: Page) =>
    page.$$eval('#source option', (options) => options.map((o) => (o as unknown as { value: string }).value));

  it('uploads a JPEG through the management API: signed in the page, posted to S3, ready, then shown transformed', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');

    const jpeg = await sharp({ create: { width: 1000, height: 500, channels: 3, background: '#2a6f97' } })
      .jpeg()
      .toBuffer();
    const status = await uploadThroughPage(page, { name: 'browser photo + #1.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    const key = 'uploads/browser photo + #1.jpg';
    expect(status).toBe(`${key}: ready, 1000 × 500 jpeg.`);
    expect(await sourceKeys(page)).toContain(key);
    expect(await page.inputValue('#source')).toBe(key);
    // The default width=800 of the 1000 x 500 upload, served through the emulated CloudFront.
    await waitForResult(page, '800 × 400 px');
    expect(await page.$eval('#result-image', (image) => (image as PageImage).naturalWidth)).toBe(800);
    expect(await stats(page, '#original-stats')).toMatchObject({ dimensions: '1000 × 500 px', format: 'image/jpeg', status: '200' });
    expect(await page.textContent('#url')).toBe(imageUrl(emulator.url, key, { width: 800 }));
    expect(errors).toEqual([]);
  }, 60_000);

  it('shows a hostile upload quarantined with its reason, never served; and the API’s refusal of a type it does not take', async () => {
    const { page } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');

    const html = Buffer.from('<!doctype html><script>alert(document.cookie)</script>');
    await page.fill('#upload-key', 'hostile/page.jpg');
    const status = await uploadThroughPage(page, { name: 'page.jpg', mimeType: 'image/jpeg', buffer: html });
    expect(status).toBe('hostile/page.jpg: quarantined (unsupported_media_type), never served.');
    const stored = await listKeys(testS3Client(), emulator.sourceBucket);
    expect(stored.filter((key) => key.endsWith('hostile/page.jpg'))).toEqual(['_quarantine/hostile/page.jpg']);
    expect(await page.inputValue('#source')).toBe(PHOTO);
    for (const path of ['/hostile/page.jpg', '/hostile/page.jpg?width=100'])
      expect((await fetch(emulator.url + path)).status, path).toBe(404);

    // Refused by the API before anything reaches S3: its message is shown.
    await page.fill('#upload-key', '');
    const refused = await uploadThroughPage(page, { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image') });
    expect(refused).toMatch(/^Upload failed: unsupported_content_type: .*text\/plain/);
    expect((await listKeys(testS3Client(), emulator.sourceBucket)).filter((key) => key.includes('notes.txt'))).toEqual([]);
  }, 60_000);

  it('uploads a dropped file under the key given, and shows it once ready', async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    const png = await sharp({ create: { width: 300, height: 200, channels: 4, background: { r: 20, g: 140, b: 90, alpha: 0.5 } } })
      .png()
      .toBuffer();
    await page.fill('#upload-key', 'dropped/tile.png');
    const dataTransfer = await page.evaluateHandle(
      ({ bytes, name }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], name, { type: 'image/png' }));
        return transfer;
      },
      { bytes: [...png], name: 'tile.png' },
    );
    await page.dispatchEvent('#drop', 'drop', { dataTransfer });
    await page.waitForSelector('#upload-status.good, #upload-status.bad', { timeout: 30_000 });
    expect(await page.textContent('#upload-status')).toBe('dropped/tile.png: ready, 300 × 200 png.');
    expect(await page.inputValue('#source')).toBe('dropped/tile.png');
    await waitForResult(page, '300 × 200 px'); // width=800 does not enlarge past the source
    expect(await page.$eval('#original-image', (image) => (image as PageImage).naturalWidth)).toBe(300);
    expect(errors).toEqual([]);
  }, 60_000);

  it('shows the contract’s JSON error, not a broken image, for a source that is no image (put in the bucket past the API)', async () => {
    const { page } = await newPage();
    await putObject(testS3Client(), emulator.sourceBucket, 'notes/not-an-image.jpg', 'not an image', 'image/jpeg');
    await page.goto(`${emulator.url}/#source=${encodeURIComponent('notes/not-an-image.jpg')}&width=800`);
    await page.waitForSelector('#result-frame .error');
    await settled(page);
    const error = await page.textContent('#result-frame .error');
    expect(error).toMatch(/^415 Unsupported Media Type/);
    expect(error).toContain('unsupported_media_type');
    expect(await page.$$('#result-frame img')).toHaveLength(0);
    expect(await page.$$('#original-frame img')).toHaveLength(0);
  });

  it("draws the demonstration's Open Graph card from the title typed, at 1200 x 630, its URL the client's cardParams", async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    expect(await optionValues(page, '#card-template')).toEqual(['', 'og', 'banner']);
    await page.selectOption('#card-template', 'og');
    expect(await page.textContent('#card-key')).toBe(PHOTO);
    expect(await page.getAttribute('input[data-slot=caption]', 'value')).toBe('example.com');

    const first = await cardShown(page, 'A first title');
    expect(first.size).toEqual({ width: 1200, height: 630 });
    expect(await page.textContent('#card-url')).toBe(
      imageUrl(emulator.url, PHOTO, cardParams('og', { title: 'A first title', caption: 'example.com' })),
    );
    expect((await stats(page, '#card-stats')).status).toBe('200');

    const second = await cardShown(page, 'Another title, longer, over two lines of the card');
    expect(second.size).toEqual({ width: 1200, height: 630 });
    // The title's box (x 640 to 1160, y 60 to 500) changed; the photo's half did not.
    expect(meanDifference(first.pixels, second.pixels, [640, 60, 520, 440])).toBeGreaterThan(5);
    expect(meanDifference(first.pixels, second.pixels, [0, 0, 600, 630])).toBeLessThan(2);
    expect(errors).toEqual([]);
  });

  it("fills a second image slot from the source menu, and shows the service's 400, not a broken image, for a title too long", async () => {
    const { page, errors } = await newPage();
    await page.goto(`${emulator.url}/`);
    await waitForResult(page, '800 × 533 px');
    await page.selectOption('#card-template', 'banner');
    expect(await page.inputValue('select[data-slot=logo]')).toBe('samples/logo.png');
    await page.selectOption('select[data-slot=logo]', 'samples/photo.webp');
    const banner = await cardShown(page, 'Logo swapped');
    expect(banner.size).toEqual({ width: 1200, height: 400 });
    const fills = { logo: 'samples/photo.webp', title: 'Logo swapped' };
    expect(await page.textContent('#card-url')).toBe(imageUrl(emulator.url, PHOTO, cardParams('banner', fills)));

    // The banner's title takes 60 characters: the field counts them, the service refuses the 61st.
    await page.fill('input[data-slot=title]', 'x'.repeat(61));
    await page.waitForSelector('#card-frame .error', { timeout: 15_000 });
    expect(await page.textContent('label:has(input[data-slot=title]) .count.over')).toBe('61 / 60');
    const error = await page.textContent('#card-frame .error');
    expect(error).toMatch(/^400 Bad Request/);
    expect(error).toContain('invalid_fill');
    expect(error).toContain('The slot "title" takes at most 60 characters, not 61.');
    expect(await page.$$('#card-frame img')).toHaveLength(0);
    expect((await stats(page, '#card-stats')).status).toBe('400');
    expect(errors.filter((error) => !error.includes('400 (Bad Request)'))).toEqual([]);
  });
});

describe.skipIf(missing !== undefined && !CI)('the playground of an emulator that requires signed URLs, in Chromium', () => {
  const secret = 'playground-cards-secret';
  let emulator: RunningEmulator;
  let browser: Browser;

  beforeAll(async () => {
    if (missing) throw new Error(missing);
    [emulator, browser] = await Promise.all([
      startEmulator({ s3: testS3Client(), port: 0, edgeCache: true, signingSecret: secret, log: () => {} }),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await emulator?.close();
  });

  it('shows the card signed by the emulator, as signedImageUrl signs it, and the card drawn', async () => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    try {
      const page = await context.newPage();
      await page.goto(`${emulator.url}/`);
      await page.waitForSelector('#result-image');
      await page.selectOption('#card-template', 'og');
      const card = await cardShown(page, 'Signed title');
      expect(card.size).toEqual({ width: 1200, height: 630 });
      const params = cardParams('og', { title: 'Signed title', caption: 'example.com' });
      expect(await page.textContent('#card-url')).toBe(signedImageUrl(emulator.url, PHOTO, params, secret));
      expect(await page.textContent('#card-call')).toContain('signedImageUrl(');
      // Unsigned, the same card is refused at the edge.
      expect((await fetch(imageUrl(emulator.url, PHOTO, params))).status).toBe(403);
    } finally {
      await context.close();
    }
  });
});

const optionValues = (page: Page, select: string) =>
  page.$$eval(`${select} option`, (options) => options.map((o) => (o as unknown as { value: string }).value));

/**
 * Types `title` into the card's title field and waits for its card: the size
 * the page's <img> decoded, and the bytes it shows decoded by sharp.
 */
async function cardShown(page: Page, title: string) {
  await page.fill('input[data-slot=title]', title);
  const shown = await page.waitForFunction(
    (expected) => {
      const url = document.querySelector('#card-url')?.textContent ?? '';
      const image = document.querySelector('#card-image') as PageImage | null;
      return url.includes(expected) && image?.complete === true && image.naturalWidth > 0 && (image.getAttribute('src') ?? '');
    },
    Buffer.from(JSON.stringify(title).slice(1, -1)).toString('hex'),
    { timeout: 20_000 },
  );
  const src = (await shown.jsonValue()) as string;
  const bytes = await page.evaluate(async (url) => [...new Uint8Array(await (await fetch(url)).arrayBuffer())], src);
  const decoded = await sharp(Buffer.from(bytes)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const size = await page.$eval('#card-image', (image) => ({
    width: (image as PageImage).naturalWidth,
    height: (image as PageImage).naturalHeight,
  }));
  expect({ width: decoded.info.width, height: decoded.info.height }).toEqual(size);
  return { size, pixels: decoded };
}

/** The mean difference per channel of two decoded images, inside `box` ([x, y, width, height]). */
function meanDifference(
  a: { data: Buffer; info: { width: number; channels: number } },
  b: { data: Buffer },
  [x, y, width, height]: [number, number, number, number],
): number {
  const { width: stride, channels } = a.info;
  let sum = 0;
  for (let row = y; row < y + height; row++) {
    for (let i = (row * stride + x) * channels; i < (row * stride + x + width) * channels; i++) sum += Math.abs(a.data[i]! - b.data[i]!);
  }
  return sum / (width * height * channels);
}
