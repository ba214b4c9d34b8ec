// The playground: one source under every parameter of the URL contract, the
// result beside the `original` variant with what each cost (comparison.js),
// the URL to copy (built with the project's own helper, lambda/client, served
// as /_playground/client.js) and a live responsive <img srcset sizes>
// (srcset-demo.js), and the deployment's card templates filled in (cards.js).
// This module is the page's entry: it starts the page and updates every part
// of it when a parameter changes.

import { imageUrl } from '/_playground/client.js';
import { showTemplates, updateCard, wireCards } from './cards.js';
import { showHelperError, showOriginal, showResult } from './comparison.js';
import { $, el, errorBox, wireCopyButtons } from './dom.js';
import { applyConfigToForm, DEFAULTS, describePreset, readHash, readParams, saveHash, wireForm, writeParams } from './form.js';
import { page } from './page-state.js';
import { loadSources } from './sources.js';
import { describeDemoOnResize, showDemo } from './srcset-demo.js';
import { wireUploads } from './upload.js';
import { base, getJson, helperCall, onEmulator, signed } from './urls.js';

// 1x1 images (made by sharp) to learn which formats this browser decodes, and
// so which Accept header its <img> requests send: every browser that decodes
// AVIF or WebP also announces it in Accept.
const TINY_AVIF =
  'data:image/avif;base64,AAAAHGZ0eXBhdmlmAAAAAG1pZjFhdmlmbWlhZgAAANZtZXRhAAAAAAAAACFoZGxyAAAAAAAAAABwaWN0AAAAAAAAAAAAAAAAAAAAACJpbG9jAAAAAERAAAEAAQAAAAAA+gABAAAAAAAAABsAAAAjaWluZgAAAAAAAQAAABVpbmZlAgAAAAABAABhdjAxAAAAAA5waXRtAAAAAAABAAAAVmlwcnAAAAA4aXBjbwAAAAxhdjFDgSACAAAAABRpc3BlAAAAAAAAAAEAAAABAAAAEHBpeGkAAAAAAwgICAAAABZpcG1hAAAAAAAAAAEAAQOBAgMAAAAjbWRhdBIACgc4AAaQENBpMg4ZQmMEwAA0AACQQMkcFA==';
const TINY_WEBP = 'data:image/webp;base64,UklGRiQAAABXRUJQVlA4IBgAAABQAQCdASoBAAEAAUAmJaQABYwAAP6igAA=';

async function decodes(uri) {
  const image = new Image();
  image.src = uri;
  try {
    await image.decode();
    return image.naturalWidth > 0;
  } catch {
    return false;
  }
}

/** The latest update, and the controller that aborts its fetches when a newer one starts. */
const updates = { generation: 0, controller: undefined };

/** The URL of the parameters as it is copied, the helper call that makes it, and what the result pane shows. */
function showUrl(key, params, shown) {
  $('#url').textContent = shown;
  $('#url').classList.remove('bad');
  $('#url-hint').replaceChildren('imageUrl(', el('code', { text: helperCall(key, params).join(', ') }), ')');
  $('#result-note').textContent =
    params.format === 'json'
      ? 'metadata'
      : $('#accept').value === 'browser'
        ? "as this browser's <img> gets it"
        : `for Accept: ${$('#accept').value}`;
}

async function update({ reloadOriginal = false } = {}) {
  const generation = ++updates.generation;
  updates.controller?.abort();
  const controller = new AbortController();
  updates.controller = controller;
  const { signal } = controller;
  const key = $('#source').value;
  if (!key) return;
  const params = readParams();
  saveHash(params);
  describePreset();
  document.body.dataset.state = 'loading';

  try {
    if (reloadOriginal || page.original?.key !== key) await showOriginal(key, signal);
    if (generation !== updates.generation) return;

    let url;
    let shown;
    try {
      url = imageUrl(location.origin, key, params, page.config);
      shown = base() === location.origin ? url : imageUrl(base(), key, params, page.config);
    } catch (error) {
      showHelperError(error);
      await showDemo(key, params);
      return;
    }
    showUrl(key, params, shown);
    const fetched = onEmulator(await signed(url));
    if (page.config.signing) {
      $('#signed-url').textContent = await signed(shown);
      $('#signed-row').hidden = false;
    }
    await Promise.all([showResult(fetched, signal), showDemo(key, params)]);
  } catch (error) {
    if (error.name === 'AbortError') return;
    $('#result-frame').replaceChildren(errorBox('The playground could not reach the emulator', '', error.message));
  } finally {
    if (generation === updates.generation) document.body.dataset.state = 'ready';
  }
}

let pending;
function scheduleUpdate() {
  clearTimeout(pending);
  pending = setTimeout(() => void update(), 250);
}

function wire() {
  wireForm({ scheduleUpdate, update });
  $('#source').addEventListener('change', () => void update());
  $('#accept').addEventListener('change', () => void update());
  $('#lifetime').addEventListener('change', () => void update());
  for (const id of ['#widths', '#sizes-attr', '#base']) $(id).addEventListener('input', scheduleUpdate);
  wireUploads(async (key) => {
    await loadSources(key);
    await Promise.all([update({ reloadOriginal: true }), updateCard()]);
  });
  wireCards();
  wireCopyButtons();
}

/** The header's line: what the emulator is, and the deployment's settings the page works under. */
function showFacts(config) {
  const facts = [
    ['maxDimension', String(config.maxDimension)],
    ['sizes', config.sizes ? config.sizes.join(', ') : 'any'],
    ['AVIF', config.avif ? 'on' : 'off'],
    ['signed URLs', config.signing ? 'required' : 'off'],
    ['presets', Object.keys(config.presets ?? {}).join(', ') || 'none'],
    ['cards', Object.keys(config.cards ?? {}).join(', ') || 'none'],
  ];
  $('#facts').replaceChildren(
    'The local edge emulator: CloudFront Function → edge cache → S3 cache bucket → origin Lambda. ',
    ...facts.flatMap(([name, value], i) => [i ? ' · ' : '', `${name} `, el('b', { text: value })]),
  );
}

async function start() {
  wire();
  $('#base').value = location.origin;
  const [config, avif, webp] = await Promise.all([getJson('/_api/config'), decodes(TINY_AVIF), decodes(TINY_WEBP)]);
  page.config = config;
  page.browserAccept = [avif && 'image/avif', webp && 'image/webp', 'image/*', '*/*;q=0.8'].filter(Boolean).join(',');
  $('#accept').options[0].textContent =
    `this browser's <img> (${[avif && 'AVIF', webp && 'WebP'].filter(Boolean).join(', ') || 'neither AVIF nor WebP'})`;
  applyConfigToForm(config);
  showTemplates();
  $('#lifetime-row').hidden = !config.signing;
  showFacts(config);

  const saved = readHash();
  await loadSources(saved.source);
  writeParams(Object.keys(saved).length ? saved : DEFAULTS);
  if (saved.accept && [...$('#accept').options].some((o) => o.value === saved.accept)) $('#accept').value = saved.accept;
  describeDemoOnResize();
  await update();
}

start().catch((error) => {
  $('#facts').textContent = `The playground could not start: ${error.message}`;
});
