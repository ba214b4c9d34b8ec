// `npm run openapi`: writes the management API's OpenAPI document
// (lambda/manage/openapi.ts, from the records the handlers validate with) to
// docs/manage-openapi.json. test/manage/openapi.test.ts fails while the
// committed document differs from the one the records make.

import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { manageOpenApi } from '../lambda/manage/openapi';
import { PROJECT_ROOT } from '../lib/project-root';
import { runIfMain } from './operator-command';

export const OPENAPI_DOCUMENT = join(PROJECT_ROOT, 'docs', 'manage-openapi.json');

/** The document's text as committed and packed: the package's version, two-space JSON, a final newline. */
export function openApiText(): string {
  const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  return JSON.stringify(manageOpenApi(version), null, 2) + '\n';
}

/** Writes the document to `path`. */
export function writeOpenApi(path: string = OPENAPI_DOCUMENT): number {
  writeFileSync(path, openApiText());
  process.stderr.write(`openapi: wrote ${relative(PROJECT_ROOT, path)}\n`);
  return 0;
}

runIfMain(import.meta.url, async () => writeOpenApi());
