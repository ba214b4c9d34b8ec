// A deployment with a dialect switched on (lib/plan.ts, lib/parts/edge-functions.ts,
// lib/parts/delivery.ts), as synthesized: each dialect grammar's function on
// its behavior, the store holding the dialect's data and the buckets its
// requests may name, and the settings that cannot be.

import { describe, expect, it } from 'vitest';
import { BUCKETS_KEY } from '../../lambda/edge/store';
import { distributionConfig, type Json, logicalId, resources, synth, synthesize } from './synth';

const { dialects, buckets } = synthesize('dialects', 'buckets');

/** The function each cache behavior's viewer requests run, by path pattern (`*` the default). */
const requestFunctions = (s: ReturnType<typeof synth>): Record<string, string> => {
  const config = distributionConfig(s);
  const viewerRequest = (behavior: Json) =>
    (behavior.FunctionAssociations as Json[]).find((association) => association.EventType === 'viewer-request')!.FunctionARN[
      'Fn::GetAtt'
    ][0];
  return Object.fromEntries([
    ...((config.CacheBehaviors ?? []) as Json[]).map((behavior) => [behavior.PathPattern, viewerRequest(behavior)]),
    ['*', viewerRequest(config.DefaultCacheBehavior)],
  ]);
};

const codeOf = (s: ReturnType<typeof synth>, id: string): string => {
  const code = s.json.Resources[id].Properties.FunctionCode;
  return typeof code === 'string' ? code : JSON.stringify(code);
};

describe('dialects: dit', () => {
  it("serves DIT's base64 requests under /eyJ* with their own function, and Thumbor paths everywhere else", () => {
    const functions = requestFunctions(dialects);
    const json = functions['/eyJ*']!;
    const thumbor = functions['*']!;
    expect(json).not.toBe(thumbor);
    // The web prefix's behavior reads the default's grammar.
    expect(functions['/shop/*']).toBe(thumbor);
    expect(thumbor).toBe(logicalId(dialects, dialects.stack.transformer.viewerRequestFunction));
    // The base64 path's expression, and the HMAC-SHA1 of Thumbor's signature segment.
    expect(codeOf(dialects, json)).toContain('{0,8192}');
    expect(codeOf(dialects, json)).not.toContain('sha1');
    expect(codeOf(dialects, thumbor)).toContain('sha1');
    expect(codeOf(dialects, thumbor)).not.toContain('{0,8192}');
    // The dialect's own behavior comes first: CloudFront takes the first pattern that matches.
    expect((distributionConfig(dialects).CacheBehaviors as Json[])[0]!.PathPattern).toBe('/eyJ*');
    expect(resources(dialects, 'AWS::CloudFront::Function')).toHaveLength(3);
  });

  it('writes the dialect data and the buckets a request may name, with their real names, into the store', () => {
    const [, edgeData] = resources(dialects, 'Custom::EdgeData')[0]!;
    const entries = edgeData.Properties.Entries as Json;
    const bucketsValue = JSON.stringify(entries[BUCKETS_KEY]);
    // The created source bucket by its Ref, the imported ones by name, each with its prefix.
    expect(bucketsValue).toContain(logicalId(dialects, dialects.stack.transformer.sourceBucket));
    expect(bucketsValue).toMatch(/my-archive\\+":\\+"archive\//);
    expect(bucketsValue).toMatch(/my-press-kit\\+":\\+"press\/kit\//);
    // Without a dialect, no such entry.
    const [, plain] = resources(buckets, 'Custom::EdgeData')[0]!;
    expect(plain.Properties.Entries[BUCKETS_KEY]).toBeUndefined();
  });

  it('refuses an unknown dialect, naming the known ones', () => {
    expect(() => synth(() => ({ dialects: ['dit', 'thumbor' as 'dit'] }))).toThrow(
      /no dialect "thumbor"; the dialects are dit, imgix, cloudflare/,
    );
  });

  it('refuses dit with imgix: both read every path', () => {
    expect(() => synth(() => ({ dialects: ['dit', 'imgix'] }))).toThrow(/dit and imgix both read every URL path/);
  });
});
