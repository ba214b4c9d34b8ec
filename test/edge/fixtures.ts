// Deployment settings the edge tests generate the function for.

import { viewerRequestFunctionCode, type EdgeFunctionSettings } from '../../lib/edge-function';
import { bucketsEntry, DATA_FIELDS, DATA_KEY_PREFIX, deploymentEntries, SIGNING_SECRETS_KEY } from '../../lambda/edge/store';
import { dialectModule } from '../../lambda/edge/dialects/index';
import { loadFunction, type LoadedFunction } from '../../local/emulator/cloudfront-function';

/** Next.js's default deviceSizes + imageSizes. */
export const SIZES = [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840];

export const PRESETS = {
  thumb: { width: '256', height: '256', fit: 'contain', background: 'fff' },
  avatar: { width: '96', height: '96', position: 'attention' },
  hero: { width: '1920', quality: '70' },
  gallery: { width: '750', height: '500', position: 'entropy', sharpen: '1' },
  og: { width: '1200', height: '640', format: 'jpeg', quality: '85' },
  mono: { width: '640', grayscale: 'true', blur: '2' },
};

/** The buckets of the deployments a dialect's function is tested for: the default source bucket, and one serving `archive/`. */
export const SOURCE_BUCKET = 'my-images';
export const ARCHIVE_BUCKET = 'my-archive';

/** A KeyValueStore id as CloudFront spells them. */
export const KVS_ID = 'a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';

/** Every option at once: what a real deployment with signing looks like. */
export const REALISTIC: EdgeFunctionSettings = {
  grammar: { maxDimension: 4096, sizes: SIZES, presets: PRESETS },
  avif: true,
  signing: true,
  keyValueStoreId: KVS_ID,
};

export const OPEN: EdgeFunctionSettings = {
  grammar: { maxDimension: 4096, sizes: SIZES, presets: PRESETS },
  avif: true,
  signing: false,
  keyValueStoreId: KVS_ID,
};

export const ANY_SIZE: EdgeFunctionSettings = { grammar: { maxDimension: 8192 }, avif: true, signing: false, keyValueStoreId: KVS_ID };

export const NO_AVIF: EdgeFunctionSettings = { grammar: { maxDimension: 8192 }, avif: false, signing: false, keyValueStoreId: KVS_ID };

export const PRESETS_ONLY: EdgeFunctionSettings = {
  grammar: { maxDimension: 4096, sizes: SIZES, presets: PRESETS, presetsOnly: true },
  avif: true,
  signing: true,
  keyValueStoreId: KVS_ID,
};

export const CHROMIUM_ACCEPT = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';
export const SAFARI_ACCEPT = 'image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5';
export const ANY_ACCEPT = '*/*';

/**
 * The function generated for `settings`, run on a store holding what a
 * deploy writes (sizes, presets, a dialect's data and the buckets it may
 * name) and, when given, the signing secrets.
 */
export function loadEdge(settings: EdgeFunctionSettings, secrets?: string): LoadedFunction {
  const grammar = settings.edgeGrammar ?? 'native';
  const dialectData = grammar === 'native' ? [] : [dialectModule(grammar).data ?? {}];
  // A dialect's requests may name the deployment's buckets: its default source bucket and an archive.
  const buckets = grammar === 'native' ? {} : bucketsEntry(SOURCE_BUCKET, { 'archive/': ARCHIVE_BUCKET });
  const store = { ...deploymentEntries(settings.grammar, dialectData), ...buckets };
  if (secrets !== undefined) store[SIGNING_SECRETS_KEY] = secrets;
  return loadFunction(viewerRequestFunctionCode(settings), store);
}

/** The sizes and watermarks in a deployment's store entries, read back from its data's parts as the function reads them. */
export function deploymentDataIn(entries: Record<string, string>): { sizes?: number[]; watermarks?: Record<string, string> } {
  const parts = Object.keys(entries)
    .filter((key) => key.startsWith(DATA_KEY_PREFIX))
    .sort((a, b) => Number(a.split(':').pop()) - Number(b.split(':').pop()));
  const data = JSON.parse(parts.map((key) => entries[key]).join('')) as Record<string, never>;
  return { sizes: data[DATA_FIELDS.sizes as string], watermarks: data[DATA_FIELDS.watermarks as string] };
}
