// A progressive JPEG written by hand, to give libjpeg as many scans as a
// valid file can have: what an encoder would never write, and what each
// costs libjpeg a pass over every block of the image.

/** Writes bits most significant first, stuffing a zero after each 0xFF byte as JPEG data must. */
class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private used = 0;

  put(value: number, length: number): void {
    for (let bit = length - 1; bit >= 0; bit--) {
      this.current = (this.current << 1) | ((value >> bit) & 1);
      if (++this.used === 8) {
        this.bytes.push(this.current);
        if (this.current === 0xff) this.bytes.push(0);
        this.current = 0;
        this.used = 0;
      }
    }
  }

  /** The bytes, the last one padded with 1 bits. */
  end(): Buffer {
    if (this.used > 0) this.put(0xff >> this.used, 8 - this.used);
    return Buffer.from(this.bytes);
  }
}

function segment(marker: number, body: number[]): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, Buffer.from(body)]);
}

/** Highest bit of a coefficient libjpeg accepts in successive approximation. */
const TOP_BIT = 13;

/** Scans a valid progression can have: one DC scan, then per component and AC coefficient a first scan and 13 refinements. */
export const maxProgressiveScans = (components: 1 | 3) => 1 + components * 63 * (TOP_BIT + 1);

/**
 * A `width` x `height` progressive JPEG, grey (1 component) or YCbCr 4:4:4
 * (3), that decodes to flat mid-grey (every coefficient is zero), in `scans`
 * scans of a valid progression (no warning from libjpeg): the DC scan, then
 * for each component and each AC coefficient a first scan of its top bit and
 * refinements of each lower bit. Each AC scan is a few end-of-band runs that
 * cover every block, about 100 bytes whatever the size, so 2 600 scans of a
 * 100-megapixel image take under 1 MB.
 */
export function progressiveJpeg(width: number, height: number, components: 1 | 3, scans: number): Buffer {
  if (scans < 1 || scans > maxProgressiveScans(components)) throw new RangeError(`scans must be 1 to ${maxProgressiveScans(components)}`);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8); // per component, at 4:4:4
  const ids = Array.from({ length: components }, (_, i) => i + 1);
  const parts = [
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, [0, ...new Array<number>(64).fill(1)]), // quantisation table 0: all ones
    segment(0xc2, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, components, ...ids.flatMap((id) => [id, 0x11, 0])]),
    // DC table 0: difference category 0 only, code "0".
    segment(0xc4, [0x00, 1, ...new Array<number>(15).fill(0), 0]),
    // AC table 0: end-of-band runs EOB0..EOB14 (symbol n << 4), code n in 4 bits.
    segment(0xc4, [0x10, 0, 0, 0, 15, ...new Array<number>(12).fill(0), ...Array.from({ length: 15 }, (_, n) => n << 4)]),
  ];
  const scan = (scanIds: number[], first: number, last: number, high: number, low: number, data: Buffer) =>
    parts.push(segment(0xda, [scanIds.length, ...scanIds.flatMap((id) => [id, 0x00]), first, last, (high << 4) | low]), data);

  // The DC scan, all components interleaved: difference 0 in every block.
  const dc = new BitWriter();
  for (let i = 0; i < blocks * components; i++) dc.put(0, 1);
  scan(ids, 0, 0, 0, 0, dc.end());

  // One AC scan's data: end-of-band runs (2^n + n extra bits, at most 32767 blocks each) over every block.
  const runs = new BitWriter();
  for (let left = blocks; left > 0;) {
    const n = Math.min(14, Math.floor(Math.log2(left)));
    const run = Math.min(left, 2 ** (n + 1) - 1);
    runs.put(n, 4);
    runs.put(run - 2 ** n, n);
    left -= run;
  }
  const acData = runs.end();
  let written = 1;
  for (const id of ids) {
    for (let coefficient = 1; coefficient <= 63; coefficient++) {
      for (let bit = TOP_BIT; bit >= 0 && written < scans; bit--, written++) {
        scan([id], coefficient, coefficient, bit === TOP_BIT ? 0 : bit + 1, bit, acData);
      }
    }
  }
  parts.push(Buffer.from([0xff, 0xd9]));
  return Buffer.concat(parts);
}
