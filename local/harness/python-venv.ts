// Python tools the project runs (LocalStack, cfn-lint) live in venvs under
// <project root>/.localstack/, each built from a pinned requirements file with
// Python 3.13: the one version LocalStack works with (3.11 and 3.12 start but
// fail on every S3 call), so a machine that runs the tests has it anyway.
// A venv is rebuilt when its pins or the Python version change; two processes
// (`npm start` and `npm test`) never build one at the same time.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const STATE_DIR = join(PROJECT_ROOT, '.localstack');
export const LOG_DIR = join(STATE_DIR, 'logs');

const LOCK_WAIT_MS = 10 * 60_000; // another process may be doing a minute-long install

export interface VenvSpec {
  /** Folder name under .localstack/, e.g. `venv`. */
  name: string;
  /** The pinned requirements file. */
  requirements: string;
  /** What the venv is for, in messages: e.g. `LocalStack`. */
  purpose: string;
  log(line: string): void;
}

interface Python {
  path: string;
  version: string; // e.g. "Python 3.13.0"
}

/** The venv's python, building the venv first if it is missing or out of date. */
export async function ensureVenv(spec: VenvSpec): Promise<string> {
  const python = findPython313(spec.purpose);
  const venv = join(STATE_DIR, spec.name);
  await withInstallLock(spec, () => buildVenv(spec, venv, python));
  return join(venv, 'bin', 'python');
}

// ---------------------------------------------------------------- python

function findPython313(purpose: string): Python {
  // An explicit choice that does not work is an error, not something to skip.
  const fromEnv = process.env.PYTHON;
  if (fromEnv) {
    const version = python313Version(fromEnv);
    if (version) return { path: fromEnv, version };
    throw new Error(
      `PYTHON=${fromEnv} is not a working Python 3.13 (${purpose} needs 3.13). ` +
        'Point PYTHON at a python3.13 binary, or unset it to let the project search for one.',
    );
  }

  // Run each one rather than trusting PATH: a pyenv shim exists even when it cannot run 3.13.
  const candidates = ['python3.13', ...pyenvPythons(), '/usr/bin/python3.13', '/usr/local/bin/python3.13'];
  for (const candidate of candidates) {
    const version = python313Version(candidate);
    if (version) return { path: candidate, version };
  }

  throw new Error(
    [
      `${purpose} needs Python 3.13 (3.11 and 3.12 do not work with localstack-core 4.14) and none was found.`,
      `Tried: $PYTHON (unset), python3.13 on PATH, ${pyenvRoot()}/versions/3.13*/bin/python3.13,`,
      '       /usr/bin/python3.13, /usr/local/bin/python3.13.',
      'Fix it with one of:',
      '  - install Python 3.13: `pyenv install 3.13`, or the OS package',
      '    (e.g. `apt-get install python3.13 python3.13-venv`, `brew install python@3.13`);',
      '  - set PYTHON=/path/to/python3.13;',
      '  - for S3 only: set AWS_ENDPOINT_URL_S3 to an S3 endpoint that is already running (e.g. http://127.0.0.1:4566).',
    ].join('\n'),
  );
}

function pyenvRoot(): string {
  return process.env.PYENV_ROOT ?? join(homedir(), '.pyenv');
}

function pyenvPythons(): string[] {
  const versions = join(pyenvRoot(), 'versions');
  let names: string[];
  try {
    names = readdirSync(versions).filter((name) => /^3\.13(\.|$)/.test(name));
  } catch {
    return [];
  }
  // Newest patch release first.
  names.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return names.map((name) => join(versions, name, 'bin', 'python3.13'));
}

function python313Version(executable: string): string | undefined {
  const result = spawnSync(executable, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
  return result.status === 0 && /^Python 3\.13\.\d+/.test(output) ? output : undefined;
}

// ---------------------------------------------------------------- venv

async function buildVenv(spec: VenvSpec, venv: string, python: Python): Promise<void> {
  // A new pin set, or another Python version, means a new venv. (Not the
  // Python's path: PYTHON=... and a PATH search may name the same one.)
  const stamp = createHash('sha256').update(readFileSync(spec.requirements)).update(`\n${python.version}`).digest('hex');
  const stampFile = join(venv, '.installed');
  const current = await readFile(stampFile, 'utf8').catch(() => '');
  if (current.trim() === stamp && existsSync(join(venv, 'bin', 'python'))) return;

  const started = Date.now();
  spec.log(`installing ${spec.purpose} into ${venv} with ${python.version} (about a minute, once)`);
  // Build in a directory of our own and rename it into place when complete, so
  // an interrupted install never leaves a half-built venv, not even with a pip
  // still running after its parent was killed. (Scripts in bin/ keep the
  // temporary path in their #! line; only bin/python is ever run.)
  const building = `${venv}.partial-${process.pid}`;
  await removePartialVenvs(spec.name);
  await mkdir(LOG_DIR, { recursive: true });
  const pipLog = join(LOG_DIR, `${spec.name}-install.log`);
  await writeFile(pipLog, '');
  const seconds = () => Math.round((Date.now() - started) / 1000);
  // A sign of life for CI logs; pip's own output goes to pipLog.
  const heartbeat = setInterval(() => spec.log(`still installing (${seconds()} s, details in ${pipLog})`), 15_000);
  try {
    await run(python.path, ['-m', 'venv', building], pipLog, 'creating the venv (on Debian/Ubuntu: apt-get install python3.13-venv)');
    await run(
      join(building, 'bin', 'python'),
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', '-r', spec.requirements],
      pipLog,
      `pip install -r ${relative(PROJECT_ROOT, spec.requirements)}`,
    );
  } finally {
    clearInterval(heartbeat);
  }
  await writeFile(join(building, '.installed'), `${stamp}\n`);
  await rm(venv, { recursive: true, force: true });
  await rename(building, venv);
  await removePartialVenvs(spec.name); // again: a pip left running may have written more
  spec.log(`installed in ${seconds()} s`);
}

/** Leftovers of interrupted installs (we hold the install lock, so none is live). */
async function removePartialVenvs(name: string): Promise<void> {
  for (const entry of await readdir(STATE_DIR)) {
    if (entry.startsWith(`${name}.partial-`)) await rm(join(STATE_DIR, entry), { recursive: true, force: true });
  }
}

function run(command: string, args: string[], logFile: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fd = openSync(logFile, 'a');
    const child = spawn(command, args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.on('error', (error) => reject(new Error(`${what} failed: ${describe(error)}`)));
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${what} failed (${signal ?? `exit code ${code}`}). End of ${logFile}:\n${tail(logFile)}`));
    });
  });
}

// Only one process may build a venv at a time. mkdir is atomic, so the lock is
// a directory holding the owner's pid.
async function withInstallLock<T>(spec: VenvSpec, body: () => Promise<T>): Promise<T> {
  const lockDir = join(STATE_DIR, `${spec.name}.install.lock`);
  await mkdir(STATE_DIR, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  let said = false;
  for (;;) {
    try {
      await mkdir(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (lockIsStale(lockDir)) {
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}; remove it if no install is running`);
    if (!said) spec.log(`another process is installing or checking ${spec.purpose}; waiting for it`);
    said = true;
    await sleep(500);
  }
  try {
    await writeFile(join(lockDir, 'pid'), String(process.pid));
    return await body();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

function lockIsStale(lockDir: string): boolean {
  let pid = NaN;
  try {
    pid = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
  } catch {
    // no pid file yet
  }
  if (!Number.isInteger(pid) || pid <= 0) {
    // The owner is between mkdir and writeFile, unless it died right there.
    try {
      return Date.now() - statSync(lockDir).mtimeMs > 30_000;
    } catch {
      return false; // the lock went away meanwhile; just retry
    }
  }
  try {
    process.kill(pid, 0); // throws if that process is gone
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM'; // EPERM: alive, another user's
  }
}

// ---------------------------------------------------------------- helpers

export function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
