// Starts one LocalStack S3 per test run; test files reach it through
// inject('s3Endpoint') (see test/support/s3.ts).
import type { TestProject } from 'vitest/node';
import { startLocalStack } from '../local/harness/localstack';

declare module 'vitest' {
  export interface ProvidedContext {
    s3Endpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const localStack = await startLocalStack();
  project.provide('s3Endpoint', localStack.endpoint);
  return async () => {
    await localStack.stop();
  };
}
