// Runs a generated CloudFront Function file (viewer-request or
// viewer-response) in a node:vm sandbox, the way
// cloudfront-js-2.0 runs it: strict mode, no Node globals, the built-in
// modules `crypto` (Node's own) and `cloudfront` (a fake KeyValueStore)
// bound by the file's own import declarations, and a top-level `handler`.
//
// node:vm scripts cannot hold import declarations, so the harness takes them
// out (by their exact source ranges, found by acorn) and binds each imported
// name in the sandbox to the module it names; nothing else in the file is
// touched. Only `crypto` and `cloudfront` may be imported, as in CloudFront.

import { parse } from 'acorn';
import type { CloudFrontFunctionsEvent, CloudFrontFunctionsQuerystring } from 'aws-lambda';
import nodeCrypto from 'node:crypto';
import vm from 'node:vm';

/** CloudFront's event object shapes, as documented for viewer-request and viewer-response functions. */
export type Fields = CloudFrontFunctionsQuerystring;
export type Field = Fields[string];
export type ViewerRequest = CloudFrontFunctionsEvent['request'];
/** A viewer-request event: no response yet. */
export type ViewerEvent = Omit<CloudFrontFunctionsEvent, 'response'>;
/** What a viewer-response function sees of the answer, and returns: no body. */
export type ViewerResponse = CloudFrontFunctionsEvent['response'];
export type ViewerResponseEvent = CloudFrontFunctionsEvent;

/** A response a viewer-request function answers itself: CloudFront's event types have no body for it. */
export interface FunctionResponse {
  statusCode: number;
  statusDescription?: string;
  headers: Fields;
  body: { encoding: 'text'; data: string };
}

export type FunctionResult = ViewerRequest | FunctionResponse;

export interface KvsFake {
  /** The KeyValueStore value per key; a missing key rejects, as CloudFront's `get` does. */
  values: Record<string, string>;
  /** Every id the function passed to `cf.kvs(id)`. */
  idsAsked: string[];
  /** Every key the function read. */
  keysRead: string[];
}

export interface LoadedFunction<Event = ViewerEvent, Result = FunctionResult> {
  /** Calls the file's `handler` with an event; the result is copied out of the sandbox. */
  handler(event: Event): Promise<Result>;
  kvs: KvsFake;
  /** What the function wrote with console.log. */
  logs: string[];
}

const MODULES = ['crypto', 'cloudfront'];

export function loadFunction<Event = ViewerEvent, Result = FunctionResult>(
  code: string,
  kvsValues: Record<string, string> = {},
  filename = 'viewer-request.js',
): LoadedFunction<Event, Result> {
  const kvs: KvsFake = { values: kvsValues, idsAsked: [], keysRead: [] };
  const logs: string[] = [];
  const cloudfront = {
    kvs(id: string) {
      kvs.idsAsked.push(id);
      return {
        async get(key: string) {
          kvs.keysRead.push(key);
          if (!Object.prototype.hasOwnProperty.call(kvs.values, key)) throw new Error(`Key ${key} not found`);
          return kvs.values[key];
        },
      };
    },
  };
  const modules: Record<string, unknown> = { crypto: nodeCrypto, cloudfront };

  const program = parse(code, { ecmaVersion: 'latest', sourceType: 'module' });
  const bindings: Record<string, unknown> = {};
  let script = code;
  for (const node of program.body) {
    if (node.type !== 'ImportDeclaration') continue;
    const source = String(node.source.value);
    if (!MODULES.includes(source)) throw new Error(`The function imports "${source}", which CloudFront does not provide.`);
    const [specifier, ...rest] = node.specifiers;
    if (!specifier || rest.length || specifier.type !== 'ImportDefaultSpecifier') {
      throw new Error(`Only a default import of "${source}" is supported.`);
    }
    bindings[specifier.local.name] = modules[source];
    script = script.slice(0, node.start) + ' '.repeat(node.end - node.start) + script.slice(node.end);
  }

  const sandbox = vm.createContext({
    ...bindings,
    console: { log: (...parts: unknown[]) => logs.push(parts.map(String).join(' ')) },
  });
  // CloudFront runs every function in strict mode.
  vm.runInContext(`'use strict';${script}`, sandbox, { filename });
  const handler = (sandbox as { handler?: unknown }).handler;
  if (typeof handler !== 'function') throw new Error('The function file defines no top-level handler(event).');

  return {
    kvs,
    logs,
    async handler(event) {
      const result = await (handler as (event: Event) => unknown)(event);
      return JSON.parse(JSON.stringify(result)) as Result;
    },
  };
}

/**
 * A viewer-request event for a URL path and raw query string, grouped the way
 * CloudFront does: names and values as sent (still percent-encoded), a
 * repeated name once with all its values in `multiValue`.
 */
export function viewerEvent(
  path: string,
  query = '',
  options: { method?: string; headers?: Record<string, string | string[]> } = {},
): ViewerEvent {
  const querystring: Fields = {};
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? '' : part.slice(eq + 1);
    addField(querystring, name, value);
  }
  const headers: Fields = { host: { value: 'd111111abcdef8.cloudfront.net' } };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) addField(headers, name.toLowerCase(), one);
  }
  return {
    version: '1.0',
    context: eventContext('viewer-request'),
    viewer: VIEWER,
    request: { method: options.method ?? 'GET', uri: path, querystring, headers, cookies: {} },
  };
}

const VIEWER = { ip: '198.51.100.11' };

function eventContext(eventType: CloudFrontFunctionsEvent['context']['eventType']): CloudFrontFunctionsEvent['context'] {
  return {
    distributionDomainName: 'd111111abcdef8.cloudfront.net',
    distributionId: 'EDFDVBD6EXAMPLE',
    eventType,
    requestId: 'EXAMPLEntjQpEXAMPLE_SG5Z-EXAMPLEPmPfEXAMPLEu3EqEXAMPLE==',
  };
}

/** A viewer-response event: the request as the viewer-request function passed it on, and the answer's status and headers. */
export function viewerResponseEvent(request: ViewerRequest, statusCode: number, headers: Record<string, string>): ViewerResponseEvent {
  const fields: Fields = {};
  for (const [name, value] of Object.entries(headers)) addField(fields, name, value);
  return {
    version: '1.0',
    context: eventContext('viewer-response'),
    viewer: VIEWER,
    request,
    response: { statusCode, headers: fields, cookies: {} },
  };
}

function addField(fields: Fields, name: string, value: string): void {
  const existing = Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined;
  if (!existing) {
    // An own property even for `__proto__`, as a parsed request has.
    Object.defineProperty(fields, name, { value: { value }, enumerable: true, writable: true, configurable: true });
    return;
  }
  existing.multiValue ??= [{ value: existing.value }];
  existing.multiValue.push({ value });
}

export function isResponse(result: FunctionResult): result is FunctionResponse {
  return 'statusCode' in result;
}

/** The query string a rewritten request sends to the origin (values are sent as written). */
export function forwardedQuery(request: ViewerRequest): string {
  return Object.entries(request.querystring)
    .flatMap(([name, field]) => (field.multiValue ?? [field]).map((one) => `${name}=${one.value}`))
    .join('&');
}
