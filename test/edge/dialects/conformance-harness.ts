// What the conformance tables of the dialect functions share: the deployment
// they are generated for (the settings of test/edge/dialects.test.ts: a
// watermark named logo, the source bucket my-images and my-archive serving
// archive/, test/edge/fixtures.ts), and a request's answer as a row states
// it: a rewrite (status 200 and the canonical URI) or a refusal (status and
// message).

import type { EdgeFunctionSettings } from '../../../lib/edge-function';
import type { EdgeGrammar } from '../../../lambda/edge/dialects/dialect';
import { isResponse, viewerEvent, type LoadedFunction } from '../../../local/emulator/cloudfront-function';
import { KVS_ID, loadEdge } from '../fixtures';

/** The deployment a dialect's function is generated for, signing or not. */
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

/** What the function answers a viewer's GET of `path` and `query` (as sent, percent-encoded). */
export const answer = async (fn: LoadedFunction, path: string, query = '', accept?: string): Promise<Answered> => {
  const result = await fn.handler(viewerEvent(path, query, accept ? { headers: { accept } } : {}));
  if (!isResponse(result)) return { status: 200, uri: result.uri };
  return { status: result.statusCode, message: (JSON.parse(result.body.data) as { message: string }).message };
};
