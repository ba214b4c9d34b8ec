// Saves docs/playground.png: the playground in Debian's Chromium, on a fresh
// emulator with the generated samples, showing a transformed photo.
//
//   npx tsx test/browser/screenshot.ts [--out docs/playground.png] [--view '<hash>']
//
// Starts its own LocalStack S3 (or uses AWS_ENDPOINT_URL_S3), like `npm start`.
// The PNG is palette-quantised by sharp (libimagequant) to stay small.

import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { startLocalStack } from '../../local/harness/localstack';
import { localS3Client } from '../../local/harness/s3-client';
import { startEmulator } from '../../local/emulator/start';
import { launchChromium, playgroundSettled } from './chromium';

const DEFAULT_OUT = fileURLToPath(new URL('../../docs/playground.png', import.meta.url));
/** What the picture shows: the landscape, cropped to 4:3 around its most salient part, sharpened a little. */
const DEFAULT_VIEW = 'source=samples/mountains.jpg&width=800&height=600&position=attention&sharpen=1';
const VIEWPORT = { width: 1280, height: 900 };

const { values } = parseArgs({
  options: { out: { type: 'string', default: DEFAULT_OUT }, view: { type: 'string', default: DEFAULT_VIEW } },
});

const localStack = await startLocalStack();
try {
  const emulator = await startEmulator({ s3: localS3Client(localStack.endpoint), port: 0, edgeCache: true, log: () => {} });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${emulator.url}/#${values.view}`);
    await page.waitForSelector('#result-image');
    await playgroundSettled(page);
    await page.waitForSelector('#demo-stats dd');
    if (errors.length) throw new Error(`the playground logged errors:\n${errors.join('\n')}`);
    const png = await page.screenshot({ type: 'png' });
    const small = await sharp(png).png({ palette: true, quality: 90, effort: 10, compressionLevel: 9 }).toBuffer();
    await writeFile(values.out!, small);
    console.log(`${values.out}: ${VIEWPORT.width}x${VIEWPORT.height}, ${small.length} bytes (${png.length} before quantising)`);
  } finally {
    await browser.close();
    await emulator.close();
  }
} finally {
  await localStack.stop();
}
