// The emulator's HTTP front: `/_health`, the playground and its small API
// under `/_playground/` and `/_api/`, the management API under `/_manage/`
// (manage-route.ts), and every other path as a viewer request through the
// emulated CloudFront. Only for its own loopback names.

import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  canonicalRequest,
  decodeKeyPath,
  isGrammarError,
  signedText,
  signUri,
  splitQuery,
  type GrammarOptions,
  type SignatureParams,
} from '../../lambda/grammar';
import { bucketObjectOf, keyOfObject, type SourceRoute } from '../../lambda/origin/sources';
import { isUnservedKey } from '../../lambda/common/staging';
import type { TemplateDefinition } from '../../lambda/origin/templates';
import { contentTypeOf } from './content-types';
import { MANAGE_PREFIX, MAX_MANAGE_BODY_BYTES, tooLargeAnswer, type ManageRoute } from './manage-route';
import { playgroundPage } from './playground-form';
import type { Emulator } from './emulator';

export interface PlaygroundSettings {
  grammar: GrammarOptions;
  avif: boolean;
  /** The secret playground URLs are signed with, when the edge checks signatures. */
  signingSecret?: string;
  /** The deployment's card templates, checked: the page's Cards section fills their slots. */
  templates?: { [name: string]: TemplateDefinition };
}

/** A template as the page needs it: its canvas, its source if any, and its slots in order (the first image slot is the URL's key). */
const cardForPage = ({ width, height, source, slots }: TemplateDefinition) => ({
  width,
  height,
  source,
  slots: Object.entries(slots).map(([name, slot]) =>
    slot.kind === 'text' ? { name, kind: slot.kind, maxLength: slot.maxLength, required: slot.required } : { name, kind: slot.kind },
  ),
});

export interface ServerOptions {
  emulator: Emulator;
  s3: S3Client;
  /** The deployment's routes (plan.routes): its buckets' are listed and uploaded to under their prefixes. */
  routes: SourceRoute[];
  settings: PlaygroundSettings;
  /** Called after a playground upload replaced a source, as S3 would notify. */
  onSourceChanged(key: string): Promise<void>;
  /** The browser build of lambda/client, served at /_playground/client.js. */
  clientScript: string;
  /** Largest upload accepted from the playground. */
  maxUploadBytes: number;
  /** Web sources the playground lists too (a site cannot be listed, but the emulator's own demo site's are known). */
  webSources: { key: string; bytes: number }[];
  /** The management API's routes, under `/_manage/`. */
  manage: ManageRoute;
}

const PLAYGROUND = fileURLToPath(new URL('./playground/', import.meta.url));

function send(response: ServerResponse, status: number, headers: Record<string, string>, body: Buffer | string = '') {
  response.writeHead(status, headers);
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown) {
  send(response, status, { 'content-type': 'application/json', 'cache-control': 'no-store' }, JSON.stringify(value));
}

/** The names the emulator answers for, with its port: a Host header is one of these or refused. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** The origins of the emulator's own pages (the playground's), at each of its loopback names. */
export const ownOrigins = (port: number): string[] => LOOPBACK_NAMES.map((name) => `http://${name}${port === 80 ? '' : `:${port}`}`);

/** Whether `host` names this emulator. A page that rebinds its own name to 127.0.0.1 sends that name instead. */
function isOwnHost(host: string | undefined, port: number): boolean {
  const name = host?.toLowerCase();
  return LOOPBACK_NAMES.some((loopback) => name === `${loopback}:${port}` || (port === 80 && name === loopback));
}

/** The request body, or undefined when it is over `limit` bytes. */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    length += (chunk as Buffer).length;
    if (length > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Answers `/_api/sign`: signs a viewer URL server-side, as an application's back end would. */
function signPlaygroundUrl(response: ServerResponse, url: URL, settings: PlaygroundSettings) {
  const path = url.searchParams.get('path') ?? '';
  const query = url.searchParams.get('query') ?? '';
  if (!settings.signingSecret) return sendJson(response, 200, { url: path + (query ? '?' + query : '') });
  // `expires`: seconds from now the URL stops working (absent: it never does).
  const expires = url.searchParams.get('expires');
  if (expires !== null && !/^[1-9]\d{0,7}$/.test(expires)) {
    return sendJson(response, 400, {
      error: 'invalid_parameter',
      message: `Invalid expires "${expires.slice(0, 20)}": expected whole seconds from now, 1 to 99999999.`,
    });
  }
  const { key, ops } = canonicalRequest(path, splitQuery(query), settings.grammar);
  const signature: SignatureParams = expires === null ? {} : { exp: String(Math.floor(Date.now() / 1000) + Number(expires)) };
  const sig = signUri(signedText(key, ops, signature) as string, settings.signingSecret);
  const scope = signature.exp === undefined ? '' : `exp=${signature.exp}&`;
  return sendJson(response, 200, { url: `${path}?${query ? query + '&' : ''}${scope}sig=${sig}` });
}

const CLIENT_HINTS = 'Sec-CH-Width, Sec-CH-DPR, Sec-CH-Viewport-Width';

/** A served file: its headers and body. */
interface PlaygroundFile {
  headers: Record<string, string>;
  body: Buffer | string;
}

/**
 * A playground file as the emulator serves it, or undefined when there is no
 * such file: the browser build of lambda/client as `client.js`, index.html
 * with the controls of the grammar's parameters (playground-form.ts), and the
 * page's stylesheet and ES modules as they are, typed by their extension. Only
 * files in the playground's folder: a name that leads out of it is none.
 */
export async function playgroundFile(name: string, clientScript: string, grammar: GrammarOptions): Promise<PlaygroundFile | undefined> {
  if (name === 'client.js') return { headers: { 'content-type': contentTypeOf(name)!, 'cache-control': 'no-store' }, body: clientScript };
  const path = normalize(join(PLAYGROUND, name));
  if (!path.startsWith(PLAYGROUND)) return undefined;
  const body = await readFile(path).catch(() => undefined);
  if (!body) return undefined;
  const headers: Record<string, string> = {
    'content-type': contentTypeOf(path) ?? 'application/octet-stream',
    'cache-control': 'no-store',
  };
  if (name !== 'index.html') return { headers, body };
  // The page opts in to the client hints `width=auto` and `dpr=auto` read (same origin: no delegation needed).
  headers['accept-ch'] = CLIENT_HINTS;
  return { headers, body: playgroundPage(body.toString('utf8'), grammar) };
}

async function staticFile(response: ServerResponse, name: string, options: ServerOptions) {
  const file = await playgroundFile(name, options.clientScript, options.settings.grammar);
  if (!file) return sendJson(response, 404, { error: 'not_found', message: 'No such file.' });
  send(response, 200, file.headers, file.body);
}

/** The 421 for a request whose Host is not this emulator's. */
function refuseForeignHost(response: ServerResponse, host: string | undefined, port: number) {
  // Before any routing: nothing is signed, uploaded or made for a foreign page. Its body is
  // not read, so the connection closes rather than carry the rest of it.
  response.setHeader('connection', 'close');
  sendJson(response, 421, {
    error: 'misdirected_request',
    message:
      `The emulator answers only for ${LOOPBACK_NAMES.map((name) => `${name}:${port}`).join(', ')}, not for Host ` +
      `${JSON.stringify(host ?? '')}: a page of another site could otherwise reach it (DNS rebinding).`,
  });
}

export function createEmulatorServer(options: ServerOptions): Server {
  const { emulator, s3, routes, settings } = options;

  /** Every source a URL reaches, by its URL key: each bucket's objects (the default bucket's under another route's prefix are not). */
  async function listSources() {
    const keys: { key: string; bytes: number }[] = [...options.webSources];
    for (const route of routes) {
      if (route.kind !== 'bucket') continue;
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: route.settings.bucket, ContinuationToken: token }));
        for (const object of page.Contents ?? []) {
          const key = keyOfObject(route, object.Key!, routes);
          // Uploads staged or quarantined are no sources.
          if (key !== undefined && !(route.prefix === '' && isUnservedKey(key))) keys.push({ key, bytes: object.Size ?? 0 });
        }
        token = page.NextContinuationToken;
      } while (token);
    }
    return keys;
  }

  async function api(request: IncomingMessage, response: ServerResponse, url: URL) {
    if (url.pathname === '/_api/config') {
      const { grammar, avif, signingSecret, templates = {} } = settings;
      const cards = Object.fromEntries(Object.entries(templates).map(([name, template]) => [name, cardForPage(template)]));
      return sendJson(response, 200, { ...grammar, avif, signing: Boolean(signingSecret), cards });
    }
    if (url.pathname === '/_api/sources' && request.method === 'GET') return sendJson(response, 200, await listSources());
    if (url.pathname.startsWith('/_api/sources/') && request.method === 'PUT') {
      const key = decodeKeyPath(url.pathname.slice('/_api/sources'.length));
      const body = await readBody(request, options.maxUploadBytes);
      if (!body) {
        response.setHeader('connection', 'close');
        return sendJson(response, 413, {
          error: 'source_too_large',
          message: `The upload is larger than ${options.maxUploadBytes} bytes.`,
        });
      }
      const source = bucketObjectOf(key, routes);
      if (!source)
        return sendJson(response, 409, { error: 'not_a_bucket_key', message: `${key} is served from a web site, not a bucket.` });
      const { bucket, objectKey } = source;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: objectKey, Body: body, ContentType: request.headers['content-type'] }));
      await options.onSourceChanged(key);
      return sendJson(response, 201, { key });
    }
    if (url.pathname === '/_api/sign') return signPlaygroundUrl(response, url, settings);
    return sendJson(response, 404, { error: 'not_found', message: 'No such playground API.' });
  }

  /** A `/_manage/` request: its path and query as sent, which its signature covers. */
  async function manage(request: IncomingMessage, response: ServerResponse, path: string, query: string) {
    const body = await readBody(request, MAX_MANAGE_BODY_BYTES);
    const answer = body
      ? await options.manage({ method: request.method ?? 'GET', path, query, headers: request.headers, body })
      : tooLargeAnswer();
    send(response, answer.status, answer.headers, answer.body);
  }

  async function route(request: IncomingMessage, response: ServerResponse) {
    const [rawPath = '/', ...rawQuery] = (request.url ?? '/').split('?');
    if (rawPath === MANAGE_PREFIX || rawPath.startsWith(MANAGE_PREFIX + '/')) return manage(request, response, rawPath, rawQuery.join('?'));
    // Appended, not resolved against a base: a path such as `//evil.jpg` is a path here, not a host.
    const url = new URL('http://localhost' + (request.url ?? '/'));
    if (url.pathname === '/_health') return sendJson(response, 200, { status: 'ok' });
    if (url.pathname === '/') return staticFile(response, 'index.html', options);
    if (url.pathname.startsWith('/_playground/')) return staticFile(response, url.pathname.slice('/_playground/'.length), options);
    if (url.pathname.startsWith('/_api/')) return api(request, response, url);
    const answer = await emulator.serve({ method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers });
    send(response, answer.status, answer.headers, answer.body);
  }

  const server = createServer((request, response) => {
    const { port } = server.address() as AddressInfo;
    if (!isOwnHost(request.headers.host, port)) return refuseForeignHost(response, request.headers.host, port);
    route(request, response).catch((error: unknown) => {
      if (isGrammarError(error)) return sendJson(response, 400, { error: error.code, message: error.message });
      console.error('[emulator]', error);
      if (!response.headersSent) sendJson(response, 502, { error: 'bad_gateway', message: 'The emulator failed; see its log.' });
      else response.destroy();
    });
  });
  return server;
}
