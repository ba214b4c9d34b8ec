// The command line `edge-image-transformer upload|delete|list|import`, run
// in-process (runCli takes its streams, environment and client) against the
// emulator's `/_manage/` routes on LocalStack: real uploads, real deletes,
// the exit status a script would check, the progress on stderr as a bar on a
// terminal and as plain lines otherwise.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createManageClient } from '../../../lambda/manage/client';
import { runCli } from '../../../lambda/manage/client/cli';
import { COMMANDS, type CliIo } from '../../../lambda/manage/client/commands';
import { unreachableS3Endpoint } from '../../support/s3';
import { EMULATOR_CREDENTIALS, photo, recordingFetch, useManageEmulator } from './support';

const manage = useManageEmulator('manage-cli');

interface Run {
  status: number;
  out: string;
  err: string;
  /** The API calls made, with their JSON bodies. */
  calls: ReturnType<typeof recordingFetch>['calls'];
}

let files: string;

beforeAll(async () => {
  files = await mkdtemp(join(tmpdir(), 'manage-cli-'));
});

/** Runs the command line with the emulator's endpoint in the environment (unless `env` says otherwise). */
async function cli(argv: string[], options: { tty?: boolean; env?: CliIo['env']; secret?: string } = {}): Promise<Run> {
  let out = '';
  let err = '';
  const recorded = recordingFetch();
  const status = await runCli(argv, {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text), isTTY: options.tty ?? false },
    env: options.env ?? { EDGE_IMAGE_MANAGE_URL: manage().endpoint },
    client: ({ endpoint, region }) =>
      createManageClient({
        endpoint,
        region: region ?? 'us-east-1',
        credentials: { ...EMULATOR_CREDENTIALS, secretAccessKey: options.secret ?? 'test' },
        fetch: recorded.fetch,
      }),
  });
  return { status, out, err, calls: recorded.calls };
}

async function file(name: string, content: string | Buffer): Promise<string> {
  const path = join(files, name);
  await writeFile(path, content);
  return path;
}

describe('edge-image-transformer (the command line)', () => {
  it("prints its usage and each command's with --help; a usage error is exit 2", async () => {
    expect(await cli(['--help'])).toMatchObject({ status: 0, out: expect.stringMatching(/^usage: edge-image-transformer <command>/) });
    for (const name of Object.keys(COMMANDS)) {
      const help = await cli([name, '--help']);
      expect(help).toMatchObject({ status: 0, out: expect.stringContaining(`usage: edge-image-transformer ${name}`) });
      expect(help.out).toContain('--endpoint URL');
    }
    expect(await cli([])).toMatchObject({ status: 2, err: expect.stringMatching(/^usage:/) });
    expect(await cli(['remove', 'a.jpg'])).toMatchObject({ status: 2, err: expect.stringMatching(/no command "remove"/) });
    expect(await cli(['list'], { env: {} })).toMatchObject({
      status: 2,
      err: expect.stringMatching(/--endpoint URL \(or \$EDGE_IMAGE_MANAGE_URL\)/),
    });
    expect(await cli(['delete'])).toMatchObject({ status: 2, err: expect.stringMatching(/^delete: name at least one key/) });
    expect(await cli(['list', '--limit', 'ten'])).toMatchObject({
      status: 2,
      err: expect.stringMatching(/--limit must be a whole number/),
    });
    expect((await cli(['list', '--nope'])).status).toBe(2);
  });

  it('uploads files and waits for each verdict: a quarantined one fails the run, with plain progress lines off a terminal', async () => {
    const good = await file('beach.jpg', await photo(640, 480));
    const evil = await file('evil.jpg', '<html><script>alert(1)</script></html>');
    const run = await cli(['upload', good, evil, '--prefix', 'cli/', '--wait']);
    expect(run.status).toBe(1);
    expect(run.out.split('\n')).toEqual([
      `ok    ${good} -> cli/beach.jpg: ready (640x480 jpeg)`,
      `FAIL  ${evil} -> cli/evil.jpg: quarantined as cli/evil.jpg: unsupported_media_type`,
      '1 file(s) uploaded and ready, 1 failed.',
      '',
    ]);
    expect(run.err).toBe('upload: 1/2\nupload: 2/2\n');
    expect(
      (
        await createManageClient({ endpoint: manage().endpoint, region: 'us-east-1', credentials: EMULATOR_CREDENTIALS }).status(
          'cli/beach.jpg',
        )
      ).status,
    ).toBe('ready');
  }, 60_000);

  it('refuses a file whose extension names no image type, and uploads the rest', async () => {
    const notes = await file('notes.txt', 'hello');
    const run = await cli(['upload', notes, await file('small.jpg', await photo(32, 32))]);
    expect(run.status).toBe(1);
    expect(run.out).toContain(`FAIL  ${notes} -> notes.txt: its extension names no image type.`);
    expect(run.out).toContain('1 file(s) uploaded, 1 failed.');
  });

  it('lists the ready images, as text or JSON lines, at most --limit', async () => {
    await manage().put(['shelf/1.jpg', 'shelf/2.jpg', 'shelf/3.jpg']);
    const text = await cli(['list', '--prefix', 'shelf/', '--limit', '2']);
    expect(text.status).toBe(0);
    expect(
      text.out
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[0]),
    ).toEqual(['shelf/1.jpg', 'shelf/2.jpg']);
    const json = await cli(['list', '--prefix', 'shelf/', '--json']);
    const images = json.out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(images.map((image) => image.key)).toEqual(['shelf/1.jpg', 'shelf/2.jpg', 'shelf/3.jpg']);
    expect(images[0]).toMatchObject({ status: 'ready', bytes: 8, uploadedAt: expect.any(String) });
  });

  it('deletes 150 keys from a file in two calls; the one that fails makes the exit status 1, with a bar on a terminal', async () => {
    const keys = Array.from({ length: 149 }, (_, index) => `cli-bulk/${index}.jpg`);
    await manage().put(keys);
    const list = await file('keys.txt', [...keys.slice(0, 70), 'gone/x.jpg', '', ...keys.slice(70)].join('\n') + '\n');
    const run = await manage().withoutBucket(() => cli(['delete', '--from-file', list], { tty: true }));
    expect(run.status).toBe(1);
    expect(run.calls.map((call) => (call.body as { keys: string[] }).keys.length)).toEqual([100, 50]);
    expect(run.out).toMatch(/^FAIL {2}gone\/x\.jpg: NoSuchBucket/);
    expect(run.out).toContain('149 key(s) deleted, 1 failed.\n');
    expect(run.err).toContain(`\rdelete [${'#'.repeat(20)}${'-'.repeat(10)}] 100/150`);
    expect(run.err.endsWith(`\rdelete [${'#'.repeat(30)}] 150/150\n`)).toBe(true);
    expect((await manage().sourceKeys()).filter((key) => key.startsWith('cli-bulk/'))).toEqual([]);
  }, 30_000);

  it("exits 1 with the API's refusal (a bad key, a wrong signature) or when the API cannot be reached", async () => {
    const bad = await cli(['delete', 'fine.jpg', 'a/../b.jpg']);
    expect(bad).toMatchObject({ status: 1, calls: [] });
    expect(bad.err).toMatch(/^delete: the API answered 400 invalid_key: keys\[1\] "a\/\.\.\/b\.jpg" is not a source key/);
    const unreachable = await cli(['list'], { env: { EDGE_IMAGE_MANAGE_URL: `${await unreachableS3Endpoint()}/_manage` } });
    expect(unreachable).toMatchObject({ status: 1, err: expect.stringMatching(/^list: fetch failed \(.*ECONNREFUSED/) });
    const unsigned = await cli(['list'], { secret: 'wrong' });
    expect(unsigned).toMatchObject({ status: 1, err: expect.stringMatching(/^list: the API answered 403 invalid_signature/) });
  });
});

describe('edge-image-transformer import', () => {
  it('sends a CSV manifest (header, quoted fields) as POST /imports {items}', async () => {
    const csv = await file(
      'manifest.csv',
      'key,url\r\nphotos/a.jpg,https://old.example.com/a.jpg\r\n"photos/b, the second.jpg","https://old.example.com/b.jpg?x=""1"""\r\n\r\n',
    );
    const run = await cli(['import', csv]);
    expect(run.calls.map(({ method, url, body }) => [method, new URL(url).pathname, body])).toEqual([
      [
        'POST',
        '/_manage/imports',
        {
          items: [
            { url: 'https://old.example.com/a.jpg', key: 'photos/a.jpg' },
            { url: 'https://old.example.com/b.jpg?x="1"', key: 'photos/b, the second.jpg' },
          ],
        },
      ],
    ]);
    // Without --wait, the import is started and its id told; the emulator runs it after the answer.
    expect(run).toMatchObject({ status: 0, out: expect.stringMatching(/^started import [0-9a-f-]{36}: 2 item\(s\)\n$/) });
  });

  it('sends a JSON manifest, or a manifest key, as the contract says', async () => {
    const json = await file('manifest.json', JSON.stringify([{ url: 'https://old.example.com/c.jpg', key: 'c.jpg' }]));
    expect((await cli(['import', json])).calls[0]!.body).toEqual({ items: [{ url: 'https://old.example.com/c.jpg', key: 'c.jpg' }] });
    expect((await cli(['import', '--manifest-key', '_imports/all.csv'])).calls[0]!.body).toEqual({ manifestKey: '_imports/all.csv' });
    expect((await cli(['import', json, '--manifest-key', 'x'])).status).toBe(2);
  });

  it.each([
    [
      'a URL that is not https',
      'url,key\nhttp://old.example.com/a.jpg,a.jpg\n',
      /line 2: the url "http:\/\/old\.example\.com\/a\.jpg" is not an https URL\./,
    ],
    ['a bad key', 'https://x.example/a.jpg,a/../b.jpg\n', /line 1: the key "a\/\.\.\/b\.jpg" is not a source key/],
    ['a reserved key', 'https://x.example/a.jpg,_uploads/a.jpg\n', /line 1: the key "_uploads\/a\.jpg" is under _uploads\//],
    [
      'a key twice',
      'https://x.example/a.jpg,a.jpg\nhttps://x.example/b.jpg,b.jpg\nhttps://x.example/c.jpg,a.jpg\n',
      /line 3: the key "a\.jpg" is already line 1's\./,
    ],
    ['a row of three fields', 'https://x.example/a.jpg,a.jpg,extra\n', /line 1: 3 fields; a row is url,key\./],
    ['a quote left open', 'https://x.example/a.jpg,"a.jpg\n', /line 1: a quoted field is not closed\./],
    ['text after a closing quote', '"https://x.example/a.jpg"x,a.jpg\n', /line 1: "x" after a quoted field's closing quote\./],
    ['no rows', 'url,key\n', /no items: the manifest is empty\./],
  ])('refuses a CSV manifest with %s, naming the line, and sends nothing', async (_what, text, message) => {
    const run = await cli(['import', await file('bad.csv', text)]);
    expect(run).toMatchObject({ status: 1, calls: [] });
    expect(run.err).toMatch(/^import: .*bad\.csv: /);
    expect(run.err).toMatch(message);
    expect(run.err).toContain('Nothing was sent.');
  });

  it.each([
    ['not JSON', '[{', /not JSON/],
    ['not an array', '{"url": "https://x.example/a.jpg"}', /an array of \{url, key\}/],
    ['an item that is not an object', '["https://x.example/a.jpg"]', /items\[0\] is not an object/],
    [
      'an unknown field',
      '[{"url": "https://x.example/a.jpg", "key": "a.jpg", "size": 3}]',
      /items\[0\]: the field "size" is not url or key/,
    ],
    ['a key that is not a string', '[{"url": "https://x.example/a.jpg", "key": 3}]', /items\[0\]: url and key must both be strings/],
  ])('refuses a JSON manifest that is %s, and sends nothing', async (_what, text, message) => {
    const run = await cli(['import', await file('bad.json', text)]);
    expect(run).toMatchObject({ status: 1, calls: [] });
    expect(run.err).toMatch(message);
  });
});
