// The figures `npm run cost` takes by default: measured here, by the bench run
// recorded in docs/performance.md ("With the transform in its own process",
// `npm run bench -- --iterations 1`, 2026-11-23 23:35 UTC, 20 photos of 0.1 to
// 18 MP, Node 20.20.2 on a shared 2-core AMD EPYC, not on Lambda's Graviton).
// `npm run cost -- --bench <file>` takes the same shape from a newer run.

export interface MeasuredOperation {
  name: string;
  label: string;
  /** Median "miss invocation": from the request to the end of the variant's PUT, what Lambda bills. */
  missInvocationMs: number;
  /** Mean size of a stored variant, bytes; undefined where the bench did not sum them. */
  variantBytes?: number;
}

export interface Measured {
  source: string;
  /** A cold start's INIT: Node's boot and importing the bundled handler (sharp and libvips included). */
  coldInitMs: number;
  operations: MeasuredOperation[];
}

const KB = 1024;

export const BENCH_2026_11_23: Measured = {
  source: 'npm run bench, 2026-11-23 23:35 UTC (docs/performance.md)',
  coldInitMs: 131 + 187,
  operations: [
    // Variant bytes: the bench's "Output and quality" sums over the photos made at the requested size.
    { name: 'thumb', label: 'thumbnail 200x200 cover', missInvocationMs: 83.7, variantBytes: (282 * KB) / 20 },
    { name: 'op1', label: '800 w WebP q80', missInvocationMs: 204, variantBytes: (716 * KB) / 18 },
    { name: 'op2', label: '400x400 cover JPEG q80', missInvocationMs: 112, variantBytes: (418 * KB) / 19 },
    { name: 'avif', label: '1600 w AVIF', missInvocationMs: 961, variantBytes: (245 * KB) / 5 },
    { name: 'jpeg', label: '1200 w JPEG', missInvocationMs: 173, variantBytes: (1.7 * KB * KB) / 16 },
    { name: 'json', label: 'format=json', missInvocationMs: 77.7 },
    { name: 'gif', label: 'animated GIF 240 w', missInvocationMs: 1329 },
  ],
};
