// The AWS image-optimization sample's origin, as its own process: the bench's
// baseline. Like the sample on Lambda it runs sharp with its default threads
// (one libvips thread per core) and a default S3 client, so it must not share
// the bench's process, whose sharp settings are the handler's. Its libvips
// operation cache is off, as the handler's is: on Lambda a miss reads a source
// it has not read before, so the cache never serves it, but the bench asks for
// each photo again and again, and a cache would serve the sample decoded work
// that no real miss gets. Per request: GET the source, its pipeline (scripts/bench/ops.ts
// naive), PUT the variant, base64 the body for the buffered response.
//
// Bundled by the bench with esbuild (sharp external) and run with plain node.
// Says its sharp settings in a first JSON line on stdout, then reads one JSON
// request per line on stdin and answers one JSON line each, several at a time
// when the bench sends several (concurrency 2).
// The environment (AWS_ENDPOINT_URL_S3, credentials) comes from the bench.

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createInterface } from 'node:readline';
import sharp from 'sharp';
import { errorStack } from '../../lambda/common/log';
import { naive, OPS } from './ops';

export interface NaiveSettings {
  /** sharp.concurrency(): libvips threads per image (sharp's default is 1 on glibc Linux, as in Lambda). */
  concurrency: number;
  /** The libvips operation cache's memory limit, in MB (0: off; sharp's default is 50). */
  cacheMb: number;
}

export interface NaiveRequest {
  id: number;
  op: string;
  sourceBucket: string;
  key: string;
  variantBucket: string;
  variantKey: string;
  /** Send the variant's bytes back (for the quality comparison). */
  withBody: boolean;
}

export interface NaiveAnswer {
  id: number;
  ms: number;
  fetch: number;
  transform: number;
  store: number;
  bytes: number;
  body?: string;
  error?: string;
}

const s3 = new S3Client({});

async function serve(request: NaiveRequest): Promise<NaiveAnswer> {
  const op = OPS.find((candidate) => candidate.name === request.op);
  if (!op) throw new Error(`no op ${request.op}`);
  const start = performance.now();
  const object = await s3.send(new GetObjectCommand({ Bucket: request.sourceBucket, Key: request.key }));
  const source = await object.Body!.transformToByteArray();
  const fetched = performance.now();
  const out = await naive(op, source);
  if (!out) throw new Error(`the sample has no ${op.name}`);
  const transformed = performance.now();
  await s3.send(
    new PutObjectCommand({ Bucket: request.variantBucket, Key: request.variantKey, Body: out.body, ContentType: out.contentType }),
  );
  const stored = performance.now();
  const body = out.body.toString('base64');
  const ms = performance.now() - start;
  return {
    id: request.id,
    ms,
    fetch: fetched - start,
    transform: transformed - fetched,
    store: stored - transformed,
    bytes: out.body.length,
    ...(request.withBody ? { body } : {}),
  };
}

sharp.cache(false);
const settings: NaiveSettings = { concurrency: sharp.concurrency(), cacheMb: sharp.cache().memory.max };
process.stdout.write(JSON.stringify(settings) + '\n');

createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line) as NaiveRequest;
  serve(request).then(
    (answer) => process.stdout.write(JSON.stringify(answer) + '\n'),
    (error: unknown) => process.stdout.write(JSON.stringify({ id: request.id, error: errorStack(error) }) + '\n'),
  );
});
