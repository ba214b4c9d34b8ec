// The management API's OpenAPI document: the committed one is the one the
// records make (so the document and the validation never drift: after a
// change to lambda/manage/api-schema.ts, `npm run openapi`), and it is a
// well-formed OpenAPI 3.1 document, checked structurally against the
// specification's rules here (no validator of 3.1 is installed).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MANAGE_ROUTES } from '../../lambda/manage/api-schema';
import { manageOpenApi } from '../../lambda/manage/openapi';
import { OPENAPI_DOCUMENT, openApiText } from '../../scripts/openapi';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object', 'null'];
const SCHEMA_WORDS = new Set(
  'type description enum format minimum maximum default items minItems maxItems properties required additionalProperties oneOf $ref'.split(
    ' ',
  ),
);

/** The problems of a JSON Schema (2020-12) at `at`, as far as this document uses the language. */
function schemaProblems(schema: Json, at: string): string[] {
  const problems = Object.keys(schema)
    .filter((word) => !SCHEMA_WORDS.has(word))
    .map((word) => `${at}: ${word} is no keyword here`);
  const types = [schema.type ?? []].flat();
  if (!schema.$ref && !schema.oneOf && types.length === 0) problems.push(`${at}: no type`);
  for (const type of types) if (!TYPES.includes(type)) problems.push(`${at}: type ${type}`);
  if (schema.enum && (!Array.isArray(schema.enum) || schema.enum.length === 0)) problems.push(`${at}: empty enum`);
  if (schema.minimum !== undefined && schema.maximum !== undefined && schema.minimum > schema.maximum)
    problems.push(`${at}: minimum > maximum`);
  if (schema.default !== undefined && (schema.default < (schema.minimum ?? -Infinity) || schema.default > (schema.maximum ?? Infinity))) {
    problems.push(`${at}: default out of range`);
  }
  for (const name of schema.required ?? []) if (!schema.properties?.[name]) problems.push(`${at}: required ${name} is not a property`);
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    problems.push(...schemaProblems(property as Json, `${at}.${name}`));
  if (schema.items) problems.push(...schemaProblems(schema.items, `${at}[]`));
  if (typeof schema.additionalProperties === 'object') problems.push(...schemaProblems(schema.additionalProperties, `${at}{}`));
  for (const [index, branch] of (schema.oneOf ?? []).entries()) {
    for (const name of (branch as Json).required ?? []) if (!schema.properties?.[name]) problems.push(`${at}.oneOf[${index}]: ${name}`);
  }
  return problems;
}

const schemasOf = (content: Json | undefined, at: string) =>
  Object.entries(content ?? {}).flatMap(([type, media]) => schemaProblems((media as Json).schema, `${at} ${type}`));

function operationProblems(path: string, method: string, operation: Json): string[] {
  const at = `${method.toUpperCase()} ${path}`;
  const problems: string[] = [];
  const parameters: Json[] = operation.parameters ?? [];
  const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
  const inPath = parameters.filter((parameter) => parameter.in === 'path');
  if (JSON.stringify(inPath.map((parameter) => parameter.name)) !== JSON.stringify(templated)) problems.push(`${at}: path parameters`);
  for (const parameter of parameters) {
    if (!['query', 'header', 'path', 'cookie'].includes(parameter.in) || typeof parameter.name !== 'string')
      problems.push(`${at}: parameter`);
    if (parameter.in === 'path' && parameter.required !== true) problems.push(`${at}: ${parameter.name} must be required`);
    problems.push(...schemaProblems(parameter.schema, `${at} ${parameter.name}`));
  }
  if (new Set(parameters.map((parameter) => `${parameter.in} ${parameter.name}`)).size !== parameters.length)
    problems.push(`${at}: repeated`);
  if (operation.requestBody) problems.push(...schemasOf(operation.requestBody.content, `${at} body`));
  const responses = Object.entries(operation.responses ?? {});
  if (responses.length === 0) problems.push(`${at}: no responses`);
  for (const [status, response] of responses) {
    if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(status)) problems.push(`${at}: status ${status}`);
    if (typeof (response as Json).description !== 'string') problems.push(`${at} ${status}: no description`);
    problems.push(...schemasOf((response as Json).content, `${at} ${status}`));
  }
  return problems;
}

/** Every `$ref` of `node`, as a JSON pointer. */
const refsOf = (node: unknown): string[] =>
  typeof node !== 'object' || node === null
    ? []
    : Object.entries(node).flatMap(([name, value]) => (name === '$ref' ? [value as string] : refsOf(value)));

const resolve = (document: Json, ref: string) =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<any>((node, part) => node?.[part], document);

function documentProblems(document: Json): string[] {
  const problems: string[] = [];
  if (!/^3\.1\.\d+$/.test(document.openapi)) problems.push('openapi is not 3.1.x');
  if (typeof document.info?.title !== 'string' || typeof document.info?.version !== 'string') problems.push('info');
  const operationIds: string[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    if (!path.startsWith('/')) problems.push(`${path}: not /`);
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (!METHODS.includes(method)) problems.push(`${path}: ${method}`);
      operationIds.push(operation.operationId);
      problems.push(...operationProblems(path, method, operation));
    }
  }
  if (new Set(operationIds).size !== operationIds.length) problems.push('operationIds repeat');
  for (const ref of refsOf(document))
    if (!ref.startsWith('#/') || resolve(document, ref) === undefined) problems.push(`${ref} resolves to nothing`);
  const schemes = document.components?.securitySchemes ?? {};
  for (const requirement of document.security ?? [])
    for (const name of Object.keys(requirement)) if (!schemes[name]) problems.push(`scheme ${name}`);
  for (const [name, scheme] of Object.entries<Json>(schemes)) {
    if (scheme.type === 'apiKey' && !(scheme.name && ['query', 'header', 'cookie'].includes(scheme.in))) problems.push(`scheme ${name}`);
  }
  for (const [name, schema] of Object.entries<Json>(document.components?.schemas ?? {})) problems.push(...schemaProblems(schema, name));
  return problems;
}

describe('the OpenAPI document of the management API', () => {
  const document: Json = manageOpenApi('1.2.3');

  it('is committed as the records make it (npm run openapi writes it)', () => {
    expect(readFileSync(OPENAPI_DOCUMENT, 'utf8')).toBe(openApiText());
  });

  it('is a well-formed OpenAPI 3.1 document', () => {
    expect(documentProblems(document)).toEqual([]);
    expect(documentProblems(JSON.parse(readFileSync(OPENAPI_DOCUMENT, 'utf8')))).toEqual([]);
  });

  it('finds the faults it is there to find', () => {
    const broken = JSON.parse(JSON.stringify(document));
    broken.openapi = '3.0.3';
    broken.paths['/images/{key}'].get.parameters = [];
    broken.paths['/uploads'].post.responses['200'].content['application/json'].schema.required.push('nope');
    broken.paths['/images'].get.responses['400'].content['application/json'].schema.$ref = '#/components/schemas/Nope';
    expect(documentProblems(broken)).toEqual([
      'openapi is not 3.1.x',
      'POST /uploads 200 application/json: required nope is not a property',
      'GET /images/{key}: path parameters',
      '#/components/schemas/Nope resolves to nothing',
    ]);
  });

  it('has every route, with the limits the handlers refuse beyond', () => {
    expect(Object.entries<Json>(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))).toEqual(
      MANAGE_ROUTES.map((route) => `${route.method.toLowerCase()} ${route.path}`),
    );
    const upload = document.paths['/uploads'].post.requestBody.content['application/json'].schema;
    expect(upload.required).toEqual(['key', 'contentType', 'contentLength']);
    expect(upload.additionalProperties).toBe(false);
    expect(upload.properties.expiresIn).toMatchObject({ type: 'integer', minimum: 120, maximum: 21600, default: 900 });
    const keys = document.paths['/images'].delete.requestBody.content['application/json'].schema.properties.keys;
    expect(keys).toMatchObject({ minItems: 1, maxItems: 100 });
    const limit = document.paths['/images'].get.parameters.find((parameter: Json) => parameter.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    const imports = document.paths['/imports'].post.requestBody.content['application/json'].schema;
    expect(imports.oneOf).toEqual([{ required: ['items'] }, { required: ['manifestKey'] }]);
    expect(imports.properties.items.maxItems).toBe(10_000);
    expect(document.paths['/images'].get.responses['400'].description).toMatch(/invalid_query/);
  });
});
