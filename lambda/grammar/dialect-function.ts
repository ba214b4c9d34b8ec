// Whether the code runs in a dialect's edge function (lambda/edge/dialects/),
// which lib/edge-function.ts tells its bundle by defining EDGE_DIALECT; it is
// undefined anywhere else. Such a function reads no presets, so its bundle
// leaves their code out: its translator leaves little room in CloudFront's
// 10 KB. EDGE_HINTLESS says that the function reads no client hints either (no
// `width=auto`, `dpr=auto` or `quality=auto`): every dialect's but
// Cloudflare's, whose `width=auto` is ours (DialectModule.clientHints).
// Written out at each use (`typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT`),
// so that the bundle folds it to a constant there.
//
// EDGE_TRANSLATED says more: every native pair the function reads is written
// by its dialect's translator, none is a viewer's own (imgix's and
// Cloudflare's functions; DIT reads the query beside a request as a native
// URL's, DialectModule.nativeQuery). Those translators write no crop region,
// border, watermark nor `format=json`, so that bundle leaves out their
// readers: a kind it cannot read reads as no value, a refusal.

declare global {
  const EDGE_DIALECT: boolean | undefined;
  const EDGE_HINTLESS: boolean | undefined;
  const EDGE_TRANSLATED: boolean | undefined;
}

export {};
