// The subject model (lib/subject-model.ts) cached before any test file runs,
// and SUBJECT_MODEL_FILE naming it: the test processes, and the transform
// children they start, inherit it. In CI a registry out of reach fails the run.
import { provideSubjectModel } from '../lib/subject-model';

export default async function setup() {
  await provideSubjectModel((line) => console.warn(`[test setup] ${line}`));
}
