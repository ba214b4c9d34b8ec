// The imports part (lib/parts/manage-imports.ts) as synthesized: the per-key
// Lambda S3 Batch Operations invokes, the role its jobs take (read the
// manifest, invoke that Lambda, write the report, nothing more), and the API
// Lambda's right to pass that role to Batch Operations alone and to create
// and describe jobs.

import { describe, expect, it } from 'vitest';
import { IMPORT_FETCH_MS } from '../../lambda/manage/imports/import-item';
import { actionsOf, type Json, logicalId, originFunction, resources, roleActions, synth, type Synthesized, synthesize } from './synth';

const { base, full } = synthesize('base', 'full');
const off = synth(() => ({ manageApi: false }));

/** The one resource of `type` whose logical ID starts with `prefix`. */
function named(s: Synthesized, type: string, prefix: string): [string, Json] {
  const found = resources(s, type).filter(([id]) => id.startsWith(prefix));
  expect(found.map(([id]) => id)).toHaveLength(1);
  return found[0]!;
}
const importer = (s: Synthesized) => named(s, 'AWS::Lambda::Function', 'ImageTransformerManageImporterFunction');
const batchRole = (s: Synthesized) => named(s, 'AWS::IAM::Role', 'ImageTransformerManageImportsBatchRole');

/** The statements of the policies of the role `ManageImporterRole` or `ManageImportsBatchRole`. */
const policyOf = (s: Synthesized, role: string): Json[] => roleActions(s, s.stack.transformer.node.findChild(role));

const source = (s: Synthesized) => logicalId(s, s.stack.transformer.sourceBucket);
const under = (s: Synthesized, prefix: string) => ({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [source(s), 'Arn'] }, `/${prefix}*`]] });

describe('the importer (the per-key Lambda)', () => {
  it("has the origin's memory, and its timeout plus a fetch's and a store's; the validator's settings", () => {
    for (const s of [base, full]) {
      const [, fn] = importer(s);
      const origin = originFunction(s).Properties;
      expect(fn.Properties.MemorySize).toBe(origin.MemorySize);
      expect(fn.Properties.Timeout).toBe(origin.Timeout + IMPORT_FETCH_MS / 1000 + 30);
      const validator = s.json.Resources[logicalId(s, s.stack.transformer.uploadValidatorFunction!)];
      expect(fn.Properties.Environment.Variables).toEqual(validator.Properties.Environment.Variables);
    }
  });

  it('may put any source key, clear a quarantine, and read and rewrite manifests under _imports/; nothing else of S3', () => {
    const s3 = policyOf(base, 'ManageImporterRole').filter((st) => actionsOf(st).some((action) => action.startsWith('s3:')));
    expect(s3.map((st) => [st.Effect, actionsOf(st), st.Resource])).toEqual([
      ['Allow', ['s3:PutObject'], under(base, '')],
      ['Allow', ['s3:GetObject', 's3:AbortMultipartUpload'], under(base, '_imports/')],
      ['Allow', ['s3:DeleteObject'], under(base, '_quarantine/')],
    ]);
  });
});

describe('the S3 Batch Operations role', () => {
  it('is taken by Batch Operations of this account only', () => {
    const [, role] = batchRole(base);
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'batchoperations.s3.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
  });

  it('reads the manifests and writes the reports under _imports/, and invokes the importer alone', () => {
    const [importerId] = importer(base);
    expect(policyOf(base, 'ManageImportsBatchRole').map((st) => [st.Sid, actionsOf(st), st.Resource])).toEqual([
      ['ReadManifests', ['s3:GetObject', 's3:GetObjectVersion'], under(base, '_imports/')],
      ['WriteReports', ['s3:PutObject'], under(base, '_imports/')],
      ['InvokeImporter', ['lambda:InvokeFunction'], { 'Fn::GetAtt': [importerId, 'Arn'] }],
    ]);
  });
});

describe('the API Lambda', () => {
  it('may pass the batch role, to Batch Operations only, invoke the importer (a manifest to convert), and knows them', () => {
    const api = base.stack.transformer.manageFunction!;
    const [roleId] = batchRole(base);
    const [importerId] = importer(base);
    const pass = roleActions(base, api.role!).filter((st) => actionsOf(st).includes('iam:PassRole'));
    expect(pass).toEqual([
      {
        Sid: 'PassTheBatchRole',
        Action: 'iam:PassRole',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [roleId, 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'batchoperations.s3.amazonaws.com' } },
      },
    ]);
    const invoke = roleActions(base, api.role!).filter((st) => actionsOf(st).includes('lambda:InvokeFunction'));
    expect(invoke.map((st) => st.Resource)).toEqual([{ 'Fn::GetAtt': [importerId, 'Arn'] }]);
    const env = base.json.Resources[logicalId(base, api)].Properties.Environment.Variables;
    expect(env).toMatchObject({
      IMPORT_FUNCTION_ARN: { 'Fn::GetAtt': [importerId, 'Arn'] },
      IMPORT_ROLE_ARN: { 'Fn::GetAtt': [roleId, 'Arn'] },
    });
  });
});

describe('manageApi: false', () => {
  it('deploys no importer and no batch role, and no statement names _imports/', () => {
    expect(resources(off, 'AWS::IAM::Role').filter(([id]) => /Import/.test(id))).toEqual([]);
    expect(resources(off, 'AWS::Lambda::Function').filter(([id]) => /Import/.test(id))).toEqual([]);
    expect(JSON.stringify(off.json)).not.toContain('_imports/');
  });
});
