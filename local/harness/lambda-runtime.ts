// The part of the Node.js Lambda runtime that a response-streaming handler
// talks to, so that lambda/origin/index.ts (or its bundle) runs outside Lambda:
// in the entry point's tests and the bench's cold start. It behaves as the
// runtime interface client does (npm aws-lambda-ric 4, what the Node runtimes run):
// - awslambda.streamifyResponse(handler) marks the handler; the runtime calls
//   it with (event, responseStream, context);
// - awslambda.HttpResponseStream.from(stream, prelude) sets the content type
//   below and, on the first write(), sends the JSON prelude (status, headers)
//   and 8 NUL bytes before the data. end() is not a write: a stream ended
//   without one reaches the viewer as a bare 200, its status and headers lost;
// - the viewer's response is complete when the stream ends, the invocation
//   when the handler's promise settles, whichever comes first.

import { Writable } from 'node:stream';

const INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const PRELUDE_DELIMITER = Buffer.alloc(8);

export interface StreamedResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface StreamingInvocation {
  /** What the viewer receives: settles when the handler ends the stream. */
  response: Promise<StreamedResponse>;
  /** Settles when the handler's promise does: the end of the invocation. */
  done: Promise<void>;
}

type WriteFirst = (chunk: string | Uint8Array) => void;

interface RuntimeResponseStream extends Writable {
  setContentType(contentType: string): void;
  _onBeforeFirstWrite?: (write: WriteFirst) => void;
}

type StreamingHandler = (event: unknown, responseStream: RuntimeResponseStream, context: unknown) => Promise<unknown>;

const streamingHandlers = new WeakSet<object>();

/**
 * Adds streaming to the `awslambda` global as the Node runtime does, keeping
 * what is there (the AWS SDK puts its InvokeStore on it).
 */
export function installLambdaRuntime(): void {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  if (global.awslambda?.streamifyResponse) return;
  global.awslambda = {
    ...global.awslambda,
    streamifyResponse(handler: StreamingHandler) {
      streamingHandlers.add(handler);
      return handler;
    },
    HttpResponseStream: {
      from(stream: RuntimeResponseStream, prelude: Record<string, unknown>) {
        stream.setContentType(INTEGRATION_CONTENT_TYPE);
        stream._onBeforeFirstWrite = (write) => {
          write(JSON.stringify(prelude));
          write(PRELUDE_DELIMITER);
        };
        return stream;
      },
    },
  };
}

function decode(contentType: string | undefined, data: Buffer): StreamedResponse {
  if (contentType !== INTEGRATION_CONTENT_TYPE) {
    return { statusCode: 200, headers: contentType ? { 'content-type': contentType } : {}, body: data };
  }
  const end = data.indexOf(PRELUDE_DELIMITER);
  if (end === -1) throw new Error('The response stream has the integration content type but no prelude.');
  const prelude = JSON.parse(data.subarray(0, end).toString('utf8')) as { statusCode?: number; headers?: Record<string, string> };
  return { statusCode: prelude.statusCode ?? 200, headers: prelude.headers ?? {}, body: data.subarray(end + PRELUDE_DELIMITER.length) };
}

function responseStream(): { stream: RuntimeResponseStream; ended: Promise<StreamedResponse> } {
  const chunks: Buffer[] = [];
  let contentType: string | undefined;
  let written = false;
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  }) as RuntimeResponseStream;
  stream.setContentType = (type) => {
    if (written) throw new Error('Cannot set content-type, too late.');
    contentType = type;
  };
  // Like the runtime, the hook is on write() itself; Writable.end(chunk) does not call it.
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (!written) stream._onBeforeFirstWrite?.(write);
    written = true;
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as RuntimeResponseStream['write'];
  const ended = new Promise<StreamedResponse>((resolve, reject) => {
    stream.on('finish', () => {
      try {
        resolve(decode(contentType, Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    stream.on('error', reject);
  });
  return { stream, ended };
}

/** Invokes a handler wrapped in awslambda.streamifyResponse, as the runtime does for one event. */
export function invokeStreaming(handler: unknown, event: unknown, context: unknown): StreamingInvocation {
  if (typeof handler !== 'function' || !streamingHandlers.has(handler)) {
    throw new Error('The handler is not wrapped in awslambda.streamifyResponse (was installLambdaRuntime() called before its import?).');
  }
  const { stream, ended } = responseStream();
  const done = (async () => {
    await (handler as StreamingHandler)(event, stream, context);
  })();
  const response = Promise.race([
    ended,
    // The runtime waits for an ended stream to finish; one never ended, it waits for until Lambda's timeout.
    done.then(() => {
      if (!stream.writableEnded) throw new Error('The handler settled without ending the response stream: in Lambda, a timeout.');
      return ended;
    }),
  ]);
  return { response, done };
}
