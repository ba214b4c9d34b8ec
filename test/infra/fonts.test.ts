// The fonts' fetch (lib/fonts.ts): the tar reader against small archives
// built here, refusals of a damaged or missing member, the cached fonts kept
// without a download, a registry out of reach said plainly, and the
// bundling's shell command run from the sources.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FONT_FILES, FONTS_FOLDER, TEXT_FONTS_ENV } from '../../lambda/origin/image/text/fonts';
import { ensureFonts, FONT_PACKAGES, FONTS_CACHE, fontsCommands, licenceFileOf, provideFonts, tarMember } from '../../lib/fonts';
import { PinnedFileError, type PinnedMember } from '../../lib/pinned-files';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const pinOf = (name: string, data: Buffer): PinnedMember => ({ name, bytes: data.length, sha256: sha256(data) });

/** A ustar header for `name` of `size` bytes (the checksum is not read). */
function header(name: string, size: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 'utf8');
  block.write(size.toString(8).padStart(11, '0') + '\0', 124, 'latin1');
  block.write('ustar\0', 257, 'latin1');
  return block;
}

/** A tar archive of `files`, each padded to 512 bytes, ended by two empty blocks. */
const tarOf = (files: [string, Buffer][]) =>
  Buffer.concat([
    ...files.flatMap(([name, data]) => [header(name, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512)]),
    Buffer.alloc(1024),
  ]);

describe('the tar reader', () => {
  const font = Buffer.from('not really a font, but bytes to pin '.repeat(40));
  const licence = Buffer.from('SIL Open Font License');
  const tar = tarOf([
    ['package/LICENSE_FONT', licence],
    ['package/400Regular/A.ttf', font],
  ]);

  it('takes a member whose size and content are the pinned ones', () => {
    expect(tarMember(tar, pinOf('package/400Regular/A.ttf', font)).equals(font)).toBe(true);
    expect(tarMember(tar, pinOf('package/LICENSE_FONT', licence)).equals(licence)).toBe(true);
  });

  it('refuses a member of another size or content, a missing one, and an archive cut short', () => {
    const pin = pinOf('package/400Regular/A.ttf', font);
    expect(() => tarMember(tar, { ...pin, bytes: pin.bytes + 1 })).toThrow(/says it is \d+ bytes, not the pinned/);
    expect(() => tarMember(tar, { ...pin, sha256: sha256(licence) })).toThrow(/has sha256 [0-9a-f]{64}, not the pinned/);
    expect(() => tarMember(tar, { ...pin, name: 'package/B.ttf' })).toThrow(/has no member package\/B.ttf/);
    expect(() => tarMember(tar.subarray(0, 1200), pin)).toThrow(PinnedFileError);
  });
});

describe('the cached fonts', () => {
  const offline: typeof fetch = () => Promise.reject(new TypeError('fetch failed', { cause: new Error('getaddrinfo ENOTFOUND') }));

  it('are kept without a download when they are the pinned ones', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'eit-fonts-'));
    cpSync(FONTS_CACHE, folder, { recursive: true });
    await expect(ensureFonts(folder, offline)).resolves.toBe(folder);
  });

  it('say what failed, and how to fetch them by hand, when the registry cannot be reached: a failure in CI, a warning elsewhere', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'eit-fonts-'));
    await expect(ensureFonts(folder, offline)).rejects.toThrow(
      /Could not download @expo-google-fonts\/noto-sans@0\.4\.2 from npm: fetch failed \(getaddrinfo ENOTFOUND\)\. .*npm pack @expo-google-fonts\/noto-sans@0\.4\.2/,
    );
    const named = process.env[TEXT_FONTS_ENV];
    delete process.env[TEXT_FONTS_ENV];
    try {
      await expect(provideFonts(() => undefined, { ci: true, folder, download: offline })).rejects.toThrow(/Could not download/);
      const warnings: string[] = [];
      await provideFonts((line) => warnings.push(line), { ci: false, folder, download: offline });
      expect(warnings).toEqual([expect.stringMatching(/^The text fonts are missing, so text overlays will fail: Could not download/)]);
      expect(process.env[TEXT_FONTS_ENV]).toBeUndefined();
    } finally {
      process.env[TEXT_FONTS_ENV] = named;
    }
  });

  it("the bundling's command, run from the sources, writes every font and licence into the bundle's fonts/", () => {
    const bundle = mkdtempSync(join(tmpdir(), 'eit-fonts-bundle-'));
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    const run = spawnSync('sh', ['-c', fontsCommands(quote).join(' && ')], { cwd: bundle, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(readdirSync(join(bundle, FONTS_FOLDER)).sort()).toEqual([...FONT_FILES, ...FONT_PACKAGES.map(licenceFileOf)].sort());
    const sans = FONT_PACKAGES[0]!.fonts[0]!;
    expect(sha256(readFileSync(join(bundle, FONTS_FOLDER, 'NotoSans_400Regular.ttf')))).toBe(sans.sha256);
  });
});
