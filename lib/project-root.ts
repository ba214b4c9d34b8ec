// Where the project's files are at synth: a checkout, or the installed package,
// whose compiled construct is one folder deeper (dist/lib/). The Lambdas and the
// viewer-request function are bundled from the TypeScript sources found here.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `dir` that holds a package.json. */
function packageRoot(dir: string): string {
  if (existsSync(join(dir, 'package.json'))) return dir;
  const parent = dirname(dir);
  if (parent === dir) throw new Error(`No package.json at or above ${dir}: the construct's sources are missing.`);
  return packageRoot(parent);
}

/** The checkout's or the installed package's root: lambda/, package.json. */
export const PROJECT_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));
