import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Two projects: `integration`, the test files that need LocalStack, which its global
// setup starts; `unit`, the rest, which start none. A file needs LocalStack when it
// reads the endpoint (`inject('s3Endpoint')`), itself or through a module of the
// repository it imports: derived from the imports, so no list of files is kept by hand.

const READS_ENDPOINT = /\binject\(\s*['"]s3Endpoint['"]\s*\)/;
/** `from '…'`, `import '…'` and `import('…')` of a relative module. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The module a relative specifier names: a `.ts` file, given with or without its extension, or a folder's index. */
function resolveModule(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  return [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
}

function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The test files under `root`/test that need LocalStack, relative to `root`. */
function localStackTestFiles(root: string): string[] {
  const verdicts = new Map<string, boolean>();
  const needsLocalStack = (file: string): boolean => {
    const known = verdicts.get(file);
    if (known !== undefined) return known;
    verdicts.set(file, false); // an import cycle adds nothing
    const source = readFileSync(file, 'utf8');
    const imported = [...source.matchAll(RELATIVE_IMPORT)].map((match) => resolveModule(file, match[1]!));
    const verdict = READS_ENDPOINT.test(source) || imported.some((module) => module !== undefined && needsLocalStack(module));
    verdicts.set(file, verdict);
    return verdict;
  };
  return testFiles(join(root, 'test'))
    .filter(needsLocalStack)
    .map((file) => relative(root, file))
    .sort();
}

const ALL_TESTS = 'test/**/*.test.ts';
const SUBJECT_MODEL_SETUP = 'test/subject-model-setup.ts';
const FONTS_SETUP = 'test/fonts-setup.ts';
const INTEGRATION_TESTS = localStackTestFiles(fileURLToPath(new URL('.', import.meta.url)));

export default defineConfig({
  test: {
    // Tests talk to a real S3 and run sharp: allow for a slow, shared CI machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Child processes rather than worker threads: sharp's native libvips is
    // happiest loaded once per process. Two workers for two cores; LocalStack
    // and libvips' own threads take the rest.
    pool: 'forks',
    maxWorkers: 2,
    // `npx vitest run test/grammar` runs the unit project only, and so starts no LocalStack;
    // `npm test` runs both.
    projects: [
      // Both cache the subject model and the text fonts and name them in SUBJECT_MODEL_FILE and TEXT_FONTS_DIR (test/*-setup.ts).
      {
        extends: true,
        test: { name: 'unit', include: [ALL_TESTS], exclude: INTEGRATION_TESTS, globalSetup: [SUBJECT_MODEL_SETUP, FONTS_SETUP] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: INTEGRATION_TESTS,
          // Starts one LocalStack S3 for the project and provides 's3Endpoint'.
          // Vitest puts no timeout on global setup; local/harness/localstack.ts has its own
          // (the first start installs LocalStack's venv: about a minute, up to ~3).
          globalSetup: ['test/global-setup.ts', SUBJECT_MODEL_SETUP, FONTS_SETUP],
        },
      },
    ],
  },
});
