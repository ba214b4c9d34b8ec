// The playground's files as the emulator serves them under /_playground/: its
// ES modules as JavaScript, each module every other one imports, and nothing
// outside the playground's folder, whatever the name asks.

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS } from '../../../lambda/grammar/index';
import { playgroundFile } from '../../../local/emulator/server';

const PLAYGROUND = fileURLToPath(new URL('../../../local/emulator/playground/', import.meta.url));
const MODULES = readdirSync(PLAYGROUND).filter((name) => name.endsWith('.js'));

const served = (name: string) => playgroundFile(name, '// client', DEFAULT_GRAMMAR_OPTIONS);

describe('the playground files the emulator serves', () => {
  it('serves every module of the page as JavaScript, as the browser loads a module script only with a JavaScript type', async () => {
    expect(MODULES).toContain('playground.js');
    for (const name of MODULES) {
      const file = await served(name);
      expect(file?.headers['content-type'], name).toBe('text/javascript; charset=utf-8');
      expect(String(file?.body)).toBe(readFileSync(PLAYGROUND + name, 'utf8'));
    }
  });

  it('serves each module a module imports (a statement of its own, not the snippets it shows), at the path the browser asks for it', async () => {
    const imports = MODULES.flatMap((name) =>
      [...readFileSync(PLAYGROUND + name, 'utf8').matchAll(/^import [^;]* from '([^']+)';$/gm)].map((match) => match[1]!),
    );
    expect(imports).toContain('/_playground/client.js');
    for (const specifier of new Set(imports)) {
      const name = new URL(specifier, 'http://localhost/_playground/playground.js').pathname.replace('/_playground/', '');
      expect(await served(name), specifier).toBeDefined();
    }
  });

  it('serves nothing outside the playground folder', async () => {
    for (const name of ['../server.ts', '../../../package.json', '..', '', '/etc/passwd', 'nothing.js', '..%2fserver.ts']) {
      expect(await served(name), name).toBeUndefined();
    }
  });
});
