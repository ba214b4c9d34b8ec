// The image URLs: the emulator's API, where the page fetches a URL, its signed
// form, and the helper call that makes it.

import { $ } from './dom.js';
import { page } from './page-state.js';

export async function getJson(url) {
  const response = await fetch(url, { cache: 'no-store' });
  const body = await response.json();
  if (!response.ok) throw new Error(body.message || `${url}: HTTP ${response.status}`);
  return body;
}

export function base() {
  return $('#base').value.trim() || location.origin;
}

/** The same URL on this emulator, which is where the page fetches it. */
export function onEmulator(url) {
  const parsed = new URL(url);
  return location.origin + parsed.pathname + parsed.search;
}

/** The signed form of an image URL, from the emulator's server-side signer (the secret never reaches the page). */
export async function signed(url) {
  if (!page.config.signing) return url;
  const parsed = new URL(url);
  const query = new URLSearchParams({ path: parsed.pathname, query: parsed.search.slice(1) });
  // An expiring URL: `exp` under the signature, refused at the edge once passed (cached or not).
  if ($('#lifetime').value) query.set('expires', $('#lifetime').value);
  const body = await getJson(`/_api/sign?${query}`);
  return parsed.origin + body.url;
}

/** The arguments of the lambda/client call that makes the URL of `key` with `params`, as source text. */
export function helperCall(key, params) {
  const args = [JSON.stringify(base()), JSON.stringify(key)];
  const entries = Object.entries(params).map(
    ([name, value]) => `${name}: ${value === true ? 'true' : /^-?\d+(\.\d+)?$/.test(value) ? value : JSON.stringify(value)}`,
  );
  if (entries.length) args.push(`{ ${entries.join(', ')} }`);
  return args;
}
