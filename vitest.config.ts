import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts one LocalStack S3 for the whole run and provides 's3Endpoint'.
    // Vitest puts no timeout on global setup; local/harness/localstack.ts has its own
    // (the first start installs LocalStack's venv: about a minute, up to ~3).
    globalSetup: ['test/global-setup.ts'],
    // Tests talk to a real S3 and run sharp: allow for a slow, shared CI machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Child processes rather than worker threads: sharp's native libvips is
    // happiest loaded once per process. Two workers for two cores; LocalStack
    // and libvips' own threads take the rest.
    pool: 'forks',
    maxWorkers: 2,
  },
});
