// cdk-nag (AwsSolutions) findings that are deliberate, acknowledged by the
// part that makes them, each with its reason. Acknowledgements are plain CDK
// metadata: no cdk-nag dependency at run time.

import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The reason for each finding that turning accessLogging off causes. */
export const ACCESS_LOGGING_OFF = 'Access logging was turned off by the operator (accessLogging: false).';

/** Acknowledges cdk-nag finding `id` on `scope`, for `reason`. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/** The id of cdk-nag's IAM5 finding for a wildcard resource such as `bucket.arnForObjects('*')`. */
export function wildcardFinding(scope: IConstruct, arn: string): string {
  return `AwsSolutions-IAM5[Resource::${flattenReference(Stack.of(scope).resolve(arn))}]`;
}

/** The flat string cdk-nag uses for a resolved CloudFormation value (its flattenCfnReference). */
function flattenReference(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (value && typeof value === 'object') {
    const node = value as Record<string, unknown>;
    if (node['Fn::Join']) {
      const [delimiter, items] = node['Fn::Join'] as [string, unknown[]];
      return items.map(flattenReference).join(delimiter);
    }
    if (node['Fn::Sub']) return flattenReference(node['Fn::Sub']);
    if (node['Fn::GetAtt']) {
      const [resource, attribute] = node['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if (node['Fn::ImportValue']) return flattenReference(node['Fn::ImportValue']);
    if (node.Ref) return `<${flattenReference(node.Ref)}>`;
  }
  return JSON.stringify(value);
}
