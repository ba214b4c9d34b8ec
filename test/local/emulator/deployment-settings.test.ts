// `npm start` runs a deployment's settings: `-c key=value` and cdk.json's
// context, read as `cdk deploy` reads them, planned as the construct plans
// them. `npm start -- -c sizes=320,640` serves as the deployment with those
// sizes would: its widths snap to 320 and 640, one above 640 is refused, and
// its edge store holds what that deployment's template writes there.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { propsFromContext, type ContextKey } from '../../../lib/context';
import { ImageTransformerStack } from '../../../lib/stack';
import { commandLineContext, localDeployment, projectContext } from '../../../local/emulator/deployment';
import { startEmulator, type RunningEmulator } from '../../../local/emulator/start';
import { UsageError } from '../../../local/harness/command-line';
import { createTestBuckets, type TestBuckets } from '../../support/s3';

/** The store entries and origin environment of the deployment `cdk deploy -c ...` would make of `context`. */
function deployed(context: Record<string, string>) {
  const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  const get = (key: ContextKey): unknown => app.node.tryGetContext(key);
  const stack = new ImageTransformerStack(app, 'Images', { transformer: (scope) => propsFromContext(scope, get) });
  const resources = Object.values(
    app.synth().getStackByName('Images').template.Resources as Record<string, { Type: string; Properties: Record<string, any> }>,
  );
  const edgeData = resources.find((resource) => resource.Type === 'Custom::EdgeData');
  const origin = stack.node.tryFindChild('ImageTransformer');
  return { entries: edgeData?.Properties.Entries as Record<string, string> | undefined, found: origin !== undefined };
}

describe('the settings `npm start` takes', () => {
  it('reads -c key=value as cdk does, the last of a key winning, and refuses a key no deployment has', () => {
    expect(commandLineContext(['sizes=320,640', 'avif=false', 'sizes=640'])).toEqual({ sizes: '640', avif: 'false' });
    expect(() => commandLineContext(['size=320'])).toThrow(UsageError);
    expect(() => commandLineContext(['size=320'])).toThrow('-c size: no such setting');
    expect(() => commandLineContext(['sizes'])).toThrow('-c must be <key>=<value>');
  });

  it("reads cdk.json's context, and cdk.context.json's over it", async () => {
    const root = await mkdtemp(join(tmpdir(), 'cdk-context-'));
    await writeFile(join(root, 'cdk.json'), JSON.stringify({ app: 'x', context: { sizes: '320', avif: false } }));
    expect(projectContext(root)).toEqual({ sizes: '320', avif: false });
    await writeFile(join(root, 'cdk.context.json'), JSON.stringify({ sizes: '640' }));
    expect(projectContext(root)).toEqual({ sizes: '640', avif: false });
  });

  it('plans the edge store a deployment of the same settings writes, and refuses what cdk synth refuses', { timeout: 120_000 }, () => {
    const context = { sizes: '320,640', presets: '{"thumb":{"width":"320"}}' };
    const { entries, found } = deployed(context);
    expect(found).toBe(true);
    expect(entries).toBeDefined();
    expect(localDeployment(context).plan.storeEntries).toEqual(entries);
    expect(() => localDeployment({ sizes: '320,640', presets: '{"hero":{"width":"1600"}}' })).toThrow(/preset "hero" is invalid/);
  });
});

describe('npm start -- -c sizes=320,640', () => {
  let buckets: TestBuckets;
  let emulator: RunningEmulator;

  beforeAll(async () => {
    buckets = await createTestBuckets('npm-start-sizes');
    emulator = await startEmulator({
      s3: buckets.s3,
      port: 0,
      edgeCache: false,
      buckets: { source: buckets.sourceBucket, cache: buckets.cacheBucket },
      context: commandLineContext(['sizes=320,640']),
      log: () => {},
    });
  });
  afterAll(async () => {
    await emulator?.close();
    await buckets?.cleanup();
  });

  const widthOf = async (query: string) => {
    const answer = await fetch(`${emulator.url}/samples/mountains.jpg?${query}`);
    return {
      status: answer.status,
      width: answer.ok ? (await sharp(Buffer.from(await answer.arrayBuffer())).metadata()).width : undefined,
    };
  };

  it('snaps a width up to the next of the sizes, as that deployment would', async () => {
    expect(await widthOf('w=200&format=jpeg')).toEqual({ status: 200, width: 320 });
    expect(await widthOf('w=500&format=jpeg')).toEqual({ status: 200, width: 640 });
  });

  it('refuses a width above the largest size, where the demonstration allows any', async () => {
    expect((await widthOf('w=700&format=jpeg')).status).toBe(400);
  });
});
