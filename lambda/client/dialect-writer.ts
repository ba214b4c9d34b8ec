// What the URL helper's dialect writers share (dialect-url.ts for imgix and
// Cloudflare, dit-url.ts for DIT's two forms): the canonical ops they read,
// and the refusal that names the dialect and what it cannot say.

import type { UnresolvedOps } from '../grammar/params';

/** The dialects imageUrl's parameters can be written in: imgix's query, Cloudflare's path, DIT's base64 JSON request and its Thumbor path. */
export type UrlDialect = 'imgix' | 'cloudflare' | 'dit-json' | 'thumbor';

export type Ops = UnresolvedOps & { [name: string]: unknown };
export type Written = [string, string][];

export const cannot = (dialect: UrlDialect, what: string) => new Error(`The ${dialect} dialect cannot say ${what}.`);

/** Throws for any of `ops` the dialect has no words for (not in `writes`, space-separated). */
export function refuseUnsaid(dialect: UrlDialect, ops: Ops, writes: string): void {
  const left = Object.keys(ops).filter((name) => ops[name] != null && writes.split(' ').indexOf(name) < 0);
  if (left.length) throw cannot(dialect, left.map((name) => `${name}=${String(ops[name])}`).join(' or '));
}

/** The pairs a dialect writes and how it writes one (nothing for an absent value), once refuseUnsaid has passed. */
export function writer(dialect: UrlDialect, ops: Ops, writes: string) {
  refuseUnsaid(dialect, ops, writes);
  const written: Written = [];
  const push = (name: string, value: unknown) => {
    if (value != null && value !== '') written.push([name, String(value)]);
  };
  return { written, push };
}
