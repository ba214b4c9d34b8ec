// Small helpers for tests that stand up a local HTTP server in place of an AWS API.

import type { IncomingMessage } from 'node:http';

/** A request's whole body, as text. */
export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
