// CloudFront's edge cache, in memory: keyed by the canonical URI (the only
// thing in the cache key), kept as long as the response's Cache-Control says.

export interface CachedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** How long CloudFront keeps errors (the construct's errorResponses): 4xx briefly, 5xx not at all. */
const ERROR_TTL_SECONDS = { client: 10, server: 0 };

/** Seconds a response may be cached for, per its Cache-Control (s-maxage wins over max-age). */
export function ttlSeconds(response: CachedResponse): number {
  const cacheControl = (response.headers['cache-control'] ?? '').toLowerCase();
  if (/(^|,)\s*(no-store|no-cache|private)\b/.test(cacheControl)) return 0;
  const seconds = (directive: RegExp) => {
    const match = directive.exec(cacheControl);
    return match ? Number(match[1]) : undefined;
  };
  const ttl = seconds(/(?:^|,)\s*s-maxage=(\d+)/) ?? seconds(/(?:^|,)\s*max-age=(\d+)/) ?? 0;
  if (response.status >= 500) return Math.min(ttl, ERROR_TTL_SECONDS.server);
  if (response.status >= 400) return Math.min(ttl, ERROR_TTL_SECONDS.client);
  return response.status === 200 ? ttl : 0;
}

export class EdgeCache {
  private readonly entries = new Map<string, { response: CachedResponse; stored: number; expires: number }>();

  constructor(
    private readonly enabled: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  get(uri: string): CachedResponse | undefined {
    return this.lookup(uri)?.response;
  }

  /** The stored response and how long it has been held, in whole seconds: CloudFront's `Age` on a hit. */
  lookup(uri: string): { response: CachedResponse; ageSeconds: number } | undefined {
    const entry = this.entries.get(uri);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.entries.delete(uri);
      return undefined;
    }
    return { response: entry.response, ageSeconds: Math.floor((this.now() - entry.stored) / 1000) };
  }

  put(uri: string, response: CachedResponse): void {
    const ttl = ttlSeconds(response);
    if (this.enabled && ttl > 0) this.entries.set(uri, { response, stored: this.now(), expires: this.now() + ttl * 1000 });
  }

  /** CloudFront invalidation paths: exact, or a prefix ending in `*`. Returns the URIs dropped. */
  invalidate(paths: string[]): string[] {
    const dropped = [...this.entries.keys()].filter((uri) =>
      paths.some((path) => (path.endsWith('*') ? uri.startsWith(path.slice(0, -1)) : uri === path)),
    );
    dropped.forEach((uri) => this.entries.delete(uri));
    return dropped;
  }

  get size(): number {
    return this.entries.size;
  }
}
