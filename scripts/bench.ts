// `npm run bench [-- --quick] [--iterations N] [--ops a,b] [--quality] [--settings] [--first-view] [--auto-quality] [--quality-bound] [--max-bytes] [--cards]`
//
// Runs one study of scripts/bench/ on real photos (scripts/bench/corpus.ts):
// by default the miss study (scripts/bench/misses.ts: a miss against bare sharp
// and the AWS sample), or the one its flag names. The markdown report goes to
// stdout and .cache/bench/<study>.md; progress to stderr.

import { loadavg } from 'node:os';
import sharp from 'sharp';
import { originConfig } from '../lambda/origin/config';
import { createOriginHandler } from '../lambda/origin/handler';
import { configureSharp } from '../lambda/origin/sharp-settings';
import { commandLine, runCommand, UsageError } from '../local/harness/command-line';
import { autoQualityStudy } from './bench/auto-quality';
import { loadCorpus, QUICK_KEYS, writeCacheFile, type Corpus } from './bench/corpus';
import { firstViewStudy } from './bench/first-view';
import { missReport } from './bench/miss-report';
import { missStudy, startBenchStack, type BenchStack } from './bench/misses';
import { OPS, type OpSpec } from './bench/ops';
import { bundles } from './bench/processes';
import { qualityStudy } from './bench/quality';
import { qualityBoundStudy } from './bench/quality-bound';
import { maxBytesStudy } from './bench/max-bytes';
import { cardStudy } from './bench/cards';
import { OG_TEMPLATE } from './bounds-cards';
import { log, machine, progressDone, STUDY_LOG, versions } from './bench/session';
import { settingsStudy } from './bench/settings';

const USAGE = `usage: npm run bench -- [--quick] [--iterations N] [--ops ${OPS.map((op) => op.name).join(',')}] [--quality] [--settings] [--first-view] [--auto-quality] [--quality-bound] [--max-bytes] [--cards]
  --quick          3 photos, 1 iteration, no concurrency-2 pass (a smoke test)
  --iterations N   timed passes over the corpus per op and mode (default 2)
  --ops a,b        only these operations
  --quality        the encoder study instead: bytes vs SSIM vs encode time per setting
  --settings       the sharp settings study instead: cache, concurrency, MALLOC_ARENA_MAX
  --first-view     the first view of a negotiated AVIF instead: WebP at once, the AVIF after
  --auto-quality   quality=auto against the fixed default qualities instead: bytes, SSIMULACRA 2, SSIM, CPU
  --quality-bound  what any per-image choice of quality could save at the same mean SSIMULACRA 2 instead
  --max-bytes      max_bytes at three caps per lossy format instead: within the cap, encodes, bytes, CPU
  --cards          a card's miss instead (Open Graph, photo and title), beside the plain resize it adds to`;

interface Run {
  corpus: Corpus;
  ops: OpSpec[];
  iterations: number;
  quick: boolean;
  command: string;
}

/** Runs a study that needs LocalStack and the emulator, and stops them after it. */
async function onStack(run: Run, study: (stack: BenchStack) => Promise<string>): Promise<string> {
  const stack = await startBenchStack(run.corpus);
  try {
    return await study(stack);
  } finally {
    await stack.stop();
  }
}

/** What a miss costs, against bare sharp and the AWS sample. */
function misses(run: Run): Promise<string> {
  const started = performance.now();
  const loadStart = loadavg()[0]!;
  return onStack(run, async (stack) => {
    const measured = await missStudy(run.corpus, stack, run);
    const wallSeconds = (performance.now() - started) / 1000;
    return missReport({ ...run, ...measured, loads: [loadStart, loadavg()[0]!], wallSeconds });
  });
}

/** What the first viewer of a negotiated AVIF waits for. */
function firstView(run: Run): Promise<string> {
  return onStack(run, (stack) => {
    const config = originConfig({ sourceBucket: stack.emulator.sourceBucket, cacheBucket: stack.missBucket });
    const handler = createOriginHandler({ s3: stack.s3, config, log: () => {} });
    const options = { s3: stack.s3, cacheBucket: stack.missBucket, handler, iterations: run.iterations, log, header: STUDY_LOG.header };
    return firstViewStudy(run.corpus, options);
  });
}

/** What a card's miss costs: the Open Graph card of docs/templates.md, against the resize beneath it. */
function cards(run: Run): Promise<string> {
  // The emulator the stack starts provides the packaged fonts (TEXT_FONTS_DIR), which this handler's transform processes inherit.
  return onStack(run, (stack) => {
    const config = originConfig(
      { sourceBucket: stack.emulator.sourceBucket, cacheBucket: stack.missBucket },
      { templateDefinitions: { og: OG_TEMPLATE } },
    );
    const handler = createOriginHandler({ s3: stack.s3, config, log: () => {} });
    const options = { s3: stack.s3, cacheBucket: stack.missBucket, handler, iterations: run.iterations, log, header: STUDY_LOG.header };
    return cardStudy(run.corpus, options);
  });
}

/** Each study by its flag (the miss study has none), with the file its report is written to. */
const STUDIES: Record<string, { file: string; run: (run: Run) => Promise<string> }> = {
  misses: { file: 'last.md', run: misses },
  quality: {
    file: 'quality.md',
    run: (run) => qualityStudy(run.corpus, { ...STUDY_LOG, quick: run.quick, ops: run.ops.map((op) => op.name) }),
  },
  settings: {
    file: 'settings.md',
    run: async (run) => settingsStudy(run.corpus, { ...STUDY_LOG, quick: run.quick, childScript: (await bundles()).child }),
  },
  'first-view': { file: 'first-view.md', run: firstView },
  'auto-quality': { file: 'auto-quality.md', run: (run) => autoQualityStudy(run.corpus, { ...STUDY_LOG, command: run.command }) },
  'quality-bound': { file: 'quality-bound.md', run: (run) => qualityBoundStudy(run.corpus, { ...STUDY_LOG, command: run.command }) },
  'max-bytes': { file: 'max-bytes.md', run: (run) => maxBytesStudy(run.corpus, { ...STUDY_LOG, command: run.command }) },
  cards: { file: 'cards.md', run: cards },
};

async function main() {
  const values = commandLine(USAGE, {
    quick: { type: 'boolean', default: false },
    iterations: { type: 'string' },
    ops: { type: 'string' },
    quality: { type: 'boolean', default: false },
    settings: { type: 'boolean', default: false },
    'first-view': { type: 'boolean', default: false },
    'auto-quality': { type: 'boolean', default: false },
    'quality-bound': { type: 'boolean', default: false },
    'max-bytes': { type: 'boolean', default: false },
    cards: { type: 'boolean', default: false },
  });
  if (!values) return;
  const iterations = values.iterations ? Number(values.iterations) : values.quick ? 1 : 2;
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new UsageError(`--iterations must be a positive integer, not "${values.iterations}"`);
  const names = values.ops ? values.ops.split(',').map((name) => name.trim()) : OPS.map((op) => op.name);
  const unknown = names.filter((name) => !OPS.some((op) => op.name === name));
  if (unknown.length) throw new UsageError(`unknown operation(s) ${unknown.join(', ')}`);
  const flagged = Object.keys(STUDIES).filter((name) => values[name as keyof typeof values] === true);
  if (flagged.length > 1) throw new UsageError(`one study at a time, not ${flagged.map((name) => `--${name}`).join(' and ')}`);
  const study = STUDIES[flagged[0] ?? 'misses']!;
  const command = ['npm run bench', ...(process.argv.slice(2).length ? ['--', ...process.argv.slice(2)] : [])].join(' ');

  // The Lambda's own sharp settings (cache off, threads per vCPU; here as for the default memory).
  // They are per process, so bare sharp, which runs beside the handler, gets them too.
  configureSharp({});
  const corpus = await loadCorpus(log);
  if (values.quick)
    corpus.photos = corpus.photos
      .filter((photo) => QUICK_KEYS.includes(photo.key))
      .concat(corpus.kind === 'generated' ? corpus.photos.slice(0, 3) : []);
  log(
    `${corpus.photos.length} photos (${corpus.photos.map((photo) => `${photo.key} ${photo.megapixels.toFixed(1)} MP`).join(', ')}) + ${corpus.animations.map((animation) => animation.key).join(', ')}`,
  );
  log(
    `${machine()}; ${versions()}; sharp.concurrency() ${sharp.concurrency()}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );

  const ops = OPS.filter((op) => names.includes(op.name));
  const text = await study.run({ corpus, ops, iterations, quick: values.quick, command });
  process.stdout.write(text);
  log(`written to ${await writeCacheFile(study.file, text)}`);
}

runCommand(USAGE, main, progressDone);
