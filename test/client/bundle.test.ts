// The browser entry must bundle for a browser on its own: no `crypto`, no
// Node built-ins, nothing from the signing module. esbuild (the bundler the
// project already uses) is the judge: for platform "browser" it refuses to
// resolve Node built-ins.

import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

async function bundle(entry: string) {
  return build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

describe('lambda/client browser entry', () => {
  it('bundles for the browser without crypto or the signing code', async () => {
    const result = await bundle('lambda/client/index.ts');
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).not.toContain('lambda/grammar/sign.ts');
    expect(inputs).not.toContain('lambda/client/sign.ts');
    expect(inputs.every((input) => input.startsWith('lambda/'))).toBe(true);
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/createHmac|require\(|from\s*["'](node:)?crypto["']/);
    // Small enough for a page: the grammar plus the helper.
    expect(code.length).toBeLessThan(40_000);
  });

  it('(the signing entry, by contrast, needs crypto)', async () => {
    await expect(bundle('lambda/client/sign.ts')).rejects.toThrow(/crypto/);
  });
});
