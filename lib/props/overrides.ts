// ImageTransformerProps, overrides: props of the underlying CDK constructs passed through unchecked.

import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';

/** Props of the origin Lambda and of the distribution passed through as they are. */
export interface OverrideProps {
  /**
   * Props of the origin Lambda this construct does not model (e.g.
   * `ephemeralStorageSize`, `tracing`, `vpc`), passed through as the
   * aws-solutions-constructs pass theirs: each one given replaces the
   * construct's own value of that prop, as it is. Prefer the construct's
   * settings where there is one (memorySize, timeout, ...): what is given
   * here is not checked, nor seen by the local emulator.
   * @default - none
   */
  readonly originFunctionProps?: Partial<nodejs.NodejsFunctionProps>;

  /**
   * Props of the CloudFront distribution this construct does not model
   * (e.g. `httpVersion`, `defaultRootObject`, `publishAdditionalMetrics`),
   * passed through: each one given replaces the construct's own value of
   * that prop, as it is (a `defaultBehavior` given replaces the whole
   * behavior). What is given here is not checked, nor seen by the local emulator.
   * @default - none
   */
  readonly distributionProps?: Partial<cloudfront.DistributionProps>;
}
