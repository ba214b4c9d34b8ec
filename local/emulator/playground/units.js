// Sizes and durations as the page writes them.

export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB'];
  let value = bytes;
  let unit = -1;
  do {
    value /= 1000;
    unit++;
  } while (value >= 1000 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

export const ms = (value) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
