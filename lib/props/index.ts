// The props of the ImageTransformer construct (lib/image-transformer.ts), each
// documented with its default: what a platform team reads to configure it.
// One file per section of the props, as the docs group them; a consumer
// names only ImageTransformerProps (and the types of its values), never a
// section. lib/resolved-settings.ts checks them and fills in the defaults.

import type { CloudFrontProps } from './cloudfront';
import type { ManageProps } from './manage';
import type { OperationsProps } from './operations';
import type { OriginLambdaProps } from './origin-lambda';
import type { OverrideProps } from './overrides';
import type { StorageProps } from './storage';
import type { UrlGrammarProps } from './url-grammar';

export type { ImageTransformerCors } from './cloudfront';
export type { WebOriginProps } from './url-grammar';

/** The props of the ImageTransformer construct; every one is optional. */
export interface ImageTransformerProps
  extends StorageProps, UrlGrammarProps, OriginLambdaProps, CloudFrontProps, ManageProps, OperationsProps, OverrideProps {}
