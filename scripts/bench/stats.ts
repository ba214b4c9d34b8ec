// Small statistics and formatting helpers for the benchmark (pure: no I/O).

/** The value at quantile `q` (0..1) of `values`, linearly interpolated; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

export const median = (values: readonly number[]) => quantile(values, 0.5);
export const p95 = (values: readonly number[]) => quantile(values, 0.95);
export const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
export const mean = (values: readonly number[]) => (values.length ? sum(values) / values.length : NaN);

/** Milliseconds for a table: 3 significant digits, no more than one decimal. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(1);
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) + '×' : '—';
}

export function kb(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—';
  if (bytes >= 10 * 1024 * 1024) return (bytes / 1024 / 1024).toFixed(0) + ' MB';
  if (bytes >= 1024 * 1024) return (bytes / 1024 / 1024).toFixed(1) + ' MB';
  if (bytes >= 10 * 1024) return (bytes / 1024).toFixed(0) + ' KB';
  return (bytes / 1024).toFixed(1) + ' KB';
}

/** Dollars for a table: whole dollars from $100, cents below. */
export const dollars = (value: number) => '$' + (value >= 100 ? value.toFixed(0) : value.toFixed(2));

export function perSecond(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : '—';
}

/** A markdown table; cells are strings, the first row is the header. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const rule = header.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/** Median of the per-pair ratios a[i]/b[i]: paired, so a slow moment on a shared machine hits both. */
export function pairedRatio(a: readonly number[], b: readonly number[]): number {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (b[i]! > 0) ratios.push(a[i]! / b[i]!);
  return median(ratios);
}
