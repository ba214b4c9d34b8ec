// Imports from a legacy server (docs/manage.md, "Imports"): the per-key
// Lambda (lambda/manage/importer.ts) that S3 Batch Operations invokes for each
// line of an import's manifest, the role Batch Operations takes to run such a
// job, and what the API Lambda needs to start one and ask how it goes.
// Everything of an import is kept under `_imports/` of the source bucket.

import { Aws, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { IMPORTS_PREFIX, QUARANTINE_PREFIX } from '../../lambda/common/staging';
import { IMPORT_FETCH_MS } from '../../lambda/manage/imports/import-item';
import type { ResolvedSettings } from '../resolved-settings';
import { acknowledge, wildcardFinding } from './nag';

/** The service that runs S3 Batch Operations jobs, and takes their role. */
const BATCH_OPERATIONS = 'batchoperations.s3.amazonaws.com';

/** The importer's time beyond the origin's timeout and its fetch: for putting a source as large as the limit. */
const IMPORTER_EXTRA_SECONDS = 30;

export interface ManageImportsProps extends Pick<ResolvedSettings, 'memorySize' | 'timeout'> {
  readonly sourceBucket: s3.IBucket;
  /** The API Lambda, which writes manifests, creates the jobs and reads them. */
  readonly apiFunction: nodejs.NodejsFunction;
  /** Makes a management Lambda (lib/parts/manage.ts's manageFunction), with the validator's bundling. */
  readonly makeImporter: (made: {
    description: string;
    roleDescription: string;
    grant: (role: iam.Role) => void;
    function: Pick<nodejs.NodejsFunctionProps, 'memorySize' | 'timeout'>;
  }) => nodejs.NodejsFunction;
}

export interface ManageImports {
  /** The per-key Lambda. */
  readonly importer: nodejs.NodejsFunction;
  /** The role Batch Operations takes for an import's job. */
  readonly batchRole: iam.Role;
}

/**
 * Creates `ManageImporterLogs`, `ManageImporterRole`, `ManageImporterFunction` and
 * `ManageImportsBatchRole`, and gives the API Lambda what it needs to run imports.
 */
export function buildManageImports(scope: Construct, props: ManageImportsProps): ManageImports {
  const { sourceBucket } = props;
  // The origin's memory, and its timeout plus a fetch's: one source is fetched, judged as an upload is, and stored.
  const importer = props.makeImporter({
    description:
      'edge-image-transformer importer: one URL of a legacy server fetched, validated as an upload, stored (S3 Batch Operations)',
    roleDescription: 'edge-image-transformer importer: store an imported source at its key or in quarantine, write its own logs',
    grant: (role) => grantImporterAccess(role, sourceBucket),
    function: {
      memorySize: props.memorySize,
      timeout: props.timeout.plus(Duration.seconds(Math.ceil(IMPORT_FETCH_MS / 1000) + IMPORTER_EXTRA_SECONDS)),
    },
  });
  const batchRole = buildBatchRole(scope, sourceBucket, importer);
  grantJobControl(props.apiFunction, sourceBucket, importer, batchRole);
  return { importer, batchRole };
}

/**
 * The importer stores a source at any key, or its quarantine and record, and
 * clears a key's earlier quarantine; it reads a manifest under `_imports/` and
 * writes it again for Batch Operations there, in parts (an upload it gives up
 * is aborted).
 */
function grantImporterAccess(role: iam.Role, sourceBucket: s3.IBucket): void {
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'StoreImports', actions: ['s3:PutObject'], resources: [sourceBucket.arnForObjects('*')] }),
  );
  const imports = sourceBucket.arnForObjects(IMPORTS_PREFIX + '*');
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'ConvertManifests', actions: ['s3:GetObject', 's3:AbortMultipartUpload'], resources: [imports] }),
  );
  acknowledge(
    role,
    wildcardFinding(role, imports),
    'Under _imports/ only: the importer reads a manifest put there and writes it again, in parts, for Batch Operations.',
  );
  const quarantined = sourceBucket.arnForObjects(QUARANTINE_PREFIX + '*');
  role.addToPolicy(new iam.PolicyStatement({ sid: 'ClearQuarantine', actions: ['s3:DeleteObject'], resources: [quarantined] }));
  sourceBucket.encryptionKey?.grantEncryptDecrypt(role);
  acknowledge(
    role,
    wildcardFinding(role, sourceBucket.arnForObjects('*')),
    's3:PutObject (a single action) on the source bucket objects: an imported image is stored at its own key, which may be any source key.',
  );
  acknowledge(
    role,
    wildcardFinding(role, quarantined),
    "s3:DeleteObject under _quarantine/ only: an image imported ready clears its key's quarantine.",
  );
}

/** The role of an import's job: read its manifest, invoke the importer, write its report; in this account only. */
function buildBatchRole(scope: Construct, sourceBucket: s3.IBucket, importer: nodejs.NodejsFunction): iam.Role {
  const role = new iam.Role(scope, 'ManageImportsBatchRole', {
    description: 'edge-image-transformer imports: S3 Batch Operations reads an import manifest, invokes the importer, writes the report',
    assumedBy: new iam.ServicePrincipal(BATCH_OPERATIONS, { conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } } }),
  });
  const imports = sourceBucket.arnForObjects(IMPORTS_PREFIX + '*');
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'ReadManifests', actions: ['s3:GetObject', 's3:GetObjectVersion'], resources: [imports] }),
  );
  role.addToPolicy(new iam.PolicyStatement({ sid: 'WriteReports', actions: ['s3:PutObject'], resources: [imports] }));
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'InvokeImporter', actions: ['lambda:InvokeFunction'], resources: [importer.functionArn] }),
  );
  sourceBucket.encryptionKey?.grantEncryptDecrypt(role);
  acknowledge(
    role,
    wildcardFinding(role, imports),
    'Under _imports/ only: each import has its own folder, its manifest read and its completion report written there by Batch Operations.',
  );
  return role;
}

/**
 * The API Lambda writes an import's manifest and record under `_imports/`,
 * invokes the importer to convert a manifest, creates the job with the batch
 * role (passed to Batch Operations only), and describes it. s3:CreateJob has
 * no resource to name: it is the account's.
 */
function grantJobControl(
  apiFunction: nodejs.NodejsFunction,
  sourceBucket: s3.IBucket,
  importer: nodejs.NodejsFunction,
  batchRole: iam.Role,
): void {
  const role = apiFunction.role!;
  const imports = sourceBucket.arnForObjects(IMPORTS_PREFIX + '*');
  const jobs = Stack.of(apiFunction).formatArn({ service: 's3', resource: 'job', resourceName: '*' });
  role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'WriteImports', actions: ['s3:PutObject'], resources: [imports] }));
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: 'ConvertManifests', actions: ['lambda:InvokeFunction'], resources: [importer.functionArn] }),
  );
  role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'CreateImportJobs', actions: ['s3:CreateJob'], resources: ['*'] }));
  role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'DescribeImportJobs', actions: ['s3:DescribeJob'], resources: [jobs] }));
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'PassTheBatchRole',
      actions: ['iam:PassRole'],
      resources: [batchRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': BATCH_OPERATIONS } },
    }),
  );
  apiFunction.addEnvironment('IMPORT_FUNCTION_ARN', importer.functionArn);
  apiFunction.addEnvironment('IMPORT_ROLE_ARN', batchRole.roleArn);
  acknowledge(
    role,
    wildcardFinding(role, imports),
    's3:PutObject under _imports/ only: the API writes each import manifest and job record in its own folder.',
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    's3:CreateJob names no resource: it is an action on the account. The job runs with the batch role only (iam:PassRole to it alone).',
  );
  acknowledge(
    role,
    wildcardFinding(role, jobs),
    "s3:DescribeJob on the account's jobs: an import's job id is only known once it is created.",
  );
}
