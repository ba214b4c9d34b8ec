// The management API part (lib/parts/manage.ts) as synthesized: the HTTP API
// with IAM on every route (and, with a JWT issuer, the same routes under /user
// with its JWT authoriser), its stage's throttle and access logs, the
// validator's EventBridge rule and failure queue, both Lambdas' IAM, the
// upload CORS, and nothing of it with manageApi: false.

import type { Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import { MANAGE_DELETE_THROTTLE, MANAGE_THROTTLE } from '../../lib/parts/manage';
import type { ImageTransformerProps } from '../../lib/props';
import {
  actionsOf,
  type Json,
  logicalId,
  only,
  originFunction,
  JWT_ISSUER,
  refs,
  resources,
  roleActions,
  statements,
  synth,
  type Synthesized,
  synthesize,
} from './synth';

const { base, full, imported, buckets } = synthesize('base', 'full', 'imported', 'buckets');
const off = synth(() => ({ manageApi: false }));
const withCors = synth(() => ({ manageCorsOrigins: ['https://app.example.com', 'http://localhost:5173'] }));

const manage = (s: Synthesized) => {
  const t = s.stack.transformer;
  return { api: t.manageApi!, apiFunction: t.manageFunction!, validator: t.uploadValidatorFunction! };
};
const fn = (s: Synthesized, construct: Parameters<typeof logicalId>[1]) => s.json.Resources[logicalId(s, construct)] as Json;

/** A role's statements as [effect, actions, resource], the bucket's logical ID as `<bucket>`. */
function allowed(s: Synthesized, role: Parameters<typeof roleActions>[1], bucket: string): [string, string, unknown][] {
  return roleActions(s, role)
    .filter((st) => actionsOf(st).some((action) => action.startsWith('s3:')))
    .map((st) => [
      st.Effect,
      actionsOf(st).join(','),
      JSON.parse(JSON.stringify(st.Resource).replaceAll(JSON.stringify({ 'Fn::GetAtt': [bucket, 'Arn'] }), '"<bucket>"')),
    ]);
}

describe('the management HTTP API', () => {
  it('has the six routes, imports among them, each IAM-authorised (SigV4), each to the API Lambda', () => {
    for (const s of [base, full, imported, buckets]) {
      const routes = resources(s, 'AWS::ApiGatewayV2::Route').filter(([, route]) => !route.Properties.RouteKey.includes(' /user/'));
      expect(routes.map(([, route]) => route.Properties.RouteKey).sort()).toEqual(
        ['DELETE /images', 'GET /images', 'GET /images/{key+}', 'POST /uploads', 'POST /imports', 'GET /imports/{id}'].sort(),
      );
      for (const [id, route] of routes) expect(route.Properties.AuthorizationType, id).toBe('AWS_IAM');
      const [integrationId, integration] = only(s, 'AWS::ApiGatewayV2::Integration');
      expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      expect(refs(integration.Properties.IntegrationUri)).toEqual([logicalId(s, manage(s).apiFunction)]);
      for (const [, route] of routes) expect(JSON.stringify(route.Properties.Target)).toContain(integrationId);
      expect(only(s, 'AWS::ApiGatewayV2::Api')[1].Properties.ProtocolType).toBe('HTTP');
    }
    expect(resources(base, 'AWS::ApiGatewayV2::Authorizer')).toEqual([]);
    expect(only(base, 'AWS::ApiGatewayV2::Api')[1].Properties).not.toHaveProperty('CorsConfiguration');
  });

  it('with manageJwtIssuer, has the same routes under /user, each with the JWT authoriser of its issuer and audiences', () => {
    const [authorizerId, authorizer] = only(full, 'AWS::ApiGatewayV2::Authorizer');
    expect(authorizer.Properties).toMatchObject({
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Issuer: JWT_ISSUER, Audience: ['app-client-id'] },
    });
    const jwtRoutes = resources(full, 'AWS::ApiGatewayV2::Route').filter(([, route]) => route.Properties.RouteKey.includes(' /user/'));
    expect(jwtRoutes.map(([, route]) => route.Properties.RouteKey).sort()).toEqual(
      ['DELETE /user/images', 'GET /user/images', 'GET /user/images/{key+}', 'POST /user/uploads'].sort(),
    );
    const [integrationId] = only(full, 'AWS::ApiGatewayV2::Integration');
    for (const [id, route] of jwtRoutes) {
      expect(route.Properties, id).toMatchObject({ AuthorizationType: 'JWT', AuthorizerId: { Ref: authorizerId } });
      expect(JSON.stringify(route.Properties.Target)).toContain(integrationId);
    }
    // The Lambda confines those callers to the default prefix; the validator has nothing to confine.
    expect(fn(full, manage(full).apiFunction).Properties.Environment.Variables.MANAGE_JWT_PREFIX).toBe('users/{sub}/');
    expect(fn(full, manage(full).validator).Properties.Environment.Variables).not.toHaveProperty('MANAGE_JWT_PREFIX');
    expect(fn(base, manage(base).apiFunction).Properties.Environment.Variables).not.toHaveProperty('MANAGE_JWT_PREFIX');
    // Browsers from the upload origins may call it: API Gateway answers their preflights.
    expect(only(full, 'AWS::ApiGatewayV2::Api')[1].Properties.CorsConfiguration).toEqual({
      AllowOrigins: ['https://app.example.com'],
      AllowMethods: ['GET', 'POST', 'DELETE'],
      AllowHeaders: ['authorization', 'content-type'],
      MaxAge: 3600,
    });
    const format = JSON.parse(only(full, 'AWS::ApiGatewayV2::Stage')[1].Properties.AccessLogSettings.Format);
    expect(format.subject).toBe('$context.authorizer.claims.sub');
  });

  it('takes a prefix template naming one claim, and refuses JWT settings that do not make one', () => {
    const jwt = { manageJwtIssuer: JWT_ISSUER, manageJwtAudience: ['app'] };
    const tenants = synth(() => ({ ...jwt, manageJwtPrefix: 'tenants/{custom:tenant}/' }));
    expect(fn(tenants, manage(tenants).apiFunction).Properties.Environment.Variables.MANAGE_JWT_PREFIX).toBe('tenants/{custom:tenant}/');
    const refused: [ImageTransformerProps, RegExp][] = [
      [{ ...jwt, manageJwtPrefix: 'users/' }, /manageJwtPrefix must be exactly one \{claim\}/],
      [{ ...jwt, manageJwtPrefix: 'users/{sub}' }, /manageJwtPrefix must be a key prefix ending with \//],
      [{ ...jwt, manageJwtPrefix: '_quarantine/{sub}/' }, /manageJwtPrefix must be a safe key prefix/],
      [{ ...jwt, manageJwtPrefix: 'users/../{sub}/' }, /manageJwtPrefix must be a safe key prefix/],
      [{ manageJwtIssuer: JWT_ISSUER }, /manageJwtAudience is required with manageJwtIssuer/],
      [{ ...jwt, manageJwtIssuer: 'http://issuer.example.com' }, /manageJwtIssuer must be an https:\/\/ URL/],
      [{ ...jwt, manageApi: false }, /manageJwtIssuer is only used with manageApi: true/],
      [{ manageJwtAudience: ['app'] }, /manageJwtAudience is only used with manageJwtIssuer/],
      [{ manageJwtPrefix: 'users/{sub}/' }, /manageJwtPrefix is only used with manageJwtIssuer/],
    ];
    for (const [props, error] of refused) {
      expect(() => synth(() => props), JSON.stringify(props)).toThrow(error);
    }
  });

  it("throttles its stage (and DELETE /images harder) and logs each request to a log group with the deployment's retention", () => {
    for (const [s, days] of [
      [base, 30],
      [full, 14],
    ] as const) {
      const [, stage] = only(s, 'AWS::ApiGatewayV2::Stage');
      expect(stage.Properties).toMatchObject({
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: MANAGE_THROTTLE.rateLimit, ThrottlingBurstLimit: MANAGE_THROTTLE.burstLimit },
        RouteSettings: {
          'DELETE /images': {
            ThrottlingRateLimit: MANAGE_DELETE_THROTTLE.rateLimit,
            ThrottlingBurstLimit: MANAGE_DELETE_THROTTLE.burstLimit,
          },
        },
      });
      expect(Object.keys(stage.Properties.RouteSettings)).toEqual(
        s === full ? ['DELETE /images', 'DELETE /user/images'] : ['DELETE /images'],
      );
      const [groupId] = refs(stage.Properties.AccessLogSettings.DestinationArn);
      expect(s.json.Resources[groupId!].Properties.RetentionInDays).toBe(days);
      const format = JSON.parse(stage.Properties.AccessLogSettings.Format);
      expect(format).toMatchObject({ requestId: '$context.requestId', caller: '$context.identity.userArn', status: '$context.status' });
    }
  });

  it("is the stack output ManageApiUrl, its $default stage's URL", () => {
    const api = logicalId(base, manage(base).api);
    // ApiEndpoint: https://<api id>.execute-api.<region>.amazonaws.com, where the $default stage answers.
    expect(base.json.Outputs.ManageApiUrl.Value).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [api, 'ApiEndpoint'] }, '/']] });
  });

  it('is not reachable through the distribution: no origin of it names the API', () => {
    const api = logicalId(base, manage(base).api);
    const distribution = only(base, 'AWS::CloudFront::Distribution')[1];
    expect(refs(distribution)).not.toContain(api);
  });
});

describe('the management Lambdas', () => {
  it("read the origin's sources and limits, not its cache bucket; the validator has the origin's memory and more than its timeout", () => {
    const { apiFunction, validator } = manage(full);
    const origin = originFunction(full).Properties;
    const {
      MANAGE_JWT_PREFIX: _jwtPrefix,
      IMPORT_FUNCTION_ARN,
      IMPORT_ROLE_ARN,
      ...env
    } = fn(full, apiFunction).Properties.Environment.Variables;
    expect([IMPORT_FUNCTION_ARN, IMPORT_ROLE_ARN]).toEqual([expect.anything(), expect.anything()]);
    expect(fn(full, validator).Properties.Environment.Variables).toEqual(env);
    expect(env).toMatchObject({
      SOURCE_BUCKET: origin.Environment.Variables.SOURCE_BUCKET,
      MAX_SOURCE_BYTES: '10000000',
      MAX_INPUT_PIXELS: '50000000',
      MAX_FRAMES: '50',
      MAX_DIMENSION: '4096',
      SVG_POLICY: 'rasterize',
      TIME_BUDGET_MS: origin.Environment.Variables.TIME_BUDGET_MS,
      WEB_ORIGINS: origin.Environment.Variables.WEB_ORIGINS,
    });
    expect(env).not.toHaveProperty('CACHE_BUCKET');
    expect(fn(full, validator).Properties).toMatchObject({ MemorySize: 3008, Timeout: 90 });
    expect(fn(base, manage(base).validator).Properties).toMatchObject({ MemorySize: 2048, Timeout: 60 });
    expect(fn(base, manage(base).apiFunction).Properties).toMatchObject({ MemorySize: 256, Timeout: 15 });
  });

  it('tell the validator to strip location only with manageStripLocation, which needs the API', () => {
    const stripping = synth(() => ({ manageStripLocation: true }));
    expect(fn(stripping, manage(stripping).validator).Properties.Environment.Variables).toMatchObject({ MANAGE_STRIP_LOCATION: 'true' });
    expect(fn(base, manage(base).validator).Properties.Environment.Variables).not.toHaveProperty('MANAGE_STRIP_LOCATION');
    expect(() => synth(() => ({ manageApi: false, manageStripLocation: true }))).toThrow(/only used with manageApi/);
  });

  it('the API may sign uploads under _uploads/ only, read, list and delete sources, never delete an upload; write imports, run their jobs', () => {
    const source = logicalId(base, base.stack.transformer.sourceBucket);
    expect(allowed(base, manage(base).apiFunction.role!, source)).toEqual([
      ['Allow', 's3:PutObject', { 'Fn::Join': ['', ['<bucket>', '/_uploads/*']] }],
      ['Allow', 's3:ListBucket', '<bucket>'],
      ['Allow', 's3:GetObject', { 'Fn::Join': ['', ['<bucket>', '/*']] }],
      ['Allow', 's3:DeleteObject', { 'Fn::Join': ['', ['<bucket>', '/*']] }],
      [
        'Deny',
        's3:DeleteObject',
        [{ 'Fn::Join': ['', ['<bucket>', '/_uploads/*']] }, { 'Fn::Join': ['', ['<bucket>', '/_quarantine/*']] }],
      ],
      ['Allow', 's3:PutObject', { 'Fn::Join': ['', ['<bucket>', '/_imports/*']] }],
      ['Allow', 's3:CreateJob', '*'],
      ['Allow', 's3:DescribeJob', { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:eu-west-1:123456789012:job/*']] }],
    ]);
    // Keys under a mapped prefix are read and deleted in their bucket.
    const api = roleActions(buckets, manage(buckets).apiFunction.role!);
    const deletes = api.find((st) => st.Sid === 'DeleteImages')!;
    expect(JSON.stringify(deletes.Resource)).toContain('my-archive/*');
    expect(JSON.stringify(deletes.Resource)).toContain('my-press-kit/*');
  });

  it('the validator may read and delete uploads, put any source key and clear quarantine, and list the bucket', () => {
    const source = logicalId(base, base.stack.transformer.sourceBucket);
    expect(allowed(base, manage(base).validator.role!, source)).toEqual([
      ['Allow', 's3:GetObject', { 'Fn::Join': ['', ['<bucket>', '/_uploads/*']] }],
      ['Allow', 's3:ListBucket', '<bucket>'],
      ['Allow', 's3:PutObject', { 'Fn::Join': ['', ['<bucket>', '/*']] }],
      [
        'Allow',
        's3:DeleteObject',
        [{ 'Fn::Join': ['', ['<bucket>', '/_uploads/*']] }, { 'Fn::Join': ['', ['<bucket>', '/_quarantine/*']] }],
      ],
    ]);
  });
});

describe('validation on arrival', () => {
  it("runs the validator on EventBridge's Object Created events under _uploads/ of the source bucket, by one rule", () => {
    for (const s of [base, imported]) {
      const validator = logicalId(s, manage(s).validator);
      const rules = resources(s, 'AWS::Events::Rule').filter(([, rule]) =>
        rule.Properties.Targets.some((target: Json) => refs(target.Arn).includes(validator)),
      );
      expect(rules).toHaveLength(1);
      const [ruleId, rule] = rules[0]!;
      const bucketName = s === imported ? 'my-photos' : { Ref: logicalId(s, s.stack.transformer.sourceBucket) };
      expect(rule.Properties.EventPattern).toEqual({
        source: ['aws.s3'],
        'detail-type': ['Object Created'],
        detail: { bucket: { name: [bucketName] }, object: { key: [{ prefix: '_uploads/' }] } },
      });
      const permissions = resources(s, 'AWS::Lambda::Permission').filter(([, p]) => refs(p.Properties.FunctionName).includes(validator));
      expect(permissions.map(([, p]) => [p.Properties.Principal, refs(p.Properties.SourceArn)])).toEqual([
        ['events.amazonaws.com', [ruleId]],
      ]);
    }
  });

  it("turns on the source bucket's EventBridge delivery beside its notifications to the invalidation Lambda, adding no S3 notification", () => {
    for (const s of [base, imported]) {
      const [, notifications] = only(s, 'Custom::S3BucketNotifications');
      const configuration = notifications.Properties.NotificationConfiguration;
      expect(configuration.EventBridgeConfiguration).toEqual({});
      expect(configuration.LambdaFunctionConfigurations.map((c: Json) => c.Events).sort()).toEqual([
        ['s3:ObjectCreated:*'],
        ['s3:ObjectRemoved:*'],
      ]);
      const invalidation = logicalId(s, s.stack.transformer.invalidationFunction);
      for (const config of configuration.LambdaFunctionConfigurations) expect(refs(config.LambdaFunctionArn)).toEqual([invalidation]);
    }
  });
});

describe("the validator's failures", () => {
  it('go to one encrypted, TLS-only queue kept 14 days: Lambda retries a failed validation twice, then puts it there', () => {
    for (const s of [base, imported]) {
      const queue = logicalId(s, s.stack.transformer.uploadValidationFailureQueue!);
      const validator = logicalId(s, manage(s).validator);
      expect(s.json.Resources[queue].Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
      const [, policy] = resources(s, 'AWS::SQS::QueuePolicy').find(([, p]) => refs(p.Properties.Queues).includes(queue))!;
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
      const [, invoke] = resources(s, 'AWS::Lambda::EventInvokeConfig').find(([, c]) =>
        refs(c.Properties.FunctionName).includes(validator),
      )!;
      expect(invoke.Properties.MaximumRetryAttempts).toBe(2);
      expect(refs(invoke.Properties.DestinationConfig.OnFailure.Destination)).toEqual([queue]);
      const sends = roleActions(s, manage(s).validator.role!).filter((st) => actionsOf(st).includes('sqs:SendMessage'));
      expect(sends.map((st) => refs(st.Resource))).toEqual([[queue]]);
    }
  });

  it("and an event EventBridge could not hand to Lambda goes there too, after EventBridge's retries (a day)", () => {
    const queue = logicalId(base, base.stack.transformer.uploadValidationFailureQueue!);
    const validator = logicalId(base, manage(base).validator);
    const [, rule] = resources(base, 'AWS::Events::Rule').find(([, r]) => refs(r.Properties.Targets).includes(validator))!;
    expect(rule.Properties.Targets[0]).toMatchObject({
      RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
    });
    expect(refs(rule.Properties.Targets[0].DeadLetterConfig.Arn)).toEqual([queue]);
    const [, policy] = resources(base, 'AWS::SQS::QueuePolicy').find(([, p]) => refs(p.Properties.Queues).includes(queue))!;
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Allow', Action: 'sqs:SendMessage', Principal: { Service: 'events.amazonaws.com' } }),
    );
  });
});

describe('upload CORS', () => {
  const corsOf = (s: Synthesized) =>
    resources(s, 'AWS::S3::Bucket').find(([id]) => id === logicalId(s, s.stack.transformer.sourceBucket))![1].Properties.CorsConfiguration;

  it('lets the manageCorsOrigins post to the created source bucket, and no one by default', () => {
    expect(corsOf(withCors)).toEqual({
      CorsRules: [
        {
          Id: 'manage-uploads',
          AllowedMethods: ['POST'],
          AllowedOrigins: ['https://app.example.com', 'http://localhost:5173'],
          ExposedHeaders: ['ETag'],
          MaxAge: 3600,
        },
      ],
    });
    expect(corsOf(base)).toBeUndefined();
  });

  it('refuses origins that are not web origins, on an imported bucket, or without the API', () => {
    expect(() => synth(() => ({ manageCorsOrigins: ['https://app.example.com/path'] }))).toThrow(/manageCorsOrigins must be/);
    expect(() => synth(() => ({ manageCorsOrigins: ['app.example.com'] }))).toThrow(/manageCorsOrigins must be/);
    expect(() => synth(() => ({ manageApi: false, manageCorsOrigins: ['*'] }))).toThrow(/only used with manageApi/);
    const existing = (stack: Stack) => ({ sourceBucket: s3.Bucket.fromBucketName(stack, 'Photos', 'my-photos'), manageCorsOrigins: ['*'] });
    expect(() => synth(existing)).toThrow(/existing sourceBucket/);
  });
});

describe('manageApi: false', () => {
  it('deploys none of it: no API, no management Lambda, no rule, no EventBridge delivery, no output', () => {
    const t = off.stack.transformer;
    expect([t.manageApi, t.manageFunction, t.uploadValidatorFunction]).toEqual([undefined, undefined, undefined]);
    expect(Object.keys(off.json.Resources as Json).filter((id) => /Manage/.test(id))).toEqual([]);
    expect(Object.values(off.json.Resources as Json).filter((r: Json) => String(r.Type).startsWith('AWS::ApiGatewayV2::'))).toEqual([]);
    expect(resources(off, 'AWS::Events::Rule')).toEqual([]);
    expect(only(off, 'Custom::S3BucketNotifications')[1].Properties.NotificationConfiguration).not.toHaveProperty(
      'EventBridgeConfiguration',
    );
    expect(off.json.Outputs).not.toHaveProperty('ManageApiUrl');
    expect(statements(off).filter((st) => JSON.stringify(st.Resource ?? '').includes('_uploads'))).toEqual([]);
  });
});
