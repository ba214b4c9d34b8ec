// AWS Signature Version 4 in the page, on WebCrypto: the playground calls the
// emulator's `/_manage/` routes as any client of the management API calls
// them, and the emulator checks the signature as it checks a server's
// (docs/manage.md, "Locally"). It signs with the emulator's documented
// credentials, LocalStack's `test`/`test`, which open nothing but this
// emulator; a deployed page gets its upload from its own back end instead.

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test', region: 'us-east-1', service: 'execute-api' };
const ALGORITHM = 'AWS4-HMAC-SHA256';
const utf8 = new TextEncoder();

const hex = (bytes) => [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
const sha256Hex = async (text) => hex(await crypto.subtle.digest('SHA-256', utf8.encode(text)));

async function hmac(key, text) {
  const raw = typeof key === 'string' ? utf8.encode(key) : key;
  const imported = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return crypto.subtle.sign('HMAC', imported, utf8.encode(text));
}

/** RFC 3986 encoding, as SigV4 wants it: every byte but the unreserved characters. */
export const uriEncode = (text) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/**
 * fetch(path) signed: `path` (same origin, no query) as it is sent, each
 * character outside RFC 3986's unreserved ones already encoded; `body`, when
 * there is one, JSON. Signed are the Host the browser sends, X-Amz-Date and
 * Content-Type, and the body's SHA-256; the path is encoded once more, as
 * every service but S3 signs it.
 */
export async function signedFetch(method, path, body) {
  const { accessKeyId, secretAccessKey, region, service } = CREDENTIALS;
  const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const headers = { host: location.host, 'x-amz-date': amzDate, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  const names = Object.keys(headers).sort();
  const canonical = [
    method,
    uriEncode(path).replace(/%2F/g, '/'),
    '',
    ...names.map((name) => `${name}:${headers[name]}`),
    '',
    names.join(';'),
    await sha256Hex(body ?? ''),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  let key = await hmac('AWS4' + secretAccessKey, day);
  for (const part of [region, service, 'aws4_request']) key = await hmac(key, part);
  const signature = hex(await hmac(key, [ALGORITHM, amzDate, scope, await sha256Hex(canonical)].join('\n')));
  // The browser sends Host itself, the same value.
  const { host: _host, ...sent } = headers;
  const authorization = `${ALGORITHM} Credential=${accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return fetch(path, { method, body, headers: { ...sent, authorization } });
}
