// The browser entry of the URL helper: unsigned URLs and srcsets, no
// dependencies, no Node built-ins. Signed URLs: ./sign.ts (server side only).

export {
  cardParams,
  IMAGE_PARAM_NAMES,
  imageOrigin,
  imageQuery,
  imageUrl,
  srcset,
  withSignature,
  type GrammarOptions,
  type ImageParams,
} from './url';
export { dialectImageUrl, type UrlDialect } from './dialect-url';
