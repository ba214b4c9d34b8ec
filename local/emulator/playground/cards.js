// The Cards section: the deployment's card templates (docs/templates.md), a
// field for each slot of the one picked, and the card they make over the
// selected source, which fills the template's first image slot as a URL's
// key does. The URL is made by the project's own helpers (cardParams and
// imageUrl from lambda/client), signed by the emulator when it checks
// signatures; a refusal is shown as the service's JSON, as the result's is.

import { cardParams, imageUrl } from '/_playground/client.js';
import { previewAccept, showImage, showServiceError } from './comparison.js';
import { $, el, errorBox } from './dom.js';
import { measure } from './measure.js';
import { page } from './page-state.js';
import { renderStats } from './stats.js';
import { base, onEmulator, signed } from './urls.js';

/** A text slot's example, so that a card shows at once. */
const SAMPLE_TEXT = { title: 'Summer sale: 40% off every lens', caption: 'example.com' };
/** The image a second image slot starts with, when the emulator has it. */
const SAMPLE_IMAGE = 'samples/logo.png';

const cards = { generation: 0, controller: undefined, pending: undefined };

const template = () => page.config.cards?.[$('#card-template').value];
const keySlot = (picked) => picked.slots.find((slot) => slot.kind === 'image');
const length = (text) => Array.from(text).length;

/** A text slot's field: its length against its slot's maxLength, beside its name; the service refuses a longer one. */
function textField(slot) {
  const input = el('input', { type: 'text', 'data-slot': slot.name, spellcheck: 'false', value: SAMPLE_TEXT[slot.name] ?? '' });
  const count = el('small', { class: 'count' });
  const counted = () => {
    count.textContent = `${length(input.value)} / ${slot.maxLength}`;
    count.classList.toggle('over', length(input.value) > slot.maxLength);
  };
  input.addEventListener('input', counted);
  counted();
  const name = el('span', {}, [slot.name, ' ', el('small', { text: slot.required ? 'text' : 'text, optional' }), ' ', count]);
  return el('label', { class: 'field' }, [name, input]);
}

/** An image slot's field: the URL's key for the first, a menu of the emulator's sources for the others. */
function imageField(slot, first) {
  const name = el('span', {}, [slot.name, ' ', el('small', { text: first ? "image: the source above, the URL's key" : 'image' })]);
  if (first) return el('div', { class: 'field' }, [name, el('code', { id: 'card-key', text: $('#source').value })]);
  const keys = page.sources.map((source) => source.key);
  const menu = el(
    'select',
    { 'data-slot': slot.name },
    keys.map((key) => el('option', { value: key, text: key })),
  );
  menu.value = keys.includes(SAMPLE_IMAGE) ? SAMPLE_IMAGE : (keys[0] ?? '');
  return el('label', { class: 'field' }, [name, menu]);
}

function showSlots() {
  const picked = template();
  $('#card-result').hidden = !picked;
  if (!picked) return $('#card-slots').replaceChildren();
  const first = keySlot(picked);
  $('#card-slots').replaceChildren(
    ...picked.slots.map((slot) => (slot.kind === 'text' ? textField(slot) : imageField(slot, slot === first))),
  );
  $('#card-template-size').textContent = `${picked.width} × ${picked.height} px`;
}

/** The slots' fills as cardParams takes them: every image slot but the key's, every text but an optional one left empty. */
function fills() {
  const picked = template();
  const given = {};
  for (const field of $('#card-slots').querySelectorAll('[data-slot]')) {
    const slot = picked.slots.find((one) => one.name === field.dataset.slot);
    if (slot.kind === 'image' || slot.required || field.value !== '') given[slot.name] = field.value;
  }
  return given;
}

/** Fetches the card of the fields and shows it, its stats and its URL; a newer update aborts an older one's fetch. */
export async function updateCard() {
  const name = $('#card-template').value;
  const picked = template();
  // A template without image slots draws its source, which is then its URL's key.
  const key = picked && keySlot(picked) ? $('#source').value : picked?.source;
  if (!picked || !key) return;
  const generation = ++cards.generation;
  cards.controller?.abort();
  cards.controller = new AbortController();
  const frame = $('#card-frame');
  frame.classList.add('loading');
  if ($('#card-key')) $('#card-key').textContent = key;
  try {
    const given = fills();
    const params = cardParams(name, given);
    const shown = await signed(imageUrl(base(), key, params, page.config));
    const fetched = onEmulator(await signed(imageUrl(location.origin, key, params, page.config)));
    const m = await measure(fetched, previewAccept(), cards.controller.signal);
    if (generation !== cards.generation) return;
    const dims = m.ok ? await showImage(frame, 'card', m.body) : await showServiceError(frame, m);
    renderStats($('#card-stats'), m, dims);
    // Last: once the URL is shown, so is its card.
    $('#card-url').textContent = shown;
    const call = `${JSON.stringify(base())}, ${JSON.stringify(key)}, cardParams(${JSON.stringify(name)}, ${JSON.stringify(given)})`;
    $('#card-call').replaceChildren(
      ...(page.config.signing
        ? [el('code', { text: `signedImageUrl(${call}, secret)` }), ': signed by the emulator, as your back end would sign it']
        : [el('code', { text: `imageUrl(${call})` })]),
    );
  } catch (error) {
    if (error.name !== 'AbortError') frame.replaceChildren(errorBox('The playground could not make this card', '', error.message));
  } finally {
    if (generation === cards.generation) frame.classList.remove('loading');
  }
}

function scheduleCard() {
  clearTimeout(cards.pending);
  cards.pending = setTimeout(() => void updateCard(), 250);
}

/** The template menu from the emulator's configuration; the section says so when the deployment has none. */
export function showTemplates() {
  const names = Object.keys(page.config.cards ?? {});
  $('#card-template').append(...names.map((name) => el('option', { value: name, text: name })));
  $('#card-template').disabled = names.length === 0;
  $('#cards-none').hidden = names.length > 0;
}

export function wireCards() {
  $('#card-template').addEventListener('change', () => {
    showSlots();
    void updateCard();
  });
  $('#card-slots').addEventListener('input', scheduleCard);
  // The key fills the first image slot: a new source is a new card.
  for (const id of ['#source', '#accept', '#lifetime']) $(id).addEventListener('change', scheduleCard);
  $('#base').addEventListener('input', scheduleCard);
}
