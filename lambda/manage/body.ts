// Reading a request's JSON body and its fields, each refusal a ManageError
// that names the field: a body that is not JSON, not an object, a field the
// route does not know, one missing or of the wrong type.

import { isGrammarError, validateKey } from '../grammar';
import { isObject } from '../common/checks';
import { isUnservedKey, UNSERVED_PREFIXES } from '../common/staging';
import { ManageError } from './errors';

/** The body of a request as an object of no other fields than `fields`. */
export function readBody(
  body: string | undefined,
  isBase64Encoded: boolean | undefined,
  fields: readonly string[],
): Record<string, unknown> {
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

/** The field `name` of `body`, which must be present. */
export function required(body: Record<string, unknown>, name: string): unknown {
  if (body[name] === undefined) throw new ManageError('missing_field', `The field ${JSON.stringify(name)} is required.`);
  return body[name];
}

/** `value` as a string, or a refusal naming `name`. */
export function stringField(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new ManageError('invalid_field', `The field ${JSON.stringify(name)} must be a string.`);
  return value;
}

/** `value` as a whole number, or a refusal naming `name`. */
export function integerField(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new ManageError('invalid_field', `The field ${JSON.stringify(name)} must be a whole number, not ${JSON.stringify(value)}.`);
  }
  return value;
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
