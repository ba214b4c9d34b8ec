// The playground: one source under every parameter of the URL contract, the
// result beside the `original` variant with what each cost, the URL to copy
// (built with the project's own helper, lambda/client, served as
// /_playground/client.js) and a live responsive <img srcset sizes>.
//
// Each image is fetched with fetch() rather than put straight into an <img>,
// so that the page can read its status, Content-Type, size, X-Cache, X-Origin
// and Server-Timing, and show a service error as the JSON it is. The bytes
// shown are exactly the bytes measured. The responsive demo, on the other
// hand, is a plain <img srcset>: there the browser asks by itself.

import { IMAGE_PARAM_NAMES, imageUrl, srcset } from '/_playground/client.js';

const $ = (selector) => document.querySelector(selector);

// 1x1 images (made by sharp) to learn which formats this browser decodes, and
// so which Accept header its <img> requests send: every browser that decodes
// AVIF or WebP also announces it in Accept.
const TINY_AVIF =
  'data:image/avif;base64,AAAAHGZ0eXBhdmlmAAAAAG1pZjFhdmlmbWlhZgAAANZtZXRhAAAAAAAAACFoZGxyAAAAAAAAAABwaWN0AAAAAAAAAAAAAAAAAAAAACJpbG9jAAAAAERAAAEAAQAAAAAA+gABAAAAAAAAABsAAAAjaWluZgAAAAAAAQAAABVpbmZlAgAAAAABAABhdjAxAAAAAA5waXRtAAAAAAABAAAAVmlwcnAAAAA4aXBjbwAAAAxhdjFDgSACAAAAABRpc3BlAAAAAAAAAAEAAAABAAAAEHBpeGkAAAAAAwgICAAAABZpcG1hAAAAAAAAAAEAAQOBAgMAAAAjbWRhdBIACgc4AAaQENBpMg4ZQmMEwAA0AACQQMkcFA==';
const TINY_WEBP = 'data:image/webp;base64,UklGRiQAAABXRUJQVlA4IBgAAABQAQCdASoBAAEAAUAmJaQABYwAAP6igAA=';

/** Accept for the `original` variant: naming no image type, the edge keeps the source's format. */
const ORIGINAL_ACCEPT = '*/*';

const DEFAULTS = { width: '800' };
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
const STATUS_TEXT = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const state = {
  config: undefined,
  sources: [],
  browserAccept: 'image/*,*/*;q=0.8',
  original: undefined, // { key, measurement, width, height }
  generation: 0,
  controller: undefined,
  objectUrls: { original: undefined, result: undefined },
  demoCandidates: [],
  demoLines: [],
};

// ---------------------------------------------------------------- helpers

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of [].concat(children)) node.append(child);
  return node;
}

function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB'];
  let value = bytes;
  let unit = -1;
  do {
    value /= 1000;
    unit++;
  } while (value >= 1000 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

const ms = (value) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

/** `fetch;dur=12.3, transform;dur=80` → [{ name, dur }] */
function parseServerTiming(header) {
  if (!header) return [];
  return header
    .split(',')
    .map((metric) => {
      const [name, ...params] = metric.trim().split(';');
      const dur = params.map((param) => param.trim().match(/^dur=([\d.]+)$/)).find(Boolean);
      return { name: name.trim(), dur: dur ? Number(dur[1]) : undefined };
    })
    .filter((metric) => metric.name);
}

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

async function getJson(url) {
  const response = await fetch(url, { cache: 'no-store' });
  const body = await response.json();
  if (!response.ok) throw new Error(body.message || `${url}: HTTP ${response.status}`);
  return body;
}

function setStatus(node, text, kind = '') {
  node.textContent = text;
  node.className = `status ${kind}`;
}

// ------------------------------------------------------------- parameters

const form = $('#params');

/** The form as ImageParams. Numbers stay text, so the helper checks them as the edge would. */
function readParams() {
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

function writeParams(values) {
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
function saveHash(params) {
  const hash = new URLSearchParams();
  hash.set('source', $('#source').value);
  for (const [name, value] of Object.entries(params)) hash.set(name, value === true ? '1' : value);
  if ($('#accept').value !== 'browser') hash.set('accept', $('#accept').value);
  history.replaceState(null, '', `#${hash}`);
}

function readHash() {
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

function describePreset() {
  const name = $('#preset').value;
  const preset = name && state.config.presets?.[name];
  $('#preset-definition').textContent = preset
    ? `${name} = ${Object.entries(preset)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}; parameters below override it.`
    : '';
}

// ------------------------------------------------------------------- URLs

function base() {
  return $('#base').value.trim() || location.origin;
}

/** The same URL on this emulator, which is where the page fetches it. */
function onEmulator(url) {
  const parsed = new URL(url);
  return location.origin + parsed.pathname + parsed.search;
}

/** The signed form of an image URL, from the emulator's server-side signer (the secret never reaches the page). */
async function signed(url) {
  if (!state.config.signing) return url;
  const parsed = new URL(url);
  const query = new URLSearchParams({ path: parsed.pathname, query: parsed.search.slice(1) });
  // An expiring URL: `exp` under the signature, refused at the edge once passed (cached or not).
  if ($('#lifetime').value) query.set('expires', $('#lifetime').value);
  const body = await getJson(`/_api/sign?${query}`);
  return parsed.origin + body.url;
}

function helperCall(key, params) {
  const args = [JSON.stringify(base()), JSON.stringify(key)];
  const entries = Object.entries(params).map(
    ([name, value]) => `${name}: ${value === true ? 'true' : /^-?\d+(\.\d+)?$/.test(value) ? value : JSON.stringify(value)}`,
  );
  if (entries.length) args.push(`{ ${entries.join(', ')} }`);
  return args;
}

// -------------------------------------------------------------- measuring

/** Fetches an image URL as a page would, and keeps what the response says about itself. */
async function measure(url, accept, signal) {
  const started = performance.now();
  const response = await fetch(url, { headers: { Accept: accept }, cache: 'no-store', signal });
  const body = await response.blob();
  const total = performance.now() - started;
  const header = (name) => response.headers.get(name) ?? undefined;
  return {
    url,
    accept,
    status: response.status,
    ok: response.ok,
    body,
    bytes: body.size,
    contentType: header('content-type') ?? '',
    xCache: header('x-cache'),
    xOrigin: header('x-origin'),
    cacheControl: header('cache-control'),
    vary: header('vary'),
    // Every header as the browser got it, after CloudFront's viewer-response function (same origin: none is hidden).
    headers: [...response.headers].map(([name, value]) => `${name}: ${value}`),
    etag: header('etag'),
    serverTiming: parseServerTiming(header('server-timing')),
    total,
  };
}

// ------------------------------------------------------------- rendering

function showImage(frame, which, blob) {
  if (state.objectUrls[which]) URL.revokeObjectURL(state.objectUrls[which]);
  const url = URL.createObjectURL(blob);
  state.objectUrls[which] = url;
  const image = el('img', { src: url, alt: `${which} image`, id: `${which}-image` });
  frame.replaceChildren(image);
  return image
    .decode()
    .then(() => ({ width: image.naturalWidth, height: image.naturalHeight }))
    .catch(() => {
      // Only when the service answered 200 with bytes this browser cannot show (e.g. no AVIF decoder).
      frame.replaceChildren(
        errorBox(`Cannot display ${blob.type || 'this response'}`, '', 'This browser did not decode the response body.'),
      );
      return undefined;
    });
}

function errorBox(title, code, message) {
  return el('div', { class: 'error', role: 'alert' }, [
    el('strong', { text: title }),
    ...(code ? [el('div', {}, [el('code', { text: code })])] : []),
    el('p', { text: message }),
  ]);
}

/** The error body's code and message; the message says so when the body is not the contract's `{ error, message }`. */
async function serviceErrorBody(measurement) {
  let body;
  try {
    body = JSON.parse(await measurement.body.text());
  } catch {
    body = undefined;
  }
  const code = typeof body?.error === 'string' ? body.error : '';
  if (typeof body?.message === 'string') return { code, message: body.message };
  const contentType = measurement.contentType || 'no Content-Type';
  return { code, message: `The response was not the JSON error body the contract promises (${contentType}).` };
}

async function showServiceError(frame, measurement) {
  const { code, message } = await serviceErrorBody(measurement);
  const title = `${measurement.status} ${STATUS_TEXT[measurement.status] ?? ''}`.trim();
  frame.replaceChildren(errorBox(title, code, message));
}

function row(list, term, ...content) {
  list.append(el('dt', { text: term }), el('dd', {}, content));
}

function timingRows(list, m) {
  const metrics = Object.fromEntries(m.serverTiming.filter((t) => t.dur !== undefined).map((t) => [t.name, t.dur]));
  const fresh = m.xOrigin === 'lambda';
  if (fresh && m.serverTiming.length) {
    const parts = ['fetch', 'transform'].filter((name) => metrics[name] !== undefined);
    const inLambda = parts.reduce((sum, name) => sum + metrics[name], 0);
    const rest = Math.max(0, m.total - inLambda);
    const bar = el('div', { class: 'timing', title: `total ${ms(m.total)}` }, [
      ...parts.map((name) => el('span', { class: name, style: `flex: ${metrics[name]} 0 0` })),
      el('span', { class: 'wire', style: `flex: ${rest} 0 0` }),
    ]);
    const legend = el('div', { class: 'legend' }, [
      ...parts.map((name) =>
        el('span', {}, [el('i', { class: name, style: `background: var(--${name})` }), `${name} ${ms(metrics[name])}`]),
      ),
      el('span', {}, [el('i', { style: 'background: var(--wire)' }), `edge, S3 miss, network ${ms(rest)}`]),
    ]);
    row(list, 'time', el('span', { text: `${ms(m.total)} round trip, made by the origin Lambda` }), bar, legend);
    return;
  }
  const where = m.xCache?.startsWith('Hit')
    ? 'from the edge cache'
    : m.xOrigin === 'cache-bucket'
      ? 'from the S3 cache bucket, no Lambda'
      : '';
  row(list, 'time', `${ms(m.total)} round trip${where ? `, ${where}` : ''}`);
  if (m.serverTiming.length) {
    row(list, 'when made', el('span', { class: 'mono', text: m.serverTiming.map((t) => `${t.name} ${ms(t.dur ?? 0)}`).join(' · ') }));
  }
}

function renderStats(list, m, dims, compareTo) {
  list.replaceChildren();
  row(list, 'status', String(m.status));
  if (dims) row(list, 'dimensions', `${dims.width} × ${dims.height} px${dims.note ? ` ${dims.note}` : ''}`);
  row(list, 'format', el('span', { class: 'mono', text: m.contentType || '—' }));
  const bytes = [`${formatBytes(m.bytes)} `, el('small', { text: `(${m.bytes.toLocaleString('en')} B)` })];
  if (compareTo && m.ok && compareTo > 0) {
    const change = (m.bytes - compareTo) / compareTo;
    const text = change <= 0 ? ` −${Math.round(-change * 100)}% vs original` : ` +${Math.round(change * 100)}% vs original`;
    bytes.push(el('span', { class: change <= 0 ? 'saving' : 'worse', text }));
  }
  row(list, 'bytes', ...bytes);
  row(
    list,
    'served',
    el('span', { class: 'mono', text: [m.xCache, m.xOrigin && `X-Origin: ${m.xOrigin}`].filter(Boolean).join(' · ') || '—' }),
  );
  timingRows(list, m);
  if (m.cacheControl) row(list, 'cache-control', el('span', { class: 'mono', text: m.cacheControl }));
  if (m.vary) row(list, 'vary', el('span', { class: 'mono', text: m.vary }));
  row(
    list,
    'headers',
    el('details', { class: 'headers' }, [
      el('summary', { text: `${m.headers.length} response headers, as this browser got them` }),
      el('pre', { class: 'mono', text: m.headers.join('\n') }),
    ]),
  );
  row(list, 'accept sent', el('span', { class: 'mono', text: m.accept }));
}

// ---------------------------------------------------------------- panels

async function showOriginal(key, signal) {
  const frame = $('#original-frame');
  frame.classList.add('loading');
  try {
    const url = onEmulator(await signed(imageUrl(location.origin, key, {}, state.config)));
    const m = await measure(url, ORIGINAL_ACCEPT, signal);
    let dims;
    if (m.ok) dims = await showImage(frame, 'original', m.body);
    else await showServiceError(frame, m);
    const source = state.sources.find((s) => s.key === key);
    renderStats($('#original-stats'), m, dims);
    if (source) row($('#original-stats'), 'source object', `${formatBytes(source.bytes)} in the source bucket`);
    state.original = { key, measurement: m, ...(dims ?? {}) };
  } finally {
    frame.classList.remove('loading');
  }
}

async function showResult(url, signal) {
  const frame = $('#result-frame');
  frame.classList.add('loading');
  const accept = $('#accept').value === 'browser' ? state.browserAccept : $('#accept').value;
  try {
    const m = await measure(url, accept, signal);
    const json = m.ok && m.contentType.startsWith('application/json');
    $('#json-card').hidden = !json;
    let dims;
    if (!m.ok) {
      await showServiceError(frame, m);
    } else if (json) {
      const metadata = JSON.parse(await m.body.text());
      $('#json').textContent = JSON.stringify(metadata, null, 2);
      dims = { width: metadata.width, height: metadata.height, note: '(the source, as displayed)' };
      if (typeof metadata.placeholder === 'string' && metadata.placeholder.startsWith('data:image/')) {
        const image = el('img', {
          src: metadata.placeholder,
          alt: 'placeholder from format=json',
          class: 'placeholder',
          id: 'result-image',
        });
        frame.replaceChildren(image);
        await image.decode().catch(() => {});
      } else {
        frame.replaceChildren(el('p', { class: 'hint', text: 'Metadata only: see below.' }));
      }
    } else {
      dims = await showImage(frame, 'result', m.body);
    }
    const compareTo = !json && state.original?.measurement.ok ? state.original.measurement.bytes : undefined;
    renderStats($('#result-stats'), m, dims, compareTo);
    frame.dataset.url = url;
  } finally {
    frame.classList.remove('loading');
  }
}

function showHelperError(error) {
  $('#url').textContent = error.message;
  $('#url').classList.add('bad');
  $('#signed-row').hidden = true;
  $('#json-card').hidden = true;
  $('#result-frame').replaceChildren(errorBox('The URL helper refused these parameters', 'imageUrl() threw', error.message));
  $('#result-stats').replaceChildren();
}

// ------------------------------------------------------ responsive demo

function demoParams(params) {
  const { width: _w, height: _h, dpr: _d, preset: _p, ...rest } = params;
  if (rest.format === 'json') delete rest.format;
  return rest;
}

function parseWidths() {
  return $('#widths')
    .value.split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
}

function markupLines(candidates, fallback, sizes, dims) {
  const lines = ['<img', `  src="${fallback}"`];
  candidates.forEach((candidate, i) => {
    const text = `${candidate.url} ${candidate.width}w${i === candidates.length - 1 ? '"' : ','}`;
    lines.push({ text: i === 0 ? `  srcset="${text}` : `          ${text}`, url: candidate.url });
  });
  lines.push(`  sizes="${sizes}"`);
  if (dims) lines.push(`  width="${dims.width}" height="${dims.height}"`);
  lines.push('  alt="">');
  return lines;
}

function renderMarkup() {
  const code = $('#markup');
  const picked = $('#demo img')?.currentSrc;
  code.replaceChildren(
    ...state.demoLines.flatMap((line, i) => {
      const text = typeof line === 'string' ? line : line.text;
      const isPicked = typeof line !== 'string' && picked && onEmulator(line.url) === picked;
      return [isPicked ? el('span', { class: 'picked', text }) : text, i < state.demoLines.length - 1 ? '\n' : ''];
    }),
  );
}

async function showDemo(key, params) {
  const demo = $('#demo');
  const sizes = $('#sizes-attr').value.trim() || '100vw';
  const forDemo = demoParams(params);
  let set;
  let displaySet;
  try {
    const widths = parseWidths();
    set = srcset(location.origin, key, widths, forDemo, state.config);
    displaySet = base() === location.origin ? set : srcset(base(), key, widths, forDemo, state.config);
  } catch (error) {
    demo.replaceChildren(errorBox('srcset() threw', '', error.message));
    $('#demo-stats').replaceChildren();
    return;
  }
  const parse = (text) =>
    text.split(', ').map((candidate) => {
      const at = candidate.lastIndexOf(' ');
      return { url: candidate.slice(0, at), width: Number(candidate.slice(at + 1, -1)) };
    });
  const candidates = await Promise.all(parse(set).map(async (c) => ({ ...c, url: await signed(c.url) })));
  const shown = await Promise.all(parse(displaySet).map(async (c) => ({ ...c, url: await signed(c.url) })));
  state.demoCandidates = candidates;

  const rotated = params.rotate === '90' || params.rotate === '270';
  const dims = state.original?.width
    ? rotated
      ? { width: state.original.height, height: state.original.width }
      : state.original
    : undefined;
  const middle = candidates[Math.floor((candidates.length - 1) / 2)];
  const image = el('img', {
    alt: 'responsive demo',
    sizes,
    srcset: candidates.map((c) => `${c.url} ${c.width}w`).join(', '),
    src: middle.url,
  });
  if (dims) {
    image.setAttribute('width', String(dims.width));
    image.setAttribute('height', String(dims.height));
  }
  image.addEventListener('load', () => void describeDemo(image));
  image.addEventListener('error', () => {
    demo.replaceChildren(
      errorBox('The browser could not load a candidate', '', "See the Result panel for the service's answer to these parameters."),
    );
  });
  demo.replaceChildren(image);

  state.demoLines = markupLines(shown, shown[Math.floor((shown.length - 1) / 2)].url, sizes, dims);
  renderMarkup();
  const options = state.config.sizes ? `, { sizes: [${state.config.sizes.join(', ')}] }` : '';
  const args = helperCall(key, forDemo);
  const call = `srcset(${args.slice(0, 2).join(', ')}, [${parseWidths().join(', ')}]${args[2] ? `, ${args[2]}` : options ? ', {}' : ''}${options})`;
  $('#snippet').textContent =
    `// lambda/client from this repository: no dependencies, safe in a browser bundle\n` +
    `import { imageUrl, srcset } from './lambda/client';\n\n` +
    `img.srcset = ${call};\nimg.sizes = ${JSON.stringify(sizes)};` +
    (state.config.signing ? `\n// Signing is on: sign each candidate server-side with signedImageUrl (lambda/client/sign.ts).` : '');
}

async function describeDemo(image) {
  const list = $('#demo-stats');
  const current = image.currentSrc;
  const candidate = state.demoCandidates.find((c) => onEmulator(c.url) === current);
  // naturalWidth of a srcset image is density-corrected; the decoded pixels are another Image's.
  const pixels = new Image();
  pixels.src = current;
  await pixels.decode().catch(() => {});
  // The browser has picked again meanwhile, or a later update has replaced this image: its stats would be stale.
  if (image.currentSrc !== current || !image.isConnected) return;
  list.replaceChildren();
  row(list, 'devicePixelRatio', String(window.devicePixelRatio));
  row(list, 'rendered at', `${image.clientWidth} CSS px wide`);
  if (candidate && pixels.naturalWidth) {
    const slot = (candidate.width * image.naturalWidth) / pixels.naturalWidth;
    row(list, 'sizes gives', `≈ ${Math.round(slot)} CSS px, so ≥ ${Math.round(slot * window.devicePixelRatio)} px wanted`);
  }
  row(list, 'picked', el('strong', { text: candidate ? `${candidate.width}w` : '?' }));
  row(list, 'decoded', `${pixels.naturalWidth} × ${pixels.naturalHeight} px`);
  row(list, 'currentSrc', el('span', { class: 'mono', text: current.replace(location.origin, '') }));
  image.dataset.picked = candidate ? String(candidate.width) : '';
  renderMarkup();
}

// ---------------------------------------------------------------- update

async function update({ reloadOriginal = false } = {}) {
  const generation = ++state.generation;
  state.controller?.abort();
  const controller = new AbortController();
  state.controller = controller;
  const { signal } = controller;
  const key = $('#source').value;
  if (!key) return;
  const params = readParams();
  saveHash(params);
  describePreset();
  document.body.dataset.state = 'loading';

  try {
    if (reloadOriginal || state.original?.key !== key) await showOriginal(key, signal);
    if (generation !== state.generation) return;

    let url;
    let shown;
    try {
      url = imageUrl(location.origin, key, params, state.config);
      shown = base() === location.origin ? url : imageUrl(base(), key, params, state.config);
    } catch (error) {
      showHelperError(error);
      await showDemo(key, params);
      return;
    }
    $('#url').textContent = shown;
    $('#url').classList.remove('bad');
    $('#url-hint').replaceChildren('imageUrl(', el('code', { text: helperCall(key, params).join(', ') }), ')');
    const fetched = onEmulator(await signed(url));
    if (state.config.signing) {
      $('#signed-url').textContent = await signed(shown);
      $('#signed-row').hidden = false;
    }
    $('#result-note').textContent =
      params.format === 'json'
        ? 'metadata'
        : $('#accept').value === 'browser'
          ? "as this browser's <img> gets it"
          : `for Accept: ${$('#accept').value}`;
    await Promise.all([showResult(fetched, signal), showDemo(key, params)]);
  } catch (error) {
    if (error.name === 'AbortError') return;
    $('#result-frame').replaceChildren(errorBox('The playground could not reach the emulator', '', error.message));
  } finally {
    if (generation === state.generation) document.body.dataset.state = 'ready';
  }
}

let pending;
function scheduleUpdate() {
  clearTimeout(pending);
  pending = setTimeout(() => void update(), 250);
}

// ---------------------------------------------------------------- sources

async function loadSources(select) {
  state.sources = await getJson('/_api/sources');
  const menu = $('#source');
  const current = select ?? menu.value;
  menu.replaceChildren(
    ...state.sources.map((source) => el('option', { value: source.key, text: `${source.key}  (${formatBytes(source.bytes)})` })),
  );
  const preferred = [current, 'samples/mountains.jpg'].find((key) => key && state.sources.some((s) => s.key === key));
  if (preferred) menu.value = preferred;
}

async function upload(file) {
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
    await update({ reloadOriginal: true });
  } catch (error) {
    setStatus(status, `Upload failed: ${error.message}`, 'bad');
  }
}

// ------------------------------------------------------------------ start

function wire() {
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
  $('#source').addEventListener('change', () => void update());
  $('#accept').addEventListener('change', () => void update());
  $('#lifetime').addEventListener('change', () => void update());
  for (const id of ['#widths', '#sizes-attr', '#base']) $(id).addEventListener('input', scheduleUpdate);

  $('#upload').addEventListener('change', (event) => {
    const file = event.target.files?.[0];
    if (file) void upload(file);
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
    if (file) void upload(file);
  });

  $('#examples').addEventListener('click', (event) => {
    const button = event.target.closest('button.example');
    if (!button) return;
    writeParams(EXAMPLES[button.dataset.example]);
    void update();
  });

  document.addEventListener('click', async (event) => {
    const button = event.target.closest('button.copy');
    if (!button) return;
    const text = $(`#${button.dataset.copy}`).textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents($(`#${button.dataset.copy}`));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = 'Selected';
    }
    button.classList.add('done');
    setTimeout(() => {
      button.textContent = 'Copy';
      button.classList.remove('done');
    }, 1200);
  });
}

function applyConfig(config) {
  const max = String(config.maxDimension);
  $('#sizes').replaceChildren(...(config.sizes ?? []).map((size) => el('option', { value: String(size) })));
  const presets = Object.keys(config.presets ?? {});
  $('#preset').replaceChildren(
    el('option', { value: '', text: 'none' }),
    ...presets.map((name) => el('option', { value: name, text: name })),
  );
  $('#preset').disabled = presets.length === 0;
  $('#lifetime-row').hidden = !config.signing;
  const watermarks = Object.keys(config.watermarks ?? {});
  $('#watermark').replaceChildren(
    el('option', { value: '', text: 'none' }),
    ...watermarks.map((name) => el('option', { value: name, text: name })),
  );
  $('#watermark').disabled = watermarks.length === 0;
  // The examples that name a watermark the emulator does not have are left out.
  const shown = Object.entries(EXAMPLES).filter(([, params]) => !params.watermark || watermarks.includes(params.watermark));
  $('#examples').replaceChildren(
    ...shown.map(([label]) => el('button', { type: 'button', class: 'example', 'data-example': label, text: label })),
  );
  if (config.presetsOnly) {
    for (const name of PARAM_FIELDS) if (name !== 'preset') form.elements.namedItem(name).disabled = true;
  }
  const facts = [
    ['maxDimension', max],
    ['sizes', config.sizes ? config.sizes.join(', ') : 'any'],
    ['AVIF', config.avif ? 'on' : 'off'],
    ['signed URLs', config.signing ? 'required' : 'off'],
    ['presets', presets.join(', ') || 'none'],
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
  state.config = config;
  state.browserAccept = [avif && 'image/avif', webp && 'image/webp', 'image/*', '*/*;q=0.8'].filter(Boolean).join(',');
  $('#accept').options[0].textContent =
    `this browser's <img> (${[avif && 'AVIF', webp && 'WebP'].filter(Boolean).join(', ') || 'neither AVIF nor WebP'})`;
  applyConfig(config);

  const saved = readHash();
  await loadSources(saved.source);
  writeParams(Object.keys(saved).length ? saved : DEFAULTS);
  if (saved.accept && [...$('#accept').options].some((o) => o.value === saved.accept)) $('#accept').value = saved.accept;
  window.addEventListener('resize', () => {
    const image = $('#demo img');
    if (image?.complete) void describeDemo(image);
  });
  await update();
}

start().catch((error) => {
  $('#facts').textContent = `The playground could not start: ${error.message}`;
});
