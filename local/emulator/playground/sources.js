// The source menu: the emulator's sources, and a file dropped or chosen,
// uploaded as `uploads/<file name>`.

import { $, el, setStatus } from './dom.js';
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

async function upload(file, onUploaded) {
  const status = $('#upload-status');
  const key = `uploads/${file.name}`;
  setStatus(status, `Uploading ${file.name} (${formatBytes(file.size)})…`);
  try {
    const path = key.split('/').map(encodeURIComponent).join('/');
    const response = await fetch(`/_api/sources/${path}`, {
      method: 'PUT',
      body: file,
      headers: { 'content-type': file.type || 'application/octet-stream' },
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.message || `HTTP ${response.status}`);
    await loadSources(body.key ?? key);
    setStatus(status, `Uploaded as ${body.key ?? key}.`, 'good');
    await onUploaded();
  } catch (error) {
    setStatus(status, `Upload failed: ${error.message}`, 'bad');
  }
}

/** A file chosen or dropped is uploaded, then selected; `onUploaded` shows it. */
export function wireUploads(onUploaded) {
  $('#upload').addEventListener('change', (event) => {
    const file = event.target.files?.[0];
    if (file) void upload(file, onUploaded);
    event.target.value = '';
  });
  const drop = $('#drop');
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const file = event.dataTransfer?.files?.[0];
    if (file) void upload(file, onUploaded);
  });
}
