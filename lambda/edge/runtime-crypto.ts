// Stands in for the `crypto` module inside the generated CloudFront Function.
// lib/edge-function.ts aliases the grammar's `import crypto from 'crypto'` to
// this file; the generated file's first line, `import crypto from 'crypto'`,
// binds the runtime's module to the free name used here. The bundle thus holds
// no import, require or interop helper of its own.

declare const crypto: typeof import('crypto');
export default crypto;
