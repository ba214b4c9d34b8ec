// What libde265 will really decode for one HEVC image item of a HEIF: the
// picture size its sequence parameter set (SPS, in the item's hvcC property)
// codes, and that the item's own data holds one picture and no other SPS.
// libde265 decodes a picture at the SPS's size whatever the container's ispe
// says, and libheif compares the two only once the picture is decoded: a
// 64x64 ispe over a 16384x16384 SPS costs the whole decode before the refusal.

import { HeifDamaged } from './heif-boxes';

/** The sizes an SPS codes: the picture decoded (coded) and the part shown (after its conformance window). */
export interface SpsSize {
  codedWidth: number;
  codedHeight: number;
  width: number;
  height: number;
}

/** NAL unit type of a sequence parameter set; types below 32 carry slices (VCL). */
const SPS = 33;
const FIRST_NON_VCL = 32;

/** Reads the bits of a NAL unit's payload, its emulation-prevention bytes (00 00 03) removed first. */
class BitReader {
  private bit = 0;
  private readonly bytes: Buffer;

  constructor(nal: Buffer) {
    const payload: number[] = [];
    let zeros = 0;
    for (let at = 2; at < nal.length; at++) {
      const byte = nal[at]!;
      if (zeros >= 2 && byte === 3) {
        zeros = 0;
        continue;
      }
      zeros = byte === 0 ? zeros + 1 : 0;
      payload.push(byte);
    }
    this.bytes = Buffer.from(payload);
  }

  u(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) {
      const byte = this.bytes[this.bit >> 3];
      if (byte === undefined) throw new HeifDamaged('an SPS ends inside a field');
      value = value * 2 + ((byte >> (7 - (this.bit & 7))) & 1);
      this.bit++;
    }
    return value;
  }

  /** An unsigned Exp-Golomb code, ue(v): at most 31 leading zeros, as the standard allows. */
  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) {
      if (++zeros > 31) throw new HeifDamaged('an SPS has an Exp-Golomb code of over 31 bits');
    }
    return 2 ** zeros - 1 + this.u(zeros);
  }
}

/** Skips profile_tier_level(1, maxSubLayersMinus1) (ITU-T H.265, 7.3.3). */
function skipProfileTierLevel(bits: BitReader, maxSubLayersMinus1: number): void {
  bits.u(32);
  bits.u(32);
  bits.u(32); // the general profile (88 bits) and level (8)
  const present: [number, number][] = [];
  for (let i = 0; i < maxSubLayersMinus1; i++) present.push([bits.u(1), bits.u(1)]);
  if (maxSubLayersMinus1 > 0) bits.u(2 * (8 - maxSubLayersMinus1));
  for (const [profile, level] of present) bits.u(profile * 88 + level * 8);
}

/** The picture sizes of an SPS NAL unit (ITU-T H.265, 7.3.2.2): the fields up to its conformance window. */
export function spsSize(nal: Buffer): SpsSize {
  const bits = new BitReader(nal);
  bits.u(4); // sps_video_parameter_set_id
  const maxSubLayersMinus1 = bits.u(3);
  bits.u(1);
  skipProfileTierLevel(bits, maxSubLayersMinus1);
  bits.ue(); // sps_seq_parameter_set_id
  const chroma = bits.ue();
  const separatePlanes = chroma === 3 ? bits.u(1) : 0;
  const codedWidth = bits.ue();
  const codedHeight = bits.ue();
  // The window is counted in chroma samples: 2 luma samples a side for 4:2:0 and 4:2:2 (H.265, table 6-1).
  const [subWidth, subHeight] = separatePlanes || chroma === 0 || chroma === 3 ? [1, 1] : chroma === 1 ? [2, 2] : [2, 1];
  const window = bits.u(1) ? [bits.ue(), bits.ue(), bits.ue(), bits.ue()] : [0, 0, 0, 0];
  const [left, right, top, bottom] = window as [number, number, number, number];
  return { codedWidth, codedHeight, width: codedWidth - subWidth * (left + right), height: codedHeight - subHeight * (top + bottom) };
}

/**
 * The one SPS of an hvcC box's content (ISO/IEC 14496-15, 8.3.3.1.2: 22
 * bytes of configuration, then arrays of length-prefixed NAL units), walked
 * by its lengths. None, or more than one, is refused: which one a picture
 * uses would depend on its slices.
 */
export function hvcCSps(config: Buffer): SpsSize {
  if (config.length < 23) throw new HeifDamaged('an hvcC box ends inside its configuration');
  let at = 23;
  let found: SpsSize | undefined;
  for (let arrays = config[22]!; arrays > 0; arrays--) {
    if (at + 3 > config.length) throw new HeifDamaged('an hvcC box ends inside an array');
    const type = config[at]! & 0x3f;
    let units = config.readUInt16BE(at + 1);
    at += 3;
    for (; units > 0; units--) {
      if (at + 2 > config.length) throw new HeifDamaged('an hvcC box ends inside a NAL unit');
      const length = config.readUInt16BE(at);
      if (at + 2 + length > config.length) throw new HeifDamaged('an hvcC NAL unit overruns its box');
      if (type === SPS) {
        if (found) throw new HeifDamaged('an hvcC box holds more than one SPS');
        found = spsSize(config.subarray(at + 2, at + 2 + length));
      }
      at += 2 + length;
    }
  }
  if (!found) throw new HeifDamaged('an hvcC box holds no SPS');
  return found;
}

/**
 * Checks an item's data, NAL units each after a 4-byte length (as libheif
 * reads it): one picture (a single slice starting one), and no SPS that
 * would replace hvcC's and its size. Linear in the data.
 */
export function checkHevcData(data: Buffer, item: number): void {
  let pictures = 0;
  for (let at = 0; at < data.length;) {
    if (at + 4 > data.length) throw new HeifDamaged(`item ${item}'s data ends inside a NAL unit's length`);
    const length = data.readUInt32BE(at);
    if (length < 3 || at + 4 + length > data.length)
      throw new HeifDamaged(`item ${item}'s NAL unit of ${length} bytes does not fit its data`);
    const type = (data[at + 4]! >> 1) & 0x3f;
    if (type === SPS) throw new HeifDamaged(`item ${item}'s data carries its own SPS`);
    // first_slice_segment_in_pic_flag: the first bit after a slice's 2-byte NAL header.
    if (type < FIRST_NON_VCL && data[at + 6]! & 0x80) pictures++;
    at += 4 + length;
  }
  if (pictures !== 1) throw new HeifDamaged(`item ${item}'s data holds ${pictures} pictures, not one`);
}
