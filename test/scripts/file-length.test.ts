// The file-length rule of eslint.config.js, which `npm run lint` runs: a source
// file of lambda/, lib/ or local/ over 500 lines fails it; one of 500 lines, and
// a longer one elsewhere (a test's table), does not.

import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/project-root';

const eslint = new ESLint({ cwd: PROJECT_ROOT });

/** The rules a file of `lines` lines at `path` breaks. */
async function broken(path: string, lines: number): Promise<string[]> {
  const text = Array.from({ length: lines }, (_, line) => `export const value${line} = ${line};`).join('\n') + '\n';
  const [result] = await eslint.lintText(text, { filePath: `${PROJECT_ROOT}/${path}` });
  return result!.messages.map((message) => message.ruleId ?? message.message);
}

describe('the file-length rule', () => {
  it('fails a file over 500 lines in lambda/, lib/ and local/', async () => {
    for (const folder of ['lambda/origin', 'lib', 'local/emulator'])
      expect(await broken(`${folder}/long.ts`, 501), folder).toEqual(['max-lines']);
  });

  it('passes a file of 500 lines there, and a longer one elsewhere', async () => {
    expect(await broken('lambda/origin/long.ts', 500)).toEqual([]);
    expect(await broken('test/origin/long.test.ts', 800)).toEqual([]);
  });
});
