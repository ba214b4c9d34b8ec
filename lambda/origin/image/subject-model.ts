// Where the subject model's file is: named by SUBJECT_MODEL_FILE (the emulator
// and the tests point it at their cache), else beside the bundle's entry,
// where the synth puts it.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const THIS_FILE = typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);

export const SUBJECT_MODEL_FILE_NAME = 'u2netp.onnx';

export const subjectModelPath = () => process.env.SUBJECT_MODEL_FILE ?? join(dirname(THIS_FILE), SUBJECT_MODEL_FILE_NAME);
