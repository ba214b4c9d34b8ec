// Cold start of the origin Lambda, as near as a laptop gets: a fresh Node
// process imports the esbuild bundle of lambda/origin/index.ts (sharp external,
// AWS SDK bundled, as the CDK construct builds it) and makes one call, a miss
// against LocalStack, through local/harness/lambda-runtime.ts's stand-in for the Node
// runtime's response streaming. The environment (buckets, AWS_ENDPOINT_URL_S3)
// comes from the bench. Imports nothing else but node:, so the import time is
// the bundle's. Prints one JSON line.

import { pathToFileURL } from 'node:url';
import { errorStack } from '../../lambda/common/log';
import { functionUrlEvent } from '../../local/emulator/function-url';
import { installLambdaRuntime, invokeStreaming } from '../../local/harness/lambda-runtime';
import { maxRssBytes } from './rss';

async function main() {
  const [bundle, uri] = process.argv.slice(2) as [string, string];
  // performance.now() counts from process start: what node itself took before this line.
  const boot = performance.now();
  installLambdaRuntime();
  const module = (await import(pathToFileURL(bundle).href)) as { handler?: unknown; default?: { handler: unknown } };
  const imported = performance.now();
  const handler = module.handler ?? module.default!.handler;
  const rssAfterImport = process.memoryUsage().rss;
  const first = invokeStreaming(handler, functionUrlEvent(uri), { getRemainingTimeInMillis: () => 30_000 });
  const response = await first.response;
  const responded = performance.now();
  await first.done;
  const called = performance.now();
  const result = {
    bootMs: boot,
    importMs: imported - boot,
    firstResponseMs: responded - imported,
    firstCallMs: called - imported,
    status: response.statusCode,
    rssAfterImport,
    maxRss: maxRssBytes(),
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((error) => {
  process.stderr.write(errorStack(error) + '\n');
  process.exit(1);
});
