// Structured logs, shared by every Lambda: one JSON object per line, which
// CloudWatch Logs Insights can query by field (event, key, paths, ...).
// Internal detail goes here, never into a response.

export type Logger = (entry: Record<string, unknown>) => void;

export const jsonLogger: Logger = (entry) => {
  console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));
};

/** An error with where it happened, for a bug's log line or a crash report. */
export function errorStack(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}

/** An error as one line for a log or a report, e.g. "AccessDenied: Access Denied"; AWS SDK errors are not always Errors. */
export function describeError(error: unknown): string {
  const failure = error as { name?: string; message?: string } | null | undefined;
  return `${failure?.name ?? 'Error'}: ${failure?.message ?? String(error)}`;
}
