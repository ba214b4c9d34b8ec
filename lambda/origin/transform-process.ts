// The transform runs in a warm child process, never on the handler's own
// thread, because that is the only place where the work can really be stopped:
// sharp's `timeout` does not cover the encoders, and terminating a worker
// thread leaves libvips' threads running. At the deadline the child is killed
// (SIGKILL ends every thread it has) and a fresh one is started for the next
// request, so no work of a request outlives its answer, and the handler's
// event loop stays free for timers and other requests whatever the source is.
//
// The child is this same module (in Lambda, the same bundled file), started
// with TRANSFORM_CHILD set. It loads sharp only then: the parent never does.
//
// A job's description and its answer cross the IPC channel; the source's and
// the variant's bytes cross a socket pair of their own, each once, into a
// buffer of their exact size. Through IPC (even its advanced serialisation)
// a variant was copied into the message, gathered in chunks, joined and
// decoded: about three copies in each process at once, where the memory model
// counts one.

import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { errorStack } from '../common/log';
import type { Ops } from '../grammar';
import { HttpError, type ErrorCode } from './errors';
import type { Limits } from './config';
import type { Budget } from './image/budget';
import type { TransformedVariant, TransformOptions } from './image/transform';
import type { WatermarkImage } from './watermarks';

/** Set in the child's environment: this process serves transforms. */
const CHILD_FLAG = 'TRANSFORM_CHILD';

/** The child's descriptor of the byte socket: after stdin, stdout, stderr and the IPC channel. */
const BYTES_FD = 4;

export interface TransformJob {
  bytes: Buffer;
  ops: Ops;
  limits: Limits;
  budget: Budget;
  options?: TransformOptions;
}

/** What the child measured, when the system tells: its resident memory before the job and its peak during it (MB). */
export interface ChildReport {
  startRssMb: number;
  peakRssMb?: number;
  /** CPU seconds the child used for the job. */
  cpuSeconds: number;
}

export interface TransformResult {
  variant: TransformedVariant;
  report: ChildReport;
}

/** A watermark as it crosses the IPC channel: its placement, and how many of the bytes that follow are its. */
type SentWatermark = Omit<WatermarkImage, 'bytes'> & { byteLength: number };

/** A job as it crosses the IPC channel: its bytes (the source's, then each watermark's in turn) follow on the byte socket. */
interface JobMessage extends Omit<TransformJob, 'bytes' | 'options'> {
  options: Omit<TransformOptions, 'watermarks'> & { watermarks?: { [op: string]: SentWatermark } };
  sourceBytes: number;
  watermarkBytes: number;
}

/**
 * `retire`: the child should not serve again (its memory no longer matches the model); it is replaced at once.
 * A variant's body follows on the byte socket, `bodyBytes` long.
 */
type ChildAnswer = { retire: boolean } & (
  | { ok: true; variant: Omit<TransformedVariant, 'body'>; bodyBytes: number; report: ChildReport }
  | { ok: false; code: ErrorCode; message: string; detail?: string; bug?: boolean; report: ChildReport }
);

export interface TransformProcesses {
  /**
   * Runs one transform in an idle child (started if none is idle). At
   * `deadline` (a performance.now() time) the child is killed and the promise
   * rejects with a 504 HttpError; if the child dies for any other reason, with a 500.
   * When `cancel` aborts, the child is killed too and the promise rejects with its reason.
   */
  run(job: TransformJob, deadline: number, cancel?: AbortSignal): Promise<TransformResult>;
  /** Settles once every child alive now has started (Node and libvips loaded). */
  ready(): Promise<void>;
  /** The pids of the children alive now (for measurements). */
  pids(): number[];
  /** Kills every child. */
  close(): void;
}

/** Rejects with the signal's reason once it aborts. */
function whenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** The parent's end of a child's byte socket. */
const bytesOf = (child: ChildProcess) => child.stdio[BYTES_FD] as Socket;

/** A child at work keeps the parent's event loop alive; an idle one does not. */
function hold(child: ChildProcess): void {
  child.ref();
  child.channel?.ref();
  bytesOf(child).ref();
}

function letGo(child: ChildProcess): void {
  child.unref();
  child.channel?.unref();
  bytesOf(child).unref();
}

/**
 * The next `length` bytes of `socket`, read into one buffer of that size: a
 * large body is held once, never as its chunks and their join. The socket is
 * paused between reads; what arrives beyond `length` is kept for the next.
 */
function readExactly(socket: Socket, length: number): Promise<Buffer> {
  const target = Buffer.allocUnsafe(length);
  if (length === 0) return Promise.resolve(target);
  let filled = 0;
  return new Promise((resolve, reject) => {
    const stop = () => {
      socket.pause();
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      const taken = Math.min(chunk.length, length - filled);
      chunk.copy(target, filled, 0, taken);
      filled += taken;
      if (filled < length) return;
      stop();
      if (taken < chunk.length) socket.unshift(chunk.subarray(taken));
      resolve(target);
    };
    const onClose = () => {
      stop();
      reject(new Error(`the byte socket closed after ${filled} of ${length} bytes`));
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}

function childEnded(code: number | null, signal: string | null): HttpError {
  return new HttpError(
    'internal_error',
    'The service failed unexpectedly; try again shortly.',
    `transform process ended (code ${code}, signal ${signal})`,
  );
}

/** Node itself, without the parent's flags; TypeScript sources (tests, `npm start`) need tsx's loader. */
function childExecArgv(entry: string): string[] {
  return entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
}

/** The job's description on the IPC channel, its bytes on the byte socket, each written once. */
function sendJob(child: ChildProcess, { bytes, options = {}, ...job }: TransformJob): void {
  const { watermarks = {}, ...rest } = options;
  const marks = Object.entries(watermarks);
  const sent = marks.map(([op, mark]): [string, SentWatermark] => [op, { placement: mark.placement, byteLength: mark.bytes.length }]);
  const message: JobMessage = {
    ...job,
    options: { ...rest, ...(marks.length ? { watermarks: Object.fromEntries(sent) } : {}) },
    sourceBytes: bytes.length,
    watermarkBytes: marks.reduce((sum, [, mark]) => sum + mark.bytes.length, 0),
  };
  child.send(message);
  bytesOf(child).write(bytes);
  for (const [, mark] of marks) bytesOf(child).write(mark.bytes);
}

/** The watermarks `sent` with their bytes, which follow the source's in `received`, in turn. */
function receivedWatermarks(
  sent: { [op: string]: SentWatermark },
  received: Buffer,
  sourceBytes: number,
): { [op: string]: WatermarkImage } {
  let start = sourceBytes;
  return Object.fromEntries(
    Object.entries(sent).map(([op, { placement, byteLength }]) => {
      start += byteLength;
      return [op, { placement, bytes: received.subarray(start - byteLength, start) }];
    }),
  );
}

/**
 * Sends `job` to `child` and settles with its answer, or at `deadline`, the
 * child's exit or `cancel`; `release` has the child back first, healthy or not.
 */
function exchange(
  child: ChildProcess,
  job: TransformJob,
  deadline: number,
  release: (healthy: boolean) => void,
  cancel?: AbortSignal,
): Promise<TransformResult> {
  return new Promise<TransformResult>((resolve, reject) => {
    let settled = false;
    const settle = (healthy: boolean, outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      cancel?.removeEventListener('abort', onCancel);
      release(healthy);
      // A child killed here is gone (reaped) before the answer, so no work of the request outlives it.
      if (healthy || child.exitCode !== null || child.signalCode !== null) outcome();
      else child.once('exit', outcome);
    };
    const onMessage = (answer: ChildAnswer) => {
      if (!answer.ok) {
        settle(!answer.retire, () =>
          reject(answer.bug ? new Error(answer.detail ?? answer.message) : new HttpError(answer.code, answer.message, answer.detail)),
        );
        return;
      }
      // The body follows; the deadline and the child's exit still apply until it is in.
      readExactly(bytesOf(child), answer.bodyBytes).then(
        (body) => settle(!answer.retire, () => resolve({ variant: { ...answer.variant, body }, report: answer.report })),
        () => {}, // the child ended: onExit answers
      );
    };
    const onExit = (code: number | null, signal: string | null) => settle(false, () => reject(childEnded(code, signal)));
    const timer = setTimeout(
      () =>
        settle(false, () =>
          reject(new HttpError('timeout', 'The image took too long to transform.', 'transform process killed at the deadline')),
        ),
      Math.max(0, deadline - performance.now()),
    );
    const onCancel = () => settle(false, () => reject(cancel?.reason));
    cancel?.addEventListener('abort', onCancel);
    child.on('message', onMessage);
    child.once('exit', onExit);
    sendJob(child, job);
  });
}

/**
 * A pool of warm transform children, at most `size` busy at once (Lambda
 * serves one request per environment: 1; the local emulator serves several).
 * Requests beyond `size` wait for a child.
 */
/**
 * This module's file: in Lambda, the CommonJS bundle the construct builds (where
 * esbuild leaves `import.meta` empty); from the sources, the ES module itself.
 */
const THIS_FILE = typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);

export function transformProcesses(size = 1, entry = THIS_FILE): TransformProcesses {
  const idle: ChildProcess[] = [];
  const all = new Set<ChildProcess>();
  const ready = new WeakMap<ChildProcess, Promise<void>>();
  const waiting: (() => void)[] = [];

  function start(): ChildProcess {
    const child = fork(entry, [], {
      env: { ...process.env, [CHILD_FLAG]: '1' },
      execArgv: childExecArgv(entry),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'],
    });
    all.add(child);
    // A child killed mid-transfer breaks the socket: its exit is what the request is told.
    bytesOf(child)
      .on('error', () => {})
      .pause();
    // The child says 'ready' once sharp is loaded; until then it is starting, not working.
    const started = new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code, signal) => reject(childEnded(code, signal)));
    });
    started.catch(() => {}); // a child that dies unused is only replaced
    ready.set(child, started);
    child.once('exit', () => {
      bytesOf(child).destroy();
      all.delete(child);
      const at = idle.indexOf(child);
      if (at !== -1) idle.splice(at, 1);
    });
    return child;
  }

  /** A child nobody else is using; an idle child stops holding the parent's event loop open. */
  async function acquire(): Promise<ChildProcess> {
    while (idle.length === 0 && all.size >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    const child = idle.pop() ?? start();
    hold(child);
    return child;
  }

  function release(child: ChildProcess, healthy: boolean) {
    if (healthy) {
      letGo(child);
      idle.push(child);
    } else {
      child.kill('SIGKILL');
      bytesOf(child).destroy();
      all.delete(child);
      // Warm a replacement now, so the next request does not wait for Node and libvips to load.
      if (all.size < size) release(start(), true);
    }
    waiting.shift()?.();
  }

  async function run(job: TransformJob, deadline: number, cancel?: AbortSignal): Promise<TransformResult> {
    cancel?.throwIfAborted();
    const child = await acquire();
    // A child still starting (a cold start, or the one replacing a killed child) costs the request no budget.
    const waited = performance.now();
    try {
      await Promise.race([ready.get(child), ...(cancel ? [whenAborted(cancel)] : [])]);
    } catch (error) {
      release(child, cancel?.aborted === true); // cancelled: the child is fine; else it died starting
      throw error;
    }
    deadline += performance.now() - waited;
    return exchange(child, job, deadline, (healthy) => release(child, healthy), cancel);
  }

  release(start(), true);
  return {
    run,
    ready: async () => {
      // Waiting keeps the process alive, as a request would; idle children then let it go again.
      const starting = [...all];
      starting.forEach(hold);
      await Promise.all(starting.map((child) => ready.get(child)?.catch(() => undefined)));
      starting.filter((child) => idle.includes(child)).forEach(letGo);
    },
    pids: () => [...all].map((child) => child.pid).filter((pid): pid is number => pid !== undefined),
    close: () => {
      size = 0;
      [...all].forEach((child) => release(child, false));
    },
  };
}

// ------------------------------------------------------------------ the child

/** The kernel's peak resident set of this process, in MB, or undefined off Linux. */
function peakRssMb(): number | undefined {
  try {
    const kb = /VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** Resets the peak so that the next reading is this job's (Linux: clear_refs 5). */
function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: the peak then spans the child's life, an upper bound.
  }
}

/** Sends to the parent; once it has gone (killed this child's request, or ended), there is no one to tell. */
function answer(message: ChildAnswer | 'ready'): void {
  if (process.connected) process.send?.(message, undefined, undefined, () => {});
}

async function serveTransforms(): Promise<void> {
  const [{ transform }, { renderCard }, { configureSharp }, { heifDecoderLoaded }] = await Promise.all([
    import('./image/transform'),
    import('./image/card'),
    import('./sharp-settings'),
    import('./image/heif'),
  ]);
  configureSharp();
  const bytes = new Socket({ fd: BYTES_FD, readable: true, writable: true });
  bytes.pause();
  answer('ready');
  // The parent gone (its invocation environment ended, or a test run), nothing is left to serve.
  process.on('disconnect', () => process.exit(0));
  process.on('message', async ({ sourceBytes, watermarkBytes, options: { watermarks = {}, ...options }, ...job }: JobMessage) => {
    // The job's bytes are counted apart from its work (budgetFor): the work is measured from here.
    const received = await readExactly(bytes, sourceBytes + watermarkBytes).catch(() => undefined);
    if (!received) return; // the socket closed: the parent has gone
    resetPeakRss();
    const startRssMb = process.memoryUsage.rss() / 1024 / 1024;
    const cpu = process.cpuUsage();
    const report = (): ChildReport => {
      const used = process.cpuUsage(cpu);
      return { startRssMb, peakRssMb: peakRssMb(), cpuSeconds: (used.user + used.system) / 1e6 };
    };
    let result: ChildAnswer;
    let body: Buffer | undefined;
    try {
      const source = received.subarray(0, sourceBytes);
      const marks = receivedWatermarks(watermarks, received, sourceBytes);
      // A card's images are its source's bytes, one after another (card.ts).
      const { body: made, ...variant } = options.card
        ? await renderCard(source, job.ops, options.card, job.limits, job.budget)
        : await transform(source, job.ops, job.limits, job.budget, { ...options, watermarks: marks });
      body = made;
      result = { ok: true, variant, bodyBytes: made.length, report: report(), retire: heifDecoderLoaded() };
    } catch (error) {
      const failure =
        error instanceof HttpError
          ? { ok: false as const, code: error.code, message: error.message, detail: error.detail }
          : { ok: false as const, code: 'internal_error' as const, message: String(error), detail: errorStack(error), bug: true };
      result = { ...failure, report: report(), retire: heifDecoderLoaded() };
    }
    answer(result);
    if (body) bytes.write(body);
  });
}

/** Whether this process is a transform child (then it serves transforms and nothing else). */
export const isTransformChild = process.env[CHILD_FLAG] === '1' && process.send !== undefined;

if (isTransformChild) void serveTransforms();
