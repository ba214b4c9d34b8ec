// Watermarks at synth: each named PNG in the app is checked, versioned by its
// bytes and placement, and packaged with the origin function. The versions go
// to the edge (its KeyValueStore) and the definitions to the origin, from the
// one deploy, so the canonical URIs change exactly when a watermark does.

import { mustBe } from '../lambda/common/checks';
import {
  checkedPlacement,
  MAX_WATERMARK_BYTES,
  MAX_WATERMARK_PIXELS,
  watermarkVersion,
  type WatermarkDefinition,
  type WatermarkPlacement,
} from '../lambda/origin/watermarks';
import { pngHeader, readAppFile, type PackagedFile } from './image-files';
import { fail } from './settings';

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
    const { source, bytes } = readAppFile(`watermark "${name}"`, file, MAX_WATERMARK_BYTES);
    const { width, height } = pngHeader(bytes) ?? fail(`watermark "${name}" must be a PNG file.`);
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

/** The watermarks' files as the origin's package holds them. */
export const watermarkFiles = (watermarks: PackagedWatermark[]): PackagedFile[] =>
  watermarks.map(({ source, definition }) => ({ source, file: definition.file }));
