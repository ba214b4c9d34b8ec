// The origin alias's name on its own: the package's entry exports it, and a
// constant declared beside the origin function would bring that module's
// declarations (the deployment plan, down to the handler's aws-lambda and
// onnxruntime-node types) into every consumer's type check.

/** The name of the origin Lambda's alias that the Function URL (and so CloudFront) invokes. */
export const ORIGIN_ALIAS_NAME = 'live';
