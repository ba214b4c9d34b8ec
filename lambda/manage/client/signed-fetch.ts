// A call of the management API as IAM authorisation needs it: signed with
// AWS Signature Version 4 (service execute-api) by the AWS SDK's signer, with
// the caller's credentials (the SDK's credential chain unless given), and its
// JSON answer read; a refusal is a ManageApiError with the body's code and
// message. A throttled (429) or unavailable (503) call is tried again, a
// bounded number of times, after a growing pause.

import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Credentials, or a function that resolves them (the SDK's providers are such functions). */
export type CredentialSource = Credentials | (() => Promise<Credentials>);

/** A refusal of the management API (or of S3, for an upload's POST): its status, code and message. */
export class ManageApiError extends Error {
  override name = 'ManageApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The SHA-256 the signer takes, on node:crypto: a hash, or an HMAC when given a secret. */
export class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    const key = secret instanceof ArrayBuffer ? new Uint8Array(secret) : secret;
    this.hash = key === undefined ? createHash('sha256') : createHmac('sha256', key as string | Uint8Array);
  }
  update(data: string | Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

/** How often a throttled or unavailable call is tried, and the first pause (doubled each time). */
const RETRIES = { attempts: 4, firstPauseMs: 500 } as const;

export interface SignedFetchOptions {
  /** The API's URL (the stack's ManageApiUrl), or the emulator's `http://127.0.0.1:3000/_manage`. */
  endpoint: string;
  region: string;
  credentials?: CredentialSource;
  /** The fetch calls go through; the global one by default. */
  fetch?: typeof fetch;
}

/** `{error, message}` of a refusal's body, or the status's words when it has none (API Gateway's 403 is `{message}`). */
async function refusal(response: Response): Promise<ManageApiError> {
  const text = await response.text();
  let body: { error?: unknown; message?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // Not JSON: the text is the message.
  }
  const code = typeof body.error === 'string' ? body.error : `http_${response.status}`;
  const message = typeof body.message === 'string' ? body.message : text || response.statusText;
  return new ManageApiError(response.status, code, message);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A percent-encoded query, spaces as %20 (a `+` would be signed as itself). */
const queryString = (query: Record<string, string>) =>
  Object.entries(query)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');

export type SignedCall = <T>(
  method: string,
  path: string,
  options?: { query?: Record<string, string>; body?: unknown },
) => Promise<{ status: number; body: T }>;

/** A function that makes signed calls to the API at `endpoint`: `path` is the route's, already percent-encoded. */
export function signedFetch(options: SignedFetchOptions): SignedCall {
  const signer = new SignatureV4({
    credentials: options.credentials ?? defaultProvider(),
    region: options.region,
    service: 'execute-api',
    sha256: Sha256,
  });
  let base = options.endpoint;
  while (base.endsWith('/')) base = base.slice(0, -1);
  const send = options.fetch ?? fetch;
  return async (method, path, { query = {}, body } = {}) => {
    const url = new URL(base + path);
    const search = queryString(query);
    const text = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      const signed = await signer.sign({
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: url.pathname,
        query,
        headers: { host: url.host, ...(text === undefined ? {} : { 'content-type': 'application/json' }) },
        body: text,
      });
      // fetch sets Host itself, to the same value.
      const { host: _host, ...headers } = signed.headers;
      const response = await send(url.origin + url.pathname + (search ? `?${search}` : ''), { method, headers, body: text });
      if (response.ok) return { status: response.status, body: (await response.json()) as never };
      if ((response.status === 429 || response.status === 503) && attempt < RETRIES.attempts) {
        await response.body?.cancel();
        await pause(RETRIES.firstPauseMs * 2 ** (attempt - 1));
        continue;
      }
      throw await refusal(response);
    }
  };
}
