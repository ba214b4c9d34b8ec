// The SDK adapter, against a local HTTP server that answers like CloudFront's
// REST-XML API (LocalStack's free edition has no CloudFront): checks the
// request the real CloudFrontClient sends, wildcard and escapes untouched.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { readBody } from '../support/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudFrontInvalidations } from '../../lambda/invalidate/cloudfront';

interface Received {
  method: string;
  url: string;
  body: string;
}

let server: Server;
let endpoint: string;
const received: Received[] = [];
let status = 201;

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const body = await readBody(request);
    received.push({ method: request.method ?? '', url: request.url ?? '', body });
    if (status !== 201) {
      response.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': 'req-1' });
      response.end(
        '<?xml version="1.0"?><ErrorResponse xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Error><Type>Sender</Type>' +
          '<Code>TooManyInvalidationsInProgress</Code><Message>Processing your request will cause you to exceed the maximum number of in-progress wildcard invalidations.</Message></Error><RequestId>req-1</RequestId></ErrorResponse>',
      );
      return;
    }
    const paths = [...body.matchAll(/<Path>(.*?)<\/Path>/g)].map((match) => match[1]);
    response.writeHead(201, {
      'content-type': 'text/xml',
      location: `https://cloudfront.amazonaws.com/2020-05-31/distribution/E2QWRUHEXAMPLE/invalidation/I2J0I21PCUYOIK`,
    });
    response.end(
      '<?xml version="1.0"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>I2J0I21PCUYOIK</Id>' +
        '<Status>InProgress</Status><CreateTime>2026-11-22T00:00:00Z</CreateTime><InvalidationBatch><Paths>' +
        `<Quantity>${paths.length}</Quantity><Items>${paths.map((path) => `<Path>${path}</Path>`).join('')}</Items></Paths>` +
        '<CallerReference>ref</CallerReference></InvalidationBatch></Invalidation>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

function client() {
  return cloudFrontInvalidations(
    new CloudFrontClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 }),
  );
}

describe('cloudFrontInvalidations', () => {
  it('sends one CreateInvalidation with the paths as given', async () => {
    received.length = 0;
    status = 201;
    const result = await client().createInvalidation({
      distributionId: 'E2QWRUHEXAMPLE',
      paths: ['/photos/my%20cat.jpg*', '/%C3%A9t%C3%A9/a*'],
      callerReference: '1763770000000-0f1e2d3c',
    });

    expect(result).toEqual({ id: 'I2J0I21PCUYOIK', status: 'InProgress' });
    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('POST');
    expect(received[0]!.url).toBe('/2020-05-31/distribution/E2QWRUHEXAMPLE/invalidation');
    const body = received[0]!.body;
    expect(body).toContain('<CallerReference>1763770000000-0f1e2d3c</CallerReference>');
    expect(body).toContain('<Quantity>2</Quantity>');
    expect(body).toContain('<Path>/photos/my%20cat.jpg*</Path><Path>/%C3%A9t%C3%A9/a*</Path>');
  });

  it("passes CloudFront's error on, with its name", async () => {
    status = 400;
    await expect(
      client().createInvalidation({ distributionId: 'E2QWRUHEXAMPLE', paths: ['/a*'], callerReference: 'r2' }),
    ).rejects.toMatchObject({ name: 'TooManyInvalidationsInProgress' });
    status = 201;
  });
});
