// Files packaged with this function (watermarks, the fallback image): read
// once per environment, and again after a failed read.

import { readFile } from 'node:fs/promises';

/** A reader of `file` that reads it on its first call and keeps the bytes (forgets a failure). */
export function readOnce(file: string): () => Promise<Buffer> {
  let bytes: Promise<Buffer> | undefined;
  return () => {
    if (!bytes) {
      bytes = readFile(file);
      bytes.catch(() => (bytes = undefined));
    }
    return bytes;
  };
}
