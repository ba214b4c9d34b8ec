// The command-line shape of every command (`npm start`, load, bench, bounds,
// purge, replay-invalidations): options parsed with node:util, -h/--help
// printing the usage, and a mistake thrown as a UsageError, which the
// command's runner turns into exit status 2 with the usage. Nothing below the
// runner ends the process.

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorStack } from '../../lambda/common/log';
import { UsageError } from '../../lambda/common/usage-error';

type Options = NonNullable<ParseArgsConfig['options']>;

export { UsageError };

/** The parsed option values, or undefined after --help printed the usage (the command then does nothing); throws UsageError. */
export function commandLine<T extends Options>(usage: string, options: T, argv: string[] = process.argv.slice(2)) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h', default: false } } });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // Inside this generic function TypeScript cannot resolve the parsed type; `help` is always there.
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    return undefined;
  }
  return parsed.values;
}

/**
 * Runs a command's `main`. A usage error prints the message and the usage and
 * exits 2; any other error prints its stack and exits 1 (`beforeExit` first,
 * e.g. to end a progress line). Otherwise the process ends when its work does,
 * with the exit status `main` set.
 */
export function runCommand(usage: string, main: () => Promise<void>, beforeExit: () => void = () => {}): void {
  main().catch((error: unknown) => {
    beforeExit();
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}\n\n${usage}`);
      process.exit(2);
    }
    console.error(errorStack(error));
    process.exit(1);
  });
}
