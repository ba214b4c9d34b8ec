// Props the construct does not model reach the template as given: the origin
// Lambda's (originFunctionProps) and the distribution's (distributionProps),
// each replacing the construct's own value of that prop.

import { Size } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { distributionConfig, originFunction, synth, synthesize } from './synth';

const { base } = synthesize('base');
const overridden = synth(() => ({
  originFunctionProps: { ephemeralStorageSize: Size.mebibytes(2048), tracing: lambda.Tracing.ACTIVE },
  distributionProps: { httpVersion: cloudfront.HttpVersion.HTTP2, defaultRootObject: 'index.html' },
}));

describe('overrides', () => {
  it('give the origin Lambda props the construct does not set, and leave its own settings as they were', () => {
    expect(originFunction(base).Properties.EphemeralStorage).toBeUndefined();
    expect(originFunction(overridden).Properties.EphemeralStorage).toEqual({ Size: 2048 });
    expect(originFunction(overridden).Properties.TracingConfig).toEqual({ Mode: 'Active' });
    expect(originFunction(overridden).Properties.MemorySize).toBe(originFunction(base).Properties.MemorySize);
  });

  it("replace the distribution's own value of a prop, and leave the rest of it as it was", () => {
    expect(distributionConfig(base).HttpVersion).toBe('http2and3');
    expect(distributionConfig(overridden).HttpVersion).toBe('http2');
    expect(distributionConfig(overridden).DefaultRootObject).toBe('index.html');
    expect(distributionConfig(overridden).DefaultCacheBehavior).toEqual(distributionConfig(base).DefaultCacheBehavior);
  });
});
