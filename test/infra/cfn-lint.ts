// cfn-lint (AWS's CloudFormation linter, a Python tool) for the template tests.
// Installed once into <project>/.localstack/cfn-lint-venv (git-ignored) from the
// pinned test/infra/cfn-lint-requirements.txt, by local/harness/python-venv.ts.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureVenv } from '../../local/harness/python-venv';

const REQUIREMENTS = fileURLToPath(new URL('./cfn-lint-requirements.txt', import.meta.url));

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

export interface CfnLintMatch {
  Level: 'Error' | 'Warning' | 'Informational';
  Rule: { Id: string; Description: string };
  Message: string;
  Filename: string;
  Location: { Path?: (string | number)[] };
}

/** Lints templates (paths); returns every match. */
export async function cfnLint(templates: string[]): Promise<CfnLintMatch[]> {
  const python = await ensureVenv({
    name: 'cfn-lint-venv',
    requirements: REQUIREMENTS,
    purpose: 'cfn-lint',
    log: (line) => process.stderr.write(`[cfn-lint] ${line}\n`),
  });
  // The console script's #! names the venv's build directory: call its entry point instead.
  const entry = 'import sys; from cfnlint.runner import main; sys.argv[0] = "cfn-lint"; sys.exit(main())';
  const result = await run(python, ['-c', entry, '--format', 'json', '--', ...templates]);
  // Exit codes are a bit mask: 2 errors, 4 warnings, 8 informational; 1 is a crash.
  if (result.code === null || (result.code & 1) === 1 || !result.stdout.trim()) {
    throw new Error(`cfn-lint failed (exit ${result.code}):\n${result.stderr}`.slice(-4000));
  }
  return JSON.parse(result.stdout) as CfnLintMatch[];
}
