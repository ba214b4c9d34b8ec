// How a setting that cannot work is reported, wherever it is read: the
// construct's props and CDK context at synth (lib/settings.ts, lib/context.ts),
// a Lambda's environment at its first invocation (env.ts). One shape,
// `<name> must be <expected>, not <value>.`: the name as the operator wrote it
// (a prop, `context <key>`, an environment variable), what would work, and the
// value given, as JSON, so that an empty or padded string shows.

export function mustBe(name: string, expected: string, value: unknown): string {
  return `${name} must be ${expected}, not ${JSON.stringify(value)}.`;
}

/** A JSON object: neither null nor an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
