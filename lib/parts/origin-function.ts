// The origin Lambda: sharp behind the `live` alias's Function URL, which
// CloudFront reaches through OAC when the cache bucket has no variant yet.
// Built in the ImageTransformer's own scope (logical IDs unchanged).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CustomResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { originEnvironment } from '../../lambda/origin/config';
import { FACES_SEGMENT, FAILURES_PREFIX, SUBJECT_SEGMENT } from '../../lambda/origin/cache-keys';
import { recordPrefixes } from '../../lambda/origin/sources';
import type { DeploymentPlan } from '../plan';
import type { ResolvedSettings } from '../resolved-settings';
import { ImageTransformerConfigError } from '../settings';
import { bucketNames } from './buckets';
import { buildConcurrencyCap } from './concurrency-cap';
import { PROJECT_FUNCTION, PROJECT_ROOT, lambdaEntry, ownLogsAndRole } from './lambda-project';
import { acknowledge, wildcardFinding } from './nag';
import { packagingCommands, type PackagedFile } from '../image-files';
import { watermarkFiles } from '../watermarks';
import { fontFiles } from '../own-fonts';
import { FACE_DETECTOR_EXTERNALS, faceDetectorCommands } from '../face-detector';
import { fontsCommands } from '../fonts';
import { subjectModelCommands } from '../subject-model';
import { ORIGIN_ALIAS_NAME } from './origin-alias';

export interface OriginFunctionProps extends Pick<
  ResolvedSettings,
  | 'sourceBuckets'
  | 'memorySize'
  | 'timeout'
  | 'watermarks'
  | 'fonts'
  | 'fallbackImage'
  | 'reservedConcurrency'
  | 'provisionedConcurrency'
  | 'concurrencyCap'
  | 'logRetention'
  | 'removalPolicy'
  | 'originFunctionProps'
> {
  readonly plan: Pick<DeploymentPlan, 'origin' | 'originMetrics' | 'routes'>;
  /** Read: the originals (those outside sourceBuckets' prefixes). */
  readonly sourceBucket: s3.IBucket;
  /** Written: the variants. */
  readonly cacheBucket: s3.IBucket;
}

export interface OriginFunction {
  readonly function: nodejs.NodejsFunction;
  /** The version this deployment published. */
  readonly version: lambda.IVersion;
  /** `live`: what the Function URL invokes and canary deployments shift. */
  readonly alias: lambda.Alias;
  /** The alias's Function URL (AWS_IAM, streamed). */
  readonly functionUrl: lambda.FunctionUrl;
  /** The deploy-time concurrency cap; absent with a fixed reservedConcurrency. */
  readonly concurrencyCap?: CustomResource;
}

/** The sharp version in package.json: the one the arm64 reinstall must fetch. */
function sharpVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const version = pkg.dependencies?.sharp;
  if (!version) throw new ImageTransformerConfigError('package.json must list sharp in "dependencies".');
  return version;
}

/** A POSIX shell single-quoted string. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Creates the origin in `scope`: `OriginLogs`, `OriginRole`, `OriginFunction`, `OriginLive` and its URL, the concurrency cap. */
export function buildOriginFunction(scope: Construct, props: OriginFunctionProps): OriginFunction {
  const { sourceBucket, sourceBuckets, cacheBucket, plan } = props;
  const buckets = { sourceBucket: sourceBucket.bucketName, sourceBuckets: bucketNames(sourceBuckets), cacheBucket: cacheBucket.bucketName };
  // The faces of a source are remembered beside its variants, whatever its key (face-memory.ts).
  const ownRecords = [FAILURES_PREFIX, ...recordPrefixes(plan.routes(buckets)), '*' + FACES_SEGMENT, '*' + SUBJECT_SEGMENT];
  const { logGroup, role } = ownLogsAndRole(
    scope,
    'Origin',
    'edge-image-transformer origin: read sources, write variants, write its own logs',
    props,
  );
  grantOriginAccess(role, props, ownRecords);

  const originFunction = new nodejs.NodejsFunction(scope, 'OriginFunction', {
    description: 'edge-image-transformer origin: makes a missing variant with sharp',
    entry: lambdaEntry('origin'),
    ...PROJECT_FUNCTION,
    memorySize: props.memorySize,
    timeout: props.timeout,
    role,
    logGroup,
    reservedConcurrentExecutions: props.reservedConcurrency,
    environment: originEnvironment(plan.origin(buckets), plan.originMetrics),
    bundling: sharpBundling({
      packagedFiles: [
        ...watermarkFiles(props.watermarks),
        ...fontFiles(props.fonts),
        ...(props.fallbackImage ? [props.fallbackImage] : []),
      ],
      models: true,
    }),
    ...props.originFunctionProps,
  });

  // CloudFront reaches the origin through the live alias, never $LATEST: each deployment
  // publishes a version, and the alias moves to it (in a canary, CodeDeploy moves it).
  const version = originFunction.currentVersion;
  const alias = new lambda.Alias(scope, 'OriginLive', {
    aliasName: ORIGIN_ALIAS_NAME,
    version,
    description: 'edge-image-transformer origin: the version CloudFront invokes',
    ...(props.provisionedConcurrency ? { provisionedConcurrentExecutions: props.provisionedConcurrency } : {}),
  });
  const concurrencyCap =
    props.concurrencyCap === undefined
      ? undefined
      : buildConcurrencyCap(scope, {
          ...props,
          cap: props.concurrencyCap,
          floor: props.provisionedConcurrency ?? 0,
          originFunction,
          originVersion: version,
        });
  const functionUrl = alias.addFunctionUrl({
    authType: lambda.FunctionUrlAuthType.AWS_IAM,
    // Streamed: the viewer gets the variant before the invocation stores it (lambda/origin/index.ts).
    invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
  });

  acknowledgeOriginFindings(scope, role, props, ownRecords);
  return { function: originFunction, version, alias, functionUrl, ...(concurrencyCap ? { concurrencyCap } : {}) };
}

/** The origin role's S3 (and KMS) access: read the sources, write the variants, read back its own records under `ownRecords`. */
function grantOriginAccess(role: iam.Role, props: OriginFunctionProps, ownRecords: string[]): void {
  const { sourceBucket, cacheBucket } = props;
  const prefixBuckets = Object.values(props.sourceBuckets);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadSources',
      actions: ['s3:GetObject'],
      resources: [sourceBucket, ...prefixBuckets].map((bucket) => bucket.arnForObjects('*')),
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      // Without it S3 answers 403, not 404, for a missing source key.
      sid: 'TellMissingSourcesApart',
      actions: ['s3:ListBucket'],
      resources: [sourceBucket.bucketArn],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'WriteVariants',
      actions: ['s3:PutObject'],
      resources: [cacheBucket.arnForObjects('*')],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      // A miss reads back only what it wrote itself: the failures it remembers, and the
      // variants of web sources (under `/<prefix>`), which it serves until they are checked upstream again.
      sid: 'ReadOwnRecords',
      actions: ['s3:GetObject'],
      resources: ownRecords.map((prefix) => cacheBucket.arnForObjects(prefix + '*')),
    }),
  );
  for (const bucket of [sourceBucket, ...prefixBuckets]) bucket.encryptionKey?.grantDecrypt(role);
}

/**
 * How a Lambda that runs sharp is bundled (the origin, the management API's
 * validator): minified with the SDK in it, sharp (and with `models`, the face
 * detector and the subject model) installed for linux arm64 beside it, and
 * `packagedFiles` copied in.
 */
export function sharpBundling({ packagedFiles, models }: { packagedFiles: PackagedFile[]; models: boolean }): nodejs.BundlingOptions {
  const arm64SharpVersion = sharpVersion();
  return {
    minify: true,
    sourceMap: true,
    sourcesContent: false,
    // The AWS SDK is bundled rather than taken from the runtime: the code runs
    // with the versions in package-lock.json that the tests ran (conditional
    // PutObject included), not whichever SDK the runtime ships that month.
    bundleAwsSDK: true,
    // The SDK's ES module builds, which esbuild tree-shakes: a quarter less code
    // to load at a cold start (`npm run bench`, "Memory and cold start").
    mainFields: ['module', 'main'],
    // sharp is a native module, and libheif-js reads its .wasm from beside its own file:
    // both are installed next to the bundle, not bundled...
    nodeModules: ['sharp', 'libheif-js'],
    // The face detector's runtime is installed for linux-arm64 below, never for the build machine.
    externalModules: FACE_DETECTOR_EXTERNALS,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      // ...and the install above is for the build machine's platform. Reinstall it
      // for the Lambda (linux arm64 glibc), then drop other platforms' binaries.
      afterBundling: (_inputDir: string, outputDir: string) => [
        // ONE command: local bundling runs each command in its own shell, from the
        // project root, so a separate `cd` would not hold and the install would
        // rewrite the project's own node_modules for arm64.
        [
          `cd ${shellQuote(outputDir)}`,
          'test -f package.json',
          `npm install --no-save --no-audit --no-fund --os=linux --cpu=arm64 --libc=glibc sharp@${arm64SharpVersion}`,
          ...(models ? [...faceDetectorCommands(), ...subjectModelCommands(shellQuote)] : []),
          // The text fonts, always: no request can draw text without them.
          ...fontsCommands(shellQuote),
          'find node_modules/@img -mindepth 1 -maxdepth 1 -name "sharp-*" ! -name "*-linux-arm64" -exec rm -rf {} +',
          'test -d node_modules/@img/sharp-linux-arm64',
          'test -d node_modules/@img/sharp-libvips-linux-arm64',
          ...packagingCommands(packagedFiles, outputDir, shellQuote),
        ].join(' && '),
      ],
    },
  };
}

/** The origin role's deliberate cdk-nag findings: each wildcard on objects, with its reason. */
function acknowledgeOriginFindings(scope: Construct, role: iam.Role, props: OriginFunctionProps, ownRecords: string[]): void {
  const { sourceBucket, cacheBucket } = props;
  for (const bucket of [sourceBucket, ...Object.values(props.sourceBuckets)]) {
    acknowledge(
      role,
      wildcardFinding(scope, bucket.arnForObjects('*')),
      'The origin reads whichever source key a viewer names: s3:GetObject (a single action) on the source bucket objects, nothing else.',
    );
  }
  acknowledge(
    role,
    wildcardFinding(scope, cacheBucket.arnForObjects('*')),
    'Variant keys are derived from any source key: s3:PutObject (a single action, conditional If-None-Match writes) on the cache bucket objects only.',
  );
  for (const prefix of ownRecords) {
    acknowledge(
      role,
      wildcardFinding(scope, cacheBucket.arnForObjects(prefix + '*')),
      `s3:GetObject (a single action) on the cache bucket's "${prefix}" objects only, which the origin itself writes.`,
    );
  }
}
