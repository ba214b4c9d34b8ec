// scripts/import-cycles.ts, which `npm run lint` runs: on small trees written
// here, a circle of value imports fails it and names its files, while the
// imports TypeScript erases and the ones that load later do not count.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkImportCycles } from '../../scripts/import-cycles';

let roots: string[] = [];

afterEach(() => {
  roots.forEach((root) => rmSync(root, { recursive: true, force: true }));
  roots = [];
});

/** Checks a tree of these files (path: text); returns the exit status and what it printed. */
function check(files: Record<string, string>): { status: number; lines: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const lines: string[] = [];
  return { status: checkImportCycles(root, (line) => lines.push(line)), lines };
}

describe('import circles', () => {
  it('fails on two modules that import values from each other, and names both', () => {
    const { status, lines } = check({
      'lambda/steps.ts': "import { encode } from './output';\nexport const steps = () => encode();\n",
      'lambda/output.ts': "import { steps } from './steps';\nexport const encode = () => steps;\n",
    });
    expect(status).toBe(1);
    expect(lines).toEqual(['import circle: lambda/output.ts <-> lambda/steps.ts']);
  });

  it('follows a circle through three modules, folders and index files, and re-exports', () => {
    const { status, lines } = check({
      'lib/a.ts': "import { b } from './parts';\nexport const a = b;\n",
      'lib/parts/index.ts': "export { b } from './b';\n",
      'lib/parts/b.ts': "import { a } from '../a';\nexport const b = () => a;\n",
    });
    expect(status).toBe(1);
    expect(lines).toEqual(['import circle: lib/a.ts <-> lib/parts/b.ts <-> lib/parts/index.ts']);
  });

  it('passes when one side imports types only, or loads the other later', () => {
    const { status, lines } = check({
      'local/a.ts': "import type { B } from './b';\nimport { type C } from './c';\nexport const a = (b: B, c: C) => [b, c];\n",
      'local/b.ts': "import { a } from './a';\nexport type B = typeof a;\n",
      'local/c.ts': "import { a } from './a';\nexport type C = typeof a;\nexport const later = () => import('./a');\n",
    });
    expect(status).toBe(0);
    expect(lines).toEqual(['no import circle among 3 files in lambda, lib, local']);
  });

  it('reads only lambda/, lib/ and local/', () => {
    const { status } = check({
      'test/a.ts': "import { b } from './b';\nexport const a = b;\n",
      'test/b.ts': "import { a } from './a';\nexport const b = a;\n",
    });
    expect(status).toBe(0);
  });
});
