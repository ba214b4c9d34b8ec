// The emulator's SigV4 check (local/emulator/sigv4.ts) on the AWS SigV4 test
// suite's `get-vanilla` request, and on that request changed in each part
// the signature covers.

import { describe, expect, it } from 'vitest';
import { verifySigV4, type ArrivedRequest, type SigV4Credentials } from '../../../local/emulator/sigv4';

const CREDENTIALS: SigV4Credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  service: 'service',
};

const SIGNED_AT = Date.UTC(2015, 7, 30, 12, 36, 0);

const VANILLA: ArrivedRequest = {
  method: 'GET',
  path: '/',
  query: '',
  headers: {
    host: 'example.amazonaws.com',
    'x-amz-date': '20150830T123600Z',
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
      'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  body: Buffer.alloc(0),
};

const changed = (change: Partial<ArrivedRequest>, headers: Record<string, string | undefined> = {}): ArrivedRequest => ({
  ...VANILLA,
  ...change,
  headers: { ...VANILLA.headers, ...headers },
});

describe('verifySigV4', () => {
  it('accepts the test suite’s get-vanilla request, within 15 minutes of its date either way', () => {
    for (const skew of [0, 14 * 60_000, -14 * 60_000]) expect(verifySigV4(VANILLA, CREDENTIALS, SIGNED_AT + skew)).toBeUndefined();
  });

  it.each<[string, ArrivedRequest, string]>([
    ['no Authorization', changed({}, { authorization: undefined }), 'missing_signature'],
    ['another algorithm', changed({}, { authorization: 'AWS4-HMAC-SHA512 Credential=x' }), 'malformed_signature'],
    ['another method', changed({ method: 'POST' }), 'invalid_signature'],
    ['another path', changed({ path: '/x' }), 'invalid_signature'],
    ['a query added', changed({ query: 'a=b' }), 'invalid_signature'],
    ['a body added', changed({ body: Buffer.from('x') }), 'invalid_signature'],
    ['another host', changed({}, { host: 'example.com' }), 'invalid_signature'],
    ['another date in the same minute', changed({}, { 'x-amz-date': '20150830T123601Z' }), 'invalid_signature'],
    ['no X-Amz-Date', changed({}, { 'x-amz-date': undefined }), 'malformed_signature'],
    ['a payload hash that is not the body’s', changed({}, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }), 'invalid_signature'],
  ])('refuses %s', (_name, request, error) => {
    expect(verifySigV4(request, CREDENTIALS, SIGNED_AT)).toMatchObject({ error, message: expect.any(String) });
  });

  it('refuses another secret, access key, region or service, and a date over 15 minutes away', () => {
    expect(verifySigV4(VANILLA, { ...CREDENTIALS, secretAccessKey: 'x' }, SIGNED_AT)).toMatchObject({ error: 'invalid_signature' });
    expect(verifySigV4(VANILLA, { ...CREDENTIALS, accessKeyId: 'test' }, SIGNED_AT)).toMatchObject({ error: 'invalid_credentials' });
    expect(verifySigV4(VANILLA, { ...CREDENTIALS, region: 'eu-west-1' }, SIGNED_AT)).toMatchObject({ error: 'invalid_credentials' });
    expect(verifySigV4(VANILLA, { ...CREDENTIALS, service: 'execute-api' }, SIGNED_AT)).toMatchObject({ error: 'invalid_credentials' });
    expect(verifySigV4(VANILLA, CREDENTIALS, SIGNED_AT + 16 * 60_000)).toMatchObject({ error: 'request_expired' });
  });
});
