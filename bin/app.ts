// The CDK app `cdk deploy` runs. Configure it with context values, e.g.
//
//   npx cdk deploy -c sourceBucket=my-photos -c sizes=320,640,1280 -c signing=true
//
// Every key is listed, with its default, in CONTEXT_KEYS (lib/context.ts).
// cdk-nag's AwsSolutions checks run at every synth (turn off with -c nag=false);
// a finding that is not acknowledged with a reason stops the synth.

import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { appSettingsFromContext, propsFromContext, type ContextKey } from '../lib/context';
import { assertSupportedNode } from '../lib/node-version';
import { ImageTransformerStack } from '../lib/stack';

assertSupportedNode();
const app = new App();
const get = (key: ContextKey): unknown => app.node.tryGetContext(key);
const settings = appSettingsFromContext(get);

new ImageTransformerStack(app, settings.stackName, {
  description: 'edge-image-transformer: CloudFront + CloudFront Function + S3 cache + sharp on Lambda',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  transformer: (stack) => propsFromContext(stack, get),
});

if (settings.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

app.synth();
