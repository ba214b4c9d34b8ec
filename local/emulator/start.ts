// Everything `npm start` brings up, in order: S3 (LocalStack), the two
// buckets and their sources, the generated edge function, the origin,
// invalidation and management handlers (with the validator of uploads), and
// the HTTP server. Tests start it the same way.

import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Duration } from 'aws-cdk-lib';
import { buildSync } from 'esbuild';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { GrammarOptions } from '../../lambda/grammar';
import type { InvalidateConfig } from '../../lambda/invalidate/config';
import { createInvalidationHandler } from '../../lambda/invalidate/handler';
import type { SvgPolicy } from '../../lambda/origin/config';
import { manageConfig } from '../../lambda/manage/config';
import { createOriginHandler } from '../../lambda/origin/handler';
import { transformProcesses } from '../../lambda/origin/transform-process';
import type { WebOrigin } from '../../lambda/origin/web/origins';
import { SIGNING_SECRETS_KEY } from '../../lambda/edge/store';
import { viewerRequestFunctionCode } from '../../lib/edge-function';
import type { ImageTransformerProps } from '../../lib/props';
import type { ResolvedSettings } from '../../lib/resolved-settings';
import { provideFonts } from '../../lib/fonts';
import { provideSubjectModel } from '../../lib/subject-model';
import { viewerResponseFunctionCode } from '../../lib/viewer-response-function';
import type { WatermarkProps } from '../../lib/watermarks';
import { contentTypeOf } from './content-types';
import { LOCAL_TEMPLATES } from './demo-cards';
import { startDemoSite } from './demo-site';
import { localDeployment } from './deployment';
import { createEmulator, type Emulator } from './emulator';
import { EMULATOR_JWT_SECRET, type JwtSettings } from './jwt';
import { allowUploadsFrom, createManageRoute } from './manage-route';
import { createLocalImportJobs } from '../../lambda/manage/imports/local-jobs';
import type { ImportFetchRules } from '../../lambda/manage/imports/import-item';
import { generateSamples, sampleWatermark, type Sample } from './samples';
import { createEmulatorServer, ownOrigins } from './server';
import { watchSources, type Delivery, type SourceWatcher } from './source-watcher';
import { createUploadValidator, type UploadValidator } from './upload-validator';
import type { PrefixBuckets } from '../../lambda/common/sources';
import { routeFor, routesRefusal } from '../../lambda/origin/sources';
import { UsageError } from '../harness/command-line';

export interface EmulatorStartOptions {
  s3: S3Client;
  /** Port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** Upload every file under this folder, keyed by its relative path, as `aws s3 sync` would; otherwise generated samples. */
  images?: string;
  /**
   * More source buckets, each serving a key prefix (a deployment's sourceBuckets):
   * the folder to upload into each, as `images` is, e.g. `{ 'archive/': './photos' }`.
   */
  prefixFolders?: { [prefix: string]: string };
  /** Keep responses in the in-memory edge cache (like CloudFront). */
  edgeCache: boolean;
  /** Require signed URLs, verified with this secret (as if it were in the KeyValueStore). */
  signingSecret?: string;
  /** Bucket names; default `source` and `cache` with a suffix, so several emulators can share one S3. */
  buckets?: { source: string; cache: string };
  /** How often the source bucket is compared for changes made through the S3 API. */
  watchIntervalMs?: number;
  /** The origin's SVG_POLICY (default `refuse`, as deployed). */
  svgPolicy?: SvgPolicy;
  /** Watermarks as the construct takes them; default one named `logo` (sampleWatermark). */
  watermarks?: { [name: string]: WatermarkProps };
  /** Key prefixes served only with a watermark, as the construct takes them. */
  requireWatermark?: { [prefix: string]: string };
  /** Key prefixes served from web sites, loopback ones included (the emulator allows them, a deployment never does). */
  webOrigins?: Record<string, WebOrigin>;
  /**
   * A deployment's settings, as `cdk deploy` takes them (context keys of lib/context.ts):
   * served as that deployment would serve them, over the emulator's own buckets. Without
   * any, the playground's demonstration (its presets, watermark and card templates).
   */
  context?: Record<string, unknown>;
  /** Tests only: how imports reach a local https server (a resolver, its certificate). Loopback is allowed, as for web origins. */
  importRules?: ImportFetchRules;
  log(line: string): void;
}

export interface RunningEmulator {
  url: string;
  sourceBucket: string;
  cacheBucket: string;
  /** The buckets serving key prefixes (prefixFolders), by prefix. */
  sourceBuckets: PrefixBuckets;
  /** Every source's URL key. */
  sources: string[];
  /**
   * Resolves when every source change made so far has been seen and invalidated, both passes, every
   * upload staged so far validated (and its move to its key or to quarantine seen in turn), and
   * the variants of the misses answered so far are stored (the origin answers before it stores),
   * and every import started so far complete.
   */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Presets the playground demonstrates; a deployment defines its own. */
export const LOCAL_PRESETS: GrammarOptions['presets'] = {
  thumbnail: { width: '200', height: '200', fit: 'cover' },
  hero: { width: '1600', quality: '70' },
  branded: { width: '800', height: '800', fit: 'pad', background: 'f4f1ea', wm: 'logo' },
};

/** The sample watermark as a file, as a deployment's would be. */
export async function writeSampleWatermark(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'watermark-')), 'logo.png');
  await writeFile(file, await sampleWatermark());
  return file;
}

/** A source to put in the bucket; its body is opened only when it is uploaded. */
interface Upload {
  key: string;
  bytes: number;
  /** Undefined when the name says nothing: S3 then stores binary/octet-stream. */
  contentType?: string;
  body(): Buffer | Readable;
}

/** Files uploaded at once: each is streamed from disk, as a folder may hold thousands, or a video of gigabytes. */
const UPLOADS_AT_ONCE = 8;

/** Every file under `folder`, as `aws s3 sync` would upload it: dotfiles and files of any type included. */
async function filesIn(folder: string): Promise<Upload[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile());
  return Promise.all(
    files.map(async (entry) => {
      // `parentPath` is Node >= 20.12; `package.json` allows 20.9, where only `path` (its older name) is set.
      const path = join(entry.parentPath ?? entry.path, entry.name);
      return {
        key: relative(folder, path).split(sep).join('/'),
        bytes: (await stat(path)).size,
        contentType: contentTypeOf(entry.name),
        body: () => createReadStream(path),
      };
    }),
  );
}

function samples(generated: Sample[]): Upload[] {
  return generated.map(({ key, body, contentType }) => ({ key, bytes: body.length, contentType, body: () => body }));
}

async function uploadAll(s3: S3Client, bucket: string, uploads: Upload[]): Promise<void> {
  for (let i = 0; i < uploads.length; i += UPLOADS_AT_ONCE) {
    await Promise.all(
      uploads.slice(i, i + UPLOADS_AT_ONCE).map((upload) =>
        s3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: upload.key,
            Body: upload.body(),
            ContentLength: upload.bytes,
            ContentType: upload.contentType,
          }),
        ),
      ),
    );
  }
}

async function createBucket(s3: S3Client, name: string) {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: name }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw error;
  }
}

/** lambda/client for the browser, so the playground builds URLs with the project's own helper. */
function clientScript(): string {
  const entry = fileURLToPath(new URL('../../lambda/client/index.ts', import.meta.url));
  const result = buildSync({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', write: false });
  return result.outputFiles[0]!.text;
}

/**
 * A repeated `<prefix>=<value>` option (`--bucket archive/=./photos`, `--web shop/=<url>`)
 * as prefixes to values; what the prefixes and values must be is checked where they are used.
 */
export function prefixedValues(option: string, example: string, values: string[]): { [prefix: string]: string } {
  const mapped: { [prefix: string]: string } = {};
  for (const value of values) {
    const split = value.indexOf('=');
    if (split < 1 || split === value.length - 1)
      throw new UsageError(`${option} must be <prefix>=<value>, e.g. ${example}, not "${value}"`);
    const prefix = value.slice(0, split);
    if (prefix in mapped) throw new UsageError(`${option} names the prefix "${prefix}" twice`);
    mapped[prefix] = value.slice(split + 1);
  }
  return mapped;
}

/** Locally a changed image should show soon: web variants are checked again after a minute, where a deployment's default is a day. */
export const LOCAL_REVALIDATE_SECONDS = 60;

/** Where the generated samples are served from as a web site's (startDemoSite). */
export const DEMO_WEB_PREFIX = 'web/';

/** Where the emulator's sources are: its buckets, and the sites given as web origins. */
interface LocalSources {
  sourceBucket: string;
  cacheBucket: string;
  sourceBuckets: PrefixBuckets;
  webOrigins: Record<string, WebOrigin>;
}

/** A deployment's settings would have no demonstration: with none given, the playground shows its presets, watermark and cards. */
async function demonstration(options: EmulatorStartOptions): Promise<ImageTransformerProps> {
  const given = Object.keys(options.context ?? {}).length > 0;
  return {
    presets: given ? undefined : LOCAL_PRESETS,
    templates: given ? undefined : LOCAL_TEMPLATES,
    watermarks: options.watermarks ?? (given ? undefined : { logo: { file: await writeSampleWatermark(), opacity: 0.85 } }),
  };
}

/** The JWT callers' settings of the deployment, checked with the emulator's secret; none without an issuer. */
const emulatorJwt = (settings: ResolvedSettings): JwtSettings | undefined =>
  settings.manageJwtIssuer === undefined
    ? undefined
    : { issuer: settings.manageJwtIssuer, audience: settings.manageJwtAudience, secret: EMULATOR_JWT_SECRET };

/** What the emulator itself sets, beside a deployment's settings: its own sources and the options of `startEmulator`. */
async function localProps(options: EmulatorStartOptions, webOrigins: Record<string, WebOrigin>): Promise<ImageTransformerProps> {
  return {
    ...(await demonstration(options)),
    requireWatermark: options.requireWatermark,
    svgPolicy: options.svgPolicy,
    signing: options.signingSecret !== undefined || undefined,
    webOrigins: Object.fromEntries(
      Object.entries(webOrigins).map(([prefix, { url, revalidateSeconds }]) => [
        prefix,
        { url, revalidateAfter: Duration.seconds(revalidateSeconds) },
      ]),
    ),
  };
}

/**
 * The emulated distribution over these sources: the deployment's plan (its
 * settings, over the emulator's own), both generated edge functions, the
 * origin handler and the edge cache.
 */
async function localDistribution(options: EmulatorStartOptions, sources: LocalSources) {
  const { s3, log } = options;
  const { settings, plan } = localDeployment(options.context ?? {}, await localProps(options, sources.webOrigins));
  const buckets = { sourceBucket: sources.sourceBucket, cacheBucket: sources.cacheBucket, sourceBuckets: sources.sourceBuckets };
  // One viewer-request function per grammar the behaviors read, as a deployment generates them.
  const functionCodes = Object.fromEntries(
    [...new Set(plan.behaviors.map((behavior) => behavior.grammar))].map((edgeGrammar) => {
      const code = viewerRequestFunctionCode({ ...plan.viewerRequest, keyValueStoreId: 'local-key-value-store', edgeGrammar });
      log(
        `edge function (${edgeGrammar}): ${code.length} bytes of cloudfront-js-2.0${plan.viewerRequest.signing ? ', signed URLs required' : ''}`,
      );
      return [edgeGrammar, code];
    }),
  );

  // The transform processes find the subject model and the text fonts through the environment they inherit.
  await provideSubjectModel(log);
  await provideFonts(log);
  // One Lambda environment per concurrent miss in AWS; here, one transform process per core.
  const transforms = transformProcesses(availableParallelism());
  // The watermarks and fonts are read from where they are, rather than from a package folder.
  const origin = plan.origin(buckets, 'source');
  const emulator = createEmulator({
    s3,
    cacheBucket: sources.cacheBucket,
    functionCodes,
    viewerResponseCode: viewerResponseFunctionCode(plan.viewerResponse),
    keyValues: {
      ...plan.storeEntries,
      ...plan.bucketEntries(buckets),
      ...(options.signingSecret ? { [SIGNING_SECRETS_KEY]: options.signingSecret } : {}),
    },
    edgeCache: options.edgeCache,
    behaviors: plan.behaviors,
    vary: plan.vary,
    origin: createOriginHandler({
      s3,
      config: origin,
      log: (entry) => (entry.level === 'info' ? undefined : log(JSON.stringify(entry))),
      transforms,
      allowLoopbackWebOrigins: true,
    }),
  });
  const jwtPrefix = settings.manageJwtPrefix;
  const manage = { ...manageConfig(origin, { stripLocation: settings.manageStripLocation }), ...(jwtPrefix ? { jwtPrefix } : {}) };
  return { emulator, settings, plan, buckets, transforms, manage };
}

/**
 * The invalidation handler, configured by the plan, and a watcher of each
 * bucket that hands it the bucket's changes as a deployment's notifications
 * and EventBridge rule would (lib/parts/invalidation.ts); the default bucket's
 * go to the validator of uploads too, as its notification on the staging
 * prefix would (the invalidation handler passes over those keys).
 */
async function watchInvalidations(
  options: EmulatorStartOptions,
  emulator: Emulator,
  sources: { bucket: string; validator: UploadValidator },
  config: InvalidateConfig,
): Promise<SourceWatcher[]> {
  const { s3, log } = options;
  const invalidate = createInvalidationHandler({
    s3,
    // The emulator's CloudFront: an invalidation drops entries from its edge cache.
    cloudFront: {
      async createInvalidation({ paths }) {
        const dropped = emulator.cache.invalidate(paths);
        log(`invalidated ${paths.join(' ')} (${dropped.length} cached responses dropped)`);
        return { id: `local-${Date.now()}` };
      },
    },
    config,
    log: () => {},
    // The second pass runs once the misses in flight are over: the emulator knows which.
    settle: emulator.settled,
  });
  const watch = (bucket: string, delivery: Delivery, onEvent = invalidate) =>
    watchSources({ s3, bucket, delivery, intervalMs: options.watchIntervalMs ?? 2000, onEvent });
  const { bucket, validator } = sources;
  return Promise.all([
    watch(bucket, 'notification', (event) => {
      validator.onEvent(event);
      return invalidate(event);
    }),
    ...Object.values(config.sourceBuckets).map((bucket) => watch(bucket, 'eventbridge')),
  ]);
}

/** The port `server` listens on, on 127.0.0.1: `port`, or the one picked for 0. */
async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Creates the bucket of each prefix and uploads its folder into it; the URL keys of what was uploaded. */
async function seedPrefixBuckets(
  { s3, log }: EmulatorStartOptions,
  prefixes: [prefix: string, folder: string][],
  sourceBuckets: PrefixBuckets,
): Promise<string[]> {
  const prefixSources: string[] = [];
  for (const [prefix, folder] of prefixes) {
    const bucket = sourceBuckets[prefix]!;
    const files = await filesIn(folder);
    await createBucket(s3, bucket);
    await uploadAll(s3, bucket, files);
    prefixSources.push(...files.map((file) => prefix + file.key));
    log(`seeded ${files.length} files from ${folder} into bucket ${bucket}, served under ${prefix}`);
  }
  return prefixSources;
}

export async function startEmulator(options: EmulatorStartOptions): Promise<RunningEmulator> {
  const { s3, log } = options;
  const prefixes = Object.entries(options.prefixFolders ?? {});
  // Random too: two emulators started in the same millisecond would otherwise share buckets.
  const suffix = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const sourceBuckets: PrefixBuckets = Object.fromEntries(prefixes.map(([prefix], index) => [prefix, `source-${index + 2}-${suffix}`]));
  const refusal = routesRefusal('--bucket', { sourceBuckets, webOrigins: {} });
  if (refusal) throw new UsageError(refusal);
  const sourceBucket = options.buckets?.source ?? `source-${suffix}`;
  const cacheBucket = options.buckets?.cache ?? `cache-${suffix}`;
  await Promise.all([createBucket(s3, sourceBucket), createBucket(s3, cacheBucket)]);

  const generated = options.images === undefined ? await generateSamples() : [];
  const sources = options.images === undefined ? samples(generated) : await filesIn(options.images);
  if (sources.length === 0) throw new Error(`No files under ${options.images}.`);
  await uploadAll(s3, sourceBucket, sources);
  log(`seeded ${sources.length} ${options.images ? `files from ${options.images}` : 'generated samples'} into bucket ${sourceBucket}`);

  const prefixSources = await seedPrefixBuckets(options, prefixes, sourceBuckets);

  // With the generated samples and no site given, a site on loopback serves them too, under `web/`.
  const siteGiven = options.webOrigins !== undefined || options.context?.webOrigins !== undefined;
  const demoSite = generated.length > 0 && !siteGiven ? await startDemoSite(generated) : undefined;
  const webOrigins = demoSite
    ? { [DEMO_WEB_PREFIX]: { url: demoSite.url, revalidateSeconds: LOCAL_REVALIDATE_SECONDS } }
    : (options.webOrigins ?? {});
  if (demoSite) log(`serving the samples as a web site at ${demoSite.url}, under ${DEMO_WEB_PREFIX}`);

  const { emulator, settings, plan, buckets, transforms, manage } = await localDistribution(options, {
    sourceBucket,
    cacheBucket,
    sourceBuckets,
    webOrigins,
  });
  const overlap = routesRefusal('--bucket and --web', { sourceBuckets, webOrigins: settings.webOrigins });
  if (overlap) throw new UsageError(overlap);

  let watchers: SourceWatcher[] = [];
  const manageLog = (entry: Record<string, unknown>) => log(JSON.stringify(entry));
  const imports = createLocalImportJobs({ s3 }, manage, { rules: { allowLoopback: true, ...options.importRules }, log: manageLog });
  const routes = plan.routes(buckets);
  const server = createEmulatorServer({
    emulator,
    s3,
    routes,
    settings: {
      grammar: plan.viewerRequest.grammar,
      avif: plan.viewerRequest.avif,
      signingSecret: options.signingSecret,
      templates: settings.templates,
    },
    onSourceChanged: async () => {
      await Promise.all(watchers.map((watcher) => watcher.poll()));
    },
    clientScript: clientScript(),
    maxUploadBytes: settings.maxSourceBytes,
    webSources: demoSite ? generated.map((sample) => ({ key: DEMO_WEB_PREFIX + sample.key, bytes: sample.body.length })) : [],
    manage: createManageRoute({ s3, config: manage, jwt: emulatorJwt(settings), imports, log: manageLog }),
  });
  const port = await listen(server, options.port);
  const url = `http://127.0.0.1:${port}`;
  await allowUploadsFrom(s3, sourceBucket, ownOrigins(port), log);
  // Eager presets are warmed through the emulator itself, as a deployment warms them through its distribution.
  const validator = createUploadValidator(s3, manage, log);
  watchers = await watchInvalidations(
    options,
    emulator,
    { bucket: sourceBucket, validator },
    plan.invalidation(buckets, { distributionId: 'LOCAL', distributionOrigin: url }),
  );
  const pollAll = () => Promise.all(watchers.map((watcher) => watcher.poll()));

  return {
    url,
    sourceBucket,
    cacheBucket,
    sourceBuckets,
    // The default bucket's keys under another route's prefix are not served.
    sources: [...sources.map((source) => source.key).filter((key) => routeFor(key, routes).prefix === ''), ...prefixSources],
    async settled() {
      await imports.settled();
      // Polled now, not at the watcher's next tick: a change is seen before settled() resolves.
      await pollAll();
      // A validated upload is copied to its key (or to quarantine): that change is seen by polling again.
      if (await validator.settled()) await pollAll();
      await emulator.settled();
    },
    async close() {
      for (const watcher of watchers) watcher.stop();
      await imports.settled();
      await validator.settled();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await emulator.settled();
      await demoSite?.close();
      transforms.close();
    },
  };
}
