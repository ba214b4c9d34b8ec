// Whether the code runs in a dialect's edge function (lambda/edge/dialects/),
// which lib/edge-function.ts tells its bundle by defining EDGE_DIALECT; it is
// undefined anywhere else. Such a function reads no presets and no client
// hints (no `width=auto`, `dpr=auto` or `quality=auto`), so its bundle leaves
// their code out: its translator leaves no room for them in CloudFront's 10 KB.
// Written out at each use (`typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT`),
// so that the bundle folds it to a constant there.

declare global {
  const EDGE_DIALECT: boolean | undefined;
}

export {};
