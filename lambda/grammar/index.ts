// The URL contract (see README "URL parameters"): parse, canonicalise and
// validate. Imported by the edge function, the origin handler and the client
// helper; it imports nothing outside this folder.

import './dialect-function';
export * from './canonical';
export * from './errors';
export * from './form';
export * from './fonts';
export * from './key';
export * from './overlays';
export * from './params';
export * from './sign';
export * from './validate';
