// Watermarks at synth: each named PNG in the app is checked, versioned by its
// bytes and placement, and packaged with the origin function. The versions go
// to the edge (its KeyValueStore) and the definitions to the origin, from the
// one deploy, so the canonical URIs change exactly when a watermark does.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { mustBe } from '../lambda/common/checks';
import {
  checkedPlacement,
  MAX_WATERMARK_BYTES,
  MAX_WATERMARK_PIXELS,
  watermarkVersion,
  type WatermarkDefinition,
  type WatermarkPlacement,
} from '../lambda/origin/watermarks';
import { ImageTransformerConfigError } from './settings';

/** One watermark: a PNG file of the CDK app, and where it goes on an image. */
export interface WatermarkProps extends Partial<WatermarkPlacement> {
  /** The PNG file (transparency kept), relative to the working directory of `cdk synth`; at most 1 MiB and 1 MP. */
  readonly file: string;
}

/** A checked watermark: the app's file, and its definition as the origin reads it. */
export interface PackagedWatermark {
  readonly name: string;
  readonly source: string;
  readonly definition: WatermarkDefinition;
}

/** Folder of the origin's package that holds the watermarks. */
const PACKAGE_FOLDER = 'watermarks';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const fail = (message: string): never => {
  throw new ImageTransformerConfigError(message);
};

/** The PNG's size from its header (IHDR is the first chunk), or a synth error. */
function pngSize(name: string, bytes: Buffer): [number, number] {
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString('latin1', 12, 16) !== 'IHDR') {
    fail(`watermark "${name}" must be a PNG file.`);
  }
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

export function packageWatermarks(watermarks: { [name: string]: WatermarkProps } = {}): PackagedWatermark[] {
  return Object.keys(watermarks).map((name) => {
    const props = watermarks[name] as WatermarkProps;
    const { file, ...given } = props;
    let placement: WatermarkPlacement;
    try {
      placement = checkedPlacement(name, given);
    } catch (error) {
      return fail((error as Error).message);
    }
    const source = resolve(file);
    let bytes: Buffer;
    try {
      bytes = readFileSync(source);
    } catch (error) {
      return fail(`watermark "${name}": cannot read ${source} (${(error as Error).message}).`);
    }
    if (bytes.length > MAX_WATERMARK_BYTES) fail(mustBe(`watermark "${name}"`, 'at most 1 MiB', `${bytes.length} bytes`));
    const [width, height] = pngSize(name, bytes);
    if (width * height > MAX_WATERMARK_PIXELS) fail(mustBe(`watermark "${name}"`, 'at most 1 megapixel', `${width}x${height}`));
    const version = watermarkVersion(bytes, placement);
    return { name, source, definition: { ...placement, version, file: `${PACKAGE_FOLDER}/${name}.${version}.png` } };
  });
}

/** The prefixes that require a watermark, checked against the watermarks defined. */
export function checkRequireWatermark(
  rules: { [prefix: string]: string } = {},
  watermarks: PackagedWatermark[],
): { [prefix: string]: string } {
  const names = watermarks.map((watermark) => watermark.name);
  for (const [prefix, name] of Object.entries(rules)) {
    if (prefix === '' || prefix.startsWith('/'))
      fail(mustBe(`the requireWatermark prefix "${prefix}"`, 'a key prefix such as users/ (no leading /)', prefix));
    if (!names.includes(name))
      fail(`requireWatermark names "${name}" for "${prefix}", which is not a watermark; defined: ${names.join(', ') || '(none)'}.`);
  }
  return rules;
}

/** The shell commands that copy the watermarks into the origin's package folder `outputDir`. */
export function packagingCommands(watermarks: PackagedWatermark[], outputDir: string, quote: (text: string) => string): string[] {
  if (watermarks.length === 0) return [];
  const folder = `${outputDir}/${PACKAGE_FOLDER}`;
  return [
    `mkdir -p ${quote(folder)}`,
    ...watermarks.map((watermark) => `cp ${quote(watermark.source)} ${quote(`${outputDir}/${watermark.definition.file}`)}`),
  ];
}
