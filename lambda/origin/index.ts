// The Lambda entry point, a response-streaming handler (the Function URL's
// invoke mode is RESPONSE_STREAM): the viewer gets the variant as soon as it
// is made, and the invocation goes on to store it. Dependencies are made on the
// first request rather than at import, so a cold start does no work it does not need.
// The same bundled file is also the transform's child process (transform-process.ts),
// which serves transforms and defines no handler.

import type { Writable } from 'node:stream';
import { readConfig, readMetricsOptions } from './config';
import { createOriginHandler, type OriginHandler } from './handler';
import { jsonLogger } from '../common/log';
import type { FunctionUrlResponse } from './responses';
import { originS3Client } from './storage';
import { isTransformChild, transformProcesses } from './transform-process';

let handle: OriginHandler | undefined;

/** Started at import, in Lambda's INIT phase, so the first request finds the child ready. */
const transforms = isTransformChild ? undefined : transformProcesses();

/**
 * Writes a Function URL response to Lambda's response stream and ends it, which
 * ends the viewer's response. The runtime sends the status and headers on the
 * first write() and not on end(), so there is always one write, if only of nothing.
 */
function streamResponse(responseStream: Writable, { statusCode, headers, body }: FunctionUrlResponse): void {
  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode, headers });
  stream.write(body);
  stream.end();
}

export const handler = isTransformChild
  ? undefined
  : awslambda.streamifyResponse(async (event, responseStream, context) => {
      handle ??= createOriginHandler({
        // Bounded attempts and timeouts: a storage fault is a 503 in seconds, never a hung invocation.
        s3: originS3Client(),
        config: readConfig(process.env),
        log: jsonLogger,
        transforms,
        metrics: readMetricsOptions(process.env),
      });
      // Settles after the variant's write: Lambda's Node 24 runtime does not wait for work left running.
      await handle(event, context, (response) => streamResponse(responseStream, response));
    });
