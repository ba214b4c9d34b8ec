// CloudFront's choice of a cache behavior, among those of the deployment plan
// (lib/plan.ts): a prefix with a behavior of its own (a web source's) goes to
// the origin Lambda alone, every other path to the default behavior's origin
// group (the cache bucket, then the Lambda on a 403 or 404). CloudFront
// chooses the behavior before any function runs, from the path as the viewer
// sent it: patterns are case-sensitive, `*` stands for any
// run of characters and `?` for one, and nothing is decoded first, so
// `/shop%2Fa.jpg` is not under `/shop/*` although the edge makes of it the
// same canonical URI as `/shop/a.jpg`.

import type { PlanBehavior, PlanOrigin } from '../../lib/plan';

export type Origin = PlanOrigin;
export type Behavior = PlanBehavior;

/**
 * Whether CloudFront applies `pattern` to a viewer's raw `path` (a leading `/`
 * in the pattern is optional). A wildcard match without a regular expression:
 * the path is the viewer's, and the pattern's stars are few (one per web prefix).
 */
export function pathPatternMatches(pattern: string, path: string): boolean {
  const glob = pattern.startsWith('/') || pattern.startsWith('*') ? pattern : '/' + pattern;
  let [p, g] = [0, 0];
  // Where the last star was seen, and the path position it was last tried at.
  let [star, resume] = [-1, 0];
  while (p < path.length) {
    if (g < glob.length && (glob[g] === '?' || glob[g] === path[p])) [p, g] = [p + 1, g + 1];
    else if (g < glob.length && glob[g] === '*') [star, resume, g] = [g, p, g + 1];
    else if (star >= 0) [resume, p, g] = [resume + 1, resume + 1, star + 1];
    else return false;
  }
  while (glob[g] === '*') g++;
  return g === glob.length;
}

/** The first behavior whose pattern matches `path`; the default one, last, matches every path. */
export function behaviorFor(path: string, behaviors: Behavior[]): Behavior {
  return behaviors.find((behavior) => pathPatternMatches(behavior.pathPattern, path)) ?? behaviors[behaviors.length - 1]!;
}
