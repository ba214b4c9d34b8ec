// What the page's modules share: the emulator's configuration, its sources,
// the Accept this browser's <img> sends, and the `original` variant last shown.

export const page = {
  config: undefined,
  sources: [],
  browserAccept: 'image/*,*/*;q=0.8',
  original: undefined, // { key, measurement, width, height }
};
