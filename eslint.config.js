// ESLint with typescript-eslint's recommended rules (no type information: it
// runs in seconds) and the length rules of DEVELOPERS.md; Prettier formats
// (.prettierrc.json), so no rule here is about layout. `npm run lint` runs both,
// then the check for import circles (scripts/import-cycles.ts).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** What a function may span, first line to last, comments and blank lines included: DEVELOPERS.md's "no function over 100 lines". */
const MAX_FUNCTION_LINES = 100;

/** What a source file of lambda/, lib/ or local/ may span, comments and blank lines included; the exemptions are named in docs/development.md. */
const MAX_FILE_LINES = 500;

export default defineConfig(
  {
    ignores: ['cdk.out/', 'dist/', '.localstack/', '.cache/', 'test/edge/before-store/', 'test/package/consumer-app/', 'packaging/'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names say "deliberately unused" (the edge's runtime has no `catch {}` without a binding).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // The edge's bundle drops the statements labelled `fromCode` (esbuild's dropLabels, lib/edge-function.ts).
      'no-unused-labels': 'off',
      // Keys, paths and logs are checked for control characters by regular expression on purpose.
      'no-control-regex': 'off',
      // A `let` declared before an `afterAll` that closes it, and assigned after, is not a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Tests walk synthesized templates and logged JSON, which have no type to name.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['lambda/**', 'local/**', 'lib/**', 'scripts/**', 'bin/**'],
    rules: { 'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES }] },
  },
  {
    // One concern a file: a file past this is a family of steps, props or modules without its folder.
    files: ['lambda/**', 'local/**', 'lib/**'],
    rules: { 'max-lines': ['error', { max: MAX_FILE_LINES }] },
  },
  {
    // The playground's page modules run in the browser.
    files: ['local/emulator/playground/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'AbortController',
          'clearTimeout',
          'crypto',
          'document',
          'DOMParser',
          'fetch',
          'FormData',
          'getSelection',
          'history',
          'Image',
          'location',
          'navigator',
          'performance',
          'setTimeout',
          'TextEncoder',
          'URL',
          'URLSearchParams',
          'window',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
);
