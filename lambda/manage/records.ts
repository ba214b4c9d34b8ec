// What the management API writes beside an upload, and reads back for its
// status: a ready source's size and format in its user metadata, and a
// quarantined upload's record (`<quarantine prefix><key>.json`).

import type { ErrorCode } from '../origin/errors';
import type { SourceInfo } from '../origin/image/input';

/** The record beside a quarantined upload: why the origin refused it, and what it was. */
export interface QuarantineRecord {
  /** The origin's error code (unsupported_media_type, too_many_pixels, undecodable_image...). */
  reason: ErrorCode;
  message: string;
  /** When the upload arrived (the staged object's Last-Modified), ISO 8601. */
  uploadedAt: string;
  bytes: number;
  etag: string;
}

/** What a validated source's user metadata says of it (S3's `x-amz-meta-<name>`). */
export interface ReadyFields {
  width?: number;
  height?: number;
  format?: string;
  uploadedAt?: string;
}

const NAMES = { width: 'image-width', height: 'image-height', format: 'image-format', uploadedAt: 'uploaded-at' } as const;

/** A positive whole number from metadata, or undefined. */
const dimension = (text: string | undefined) => (text !== undefined && /^[1-9]\d{0,9}$/.test(text) ? Number(text) : undefined);

export const READY_METADATA = {
  write: (info: Pick<SourceInfo, 'width' | 'height' | 'format'>, uploadedAt: string): Record<string, string> => ({
    [NAMES.width]: String(info.width),
    [NAMES.height]: String(info.height),
    [NAMES.format]: info.format,
    [NAMES.uploadedAt]: uploadedAt,
  }),
  /** The fields a source's metadata holds; none for a source not uploaded through the API. */
  read: (metadata: Record<string, string>): ReadyFields => {
    const fields: ReadyFields = {
      width: dimension(metadata[NAMES.width]),
      height: dimension(metadata[NAMES.height]),
      format: metadata[NAMES.format],
      uploadedAt: metadata[NAMES.uploadedAt],
    };
    return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as ReadyFields;
  },
};
