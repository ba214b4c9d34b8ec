// Eager presets: after a source is created, request each configured preset
// through the distribution once per Accept header, so the first viewer finds
// the variant already in the cache bucket (and the regional edge cache).
// The URLs are the ones a page would use, built by the client helper, and
// signed the way the edge verifies them when signing is on.

import { canonicalRequest, encodeKeyPath, splitQuery } from '../grammar';
import { signedImageUrl } from '../client/sign';
import { imageQuery, imageUrl } from '../client/url';
import type { InvalidateConfig } from './config';
import { describeError, type Logger } from '../common/log';

export interface WarmRequest {
  key: string;
  preset: string;
  accept: string;
  url: string;
  /** The canonical URI the edge rewrites this request to, when the preset definitions are known. */
  uri?: string;
}

export interface WarmOutcome extends WarmRequest {
  ok: boolean;
  status?: number;
  /** CloudFront's X-Cache: `Miss from cloudfront` means the variant was made (or read from the cache bucket) now. */
  cache?: string;
  bytes?: number;
  ms: number;
  error?: string;
}

export type Fetch = (url: string, init: { headers: Record<string, string>; signal: AbortSignal }) => Promise<Response>;

/** Warming requests in flight at once: enough to overlap network waits, few enough not to stampede the origin. */
export const WARM_CONCURRENCY = 4;

const USER_AGENT = 'edge-image-transformer-warmer';

/**
 * The requests that warm `key`: each eager preset under each Accept header.
 * When the preset definitions are known, Accept headers that lead to the same
 * variant (a preset that fixes its format, say) are requested once.
 */
export function warmRequests(key: string, config: InvalidateConfig): WarmRequest[] {
  const requests: WarmRequest[] = [];
  for (const preset of config.eagerPresets) {
    const params = { preset };
    const url = config.signingSecret
      ? signedImageUrl(config.distributionOrigin, key, params, config.signingSecret, config.grammar)
      : imageUrl(config.distributionOrigin, key, params, config.grammar);
    const seen = new Set<string>();
    for (const accept of config.eagerAccepts) {
      let uri: string | undefined;
      if (config.grammar.presets) {
        uri = canonicalRequest(encodeKeyPath(key), splitQuery(imageQuery(params, config.grammar)), config.grammar, {
          accept,
          avif: config.avif,
        }).uri;
        if (seen.has(uri)) continue;
        seen.add(uri);
      }
      requests.push({ key, preset, accept, url, uri });
    }
  }
  return requests;
}

async function warmOne(request: WarmRequest, fetch: Fetch, timeoutMs: number): Promise<WarmOutcome> {
  const start = performance.now();
  const elapsed = () => Math.round(performance.now() - start);
  try {
    const response = await fetch(request.url, {
      headers: { accept: request.accept, 'user-agent': USER_AGENT },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = Buffer.from(await response.arrayBuffer());
    const outcome: WarmOutcome = {
      ...request,
      ok: response.ok,
      status: response.status,
      cache: response.headers.get('x-cache') ?? undefined,
      bytes: body.length,
      ms: elapsed(),
    };
    // The contract's error bodies are short JSON: {"error": "...", "message": "..."}.
    if (!response.ok) outcome.error = body.toString('utf8').slice(0, 300);
    return outcome;
  } catch (error) {
    return { ...request, ok: false, ms: elapsed(), error: describeError(error) };
  }
}

/** Runs every request, WARM_CONCURRENCY at a time, logging each; never throws. */
export async function warm(requests: WarmRequest[], fetch: Fetch, timeoutMs: number, log: Logger): Promise<WarmOutcome[]> {
  const outcomes: WarmOutcome[] = new Array(requests.length);
  let next = 0;
  async function worker() {
    while (next < requests.length) {
      const index = next++;
      const outcome = await warmOne(requests[index] as WarmRequest, fetch, timeoutMs);
      outcomes[index] = outcome;
      const { url, ...fields } = outcome;
      log({
        level: outcome.ok ? 'info' : 'warn',
        event: outcome.ok ? 'warmed' : 'warm_failed',
        // The query may carry a signature; the log keeps the path and the preset, not the sig.
        url: url.replace(/([?&]sig=)[^&]*/, '$1…'),
        ...fields,
      });
    }
  }
  await Promise.all(Array.from({ length: Math.min(WARM_CONCURRENCY, requests.length) }, worker));
  return outcomes;
}
