// The resolver: every source kind, the routes (key prefix, kind, settings)
// of one deployment's settings, and the route of a key. The origin's
// sourcingFor (../sourcing.ts) asks it for a request's source, the construct
// makes its cache behaviors and grants from it, and the emulator its
// behaviors, its playground's uploads and its list of sources: prefix routing
// is written here once. (The invalidation Lambda maps a changed object back
// to its key with lambda/common/sources.ts, which needs none of the kinds.)

import { prefixesRefusal } from '../../common/sources';
import type { RequestContext } from '../request';
import type { Sourcing } from '../sourcing';
import { bucketSource } from './bucket';
import type { SourceKindSettings } from '../config';
import type { SourceKind, SourceSetting, SourceSettings } from './source';
import { webSource } from './web';

/** Every kind of source, by name. The first is the default: it also serves every key under no prefix. */
export const SOURCE_KINDS = { bucket: bucketSource, web: webSource } as const;

type Kinds = typeof SOURCE_KINDS;
type SettingsOf<Kind> = Kind extends SourceKind<infer Settings> ? Settings : never;

/** A key prefix, the kind of source that serves it, and that prefix's settings. */
export type SourceRoute = { [Name in keyof Kinds]: { kind: Name; prefix: string; settings: SettingsOf<Kinds[Name]> } }[keyof Kinds];

/** The settings of the kinds that have their own (SourceKind.setting). */
export const SOURCE_SETTINGS = Object.values(SOURCE_KINDS).flatMap((kind) =>
  (kind as SourceKind<unknown>).setting ? [(kind as SourceKind<unknown>).setting!] : [],
) as SourceSetting<unknown>[];

/** The kinds' settings, each made by `make` from its kind's setting. */
export function bySourceSetting(make: (setting: SourceSetting<unknown>) => unknown): SourceKindSettings {
  return Object.fromEntries(SOURCE_SETTINGS.map((setting) => [setting.name, make(setting)])) as unknown as SourceKindSettings;
}

/** The kinds' settings of `from`, a larger object (resolved settings, a config). */
export const sourceKindSettings = (from: SourceKindSettings): SourceKindSettings => bySourceSetting((setting) => from[setting.name]);

/** The routes of `settings`, every kind's prefixes in the kinds' order, the default route (prefix `''`) last. */
export function sourceRoutes(settings: SourceSettings): SourceRoute[] {
  const routes = Object.entries(SOURCE_KINDS).flatMap(([kind, source]) =>
    Object.entries((source as SourceKind<unknown>).routes(settings)).map(
      ([prefix, routeSettings]) => ({ kind, prefix, settings: routeSettings }) as SourceRoute,
    ),
  );
  return [...routes.filter((route) => route.prefix !== ''), ...routes.filter((route) => route.prefix === '')];
}

/** The route that serves `key`: the one whose prefix holds it (prefixes never overlap), else the default. */
export function routeFor(key: string, routes: SourceRoute[]): SourceRoute {
  const route = routes.find((candidate) => key.startsWith(candidate.prefix));
  if (!route) throw new Error('Every deployment has a default source (the route of prefix "").');
  return route;
}

/** The bucket object `key` reads: under its route's prefix, the rest of the key in that route's bucket; undefined for another kind's key. */
export function bucketObjectOf(key: string, routes: SourceRoute[]): { bucket: string; objectKey: string } | undefined {
  const route = routeFor(key, routes);
  return route.kind === 'bucket' ? { bucket: route.settings.bucket, objectKey: key.slice(route.prefix.length) } : undefined;
}

/** The URL key that reads `objectKey` of the bucket of `route`, or undefined when that key is another route's (a prefix's, of any kind). */
export function keyOfObject(route: SourceRoute, objectKey: string, routes: SourceRoute[]): string | undefined {
  const key = route.prefix + objectKey;
  return routeFor(key, routes) === route ? key : undefined;
}

/** Why these settings' prefixes cannot route keys (one may not hold another, of any kind), or undefined. `name` words the settings. */
export function routesRefusal(name: string, settings: Omit<SourceSettings, 'sourceBucket'>): string | undefined {
  const prefixes = sourceRoutes({ ...settings, sourceBucket: '' })
    .map((route) => route.prefix)
    .filter((prefix) => prefix !== '');
  return prefixesRefusal(name, prefixes);
}

const kindOf = (route: SourceRoute) => SOURCE_KINDS[route.kind] as SourceKind<unknown>;

/** The prefixes CloudFront sends to the Lambda alone, each by a cache behavior of its own (SourceKind.ownBehavior). */
export const ownBehaviorPrefixes = (routes: SourceRoute[]): string[] =>
  routes.filter((route) => kindOf(route).ownBehavior).map((route) => route.prefix);

/** The CloudFront path pattern of a prefix's own cache behavior. */
export const behaviorPathPattern = (prefix: string) => `/${prefix}*`;

/** The cache-bucket key prefixes the origin reads back for these routes (SourceKind.records). */
export const recordPrefixes = (routes: SourceRoute[]): string[] => routes.flatMap((route) => kindOf(route).records(route.prefix));

/** The Sourcing of a request whose key `route` serves. */
export const sourcingOf = (route: SourceRoute, ctx: RequestContext): Sourcing => kindOf(route).sourcing(ctx, route);
