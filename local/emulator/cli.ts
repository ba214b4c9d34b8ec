// `npm start -- [-c <key>=<value>]... [--port <n>] [--images <dir>] [--bucket <prefix>=<dir>]... [--web <prefix>=<url>]... [--no-edge-cache] [--signing-secret <s>] [--fallback-image <file>] [--dialect <name>]...
// Serves the playground on an embedded LocalStack S3 (or AWS_ENDPOINT_URL_S3), as the deployment
// of cdk.json's context and the -c settings would serve it.

import { assertSupportedNode } from '../../lib/node-version';
import { commandLine, runCommand, UsageError } from '../harness/command-line';
import { startLocalStack } from '../harness/localstack';
import { localS3Client } from '../harness/s3-client';
import { MANAGE_PREFIX } from './manage-route';
import { checkedWebOrigins, type WebOrigin } from '../../lambda/origin/web/origins';
import { ImageTransformerConfigError } from '../../lib/settings';
import { commandLineContext, projectContext } from './deployment';
import { DEMO_WEB_PREFIX, LOCAL_REVALIDATE_SECONDS, prefixedValues, startEmulator } from './start';

const USAGE = `usage: npm start -- [-c <key>=<value>]... [--port <n>] [--images <dir>] [--bucket <prefix>=<dir>]...
                 [--web <prefix>=<url>]... [--no-edge-cache] [--signing-secret <secret>] [--fallback-image <file>]
                 [--dialect <name>]...
  -c, --context <key>=<value>
                           a deployment setting, as "cdk deploy -c" takes it (e.g. -c sizes=320,640; the keys
                           are in docs/configuration.md), over the context of cdk.json; repeatable. The
                           emulator serves what that deployment would, from its own buckets (sourceBucket
                           and sourceBuckets name AWS buckets: use --images and --bucket). With no setting
                           at all, the playground's demonstration presets and watermark
  --port <n>               port on 127.0.0.1 (default 3000)
  --images <dir>           upload every file under <dir>, keyed by its relative path, as "aws s3 sync" would
                           (default: generated samples)
  --bucket <prefix>=<dir>  serve the keys under <prefix> (e.g. archive/) from a second bucket, holding the
                           files under <dir> keyed without the prefix, as a deployment's sourceBuckets; repeatable
  --web <prefix>=<url>     serve the keys under <prefix> from the site at <url>, loopback allowed, as a
                           deployment's webOrigins, e.g. --web site/=http://127.0.0.1:8080/images/; variants
                           are checked again after ${LOCAL_REVALIDATE_SECONDS} s; repeatable. Without it, the generated
                           samples are also served from a site on loopback, under ${DEMO_WEB_PREFIX}
  --no-edge-cache          send every request to the origins, as with caching disabled
  --signing-secret <s>     require signed URLs, verified with this secret
  --fallback-image <file>  answer this PNG or JPEG, at the size asked, in place of the error for a missing,
                           unsupported or damaged source, as a deployment's fallbackImage (-c fallbackImage=<file>)
  --dialect <name>         serve another service's URLs as a deployment with dialects=<name> would: dit (DIT's
                           base64 requests and Thumbor paths), imgix, cloudflare; repeatable where they coexist
                           (docs/migrating.md)`;

/** `--web <prefix>=<url>` options as the emulator's web origins, checked as a deployment's are. */
function webOrigins(values: string[]): Record<string, WebOrigin> {
  const urls = prefixedValues('--web', 'site/=http://127.0.0.1:8080/images/', values);
  const given = Object.fromEntries(
    Object.entries(urls).map(([prefix, url]) => [prefix, { url, revalidateSeconds: LOCAL_REVALIDATE_SECONDS }]),
  );
  return checkedWebOrigins(given, '--web', (message) => new UsageError(message));
}

async function main() {
  assertSupportedNode();
  const args = commandLine(USAGE, {
    port: { type: 'string', default: '3000' },
    images: { type: 'string' },
    bucket: { type: 'string', multiple: true },
    'no-edge-cache': { type: 'boolean', default: false },
    'signing-secret': { type: 'string' },
    web: { type: 'string', multiple: true },
    context: { type: 'string', short: 'c', multiple: true },
    'fallback-image': { type: 'string' },
    dialect: { type: 'string', multiple: true },
  });
  if (!args) return;
  const port = Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, not "${args.port}"`);
  const prefixFolders = prefixedValues('--bucket', 'archive/=./photos', args.bucket ?? []);
  const fallback = args['fallback-image'];
  const context = {
    ...projectContext(),
    ...commandLineContext(args.context ?? []),
    ...(fallback ? { fallbackImage: fallback } : {}),
    // The setting a deployment would have: `--dialect dit --dialect cloudflare` is `-c dialects=dit,cloudflare`.
    ...(args.dialect ? { dialects: args.dialect.join(',') } : {}),
  };

  const started = performance.now();
  const log = (line: string) => console.log(`[emulator] ${line}`);
  const localStack = await startLocalStack();
  let emulator;
  try {
    emulator = await startEmulator({
      s3: localS3Client(localStack.endpoint),
      port,
      images: args.images,
      prefixFolders,
      edgeCache: !args['no-edge-cache'],
      signingSecret: args['signing-secret'],
      ...(args.web ? { webOrigins: webOrigins(args.web) } : {}),
      context,
      log,
    });
  } catch (error) {
    await localStack.stop();
    if (error instanceof ImageTransformerConfigError) throw new UsageError(error.message);
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new UsageError(`port ${port} is in use; pick another with --port`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UsageError(`no such folder: ${(error as NodeJS.ErrnoException).path}`);
    throw error;
  }
  log(`edge cache ${args['no-edge-cache'] ? 'off' : 'on'}; S3 at ${localStack.endpoint}`);
  log(`management API at ${emulator.url}${MANAGE_PREFIX}/ (SigV4: access key test, secret test, us-east-1, execute-api)`);
  console.log(`\nReady in ${((performance.now() - started) / 1000).toFixed(1)} s: open ${emulator.url}/\n`);

  const shutdown = async () => {
    await emulator.close();
    await localStack.stop();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

runCommand(USAGE, main);
