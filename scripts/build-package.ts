// `npm pack`'s build (its prepack script): compiles the package's entries
// (tsconfig.build.json: the construct, the client, signing, the Next.js loader)
// into dist/ as ES modules with declarations, keeping the source tree's layout,
// and writes the management API's OpenAPI document there (scripts/openapi.ts).
//
// The sources import each other without file extensions (module "preserve",
// resolved by bundlers and tsx), which Node's ES module loader and TypeScript's
// NodeNext resolution refuse. So each relative import in dist/ is rewritten to
// the file tsc emitted for it: './url' to './url.js', '../grammar' to
// '../grammar/index.js'. An import that names no emitted file fails the build.
//
// The Lambdas are not compiled here: the package ships their TypeScript
// sources (lambda/), which the construct bundles with esbuild at synth, as a
// checkout does.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { writeOpenApi } from './openapi';
import { runIfMain } from './operator-command';
import { PROJECT_ROOT } from '../lib/project-root';

export const DIST = join(PROJECT_ROOT, 'dist');

/** A relative specifier after `from`, `import(` or a bare `import`, quoted. */
const RELATIVE_IMPORT = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]*)\2/g;

/** The specifier Node resolves to the file tsc emitted for `specifier`, imported from `dir`. */
export function withExtension(dir: string, specifier: string, file: string): string {
  if (/\.js$/.test(specifier)) return specifier;
  if (existsSync(join(dir, specifier + '.js'))) return specifier + '.js';
  if (existsSync(join(dir, specifier, 'index.js'))) return specifier + '/index.js';
  throw new Error(`${file}: the import "${specifier}" names no compiled file.`);
}

/** `code` (a .js or .d.ts file in `dir`) with every relative import naming its emitted file. */
export function addExtensions(code: string, dir: string, file: string): string {
  return code.replace(RELATIVE_IMPORT, (_all, before: string, quote: string, specifier: string) => {
    return before + quote + withExtension(dir, specifier, file) + quote;
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

export async function main(): Promise<number> {
  rmSync(DIST, { recursive: true, force: true });
  const tsc = spawnSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(PROJECT_ROOT, 'tsconfig.build.json')], {
    stdio: ['ignore', 2, 2],
  });
  if (tsc.status !== 0) return 1;
  const files = filesUnder(DIST).filter((file) => /\.(js|d\.ts)$/.test(file));
  for (const file of files) {
    writeFileSync(file, addExtensions(readFileSync(file, 'utf8'), dirname(file), relative(PROJECT_ROOT, file)));
  }
  writeOpenApi(join(DIST, 'manage-openapi.json'));
  // On stderr: `npm pack --json` prints its report on stdout.
  process.stderr.write(`build-package: ${files.length} files in ${relative(PROJECT_ROOT, DIST)}/\n`);
  return 0;
}

runIfMain(import.meta.url, () => main());
