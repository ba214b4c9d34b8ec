// A subject as it travels and is remembered: JSON, with the mask's bytes
// deflated and in base64 (a 320x200 mask is 64 KB raw, a few KB packed). A
// record is the origin's own, but anyone who can write to the cache bucket can
// plant one: unpacking checks every field and inflates no more than the mask
// it names, so a planted record costs what a real one does, or is ignored.

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { liesInImage } from './findings';
import { SUBJECT_MASK_SIDE, type Subject, type SubjectBox } from './subject';

export interface PackedSubject {
  box: SubjectBox | null;
  mask: { width: number; height: number; deflated: string };
}

export function packSubject({ box, mask }: Subject): PackedSubject {
  return { box, mask: { width: mask.width, height: mask.height, deflated: deflateRawSync(mask.data).toString('base64') } };
}

const isSide = (value: unknown): value is number =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= SUBJECT_MASK_SIDE;

/** Whether `value` has the shape packSubject writes: a box in the image (or null), a mask's sides, its bytes as a string. */
export function isPackedSubject(value: unknown): value is PackedSubject {
  const { box, mask } = (value ?? {}) as PackedSubject;
  return (box === null || liesInImage(box)) && isSide(mask?.width) && isSide(mask?.height) && typeof mask.deflated === 'string';
}

/** The subject `value` holds, or undefined when it is not one packSubject could have written. */
export function unpackSubject(value: unknown): Subject | undefined {
  if (!isPackedSubject(value)) return undefined;
  const { box, mask } = value;
  const length = mask.width * mask.height;
  try {
    const data = inflateRawSync(Buffer.from(mask.deflated, 'base64'), { maxOutputLength: length });
    if (data.length !== length) return undefined;
    return { box, mask: { width: mask.width, height: mask.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) } };
  } catch {
    return undefined;
  }
}
