// The language the management API's requests and answers are declared in
// (routes.ts): a record per field (its name, type, limits, whether it is
// required, what it means), as the URL grammar declares its parameters. The
// handlers read requests with these records (body.ts), the client's types
// are inferred from them (Infer), and openapi.ts writes them as JSON Schema.

import type { ManageErrorCode } from './errors';

export type Schema =
  | { type: 'string'; description?: string; enum?: readonly string[]; format?: string; nullable?: boolean }
  | {
      type: 'integer';
      description?: string;
      minimum?: number;
      maximum?: number;
      default?: number;
      /** The unit a refusal of a value out of range names (`seconds`). */
      unit?: string;
      nullable?: boolean;
    }
  | { type: 'array'; description?: string; items: Schema; minItems?: number; maxItems?: number }
  | {
      type: 'object';
      description?: string;
      fields: readonly Field[];
      /** Groups of fields of which exactly one must be given (a body of one kind or the other). */
      exactlyOne?: readonly string[];
    }
  /** An object of any names, each value of `values`' schema (a presigned POST's form fields). */
  | { type: 'map'; description?: string; values: Schema };

export interface Field {
  name: string;
  description: string;
  required: boolean;
  schema: Schema;
  /** The code of a refusal of a value out of the schema's range; `invalid_field` unless given. */
  rangeCode?: ManageErrorCode;
}

type Nullable<S, T> = S extends { nullable: true } ? T | null : T;

/** The TypeScript type of a value of schema `S` (declared `as const`). */
export type Infer<S> = S extends { type: 'string'; enum: readonly (infer E)[] }
  ? Nullable<S, E>
  : S extends { type: 'string' }
    ? Nullable<S, string>
    : S extends { type: 'integer' }
      ? Nullable<S, number>
      : S extends { type: 'array'; items: infer I }
        ? Infer<I>[]
        : S extends { type: 'object'; fields: infer F extends readonly Field[] }
          ? InferFields<F>
          : S extends { type: 'map'; values: infer V }
            ? Record<string, Infer<V>>
            : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The object type of a list of fields: the required ones required, the rest optional. */
export type InferFields<F extends readonly Field[]> = Simplify<
  { [K in F[number] as K extends { required: true } ? K['name'] : never]: Infer<K['schema']> } & {
    [K in F[number] as K extends { required: true } ? never : K['name']]?: Infer<K['schema']>;
  }
>;
