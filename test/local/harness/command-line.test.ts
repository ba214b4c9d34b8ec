// The command-line shape `npm start`, `npm run load`, `bench` and `bounds`
// share (local/command-line.ts): a mistake prints what is wrong and the usage
// on stderr and exits 2 before any work starts; --help prints the usage and
// exits 0.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PROJECT_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function npm(script: string, args: string[]) {
  return spawnSync('npm', ['run', '--silent', script, '--', ...args], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 30_000 });
}

describe('a usage error', () => {
  it.each([
    ['start', ['--port', 'x'], 'error: --port must be a port number, not "x"', 'usage: npm start'],
    ['start', ['--bogus'], "error: Unknown option '--bogus'", 'usage: npm start'],
    ['load', ['--requests', '0'], 'error: --requests must be 1 to 1000000, not "0"', 'usage: npm run load'],
    ['bench', ['--ops', 'spin'], 'error: unknown operation(s) spin', 'usage: npm run bench'],
    ['bounds', ['--memory', '1'], 'error: --memory must be a whole number of MB, at least 512, not "1"', 'usage: npm run bounds'],
  ])(
    'npm run %s -- %j exits 2 with the message and the usage on stderr',
    (script, args, message, usage) => {
      const run = npm(script, args);
      expect(run.stderr).toContain(message);
      expect(run.stderr).toContain(usage);
      expect(run.stdout).toBe('');
      expect(run.status).toBe(2);
    },
    60_000,
  );
});

it('--help prints the usage on stdout and exits 0, doing nothing else', () => {
  const run = npm('start', ['--help']);
  expect(run.stdout).toMatch(/^usage: npm start -- /);
  expect(run.stdout).not.toContain('Ready');
  expect(run.status).toBe(0);
}, 60_000);
