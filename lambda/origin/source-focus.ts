// A source's own focal point: its S3 user metadata `x-amz-meta-focal-point`,
// `x,y` as `fp` takes it, which a CMS can set on upload. It comes with the
// GET that reads the source, so it costs no request. The variant's key stays
// the URI: the metadata changes only when the object is written again, and
// that purges the source's variants like any new version (lambda/invalidate).

import { coverCrop, isGrammarError, PARAMS_BY_NAME, type GrammarOptions, type Ops } from '../grammar';
import type { Note } from './request';

/** The user metadata name (S3 reports it lower-case, without `x-amz-meta-`). */
export const FOCAL_POINT_METADATA = 'focal-point';

/**
 * The ops a variant is made with: the URI's, and the source's focal point
 * when the URI gives neither a focal point nor a position and crops to cover.
 * A malformed value is the operator's, not the viewer's: it is logged and
 * ignored, and the image is served as without it.
 */
export function withSourceFocus(ops: Ops, metadata: Record<string, string>, options: GrammarOptions, note: Note): Ops {
  const raw = metadata[FOCAL_POINT_METADATA];
  if (raw === undefined) return ops;
  let fp: string;
  try {
    fp = PARAMS_BY_NAME['fp']!.read(raw, options) as string;
  } catch (error) {
    if (!isGrammarError(error)) throw error;
    note('warn', 'focal_point_ignored', { detail: `x-amz-meta-${FOCAL_POINT_METADATA}: ${error.message}` });
    return ops;
  }
  return ops.fp === undefined && ops.position === undefined && coverCrop(ops) ? { ...ops, fp } : ops;
}
