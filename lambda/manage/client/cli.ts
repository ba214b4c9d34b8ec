// `npx edge-image-transformer upload|delete|list|import`: the management
// API's command line, on the client of index.ts. As the repository's other
// commands, runCli takes what it touches (its streams, its environment, how
// it makes its client) and returns the exit status: 0 when everything was
// done, 1 when any item failed or the API refused, 2 on a usage error. Each
// item's outcome and a summary go to stdout; the progress of bulk work to
// stderr (a bar on a terminal, plain lines otherwise).

import { parseArgs } from 'node:util';
import { UsageError } from '../../common/usage-error';
import { COMMANDS, type CliIo, type Command } from './commands';
import { createManageClient, ManageApiError } from './index';

export const USAGE = `usage: edge-image-transformer <command> [options]

commands:
  upload <file...>    upload files through presigned POSTs (--prefix, --wait)
  delete <key...>     delete images, 100 keys a call (--from-file)
  list                list the ready images (--prefix, --limit, --json)
  import <manifest>   import images from a legacy server's URLs (--wait)

Run edge-image-transformer <command> --help for a command's options.`;

const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  client: (options) => createManageClient(options),
});

function parse(command: Command, argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...command.options, endpoint: { type: 'string' }, region: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs the command line `argv` (without the program's name) and returns its exit status. */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help') {
    (name === undefined ? io.stderr : io.stdout).write(USAGE + '\n');
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`edge-image-transformer: no command ${JSON.stringify(name)}.\n${USAGE}\n`);
    return 2;
  }
  try {
    const { values, positionals } = parse(command, rest);
    if (values.help) {
      io.stdout.write(command.usage + '\n');
      return 0;
    }
    const endpoint = (values.endpoint as string | undefined) ?? io.env.EDGE_IMAGE_MANAGE_URL;
    if (!endpoint) throw new UsageError("the API's URL is needed: --endpoint URL (or $EDGE_IMAGE_MANAGE_URL).");
    if (!/^https?:\/\/[^/]/.test(endpoint)) throw new UsageError(`--endpoint must be an http(s) URL, not ${JSON.stringify(endpoint)}.`);
    const client = io.client({ endpoint, region: values.region as string | undefined });
    return await command.run(values, positionals, client, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${name}: ${error.message}\n${command.usage}\n`);
      return 2;
    }
    if (error instanceof ManageApiError) {
      io.stderr.write(`${name}: the API answered ${error.status} ${error.code}: ${error.message}\n`);
      return 1;
    }
    // No credentials, no connection: the words of the SDK or of fetch, and what caused them.
    const cause = (error as { cause?: unknown }).cause;
    io.stderr.write(`${name}: ${(error as Error).message}${cause instanceof Error ? ` (${cause.message})` : ''}\n`);
    return 1;
  }
}
