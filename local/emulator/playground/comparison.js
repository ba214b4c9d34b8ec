// The comparison: the `original` variant beside the result of the parameters,
// each with its stats, or the service's error as the JSON it is.

import { imageUrl } from '/_playground/client.js';
import { $, el, errorBox } from './dom.js';
import { measure } from './measure.js';
import { page } from './page-state.js';
import { renderStats, statRow } from './stats.js';
import { formatBytes } from './units.js';
import { onEmulator, signed } from './urls.js';

/** Accept for the `original` variant: naming no image type, the edge keeps the source's format. */
const ORIGINAL_ACCEPT = '*/*';

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

/** The object URL each pane shows, revoked when the pane shows another. */
const objectUrls = { original: undefined, result: undefined };

/** Shows `blob` in `frame` as the image `<which>-image`; its natural size, or undefined when this browser cannot decode it. */
export function showImage(frame, which, blob) {
  if (objectUrls[which]) URL.revokeObjectURL(objectUrls[which]);
  const url = URL.createObjectURL(blob);
  objectUrls[which] = url;
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

/** The service's refusal in `frame`: its status, its code and its message. */
export async function showServiceError(frame, measurement) {
  const { code, message } = await serviceErrorBody(measurement);
  const title = `${measurement.status} ${STATUS_TEXT[measurement.status] ?? ''}`.trim();
  frame.replaceChildren(errorBox(title, code, message));
}

export async function showOriginal(key, signal) {
  const frame = $('#original-frame');
  frame.classList.add('loading');
  try {
    const url = onEmulator(await signed(imageUrl(location.origin, key, {}, page.config)));
    const m = await measure(url, ORIGINAL_ACCEPT, signal);
    let dims;
    if (m.ok) dims = await showImage(frame, 'original', m.body);
    else await showServiceError(frame, m);
    const source = page.sources.find((s) => s.key === key);
    renderStats($('#original-stats'), m, dims);
    if (source) statRow($('#original-stats'), 'source object', `${formatBytes(source.bytes)} in the source bucket`);
    page.original = { key, measurement: m, ...(dims ?? {}) };
  } finally {
    frame.classList.remove('loading');
  }
}

/** A box in fractions of the image, as format=json's `faces` and `subject` give them, drawn over the figure. */
function boxOver(box, kind) {
  const percent = (value) => `${(value * 100).toFixed(3)}%`;
  const style = `left: ${percent(box.x)}; top: ${percent(box.y)}; width: ${percent(box.width)}; height: ${percent(box.height)}`;
  return el('div', { class: `box ${kind}`, style, title: kind });
}

/** The image's shape, its placeholder in it when it has one, and the faces and the subject format=json found drawn over it. */
function metadataFigure(metadata) {
  // As wide as the frame allows at the image's aspect, no taller than the frame: the boxes' fractions are the figure's.
  const aspect = `${metadata.width} / ${metadata.height}`;
  const style = `aspect-ratio: ${aspect}; width: min(100%, calc(var(--frame-height) * ${aspect}))`;
  const figure = el('div', { class: 'figure', id: 'json-figure', style });
  if (typeof metadata.placeholder === 'string' && metadata.placeholder.startsWith('data:image/')) {
    figure.append(el('img', { src: metadata.placeholder, alt: 'placeholder from format=json', class: 'placeholder', id: 'result-image' }));
  }
  for (const face of metadata.faces ?? []) figure.append(boxOver(face, 'face'));
  if (metadata.subject) figure.append(boxOver(metadata.subject, 'subject'));
  return figure;
}

/** The result of `format=json`: its metadata below; in the frame, its placeholder (when it has one) with the boxes found. */
async function showMetadata(frame, m) {
  const metadata = JSON.parse(await m.body.text());
  $('#json').textContent = JSON.stringify(metadata, null, 2);
  const figure = metadataFigure(metadata);
  frame.replaceChildren(figure.childElementCount > 0 ? figure : el('p', { class: 'hint', text: 'Metadata only: see below.' }));
  await figure
    .querySelector('img')
    ?.decode()
    .catch(() => {});
  return { width: metadata.width, height: metadata.height, note: '(the source, as displayed)' };
}

/** The Accept header the Preview menu chooses: this browser's <img>'s, or one without AVIF (and WebP). */
export const previewAccept = () => ($('#accept').value === 'browser' ? page.browserAccept : $('#accept').value);

export async function showResult(url, signal) {
  const frame = $('#result-frame');
  frame.classList.add('loading');
  try {
    const m = await measure(url, previewAccept(), signal);
    const json = m.ok && m.contentType.startsWith('application/json');
    $('#json-card').hidden = !json;
    let dims;
    if (!m.ok) await showServiceError(frame, m);
    else if (json) dims = await showMetadata(frame, m);
    else dims = await showImage(frame, 'result', m.body);
    const compareTo = !json && page.original?.measurement.ok ? page.original.measurement.bytes : undefined;
    renderStats($('#result-stats'), m, dims, compareTo);
    frame.dataset.url = url;
  } finally {
    frame.classList.remove('loading');
  }
}

export function showHelperError(error) {
  $('#url').textContent = error.message;
  $('#url').classList.add('bad');
  $('#signed-row').hidden = true;
  $('#json-card').hidden = true;
  $('#result-frame').replaceChildren(errorBox('The URL helper refused these parameters', 'imageUrl() threw', error.message));
  $('#result-stats').replaceChildren();
}
