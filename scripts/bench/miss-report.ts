// The miss study's report (scripts/bench/misses.ts): markdown tables, one
// function a section.

import sharp from 'sharp';
import type { OpName } from './ops';
import { DEFAULT_LIMITS } from '../../lambda/origin/config';
import type { Corpus } from './corpus';
import { itemsOf, NAIVE_AVIF_MP, type MissMeasurements, type Mode, type Results, type Sample } from './misses';
import type { OpSpec } from './ops';
import { maxRssBytes } from './rss';
import { machine, versions } from './session';
import { kb, markdownTable, median, ms, p95, pairedRatio, perSecond, ratio, sum } from './stats';

/** Large originals: where a miss is won or lost. */
const LARGE_MP = 8;

export interface MissReport extends MissMeasurements {
  command: string;
  corpus: Corpus;
  ops: OpSpec[];
  iterations: number;
  /** The load average at the start and at the end. */
  loads: [number, number];
  wallSeconds: number;
}

const msCell = (values: number[]) => (values.length ? `${ms(median(values))} / ${ms(p95(values))}` : '—');
const times = (results: Results, op: OpName, mode: Mode) => results.of(op, mode).map((sample) => sample.ms);
const photoRatio = (x: Map<string, number>, y: Map<string, number>) => {
  const keys = [...x.keys()].filter((key) => y.has(key));
  return pairedRatio(
    keys.map((key) => x.get(key)!),
    keys.map((key) => y.get(key)!),
  );
};
const perPhotoRatio = (results: Results, op: OpName, a: Mode, b: Mode, filter?: (s: Sample) => boolean, of: 'ms' | 'cpuMs' = 'ms') =>
  photoRatio(results.perPhoto(op, a, filter, of), results.perPhoto(op, b, filter, of));

/** The run: date, machine, both pipelines' sharp settings, corpus and command. */
function header(r: MissReport): string[] {
  const { corpus } = r;
  const lines: string[] = [];
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  lines.push(`### Benchmark, ${date}`);
  lines.push('');
  lines.push(
    `- Machine: ${machine()}; load average ${r.loads[0].toFixed(1)} at start, ${r.loads[1].toFixed(1)} at end (shared machine: compare ratios, measured in the same run).`,
  );
  lines.push(
    `- ${versions()}; sharp.concurrency() ${sharp.concurrency()}, libvips cache ${sharp.cache().memory.max ? 'on' : 'off'}, MALLOC_ARENA_MAX ${process.env.MALLOC_ARENA_MAX ?? 'unset'} (the handler's settings, lambda/origin/sharp-settings.ts); the AWS sample runs in its own process with sharp's default threads (concurrency ${r.naiveSettings.concurrency}) and its libvips cache ${r.naiveSettings.cacheMb ? `at ${r.naiveSettings.cacheMb} MB` : "off, as the handler's: each photo is asked for again and again here, never on a real miss"}.`,
  );
  lines.push(`- Corpus: ${corpus.description}.`);
  lines.push(
    `- \`${r.command}\`: ${r.iterations} iteration(s) per photo, modes interleaved in rotating order; ${Math.round(r.wallSeconds)} s in all.`,
  );
  if (corpus.kind === 'generated') lines.push('- **GENERATED IMAGES, NOT PHOTOS**: these figures do not describe real photos.');
  lines.push('');
  return lines;
}

/** Latency per request in each mode, and the ratios between them. */
function latency(r: MissReport): string[] {
  const { results, corpus, ops } = r;
  const lines: string[] = [];
  lines.push(
    '**Latency per request**, milliseconds, median / p95 over photos × iterations. "handler miss" is the time to the response (fetch from LocalStack and transform: the variant is written after it), ' +
      '"miss invocation" the time until the write is done and the invocation ends. Ratios: median of the per-photo ratios of medians; ' +
      '"transform CPU / bare CPU" compares CPU time (all threads), which a busy shared machine disturbs less than wall time.',
  );
  lines.push('');
  lines.push(
    markdownTable(
      [
        'operation',
        'n',
        'bare sharp',
        'handler transform',
        'handler miss',
        'miss invocation',
        'hit (cache bucket)',
        'naive miss (AWS sample)',
        'transform / bare',
        'transform CPU / bare CPU',
        'miss / bare',
        'naive / miss',
      ],
      ops.map((op) => [
        op.label,
        String(itemsOf(corpus, op).length),
        msCell(times(results, op.name, 'bare')),
        msCell(times(results, op.name, 'transform')),
        msCell(times(results, op.name, 'miss')),
        msCell(results.of(op.name, 'miss').map((sample) => sample.invocationMs ?? NaN)),
        msCell(times(results, op.name, 'hit')),
        msCell(times(results, op.name, 'naive')),
        ratio(perPhotoRatio(results, op.name, 'transform', 'bare')),
        ratio(perPhotoRatio(results, op.name, 'transform', 'bare', undefined, 'cpuMs')),
        ratio(perPhotoRatio(results, op.name, 'miss', 'bare')),
        ratio(perPhotoRatio(results, op.name, 'naive', 'miss')),
      ]),
    ),
  );
  lines.push('');
  return lines;
}

/** What Lambda bills for a miss: the whole invocation (until the variant's write ends) at the memory size. */
function gigabyteSeconds(r: MissReport): string[] {
  const { results, ops } = r;
  const lines: string[] = [];
  const gigabytes = DEFAULT_LIMITS.memorySizeMb / 1024;
  lines.push(
    `**Lambda GB-seconds per miss** at the default memory size (${DEFAULT_LIMITS.memorySizeMb} MB): the median "miss invocation" × ${gigabytes} GB.`,
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'miss invocation (median)', 'GB-s per miss'],
      ops.map((op) => {
        const invocation = median(results.of(op.name, 'miss').map((sample) => sample.invocationMs ?? NaN));
        return [op.label, ms(invocation), ((invocation / 1000) * gigabytes).toFixed(3)];
      }),
    ),
  );
  lines.push('');
  return lines;
}

/** A composed op against the same resize without it. */
function composition(r: MissReport): string[] {
  const { results, ops } = r;
  const lines: string[] = [];
  const composed = ops.filter((op) => op.baseline && ops.some((other) => other.name === op.baseline));
  if (composed.length) {
    lines.push(
      '**Composition** against the same resize without it, on the same photos (median of the per-photo ratios of medians). ' +
        'The miss invocation is what Lambda bills, so its ratio is the ratio of GB-seconds; CPU time (all threads) is steadier than wall time on a shared machine:',
    );
    lines.push('');
    lines.push(
      markdownTable(
        [
          'operation',
          'against',
          'bare / bare',
          'bare CPU / same',
          'transform / transform',
          'transform CPU / same',
          'miss invocation (GB-s) / same',
          "transform / against's bare",
        ],
        composed.map((op) => {
          const against = op.baseline!;
          const of = (mode: Mode, a: OpName, b: OpName, what: 'ms' | 'invocationMs' | 'cpuMs' = 'ms') =>
            ratio(photoRatio(results.perPhoto(a, mode, undefined, what), results.perPhoto(b, mode, undefined, what)));
          return [
            op.name,
            against,
            of('bare', op.name, against),
            of('bare', op.name, against, 'cpuMs'),
            of('transform', op.name, against),
            of('transform', op.name, against, 'cpuMs'),
            of('miss', op.name, against, 'invocationMs'),
            ratio(photoRatio(results.perPhoto(op.name, 'transform'), results.perPhoto(against, 'bare'))),
          ];
        }),
      ),
    );
    lines.push('');
  }
  return lines;
}

/** All operations together, and what the naive AVIF row is. */
function pooled(r: MissReport): string[] {
  const { results, ops } = r;
  const lines: string[] = [];
  const pooled = (a: Mode, b: Mode, of: 'ms' | 'cpuMs' = 'ms') => {
    const ratios: number[] = [];
    for (const op of ops) {
      const x = results.perPhoto(op.name, a, undefined, of);
      const y = results.perPhoto(op.name, b, undefined, of);
      for (const [photo, value] of x) if (y.has(photo)) ratios.push(value / y.get(photo)!);
    }
    return median(ratios);
  };
  lines.push(
    `All operations together (median of the per-photo ratios): transform / bare ${ratio(pooled('transform', 'bare'))} (CPU ${ratio(pooled('transform', 'bare', 'cpuMs'))}), miss / bare ${ratio(pooled('miss', 'bare'))}.`,
  );
  lines.push('');
  if (ops.some((op) => op.format === 'avif')) {
    lines.push(
      `The naive AVIF row is sharp's default effort 4 (what the sample runs): it ran once, on the originals of ${NAIVE_AVIF_MP} MP or more only (${results.of('avif', 'naive').length} photos), so compare it in the table below.`,
    );
    lines.push('');
  }
  return lines;
}

/** The photos of LARGE_MP or more: where a miss is won or lost. */
function largeOriginals(r: MissReport): string[] {
  const { results, corpus, ops } = r;
  const lines: string[] = [];
  const large = (sample: Sample) => (corpus.photos.find((photo) => photo.key === sample.photo)?.megapixels ?? 0) >= LARGE_MP;
  const largeCount = corpus.photos.filter((photo) => photo.megapixels >= LARGE_MP).length;
  if (largeCount > 0) {
    lines.push(
      `**Large originals** (the ${largeCount} photos of ${LARGE_MP} MP or more), median ms; transform CPU: CPU time of the transform (all threads), median and max, i.e. what one core needs:`,
    );
    lines.push('');
    const largeMs = (op: OpName, mode: Mode) => ms(median(results.of(op, mode, large).map((sample) => sample.ms)));
    const largeCpu = (op: OpName) => {
      const cpu = results.of(op, 'transform', large).map((sample) => sample.cpuMs ?? NaN);
      return `${ms(median(cpu))} / ${ms(Math.max(...cpu))}`;
    };
    lines.push(
      markdownTable(
        [
          'operation',
          'bare',
          'transform',
          'transform CPU median / max',
          'miss',
          'naive miss',
          'transform / bare',
          'miss / bare',
          'naive / miss',
        ],
        ops
          .filter((op) => !op.animated)
          .map((op) => [
            op.name,
            largeMs(op.name, 'bare'),
            largeMs(op.name, 'transform'),
            largeCpu(op.name),
            largeMs(op.name, 'miss'),
            largeMs(op.name, 'naive'),
            ratio(perPhotoRatio(results, op.name, 'transform', 'bare', large)),
            ratio(perPhotoRatio(results, op.name, 'miss', 'bare', large)),
            ratio(perPhotoRatio(results, op.name, 'naive', 'miss', large)),
          ]),
      ),
    );
    lines.push('');
  }
  return lines;
}

/** Where a miss goes, in the handler and in the sample. */
function missParts(r: MissReport): string[] {
  const { results, ops } = r;
  const lines: string[] = [];
  lines.push(
    '**Where a miss goes** (median ms: the handler\'s Server-Timing, and the write from its log; "rest" is the event, validation and headers before the response. The naive pipeline responds after its PUT and base64):',
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'fetch', 'transform', 'rest', 'store (after the response)', 'naive: fetch', 'naive: transform', 'naive: store'],
      ops.map((op) => {
        const miss = results.of(op.name, 'miss');
        const naiveSamples = results.of(op.name, 'naive');
        const part = (samples: Sample[], field: 'fetch' | 'transform' | 'store') =>
          ms(median(samples.map((s) => s[field] ?? NaN).filter(Number.isFinite)));
        const rest = median(miss.map((s) => s.ms - (s.fetch ?? 0) - (s.transform ?? 0)));
        return [
          op.name,
          part(miss, 'fetch'),
          part(miss, 'transform'),
          ms(rest),
          part(miss, 'store'),
          part(naiveSamples, 'fetch'),
          part(naiveSamples, 'transform'),
          part(naiveSamples, 'store'),
        ];
      }),
    ),
  );
  lines.push('');
  return lines;
}

/** Images per second at concurrency 1 and 2. */
function throughput(r: MissReport): string[] {
  const { results, ops } = r;
  const lines: string[] = [];
  lines.push(
    '**Throughput**, images per second at concurrency 1 / 2 (c=1: photos ÷ the sum of their median times, for a miss the whole invocation; c=2: two requests in flight over the corpus, wall clock):',
  );
  lines.push('');
  const c1 = (op: OpName, mode: Mode) => {
    const perPhoto = [...results.perPhoto(op, mode, undefined, 'invocationMs').values()];
    return perPhoto.length ? perPhoto.length / (sum(perPhoto) / 1000) : NaN;
  };
  const tp = (op: OpName, mode: Mode) => `${perSecond(c1(op, mode))} / ${perSecond(r.throughput?.c2.get(`${op}/${mode}`) ?? NaN)}`;
  lines.push(
    markdownTable(
      ['operation', 'bare sharp', 'handler transform', 'handler miss', 'naive miss'],
      ops.map((op) => [
        op.name,
        tp(op.name, 'bare'),
        `${perSecond(c1(op.name, 'transform'))} / —`,
        tp(op.name, 'miss'),
        tp(op.name, 'naive'),
      ]),
    ),
  );
  lines.push('');
  return lines;
}

/** Bytes and SSIM of both pipelines' outputs. */
function outputQuality(r: MissReport): string[] {
  const lines: string[] = [];
  if (r.quality.length) {
    lines.push(
      '**Output and quality**: bytes summed over the photos both pipelines made at the same size (the sample enlarges sources smaller than the request; those are left out), SSIM against the uncompressed resize, mean over photos (Y: luma; C: mean of Cb and Cr):',
    );
    lines.push('');
    const mean = (values: number[]) => (values.length ? (sum(values) / values.length).toFixed(4) : '—');
    lines.push(
      markdownTable(
        ['operation', 'photos', 'handler bytes', 'naive bytes', 'handler / naive bytes', 'handler SSIM Y / C', 'naive SSIM Y / C'],
        r.quality.map((row) => [
          row.op,
          String(row.photos),
          kb(row.handlerBytes),
          kb(row.naiveBytes),
          ratio(row.handlerBytes / row.naiveBytes),
          `${mean(row.handlerSsim)} / ${mean(row.handlerChroma)}`,
          `${mean(row.naiveSsim)} / ${mean(row.naiveChroma)}`,
        ]),
      ),
    );
    lines.push('');
  }
  return lines;
}

/** Shrink-on-load kept: a full decode against the thumbnail's. */
function decodeCheck(r: MissReport): string[] {
  const { results, decode } = r;
  const lines: string[] = [];
  const thumbOf = (mode: Mode) => results.perPhoto('thumb', mode).get(decode.photo.key);
  if (thumbOf('bare') !== undefined) {
    lines.push(
      `**One decode, shrink-on-load kept:** decoding all of ${decode.photo.key} (${decode.photo.megapixels.toFixed(0)} MP) takes ${ms(decode.fullDecodeMs)} ms; ` +
        `its 200x200 thumbnail takes ${ms(thumbOf('bare')!)} ms in bare sharp and ${ms(thumbOf('transform')!)} ms in the handler's transform (median), ` +
        `which reads the header with metadata() (${ms(decode.metadataMs)} ms) and then runs one pipeline on the same sharp instance.`,
    );
    lines.push('');
  }
  return lines;
}

/** Peak RSS, cold start and the bundle. */
function memory(r: MissReport): string[] {
  const { ops } = r;
  const lines: string[] = [];
  const { largest, cold, rss } = r.children;
  lines.push(
    `**Memory and cold start.** Peak RSS of a fresh process doing one request on the largest photo (${largest.key}, ${largest.width}x${largest.height}, ${kb(largest.bytes.length)}); ` +
      `"handler cold miss" is the bundled Lambda entry point (run through local/harness/lambda-runtime.ts: fetch from LocalStack, transform, the streamed response, then the write), the others work on bytes read from disk:`,
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['operation', 'bare sharp', 'handler transform', 'naive transform', 'handler cold miss', 'cold miss: first response / invocation ms'],
      ops.map((op) => {
        const r = rss.find((row) => row.op === op.name);
        const c = cold.find((row) => row.op === op.name);
        return [
          op.name,
          r ? kb(r.bare) : '—',
          r ? kb(r.transform) : '—',
          r?.naive ? kb(r.naive) : '—',
          c ? kb(c.maxRss) : '—',
          c ? `${ms(c.firstResponseMs)} / ${ms(c.firstCallMs)}` : '—',
        ];
      }),
    ),
  );
  lines.push('');
  const boot = median(cold.map((row) => row.bootMs));
  const imported = median(cold.map((row) => row.importMs));
  const rssAfterImport = median(cold.map((row) => row.rssAfterImport));
  lines.push(
    `Cold init (median of ${cold.length} fresh processes): Node boot ${ms(boot)} ms, then importing the bundled handler ${ms(imported)} ms (sharp and libvips included; RSS ${kb(rssAfterImport)} after import). ` +
      `Bundle: lambda/origin/index.ts with esbuild as the CDK construct builds it (minified CJS, the AWS SDK's ES module builds bundled, sharp external) is ${kb(r.built.originBytes)}, ${kb(r.built.originGzipBytes)} gzipped; sharp and libvips come beside it as node_modules.`,
  );
  lines.push(`Peak RSS of the whole bench process: ${kb(maxRssBytes())}.`);
  if (r.bytesMismatch.length) {
    lines.push('');
    lines.push(
      `Bare and handler outputs differ in size by more than 1% for: ${r.bytesMismatch.join(', ')} (the bare row is then not quite the same work).`,
    );
  }
  return lines;
}

const SECTIONS = [
  header,
  latency,
  gigabyteSeconds,
  composition,
  pooled,
  largeOriginals,
  missParts,
  throughput,
  outputQuality,
  decodeCheck,
  memory,
];

export function missReport(r: MissReport): string {
  return SECTIONS.flatMap((section) => section(r)).join('\n') + '\n';
}
