// The stats lists (<dl>) under the images: what a measured response was, cost and said.

import { el } from './dom.js';
import { formatBytes, ms } from './units.js';

/** Appends a term and its description to a stats list. */
export function statRow(list, term, ...content) {
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
    statRow(list, 'time', el('span', { text: `${ms(m.total)} round trip, made by the origin Lambda` }), bar, legend);
    return;
  }
  const where = m.xCache?.startsWith('Hit')
    ? 'from the edge cache'
    : m.xOrigin === 'cache-bucket'
      ? 'from the S3 cache bucket, no Lambda'
      : '';
  statRow(list, 'time', `${ms(m.total)} round trip${where ? `, ${where}` : ''}`);
  if (m.serverTiming.length) {
    statRow(list, 'when made', el('span', { class: 'mono', text: m.serverTiming.map((t) => `${t.name} ${ms(t.dur ?? 0)}`).join(' · ') }));
  }
}

/** Fills `list` with measurement `m`: its image's `dims` when shown, and its size against `compareTo` bytes when given. */
export function renderStats(list, m, dims, compareTo) {
  list.replaceChildren();
  statRow(list, 'status', String(m.status));
  if (dims) statRow(list, 'dimensions', `${dims.width} × ${dims.height} px${dims.note ? ` ${dims.note}` : ''}`);
  statRow(list, 'format', el('span', { class: 'mono', text: m.contentType || '—' }));
  const bytes = [`${formatBytes(m.bytes)} `, el('small', { text: `(${m.bytes.toLocaleString('en')} B)` })];
  if (compareTo && m.ok && compareTo > 0) {
    const change = (m.bytes - compareTo) / compareTo;
    const text = change <= 0 ? ` −${Math.round(-change * 100)}% vs original` : ` +${Math.round(change * 100)}% vs original`;
    bytes.push(el('span', { class: change <= 0 ? 'saving' : 'worse', text }));
  }
  statRow(list, 'bytes', ...bytes);
  statRow(
    list,
    'served',
    el('span', { class: 'mono', text: [m.xCache, m.xOrigin && `X-Origin: ${m.xOrigin}`].filter(Boolean).join(' · ') || '—' }),
  );
  timingRows(list, m);
  if (m.cacheControl) statRow(list, 'cache-control', el('span', { class: 'mono', text: m.cacheControl }));
  if (m.vary) statRow(list, 'vary', el('span', { class: 'mono', text: m.vary }));
  statRow(
    list,
    'headers',
    el('details', { class: 'headers' }, [
      el('summary', { text: `${m.headers.length} response headers, as this browser got them` }),
      el('pre', { class: 'mono', text: m.headers.join('\n') }),
    ]),
  );
  statRow(list, 'accept sent', el('span', { class: 'mono', text: m.accept }));
}
