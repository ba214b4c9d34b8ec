// Content-Types by file extension, for the playground's files and for the
// sources `--images` uploads (as `aws s3 sync` guesses them from the name),
// and for the files the management command line uploads.

import { extname } from 'node:path';

const BY_EXTENSION: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.gif': 'image/gif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** The Content-Type of a file named `name`, or undefined when its extension is unknown or missing. */
export function contentTypeOf(name: string): string | undefined {
  return BY_EXTENSION[extname(name).toLowerCase()];
}
