// The management API's requests and answers, one declared record each (the
// language of schema.ts): what the handlers read requests with, what the
// client's types are inferred from, and what the OpenAPI document is
// written from (openapi.ts). It imports no handler, so the client's build
// carries none. A limit that depends on the deployment (the largest upload,
// whether SVG is taken) is the handler's and is said in the description.

import type { Field, InferFields, Schema } from './schema';

const SOURCE_KEY =
  "A source key: the image's key in its URL, as the origin serves it (no empty, `.` or `..` segment, no control character, at most 1024 bytes; not under `_uploads/` or `_quarantine/`).";

/** The raster types the origin reads, as an upload declares them. */
export const RASTER_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/heic', 'image/heif', 'image/gif', 'image/tiff'];

export const SVG_TYPE = 'image/svg+xml';

/** POST /uploads. */
export const UPLOAD_BODY = [
  { name: 'key', required: true, description: SOURCE_KEY, schema: { type: 'string' } },
  {
    name: 'contentType',
    required: true,
    description: `The upload's type: a format the origin reads (${SVG_TYPE} only where the origin renders SVG).`,
    schema: { type: 'string', enum: [...RASTER_TYPES, SVG_TYPE] },
  },
  {
    name: 'contentLength',
    required: true,
    description: "The upload's size in bytes: at most the deployment's source limit (maxSourceBytes; 1 MB for SVG), else a 400 too_large.",
    schema: { type: 'integer', minimum: 1 },
  },
  {
    name: 'expiresIn',
    required: false,
    description: 'How long the presigned POST may be used, in seconds.',
    rangeCode: 'invalid_expiry',
    schema: { type: 'integer', minimum: 120, maximum: 6 * 60 * 60, default: 900, unit: 'seconds' },
  },
] as const satisfies readonly Field[];

export const UPLOAD_TICKET = [
  { name: 'url', required: true, description: 'Where the form is posted (the bucket).', schema: { type: 'string', format: 'uri' } },
  {
    name: 'fields',
    required: true,
    description: "The form's fields, posted before the file (the staging key, Content-Type, the policy and its signature).",
    schema: { type: 'map', values: { type: 'string' } },
  },
  { name: 'key', required: true, description: 'The source key the upload will have once ready.', schema: { type: 'string' } },
  { name: 'expiresAt', required: true, description: 'When the policy stops working.', schema: { type: 'string', format: 'date-time' } },
] as const satisfies readonly Field[];

const STATE = {
  name: 'status',
  required: true,
  description: 'pending: staged, waiting for the validator; ready: a source is at the key; quarantined: the latest upload was refused.',
  schema: { type: 'string', enum: ['ready', 'pending', 'quarantined'] },
} as const satisfies Field;

/** What every status and listing entry has. */
const OBJECT_FIELDS = [
  { name: 'key', required: true, description: 'The source key.', schema: { type: 'string' } },
  STATE,
  { name: 'bytes', required: true, description: "The object's size.", schema: { type: 'integer', minimum: 0 } },
  { name: 'etag', required: true, description: "The object's ETag, quoted as S3 gives it.", schema: { type: 'string' } },
  {
    name: 'uploadedAt',
    required: true,
    description: "When the object arrived: its upload's time, else its Last-Modified.",
    schema: { type: 'string', format: 'date-time' },
  },
] as const satisfies readonly Field[];

const MEASURED = 'Of a source uploaded through the API (the validator measured it).';

/** GET /images/{key}. */
export const IMAGE_STATUS = [
  ...OBJECT_FIELDS,
  { name: 'reason', required: false, description: "A quarantined upload's: the origin's error code.", schema: { type: 'string' } },
  { name: 'width', required: false, description: MEASURED, schema: { type: 'integer', minimum: 1 } },
  { name: 'height', required: false, description: MEASURED, schema: { type: 'integer', minimum: 1 } },
  { name: 'format', required: false, description: MEASURED, schema: { type: 'string' } },
] as const satisfies readonly Field[];

/** GET /images: the query. */
export const LIST_QUERY = [
  {
    name: 'prefix',
    required: false,
    description: 'Only the sources whose keys start with it (checked as a key would be, with a name after it).',
    schema: { type: 'string' },
  },
  {
    name: 'limit',
    required: false,
    description: 'The most images a page holds.',
    schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
  {
    name: 'cursor',
    required: false,
    description: "The `cursor` of the page before: S3's continuation token, opaque.",
    schema: { type: 'string' },
  },
] as const satisfies readonly Field[];

export const IMAGE_LISTING = [
  {
    name: 'images',
    required: true,
    description: 'The ready sources of the page, in S3 order (never a staged or quarantined upload).',
    schema: { type: 'array', items: { type: 'object', fields: OBJECT_FIELDS } },
  },
  { name: 'cursor', required: false, description: "The next page's cursor; absent on the last page.", schema: { type: 'string' } },
] as const satisfies readonly Field[];

/** DELETE /images. */
export const DELETE_BODY = [
  {
    name: 'keys',
    required: true,
    description: 'The source keys to delete (repeats once); one that is not a source key refuses the whole batch.',
    schema: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 100 },
  },
] as const satisfies readonly Field[];

export const DELETE_REPORT = [
  { name: 'failed_count', required: true, description: 'How many keys were not deleted.', schema: { type: 'integer', minimum: 0 } },
  {
    name: 'failed_files',
    required: true,
    description: 'Each key not deleted, with why (the storage error).',
    schema: {
      type: 'array',
      items: {
        type: 'object',
        fields: [
          { name: 'key', required: true, description: 'The key.', schema: { type: 'string' } },
          { name: 'reason', required: true, description: "S3's error code and message.", schema: { type: 'string' } },
        ],
      },
    },
  },
  { name: 'succeeded_count', required: true, description: 'How many keys were deleted.', schema: { type: 'integer', minimum: 0 } },
  {
    name: 'succeeded_files',
    required: true,
    description: 'The keys deleted (a key already gone counts as deleted).',
    schema: { type: 'array', items: { type: 'string' } },
  },
] as const satisfies readonly Field[];

/** An item of an import: where the image is, and its key here. */
const IMPORT_ITEM = [
  { name: 'url', required: true, description: "The image's https URL on the legacy server.", schema: { type: 'string', format: 'uri' } },
  { name: 'key', required: true, description: SOURCE_KEY, schema: { type: 'string' } },
] as const satisfies readonly Field[];

/** POST /imports: a list of items, or a manifest already in the source bucket; exactly one. */
export const IMPORT_BODY = [
  {
    name: 'items',
    required: false,
    description: 'The images to import; no key twice. A bad item is a 400 naming it by its index.',
    schema: { type: 'array', items: { type: 'object', fields: IMPORT_ITEM }, minItems: 1, maxItems: 10_000 },
  },
  {
    name: 'manifestKey',
    required: false,
    description: 'The key of a manifest in the source bucket, under `_imports/`: a CSV (`url,key` per line) or a JSON array of items.',
    schema: { type: 'string' },
  },
] as const satisfies readonly Field[];

const IMPORT_STATE = {
  name: 'status',
  required: true,
  description: 'Whether the import is still running.',
  schema: { type: 'string', enum: ['running', 'complete', 'failed'] },
} as const satisfies Field;

const IMPORT_TOTAL = {
  name: 'total',
  required: true,
  description: 'How many items the import has; null while a manifest is not yet counted.',
  schema: { type: 'integer', minimum: 0, nullable: true },
} as const satisfies Field;

const IMPORT_ID = { name: 'id', required: true, description: "The import's id.", schema: { type: 'string' } } as const satisfies Field;

export const IMPORT_STARTED = [IMPORT_ID, IMPORT_STATE, IMPORT_TOTAL] as const satisfies readonly Field[];

/** The failures an import's status lists; its report has them all. */
export const MAX_LISTED_FAILURES = 100;

export const IMPORT_STATUS = [
  ...IMPORT_STARTED,
  { name: 'succeeded', required: true, description: 'Items imported so far (ready).', schema: { type: 'integer', minimum: 0 } },
  { name: 'failed', required: true, description: 'Items that failed so far.', schema: { type: 'integer', minimum: 0 } },
  {
    name: 'failures',
    required: true,
    description: `The first ${MAX_LISTED_FAILURES} failures: a fetch refused or failed, or an image quarantined (its reason).`,
    schema: {
      type: 'array',
      maxItems: MAX_LISTED_FAILURES,
      items: {
        type: 'object',
        fields: [...IMPORT_ITEM, { name: 'reason', required: true, description: 'Why.', schema: { type: 'string' } }],
      },
    },
  },
  {
    name: 'reportKey',
    required: false,
    description: "The key of the completed job's report in the source bucket, which lists every failure.",
    schema: { type: 'string' },
  },
] as const satisfies readonly Field[];

export const ERROR_BODY = [
  { name: 'error', required: true, description: 'The refusal, as a code.', schema: { type: 'string' } },
  { name: 'message', required: true, description: 'What is wrong: the field, the key or the limit.', schema: { type: 'string' } },
] as const satisfies readonly Field[];

export type UploadTicket = InferFields<typeof UPLOAD_TICKET>;
export type ImageStatus = InferFields<typeof IMAGE_STATUS>;
export type ImageListing = InferFields<typeof IMAGE_LISTING>;
export type DeleteReport = InferFields<typeof DELETE_REPORT>;
export type ImportItem = InferFields<typeof IMPORT_ITEM>;
export type ImportStarted = InferFields<typeof IMPORT_STARTED>;
export type ImportStatus = InferFields<typeof IMPORT_STATUS>;

/** A route as the OpenAPI document describes it. */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'DELETE';
  /** The path as OpenAPI writes it, a parameter in braces. */
  path: string;
  operationId: string;
  summary: string;
  pathParameter?: Field;
  query?: readonly Field[];
  body?: Extract<Schema, { type: 'object' }>;
  /** Its answers but the refusals, by status. */
  answers: Record<number, { description: string; fields: readonly Field[] }>;
  /** The statuses of its own refusals, each `{error, message}` (ERROR_BODY). */
  refusals: readonly number[];
}

export const MANAGE_ROUTES: readonly RouteSpec[] = [
  {
    method: 'POST',
    path: '/uploads',
    operationId: 'createUpload',
    summary: 'A presigned POST that uploads one file to the staging prefix, where the validator reads it.',
    body: { type: 'object', fields: UPLOAD_BODY },
    answers: { 200: { description: 'The presigned POST.', fields: UPLOAD_TICKET } },
    refusals: [400, 503],
  },
  {
    method: 'GET',
    path: '/images',
    operationId: 'listImages',
    summary: 'The ready sources under a prefix, a page at a time.',
    query: LIST_QUERY,
    answers: { 200: { description: 'A page.', fields: IMAGE_LISTING } },
    refusals: [400, 503],
  },
  {
    method: 'DELETE',
    path: '/images',
    operationId: 'deleteImages',
    summary: "Deletes up to 100 sources; their variants are purged by the deployment's invalidation path.",
    body: { type: 'object', fields: DELETE_BODY },
    answers: {
      200: { description: 'Every key was deleted.', fields: DELETE_REPORT },
      207: { description: 'A key was not deleted.', fields: DELETE_REPORT },
    },
    refusals: [400, 503],
  },
  {
    method: 'GET',
    path: '/images/{key}',
    operationId: 'imageStatus',
    summary: 'Where an image is: pending, ready or quarantined.',
    pathParameter: {
      name: 'key',
      required: true,
      description: `${SOURCE_KEY} Percent-encoded, slashes and all.`,
      schema: { type: 'string' },
    },
    answers: { 200: { description: "The image's status.", fields: IMAGE_STATUS } },
    refusals: [400, 404, 503],
  },
  {
    method: 'POST',
    path: '/imports',
    operationId: 'startImport',
    summary: "Imports images from a legacy server's URLs, each validated as an upload.",
    body: { type: 'object', fields: IMPORT_BODY, exactlyOne: ['items', 'manifestKey'] },
    answers: { 202: { description: 'The import started.', fields: IMPORT_STARTED } },
    refusals: [400, 503],
  },
  {
    method: 'GET',
    path: '/imports/{id}',
    operationId: 'importStatus',
    summary: "An import's progress and its first failures.",
    pathParameter: IMPORT_ID,
    answers: { 200: { description: "The import's progress.", fields: IMPORT_STATUS } },
    refusals: [404, 503],
  },
];
