// The Node.js versions the project runs on, as package.json's `engines` says
// (one place). The app and `npm start` check first, so an older Node gets a
// message saying what to do rather than an error from deep inside a dependency.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project-root';

/** Why `version` (e.g. `18.19.0`) cannot run the project, whose engines say `range` (`>=X.Y.Z`); undefined when it can. */
export function nodeVersionProblem(version: string, range: string): string | undefined {
  const floor = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range);
  if (!floor) throw new Error(`package.json engines.node must be ">=X.Y.Z", not "${range}".`);
  const have = version.split('.').map(Number);
  const need = floor.slice(1).map(Number);
  const index = need.findIndex((part, i) => have[i] !== part);
  if (index === -1 || (have[index] ?? 0) > need[index]!) return undefined;
  return (
    `edge-image-transformer needs Node.js ${need.join('.')} or newer; this is Node.js ${version}. ` +
    'Install Node.js 22 or 24 (the LTS releases; e.g. `nvm install 24`), then run `npm install` again.'
  );
}

/** Throws the message of nodeVersionProblem for the running Node. */
export function assertSupportedNode(): void {
  const engines = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines;
  const problem = nodeVersionProblem(process.versions.node, engines.node);
  if (problem) throw new Error(problem);
}
