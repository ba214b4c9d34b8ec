// The subject model and its memory: the box around what stands out of a real
// photo (fetched from PyPI at test time, test/support/face-photos.ts), the
// mask's packing for the records, a planted record refused, and format=json's
// `subject` through the real handler on LocalStack, remembered per source version.

import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { deflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { subjectKey, variantKey } from '../../lambda/origin/cache-keys';
import { faceSearchCopy } from '../../lambda/origin/image/faces';
import { HttpError } from '../../lambda/origin/errors';
import { wholeVcpus } from '../../lambda/origin/sharp-settings';
import {
  findSubject,
  loadSubjectModel,
  subjectBox,
  subjectModelLoaded,
  SUBJECT_MASK_SIDE,
  type SubjectBox,
} from '../../lambda/origin/image/subject';
import { isPackedSubject, packSubject, unpackSubject } from '../../lambda/origin/image/subject-record';
import { SUBJECT_MODEL_ENV } from '../../lambda/origin/image/subject-model';
import { facePhotos } from '../support/face-photos';
import { createTestOrigin, type TestOrigin } from '../support/origin';

const photos = facePhotos();

/** Where the cup is in coffee.png, read off the photo by eye (saucer and spoon included). */
const CUP: SubjectBox = { x: 0.12, y: 0.02, width: 0.7, height: 0.96 };

/** The share of `inner` that lies in `outer`. */
function within(inner: SubjectBox, outer: SubjectBox): number {
  const across = Math.max(0, Math.min(inner.x + inner.width, outer.x + outer.width) - Math.max(inner.x, outer.x));
  const down = Math.max(0, Math.min(inner.y + inner.height, outer.y + outer.height) - Math.max(inner.y, outer.y));
  return (across * down) / (inner.width * inner.height);
}

describe('subjectBox', () => {
  const mask = (width: number, height: number, fill: (x: number, y: number) => number) => ({
    width,
    height,
    data: Uint8Array.from({ length: width * height }, (_, i) => fill(i % width, Math.floor(i / width))),
  });

  it('boxes the parts that stand out, and drops specks', () => {
    const found = mask(100, 50, (x, y) => ((x >= 60 && x < 90 && y >= 10 && y < 40) || (x === 5 && y === 5) ? 200 : 10));
    expect(subjectBox(found)).toEqual({ x: 0.6, y: 0.2, width: 0.3, height: 0.6 });
  });

  it('takes a faint subject that stands out of a faint map, and finds none in a flat one', () => {
    const faint = mask(100, 100, (x, y) => (x >= 10 && x < 20 && y >= 70 && y < 80 ? 90 : 5));
    expect(subjectBox(faint)).toEqual({ x: 0.1, y: 0.7, width: 0.1, height: 0.1 });
    expect(subjectBox(mask(100, 100, () => 40))).toBeNull();
  });
});

describe('packed subjects', () => {
  const subject = {
    box: { x: 0.1, y: 0.2, width: 0.3, height: 0.4 },
    mask: { width: 4, height: 2, data: Uint8Array.from([0, 1, 2, 3, 250, 251, 252, 255]) },
  };

  it('travel and are remembered as JSON, whole', () => {
    expect(unpackSubject(JSON.parse(JSON.stringify(packSubject(subject))))).toEqual(subject);
  });

  it('refuse what packSubject could not have written: a box out of the image, a mask too large, bytes that are not the mask', () => {
    const packed = packSubject(subject);
    expect(unpackSubject({ ...packed, box: { x: 0.9, y: 0, width: 0.5, height: 1 } })).toBeUndefined();
    expect(unpackSubject({ ...packed, mask: { ...packed.mask, width: SUBJECT_MASK_SIDE + 1 } })).toBeUndefined();
    expect(unpackSubject({ ...packed, mask: { ...packed.mask, height: 3 } })).toBeUndefined();
    // A deflate bomb: 100 MB of zeros named as a 4x2 mask is inflated no further than 8 bytes.
    const bomb = deflateRawSync(Buffer.alloc(100 * 1024 * 1024)).toString('base64');
    expect(unpackSubject({ ...packed, mask: { ...packed.mask, deflated: bomb } })).toBeUndefined();
    expect(unpackSubject(null)).toBeUndefined();
  });

  it('are checked in the handler by their shape alone: the bytes are inflated, and refused, where they are used', () => {
    const packed = packSubject(subject);
    expect(isPackedSubject(packed)).toBe(true);
    expect(isPackedSubject({ ...packed, box: null })).toBe(true);
    expect(isPackedSubject({ ...packed, mask: { ...packed.mask, deflated: 'not the mask' } })).toBe(true);
    expect(isPackedSubject({ ...packed, box: { x: 0.9, y: 0, width: 0.5, height: 1 } })).toBe(false);
    expect(isPackedSubject({ ...packed, mask: { ...packed.mask, deflated: 3 } })).toBe(false);
    expect(isPackedSubject(undefined)).toBe(false);
  });
});

describe("the model's threads", () => {
  it('are the whole vCPUs the memory buys, as libvips has: one at the default 2048 MB, two from 3538 MB', () => {
    const at = (memory?: string) => wholeVcpus({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: memory });
    expect([at(), at('128'), at('2048'), at('3537'), at('3538'), at('10240')]).toEqual([1, 1, 1, 1, 2, 5]);
  });
});

describe('a missing model', () => {
  it('fails with what is missing and how to put it there', async () => {
    // Before any test of this file loads the model (this process would keep it).
    expect(subjectModelLoaded()).toBe(false);
    const set = process.env[SUBJECT_MODEL_ENV];
    process.env[SUBJECT_MODEL_ENV] = '/nowhere/u2netp.onnx';
    try {
      const failure = await loadSubjectModel().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(HttpError);
      expect((failure as HttpError).status).toBe(500);
      expect((failure as HttpError).message).toBe('The subject model is not installed on this origin.');
      expect((failure as HttpError).detail).toMatch(
        /^No subject model at \/nowhere\/u2netp\.onnx\..*lib\/subject-model\.ts <folder>.*SUBJECT_MODEL_FILE/,
      );
      expect(subjectModelLoaded(), 'a failed load is tried again').toBe(false);
    } finally {
      process.env[SUBJECT_MODEL_ENV] = set;
    }
  });
});

describe.skipIf(!photos)('findSubject on a real photo', () => {
  it('boxes the cup of coffee.png, and its mask is opaque on the cup and clear at the corners', async () => {
    const copy = await faceSearchCopy(sharp(photos!.read('coffee.png')));
    const { box, mask } = await findSubject(copy);
    expect(box).not.toBeNull();
    expect(within(box!, CUP), 'the box lies on the cup').toBeGreaterThan(0.9);
    expect(box!.width * box!.height, 'and covers most of it').toBeGreaterThan(0.5 * CUP.width * CUP.height);
    expect(Math.max(mask.width, mask.height)).toBe(SUBJECT_MASK_SIDE);
    expect(mask.width / mask.height).toBeCloseTo(copy.width / copy.height, 1);
    const at = (x: number, y: number) => mask.data[Math.floor(y * mask.height) * mask.width + Math.floor(x * mask.width)]!;
    expect(at(0.5, 0.45)).toBeGreaterThan(200);
    expect(Math.max(at(0.02, 0.98), at(0.98, 0.98), at(0.98, 0.02))).toBeLessThan(30);
  });
});

describe.skipIf(!photos)('format=json subject, remembered', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await createTestOrigin('subject');
    await origin.putSource('coffee.png', photos!.read('coffee.png'));
    await origin.putSource('planted.png', photos!.read('coffee.png'));
  }, 120_000);

  const describeSource = async (key: string) => {
    const response = await origin.request(`/${key}/format=json`);
    expect(response.status).toBe(200);
    return JSON.parse(response.body.toString()) as { subject: SubjectBox | null };
  };
  const record = async (key: string) => {
    const object = await origin.s3.send(new GetObjectCommand({ Bucket: origin.cacheBucket, Key: subjectKey(key, false) }));
    return JSON.parse(await object.Body!.transformToString()) as { etag: string; subject: ReturnType<typeof packSubject> };
  };

  it('answers the subject box, and keeps the record for the source version', async () => {
    const { subject } = await describeSource('coffee.png');
    expect(within(subject!, CUP)).toBeGreaterThan(0.9);
    const kept = await record('coffee.png');
    expect(kept.subject.box).toEqual(subject);
    expect(unpackSubject(kept.subject)?.mask.width).toBe(SUBJECT_MASK_SIDE);
  });

  it('reads a valid record instead of searching, and searches again past a planted one out of bounds', async () => {
    await describeSource('planted.png');
    const kept = await record('planted.png');
    const elsewhere = { ...kept, subject: { ...kept.subject, box: { x: 0, y: 0, width: 0.1, height: 0.1 } } };
    const put = (body: unknown) =>
      origin.s3.send(
        new PutObjectCommand({ Bucket: origin.cacheBucket, Key: subjectKey('planted.png', false), Body: JSON.stringify(body) }),
      );
    await put(elsewhere);
    // json has one variant a source: deleted, the next request is a miss, which reads the record rather than the model.
    const forget = () =>
      origin.s3.send(new DeleteObjectCommand({ Bucket: origin.cacheBucket, Key: variantKey('planted.png', { format: 'json' }) }));
    await forget();
    expect((await describeSource('planted.png')).subject).toEqual({ x: 0, y: 0, width: 0.1, height: 0.1 });
    await put({ ...kept, subject: { ...kept.subject, box: { x: 0.9, y: 0, width: 0.5, height: 1 } } });
    await forget();
    const searched = await describeSource('planted.png');
    expect(within(searched.subject!, CUP)).toBeGreaterThan(0.9);
    // Bytes that are not the mask pass the handler (it does not inflate them) and are refused where they are used.
    const elsewhereBomb = {
      ...elsewhere.subject,
      mask: { ...elsewhere.subject.mask, deflated: deflateRawSync(Buffer.alloc(1 << 20)).toString('base64') },
    };
    await put({ ...kept, subject: elsewhereBomb });
    await forget();
    expect(within((await describeSource('planted.png')).subject!, CUP)).toBeGreaterThan(0.9);
  });
});
