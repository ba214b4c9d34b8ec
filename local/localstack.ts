// Starts a private LocalStack S3 for tests and local runs, without Docker.
//
// These machines have no Docker engine and the LocalStack image needs an auth
// token, so we run the PyPI package `localstack-core` from a Python 3.13 venv
// (3.11 and 3.12 start but fail on every S3 call). The venv lives in
// <project root>/.localstack/venv and is built from the pinned
// local/localstack-requirements.txt (the unpinned set is broken).
// See /work/shared/design/platform-facts.md, "LocalStack S3 without Docker".

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalStack {
  /** e.g. http://127.0.0.1:41234 — use with forcePathStyle (see local/s3-client.ts). */
  endpoint: string;
  /** Stops the server and removes its state. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartOptions {
  log?: (line: string) => void;
}

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const STATE_DIR = join(PROJECT_ROOT, '.localstack');
const VENV_DIR = join(STATE_DIR, 'venv');
const VENV_PYTHON = join(VENV_DIR, 'bin', 'python');
const STAMP_FILE = join(VENV_DIR, '.installed'); // hash of what the venv was built from
const LOCK_DIR = join(STATE_DIR, 'install.lock');
const LOG_DIR = join(STATE_DIR, 'logs');
const REQUIREMENTS = join(PROJECT_ROOT, 'local', 'localstack-requirements.txt');

const STARTUP_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 10_000;
const LOCK_WAIT_MS = 10 * 60_000; // another process may be doing the ~1 minute install
const LOGS_KEPT = 20;

const defaultLog = (line: string) => process.stderr.write(`[localstack] ${line}\n`);

export async function startLocalStack(options: StartOptions = {}): Promise<LocalStack> {
  const log = options.log ?? defaultLog;

  const external = process.env.AWS_ENDPOINT_URL_S3;
  if (external) {
    await checkExternalEndpoint(external);
    log(`using the S3 endpoint in AWS_ENDPOINT_URL_S3: ${external}`);
    return { endpoint: external.replace(/\/+$/, ''), stop: async () => {} };
  }

  const python = findPython313();
  await withInstallLock(log, () => ensureVenv(python, log));
  return launch(log);
}

// ---------------------------------------------------------------- endpoint

async function checkExternalEndpoint(endpoint: string): Promise<void> {
  try {
    // Any HTTP answer will do (real S3 says 403 to an anonymous GET /).
    await fetch(endpoint, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    throw new Error(
      `AWS_ENDPOINT_URL_S3=${endpoint} does not answer (${describe(error)}). ` +
        'Start that S3 endpoint, or unset AWS_ENDPOINT_URL_S3 so that local/localstack.ts starts LocalStack itself.',
    );
  }
}

// ---------------------------------------------------------------- python

interface Python {
  path: string;
  version: string; // e.g. "Python 3.13.0"
}

function findPython313(): Python {
  // An explicit choice that does not work is an error, not something to skip.
  const fromEnv = process.env.PYTHON;
  if (fromEnv) {
    const version = python313Version(fromEnv);
    if (version) return { path: fromEnv, version };
    throw new Error(
      `PYTHON=${fromEnv} is not a working Python 3.13 (LocalStack needs 3.13). ` +
        'Point PYTHON at a python3.13 binary, or unset it to let local/localstack.ts search for one.',
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
      'LocalStack needs Python 3.13 (3.11 and 3.12 do not work with localstack-core 4.14) and none was found.',
      `Tried: $PYTHON (unset), python3.13 on PATH, ${pyenvRoot()}/versions/3.13*/bin/python3.13,`,
      '       /usr/bin/python3.13, /usr/local/bin/python3.13.',
      'Fix it with one of:',
      '  - install Python 3.13: `pyenv install 3.13`, or the OS package',
      '    (e.g. `apt-get install python3.13 python3.13-venv`, `brew install python@3.13`);',
      '  - set PYTHON=/path/to/python3.13;',
      '  - set AWS_ENDPOINT_URL_S3 to an S3 endpoint that is already running (e.g. http://127.0.0.1:4566).',
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

async function ensureVenv(python: Python, log: (line: string) => void): Promise<void> {
  // A new pin set, or another Python version, means a new venv. (Not the
  // Python's path: PYTHON=... and a PATH search may name the same one.)
  const stamp = createHash('sha256').update(readFileSync(REQUIREMENTS)).update(`\n${python.version}`).digest('hex');
  const current = await readFile(STAMP_FILE, 'utf8').catch(() => '');
  if (current.trim() === stamp && existsSync(VENV_PYTHON)) return;

  const started = Date.now();
  log(`installing LocalStack into ${VENV_DIR} with ${python.version} (about a minute, once)`);
  // Build in a directory of our own and rename it into place when complete, so
  // an interrupted install never leaves a half-built venv, not even with a pip
  // still running after its parent was killed. (Scripts in bin/ keep the
  // temporary path in their #! line; we only ever run bin/python.)
  const building = `${VENV_DIR}.partial-${process.pid}`;
  await removePartialVenvs();
  await mkdir(LOG_DIR, { recursive: true });
  const pipLog = join(LOG_DIR, 'install.log');
  await writeFile(pipLog, '');
  const seconds = () => Math.round((Date.now() - started) / 1000);
  // A sign of life for CI logs; pip's own output goes to pipLog.
  const heartbeat = setInterval(() => log(`still installing (${seconds()} s, details in ${pipLog})`), 15_000);
  try {
    await run(python.path, ['-m', 'venv', building], pipLog, 'creating the venv (on Debian/Ubuntu: apt-get install python3.13-venv)');
    await run(
      join(building, 'bin', 'python'),
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', '-r', REQUIREMENTS],
      pipLog,
      'pip install -r local/localstack-requirements.txt',
    );
  } finally {
    clearInterval(heartbeat);
  }
  await writeFile(join(building, '.installed'), `${stamp}\n`);
  await rm(VENV_DIR, { recursive: true, force: true });
  await rename(building, VENV_DIR);
  await removePartialVenvs(); // again: a pip left running may have written more
  log(`installed in ${seconds()} s`);
}

/** Leftovers of interrupted installs (we hold the install lock, so none is live). */
async function removePartialVenvs(): Promise<void> {
  for (const name of await readdir(STATE_DIR)) {
    if (name.startsWith('venv.partial-')) await rm(join(STATE_DIR, name), { recursive: true, force: true });
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

// `npm start` and `npm test` may start at the same time: only one may build the venv.
// mkdir is atomic, so the lock is a directory holding the owner's pid.
async function withInstallLock<T>(log: (line: string) => void, body: () => Promise<T>): Promise<T> {
  await mkdir(STATE_DIR, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  let said = false;
  for (;;) {
    try {
      await mkdir(LOCK_DIR);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (lockIsStale()) {
      await rm(LOCK_DIR, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK_DIR}; remove it if no install is running`);
    if (!said) log('another process is installing or checking LocalStack; waiting for it');
    said = true;
    await sleep(500);
  }
  try {
    await writeFile(join(LOCK_DIR, 'pid'), String(process.pid));
    return await body();
  } finally {
    await rm(LOCK_DIR, { recursive: true, force: true });
  }
}

function lockIsStale(): boolean {
  let pid = NaN;
  try {
    pid = Number(readFileSync(join(LOCK_DIR, 'pid'), 'utf8'));
  } catch {
    // no pid file yet
  }
  if (!Number.isInteger(pid) || pid <= 0) {
    // The owner is between mkdir and writeFile, unless it died right there.
    try {
      return Date.now() - statSync(LOCK_DIR).mtimeMs > 30_000;
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

// ---------------------------------------------------------------- server

// LocalStack runs from this small Python wrapper, for these reasons:
// - Its gateway always serves TLS next to HTTP. Offline, it makes a self-signed
//   certificate with a pyOpenSSL call (X509.add_extensions) that the pinned
//   pyOpenSSL no longer has, and dies. So we make one with `cryptography` and
//   point CUSTOM_SSL_CERT_PATH at it (and skip the download attempt).
// - If Node is SIGKILLed, no 'exit' handler runs. A watchdog thread stops
//   LocalStack when its parent goes away (it gets re-parented), so no orphan
//   server is left running.
// - Its S3 store writes to a fixed directory in /tmp (redirected below).
// - Stopping was slow: a thread-safety bug in LocalStack's shutdown (patched
//   below), then Python's own teardown spends seconds garbage-collecting, and
//   every test run waits for it (skipped with os._exit).
const LAUNCHER = `
import datetime, os, runpy, shutil, signal, sys, threading, time
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, 'localhost')])
now = datetime.datetime.now(datetime.timezone.utc)
cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256()))
with open(os.environ['CUSTOM_SSL_CERT_PATH'], 'wb') as f:
    f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    f.write(cert.public_bytes(serialization.Encoding.PEM))

# LocalStack's shutdown calls loop.stop() from another thread, which does not
# wake the loop's select(): SIGTERM then hung for 10+ s about one time in three.
from localstack.runtime.server.hypercorn import HypercornRuntimeServer
unpatched_shutdown = HypercornRuntimeServer.shutdown
def shutdown(self):
    unpatched_shutdown(self)
    self.loop.call_soon_threadsafe(self.loop.stop)
HypercornRuntimeServer.shutdown = shutdown

# S3 keeps its spill files under a fixed /tmp/localstack-s3-storage, shared by
# every instance on the machine (DeleteBucket removes <that dir>/<bucket>).
import localstack.services.s3.provider as s3_provider
s3_provider.DEFAULT_S3_TMP_DIR = os.path.join(os.environ['FILESYSTEM_ROOT'], 's3-storage')

parent = int(os.environ.pop('LOCALSTACK_PARENT_PID'))
orphaned = threading.Event()
def watch():
    while os.getppid() == parent:
        time.sleep(1)
    orphaned.set()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(${STOP_GRACE_MS / 1000})
    os.killpg(0, signal.SIGKILL)
threading.Thread(target=watch, daemon=True).start()

try:
    runpy.run_module('localstack.runtime.main', run_name='__main__')
except SystemExit as exit:  # how main() ends, after its own clean-up
    if orphaned.is_set():  # nobody is left to remove our state dir
        shutil.rmtree(os.environ['FILESYSTEM_ROOT'], ignore_errors=True)
    # Skip interpreter teardown: garbage-collecting LocalStack's heap takes 3-5 s.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit.code if isinstance(exit.code, int) else int(exit.code is not None))
`;

async function launch(log: (line: string) => void): Promise<LocalStack> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  // Everything this instance writes goes here, and is removed by stop().
  const stateDir = mkdtempSync(join(tmpdir(), 'localstack-'));
  const childTmp = join(stateDir, 'tmp');
  await mkdir(childTmp);
  await mkdir(LOG_DIR, { recursive: true });
  pruneLogs();
  const logFile = join(LOG_DIR, `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${port}.log`);
  const fd = openSync(logFile, 'w');
  const started = Date.now();

  // detached: its own process group, so stop() can signal LocalStack and anything it spawned.
  const child = spawn(VENV_PYTHON, ['-c', LAUNCHER], {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: {
      ...process.env,
      SERVICES: 's3',
      GATEWAY_LISTEN: `127.0.0.1:${port}`,
      GATEWAY_SERVER: 'hypercorn',
      DNS_ADDRESS: '0',
      LOCALSTACK_VOLUME_DIR: stateDir, // only read by LocalStack's CLI; FILESYSTEM_ROOT is what counts here
      // In a container (/.dockerenv), LocalStack uses /var/lib/localstack and
      // /tmp/localstack, and clears /tmp/localstack at startup: two instances
      // would trample each other. Host mode puts all its files under FILESYSTEM_ROOT.
      OVERRIDE_IN_DOCKER: '0',
      FILESYSTEM_ROOT: stateDir,
      TMPDIR: childTmp, // for any other temp files (LocalStack logs a harmless deprecation warning)
      CUSTOM_SSL_CERT_PATH: join(stateDir, 'server.pem'), // made by LAUNCHER
      SKIP_SSL_CERT_DOWNLOAD: '1',
      DISABLE_EVENTS: '1', // no analytics calls home
      LOCALSTACK_PARENT_PID: String(process.pid), // for LAUNCHER's watchdog
    },
  });
  closeSync(fd);
  child.unref(); // do not keep Node alive; the 'exit' handler below cleans up
  const exited = new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => resolve(signal ?? `exit code ${code}`));
    child.on('error', (error) => resolve(describe(error)));
  });

  const killNow = () => {
    killGroup(child, 'SIGKILL');
    rmSync(stateDir, { recursive: true, force: true });
  };
  process.on('exit', killNow);

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      process.off('exit', killNow);
      if (child.exitCode === null && child.signalCode === null) {
        killGroup(child, 'SIGTERM');
        if ((await within(exited, STOP_GRACE_MS)) === undefined) {
          log(`LocalStack did not stop within ${STOP_GRACE_MS / 1000} s; killing it`);
          killGroup(child, 'SIGKILL');
          await within(exited, 2_000);
        }
      }
      await rm(stateDir, { recursive: true, force: true });
    })());

  log(`starting LocalStack S3 on ${endpoint} (log: ${logFile})`);
  const failure = await Promise.race([
    waitForS3(endpoint, started + STARTUP_TIMEOUT_MS, () => child.exitCode === null && child.signalCode === null).then((ok) =>
      ok ? undefined : `not ready after ${STARTUP_TIMEOUT_MS / 1000} s`,
    ),
    exited.then((how) => `exited early (${how})`),
  ]);
  if (failure) {
    await stop();
    throw new Error(`LocalStack ${failure}. End of ${logFile}:\n${tail(logFile)}`);
  }
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { endpoint, stop };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function waitForS3(endpoint: string, deadline: number, alive: () => boolean): Promise<boolean> {
  while (Date.now() < deadline && alive()) {
    try {
      const response = await fetch(`${endpoint}/_localstack/health`, { signal: AbortSignal.timeout(2_000) });
      const health = (await response.json()) as { services?: Record<string, string> };
      const s3 = health.services?.s3;
      // LocalStack loads S3 on its first request (~5 s): make that request
      // here (ListBuckets), so that "ready" means S3 answers.
      if ((s3 === 'available' || s3 === 'running') && (await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(30_000) })).ok) return true;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  return false;
}

// The port is free when we look; LocalStack binds it a moment later. A clash
// is unlikely and shows up as an early exit with the log tail.
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function pruneLogs(): void {
  const logs = readdirSync(LOG_DIR)
    .filter((name) => name.endsWith('.log') && name !== 'install.log')
    .sort()
    .reverse();
  for (const name of logs.slice(LOGS_KEPT - 1)) rmSync(join(LOG_DIR, name), { force: true });
}

function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The promise's value, or undefined if it takes longer than ms. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
