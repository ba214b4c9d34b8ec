// The package's construct entry (`import { ImageTransformer } from 'edge-image-transformer'`):
// the construct, its props and the types they use, and the constants and error it documents.

export { ImageTransformer } from './image-transformer';
export type { ImageTransformerCors, ImageTransformerProps, WebOriginProps } from './props';
export { ImageTransformerConfigError } from './settings';
export { ALARM_THRESHOLDS, type ImageTransformerAlarms } from './monitoring';
export { ORIGIN_ALIAS_NAME } from './parts/origin-alias';
export { DEFAULT_ORIGIN_CONCURRENCY_CAP } from './resolved-settings';
export type { Preset } from '../lambda/grammar';
export type { SvgPolicy } from '../lambda/origin/config';
export type { WatermarkProps } from './watermarks';
export type { FontProps } from './own-fonts';
export type { TemplateProps, ImageSlotProps, TextSlotProps } from '../lambda/origin/templates';
