// The responsive demo: a live <img srcset sizes> built with srcset() from
// lambda/client, the candidate the browser picked, and the markup and call to copy.
// Unlike the comparison's images, this is a plain <img srcset>: the browser asks by itself.

import { srcset } from '/_playground/client.js';
import { $, el, errorBox } from './dom.js';
import { page } from './page-state.js';
import { statRow } from './stats.js';
import { base, helperCall, onEmulator, signed } from './urls.js';

/** The demo's candidates as the page fetches them, and its markup's lines (a candidate's line keeps its URL). */
const demo = { candidates: [], lines: [] };

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
    ...demo.lines.flatMap((line, i) => {
      const text = typeof line === 'string' ? line : line.text;
      const isPicked = typeof line !== 'string' && picked && onEmulator(line.url) === picked;
      return [isPicked ? el('span', { class: 'picked', text }) : text, i < demo.lines.length - 1 ? '\n' : ''];
    }),
  );
}

/** `url 640w, url 1280w` → [{ url, width }], each URL signed when the edge checks signatures. */
function signedCandidates(set) {
  const candidates = set.split(', ').map((candidate) => {
    const at = candidate.lastIndexOf(' ');
    return { url: candidate.slice(0, at), width: Number(candidate.slice(at + 1, -1)) };
  });
  return Promise.all(candidates.map(async (c) => ({ ...c, url: await signed(c.url) })));
}

/** The demo image's width and height attributes: the original's, turned with it. */
function demoDimensions(params) {
  if (!page.original?.width) return undefined;
  const rotated = params.rotate === '90' || params.rotate === '270';
  return rotated ? { width: page.original.height, height: page.original.width } : page.original;
}

function demoImage(candidates, sizes, dims) {
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
    $('#demo').replaceChildren(
      errorBox('The browser could not load a candidate', '', "See the Result panel for the service's answer to these parameters."),
    );
  });
  return image;
}

function showSnippet(key, forDemo, sizes) {
  const options = page.config.sizes ? `, { sizes: [${page.config.sizes.join(', ')}] }` : '';
  const args = helperCall(key, forDemo);
  const call = `srcset(${args.slice(0, 2).join(', ')}, [${parseWidths().join(', ')}]${args[2] ? `, ${args[2]}` : options ? ', {}' : ''}${options})`;
  $('#snippet').textContent =
    `// lambda/client from this repository: no dependencies, safe in a browser bundle\n` +
    `import { imageUrl, srcset } from './lambda/client';\n\n` +
    `img.srcset = ${call};\nimg.sizes = ${JSON.stringify(sizes)};` +
    (page.config.signing ? `\n// Signing is on: sign each candidate server-side with signedImageUrl (lambda/client/sign.ts).` : '');
}

export async function showDemo(key, params) {
  const sizes = $('#sizes-attr').value.trim() || '100vw';
  const forDemo = demoParams(params);
  let set;
  let displaySet;
  try {
    const widths = parseWidths();
    set = srcset(location.origin, key, widths, forDemo, page.config);
    displaySet = base() === location.origin ? set : srcset(base(), key, widths, forDemo, page.config);
  } catch (error) {
    $('#demo').replaceChildren(errorBox('srcset() threw', '', error.message));
    $('#demo-stats').replaceChildren();
    return;
  }
  const candidates = await signedCandidates(set);
  const shown = await signedCandidates(displaySet);
  demo.candidates = candidates;
  const dims = demoDimensions(params);
  $('#demo').replaceChildren(demoImage(candidates, sizes, dims));
  demo.lines = markupLines(shown, shown[Math.floor((shown.length - 1) / 2)].url, sizes, dims);
  renderMarkup();
  showSnippet(key, forDemo, sizes);
}

async function describeDemo(image) {
  const list = $('#demo-stats');
  const current = image.currentSrc;
  const candidate = demo.candidates.find((c) => onEmulator(c.url) === current);
  // naturalWidth of a srcset image is density-corrected; the decoded pixels are another Image's.
  const pixels = new Image();
  pixels.src = current;
  await pixels.decode().catch(() => {});
  // The browser has picked again meanwhile, or a later update has replaced this image: its stats would be stale.
  if (image.currentSrc !== current || !image.isConnected) return;
  list.replaceChildren();
  statRow(list, 'devicePixelRatio', String(window.devicePixelRatio));
  statRow(list, 'rendered at', `${image.clientWidth} CSS px wide`);
  if (candidate && pixels.naturalWidth) {
    const slot = (candidate.width * image.naturalWidth) / pixels.naturalWidth;
    statRow(list, 'sizes gives', `≈ ${Math.round(slot)} CSS px, so ≥ ${Math.round(slot * window.devicePixelRatio)} px wanted`);
  }
  statRow(list, 'picked', el('strong', { text: candidate ? `${candidate.width}w` : '?' }));
  statRow(list, 'decoded', `${pixels.naturalWidth} × ${pixels.naturalHeight} px`);
  statRow(list, 'currentSrc', el('span', { class: 'mono', text: current.replace(location.origin, '') }));
  image.dataset.picked = candidate ? String(candidate.width) : '';
  renderMarkup();
}

/** On a resize the browser may pick another candidate: the demo's stats say which. */
export function describeDemoOnResize() {
  window.addEventListener('resize', () => {
    const image = $('#demo img');
    if (image?.complete) void describeDemo(image);
  });
}
