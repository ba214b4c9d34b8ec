// The stack bin/app.ts deploys: one ImageTransformer and the outputs an
// operator needs (where to point <img> tags, where to upload originals).

import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ImageTransformer } from './image-transformer';
import type { ImageTransformerProps } from './props';

export interface ImageTransformerStackProps extends StackProps {
  /** Builds the construct's props inside the stack (imports need a scope). */
  readonly transformer: (stack: Stack) => ImageTransformerProps;
}

export class ImageTransformerStack extends Stack {
  public readonly transformer: ImageTransformer;

  constructor(scope: Construct, id: string, props: ImageTransformerStackProps) {
    super(scope, id, props);
    const transformerProps = props.transformer(this);
    this.transformer = new ImageTransformer(this, 'ImageTransformer', transformerProps);
    const t = this.transformer;

    new CfnOutput(this, 'DistributionDomainName', {
      description: 'Image URLs: https://<this>/<source key>?w=640',
      value: t.distribution.distributionDomainName,
    });
    new CfnOutput(this, 'DistributionId', { value: t.distribution.distributionId });
    new CfnOutput(this, 'SourceBucketName', {
      description: 'Upload originals here; the object key is the URL path',
      value: t.sourceBucket.bucketName,
    });
    new CfnOutput(this, 'CacheBucketName', { description: 'Generated variants', value: t.cacheBucket.bucketName });
    if (t.logBucket) new CfnOutput(this, 'LogBucketName', { value: t.logBucket.bucketName });
    new CfnOutput(this, 'OriginFunctionName', {
      description: `The origin Lambda; CloudFront invokes its "${t.originAlias.aliasName}" alias`,
      value: t.originFunction.functionName,
    });
    new CfnOutput(this, 'InvalidationFailureQueueUrl', {
      description: 'Source changes the invalidation Lambda gave up on: npm run replay-invalidations -- --queue-url <this>',
      value: t.invalidationFailureQueue.queueUrl,
    });
    if (t.originConcurrencyCap) {
      new CfnOutput(this, 'OriginConcurrencyCap', {
        description: "What the origin's concurrency cap reserved, or why it reserved nothing",
        value: t.originConcurrencyCap.getAttString('Message'),
      });
    }
    if (t.manageApi) {
      new CfnOutput(this, 'ManageApiUrl', {
        description:
          'Management API (IAM: SigV4, service execute-api; with manageJwtIssuer, a JWT under /user/): POST /uploads, GET /images, DELETE /images',
        value: `${t.manageApi.apiEndpoint}/`,
      });
      new CfnOutput(this, 'UploadValidationFailureQueueUrl', {
        description: 'Uploads whose validation failed for good (still pending): npm run revalidate -- --bucket <SourceBucketName>',
        value: t.uploadValidationFailureQueue!.queueUrl,
      });
    }
    if (t.dashboard) new CfnOutput(this, 'DashboardName', { description: 'CloudWatch dashboard', value: t.dashboard.dashboardName });
    if (t.deploymentGroup) {
      new CfnOutput(this, 'OriginDeploymentApplication', {
        description: 'CodeDeploy application of the origin canary deployments',
        value: t.deploymentGroup.application.applicationName,
      });
      new CfnOutput(this, 'OriginDeploymentGroup', {
        description: 'CodeDeploy deployment group of the origin canary deployments',
        value: t.deploymentGroup.deploymentGroupName,
      });
    }
    if (t.alarmTopic) new CfnOutput(this, 'AlarmTopicArn', { description: 'SNS topic the alarms notify', value: t.alarmTopic.topicArn });
    // Without signing the store holds only what each deploy writes: nothing for an operator to put in.
    if (transformerProps.signing) {
      new CfnOutput(this, 'SigningKeyValueStoreArn', {
        description: 'Put the signing secrets here (key "signing-secrets", comma- or newline-separated)',
        value: t.keyValueStore.keyValueStoreArn,
      });
    }
  }
}
