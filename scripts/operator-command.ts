// What the operator's commands (`npm run purge`, `npm run replay-invalidations`)
// share: a command takes its clients as arguments and returns its exit status
// (0 done, 1 something failed, 2 a usage error, with the usage on stderr), so
// tests run it in-process against LocalStack and doubles.

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorStack } from '../lambda/common/log';
import { UsageError } from '../local/harness/command-line';

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const consoleOutput: Output = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
};

type Env = Record<string, string | undefined>;

export interface OperatorCommand<O, C extends { s3: { destroy(): void } }> {
  /** The name in messages, e.g. `purge`. */
  name: string;
  usage: string;
  /** The options from the arguments and the environment, or undefined for --help; throws UsageError. */
  parse(argv: string[], env: Env): O | undefined;
  /** The AWS clients for these options. */
  clients(options: O): C;
  /** Does the work and returns the exit status. */
  run(options: O, clients: C, output: Output): Promise<number>;
}

/**
 * The command's `main`: parses, prints the usage for --help or a usage error,
 * or runs with its clients (destroyed after), and returns the exit status.
 * Tests pass their own output, clients (LocalStack, doubles) and environment.
 */
export function operatorMain<O, C extends { s3: { destroy(): void } }>(command: OperatorCommand<O, C>) {
  return async function main(
    argv: string[],
    output: Output = consoleOutput,
    clients: (options: O) => C = command.clients,
    env: Env = process.env,
  ): Promise<number> {
    let options: O | undefined;
    try {
      options = command.parse(argv, env);
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
    const made = clients(options);
    try {
      return await command.run(options, made, output);
    } finally {
      made.s3.destroy();
    }
  };
}

/** Runs `main` with the process's arguments when `moduleUrl` is the file node was started with. */
export function runIfMain(moduleUrl: string, main: (argv: string[]) => Promise<number>): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  main(process.argv.slice(2)).then(
    (status) => {
      process.exitCode = status;
    },
    (error) => {
      console.error(errorStack(error));
      process.exitCode = 1;
    },
  );
}
