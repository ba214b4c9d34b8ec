// Structured logs, as in the origin: one JSON object per line, which
// CloudWatch Logs Insights can query by field (event, key, paths, ...).

export type Logger = (entry: Record<string, unknown>) => void;

export const jsonLogger: Logger = (entry) => {
  console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));
};
