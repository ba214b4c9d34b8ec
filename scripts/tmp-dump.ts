import { writeFileSync } from 'node:fs';
import * as ef from '../lib/edge-function';
import { EVERY_FEATURE } from './edge-size';
for (const g of ['native', 'dit-json', 'thumbor'] as const) for (const signing of [true, false]) {
  const code = ef.viewerRequestFunctionCode({ ...EVERY_FEATURE, signing, edgeGrammar: g });
  writeFileSync('/tmp/fn-' + g + (signing ? '' : '-open') + '.js', code);
  console.log(g, signing, Buffer.byteLength(code));
}
