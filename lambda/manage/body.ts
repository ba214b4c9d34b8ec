// Reading a request's JSON body and its fields, each refusal a ManageError
// that names the field: a body that is not JSON, not an object, a field the
// route does not know, one missing or of the wrong type.

import { isGrammarError, validateKey } from '../grammar';
import { isObject } from '../common/checks';
import { isUnservedKey, UNSERVED_PREFIXES } from '../common/staging';
import { ManageError } from './errors';
import type { Field } from './schema';

/** The body of a request as an object of no other fields than those `declared`. */
export function readBody(
  body: string | undefined,
  isBase64Encoded: boolean | undefined,
  declared: readonly Field[],
): Record<string, unknown> {
  const fields = declared.map((field) => field.name);
  const text = body === undefined ? '' : isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ManageError('malformed_json', `The body is not JSON: ${(error as Error).message}.`);
  }
  if (!isObject(parsed)) throw new ManageError('invalid_body', `The body must be a JSON object with the fields ${fields.join(', ')}.`);
  const unknown = Object.keys(parsed).find((name) => !fields.includes(name));
  if (unknown !== undefined) {
    throw new ManageError('unknown_field', `The field ${JSON.stringify(unknown)} is not one of ${fields.join(', ')}.`);
  }
  return parsed;
}

/** The value of `field` in `body`: a refusal when it is required and missing. */
export function fieldValue(body: Record<string, unknown>, field: Field): unknown {
  const value = body[field.name];
  if (value === undefined && field.required) throw new ManageError('missing_field', `The field ${JSON.stringify(field.name)} is required.`);
  return value;
}

type Read<F extends Field, T> = F extends { required: true } ? T : T | undefined;

/** A string field's value, or a refusal naming it. */
export function stringField<F extends Field>(body: Record<string, unknown>, field: F): Read<F, string> {
  const value = fieldValue(body, field);
  if (value !== undefined && typeof value !== 'string') {
    throw new ManageError('invalid_field', `The field ${JSON.stringify(field.name)} must be a string.`);
  }
  return value as Read<F, string>;
}

/** An integer field's value (its default when absent), within its schema's range, or a refusal naming it. */
export function integerField<F extends Field & { schema: { type: 'integer' } }>(body: Record<string, unknown>, field: F): Read<F, number> {
  const { name, schema } = field;
  const value = fieldValue(body, field) ?? schema.default;
  if (value === undefined) return undefined as Read<F, number>;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new ManageError('invalid_field', `The field ${JSON.stringify(name)} must be a whole number, not ${JSON.stringify(value)}.`);
  }
  const { minimum = -Infinity, maximum = Infinity } = schema;
  if (value < minimum || value > maximum) {
    const range = maximum === Infinity ? `at least ${minimum}` : `from ${minimum} to ${maximum}${schema.unit ? ` ${schema.unit}` : ''}`;
    throw new ManageError(field.rangeCode ?? 'invalid_field', `The field ${JSON.stringify(name)} must be ${range}, not ${value}.`);
  }
  return value as Read<F, number>;
}

/**
 * `key` when it is a source key: one the origin serves (the grammar's rules: no
 * empty, `.` or `..` segment, no control character, at most 1024 bytes), and
 * not under the prefixes the API keeps for itself. `what` words it in a refusal.
 */
export function sourceKey(key: string, what = 'The key'): string {
  try {
    validateKey(key);
  } catch (error) {
    if (!isGrammarError(error)) throw error;
    throw new ManageError(
      'invalid_key',
      `${what} ${JSON.stringify(key)} is not a source key: ${error.message.replace(/^Invalid source key: /, '')}`,
    );
  }
  if (isUnservedKey(key)) {
    throw new ManageError(
      'reserved_key',
      `${what} ${JSON.stringify(key)} is under ${UNSERVED_PREFIXES.join(', ')}, which hold uploads and imports, not sources.`,
    );
  }
  return key;
}
