// Whether the code runs in a dialect's edge function (lambda/edge/dialects/),
// which lib/edge-function.ts tells its bundle by defining EDGE_DIALECT; it is
// undefined anywhere else. Such a function reads no presets, so its bundle
// leaves their code out: its translator leaves little room in CloudFront's
// 10 KB. Nor does it read a crop region, a border or `format=json`: no
// translator writes them, and DIT's refuses them in the query beside its
// requests (DitData.refused); a kind the bundle cannot read reads as no value,
// a refusal. EDGE_HINTLESS says that the function reads no client hints
// either (no `width=auto`, `dpr=auto` or `quality=auto`): every dialect's but
// Cloudflare's, whose `width=auto` is ours (DialectModule.clientHints).
// Written out at each use (`typeof EDGE_DIALECT === 'undefined' || !EDGE_DIALECT`),
// so that the bundle folds it to a constant there.
//
// EDGE_READS_WATERMARK, EDGE_READS_TEMPLATE, EDGE_READS_FP, EDGE_READS_DPR and
// EDGE_READS_TEXT say whether the function reads those parameters, whose code
// is their own (a watermark's or a card template's version, a point's reader,
// the scaling by dpr, a text's reader, encoding and `text-*` ops): a dialect's function reads
// those its DialectModule.reads names (DIT's a watermark, imgix's and
// Cloudflare's a focal point and dpr; none a template); the native function, and code outside
// a bundle, all of them.
//
// EDGE_TRANSLATED says that every native pair the function reads is written
// by its dialect's translator, none is a viewer's own (imgix's and
// Cloudflare's functions; DIT reads the query beside a request as a native
// URL's, DialectModule.nativeQuery): a refusal of the native grammar there
// names the dialect.

declare global {
  const EDGE_DIALECT: boolean | undefined;
  const EDGE_HINTLESS: boolean | undefined;
  const EDGE_READS_WATERMARK: boolean | undefined;
  const EDGE_READS_TEMPLATE: boolean | undefined;
  const EDGE_READS_FP: boolean | undefined;
  const EDGE_READS_DPR: boolean | undefined;
  const EDGE_READS_TEXT: boolean | undefined;
  const EDGE_TRANSLATED: boolean | undefined;
}

export {};
