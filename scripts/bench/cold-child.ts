// Cold start of the origin Lambda, as near as a laptop gets: a fresh Node
// process imports the esbuild bundle of lambda/origin/index.ts (sharp external,
// AWS SDK bundled, as the CDK construct builds it) and makes one call, a miss
// against LocalStack. The environment (buckets, AWS_ENDPOINT_URL_S3) comes from
// the bench. Imports nothing itself but node:, so the import time is the bundle's.
// Prints one JSON line.

import { pathToFileURL } from 'node:url';
import { functionUrlEvent } from '../../local/function-url';
import { maxRssBytes } from './rss';

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number; body?: string }>;

async function main() {
  const [bundle, uri] = process.argv.slice(2) as [string, string];
  // performance.now() counts from process start: what node itself took before this line.
  const boot = performance.now();
  const module = (await import(pathToFileURL(bundle).href)) as { handler?: Handler; default?: { handler: Handler } };
  const imported = performance.now();
  const handler = module.handler ?? module.default!.handler;
  const rssAfterImport = process.memoryUsage().rss;
  const first = await handler(functionUrlEvent(uri), { getRemainingTimeInMillis: () => 30_000 });
  const called = performance.now();
  const result = {
    bootMs: boot,
    importMs: imported - boot,
    firstCallMs: called - imported,
    status: first.statusCode,
    rssAfterImport,
    maxRss: maxRssBytes(),
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((error) => {
  process.stderr.write(String(error instanceof Error ? error.stack : error) + '\n');
  process.exit(1);
});
