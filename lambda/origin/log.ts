// Structured logs: one JSON object per line, which CloudWatch Logs Insights
// can query by field. Internal detail goes here, never into a response.

export type Logger = (entry: Record<string, unknown>) => void;

export const jsonLogger: Logger = (entry) => {
  console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));
};
