import { viewerRequestFunctionCode } from '../lib/edge-function';
import { EVERY_FEATURE } from '../scripts/edge-size';
for (const g of ['native', 'dit-json', 'thumbor'] as const) {
  for (const signing of [true, false]) {
    const code = viewerRequestFunctionCode({ ...EVERY_FEATURE, signing, edgeGrammar: g });
    console.log(g, signing, Buffer.byteLength(code));
  }
}
