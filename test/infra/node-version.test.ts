// The message an older Node.js gets from `cdk synth` and `npm start`, from package.json's engines.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../lib/node-version';
import { PROJECT_ROOT } from '../../lib/project-root';

const engines = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

describe('the supported Node.js versions', () => {
  it('accepts Node 20.9 and newer, as package.json says (installs on 20.9+ keep working)', () => {
    expect(engines).toBe('>=20.9.0');
    for (const version of ['20.9.0', '20.20.2', '21.0.0', '22.12.0', '24.1.0', process.versions.node]) {
      expect(nodeVersionProblem(version, engines)).toBeUndefined();
    }
  });

  it('tells an older Node what it needs and what to do', () => {
    for (const version of ['20.8.1', '18.19.0', '16.20.2']) {
      expect(nodeVersionProblem(version, engines)).toBe(
        `edge-image-transformer needs Node.js 20.9.0 or newer; this is Node.js ${version}. ` +
          'Install Node.js 22 or 24 (the LTS releases; e.g. `nvm install 24`), then run `npm install` again.',
      );
    }
  });
});
