// The fallback image at synth (lib/fallback-image.ts): what a deployment's
// origin is given, the packaging command run for real, and the checks a file
// meets in `cdk synth`.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageFallbackImage } from '../../lib/fallback-image';
import { jpegSize, packagingCommands } from '../../lib/image-files';
import { ImageTransformerConfigError } from '../../lib/settings';
import { progressiveJpeg } from '../support/progressive-jpeg';
import { originFunction, synth } from './synth';

let folder: string;
const file = (name: string) => join(folder, name);

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 90, g: 90, b: 90 } } });

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'fallback-props-'));
  writeFileSync(file('grey.png'), await solid(640, 480).png().toBuffer());
  writeFileSync(file('grey.jpg'), await solid(640, 480).jpeg().toBuffer());
  writeFileSync(file('grey.gif'), await solid(64, 48).gif().toBuffer());
  writeFileSync(file('deep.png'), await solid(64, 48).toColourspace('rgb16').png().toBuffer());
  writeFileSync(file('large.png'), await solid(2100, 2100).png().toBuffer());
  writeFileSync(file('heavy.png'), Buffer.alloc(1024 * 1024 + 1));
});

describe('a deployment with a fallback image', () => {
  it('gives the origin the packaged PNG or JPEG by the name its package holds it under', () => {
    const env = originFunction(synth(() => ({ fallbackImage: file('grey.png') }))).Properties.Environment.Variables;
    expect(env.FALLBACK_IMAGE).toBe('fallback/fallback.png');
    expect(packageFallbackImage(file('grey.jpg'))).toEqual({ source: file('grey.jpg'), file: 'fallback/fallback.jpg' });
    expect(packageFallbackImage(undefined)).toBeUndefined();
  });

  it('copies the file into the package folder under that name', () => {
    const outputDir = mkdtempSync(join(tmpdir(), 'origin-package-'));
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    const packaged = packageFallbackImage(file('grey.jpg'))!;
    execFileSync('sh', ['-c', packagingCommands([packaged], outputDir, quote).join(' && ')]);
    expect(readFileSync(join(outputDir, packaged.file))).toEqual(readFileSync(file('grey.jpg')));
  });
});

describe('the fallback image is checked at synth', () => {
  const rejects = (name: string, message: RegExp) => {
    expect(() => packageFallbackImage(file(name))).toThrow(ImageTransformerConfigError);
    expect(() => packageFallbackImage(file(name))).toThrow(message);
  };

  it('refuses a file that is missing, not a PNG or JPEG, 16-bit, or larger than a placeholder needs', () => {
    rejects('nope.png', /fallbackImage: cannot read .*nope\.png/);
    rejects('grey.gif', /fallbackImage must be a PNG or JPEG file\./);
    rejects('deep.png', /fallbackImage's PNG must be 8 bits per sample \(save it as 8-bit\), not "16-bit"/);
    rejects('large.png', /fallbackImage must be at most 4 megapixels, not "2100x2100"/);
    rejects('heavy.png', /fallbackImage must be at most 1 MiB, not "1048577 bytes"/);
  });

  it("reads a JPEG's size from its frame header, baseline or progressive, past its other segments", async () => {
    const withExif = await solid(300, 200)
      .jpeg()
      .withMetadata({ exif: { IFD0: { Copyright: 'x'.repeat(5000) } } })
      .toBuffer();
    expect(jpegSize(withExif)).toEqual([300, 200]);
    expect(jpegSize(progressiveJpeg(320, 240, 3, 10))).toEqual([320, 240]);
    // Cut before its frame header: no size, so no JPEG.
    expect(jpegSize(withExif.subarray(0, 100))).toBeUndefined();
  });
});
