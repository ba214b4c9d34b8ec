// The benchmark's corpus: real photos from Debian's plasma-workspace-wallpapers
// package (their licences differ from the project's: fetched into the
// git-ignored .cache/, never committed), 20 distinct pictures from 0.1 to
// 18 MP, plus an animated GIF made from one of them. Without apt-get it says
// how to get them and falls back to generated images, labelled as such.

import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { generateSamples } from '../../local/emulator/samples';
import type { SourceFacts } from './ops';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CACHE_DIR = join(PROJECT_ROOT, '.cache', 'bench');
const PACKAGE = 'plasma-workspace-wallpapers';
const DEB_DIR = join(CACHE_DIR, 'deb');
const EXTRACTED = join(CACHE_DIR, 'extracted');
const WALLPAPERS = join(EXTRACTED, 'usr', 'share', 'wallpapers');
/** Only the chosen files, under the keys the benchmark uses (the emulator uploads this folder). */
export const CORPUS_DIR = join(CACHE_DIR, 'corpus');
const GENERATED_DIR = join(CACHE_DIR, 'generated');

interface Pick {
  key: string;
  from: string;
  /** Upscaled once with sharp (cover), for an original larger than the package has. */
  upscale?: [number, number];
}

/** Distinct pictures: 6 of 8 to 18 MP, 10 of 4 to 6.4 MP, 4 of 0.1 to 2 MP. */
const PICKS: Pick[] = [
  // 5120x2880 upscaled to 5184x3456 (18 MP, a 3:2 camera frame), JPEG q92: the only non-original file.
  { key: 'volna-18mp.jpg', from: 'Volna/contents/images/5120x2880.jpg', upscale: [5184, 3456] },
  { key: 'flow-15mp.jpg', from: 'Flow/contents/images/5120x2880.jpg' },
  { key: 'honeywave-15mp.jpg', from: 'Honeywave/contents/images/5120x2880.jpg' },
  { key: 'safelanding-15mp.jpg', from: 'SafeLanding/contents/images/5120x2880.jpg' },
  { key: 'patak-15mp-alpha.png', from: 'Patak/contents/images/5120x2880.png' },
  { key: 'canopee-8mp.png', from: 'Canopee/contents/images/3840x2160.png' },
  { key: 'pastelhills-6mp.jpg', from: 'PastelHills/contents/images/3200x2000.jpg' },
  { key: 'autumn-4mp.jpg', from: 'Autumn/contents/images/2560x1600.jpg' },
  { key: 'bythewater-4mp.jpg', from: 'BytheWater/contents/images/2560x1600.jpg' },
  { key: 'colorfulcups-4mp.jpg', from: 'ColorfulCups/contents/images/2560x1600.jpg' },
  { key: 'eveningglow-4mp.jpg', from: 'EveningGlow/contents/images/2560x1600.jpg' },
  { key: 'fallenleaf-4mp.jpg', from: 'FallenLeaf/contents/images/2560x1600.jpg' },
  { key: 'kite-4mp.jpg', from: 'Kite/contents/images/2560x1600.jpg' },
  { key: 'path-4mp.jpg', from: 'Path/contents/images/2560x1600.jpg' },
  { key: 'grey-4mp-bw.jpg', from: 'Grey/contents/images/2560x1600.jpg' },
  { key: 'onestandsout-4mp.jpg', from: 'OneStandsOut/contents/images/2560x1600.jpg' },
  { key: 'kay-2mp-alpha.png', from: 'Kay/contents/images/1080x1920.png' },
  { key: 'milkyway-2mp.png', from: 'MilkyWay/contents/images/1080x1920.png' },
  { key: 'shell-1mp.jpg', from: 'Shell/contents/images/720x1440.jpg' },
  { key: 'darkesthour-0.1mp.jpg', from: 'DarkestHour/contents/screenshot.jpg' },
];

/** Keys used by --quick: a small, a mid-size and the largest photo. */
export const QUICK_KEYS = ['shell-1mp.jpg', 'autumn-4mp.jpg', 'volna-18mp.jpg'];

/**
 * Animated GIFs panning across two of the photos, 480x300 frames: a busy
 * painting, and a sunset sky whose smooth gradients show what a GIF
 * encoder's palette and dithering do (SSIM alone misjudges dithering).
 */
const ANIMATIONS = [
  { key: 'autumn-pan-16f.gif', from: 'autumn-4mp.jpg', frames: 16, top: 150 },
  { key: 'eveningglow-sky-8f.gif', from: 'eveningglow-4mp.jpg', frames: 8, top: 0 },
];

export interface Photo {
  key: string;
  path: string;
  bytes: Buffer;
  width: number;
  height: number;
  megapixels: number;
  facts: SourceFacts;
}

export interface Corpus {
  /** 'photos' (real photos) or 'generated' (fallback; not photos). */
  kind: 'photos' | 'generated';
  description: string;
  photos: Photo[];
  /** The animated sources for the gif op. */
  animations: Photo[];
  /** The folder holding exactly these files, keyed by name. */
  dir: string;
}

type Log = (line: string) => void;

function run(command: string, args: string[], cwd: string): { ok: boolean; output: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

const HOW_TO = [
  `The benchmark's photos come from Debian's ${PACKAGE} package. To get them by hand:`,
  `  mkdir -p .cache/bench/deb && cd .cache/bench/deb && apt-get download ${PACKAGE}`,
  `  dpkg -x ${PACKAGE}_*.deb ../extracted`,
  '(on a machine without apt, fetch the .deb from https://packages.debian.org/' + PACKAGE + ' and extract it the same way).',
].join('\n');

/** Downloads and extracts the package once; false when that is not possible here. */
async function ensureWallpapers(log: Log): Promise<boolean> {
  if (existsSync(join(WALLPAPERS, 'Volna'))) return true;
  await mkdir(DEB_DIR, { recursive: true });
  const debs = async () => (await readdir(DEB_DIR)).filter((name) => name.startsWith(PACKAGE) && name.endsWith('.deb'));
  if ((await debs()).length === 0) {
    if (run('apt-get', ['--version'], DEB_DIR).ok === false) {
      log(`apt-get is not available.\n${HOW_TO}`);
      return false;
    }
    log(`downloading ${PACKAGE} with apt-get (once, ~90 MB)`);
    let download = run('apt-get', ['download', PACKAGE], DEB_DIR);
    if (!download.ok && /Unable to locate package|no installation candidate/i.test(download.output) && process.getuid?.() === 0) {
      log('apt has no package lists yet: running apt-get update');
      run('apt-get', ['update'], DEB_DIR);
      download = run('apt-get', ['download', PACKAGE], DEB_DIR);
    }
    if (!download.ok) {
      log(`apt-get download ${PACKAGE} failed:\n${download.output.trim()}\n${HOW_TO}`);
      return false;
    }
  }
  const deb = (await debs())[0]!;
  const extract = run('dpkg', ['-x', join(DEB_DIR, deb), EXTRACTED], DEB_DIR);
  if (!extract.ok) {
    log(`dpkg -x ${deb} failed:\n${extract.output.trim()}\n${HOW_TO}`);
    return false;
  }
  return existsSync(join(WALLPAPERS, 'Volna'));
}

async function makeAnimation(source: string, target: string, frames = 16, top = 150): Promise<void> {
  const width = 480;
  const height = 300;
  const image = sharp(source).resize({ height: 600 });
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  const step = Math.floor((info.width - width) / (frames - 1));
  const stacked = Buffer.alloc(width * height * frames * info.channels);
  for (let frame = 0; frame < frames; frame++) {
    const crop = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
      .extract({ left: frame * step, top, width, height })
      .raw()
      .toBuffer();
    crop.copy(stacked, frame * crop.length);
  }
  await sharp(stacked, { raw: { width, height: height * frames, channels: info.channels, pageHeight: height } })
    .gif({ delay: new Array<number>(frames).fill(100), loop: 0 })
    .toFile(target);
}

async function describePhoto(key: string, path: string): Promise<Photo> {
  const bytes = await readFile(path);
  const meta = await sharp(bytes).metadata();
  return {
    key,
    path,
    bytes,
    width: meta.autoOrient.width,
    height: meta.autoOrient.height,
    megapixels: (meta.autoOrient.width * meta.autoOrient.height) / 1e6,
    facts: { format: meta.format, hasAlpha: meta.hasAlpha, pages: meta.pages ?? 1 },
  };
}

async function photoCorpus(log: Log): Promise<Corpus> {
  await mkdir(CORPUS_DIR, { recursive: true });
  for (const pick of PICKS) {
    const target = join(CORPUS_DIR, pick.key);
    if (existsSync(target)) continue;
    const source = join(WALLPAPERS, pick.from);
    if (pick.upscale) {
      log(`making ${pick.key}: ${pick.from} upscaled to ${pick.upscale.join('x')} (once)`);
      await sharp(source).resize(pick.upscale[0], pick.upscale[1], { fit: 'cover' }).jpeg({ quality: 92 }).toFile(target);
    } else {
      await copyFile(source, target);
    }
  }
  for (const animation of ANIMATIONS) {
    const gif = join(CORPUS_DIR, animation.key);
    if (!existsSync(gif)) await makeAnimation(join(CORPUS_DIR, animation.from), gif, animation.frames, animation.top);
  }
  const photos = await Promise.all(PICKS.map((pick) => describePhoto(pick.key, join(CORPUS_DIR, pick.key))));
  return {
    kind: 'photos',
    description: `${photos.length} photos from Debian's ${PACKAGE} (0.1 to 18 MP; volna-18mp.jpg is a 5120x2880 original upscaled to 5184x3456 by sharp), and two animated GIFs of 480x300 frames (16 and 8) cut from two of them`,
    photos,
    animations: await Promise.all(ANIMATIONS.map((animation) => describePhoto(animation.key, join(CORPUS_DIR, animation.key)))),
    dir: CORPUS_DIR,
  };
}

/** GENERATED fallback: the emulator's drawn samples at several sizes. Not photos; figures are not comparable. */
async function generatedCorpus(log: Log): Promise<Corpus> {
  log('FALLING BACK TO GENERATED IMAGES: the figures will not be representative of photos');
  await rm(GENERATED_DIR, { recursive: true, force: true });
  await mkdir(GENERATED_DIR, { recursive: true });
  const samples = await generateSamples();
  const stills = samples.filter((sample) => /\.(jpe?g|png)$/i.test(sample.key));
  const sizes = [5184, 3840, 2560, 1200];
  const photos: Photo[] = [];
  for (const [i, sample] of stills.entries()) {
    const width = sizes[i % sizes.length]!;
    const key = `generated-${i}-${width}.jpg`;
    await sharp(sample.body).resize({ width }).jpeg({ quality: 90 }).toFile(join(GENERATED_DIR, key));
    photos.push(await describePhoto(key, join(GENERATED_DIR, key)));
  }
  const gif = join(GENERATED_DIR, 'generated-pan-16f.gif');
  await makeAnimation(photos[0]!.path, gif);
  return {
    kind: 'generated',
    description: `GENERATED images (${photos.length} drawn samples, not photos: apt-get could not fetch ${PACKAGE})`,
    photos,
    animations: [await describePhoto('generated-pan-16f.gif', gif)],
    dir: GENERATED_DIR,
  };
}

export async function loadCorpus(log: Log): Promise<Corpus> {
  return (await ensureWallpapers(log)) ? photoCorpus(log) : generatedCorpus(log);
}

/** Bytes of every file under a folder (for the report). */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
}

export async function writeCacheFile(name: string, text: string): Promise<string> {
  await mkdir(CACHE_DIR, { recursive: true });
  const path = join(CACHE_DIR, name);
  await writeFile(path, text);
  return path;
}
