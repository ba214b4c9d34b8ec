import { viewerRequestFunctionCode } from '../lib/edge-function';
import { EVERY_FEATURE } from '../scripts/edge-size';
process.stdout.write(viewerRequestFunctionCode({ ...EVERY_FEATURE, edgeGrammar: (process.argv[2] as any) }));
