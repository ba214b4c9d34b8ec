// docs/url-contract.md's metadata tables list exactly what the origin keeps
// (metadata-fields.ts), so the page cannot drift from the code; and nothing
// listed, by its name or its namespace, speaks of place.

import { describe, expect, it } from 'vitest';
import { COPYRIGHT_EXIF, EXIF_FIELDS, IPTC_FIELDS, IPTC_FRAME, XMP_NAMESPACES } from '../../lambda/origin/image/metadata-fields';
import { documentedMetadata, documentedXmpNamespaces } from './metadata-doc';

const sorted = (names: string[]) => [...names].sort();
const ALL_EXIF = Object.values(EXIF_FIELDS).flatMap((fields) => Object.values(fields));

/** Words that name a place, a position or an address, in any case (a state, not a statement). */
const PLACE =
  /gps|geo|locat|city|country|state(?!ment)|province|region|sublocation|latitude|longitude|altitude|address|place|coverage|position|area|world|drone|ipt?c4xmpext|xmpDM/i;

describe("docs/url-contract.md's metadata tables", () => {
  it('lists the EXIF fields each mode keeps, and no other', () => {
    expect(documentedMetadata('none').exif).toEqual([]);
    expect(documentedMetadata('copyright').exif).toEqual(COPYRIGHT_EXIF);
    expect(sorted(documentedMetadata('keep').exif)).toEqual(sorted(ALL_EXIF));
  });

  it('lists the XMP namespaces and properties kept, and no other', () => {
    expect(documentedXmpNamespaces()).toEqual(XMP_NAMESPACES);
    const copyright = XMP_NAMESPACES.flatMap(({ prefix, copyright }) => copyright.map((name) => `${prefix}:${name}`));
    expect(sorted(documentedMetadata('copyright').xmp)).toEqual(sorted(copyright));
    expect(documentedMetadata('none').xmp).toEqual([]);
  });

  it('lists the IPTC-IIM datasets each mode keeps, and no other', () => {
    expect(sorted(documentedMetadata('copyright').iptc)).toEqual(sorted([...Object.keys(IPTC_FIELDS.copyright), ...IPTC_FRAME]));
    expect(sorted(documentedMetadata('keep').iptc)).toEqual(
      sorted([...Object.keys(IPTC_FIELDS.copyright), ...IPTC_FRAME, ...Object.keys(IPTC_FIELDS.keep)]),
    );
    expect(documentedMetadata('none').iptc).toEqual([]);
  });

  it('keeps nothing whose name or namespace speaks of place', () => {
    const names = [
      ...ALL_EXIF,
      ...XMP_NAMESPACES.flatMap(({ prefix, uri, copyright, keep }) => [prefix, uri, ...copyright, ...keep]),
      ...Object.values(IPTC_FIELDS).flatMap((fields) => Object.values(fields)),
    ];
    expect(names.filter((name) => PLACE.test(name))).toEqual([]);
    // The IPTC-IIM location datasets: content location code and name, city, sublocation, province, country code and name.
    const location = ['2:26', '2:27', '2:90', '2:92', '2:95', '2:100', '2:101'];
    expect(
      Object.values(IPTC_FIELDS)
        .flatMap((fields) => Object.keys(fields))
        .filter((key) => location.includes(key)),
    ).toEqual([]);
  });
});
