// The options of `npm start`, `npm run load` and `npm run bench`: parsed with
// node:util, -h/--help printing the usage, every mistake exiting 2 with it.

import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Prints `message` and the usage to stderr and exits 2: a usage error. */
export function usageError(usage: string, message: string): never {
  console.error(`error: ${message}\n\n${usage}`);
  process.exit(2);
}

/** The parsed option values, or undefined after --help printed the usage (the command then does nothing). */
export function commandLine<T extends Options>(usage: string, options: T) {
  let parsed;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h', default: false } } });
  } catch (error) {
    usageError(usage, (error as Error).message);
  }
  // Inside this generic function TypeScript cannot resolve the parsed type; `help` is always there.
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    return undefined;
  }
  return parsed.values;
}
