// The forward-only scanners that read untrusted bytes before libvips does:
// what they accept and refuse. (test/hostile/parsing.test.ts shows their
// bounds at the size limits, through the handler and the emulator.)

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../lambda/origin/image/detect';
import { jpegScans } from '../../lambda/origin/image/jpeg';
import { svgRefusal } from '../../lambda/origin/image/svg';
import { gradientJpeg } from '../support/images';
import { progressiveJpeg } from '../support/progressive-jpeg';

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>';
const sniffed = (text: string) => detectFormat(Buffer.from(text, 'latin1'));

describe('SVG sniffing', () => {
  it.each([
    ['a bare <svg>', SVG],
    ['upper case, a tab after the name', '<SVG\txmlns="http://www.w3.org/2000/svg"/>'],
    ['a byte order mark and white space', `\xef\xbb\xbf \n${SVG}`],
    ['an XML declaration', `<?xml version="1.0" encoding="UTF-8"?>\n${SVG}`],
    [
      'comments before and after a DOCTYPE',
      `<!-- a --><!-- b -- c -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "svg11.dtd">\n<!-- d -->${SVG}`,
    ],
    ['a DOCTYPE with an internal subset, as Illustrator writes', `<!DOCTYPE svg [\n\t<!ENTITY ns "http://www.w3.org/2000/svg">\n] >${SVG}`],
    ['a DOCTYPE whose subset holds a "]" before its end', `<!DOCTYPE svg [ <!ATTLIST svg x CDATA "]"> ]>${SVG}`],
  ])('%s is an SVG', (_name, text) => {
    expect(sniffed(text)).toBe('svg');
  });

  it.each([
    ['no <svg>', '<!-- just a comment -->'],
    ['<svg followed by a name character', '<svgx>'],
    ['<svg as the last byte looked at', '<svg'],
    ['HTML with an inline SVG', `<!doctype html><html>${SVG}</html>`],
    ['a comment that never ends', `<!-- ${SVG}`],
    ['text outside the comments (libxml2 refuses it)', `<!-- a --> b --> ${SVG}`],
    ['a second processing instruction', `<?xml version="1.0"?><?xml-stylesheet href="s.css"?>${SVG}`],
    ['two DOCTYPEs', `<!DOCTYPE svg><!DOCTYPE svg>${SVG}`],
    ['an XML declaration after a comment', `<!-- a --><?xml version="1.0"?>${SVG}`],
    ['<svg after the first kilobyte', `<!--${'x'.repeat(1100)}-->${SVG}`],
  ])('%s is not', (_name, text) => {
    expect(sniffed(text)).toBeUndefined();
  });
});

describe('SVG refusal', () => {
  it.each([
    ['UTF-8, any case and quotes', `<?xml version="1.0" encoding='Utf-8'?>${SVG}`],
    ['utf8, us-ascii, ascii', `<?xml encoding="utf8"?><?xml encoding="us-ascii"?><?xml encoding="ascii"?>${SVG}`],
    ['white space around "=" (XML allows it)', `<?xml version="1.0" encoding = "UTF-8" ?>${SVG}`],
    ['"encoding" inside a longer name', `<?xml version="1.0" myencoding="latin1"?>${SVG}`],
    ['"encoding" outside a declaration', `${SVG.slice(0, -2)} data-encoding="latin1"/>`],
  ])('%s is rendered', (_name, text) => {
    expect(svgRefusal(Buffer.from(text, 'latin1'))).toBeUndefined();
  });

  it.each([
    ['a non-UTF-8 encoding', `<?xml version="1.0" encoding="ISO-8859-1"?>${SVG}`, 'its encoding is not UTF-8'],
    ['an unquoted encoding', `<?xml version="1.0" encoding=utf-8?>${SVG}`, 'its encoding is not UTF-8'],
    [
      'a non-UTF-8 encoding in a later declaration',
      `<?xml version="1.0"?><!-- --><?xml encoding="UTF-16"?>${SVG}`,
      'its encoding is not UTF-8',
    ],
    ['a declaration that never closes', `${SVG}<?xml encoding="UTF-7"`, 'its encoding is not UTF-8'],
    ['an entity declaration in any case', `<!DOCTYPE svg [<!entity a "b">]>${SVG}`, 'it declares XML entities'],
    ['a data: URL behind a reference and an escape', `${SVG.slice(0, -2)}><image href="&#x64;\\61 ta:x"/></svg>`, 'it embeds a data: URL'],
  ])('%s is refused', (_name, text, why) => {
    expect(svgRefusal(Buffer.from(text, 'latin1'))).toBe(why);
  });
});

describe('JPEG scans', () => {
  it("a baseline JPEG has 1; libjpeg's progressive script for YCbCr has 10", async () => {
    const baseline = await gradientJpeg(64, 48);
    expect(jpegScans(baseline)).toBe(1);
    expect(jpegScans(await sharp(baseline).jpeg({ progressive: true }).toBuffer())).toBe(10);
  });

  it('counts the scans the hand-written progressive JPEG has, which libvips decodes', async () => {
    const jpeg = progressiveJpeg(64, 48, 3, 250);
    expect(jpegScans(jpeg)).toBe(250);
    expect(await sharp(jpeg, { failOn: 'warning' }).raw().toBuffer({ resolveWithObject: true })).toMatchObject({
      info: { width: 64, height: 48 },
    });
  });

  it('does not count scans of a thumbnail inside a segment, nor anything after the end of the image', async () => {
    const main = await gradientJpeg(64, 48);
    const thumbnail = progressiveJpeg(16, 16, 1, 20);
    // An APP1 segment that holds a whole progressive JPEG, as an EXIF thumbnail does.
    const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, 0, 0]), thumbnail]);
    app1.writeUInt16BE(app1.length - 2, 2);
    const withThumbnail = Buffer.concat([main.subarray(0, 2), app1, main.subarray(2)]);
    expect(jpegScans(withThumbnail)).toBe(1);
    expect(jpegScans(Buffer.concat([main, thumbnail]))).toBe(1);
  });

  it('reads fill bytes before markers, and counts a file cut anywhere without reading past its end', () => {
    const jpeg = progressiveJpeg(16, 16, 1, 5);
    const filled = Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xff, 0xff]), jpeg.subarray(2)]);
    expect(jpegScans(filled)).toBe(5);
    const counts = Array.from({ length: jpeg.length + 1 }, (_, cut) => jpegScans(jpeg.subarray(0, cut)));
    expect(counts.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(counts.every((count, cut) => cut === 0 || count >= counts[cut - 1]!)).toBe(true);
    expect(counts.at(-1)).toBe(5);
  });
});

describe('HEIF sniffing', () => {
  const ftyp = (brands: string) => `\0\0\0\x18ftyp${brands}`;
  it.each([
    ['an iPhone photo (heic, mif1)', ftyp('heic\0\0\0\0mif1heic'), 'heic'],
    ['a burst or sequence (hevc, msf1)', ftyp('hevc\0\0\0\0msf1hevc'), 'heic'],
    ['a plain HEIF (mif1 only), whose codec libheif finds out', ftyp('mif1\0\0\0\0mif1miaf'), 'heic'],
    ['an AVIF that lists mif1 too: AVIF first', ftyp('avif\0\0\0\0mif1avifmiaf'), 'avif'],
    ['an MP4 video', ftyp('isom\0\0\x02\0isomiso2mp41'), undefined],
  ])('%s is %s', (_name, text, format) => {
    expect(sniffed(text)).toBe(format);
  });
});
