// The SVG policy (origin env SVG_POLICY): `refuse` (the default) answers 415
// like any type the service does not read; `rasterize` renders the SVG with
// librsvg to a raster (PNG family by default, never SVG), and the SVG can
// reach nothing outside itself: no http fetch, no local file (absolute,
// file://, relative or via xml:base), no script, no data: URL (an embedded
// image would be decoded past MAX_INPUT_PIXELS), no entity declarations, no
// more than MAX_SVG_BYTES. Each claim is shown by a test that would see the
// breach: a local HTTP server that counts requests, and local files whose
// content would show in the output pixels (with a control rendering, by
// sharp directly, that proves the same SVG shows an image it can reach).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../lambda/origin/config';
import { MAX_SVG_BYTES } from '../../lambda/origin/image/input';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import { layeredSvg, square, throughHandler, type Expected } from './support';

const RED = { r: 255, g: 0, b: 0 };
const BLUE = { r: 0, g: 0, b: 255 };

const UNSUPPORTED: Expected = { status: 415, code: 'unsupported_media_type' };
const DAMAGED: Expected = { status: 422, code: 'undecodable_image' };
const OK: Expected = { status: 200 };

let refuse: TestOrigin;
let rasterize: TestOrigin;
let folder: string;
let server: Server;
let serverUrl: string;
/** Every request the local HTTP server received: none may come from an SVG. */
const hits: string[] = [];
let redPng: Buffer;

beforeAll(async () => {
  redPng = await sharp({ create: { width: 40, height: 40, channels: 3, background: RED } })
    .png()
    .toBuffer();
  folder = await mkdtemp(join(tmpdir(), 'hostile-svg-'));
  await Promise.all([
    writeFile(join(folder, 'red.png'), redPng),
    writeFile(join(folder, 'secret.txt'), 'TOP SECRET TEXT THAT MUST NEVER BE DRAWN'),
    writeFile(join(folder, 'style.css'), 'rect { fill: #ff0000 !important }'),
    writeFile(
      join(folder, 'defs.svg'),
      '<svg xmlns="http://www.w3.org/2000/svg"><rect id="r" width="40" height="40" fill="#ff0000"/></svg>',
    ),
  ]);
  server = createServer((request, response) => {
    hits.push(request.url ?? '');
    const body = request.url?.endsWith('.png') ? redPng : Buffer.from('rect { fill: #ff0000 }');
    response.writeHead(200, { 'content-type': request.url?.endsWith('.png') ? 'image/png' : 'text/css' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The counter works: a request that does reach the server is seen.
  await (await fetch(`${serverUrl}/ping`)).arrayBuffer();
  expect(hits.splice(0)).toEqual(['/ping']);
  [refuse, rasterize] = await Promise.all([createTestOrigin('svg refuse'), createTestOrigin('svg rasterize', { svgPolicy: 'rasterize' })]);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(folder, { recursive: true, force: true });
});

/** A 40x40 SVG: a blue square (id `r`) under `inner`. */
let sequence = 0;

/** Puts `svg` in both origins' source buckets under a fresh key; returns the key's path. */
async function source(svg: string | Buffer, name = 'drawing.svg'): Promise<string> {
  const key = `svg/${++sequence}/${name}`;
  await Promise.all([refuse.putSource(key, svg, 'image/svg+xml'), rasterize.putSource(key, svg, 'image/svg+xml')]);
  return '/' + key;
}

/** Share of the pixels of a PNG/JPEG/WebP body that are close to `colour`. */
async function share(body: Buffer, colour: { r: number; g: number; b: number }): Promise<number> {
  const { data, info } = await sharp(body).flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let near = 0;
  for (let i = 0; i < data.length; i += info.channels) {
    if (Math.abs(data[i]! - colour.r) < 40 && Math.abs(data[i + 1]! - colour.g) < 40 && Math.abs(data[i + 2]! - colour.b) < 40) near++;
  }
  return near / (data.length / info.channels);
}

async function rasterised(path: string, ops = 'original', expected: Expected = OK): Promise<Buffer> {
  const response = await throughHandler(rasterize, `${path}/${ops}`, expected);
  if (expected.status === 200) {
    // Never SVG, whatever the request: the service serves rasters only.
    expect(response.headers['content-type']).toMatch(/^(image\/(png|jpeg|webp|avif|gif)|application\/json)$/);
    expect(response.body.subarray(0, 64).toString('latin1')).not.toMatch(/<svg|<\?xml/i);
  }
  return response.body;
}

// ------------------------------------------------------------------ the setting

describe('SVG_POLICY', () => {
  it('is read from the environment: refuse by default, rasterize on request, anything else a startup error', () => {
    const base = { SOURCE_BUCKET: 's', CACHE_BUCKET: 'c' };
    expect(readConfig(base).svgPolicy).toBe('refuse');
    expect(readConfig({ ...base, SVG_POLICY: '' }).svgPolicy).toBe('refuse');
    expect(readConfig({ ...base, SVG_POLICY: 'rasterize' }).svgPolicy).toBe('rasterize');
    expect(() => readConfig({ ...base, SVG_POLICY: 'allow' })).toThrow('SVG_POLICY must be one of refuse, rasterize, not "allow"');
    expect(() => readConfig({ ...base, SVG_POLICY: 'RASTERIZE' })).toThrow('SVG_POLICY');
  });

  const SPELLINGS: [string, string | Buffer][] = [
    ['a bare <svg>', square()],
    [
      'an XML declaration, a comment and a public DOCTYPE',
      square(
        '',
        '<?xml version="1.0" encoding="UTF-8"?>\n<!-- drawn by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n',
      ),
    ],
    ['a UTF-8 byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(square())])],
    ['text that merely says "metadata:"', square('<desc>metadata: none</desc><metadata>data-free</metadata>')],
  ];

  it.each(SPELLINGS)('refuse: %s is a 415; rasterize: the same file is a PNG', async (_name, svg) => {
    const path = await source(svg);
    for (const ops of ['original', 'width=20', 'format=json']) await throughHandler(refuse, `${path}/${ops}`, UNSUPPORTED);
    const png = await rasterised(path);
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 40, height: 40 });
    expect(await share(png, BLUE)).toBe(1);
  });

  it('refuse and rasterize: an SVG whose DOCTYPE declares entities (as Illustrator writes) is a 415 saying why', async () => {
    const path = await source(
      square(
        '',
        '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [\n\t<!ENTITY ns_svg "http://www.w3.org/2000/svg">\n]>\n',
      ),
    );
    await throughHandler(refuse, `${path}/original`, UNSUPPORTED);
    const response = await throughHandler(rasterize, `${path}/original`, UNSUPPORTED);
    expect(response.json().message).toBe('This SVG is not rendered: it declares XML entities.');
  });
});

// ------------------------------------------------------------------ rasterize: what is served

describe('rasterize: the SVG becomes a raster by the usual format rules', () => {
  let path: string;
  beforeAll(async () => {
    // Left half red, right half transparent.
    path = await source(
      '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="20" height="20" fill="#ff0000"/></svg>',
    );
  });

  it('no format: PNG with alpha, at the size the SVG declares', async () => {
    const png = await rasterised(path);
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 40, height: 20, hasAlpha: true });
    const { data } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 4)]).toEqual([255, 0, 0, 255]);
    expect(data[(10 * 40 + 35) * 4 + 3]).toBe(0); // transparent on the right
  });

  it.each([
    ['format=jpeg', 'jpeg', false],
    ['format=webp', 'webp', true],
    ['format=avif', 'heif', true],
    ['format=gif', 'gif', true],
  ] as const)('%s', async (ops, format, hasAlpha) => {
    const body = await rasterised(path, ops);
    expect(await sharp(body).metadata()).toMatchObject({ format, width: 40, height: 20, hasAlpha });
  });

  it('width=10 scales it; the transparent half becomes white in JPEG', async () => {
    expect(await sharp(await rasterised(path, 'width=10')).metadata()).toMatchObject({ width: 10, height: 5 });
    expect(await share(await rasterised(path, 'format=jpeg'), { r: 255, g: 255, b: 255 })).toBeGreaterThan(0.45);
  });

  it('format=json describes it as svg', async () => {
    const body = JSON.parse((await rasterised(path, 'format=json')).toString('utf8'));
    expect(body).toMatchObject({ format: 'svg', width: 40, height: 20, hasAlpha: true, frames: 1 });
  });
});

// ------------------------------------------------------------------ rasterize: nothing outside the file

describe('rasterize: no network', () => {
  const REFERENCES: [string, (url: string) => string, Expected][] = [
    ['<image href>', (url) => square(`<image href="${url}/image.png" width="40" height="40"/>`), OK],
    ['<image xlink:href>', (url) => square(`<image xlink:href="${url}/xlink.png" width="40" height="40"/>`), OK],
    [
      'a protocol-relative <image href>',
      (url) => square(`<image href="${url.replace('http:', '')}/relative.png" width="40" height="40"/>`),
      OK,
    ],
    ['<use href> of another document', (url) => square(`<use href="${url}/defs.svg#r"/>`), OK],
    [
      '<feImage href>',
      (url) => square(`<filter id="f"><feImage href="${url}/fe.png"/></filter><rect width="40" height="40" filter="url(#f)"/>`),
      OK,
    ],
    ['a fill of url(http...)', (url) => square(`<rect width="40" height="40" fill="url(${url}/paint.svg#g)"/>`), OK],
    ['CSS @import', (url) => square(`<style>@import url("${url}/import.css");</style>`), OK],
    [
      'CSS @font-face',
      (url) => square(`<style>@font-face { font-family: x; src: url("${url}/font.woff2") }</style><text font-family="x" y="20">x</text>`),
      OK,
    ],
    ['an external DTD', (url) => square('', `<?xml version="1.0"?><!DOCTYPE svg SYSTEM "${url}/svg.dtd">`), OK],
    [
      'an external entity',
      (url) => square('<text y="20">&ext;</text>', `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY ext SYSTEM "${url}/entity.txt">]>`),
      UNSUPPORTED,
    ],
    // Not even recognised as SVG (the sniffer allows no processing instruction before <svg>).
    [
      'an <?xml-stylesheet?>',
      (url) => square('', `<?xml version="1.0"?><?xml-stylesheet type="text/css" href="${url}/pi.css"?>`),
      UNSUPPORTED,
    ],
    ['an XInclude', (url) => square(`<xi:include href="${url}/include.svg"/>`), OK],
    [
      'a <script> fetch and an onload handler',
      (url) => square(`<script>fetch("${url}/script")</script><rect width="1" height="1" onload="fetch('${url}/onload')"/>`),
      OK,
    ],
    [
      'an HTML <iframe> in a <foreignObject>',
      (url) =>
        square(
          `<foreignObject width="40" height="40"><iframe xmlns="http://www.w3.org/1999/xhtml" src="${url}/iframe"></iframe></foreignObject>`,
        ),
      OK,
    ],
  ];

  it.each(REFERENCES)('%s: never fetched, and the drawing is only its own', async (_name, make, expected) => {
    const path = await source(make(serverUrl));
    const body = await rasterised(path, 'original', expected);
    if (expected.status === 200) expect(await share(body, RED)).toBe(0);
  });

  it('the local server was never asked for anything', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hits).toEqual([]);
  });
});

describe('rasterize: no local file', () => {
  it('control (sharp directly, no service): an <image> librsvg can reach is drawn, so a file that were read would show', async () => {
    const reachable = square(`<image href="data:image/png;base64,${redPng.toString('base64')}" width="40" height="40"/>`);
    expect(await share(await sharp(Buffer.from(reachable)).png().toBuffer(), RED)).toBe(1);
  });

  it.each([
    ['file:// URL', () => `file://${folder}/red.png`],
    ['absolute path', () => `${folder}/red.png`],
    ['relative path, from the working directory', () => 'red.png'],
    ['relative path with ..', () => `../${folder.split('/').pop()}/red.png`],
    ['relative path under an xml:base of the folder', () => 'red.png" xml:base="file://' + folder + '/'],
  ])('an <image> by %s is not drawn', async (_name, href) => {
    const path = await source(
      square(`<image href="${href()}" width="40" height="40"/><image xlink:href="${href()}" width="40" height="40"/>`),
    );
    const cwd = process.cwd();
    process.chdir(folder); // so the relative reference names a file that exists
    try {
      expect(await share(await rasterised(path), RED)).toBe(0);
    } finally {
      process.chdir(cwd);
    }
  });

  it.each([
    ['<use> of a local SVG', () => square(`<use href="file://${folder}/defs.svg#r"/>`)],
    [
      '<feImage> of a local PNG',
      () => square(`<filter id="f"><feImage href="file://${folder}/red.png"/></filter><rect width="40" height="40" filter="url(#f)"/>`),
    ],
    ['CSS @import of a local stylesheet', () => square(`<style>@import url("file://${folder}/style.css");</style>`)],
    ['an XInclude of a local SVG', () => square(`<xi:include href="file://${folder}/defs.svg"/>`)],
  ])('%s is not applied', async (_name, make) => {
    expect(await share(await rasterised(await source(make())), BLUE)).toBe(1);
  });

  it.each([
    ['an XInclude of a local text file', () => `file://${folder}/secret.txt`],
    ['an XInclude of /etc/passwd', () => 'file:///etc/passwd'],
  ])('%s draws nothing: the output is the same as without it', async (_name, href) => {
    const text = (inner: string) => square(`<text x="2" y="20" font-size="8" fill="#ff0000">${inner}</text>`);
    const without = await rasterised(await source(text('')));
    const withInclude = await rasterised(await source(text(`<xi:include href="${href()}" parse="text"/>`)));
    const pixels = async (png: Buffer) => (await sharp(png).raw().toBuffer()).toString('base64');
    expect(await pixels(withInclude)).toBe(await pixels(without));
  });

  it('an external entity naming a local file is refused before parsing: 415', async () => {
    const path = await source(
      square(
        '<text y="20" fill="#ff0000">&secret;</text>',
        `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY secret SYSTEM "file://${folder}/secret.txt">]>`,
      ),
    );
    await rasterised(path, 'original', UNSUPPORTED);
  });
});

describe('rasterize: no script', () => {
  it('a <script> that would paint the square red does not run', async () => {
    const path = await source(
      square(
        `<script type="text/javascript">document.getElementById('r').setAttribute('fill', '#ff0000');</script>` +
          `<rect width="40" height="40" fill="none" onload="this.setAttribute('fill', '#ff0000')"/>`,
      ),
    );
    expect(await share(await rasterised(path), BLUE)).toBe(1);
  });
});

describe('rasterize: no data: URL, however it is spelled', () => {
  // librsvg decodes a data: image in full, whatever its pixels: MAX_INPUT_PIXELS sees only the
  // SVG's own size. A PNG bomb of 20000x20000 in a 65 KB SVG took 3.5 GB and 50 s here.
  const png = () => redPng.toString('base64');
  const SPELLINGS: [string, () => string][] = [
    ['an <image href="data:...">', () => square(`<image href="data:image/png;base64,${png()}" width="40" height="40"/>`)],
    ['upper case, after spaces', () => square(`<image href="  DATA:image/png;base64,${png()}" width="40" height="40"/>`)],
    ['an XML decimal character reference', () => square(`<image href="&#100;ata:image/png;base64,${png()}" width="40" height="40"/>`)],
    [
      'an XML hex character reference',
      () => square(`<image xlink:href="&#x64;&#x61;ta:image/png;base64,${png()}" width="40" height="40"/>`),
    ],
    ['a tab inside the scheme', () => square(`<image href="da&#9;ta:image/png;base64,${png()}" width="40" height="40"/>`)],
    ['a CSS escape in a stylesheet', () => square(`<style>rect { fill: url("\\64 ata:image/svg+xml,<svg/>#x") }</style>`)],
    [
      'a <use> of an embedded document',
      () => square(`<use href="data:image/svg+xml;base64,${Buffer.from(square()).toString('base64')}#r"/>`),
    ],
    ['an XInclude', () => square('<xi:include href="data:text/plain,hello" parse="text"/>')],
    ['inside a CDATA stylesheet', () => square('<style><![CDATA[ @import url(data:text/css,rect{fill:red}); ]]></style>')],
  ];

  it.each(SPELLINGS)('%s is a quick 415 saying why', async (_name, make) => {
    const response = await throughHandler(rasterize, `${await source(make())}/original`, UNSUPPORTED);
    expect(response.json().message).toBe('This SVG is not rendered: it embeds a data: URL.');
  });

  it('an encoding other than UTF-8, in which "data:" could be spelled unseen, is a 415', async () => {
    const response = await throughHandler(
      rasterize,
      `${await source(square('', '<?xml version="1.0" encoding="UTF-7"?>'))}/original`,
      UNSUPPORTED,
    );
    expect(response.json().message).toBe('This SVG is not rendered: its encoding is not UTF-8.');
    await rasterised(await source(square('', '<?xml version="1.0" encoding="utf-8"?>')));
  });
});

// ------------------------------------------------------------------ rasterize: bounded

function billionLaughs(levels: number): string {
  let entities = '<!ENTITY l0 "lol">';
  for (let i = 1; i <= levels; i++) entities += `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`;
  return square(`<text y="20">&l${levels};</text>`, `<?xml version="1.0"?><!DOCTYPE svg [${entities}]>`);
}

/** `levels` nested groups of 10 `<use>` of the level below: 10^levels rectangles from a kilobyte. */
describe('rasterize: bounded work', () => {
  it('a billion laughs (10^9 expansion from 700 bytes) is a quick 415, refused before any parsing', async () => {
    const path = await source(billionLaughs(9));
    const start = performance.now();
    await rasterised(path, 'original', UNSUPPORTED);
    expect(performance.now() - start).toBeLessThan(1_000);
  });

  it('a quadratic blow-up (an 800-byte entity used 100 000 times: 80 MB from 500 KB) is a quick 415', async () => {
    const svg = square(
      `<desc>${'&big;'.repeat(100_000)}</desc>`,
      `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY big "${'A'.repeat(800)}">]>`,
    );
    expect(svg.length).toBeLessThan(MAX_SVG_BYTES);
    const start = performance.now();
    await rasterised(await source(svg), 'original', UNSUPPORTED);
    expect(performance.now() - start).toBeLessThan(1_000);
  });

  it('defence in depth (sharp directly, no service): libxml2 itself refuses both expansions, quickly', async () => {
    for (const svg of [
      billionLaughs(9),
      square(`<desc>${'&big;'.repeat(100_000)}</desc>`, `<!DOCTYPE svg [<!ENTITY big "${'A'.repeat(800)}">]>`),
    ]) {
      const start = performance.now();
      await expect(sharp(Buffer.from(svg)).png().toBuffer()).rejects.toThrow(/amplification/);
      expect(performance.now() - start).toBeLessThan(1_000);
    }
  });

  it('an SVG whose <svg> element starts after its first kilobyte is not recognised as SVG: 415', async () => {
    // The type is sniffed from the first 1024 bytes, as libvips does; a long comment hides it.
    await rasterised(await source(square('', `<!-- ${'x'.repeat(2000)} -->\n`)), 'original', UNSUPPORTED);
  });

  it('nesting deeper than libxml2 allows (300 groups) is a 422', async () => {
    await rasterised(await source(square(`${'<g>'.repeat(300)}${'</g>'.repeat(300)}`)), 'original', DAMAGED);
  });

  it(`an SVG of ${MAX_SVG_BYTES} bytes is drawn; one byte more is a 413 naming the SVG limit`, async () => {
    const padded = (bytes: number) => {
      const svg = square('<!---->');
      return svg.replace('<!---->', `<!--${'x'.repeat(bytes - svg.length)}-->`);
    };
    expect(Buffer.byteLength(padded(MAX_SVG_BYTES))).toBe(MAX_SVG_BYTES);
    await rasterised(await source(padded(MAX_SVG_BYTES)));
    const response = await throughHandler(rasterize, `${await source(padded(MAX_SVG_BYTES + 1))}/original`, {
      status: 413,
      code: 'source_too_large',
    });
    expect(response.json().message).toContain(`${MAX_SVG_BYTES}-byte limit for SVG`);
  });

  it.each([
    ['20000x20000 (over MAX_INPUT_PIXELS)', '20000', '20000'],
    ["40000x1 (over the renderer's 32767 a side)", '40000', '1'],
  ])('a declared size of %s is a 413, before anything is drawn', async (_name, width, height) => {
    const path = await source(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%"/></svg>`,
    );
    const start = performance.now();
    await rasterised(path, 'width=100', { status: 413, code: 'too_many_pixels' });
    expect(performance.now() - start).toBeLessThan(1_000);
  });

  it('a <use> bomb (10^5 translucent layers from 1 KB) answers 504 within the time budget, and the origin serves on', async () => {
    // librsvg caps <use> expansion (about 500 000 references), but below the cap the drawing
    // costs seconds of CPU; the time budget bounds the answer, not the CPU. Each layer blends
    // 200x200 pixels so that even a fast machine draws for far longer than the 1 s budget.
    const hurried = await createTestOrigin('svg budget', { svgPolicy: 'rasterize', timeBudgetMs: 1_000 });
    await hurried.putSource('bomb.svg', layeredSvg(5, 200), 'image/svg+xml');
    await hurried.putSource('plain.svg', square(), 'image/svg+xml');
    const start = performance.now();
    await throughHandler(hurried, '/bomb.svg/original', { status: 504, code: 'timeout' });
    expect(performance.now() - start).toBeLessThan(2_500);
    const next = await hurried.request('/plain.svg/width=20');
    expect(next.status).toBe(200);
  });
});
