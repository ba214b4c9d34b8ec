// The text fonts (lib/fonts.ts) cached before any test file runs, and
// TEXT_FONTS_DIR naming their folder: the test processes, and the transform
// children they start, inherit it. In CI a registry out of reach fails the run.
import { provideFonts } from '../lib/fonts';

export default async function setup() {
  await provideFonts((line) => console.warn(`[test setup] ${line}`));
}
