// Where a request's source comes from, and how its variant is kept and
// answered: the source kind whose prefix holds its key (sources/: a bucket's,
// a web origin's). The handler knows sources only through `sourcingFor` and
// the Sourcing it returns.

import { routeFor, sourcingOf } from './sources';
import type { RequestContext } from './request';
import type { Source, StoreOutcome, Variant } from './storage';
import type { StoredAnswer } from './web/revalidate';

/** What fetching gives a request: the source to transform, or a stored variant that answers it. */
export type Fetched = { source: Source } | { stored: StoredAnswer };

export interface Sourcing {
  /** Reads the source within the request's deadline (its time counted as the `fetch` phase). */
  fetch(): Promise<Fetched>;
  /** Keeps the variant made of the fetched source, until `abortSignal`. */
  store(variant: Variant & { sourceEtag: string }, abortSignal?: AbortSignal): Promise<StoreOutcome>;
  /** The Cache-Control of a variant made now. */
  cacheControl: string;
  /**
   * Whether a variant too large to return inline is answered by a redirect to
   * itself, which CloudFront then finds in the cache bucket. A source whose
   * variants are kept where no cache-bucket origin looks (a web source's:
   * cache-keys.ts) answers them inline, whichever behavior the request came by.
   */
  redirectsLarge: boolean;
  /** Where the source's faces and subject are remembered (findings-memory.ts). */
  facesKey: string;
  subjectKey: string;
}

/** The request's source: the one of the route that serves its key (sources/index.ts). */
export function sourcingFor(ctx: RequestContext): Sourcing {
  return sourcingOf(routeFor(ctx.request.key, ctx.services.routes), ctx);
}
