// The custom resource that caps the origin's concurrency at deploy time
// (lib/image-transformer.ts): reads the account's settings, reserves what
// sizing.ts decides on the origin function, and returns the decision as the
// attribute `Message` (a stack output) for CDK's Provider framework to answer
// CloudFormation with. It runs again with every new origin version, so the
// cap is re-applied after each update of the function.
//
// Delete does nothing: it comes either with the stack's deletion (the
// function goes too) or when an explicit originReservedConcurrency takes
// over, which CloudFormation has already applied by then.

import {
  DeleteFunctionConcurrencyCommand,
  GetAccountSettingsCommand,
  GetFunctionConcurrencyCommand,
  LambdaClient,
  PutFunctionConcurrencyCommand,
} from '@aws-sdk/client-lambda';
import type { CdkCustomResourceEvent } from 'aws-lambda';
import { customResourceHandler } from '../common/custom-resource';
import { originConcurrencyCap, type AccountConcurrency, type CapDecision } from './sizing';

/** The Lambda API calls the cap needs, behind an interface so that tests can answer them. */
export interface ConcurrencyApi {
  account(functionName: string): Promise<AccountConcurrency>;
  reserve(functionName: string, reserve: number | undefined): Promise<void>;
}

export function lambdaConcurrencyApi(client: LambdaClient): ConcurrencyApi {
  return {
    async account(functionName) {
      const [settings, own] = await Promise.all([
        client.send(new GetAccountSettingsCommand({})),
        client.send(new GetFunctionConcurrencyCommand({ FunctionName: functionName })),
      ]);
      return {
        quota: settings.AccountLimit?.ConcurrentExecutions ?? 0,
        unreserved: settings.AccountLimit?.UnreservedConcurrentExecutions ?? 0,
        current: own.ReservedConcurrentExecutions,
      };
    },
    async reserve(functionName, reserve) {
      if (reserve === undefined) await client.send(new DeleteFunctionConcurrencyCommand({ FunctionName: functionName }));
      else await client.send(new PutFunctionConcurrencyCommand({ FunctionName: functionName, ReservedConcurrentExecutions: reserve }));
    },
  };
}

export interface CapProperties {
  FunctionName: string;
  /** The cap; "0" for none. CloudFormation passes every property as a string. */
  Cap: string;
  /** The provisioned concurrency the reservation must cover; "0" for none. */
  Floor: string;
}

/** Applies the cap; an account that changed between reading and writing gets the same message as one with no room. */
export async function applyCap(api: ConcurrencyApi, properties: CapProperties): Promise<CapDecision> {
  const account = await api.account(properties.FunctionName);
  const decision = originConcurrencyCap(Number(properties.Cap), Number(properties.Floor), account);
  try {
    await api.reserve(properties.FunctionName, decision.reserve);
  } catch (error) {
    if ((error as { name?: string }).name !== 'InvalidParameterValueException' || decision.reserve === undefined) throw error;
    return { message: `No concurrency cap on the origin: Lambda refused ${decision.reserve} (${(error as Error).message}).` };
  }
  return decision;
}

export function createCapHandler(api: ConcurrencyApi) {
  return customResourceHandler('origin_concurrency_cap', async (properties) => {
    const decision = await applyCap(api, properties as unknown as CapProperties);
    return {
      log: { reserve: decision.reserve ?? null, message: decision.message },
      data: { Message: decision.message, ReservedConcurrency: String(decision.reserve ?? 'none') },
    };
  });
}

let handle: ReturnType<typeof createCapHandler> | undefined;

export function handler(event: CdkCustomResourceEvent) {
  handle ??= createCapHandler(lambdaConcurrencyApi(new LambdaClient({})));
  return handle(event);
}
