// The dialect functions a deployment can generate: for each edge grammar but
// the native one, the module that translates it (its file here and the name of
// its `Dialect` export), the data its function reads from the store, and the
// cache behavior it is served under: a path pattern of its own, or the
// default behavior (a dialect that owns the whole URL space). The deployment
// plan (lib/plan.ts) turns the dialects a deployment switches on into
// behaviors and functions from here; lib/edge-function.ts bundles the module.

import { CLOUDFLARE_BOOK } from './cloudflare';
import { DIT_JSON_DATA, THUMBOR_DATA } from './dit';
import { IMGIX_BOOK } from './imgix';
import type { DialectName, EdgeGrammar } from './dialect';

/** The native parameters whose code a dialect's function leaves out unless it reads them (DialectModule.reads). */
export const NATIVE_READERS = ['watermark', 'template', 'fp', 'dpr', 'text'] as const;

export interface DialectModule {
  /** The module's file in this folder, without extension. */
  file: string;
  /** The name of its `Dialect` export. */
  exported: string;
  /** What its function reads from the store (Dialect.useData). */
  data: object;
  /** Whether its requests may name a bucket (NativeRequest.bucket); without, its function leaves out the reading of the deployment's buckets. */
  buckets?: true;
  /** Whether the query beside its requests is read as a native URL's (DIT's); without, every native pair is its translator's (EDGE_TRANSLATED, lambda/grammar/dialect-function.ts). */
  nativeQuery?: true;
  /**
   * The native parameters with code of their own that its function reads
   * (EDGE_READS_WATERMARK..., lambda/grammar/dialect-function.ts): those its
   * translator writes, and DIT's query's; the bundle leaves the others' code out.
   */
  reads?: (typeof NATIVE_READERS)[number][];
  /** Whether its function resolves client hints (`width=auto`): Cloudflare's, whose `width=auto` is ours; without, the bundle leaves them out (EDGE_HINTLESS). */
  clientHints?: true;
  /** CloudFront's path pattern of its own behavior; absent: it owns the default behavior. */
  pathPattern?: string;
}

/** What DIT's two functions read alike: a request's bucket, the query beside a request, and the watermark its overlay names. */
const DIT_FUNCTION: Omit<DialectModule, 'file' | 'exported' | 'data'> = { buckets: true, nativeQuery: true, reads: ['watermark'] };

export const DIALECT_MODULES: { [grammar in Exclude<EdgeGrammar, 'native'>]?: DialectModule } = {
  // Every JSON request starts `{"`, which base64 writes `eyJ`.
  'dit-json': { file: 'dit-json', exported: 'ditJson', data: DIT_JSON_DATA, ...DIT_FUNCTION, pathPattern: '/eyJ*' },
  thumbor: { file: 'thumbor', exported: 'thumbor', data: THUMBOR_DATA, ...DIT_FUNCTION },
  imgix: { file: 'imgix', exported: 'imgix', data: IMGIX_BOOK, reads: ['fp', 'dpr', 'text'] },
  cloudflare: {
    file: 'cloudflare',
    exported: 'cloudflare',
    data: CLOUDFLARE_BOOK,
    reads: ['fp', 'dpr'],
    clientHints: true,
    pathPattern: '/cdn-cgi/image/*',
  },
};

/** The edge grammars each dialect switches on. */
export const DIALECT_GRAMMARS: { [name in DialectName]: Exclude<EdgeGrammar, 'native'>[] } = {
  dit: ['dit-json', 'thumbor'],
  imgix: ['imgix'],
  cloudflare: ['cloudflare'],
};

/** The module of `grammar`; throws, naming it, for a grammar this code has none for. */
export function dialectModule(grammar: Exclude<EdgeGrammar, 'native'>): DialectModule {
  const module = DIALECT_MODULES[grammar];
  if (!module) throw new Error(`No translator for the "${grammar}" dialect in this version.`);
  return module;
}
