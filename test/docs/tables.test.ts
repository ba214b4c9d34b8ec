// docs/configuration.md's two tables list exactly what the code reads: every
// CDK context key bin/app.ts understands, and every environment variable the
// origin Lambda reads. A key added to the code without a line in the docs (or
// a line left for a key that is gone) fails here.

import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../lib/context';
import { readConfig, readMetricsOptions } from '../../lambda/origin/config';
import { codeSpans, firstColumn, readDoc } from './markdown';

const configuration = readDoc('docs/configuration.md');

function documented(heading: string): string[] {
  return firstColumn(configuration, heading).flatMap(codeSpans).sort();
}

/** The environment variables the origin's readers look at, recorded while they read a minimal environment. */
function variablesTheOriginReads(): string[] {
  const read = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>(
    { SOURCE_BUCKET: 'originals', CACHE_BUCKET: 'variants' },
    {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return Reflect.get(target, name);
      },
    },
  );
  readConfig(env);
  readMetricsOptions(env);
  return [...read].sort();
}

describe('docs/configuration.md', () => {
  it('lists every CDK context key, once, and no other', () => {
    expect(documented('## Settings (CDK context)')).toEqual(Object.keys(CONTEXT_KEYS).sort());
  });

  it("lists every environment variable the origin reads, once, and no other", () => {
    const variables = variablesTheOriginReads();
    expect(variables).toContain('MAX_SOURCE_BYTES');
    expect(documented('## Origin configuration')).toEqual(variables);
  });
});
