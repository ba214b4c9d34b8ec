// Who may name which keys. An IAM caller (a back end, SigV4) is unconfined;
// a JWT caller (a browser, through the JWT authoriser's routes) is confined to
// the prefix the deployment's template (`manageJwtPrefix`, e.g. `users/{sub}/`)
// makes of one of its token's claims: every key it names must lie under it.
// A route calls these on what it is about to touch, so a new route (the
// imports) confines its callers with one call.

import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { sourceKey } from './body';
import { ManageError } from './errors';

/** The JWT routes: the same routes as IAM's, under this path prefix, each with the JWT authoriser. */
export const JWT_ROUTE_PREFIX = '/user';

/** The caller of a request: `prefix` is the one a JWT caller is confined to; none for an IAM caller. */
export interface Caller {
  readonly prefix?: string;
  /** The claim the prefix was made of, as `{name}`, for messages. */
  readonly claim?: string;
}

export const UNCONFINED: Caller = {};

const PLACEHOLDER = /\{([A-Za-z0-9_.:-]{1,128})\}/g;

/** The name of the claim a valid template names. */
const claimOf = (template: string): string => [...template.matchAll(PLACEHOLDER)][0]![1]!;

/**
 * Why `template` is not a prefix template, or undefined when it is: exactly one
 * `{claim}`, no other brace, ending with `/`, and a safe source-key prefix
 * (not under the upload prefixes, no empty, `.` or `..` segment) with the claim filled in.
 */
export function prefixTemplateProblem(template: string): string | undefined {
  const placeholders = [...template.matchAll(PLACEHOLDER)];
  if (placeholders.length !== 1 || template.replace(PLACEHOLDER, '').match(/[{}]/)) {
    return 'exactly one {claim}, such as users/{sub}/ (a claim name of letters, digits and _ . : -)';
  }
  if (!template.endsWith('/')) return 'a key prefix ending with /, such as users/{sub}/';
  try {
    sourceKey(template.replace(PLACEHOLDER, 'claim') + 'x');
  } catch (error) {
    return `a safe key prefix (${(error as Error).message})`;
  }
  return undefined;
}

/**
 * The caller of `event`: unconfined without a JWT authoriser's claims; with them,
 * confined to `template` filled with its claim. A claim missing, not a string,
 * or that would make an unsafe prefix (empty, holding `/`, a `.` or `..`
 * segment, a control character, under the upload prefixes) is a 403, as are
 * claims when the deployment has no template: a JWT caller is never unconfined.
 */
export function callerOf(event: APIGatewayProxyEventV2, template: string | undefined): Caller {
  const claims = (event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown> } } }).authorizer?.jwt?.claims;
  if (!claims) return UNCONFINED;
  if (template === undefined) throw new ManageError('forbidden_claim', 'This deployment confines no token to a prefix: use IAM.');
  const name = claimOf(template);
  const value = claims[name];
  const refuse = (why: string) =>
    new ManageError('forbidden_claim', `The token's claim ${JSON.stringify(name)} ${why}, so it names no prefix of ${template}.`);
  if (typeof value !== 'string') throw refuse(value === undefined ? 'is missing' : 'is not a string');
  if (value === '' || value.includes('/')) throw refuse(`is ${JSON.stringify(value)}`);
  const prefix = template.replace(PLACEHOLDER, () => value);
  try {
    sourceKey(prefix + 'x');
  } catch {
    throw refuse(`is ${JSON.stringify(value)}`);
  }
  return { prefix, claim: `{${name}}` };
}

/** Refuses a confined caller a `key` not under its prefix; `what` words it ("The key", "keys[2]"). */
export function confineKey(caller: Caller, key: string, what = 'The key'): void {
  if (caller.prefix === undefined || key.startsWith(caller.prefix)) return;
  throw new ManageError(
    'forbidden_key',
    `${what} ${JSON.stringify(key)} is not under ${JSON.stringify(caller.prefix)}, the prefix your token's ${caller.claim} confines you to.`,
  );
}

/** A listing's prefix: a confined caller's own when none is given, and one under it otherwise. */
export function confinePrefix(caller: Caller, prefix: string | undefined): string | undefined {
  if (caller.prefix === undefined) return prefix;
  if (!prefix) return caller.prefix;
  confineKey(caller, prefix, 'The prefix');
  return prefix;
}

/** Refuses a confined caller a route that names no key of its own (`what`, e.g. "Imports"). */
export function refuseConfined(caller: Caller, what: string): void {
  if (caller.prefix === undefined) return;
  throw new ManageError('forbidden_route', `${what} are for IAM callers; a token confined to ${JSON.stringify(caller.prefix)} may not.`);
}
