// Watermarks at synth (lib/watermarks.ts): the checks a deployment meets in
// `cdk synth`, what the edge's store and the origin's environment receive, and
// the packaging commands, run for real.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { ImageTransformerConfigError } from '../../lib/settings';
import { packagingCommands } from '../../lib/image-files';
import { packageWatermarks, watermarkFiles, type PackagedWatermark } from '../../lib/watermarks';
import { watermarkVersion, DEFAULT_PLACEMENT } from '../../lambda/origin/watermarks';
import { only, originFunction, synth, type Synthesized } from './synth';
import { deploymentDataIn } from '../edge/fixtures';

let folder: string;
let logo: string;
let deployed: Synthesized;
let packaged: PackagedWatermark[];

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 0.5 } } })
    .png()
    .toBuffer();

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'watermark-props-'));
  logo = join(folder, 'logo.png');
  writeFileSync(logo, await png(200, 80));
  writeFileSync(join(folder, 'big.png'), await png(1100, 1000));
  writeFileSync(
    join(folder, 'logo.jpg'),
    await sharp(await png(20, 20))
      .jpeg()
      .toBuffer(),
  );
  const props = { watermarks: { logo: { file: logo, opacity: 0.7 } }, requireWatermark: { 'users/': 'logo' } };
  deployed = synth(() => props);
  packaged = packageWatermarks(props.watermarks);
});

describe('a deployment with watermarks', () => {
  it("puts each version in the edge's store, from the file's bytes and its placement", () => {
    const version = watermarkVersion(readFileSync(logo), { ...DEFAULT_PLACEMENT, opacity: 0.7 });
    expect(version).toMatch(/^[0-9a-f]{8}$/);
    expect(deploymentDataIn(only(deployed, 'Custom::EdgeData')[1].Properties.Entries).watermarks).toEqual({ logo: version });
    // Another placement is another version: every URI changes with it.
    expect(packageWatermarks({ logo: { file: logo, opacity: 0.6 } })[0]?.definition.version).not.toBe(version);
  });

  it("gives the origin each watermark's packaged file and placement, and the prefixes that require one", () => {
    const env = originFunction(deployed).Properties.Environment.Variables;
    const { version } = packaged[0]!.definition;
    expect(JSON.parse(env.WATERMARKS)).toEqual({
      logo: { position: 'bottom-right', margin: 0.03, size: 0.25, opacity: 0.7, version, file: `watermarks/logo.${version}.png` },
    });
    expect(JSON.parse(env.REQUIRE_WATERMARK)).toEqual({ 'users/': 'logo' });
  });

  it('copies each file into the package folder under the name the origin reads', () => {
    const outputDir = mkdtempSync(join(tmpdir(), 'origin-package-'));
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    execFileSync('sh', ['-c', packagingCommands(watermarkFiles(packaged), outputDir, quote).join(' && ')]);
    expect(readFileSync(join(outputDir, packaged[0]!.definition.file))).toEqual(readFileSync(logo));
    expect(packagingCommands([], outputDir, quote)).toEqual([]);
  });
});

describe('watermark props are checked at synth', () => {
  const rejects = (props: Parameters<typeof packageWatermarks>[0], message: RegExp) => {
    expect(() => packageWatermarks(props)).toThrow(ImageTransformerConfigError);
    expect(() => packageWatermarks(props)).toThrow(message);
  };

  it('refuses files that are missing, not PNG, or larger than a logo needs', () => {
    rejects({ logo: { file: join(folder, 'nope.png') } }, /watermark "logo": cannot read .*nope\.png/);
    rejects({ logo: { file: join(folder, 'logo.jpg') } }, /watermark "logo" must be a PNG file/);
    rejects({ big: { file: join(folder, 'big.png') } }, /watermark "big" must be at most 1 megapixel, not "1100x1000"/);
  });

  it('refuses names and placements outside their ranges', () => {
    rejects({ 'Big Logo': { file: logo } }, /Watermark "Big Logo": its name must be lower-case letters/);
    rejects({ logo: { file: logo, position: 'entropy' as never } }, /position must be one of center, top, .*bottom-right\./);
    rejects({ logo: { file: logo, opacity: 0 } }, /opacity must be from 0.05 to 1/);
    rejects({ logo: { file: logo, size: 1.5 } }, /size must be above 0 and at most 1/);
    rejects({ logo: { file: logo, margin: -0.1 } }, /margin must be from 0 to 0.25/);
  });

  it('refuses a required watermark that is not defined, and a prefix with a leading slash', () => {
    expect(() => synth(() => ({ watermarks: { logo: { file: logo } }, requireWatermark: { 'users/': 'badge' } }))).toThrow(
      /requireWatermark names "badge" for "users\/", which is not a watermark; defined: logo\./,
    );
    expect(() => synth(() => ({ watermarks: { logo: { file: logo } }, requireWatermark: { '/users/': 'logo' } }))).toThrow(/no leading \//);
  });

  it('checks presets that name a watermark against the watermarks', () => {
    expect(() => synth(() => ({ presets: { branded: { w: '640', wm: 'badge' } }, watermarks: { logo: { file: logo } } }))).toThrow(
      /preset "branded" is invalid: Invalid watermark "badge": expected one of logo\./,
    );
  });
});
