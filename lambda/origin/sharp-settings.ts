// sharp's process-wide settings for the origin Lambda.

import sharp from 'sharp';

/** Lambda gives a function one vCPU per 1769 MB of memory. */
const MB_PER_VCPU = 1769;

/**
 * The whole vCPUs the function's memory buys, at least one: Lambda shows two
 * vCPUs at any size up to 3008 MB, but pays one vCPU-second a second per
 * 1769 MB, so a thread beyond these runs on what the others leave.
 */
export function wholeVcpus(env: Record<string, string | undefined> = process.env): number {
  const memoryMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE) || MB_PER_VCPU;
  return Math.max(1, Math.floor(memoryMb / MB_PER_VCPU));
}

/**
 * sharp for a Lambda that serves one request at a time, as measured with
 * `npm run bench -- --settings` (docs/performance.md):
 * - no libvips operation cache: each miss reads a new source, so it never hits;
 *   without it peak RSS was 95 MB lower at the same speed;
 * - one libvips thread per vCPU the memory buys: on a second free core, two
 *   threads cut AVIF time by 25% for 19% more CPU and did nothing for JPEG or
 *   WebP, so at the default 2048 MB (1.16 vCPU) a second thread only adds CPU.
 *   Explicit, so that setting MALLOC_ARENA_MAX (which makes sharp pick one
 *   thread per core) does not change it.
 */
export function configureSharp(env: Record<string, string | undefined> = process.env): void {
  sharp.cache(false);
  sharp.concurrency(wholeVcpus(env));
}
