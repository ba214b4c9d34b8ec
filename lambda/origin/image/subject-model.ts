// Where the subject model (U²-Net small, u2netp.onnx) is when the origin runs:
// beside the bundle's entry in Lambda, where the construct's bundling writes it
// (lib/subject-model.ts fetches it from its PyPI wheel at synth); in a checkout
// (tests, the emulator) the cached copy that SUBJECT_MODEL_FILE names.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The model's file name, in the bundle and in the cache. */
export const SUBJECT_MODEL_FILE = 'u2netp.onnx';

/** The environment variable that names the model file, overriding the bundle's. */
export const SUBJECT_MODEL_ENV = 'SUBJECT_MODEL_FILE';

/**
 * This module's file: in Lambda, the CommonJS bundle (where esbuild leaves
 * `import.meta` empty), so the bundle's entry; from the sources, the ES module itself.
 */
const THIS_FILE = typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);

/** The model file to load: SUBJECT_MODEL_FILE when set, else the one beside the bundle's entry. */
export function subjectModelPath(): string {
  return process.env[SUBJECT_MODEL_ENV] || join(dirname(THIS_FILE), SUBJECT_MODEL_FILE);
}
