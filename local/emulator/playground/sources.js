// The source menu: the emulator's sources, by their URL keys.

import { $, el } from './dom.js';
import { page } from './page-state.js';
import { formatBytes } from './units.js';
import { getJson } from './urls.js';

/** Lists the sources in the menu, keeping `select` (or the current choice) when it is still there. */
export async function loadSources(select) {
  page.sources = await getJson('/_api/sources');
  const menu = $('#source');
  const current = select ?? menu.value;
  menu.replaceChildren(
    ...page.sources.map((source) => el('option', { value: source.key, text: `${source.key}  (${formatBytes(source.bytes)})` })),
  );
  const preferred = [current, 'samples/mountains.jpg'].find((key) => key && page.sources.some((s) => s.key === key));
  if (preferred) menu.value = preferred;
}
