// `npm run edge-size [-- --check]`
//
// What each deployment feature costs the viewer-request function: the
// function generated with every feature on, and with each one off in turn;
// and the size of each dialect's function.
// It rewrites the table in docs/development.md ("The edge function's size")
// between its markers; with --check it only says whether the table there is
// current (test/edge/function-code.test.ts checks it on every run too).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTION_BUDGETS, viewerRequestFunctionCode, type EdgeFunctionSettings } from '../lib/edge-function';
import type { EdgeGrammar } from '../lambda/edge/dialects/dialect';
import { PROJECT_ROOT } from '../lib/project-root';
import { runIfMain } from './operator-command';

const DOC = join(PROJECT_ROOT, 'docs', 'development.md');
const START = '<!-- npm run edge-size: start -->';
const END = '<!-- npm run edge-size: end -->';

/** Every feature of the function on: signing (with expiry and folder grants), sizes, presets, watermarks and card templates. */
export const EVERY_FEATURE: EdgeFunctionSettings = {
  grammar: {
    maxDimension: 4096,
    sizes: [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840],
    presets: { thumb: { width: '256', height: '256', fit: 'cover' } },
    watermarks: { logo: '1a2b3c4d' },
    templates: { og: '5e6f7a8b' },
  },
  avif: true,
  signing: true,
  keyValueStoreId: 'a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
};

/** The every-feature settings with one feature off. */
const WITHOUT: { [feature: string]: (settings: EdgeFunctionSettings) => EdgeFunctionSettings } = {
  'signing (expiry, folder grants)': (settings) => ({ ...settings, signing: false }),
  sizes: (settings) => ({ ...settings, grammar: { ...settings.grammar, sizes: undefined } }),
  presets: (settings) => ({ ...settings, grammar: { ...settings.grammar, presets: {} } }),
  watermarks: (settings) => ({ ...settings, grammar: { ...settings.grammar, watermarks: {} } }),
  'card templates': (settings) => ({ ...settings, grammar: { ...settings.grammar, templates: {} } }),
};

const bytes = (settings: EdgeFunctionSettings) => Buffer.byteLength(viewerRequestFunctionCode(settings), 'utf8');

/** The dialect functions a deployment can generate (lambda/edge/dialects/index.ts), by what they read. */
const DIALECT_FUNCTIONS: { [name: string]: EdgeGrammar } = {
  "DIT's base64 JSON requests": 'dit-json',
  'Thumbor paths (DIT)': 'thumbor',
  'imgix queries': 'imgix',
  "Cloudflare's /cdn-cgi/image/ paths": 'cloudflare',
};

/** Every generated viewer-request function with every feature on, native and dialect: its grammar and size in bytes, by name. */
export function functionSizes(): { [function_: string]: { grammar: EdgeGrammar; bytes: number } } {
  const named: { [name: string]: EdgeGrammar } = { native: 'native', ...DIALECT_FUNCTIONS };
  return Object.fromEntries(
    Object.entries(named).map(([name, edgeGrammar]) => [name, { grammar: edgeGrammar, bytes: bytes({ ...EVERY_FEATURE, edgeGrammar }) }]),
  );
}

/** The markdown table: the every-feature function, what each feature adds to it, and the function with none; then each dialect's function. */
export function featureTable(): string {
  const all = bytes(EVERY_FEATURE);
  let none = EVERY_FEATURE;
  const rows = Object.keys(WITHOUT).map((feature) => {
    const without = WITHOUT[feature] as (settings: EdgeFunctionSettings) => EdgeFunctionSettings;
    none = without(none);
    return `| ${feature} | ${all - bytes(without(EVERY_FEATURE))} |`;
  });
  return [
    '| Feature | Bytes it adds to the every-feature function |',
    '| --- | ---: |',
    ...rows,
    `| **every feature on** | **${all}** bytes in all |`,
    `| none of them | ${bytes(none)} bytes in all |`,
    '',
    '| Dialect function, every feature on | Bytes | Budget |',
    '| --- | ---: | ---: |',
    ...Object.entries(DIALECT_FUNCTIONS).map(
      ([name, edgeGrammar]) => `| ${name} | ${bytes({ ...EVERY_FEATURE, edgeGrammar })} | ${FUNCTION_BUDGETS[edgeGrammar]} |`,
    ),
  ].join('\n');
}

/** docs/development.md with `table` between the markers. */
export function withTable(doc: string, table: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start === -1 || end < start) throw new Error(`${DOC} has no ${START} ... ${END} markers.`);
  return doc.slice(0, start + START.length) + '\n' + table + '\n' + doc.slice(end);
}

/** The doc as it stands, and as the command would write it. */
export function docTables(): { current: string; generated: string } {
  const current = readFileSync(DOC, 'utf8');
  return { current, generated: withTable(current, featureTable()) };
}

async function main(argv: string[]): Promise<number> {
  const { current, generated } = docTables();
  if (argv.includes('--check')) {
    console.log(
      current === generated
        ? 'docs/development.md: the table is current.'
        : 'docs/development.md: the table is stale; run npm run edge-size.',
    );
    return current === generated ? 0 : 1;
  }
  writeFileSync(DOC, generated);
  console.log(featureTable());
  return 0;
}

runIfMain(import.meta.url, main);
