// Generates the viewer-response CloudFront Function from
// lambda/edge/viewer-response.ts (what it does, and why, is written there):
// bundled and size-checked as the viewer-request function is
// (lib/edge-function.ts), with the deployment's settings baked in.

import { join } from 'node:path';
import { PARAMS } from '../lambda/grammar/index';
import { browserCacheControl, FORMAT_VARY, type ResponseSettings } from '../lambda/edge/viewer-response';
import { bundleFunction, checkFunctionSize, plainHandler } from './edge-function';
import { PROJECT_ROOT } from './project-root';

export { browserCacheControl, FORMAT_VARY };

/** How long browsers and proxies keep a variant by default: an hour (see browserMaxAge). */
export const DEFAULT_BROWSER_MAX_AGE_SECONDS = 3600;

/** The hints `width=auto` reads (the DPR only without Sec-CH-Width), and Save-Data. */
export const WIDTH_HINTS_VARY = 'Sec-CH-Width, Sec-CH-Viewport-Width, Sec-CH-DPR, Save-Data';
/** The hints `dpr=auto` alone reads. */
export const DPR_HINTS_VARY = 'Sec-CH-DPR, Save-Data';

const ENTRY = join(PROJECT_ROOT, 'lambda', 'edge', 'viewer-response.ts');

/** Every spelling of a parameter a viewer may give (lower-case). */
function spellings(name: string): string[] {
  const param = PARAMS.find((candidate) => candidate.name === name) as (typeof PARAMS)[number];
  return [param.name as string].concat(param.aliases);
}

export interface ViewerResponseSettings {
  /** The Cache-Control the origin gives variants (the construct's cacheControl). */
  variantCacheControl: string;
  /** How long viewers keep them instead (browserCacheControl), or less for a URL that expires sooner. */
  browserMaxAgeSeconds: number;
}

/** The function's code, for `FunctionCode.fromInline` with `FunctionRuntime.JS_2_0`. Throws when it exceeds CloudFront's 10 KB. */
export function viewerResponseFunctionCode(settings: ViewerResponseSettings): string {
  const response: ResponseSettings = {
    ...settings,
    hinted: [
      [spellings('width'), WIDTH_HINTS_VARY],
      [spellings('dpr'), DPR_HINTS_VARY],
    ],
  };
  const code = [bundleFunction(ENTRY, 'viewerResponse', { RESPONSE: response }), plainHandler(), ''].join('\n');
  checkFunctionSize(code, undefined, 'viewer-response');
  return code;
}
