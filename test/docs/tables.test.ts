// The documented tables list exactly what the code knows: the README's URL
// parameters and their aliases (the grammar's parameter table), and
// docs/configuration.md's CDK context keys and origin environment variables.
// A parameter or key added to the code without a line in the docs (or a line
// left for one that is gone) fails here.

import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../lib/context';
import { readConfig, readMetricsOptions } from '../../lambda/origin/config';
import { PRESET_SPELLINGS, SIGNATURE_PARAMS, VIEWER_PARAMS } from '../../lambda/grammar/index';
import { codeSpans, firstColumn, readDoc, tableColumn } from './markdown';

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

  it('lists every environment variable the origin reads, once, and no other', () => {
    const variables = variablesTheOriginReads();
    expect(variables).toContain('MAX_SOURCE_BYTES');
    expect(documented('## Origin configuration')).toEqual(variables);
  });
});

describe("README.md's URL parameters", () => {
  const readme = readDoc('README.md');
  const names = tableColumn(readme, '## URL parameters', 0).map(codeSpans);
  const aliases = tableColumn(readme, '## URL parameters', 1).map(codeSpans);

  it('lists every parameter a viewer may give, once, and no other', () => {
    const documented = names.flat().sort();
    const known = [...VIEWER_PARAMS.map((param) => param.name as string), PRESET_SPELLINGS[0] as string, ...SIGNATURE_PARAMS].sort();
    expect(documented).toEqual(known);
  });

  it("gives each parameter exactly the grammar's aliases", () => {
    const documented = Object.fromEntries(names.flatMap((row, i) => row.map((name) => [name, (aliases[i] ?? []).sort()])));
    const known = Object.fromEntries(VIEWER_PARAMS.map((param) => [param.name, [...param.aliases].sort()]));
    known[PRESET_SPELLINGS[0] as string] = PRESET_SPELLINGS.slice(1);
    for (const name of SIGNATURE_PARAMS) known[name] = [];
    expect(documented).toEqual(known);
  });
});
