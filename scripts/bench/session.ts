// What every study of `npm run bench` shares: progress on stderr, and the
// machine and versions its report's header names.

import { availableParallelism, cpus, totalmem } from 'node:os';
import sharp from 'sharp';

/** Progress and logs of a study, on stderr; the report goes to stdout. */
export interface StudyLog {
  log: (line: string) => void;
  progress: (line: string) => void;
  progressDone: () => void;
  /** The machine and versions, for the report's header. */
  header: string;
}

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const tty = process.stderr.isTTY;
let lastProgressLine = 0;
/** One updating line on a terminal; otherwise (CI, a pipe) a line every 10 s at most. */
export function progress(line: string) {
  if (tty) process.stderr.write(`\r\x1b[2K[bench] ${line}`);
  else if (performance.now() - lastProgressLine > 10_000) {
    lastProgressLine = performance.now();
    process.stderr.write(`[bench] ${line}\n`);
  }
}
export function progressDone() {
  if (tty) process.stderr.write('\r\x1b[2K');
}

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${availableParallelism()} × ${cpu}, ${(totalmem() / 1024 ** 3).toFixed(0)} GB RAM`;
}

export function versions(): string {
  return `Node ${process.version}, sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}`;
}

export const STUDY_LOG: StudyLog = { log, progress, progressDone, header: `${machine()}; ${versions()}` };
