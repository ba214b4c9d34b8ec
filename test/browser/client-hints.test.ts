// width=auto in a real Chromium against the emulator: a page on another origin
// opts in to client hints and delegates them to the image host (the README's
// third-party opt-in), and one <img src="...?w=auto" sizes="..."> URL gets
// another width on a phone than on a desktop, each from its own cache entry,
// with no more variants in the cache bucket than the explicit widths make.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageUrl } from '../../lambda/client';
import { browserCacheControl, DEFAULT_BROWSER_MAX_AGE_SECONDS, FORMAT_VARY, WIDTH_HINTS_VARY } from '../../lib/viewer-response-function';
import { startEmulator, type RunningEmulator } from '../../local/emulator/start';
import { listKeys, testS3Client } from '../support/s3';
import { chromiumMissing, launchChromium } from './chromium';
import type { PageDocument, PageImage } from './page-globals';

declare const document: PageDocument;

const missing = chromiumMissing();
const CI = process.env.CI === 'true';
if (missing && !CI) console.warn(`[test/browser] skipped: ${missing}`);

const PHOTO = 'samples/mountains.jpg'; // 2400 x 1600 JPEG
const SIZES = '(max-width: 600px) 100vw, 600px';

/** The page a site serves: it asks for the hints and delegates them to the image host, as the README shows. */
function pageHtml(src: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>hints</title></head>
<body style="margin:0"><img id="photo" src="${src}" sizes="${SIZES}" style="width:100%;max-width:600px" alt=""></body></html>`;
}

describe.skipIf(missing !== undefined && !CI)('width=auto in Chromium, with client hints delegated to the image host', () => {
  let emulator: RunningEmulator;
  let browser: Browser;
  let site: Server;
  let siteUrl: string;

  beforeAll(async () => {
    if (missing) throw new Error(missing);
    [emulator, browser] = await Promise.all([
      startEmulator({ s3: testS3Client(), port: 0, edgeCache: true, log: () => {} }),
      launchChromium(),
    ]);
    // Another origin (another port) than the image host: a third-party image host, as in production.
    site = createServer((request, response) => {
      const src = new URL(request.url ?? '/', 'http://site').searchParams.get('src') ?? '';
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'accept-ch': 'Sec-CH-Width, Sec-CH-DPR, Sec-CH-Viewport-Width',
        'permissions-policy': `ch-width=(self "${emulator.url}"), ch-dpr=(self "${emulator.url}"), ch-viewport-width=(self "${emulator.url}")`,
      });
      response.end(pageHtml(src));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await emulator?.close();
  });

  /** The width of the image a fresh browser (its own HTTP cache) gets for `src` at this screen. */
  async function widthServed(src: string, viewport: { width: number; height: number }, deviceScaleFactor: number): Promise<number> {
    const context = await browser.newContext({ viewport, deviceScaleFactor });
    try {
      const page = await context.newPage();
      await page.goto(`${siteUrl}/?src=${encodeURIComponent(src)}`);
      await page.waitForFunction(() => {
        const image = document.querySelector('#photo') as unknown as PageImage;
        return image.complete;
      });
      return await page.$eval('#photo', (image) => (image as unknown as PageImage).naturalWidth);
    } finally {
      await context.close();
    }
  }

  const variants = async () => (await listKeys(testS3Client(), emulator.cacheBucket)).filter((key) => key.startsWith(PHOTO + '/')).sort();

  it('gives a phone at DPR 3 and a desktop different widths from one URL, and makes only the variants explicit widths make', async () => {
    const auto = imageUrl(emulator.url, PHOTO, { width: 'auto' });
    expect(auto).toBe(`${emulator.url}/${PHOTO}?width=auto`);

    // 390 CSS px at DPR 3: Sec-CH-Width 1170, snapped up to 1280. 600 CSS px at DPR 1: 600, up to 640.
    const phone = await widthServed(auto, { width: 390, height: 844 }, 3);
    const desktop = await widthServed(auto, { width: 1280, height: 900 }, 1);
    expect([phone, desktop]).toEqual([1280, 640]);
    await emulator.settled();
    const made = await variants();
    expect(made).toEqual([`${PHOTO}/width=1280,accept=avif`, `${PHOTO}/width=640,accept=avif`]);

    // The same phone again is a hit on the phone's entry; the explicit widths are the same variants.
    expect(await widthServed(auto, { width: 390, height: 844 }, 3)).toBe(1280);
    expect(await widthServed(imageUrl(emulator.url, PHOTO, { width: 1280 }), { width: 390, height: 844 }, 3)).toBe(1280);
    expect(await widthServed(imageUrl(emulator.url, PHOTO, { width: 640 }), { width: 1280, height: 900 }, 1)).toBe(640);
    await emulator.settled();
    expect(await variants()).toEqual(made);
  });

  it('tells the browser the answer varies on the hints it sent, and to keep the AVIF for the browser lifetime', async () => {
    const auto = imageUrl(emulator.url, PHOTO, { width: 'auto' });
    /** The headers a fresh browser at DPR 2 got for the image. */
    const answerHeaders = async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
      try {
        const page = await context.newPage();
        const answered = page.waitForResponse((response) => response.url() === auto);
        await page.goto(`${siteUrl}/?src=${encodeURIComponent(auto)}`);
        return (await answered).headers();
      } finally {
        await context.close();
      }
    };
    // The first view is WebP, briefly (the AVIF is made after it); once the AVIF is stored, it comes from the cache.
    await answerHeaders();
    await emulator.settled();
    for (const headers of [await answerHeaders(), await answerHeaders()]) {
      expect(headers['content-type']).toBe('image/avif');
      expect(headers.vary).toBe(`${FORMAT_VARY}, ${WIDTH_HINTS_VARY}`);
      expect(headers['cache-control']).toBe(browserCacheControl(DEFAULT_BROWSER_MAX_AGE_SECONDS));
      expect(headers.age).toBeUndefined();
    }
  });
});
