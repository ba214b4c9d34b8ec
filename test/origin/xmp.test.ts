// The XMP allowlist on packets written by hand: what each mode keeps is a
// fresh packet of the listed properties alone, however the source hides a
// place among them (a typed node, an attribute inside a kept value, another
// prefix for a known namespace, a structure), and a hostile packet costs one
// linear read.

import { describe, expect, it } from 'vitest';
import { keptXmp } from '../../lambda/origin/image/xmp';

const RDF = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"';
const DC = 'xmlns:dc="http://purl.org/dc/elements/1.1/"';
const DJI = 'xmlns:drone-dji="http://www.dji.com/drone-dji/1.0/"';

/** A packet whose rdf:RDF holds `body`. */
const packet = (body: string) => `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF ${RDF}>${body}</rdf:RDF></x:xmpmeta>`;
const rights = '<dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Ann</rdf:li></rdf:Alt></dc:rights>';

describe('keptXmp', () => {
  it('keeps the listed properties, as elements or attributes, under the table prefix whatever the source declared', () => {
    const source = packet(
      `<rdf:Description rdf:about="" xmlns:e="http://purl.org/dc/elements/1.1/" xmlns:ps="http://ns.adobe.com/photoshop/1.0/" ps:Credit="Agency &amp; Co">` +
        `<e:creator><rdf:Seq><rdf:li>Ann</rdf:li></rdf:Seq></e:creator><e:title>Harbour &#x41;</e:title></rdf:Description>`,
    );
    const kept = keptXmp(source, 'keep')!;
    expect(kept).toContain('<photoshop:Credit>Agency &amp; Co</photoshop:Credit>');
    expect(kept).toContain('<dc:creator><rdf:Seq><rdf:li>Ann</rdf:li></rdf:Seq></dc:creator>');
    expect(kept).toContain('<dc:title>Harbour A</dc:title>');
    expect(keptXmp(source, 'copyright')).not.toContain('dc:title');
  });

  it('never keeps a typed node, an attribute inside a kept value, a structure or an unknown namespace', () => {
    const source = packet(
      `<drone-dji:Flight rdf:about="" ${DJI} ${DC}>${rights}<drone-dji:GpsLatitude>47.123456</drone-dji:GpsLatitude></drone-dji:Flight>` +
        `<rdf:Description rdf:about="" ${DC} ${DJI} drone-dji:AbsoluteAltitude="+123.45">` +
        `<dc:creator><rdf:Seq><rdf:li drone-dji:GpsLatitude="47.123456">Ann</rdf:li></rdf:Seq></dc:creator>` +
        `<dc:description rdf:parseType="Resource"><dc:title>Zzyzxcity</dc:title></dc:description>` +
        `<dc:subject><rdf:Bag><rdf:li><rdf:Description><dc:title>Zzyzxcity</dc:title></rdf:Description></rdf:li></rdf:Bag></dc:subject>` +
        `<dc:publisher xml:lang="en" drone-dji:RelativeAltitude="9">Press</dc:publisher>` +
        `<drone-dji:GpsLongitude>-122.654321</drone-dji:GpsLongitude>${rights}</rdf:Description>`,
    );
    for (const mode of ['keep', 'copyright'] as const) {
      const kept = keptXmp(source, mode)!;
      expect(kept).toContain('(c) Ann');
      expect(kept).not.toMatch(/47\.123456|122\.654321|123\.45|Zzyzxcity|drone|dc:creator|dc:description|dc:subject|dc:publisher/i);
    }
  });

  it('keeps nothing of a packet without a listed property, and drops one that is not plain XML', () => {
    expect(keptXmp(packet(`<rdf:Description ${DJI} drone-dji:GpsLatitude="1"/>`), 'keep')).toBeUndefined();
    expect(
      keptXmp(`<!DOCTYPE x [<!ENTITY a "b">]>${packet(`<rdf:Description ${DC}>${rights}</rdf:Description>`)}`, 'keep'),
    ).toBeUndefined();
    expect(keptXmp(packet(`<rdf:Description ${DC}>${rights}</rdf:Descriptio>`), 'keep')).toBeUndefined();
    expect(keptXmp(packet(`<rdf:Description ${DC}><dc:title>&ent;</dc:title>${rights}</rdf:Description>`), 'keep')).not.toContain('title');
  });

  it('reads hostile packets at their cap in time linear in their length', () => {
    const cap = 262_144;
    const hostile = [
      packet(`<rdf:Description ${DC}><dc:title>${'<a:b>'.repeat(cap / 12)}${'</a:b>'.repeat(cap / 12)}</dc:title></rdf:Description>`),
      packet(`<rdf:Description ${DC} ${'dc:x="y" '.repeat(cap / 9)}/>`),
      `<rdf:RDF ${' a:b="c"'.repeat(cap / 8)} x`,
      `<x:a${' '.repeat(cap)}b`,
      packet(`<rdf:Description ${DC}><dc:title>${'&amp;'.repeat(cap / 5)}</dc:title></rdf:Description>`),
      packet('<a:b xmlns:a="u">'.repeat(cap / 36) + '</a:b>'.repeat(cap / 36)),
    ];
    for (const xmp of hostile) {
      const started = process.hrtime.bigint();
      keptXmp(xmp.slice(0, cap), 'keep');
      // About 0.1 s on a loaded machine; a quadratic read of 256 KB takes minutes.
      expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(3_000);
    }
  });
});
