#!/usr/bin/env node
// The package's `edge-image-transformer` command (package.json "bin"): runs
// the command line (cli.ts) with the process's arguments and streams, and
// exits with its status.

import { runCli } from './cli';

runCli(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
