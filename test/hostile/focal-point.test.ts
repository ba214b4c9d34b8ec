// The focal point against hostile input: bad `fp` values at the edge (the
// generated function, through the emulator) and in canonical URIs at the
// origin, each a precise 400 with nothing stored and the next request served;
// hostile `x-amz-meta-focal-point` metadata, which is the operator's and never
// fails a viewer; and the bound: fp adds no work to the cover crop it places
// (the same memory prediction holds, and shrink-on-load is kept).

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { gradientJpeg } from '../support/images';
import { createTestOrigin, type TestOrigin } from '../support/origin';
import {
  NOISE_MB,
  expectEmulatorStillServing,
  startHostileEmulator,
  throughEmulator,
  throughHandler,
  variantLog,
  type HostileEmulator,
} from './support';

describe('bad fp values at the edge', () => {
  let emulator: HostileEmulator;
  beforeAll(async () => {
    emulator = await startHostileEmulator('focal-point edge', {});
  });

  const ROWS: [string, RegExp][] = [
    ['fp=0.5', /^Invalid fp "0\.5": expected x,y: fractions of the image\.$/],
    ['fp=a,b', /^Invalid fp "a,b"/],
    ['fp=1.5,0', /^Invalid fp "1\.5,0"/],
    ['fp=0,-0', /^Invalid fp "0,-0"/],
    ['fp=NaN,NaN', /^Invalid fp "NaN,NaN"/],
    ['fp=Infinity,1', /^Invalid fp "Infinity,1"/],
    ['fp=,', /^Invalid fp ","/],
    ['fp=', /^Invalid fp ""/],
    ['fp=0.5,0.5%00', /^Invalid fp "0\.5,0\.5\u0000"/],
    ['fp=%EF%BC%90.5,0.5', /^Invalid fp "０\.5,0\.5"/],
    ['fp=0.1,0.1&FP=0.1,0.1', /given more than once/],
    [`fp=0.${'3'.repeat(5000)},0.5`, /^Invalid fp "0\.3{38}…": expected x,y/],
    [`fp=${'0.5,'.repeat(2000)}0.5`, /^Invalid fp "(0\.5,){10}…"/],
  ];

  it.each(ROWS)('%s is a 400 from the edge, saying what is allowed', async (query, message) => {
    const answer = await throughEmulator(emulator, `/${encodeURI('ok/fine.jpg')}?w=40&h=40&${query}`, {
      status: 400,
      code: 'invalid_parameter',
      at: 'edge',
    });
    expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({ error: 'invalid_parameter', message: expect.stringMatching(message) });
  });

  it('a good fp is served, and one spelled another way is the same cache entry', async () => {
    const first = await throughEmulator(emulator, '/ok/fine.jpg?w=40&h=40&fp=.25,0.5000&format=jpeg', { status: 200, at: 'origin' });
    expect(first.headers['x-cache']).toBe('Miss from cloudfront');
    const again = await throughEmulator(emulator, '/ok/fine.jpg?h=40&FP=0.25,.5&w=40&gravity=top&format=jpeg', {
      status: 200,
      at: 'origin',
    });
    expect(again.headers['x-cache']).toBe('Hit from cloudfront');
    await expectEmulatorStillServing(emulator, new Set(['ok/fine.jpg/width=40,height=40,fp=0.25,0.5,format=jpeg']));
  });
});

describe('fp in canonical URIs at the origin, and hostile metadata', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await createTestOrigin('focal-point origin');
    const photo = await gradientJpeg(6000, 4000);
    await origin.putSource('photo.jpg', photo);
    const tagged = (key: string, value: string) =>
      origin.s3.send(new PutObjectCommand({ Bucket: origin.sourceBucket, Key: key, Body: photo, Metadata: { 'focal-point': value } }));
    await tagged('long-tag.jpg', `0.${'9'.repeat(1900)},0.5`);
    await tagged('odd-tag.jpg', ' 0.5 , 0.5 ');
  });

  it.each([
    ['/photo.jpg/width=40,height=40,fp=1.5,0', 'invalid_parameter'],
    ['/photo.jpg/width=40,height=40,fp=.5,.5', 'not_canonical'],
    ['/photo.jpg/width=40,fp=0.5,0.5', 'not_canonical'],
    ['/photo.jpg/width=40,height=40,position=top,fp=0.5,0.5', 'not_canonical'],
    ['/photo.jpg/width=40,height=40,fp=0.5,0.5,fp=0.5,0.5', 'invalid_parameter'],
  ])('%s is a 400 (%s), nothing is stored, and the next request is served', async (uri, code) => {
    await throughHandler(origin, uri, { status: 400, code });
    await throughHandler(origin, '/photo.jpg/width=41,height=40,fp=0.5,0.5', { status: 200 });
  });

  it('malformed metadata, however long, is logged (quoted short) and ignored: the viewer gets the image', async () => {
    for (const key of ['long-tag.jpg', 'odd-tag.jpg']) {
      const uri = `/${key}/width=40,height=40`;
      const logsAt = origin.logs.length;
      await throughHandler(origin, uri, { status: 200 });
      const warnings = origin.logs.slice(logsAt).filter((entry) => entry.event === 'focal_point_ignored');
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0]!.detail).length).toBeLessThan(200);
    }
  });

  it('adds no work to the cover crop: the same memory prediction holds, and shrink-on-load is kept', async () => {
    const plain = '/photo.jpg/width=200,height=200';
    const focused = '/photo.jpg/width=200,height=200,fp=0.9,0.1';
    // A cut before scaling would decode all 24 MP; the cover crop decodes an eighth of each side.
    const cut = '/photo.jpg/width=200,height=200,crop=0.5,0,0.5,1';
    for (const uri of [plain, focused, cut]) await throughHandler(origin, uri, { status: 200 });
    const cpu = (uri: string) =>
      origin.logs.filter((entry) => entry.event === 'variant' && entry.uri === uri).at(-1)!.transformCpuSeconds as number;
    const [plainLog, focusedLog] = [variantLog(origin, plain), variantLog(origin, focused)];
    console.info('transform CPU seconds, 6000x4000 JPEG to 200x200:', {
      cover: cpu(plain),
      'cover at fp': cpu(focused),
      'crop region, then cover': cpu(cut),
    });
    expect(focusedLog.predictedMb).toBe(plainLog.predictedMb);
    expect(focusedLog.TransformRss - focusedLog.transformStartMb).toBeLessThanOrEqual(focusedLog.predictedMb + NOISE_MB);
    // Generous: the point costs what the plain crop costs, well under the full decode a cut takes.
    expect(cpu(focused)).toBeLessThan(Math.max(2 * cpu(plain), cpu(plain) + 0.05));
    expect(cpu(focused)).toBeLessThan(cpu(cut));
  });
});
