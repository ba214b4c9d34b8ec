// A HEIF's EXIF and XMP, as libvips gives a JPEG's: the items that describe
// the primary image (a `cdsc` reference to it), of type `Exif` or of type
// `mime` holding XMP. A file whose items say otherwise than the rules gives
// none: its picture is still served, without metadata.

import { HeifDamaged, primaryItem } from './heif-boxes';
import { heifMeta, itemData, itemTypes, referencesTo } from './heif-items';
import { MAX_METADATA_BYTES, type SourceMetadata } from './metadata';

const XMP_CONTENT_TYPE = 'application/rdf+xml';

export function heifMetadata(bytes: Buffer): SourceMetadata {
  try {
    const meta = heifMeta(bytes);
    const described = new Set(referencesTo(meta, 'cdsc', primaryItem(bytes, meta.pitm)));
    const kinds = new Map<number, 'exif' | 'xmp'>();
    for (const [item, { type, contentType }] of itemTypes(meta, described)) {
      if (type === 'Exif') kinds.set(item, 'exif');
      else if (type === 'mime' && contentType === XMP_CONTENT_TYPE) kinds.set(item, 'xmp');
    }
    const metadata: SourceMetadata = {};
    // An item over its cap would be dropped unread (metadata.ts): it is not copied either.
    const largest = Math.max(MAX_METADATA_BYTES.exif + 4, MAX_METADATA_BYTES.xmp);
    for (const [item, data] of itemData(meta, new Set(kinds.keys()), largest)) {
      // The first of each kind; an Exif item starts with the offset of its TIFF header past that field.
      if (kinds.get(item) === 'xmp') metadata.xmp ??= data;
      else if (data.length >= 4) metadata.exif ??= data.subarray(4 + data.readUInt32BE(0));
    }
    return metadata;
  } catch (error) {
    if (error instanceof HeifDamaged) return {};
    throw error;
  }
}
