// The settings table (lib/settings-table.ts) as a seam: a row's context key
// becomes its prop, its prop its resolved field, and that field reaches the
// function the row names, under the row's name, with nothing else to edit.

import { App, Duration, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { propsFromContext, type ContextKey } from '../../lib/context';
import type { ImageTransformerProps } from '../../lib/props';
import { deploymentPlan } from '../../lib/plan';
import { resolveSettings } from '../../lib/resolved-settings';
import { SETTINGS, type TableKey } from '../../lib/settings-table';

const PROPS: ImageTransformerProps = {
  failureTtl: Duration.seconds(77),
  svgPolicy: 'rasterize',
  maxFrames: 9,
  cacheControl: 'public, max-age=600',
  avif: false,
  signing: true,
  browserMaxAge: Duration.seconds(5),
};
/** The same settings as `cdk deploy -c` gives them. */
const CONTEXT: Record<string, string> = {
  failureTtlSeconds: '77',
  svgPolicy: 'rasterize',
  maxFrames: '9',
  cacheControl: 'public, max-age=600',
  avif: 'false',
  signing: 'true',
  browserMaxAgeSeconds: '5',
};

const stack = () => new Stack(new App(), 'Images');
const settings = resolveSettings(stack(), PROPS);

describe('the settings table', () => {
  it('gives each row to the function it names, as the field of its name, resolved', () => {
    const plan = deploymentPlan(settings);
    const buckets = { sourceBucket: 'originals', cacheBucket: 'variants', sourceBuckets: {} };
    const given: Record<string, Record<string, unknown>> = {
      origin: { ...plan.origin(buckets) },
      viewerRequest: plan.viewerRequest,
      viewerResponse: { ...plan.viewerResponse },
      invalidation: { ...plan.invalidation(buckets, { distributionId: 'E1', distributionOrigin: 'https://d.example' }) },
    };
    const rowsGiven = Object.entries(SETTINGS).filter(([, row]) => row.to);
    expect(rowsGiven.length).toBeGreaterThan(5);
    for (const [name, row] of rowsGiven) expect(given[row.to!]![name], name).toEqual(settings[name as TableKey]);
    // The props' values, not the defaults.
    expect(given.origin).toMatchObject({
      failureTtlSeconds: 77,
      svgPolicy: 'rasterize',
      maxFrames: 9,
      cacheControl: 'public, max-age=600',
    });
    expect(given.viewerRequest).toMatchObject({ avif: false, signing: true });
    expect(given.viewerResponse).toMatchObject({ browserMaxAgeSeconds: 5 });
  });

  it("reads each row's context key as its prop: a deploy's context resolves as the same props do", () => {
    const scope = stack();
    const fromContext = resolveSettings(
      scope,
      propsFromContext(scope, (key: ContextKey) => CONTEXT[key]),
    );
    for (const name of Object.keys(SETTINGS) as TableKey[]) expect(fromContext[name], name).toEqual(settings[name]);
  });

  it('checks a row against the other props where it needs them', () => {
    expect(() => resolveSettings(stack(), { deploymentConfig: settings.deploymentConfig, canaryDeployments: false })).toThrow(
      'deploymentConfig is only used with canaryDeployments: true.',
    );
    expect(() => resolveSettings(stack(), { alarms: false, alarmEmail: 'oncall@example.com' })).toThrow(
      'alarmTopic and alarmEmail need alarms',
    );
  });
});
