// Debian's Chromium driven by playwright-core (see platform-facts, "A real
// browser"): the system browser, never one that Playwright downloads. Shared
// by the browser tests and scripts (test/browser/screenshot.ts); imports
// nothing from vitest, so a plain `tsx` script can use it too.

import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** CHROMIUM_PATH, else Debian's /usr/bin/chromium, else a `chromium` on PATH (where .ci/run looks). */
function findChromium(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const candidates = [
    '/usr/bin/chromium',
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'chromium')),
  ];
  return candidates.find((path) => existsSync(path)) ?? '/usr/bin/chromium';
}

export const CHROMIUM_PATH = findChromium();

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

/** Why the browser tests cannot run here, or undefined when Chromium is there. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  return (
    `Chromium is not installed (no ${CHROMIUM_PATH}). Install it with \`apt-get install -y chromium\` ` +
    `(as root, after apt-get update), or set CHROMIUM_PATH to a Chromium or Chrome binary.`
  );
}

/**
 * Launches Chromium headless. Each launch gets a fresh user-data-dir: Playwright
 * creates a temporary profile for it (it refuses a --user-data-dir flag) and
 * deletes it on close, so no state is shared between runs.
 */
export async function launchChromium(): Promise<Browser> {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS, timeout: 30_000 });
}

/**
 * Waits until the playground has settled: no update in flight, and every
 * <img> on it finished loading (or failed: check naturalWidth afterwards).
 */
export async function playgroundSettled(page: Page, timeout = 15_000): Promise<void> {
  await page.waitForFunction(
    "document.body.dataset.state === 'ready' && Array.from(document.images).every((image) => image.complete)",
    undefined,
    { timeout },
  );
}
