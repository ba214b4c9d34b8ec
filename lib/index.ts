// The package's construct entry (`import { ImageTransformer } from 'edge-image-transformer'`):
// the construct, its props and the types they use.

export * from './image-transformer';
export type { Preset } from '../lambda/grammar';
export type { SvgPolicy } from '../lambda/origin/config';
export type { WatermarkProps } from './watermarks';
