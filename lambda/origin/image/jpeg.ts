// The scans of a JPEG, counted from its markers before libjpeg decodes it.

/**
 * Most scans a JPEG may have. libjpeg decodes every scan of a progressive
 * JPEG over the whole image, and a scan that leaves every block unchanged
 * takes about 100 bytes, so a 300 KB file of 2 600 scans costs minutes of
 * CPU. Encoders write 1 (baseline) to about 10 (libjpeg's progressive
 * script); 100 leaves room for any hand-tuned script.
 */
export const MAX_JPEG_SCANS = 100;

/** Markers that stand alone, with no length after them: a stuffed zero, TEM, RST0-7. */
const standsAlone = (marker: number) => marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7);

/** A JPEG's first image as its markers tell: its start-of-scan markers, and where its end-of-image marker ends (undefined if none). */
export interface JpegWalk {
  scans: number;
  end?: number;
}

/**
 * Walks a JPEG's segments (each skipped by its length) and the entropy-coded
 * data between them (to the next 0xFF that starts a marker) up to its first
 * end-of-image marker: forward only, so linear in the file's size. What
 * follows that marker (an Ultra HDR file's gain map) is not walked.
 */
export function walkJpeg(bytes: Buffer): JpegWalk {
  let scans = 0;
  let at = 2; // after the start-of-image marker
  for (;;) {
    at = bytes.indexOf(0xff, at);
    if (at === -1 || at + 1 >= bytes.length) return { scans };
    const marker = bytes[at + 1]!;
    if (marker === 0xd9) return { scans, end: at + 2 }; // end of image: what follows is not decoded
    if (marker === 0xff || standsAlone(marker)) {
      at += marker === 0xff ? 1 : 2; // a fill byte, or a marker inside entropy-coded data
      continue;
    }
    if (marker === 0xda) scans++;
    if (at + 4 > bytes.length) return { scans };
    at += 2 + bytes.readUInt16BE(at + 2); // the marker, then the segment its length covers
  }
}

/** The start-of-scan markers of a JPEG up to its end-of-image marker. */
export const jpegScans = (bytes: Buffer): number => walkJpeg(bytes).scans;
