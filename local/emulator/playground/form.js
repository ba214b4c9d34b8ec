// The parameters form: its fields as the URL helper's parameters, the
// composition examples, the deployment's names in its menus, and the view
// kept in the location hash.

import { IMAGE_PARAM_NAMES } from '/_playground/client.js';
import { $, el } from './dom.js';
import { page } from './page-state.js';

export const DEFAULTS = { width: '800' };
/** One button per composition operation, and all of them at once: each fills the form with its parameters. */
const EXAMPLES = {
  'pad, blurred fill': { width: '600', height: '600', fit: 'contain', fill: 'blur' },
  trim: { width: '600', trim: '10' },
  crop: { width: '600', crop: '0.25,0.25,0.5,0.5' },
  border: { width: '600', border: '12,1b2838' },
  watermark: { width: '600', watermark: 'logo' },
  'all at once': { width: '600', height: '600', fit: 'contain', fill: 'blur', crop: '0.1,0,0.8,1', watermark: 'logo', border: '8,ffffff' },
};
/** The form's parameter fields: one per parameter of the grammar's table, which the emulator serves the form's controls from (emulator/playground-form.ts). */
const PARAM_FIELDS = IMAGE_PARAM_NAMES;

const form = $('#params');

/** The form as ImageParams. Numbers stay text, so the helper checks them as the edge would. */
export function readParams() {
  const params = {};
  for (const name of PARAM_FIELDS) {
    const field = form.elements.namedItem(name);
    if (!field || field.disabled) continue;
    if (field.type === 'checkbox') {
      if (field.checked) params[name] = true;
    } else if (field.value.trim() !== '') {
      params[name] = field.value.trim();
    }
  }
  return params;
}

export function writeParams(values) {
  for (const name of PARAM_FIELDS) {
    const field = form.elements.namedItem(name);
    if (!field) continue;
    const value = values[name];
    if (field.type === 'checkbox') field.checked = value === '1' || value === 'true';
    else field.value = value ?? '';
  }
  syncSwatches();
}

/** Everything the page shows, in the location hash, so a view can be bookmarked or shared. */
export function saveHash(params) {
  const hash = new URLSearchParams();
  hash.set('source', $('#source').value);
  for (const [name, value] of Object.entries(params)) hash.set(name, value === true ? '1' : value);
  if ($('#accept').value !== 'browser') hash.set('accept', $('#accept').value);
  history.replaceState(null, '', `#${hash}`);
}

export function readHash() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const values = {};
  for (const [name, value] of hash) values[name] = value;
  return values;
}

/** Each colour picker shows its text field's colour, when the field holds one (emulator/playground-form.ts puts them side by side). */
function syncSwatches() {
  for (const picker of form.querySelectorAll('input[type=color][data-for]')) {
    const text = form.elements.namedItem(picker.dataset.for).value.trim().replace(/^#/, '');
    let hex;
    if (/^[0-9a-f]{3}$/i.test(text)) hex = text.replace(/./g, (c) => c + c);
    else if (/^[0-9a-f]{6}([0-9a-f]{2})?$/i.test(text)) hex = text.slice(0, 6);
    if (hex) picker.value = `#${hex.toLowerCase()}`;
  }
}

export function describePreset() {
  const name = $('#preset').value;
  const preset = name && page.config.presets?.[name];
  $('#preset-definition').textContent = preset
    ? `${name} = ${Object.entries(preset)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}; parameters below override it.`
    : '';
}

/** The menu of `select`: none, then `names`; disabled when there are none. */
function fillNames(select, names) {
  select.replaceChildren(el('option', { value: '', text: 'none' }), ...names.map((name) => el('option', { value: name, text: name })));
  select.disabled = names.length === 0;
}

/** The deployment's sizes, presets and watermarks in the form; with presetsOnly, every field but the preset is off. */
export function applyConfigToForm(config) {
  $('#sizes').replaceChildren(...(config.sizes ?? []).map((size) => el('option', { value: String(size) })));
  fillNames($('#preset'), Object.keys(config.presets ?? {}));
  const watermarks = Object.keys(config.watermarks ?? {});
  fillNames($('#watermark'), watermarks);
  // The examples that name a watermark the emulator does not have are left out.
  const shown = Object.entries(EXAMPLES).filter(([, params]) => !params.watermark || watermarks.includes(params.watermark));
  $('#examples').replaceChildren(
    ...shown.map(([label]) => el('button', { type: 'button', class: 'example', 'data-example': label, text: label })),
  );
  if (config.presetsOnly) {
    for (const name of PARAM_FIELDS) if (name !== 'preset') form.elements.namedItem(name).disabled = true;
  }
}

/** Typing updates the view after a pause (`scheduleUpdate`); Reset and an example update it at once (`update`). */
export function wireForm({ scheduleUpdate, update }) {
  form.addEventListener('input', (event) => {
    const picker = event.target.dataset.for;
    // A picker's colour goes into its text field; a text field's into its picker.
    if (picker) form.elements.namedItem(picker).value = event.target.value;
    else syncSwatches();
    scheduleUpdate();
  });
  form.addEventListener('change', scheduleUpdate);
  form.addEventListener('submit', (event) => event.preventDefault());
  $('#reset').addEventListener('click', () => {
    writeParams(DEFAULTS);
    void update();
  });
  $('#examples').addEventListener('click', (event) => {
    const button = event.target.closest('button.example');
    if (!button) return;
    writeParams(EXAMPLES[button.dataset.example]);
    void update();
  });
}
