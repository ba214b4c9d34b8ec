// A JSON Web Token, checked: what API Gateway's JWT authoriser does before a
// `/user/` route runs, for the emulator's `/_manage/user/` routes. Locally
// there is no identity provider to fetch keys from, so a token is signed
// HS256 with one documented secret (EMULATOR_JWT_SECRET), where a deployment's
// are signed by its issuer's keys; the claims are checked as API Gateway
// checks them: the issuer, an audience (`aud`, else `client_id`), `exp`
// (required), `nbf` and `iat`.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** The secret `npm start` verifies tokens with, as `test` is its SigV4 secret. */
export const EMULATOR_JWT_SECRET = 'test';

export interface JwtSettings {
  /** The `iss` a token must have (manageJwtIssuer). */
  issuer: string;
  /** The audiences a token must name one of (manageJwtAudience). */
  audience: string[];
  secret: string;
}

export interface JwtRefusal {
  error: 'missing_token' | 'malformed_token' | 'invalid_token' | 'token_expired' | 'wrong_issuer' | 'wrong_audience';
  message: string;
}

const base64url = (text: string): Buffer | undefined => (/^[A-Za-z0-9_-]*$/.test(text) ? Buffer.from(text, 'base64url') : undefined);

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(base64url(text)?.toString('utf8') ?? '');
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A claim as API Gateway hands it to a payload 2.0 event: a string (an array as `[a b]`). */
const claimText = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Array.isArray(value)
      ? `[${value.join(' ')}]`
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);

/** The claims of the Bearer token of `authorization`, or why it is refused. `now` in milliseconds. */
export function verifyJwt(
  authorization: string | undefined,
  settings: JwtSettings,
  now: number,
): { claims: Record<string, string> } | { refusal: JwtRefusal } {
  const refuse = (error: JwtRefusal['error'], message: string) => ({ refusal: { error, message } });
  const token = /^Bearer ([^\s]+)$/i.exec(authorization ?? '')?.[1];
  if (!token) return refuse('missing_token', 'A /user/ route needs an Authorization: Bearer <JWT> header.');
  const [header, payload, signature, ...rest] = token.split('.');
  const claims = payload === undefined ? undefined : jsonObject(payload);
  if (signature === undefined || rest.length > 0 || !claims || jsonObject(header!)?.alg !== 'HS256') {
    return refuse('malformed_token', 'The token is not a JWT of three base64url parts, its header {"alg":"HS256"}.');
  }
  const expected = createHmac('sha256', settings.secret).update(`${header}.${payload}`).digest();
  const given = base64url(signature);
  if (!given || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return refuse('invalid_token', "The token's signature is not the emulator's (HS256 with its secret).");
  }
  const seconds = now / 1000;
  if (typeof claims.exp !== 'number' || claims.exp <= seconds) return refuse('token_expired', 'The token has no exp, or it has passed.');
  if (typeof claims.nbf === 'number' && claims.nbf > seconds) return refuse('token_expired', 'The token is not valid yet (nbf).');
  if (typeof claims.iat === 'number' && claims.iat > seconds) return refuse('token_expired', 'The token is issued in the future (iat).');
  if (claims.iss !== settings.issuer) return refuse('wrong_issuer', `The token's iss is not ${JSON.stringify(settings.issuer)}.`);
  const audiences = [claims.aud ?? claims.client_id].flat();
  if (!audiences.some((audience) => settings.audience.includes(audience as string))) {
    return refuse('wrong_audience', `The token's aud (or client_id) is none of ${settings.audience.join(', ')}.`);
  }
  return { claims: Object.fromEntries(Object.entries(claims).map(([name, value]) => [name, claimText(value)])) };
}

/** A token the emulator accepts, for tests and local clients: `claims` signed HS256 with `secret`. */
export function signJwt(claims: Record<string, unknown>, secret = EMULATOR_JWT_SECRET): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}
