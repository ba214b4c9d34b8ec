// The OpenAPI 3.1 document of the management API, written from the records
// the handlers validate requests with (api-schema.ts), so that the two never
// differ: `npm run openapi` writes it to docs/manage-openapi.json, the
// package's build to dist/ (test/manage/openapi.test.ts holds both equal).

import { ERROR_BODY, MANAGE_ROUTES, type RouteSpec } from './api-schema';
import { errorCodesOf } from './errors';
import type { Field, Schema } from './schema';

type Json = Record<string, unknown>;

/** `schema` as JSON Schema (2020-12, OpenAPI 3.1's); `closed` refuses fields it does not name, as a request body does. */
function jsonSchema(schema: Schema, closed: boolean): Json {
  const described = schema.description ? { description: schema.description } : {};
  switch (schema.type) {
    case 'string':
    case 'integer': {
      const { type, nullable, unit: _unit, ...rest } = schema as Schema & { nullable?: boolean; unit?: string };
      return { ...rest, type: nullable ? [type, 'null'] : type };
    }
    case 'array': {
      const { items, ...rest } = schema;
      return { ...rest, type: 'array', items: jsonSchema(items, closed) };
    }
    case 'map':
      return { ...described, type: 'object', additionalProperties: jsonSchema(schema.values, closed) };
    case 'object': {
      const one = schema.exactlyOne ? { oneOf: schema.exactlyOne.map((name) => ({ required: [name] })) } : {};
      return { ...described, ...objectSchema(schema.fields, closed), ...one };
    }
  }
}

function objectSchema(fields: readonly Field[], closed: boolean): Json {
  const properties = Object.fromEntries(
    fields.map((field) => [field.name, { ...jsonSchema(field.schema, closed), description: field.description }]),
  );
  const required = fields.filter((field) => field.required).map((field) => field.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), ...(closed ? { additionalProperties: false } : {}) };
}

const json = (schema: Json) => ({ 'application/json': { schema } });

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The answers every route may give besides its own: API Gateway's (not signed, throttled) and the handler's failure. */
const COMMON_ANSWERS: Record<number, Json> = {
  403: {
    description:
      "API Gateway's refusal: the request is not signed (SigV4, service execute-api), or by a principal not allowed to invoke the route.",
    content: json({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }),
  },
  429: {
    description: "API Gateway's throttling: too many requests; try again later.",
    content: json({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }),
  },
  500: { description: 'internal_error: the service failed unexpectedly.', content: json(ERROR_REF) },
};

function operation(route: RouteSpec): Json {
  const parameters = [
    ...(route.pathParameter
      ? [
          {
            in: 'path',
            name: route.pathParameter.name,
            required: true,
            description: route.pathParameter.description,
            schema: jsonSchema(route.pathParameter.schema, true),
          },
        ]
      : []),
    ...(route.query ?? []).map((field) => ({
      in: 'query',
      name: field.name,
      required: field.required,
      description: field.description,
      schema: jsonSchema(field.schema, true),
    })),
  ];
  const answers = Object.fromEntries(
    Object.entries(route.answers).map(([status, answer]) => [
      status,
      { description: answer.description, content: json(objectSchema(answer.fields, false)) },
    ]),
  );
  const refusals = Object.fromEntries(
    route.refusals.map((status) => [status, { description: `A refusal: ${errorCodesOf(status).join(', ')}.`, content: json(ERROR_REF) }]),
  );
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: json(jsonSchema(route.body, true)) } } : {}),
    responses: { ...answers, ...refusals, ...COMMON_ANSWERS },
  };
}

/** The OpenAPI 3.1 document of the management API, `version` being the package's. */
export function manageOpenApi(version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of MANAGE_ROUTES) paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'edge-image-transformer management API',
      version,
      description:
        'Uploads validated on arrival, image statuses and listings, bulk deletes and imports, apart from the serving path. Every route is IAM-authorised: sign each request with SigV4, service execute-api.',
    },
    servers: [
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
        description: "The stack's ManageApiUrl output.",
        variables: { apiId: { default: 'abc123defg' }, region: { default: 'us-east-1' } },
      },
      {
        url: 'http://127.0.0.1:3000/_manage',
        description: '`npm start`: the emulator, signed with access key test, secret test, region us-east-1.',
      },
    ],
    security: [{ sigv4: [] }],
    paths,
    components: {
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'AWS Signature Version 4 (service execute-api), by a principal allowed execute-api:Invoke on the route.',
        },
      },
      schemas: { Error: objectSchema(ERROR_BODY, false) },
    },
  };
}
