// The custom resource that writes the deployment's data (the grammar's,
// sizes, watermarks) and presets into the viewer-request function's
// KeyValueStore on every deploy (lib/parts/edge-data.ts). CloudFormation
// imports a store's data only when it creates the store; every later change
// goes through the data-plane API, which this Lambda calls (sync.ts decides
// what to write).
//
// Delete does nothing: it comes with the stack's deletion (the store goes
// too), and the entries left behind are harmless without a function reading them.

// The data-plane API accepts only SigV4A signatures. The SDK signs with it
// only when a SigV4A implementation has registered itself, which this import
// does (a side effect, kept by the bundler: the package declares it).
import '@aws-sdk/signature-v4a';
import {
  CloudFrontKeyValueStoreClient,
  DescribeKeyValueStoreCommand,
  ListKeysCommand,
  UpdateKeysCommand,
  type CloudFrontKeyValueStoreClientConfig,
} from '@aws-sdk/client-cloudfront-keyvaluestore';
import type { CdkCustomResourceEvent } from 'aws-lambda';
import { customResourceHandler } from '../common/custom-resource';
import { desiredEntries, syncStore, type KeyValueStoreApi, type SyncOutcome } from './sync';

/** The data-plane API through the SDK; `config` is the client's (tests point it at a local server). */
export function keyValueStoreApi(config: CloudFrontKeyValueStoreClientConfig = {}): KeyValueStoreApi {
  const client = new CloudFrontKeyValueStoreClient(config);
  const version = (etag: string | undefined, operation: string) => {
    if (!etag) throw new Error(`${operation} answered without the store's version (ETag).`);
    return etag;
  };
  return {
    async version(kvsArn) {
      return version((await client.send(new DescribeKeyValueStoreCommand({ KvsARN: kvsArn }))).ETag, 'DescribeKeyValueStore');
    },
    async listEntries(kvsArn, nextToken) {
      const page = await client.send(new ListKeysCommand({ KvsARN: kvsArn, NextToken: nextToken }));
      return { entries: (page.Items ?? []).map((item) => ({ key: item.Key ?? '', value: item.Value ?? '' })), nextToken: page.NextToken };
    },
    async update(kvsArn, ifMatch, puts, deletes) {
      const result = await client.send(
        new UpdateKeysCommand({
          KvsARN: kvsArn,
          IfMatch: ifMatch,
          Puts: puts.map(({ key, value }) => ({ Key: key, Value: value })),
          Deletes: deletes.map((key) => ({ Key: key })),
        }),
      );
      return version(result.ETag, 'UpdateKeys');
    },
  };
}

export interface EdgeDataProperties {
  /** The viewer-request function's store. */
  KeyValueStoreArn: string;
  /** The deployment's entries, key to value (`deploymentEntries` at synth); empty or absent when there are none. */
  Entries?: Record<string, string>;
}

const summary = (outcome: SyncOutcome) =>
  `KeyValueStore: ${outcome.put} deployment entries written, ${outcome.deleted} deleted, ${outcome.unchanged} unchanged` +
  (outcome.attempts > 1 ? ` (the store changed during the deploy; written on attempt ${outcome.attempts})` : '') +
  '; other keys untouched.';

/** The onEvent handler; on Update, the previous deploy's data is kept (desiredEntries) for the function being replaced. */
export function createEdgeDataHandler(api: KeyValueStoreApi) {
  return customResourceHandler('edge_data', async (properties, event) => {
    const previous = event.RequestType === 'Update' ? (event.OldResourceProperties as unknown as EdgeDataProperties).Entries : undefined;
    const { KeyValueStoreArn, Entries } = properties as unknown as EdgeDataProperties;
    const outcome = await syncStore(api, KeyValueStoreArn, desiredEntries(Entries ?? {}, previous));
    return { log: { ...outcome }, data: { Message: summary(outcome) } };
  });
}

let handle: ReturnType<typeof createEdgeDataHandler> | undefined;

export function handler(event: CdkCustomResourceEvent) {
  handle ??= createEdgeDataHandler(keyValueStoreApi());
  return handle(event);
}
