// Every regular expression in the code that handles requests has a linear
// worst case. The expressions are collected, not listed: every regex literal
// and every RegExp(...) in the TypeScript of lambda/ and local/ (stripped of
// types by esbuild, walked with acorn) and in the generated CloudFront
// Function, so a new one cannot escape the check. recheck (a ReDoS checker
// that proves a bound from the expression's automaton, or finds an attack
// string by fuzzing) must call each one safe. A RegExp built from a value
// the walk cannot read is refused: its pattern cannot be checked.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'acorn';
import { transformSync } from 'esbuild';
import { check } from 'recheck';
import { describe, expect, it } from 'vitest';
import { viewerRequestFunctionCode } from '../../lib/edge-function';
import { DEFAULT_GRAMMAR_OPTIONS } from '../../lambda/grammar';
import { NUMBER_PATTERNS } from '../../lambda/grammar/validate';
import { CLOUDFLARE_BOOK } from '../../lambda/edge/dialects/cloudflare';
import { IMGIX_BOOK } from '../../lambda/edge/dialects/imgix';
import type { RuleBook } from '../../lambda/edge/dialects/rules';
import { DIT_DATA } from '../../lambda/edge/dialects/dit';

const ROOT = join(import.meta.dirname, '../..');
const FOLDERS = ['lambda', 'local'];

/** Expressions deliberately left as they are, by where they are and their source, with the reason. */
const EXCEPTIONS: { file: string; source: string; reason: string }[] = [
  {
    file: 'local/harness/localstack.ts',
    source: '\\/+$',
    reason: "trims the developer's own AWS_ENDPOINT_URL_S3 when the emulator starts: never a request's text",
  },
];

interface Expression {
  /** Where it is: a path under the repository, or the generated edge function. */
  file: string;
  /** The pattern, or undefined for a RegExp built from a value the walk cannot read. */
  source?: string;
  flags: string;
  /** The code that makes it. */
  text: string;
}

type Node = { type: string; start: number; end: number; [field: string]: unknown };

const isString = (node: Node | undefined) => node?.type === 'Literal' && typeof node.value === 'string';

/** Regex literals and RegExp(...) calls in JavaScript code. */
function expressionsIn(code: string, file: string): Expression[] {
  const found: Expression[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null || typeof (node as Node).type !== 'string') return;
    const current = node as Node;
    const text = code.slice(current.start, current.end);
    const regex = current.regex as { pattern: string; flags: string } | undefined;
    if (current.type === 'Literal' && regex) found.push({ file, source: regex.pattern, flags: regex.flags, text });
    const callee = current.callee as Node | undefined;
    if (
      (current.type === 'NewExpression' || current.type === 'CallExpression') &&
      callee?.type === 'Identifier' &&
      callee.name === 'RegExp'
    ) {
      const [pattern, flags] = current.arguments as Node[];
      const readable = isString(pattern) && (flags === undefined || isString(flags));
      found.push({
        file,
        source: readable ? (pattern!.value as string) : undefined,
        flags: (flags?.value as string | undefined) ?? '',
        text,
      });
    }
    for (const [field, value] of Object.entries(current)) if (field !== 'regex') visit(value);
  };
  visit(parse(code, { ecmaVersion: 'latest', sourceType: 'module' }));
  return found;
}

function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(folder, name));
}

const javaScriptOf = (path: string) => transformSync(readFileSync(path, 'utf8'), { loader: 'ts', format: 'esm' }).code;

const collected = [
  ...FOLDERS.flatMap((folder) => typeScriptFiles(join(ROOT, folder))).flatMap((path) =>
    expressionsIn(javaScriptOf(path), relative(ROOT, path)),
  ),
  ...expressionsIn(
    viewerRequestFunctionCode({ grammar: DEFAULT_GRAMMAR_OPTIONS, avif: true, signing: true, keyValueStoreId: 'store' }),
    'the generated edge function',
  ),
];
/** The query dialects' rule books (lambda/edge/dialects/rules.ts). */
const BOOKS: RuleBook[] = [IMGIX_BOOK, CLOUDFLARE_BOOK];
/** Every pattern of a book's rules: each rule's value pattern and its conditions'. */
const rulePatterns = (book: RuleBook): string[] =>
  Object.values(book.rules).flatMap((rules) =>
    rules.flatMap((rule) => [rule[0]!, ...rule.slice(2).map((condition) => condition.slice(condition.indexOf('=') + 1))]),
  );
/**
 * The RegExp(...) calls whose pattern is data the edge function reads from its
 * store, written by the deploy from the same constants: the grammar's number
 * patterns (NUMBER_PATTERNS), the query dialects' rules and the names they
 * refuse, Thumbor's path. Each pattern is checked in their place.
 */
const FROM_DATA: { file: string; text: RegExp; sources: string[]; flags?: string }[] = [
  { file: 'lambda/grammar/validate.ts', text: /^RegExp\(readerData\.patterns\[form\]\)$/, sources: Object.values(NUMBER_PATTERNS) },
  // The number patterns again, where the bundle has renamed what holds them.
  { file: 'the generated edge function', text: /^RegExp\(\w+\.\w+\[\w+\]\)$/, sources: [] },
  { file: 'lambda/edge/dialects/rules.ts', text: /^RegExp\(book\.refused\)$/, sources: BOOKS.map((book) => book.refused) },
  {
    file: 'lambda/edge/dialects/rules.ts',
    text: /^RegExp\("\^\(\?:" \+ pattern \+ "\)\$", "i"\)$/,
    sources: BOOKS.flatMap(rulePatterns).map((pattern) => '^(?:' + pattern + ')$'),
    flags: 'i',
  },
  { file: 'lambda/edge/dialects/thumbor.ts', text: /^RegExp\(DIT\.path\)$/, sources: [DIT_DATA.path!] },
  { file: 'lambda/edge/dialects/dit.ts', text: /^RegExp\(DIT\.refused\)$/, sources: [DIT_DATA.refused] },
];
const fromData = (found: Expression) => FROM_DATA.some(({ file, text }) => found.file === file && text.test(found.text));
const dataPatterns: Expression[] = FROM_DATA.flatMap(({ file, sources, flags }) =>
  sources.map((source) => ({ file, source, flags: flags ?? '', text: 'data' })),
);
const unreadable = collected.filter((found) => found.source === undefined && !fromData(found));
const expressions = [...collected, ...dataPatterns].filter((found): found is Expression & { source: string } => found.source !== undefined);
const excuses = (exception: (typeof EXCEPTIONS)[number]) => (expression: Expression) =>
  exception.file === expression.file && exception.source === expression.source;
const isException = (expression: Expression) => EXCEPTIONS.some((exception) => excuses(exception)(expression));

/** recheck's verdict, with a seed so that its fuzzing is the same on every run. */
const verdict = (source: string, flags: string) => check(source, flags, { randomSeed: 1, timeout: 20_000 });

describe('regular expressions on untrusted input', () => {
  it('are collected from the sources and the generated edge function, none built from an unreadable pattern', () => {
    expect(unreadable.map((found) => `${found.file}: ${found.text}`)).toEqual([]);
    const where = new Set(expressions.map((expression) => expression.file));
    // The collection reaches every place that reads request or source text.
    for (const file of [
      'lambda/origin/image/detect.ts',
      'lambda/origin/image/svg.ts',
      'lambda/grammar/canonical.ts',
      'local/emulator/edge-cache.ts',
      'the generated edge function',
    ]) {
      expect(where).toContain(file);
    }
    // Each RegExp built from data is still there, so the list says where they are.
    for (const site of FROM_DATA)
      expect(
        collected.some((found) => found.file === site.file && site.text.test(found.text)),
        site.file,
      ).toBe(true);
    // Each exception still names an expression that exists, so none outlives its reason.
    for (const exception of EXCEPTIONS) expect(expressions.some(excuses(exception)), exception.file).toBe(true);
  });

  it('control: the checker refuses the two expressions the scanners replaced, with an attack string', async () => {
    const sniffing = String.raw`^(\uFEFF|\xEF\xBB\xBF)?\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^[>]*(\[[\s\S]*?\])?\s*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]`;
    const encoding = String.raw`<\?xml[^>]*\bencoding\s*=\s*(?!["'](utf-?8|us-ascii|ascii)["'])`;
    const [exponential, polynomial] = await Promise.all([verdict(sniffing, 'i'), verdict(encoding, 'i')]);
    expect([exponential.status, exponential.status === 'vulnerable' && exponential.complexity.type]).toEqual(['vulnerable', 'exponential']);
    expect([polynomial.status, polynomial.status === 'vulnerable' && polynomial.complexity.type]).toEqual(['vulnerable', 'polynomial']);
  });

  // Each expression once, named by its first place (the edge function repeats the grammar's).
  const distinct = new Map<string, (typeof expressions)[number]>();
  for (const expression of expressions.filter((found) => !isException(found))) {
    const name = `/${expression.source}/${expression.flags}`;
    if (!distinct.has(name)) distinct.set(name, expression);
  }

  it.each([...distinct])('%s is linear', async (_name, expression) => {
    const result = await verdict(expression.source, expression.flags);
    const attack = result.status === 'vulnerable' ? ` (${result.complexity.type}, attack ${result.attack.pattern})` : '';
    expect(result.status, `${expression.file}: /${expression.source}/${expression.flags}${attack}`).toBe('safe');
  });
});
