// Image files of the CDK app that the origin function carries in its package
// (watermarks, the fallback image): read and checked at synth from their
// headers alone (the synth is synchronous, and a header is all a check needs),
// then copied into the package when the function is bundled.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { mustBe } from '../lambda/common/checks';
import { fail } from './settings';

/** A file of the app packaged with the origin: where it is, and its path inside the package. */
export interface PackagedFile {
  readonly source: string;
  /** Relative to the package's root, as the origin's configuration names it. */
  readonly file: string;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The file at `file` (relative to the working directory of `cdk synth`), at most `maxBytes`, or a synth error naming `what`. */
export function readAppFile(what: string, file: string, maxBytes: number): { source: string; bytes: Buffer } {
  const source = resolve(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(source);
  } catch (error) {
    return fail(`${what}: cannot read ${source} (${(error as Error).message}).`);
  }
  if (bytes.length > maxBytes) fail(mustBe(what, `at most ${maxBytes / 1024 / 1024} MiB`, `${bytes.length} bytes`));
  return { source, bytes };
}

/** A PNG's size and bit depth from its header (IHDR is the first chunk), or undefined when the bytes are no PNG. */
export function pngHeader(bytes: Buffer): { width: number; height: number; depth: number } | undefined {
  if (bytes.length < 25 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), depth: bytes[24] as number };
}

/** Start-of-frame markers: SOF0 to SOF15 but DHT (C4), JPG (C8) and DAC (CC), which share the range. */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/**
 * A JPEG's size from its frame header, or undefined when the bytes are no
 * JPEG or end before it. Each segment is stepped over by its length, so the
 * walk is linear in the segments before the frame.
 */
export function jpegSize(bytes: Buffer): [number, number] | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 9 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] as number;
    // A fill byte, or a marker without a length (RSTn, TEM).
    if (marker === 0xff || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += marker === 0xff ? 1 : 2;
      continue;
    }
    if (isStartOfFrame(marker)) return [bytes.readUInt16BE(at + 7), bytes.readUInt16BE(at + 5)];
    // Scan data before any frame header: not a JPEG this reads.
    if (marker === 0xda || marker === 0xd9) return undefined;
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  return undefined;
}

/** The shell commands that copy `files` into the origin's package folder `outputDir`. */
export function packagingCommands(files: PackagedFile[], outputDir: string, quote: (text: string) => string): string[] {
  const folders = [...new Set(files.map((packaged) => dirname(`${outputDir}/${packaged.file}`)))];
  return [
    ...folders.map((folder) => `mkdir -p ${quote(folder)}`),
    ...files.map((packaged) => `cp ${quote(packaged.source)} ${quote(`${outputDir}/${packaged.file}`)}`),
  ];
}
