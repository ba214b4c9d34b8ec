// What the operator's commands (`npm run purge`, `npm run replay-invalidations`)
// share: a command takes its clients as arguments and returns its exit status
// (0 done, 1 something failed, 2 a usage error, with the usage on stderr), so
// tests run it in-process against LocalStack and doubles.

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A usage error: exit status 2 and the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const consoleOutput: Output = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

export interface OperatorCommand<O> {
  /** The name in messages, e.g. `purge`. */
  name: string;
  usage: string;
  /** The options, or undefined for --help; throws UsageError. */
  parse(argv: string[]): O | undefined;
  /** Does the work and returns the exit status. */
  run(options: O): Promise<number>;
}

/** Parses, prints the usage for --help or a usage error, or runs: the exit status. */
export async function runOperatorCommand<O>(command: OperatorCommand<O>, argv: string[], output: Output): Promise<number> {
  let options: O | undefined;
  try {
    options = command.parse(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.err(`${command.name}: ${error.message}`);
    output.err(command.usage);
    return 2;
  }
  if (!options) {
    output.out(command.usage);
    return 0;
  }
  return command.run(options);
}

/** Runs `main` with the process's arguments when `moduleUrl` is the file node was started with. */
export function runIfMain(moduleUrl: string, main: (argv: string[]) => Promise<number>): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (error) => {
      console.error(error instanceof Error ? error.stack : error);
      process.exitCode = 1;
    },
  );
}
