// `npm run bench -- --quality`: the encoder study. For each operation's output
// size, every photo is decoded and resized once (the uncompressed reference),
// then encoded with each candidate setting. Per setting: bytes summed over the
// corpus, mean SSIM (luma, chroma) against the reference, and encode time
// (encoder only, from raw pixels, at this process's sharp.concurrency()). From
// the quality sweeps, "bytes at equal SSIM" interpolates what a family needs
// to match the current default's luma SSIM. The AVIF rows come with a WebP
// sweep at the same size, which is the format=auto decision.

import sharp, { type AvifOptions, type GifOptions, type JpegOptions, type Sharp, type WebpOptions } from 'sharp';
import type { Corpus, Photo } from './corpus';
import { OPS, reference, type OpSpec } from './ops';
import { decodePlanes, prepareReference, ssimImages, type Reference } from './ssim';
import { rgbOf, ssimulacra2 } from './ssimulacra2';
import { kb, markdownTable, mean, median, ms, sum } from './stats';

interface Candidate {
  family: string;
  /** The quality scale of the family's sweep. */
  quality: number;
  encode: (image: Sharp) => Sharp;
  current?: boolean;
}

interface Study {
  op: OpSpec;
  title: string;
  candidates: Candidate[];
  /** Photos for this study (AVIF encodes are slow). */
  photos: (corpus: Corpus) => Photo[];
  /** Scored with SSIMULACRA 2 too, which then decides "bytes at the reference's score" (it costs about 2 s per megapixel here). */
  perceptual?: boolean;
}

const jpeg = (family: string, options: JpegOptions, qualities: number[], currentFamily: boolean): Candidate[] =>
  qualities.map((quality) => ({
    family,
    quality,
    encode: (image) => image.jpeg({ ...options, quality }),
    current: currentFamily && quality === 80,
  }));
const webp = (family: string, options: WebpOptions, qualities: number[], currentFamily: boolean): Candidate[] =>
  qualities.map((quality) => ({
    family,
    quality,
    encode: (image) => image.webp({ ...options, quality }),
    current: currentFamily && quality === 80,
  }));
const avif = (family: string, options: AvifOptions, qualities: number[], currentQuality?: number): Candidate[] =>
  qualities.map((quality) => ({
    family,
    quality,
    encode: (image) => image.avif({ ...options, quality }),
    current: quality === currentQuality,
  }));

const gif = (family: string, options: GifOptions, current = false): Candidate => ({
  family,
  quality: options.effort ?? 7,
  encode: (image) => image.gif(options),
  current,
});
const op = (name: string) => OPS.find((candidate) => candidate.name === name)!;
const all = (corpus: Corpus) => corpus.photos;
const Q = [60, 70, 75, 80, 85, 90];
const Q3 = [70, 80, 90];

const STUDIES: Study[] = [
  {
    op: op('jpeg'),
    title: 'JPEG, 1200 px wide',
    photos: all,
    candidates: [
      ...jpeg('baseline (libjpeg-turbo tables)', { progressive: false }, Q, false),
      ...jpeg('progressive, standard tables (the previous default)', { progressive: true }, Q, true),
      ...jpeg('mozjpeg (trellis, progressive)', { mozjpeg: true }, Q, false),
    ],
  },
  // The settings studies scored with SSIMULACRA 2 (luma SSIM hid a 25-29% difference between AVIF tunes),
  // at 400x400 where the metric costs about a quarter second a photo.
  {
    op: op('op2'),
    title: 'JPEG, 400x400 cover',
    photos: all,
    perceptual: true,
    candidates: [
      ...jpeg('progressive, standard tables (the previous default)', { progressive: true }, Q3, true),
      ...jpeg('mozjpeg (all four below)', { mozjpeg: true }, Q3, false),
      ...jpeg('progressive, trellisQuantisation', { progressive: true, trellisQuantisation: true }, Q3, false),
      ...jpeg('progressive, overshootDeringing', { progressive: true, overshootDeringing: true }, Q3, false),
      ...jpeg('progressive, optimiseScans', { progressive: true, optimiseScans: true }, Q3, false),
      ...jpeg("progressive, quantisationTable 3 (mozjpeg's)", { progressive: true, quantisationTable: 3 }, Q3, false),
      ...jpeg(
        'progressive, quantisationTable 3, optimiseScans',
        { progressive: true, quantisationTable: 3, optimiseScans: true },
        Q3,
        false,
      ),
    ],
  },
  {
    // The 400x400 winners at the JPEG operation's size, on every third photo (SSIMULACRA 2 costs about 2.5 s a photo here).
    op: op('jpeg'),
    title: 'JPEG quantisation table, 1200 px wide (every third photo)',
    photos: (corpus) => corpus.photos.filter((_, index) => index % 3 === 0),
    perceptual: true,
    candidates: [
      ...jpeg('progressive, standard tables (the previous default)', { progressive: true }, [80], true),
      ...jpeg("progressive, quantisationTable 3 (mozjpeg's)", { progressive: true, quantisationTable: 3 }, [75, 80, 85], false),
      ...jpeg(
        'progressive, quantisationTable 3, optimiseScans',
        { progressive: true, quantisationTable: 3, optimiseScans: true },
        [75, 80, 85],
        false,
      ),
    ],
  },
  {
    op: op('op2'),
    title: 'WebP, 400x400 cover',
    photos: all,
    perceptual: true,
    candidates: [
      ...webp('effort 4 (current)', { effort: 4 }, Q3, true),
      ...webp('effort 5', { effort: 5 }, Q3, false),
      ...webp('effort 6', { effort: 6 }, Q3, false),
      ...webp('effort 4, smartSubsample', { effort: 4, smartSubsample: true }, Q3, false),
      ...webp('effort 4, preset photo', { effort: 4, preset: 'photo' }, Q3, false),
    ],
  },
  {
    op: op('op2'),
    title: 'AVIF effort, 400x400 cover (4:2:0, tune iq)',
    photos: all,
    perceptual: true,
    candidates: [
      ...avif('AVIF effort 2 (current)', { effort: 2, chromaSubsampling: '4:2:0' }, [40, 50, 60], 50),
      ...avif('AVIF effort 3', { effort: 3, chromaSubsampling: '4:2:0' }, [40, 50, 60]),
    ],
  },
  {
    op: op('thumb'),
    title: 'JPEG, 200x200 cover (the thumbnail)',
    photos: all,
    candidates: [
      ...jpeg('baseline (libjpeg-turbo tables)', { progressive: false }, [75, 80, 85], false),
      ...jpeg('progressive, standard tables (the previous default)', { progressive: true }, [75, 80, 85], true),
    ],
  },
  {
    op: op('op1'),
    title: 'WebP, 800 px wide',
    photos: all,
    candidates: [
      ...webp('effort 4 (current)', { effort: 4 }, Q, true),
      ...webp('effort 2', { effort: 2 }, Q, false),
      ...webp('effort 4, smartSubsample', { effort: 4, smartSubsample: true }, Q, false),
      ...webp('effort 6', { effort: 6 }, [75, 80, 85], false),
    ],
  },
  {
    op: op('avif'),
    title: 'AVIF (and WebP for format=auto), 1600 px wide',
    photos: all,
    candidates: [
      ...avif('AVIF effort 2, 4:4:4 (current)', { effort: 2 }, [40, 50, 60], 50),
      ...avif('AVIF effort 2, 4:2:0', { effort: 2, chromaSubsampling: '4:2:0' }, [40, 50, 60]),
      ...avif('AVIF effort 1, 4:2:0', { effort: 1, chromaSubsampling: '4:2:0' }, [40, 50, 60]),
      ...avif('AVIF effort 0, 4:2:0', { effort: 0, chromaSubsampling: '4:2:0' }, [40, 50, 60]),
      ...avif('AVIF effort 0, 4:4:4', { effort: 0 }, [40, 50, 60]),
      // Effort 4 (sharp's default, what the AWS sample runs) costs 10x effort 2: see the naive row of the main bench.
      ...webp('WebP effort 4', { effort: 4 }, [70, 80, 90], false),
      ...jpeg('JPEG progressive', { progressive: true }, [80], false),
    ],
  },
  {
    // AVIF's tune (sharp 0.35 defaults lossy AVIF to iq, made for perceptual metrics), at 800 px to keep SSIMULACRA 2 affordable.
    op: op('op1'),
    title: 'AVIF tune, 800 px wide (effort 2, 4:2:0)',
    photos: all,
    perceptual: true,
    candidates: [
      ...avif('AVIF tune iq (sharp default, current)', { effort: 2, chromaSubsampling: '4:2:0', tune: 'iq' }, [40, 50, 60], 50),
      ...avif('AVIF tune ssim', { effort: 2, chromaSubsampling: '4:2:0', tune: 'ssim' }, [40, 50, 60]),
      ...avif('AVIF tune psnr', { effort: 2, chromaSubsampling: '4:2:0', tune: 'psnr' }, [40, 50, 60]),
    ],
  },
  {
    op: op('gif'),
    title: 'Animated GIF, 240 px wide (q: effort; SSIM rewards the banding of undithered output: look at the frames too)',
    photos: (corpus) => corpus.animations,
    candidates: [
      gif('GIF effort 7 (sharp default, current)', { effort: 7 }, true),
      gif('GIF effort 6', { effort: 6 }),
      gif('GIF effort 5', { effort: 5 }),
      gif('GIF effort 3', { effort: 3 }),
      gif('GIF effort 1', { effort: 1 }),
      gif('GIF effort 1, no dithering', { effort: 1, dither: 0 }),
    ],
  },
];

interface Row {
  candidate: Candidate;
  bytes: number[];
  /** SSIMULACRA 2, for a perceptual study. */
  score: number[];
  ssimY: number[];
  ssimC: number[];
  encodeMs: number[];
  /** CPU time of the process during the encode (all libvips threads): steadier than wall time on a shared machine. */
  encodeCpuMs: number[];
}

/** Total bytes a family needs to reach `targetSsim` (a mean score: luma SSIM, or SSIMULACRA 2), interpolated along its quality sweep. */
export function bytesAtSsim(points: { ssim: number; bytes: number }[], targetSsim: number): number {
  const sorted = [...points].sort((a, b) => a.ssim - b.ssim);
  if (sorted.length === 0) return NaN;
  if (targetSsim < sorted[0]!.ssim || targetSsim > sorted[sorted.length - 1]!.ssim) {
    const exact = sorted.find((point) => Math.abs(point.ssim - targetSsim) < 1e-9);
    return exact ? exact.bytes : NaN; // outside the sweep: not extrapolated
  }
  for (let i = 1; i < sorted.length; i++) {
    const low = sorted[i - 1]!;
    const high = sorted[i]!;
    if (targetSsim <= high.ssim) {
      const t = high.ssim === low.ssim ? 0 : (targetSsim - low.ssim) / (high.ssim - low.ssim);
      return low.bytes + t * (high.bytes - low.bytes);
    }
  }
  return sorted[sorted.length - 1]!.bytes;
}

export async function qualityStudy(
  corpus: Corpus,
  options: {
    quick: boolean;
    ops: string[];
    log: (line: string) => void;
    progress: (line: string) => void;
    progressDone: () => void;
    header: string;
  },
): Promise<string> {
  const lines: string[] = [];
  lines.push(`### Encoder study, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  lines.push('');
  lines.push(
    `${options.header}; sharp.concurrency() ${sharp.concurrency()} (encode times are one request on ${sharp.concurrency()} libvips thread(s)). Corpus: ${corpus.description}. \`npm run bench -- --quality${options.quick ? ' --quick' : ''}\`.`,
  );
  lines.push('');
  for (const study of STUDIES.filter((candidate) => options.ops.includes(candidate.op.name))) {
    const measured = await measureStudy(study, corpus, options);
    lines.push(...studyReport(study, measured));
  }
  return lines.join('\n');
}

/** Every candidate of `study` on its photos: bytes, scores and encode times. */
async function measureStudy(
  study: Study,
  corpus: Corpus,
  options: { log: (line: string) => void; progress: (line: string) => void; progressDone: () => void },
) {
  const photos = study.photos(corpus);
  const rows = study.candidates.map((candidate): Row => ({
    candidate,
    bytes: [],
    score: [],
    ssimY: [],
    ssimC: [],
    encodeMs: [],
    encodeCpuMs: [],
  }));
  const resizeMs: { photo: Photo; ms: number }[] = [];
  for (const [index, photo] of photos.entries()) {
    const cpuStart = process.cpuUsage();
    const ref = await reference(study.op, photo.bytes, photo.facts);
    const cpu = process.cpuUsage(cpuStart);
    resizeMs.push({ photo, ms: (cpu.user + cpu.system) / 1000 });
    const raw = { width: ref.info.width, height: ref.info.height, channels: ref.info.channels as 3 };
    const planes: Reference = prepareReference(await decodePlanes({ data: ref.data, ...raw }));
    // Frames of an animation stay frames when encoded.
    const rawInput = { ...raw, ...(photo.facts.pages > 1 ? { pageHeight: ref.info.pageHeight ?? ref.info.height } : {}) };
    for (const row of rows) {
      options.progress(`${study.title} · ${index + 1}/${photos.length} ${photo.key} · ${row.candidate.family} q${row.candidate.quality}`);
      const encodeStart = performance.now();
      const cpuStart = process.cpuUsage();
      const out = await row.candidate.encode(sharp(ref.data, { raw: rawInput })).toBuffer();
      const cpu = process.cpuUsage(cpuStart);
      row.encodeMs.push(performance.now() - encodeStart);
      row.encodeCpuMs.push((cpu.user + cpu.system) / 1000);
      const ssim = await ssimImages(planes, out);
      if (study.perceptual) row.score.push(ssimulacra2({ data: ref.data, width: raw.width, height: raw.height }, await rgbOf(out)));
      row.bytes.push(out.length);
      row.ssimY.push(ssim.y);
      row.ssimC.push(ssim.c);
    }
  }
  options.progressDone();
  options.log(`${study.title} done`);
  return { photos, rows, resizeMs };
}

/** A study's table, against its reference setting. */
function studyReport(study: Study, { photos, rows, resizeMs }: Awaited<ReturnType<typeof measureStudy>>): string[] {
  const lines: string[] = [];
  const current = rows.find((row) => row.candidate.current) ?? rows[0]!;
  const decisive = (row: Row) => (study.perceptual ? row.score : row.ssimY);
  const target = mean(decisive(current));
  const currentBytes = sum(current.bytes);
  const families = [...new Set(rows.map((row) => row.candidate.family))];
  const atTarget = new Map(
    families.map((family) => {
      const points = rows
        .filter((row) => row.candidate.family === family)
        .map((row) => ({ ssim: mean(decisive(row)), bytes: sum(row.bytes) }));
      return [family, bytesAtSsim(points, target)];
    }),
  );
  const metric = study.perceptual ? `mean SSIMULACRA 2 ${target.toFixed(2)}` : `mean SSIM Y ${target.toFixed(4)}`;
  lines.push(
    `**${study.title}** (${photos.length} photos; reference: ${current.candidate.family} q${current.candidate.quality}, ${metric}, ${kb(currentBytes)}):`,
  );
  lines.push('');
  lines.push(
    markdownTable(
      [
        'setting',
        'q',
        'bytes (sum)',
        'vs reference',
        ...(study.perceptual ? ['SSIMULACRA 2'] : []),
        'SSIM Y',
        'SSIM C',
        'encode CPU ms median',
        'encode CPU ms max',
        'encode wall ms median',
        'decode+resize+encode CPU ms, max over ≥ 8 MP',
        `family: bytes at reference ${study.perceptual ? 'SSIMULACRA 2' : 'SSIM'}`,
      ],
      rows.map((row) => [
        row.candidate.family,
        String(row.candidate.quality),
        kb(sum(row.bytes)),
        `${((sum(row.bytes) / currentBytes - 1) * 100).toFixed(1)}%`,
        ...(study.perceptual ? [mean(row.score).toFixed(2)] : []),
        mean(row.ssimY).toFixed(4),
        mean(row.ssimC).toFixed(4),
        ms(median(row.encodeCpuMs)),
        ms(Math.max(...row.encodeCpuMs)),
        ms(median(row.encodeMs)),
        ms(Math.max(...photos.map((photo, i) => (photo.megapixels >= 8 ? resizeMs[i]!.ms + row.encodeCpuMs[i]! : 0)))),
        (() => {
          const at = atTarget.get(row.candidate.family)!;
          return Number.isFinite(at) ? `${kb(at)} (${((at / currentBytes - 1) * 100).toFixed(1)}%)` : 'outside sweep';
        })(),
      ]),
    ),
  );
  const large = resizeMs.filter((entry) => entry.photo.megapixels >= 8).map((entry) => entry.ms);
  lines.push('');
  lines.push(
    `Decode + resize before encoding (CPU ms): median ${ms(median(resizeMs.map((entry) => entry.ms)))}, photos of 8 MP or more ${large.length ? `median ${ms(median(large))}, max ${ms(Math.max(...large))}` : 'none'}.`,
  );
  lines.push('');
  lines.push(
    'Encode CPU ms per photo for the reference setting: ' +
      photos.map((photo, i) => `${photo.key} ${ms(current.encodeCpuMs[i]!)}`).join(', ') +
      '.',
  );
  lines.push('');
  return lines;
}
