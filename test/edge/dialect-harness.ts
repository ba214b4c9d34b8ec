// How the edge tests run a dialect's generated function: the deployment's
// settings for a grammar, and a request's answer as the viewer sees it (the
// URI the function rewrites to, or the status and message of its refusal).
// The test deployment's buckets: my-images, and my-archive serving archive/
// (test/edge/fixtures.ts).

import type { EdgeFunctionSettings } from '../../lib/edge-function';
import type { EdgeGrammar } from '../../lambda/edge/dialects/dialect';
import { isResponse, viewerEvent, type FunctionResult, type LoadedFunction } from '../../local/emulator/cloudfront-function';
import { KVS_ID, loadEdge } from './fixtures';

/** The test deployment: at most 4096 px, a watermark named logo, AVIF on; signing when asked. */
export const settings = (edgeGrammar: EdgeGrammar, signing = false): EdgeFunctionSettings => ({
  grammar: { maxDimension: 4096, watermarks: { logo: '1a2b3c4d' } },
  avif: true,
  signing,
  keyValueStoreId: KVS_ID,
  edgeGrammar,
});

/** The function for `grammar`, without signing, or signing with `secrets` (one a line) in its store. */
export const edgeFunction = (grammar: EdgeGrammar, secrets?: string): LoadedFunction =>
  loadEdge(settings(grammar, secrets !== undefined), secrets);

export type Answered = { status: number; uri?: string; message?: string };

/** What `fn` answers the viewer's request: `path` as sent (percent-encoded), `query`, and an Accept header when given. */
export const answer = async (fn: LoadedFunction, path: string, query = '', accept?: string): Promise<Answered> => {
  const result: FunctionResult = await fn.handler(viewerEvent(path, query, accept ? { headers: { accept } } : {}));
  if (!isResponse(result)) return { status: 200, uri: result.uri };
  return { status: result.statusCode, message: (JSON.parse(result.body.data) as { message: string }).message };
};
