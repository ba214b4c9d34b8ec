// Starts a private LocalStack S3 for tests and local runs, without Docker.
//
// These machines have no Docker engine and the LocalStack image needs an auth
// token, so we run the PyPI package `localstack-core` from a Python 3.13 venv
// (3.11 and 3.12 start but fail on every S3 call). The venv lives in
// <project root>/.localstack/venv and is built from the pinned
// local/harness/localstack-requirements.txt (the unpinned set is broken: cbor2 6
// removed a module LocalStack imports).

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, ensureVenv, LOG_DIR, PROJECT_ROOT, sleep, tail } from './python-venv';

export interface LocalStack {
  /** e.g. http://127.0.0.1:41234 — use with forcePathStyle (see local/harness/s3-client.ts). */
  endpoint: string;
  /** Stops the server and removes its state. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartOptions {
  log?: (line: string) => void;
}

const REQUIREMENTS = join(PROJECT_ROOT, 'local', 'harness', 'localstack-requirements.txt');

const STARTUP_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 10_000;
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

  const python = await ensureVenv({ name: 'venv', requirements: REQUIREMENTS, purpose: 'LocalStack', log });
  return launch(python, log);
}

// ---------------------------------------------------------------- endpoint

async function checkExternalEndpoint(endpoint: string): Promise<void> {
  try {
    // Any HTTP answer will do (real S3 says 403 to an anonymous GET /).
    await fetch(endpoint, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    throw new Error(
      `AWS_ENDPOINT_URL_S3=${endpoint} does not answer (${describe(error)}). ` +
        'Start that S3 endpoint, or unset AWS_ENDPOINT_URL_S3 so that local/harness/localstack.ts starts LocalStack itself.',
      { cause: error },
    );
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

async function launch(python: string, log: (line: string) => void): Promise<LocalStack> {
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
  const child = spawn(python, ['-c', LAUNCHER], {
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
      if ((s3 === 'available' || s3 === 'running') && (await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(30_000) })).ok)
        return true;
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
    .filter((name) => name.endsWith('.log') && !name.endsWith('install.log'))
    .sort()
    .reverse();
  for (const name of logs.slice(LOGS_KEPT - 1)) rmSync(join(LOG_DIR, name), { force: true });
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
