// cfn-lint (AWS's CloudFormation linter, a Python tool) for the template tests.
// Installed once into <project>/.localstack/cfn-lint-venv (git-ignored) from the
// pinned test/infra/cfn-lint-requirements.txt, with a Python >= 3.12 found the
// way local/localstack.ts finds one: $PYTHON, python3.13 on PATH, pyenv's
// versions, the usual system paths, then python3.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STATE_DIR = join(PROJECT_ROOT, '.localstack');
const VENV_DIR = join(STATE_DIR, 'cfn-lint-venv');
const STAMP_FILE = join(VENV_DIR, '.installed');
const LOCK_DIR = join(STATE_DIR, 'cfn-lint-install.lock');
const REQUIREMENTS = fileURLToPath(new URL('./cfn-lint-requirements.txt', import.meta.url));
const CFN_LINT = join(VENV_DIR, 'bin', 'cfn-lint');
const MIN_MINOR = 12; // networkx 3.7 in the pinned set needs 3.12

interface Python {
  path: string;
  version: string;
}

function pythonVersion(executable: string): string | undefined {
  const result = spawnSync(executable, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
  const match = /^Python 3\.(\d+)\.\d+/.exec(output);
  return result.status === 0 && match && Number(match[1]) >= MIN_MINOR ? output : undefined;
}

function pyenvPythons(): string[] {
  const versions = join(process.env.PYENV_ROOT ?? join(homedir(), '.pyenv'), 'versions');
  let names: string[];
  try {
    names = readdirSync(versions).filter((name) => /^3\.(1[2-9]|[2-9]\d)(\.|$)/.test(name));
  } catch {
    return [];
  }
  names.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return names.map((name) => join(versions, name, 'bin', 'python3'));
}

export function findPython(): Python {
  const fromEnv = process.env.PYTHON;
  if (fromEnv) {
    const version = pythonVersion(fromEnv);
    if (version) return { path: fromEnv, version };
    throw new Error(`PYTHON=${fromEnv} is not a working Python >= 3.${MIN_MINOR} (cfn-lint's pinned set needs it).`);
  }
  const candidates = ['python3.13', ...pyenvPythons(), '/usr/bin/python3.13', '/usr/local/bin/python3.13', 'python3.12', 'python3'];
  for (const candidate of candidates) {
    const version = pythonVersion(candidate);
    if (version) return { path: candidate, version };
  }
  throw new Error(
    `cfn-lint needs Python >= 3.${MIN_MINOR} and none was found (tried $PYTHON, python3.13, pyenv versions, ` +
      '/usr/bin/python3.13, /usr/local/bin/python3.13, python3.12, python3). Install Python 3.13 or set PYTHON.',
  );
}

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function must(command: string, args: string[], what: string): Promise<void> {
  const result = await run(command, args);
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`.slice(-4000));
}

/** Two test files (or a test run and a developer) may install at once: mkdir is the lock. */
async function withLock<T>(body: () => Promise<T>): Promise<T> {
  await mkdir(STATE_DIR, { recursive: true });
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      await mkdir(LOCK_DIR);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (await stat(LOCK_DIR).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 10 * 60_000) await rm(LOCK_DIR, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`Timed out waiting for ${LOCK_DIR} (remove it if no install is running).`);
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await body();
  } finally {
    await rm(LOCK_DIR, { recursive: true, force: true });
  }
}

/**
 * The venv's cfn-lint, installed first if the venv is missing or its pins
 * changed. (Its console script's #! line names the temporary build directory;
 * cfnLint() runs the entry point with the venv's python instead.)
 */
export async function ensureCfnLint(): Promise<string> {
  return withLock(async () => {
    const python = findPython();
    const stamp = createHash('sha256').update(readFileSync(REQUIREMENTS)).update(`\n${python.version}`).digest('hex');
    const current = await readFile(STAMP_FILE, 'utf8').catch(() => '');
    if (current.trim() === stamp && existsSync(CFN_LINT)) return CFN_LINT;

    // Built aside and renamed into place, so an interrupted install leaves no half venv.
    const building = `${VENV_DIR}.partial-${process.pid}`;
    await rm(building, { recursive: true, force: true });
    await must(python.path, ['-m', 'venv', building], `${python.path} -m venv`);
    await must(
      join(building, 'bin', 'python'),
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', '-r', REQUIREMENTS],
      'pip install -r test/infra/cfn-lint-requirements.txt',
    );
    await writeFile(join(building, '.installed'), `${stamp}\n`);
    await rm(VENV_DIR, { recursive: true, force: true });
    await rename(building, VENV_DIR);
    return CFN_LINT;
  });
}

export interface CfnLintMatch {
  Level: 'Error' | 'Warning' | 'Informational';
  Rule: { Id: string; Description: string };
  Message: string;
  Filename: string;
  Location: { Path?: (string | number)[] };
}

/** Lints templates (paths); returns every match. */
export async function cfnLint(templates: string[]): Promise<CfnLintMatch[]> {
  await ensureCfnLint();
  const python = join(VENV_DIR, 'bin', 'python');
  // The console script's #! names the build directory (see ensureCfnLint): call its entry point.
  const entry = 'import sys; from cfnlint.runner import main; sys.argv[0] = "cfn-lint"; sys.exit(main())';
  const result = await run(python, ['-c', entry, '--format', 'json', '--', ...templates]);
  // Exit codes are a bit mask: 2 errors, 4 warnings, 8 informational; 1 is a crash.
  if (result.code === null || (result.code & 1) === 1 || !result.stdout.trim()) {
    throw new Error(`cfn-lint failed (exit ${result.code}):\n${result.stderr}`.slice(-4000));
  }
  return JSON.parse(result.stdout) as CfnLintMatch[];
}
