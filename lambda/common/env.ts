// Readers of a Lambda's environment, as the construct writes it. Each Lambda
// makes its readers with its own error, so all its messages start the same
// way and a log search finds them; the rest is in the shape of every
// configuration check (checks.ts). Values are trimmed; empty means unset.

import { isObject, mustBe } from './checks';

export type Env = Record<string, string | undefined>;

export function envReaders(configError: (message: string) => Error) {
  function required(env: Env, name: string): string {
    const value = env[name]?.trim();
    if (!value) throw configError(`the environment variable ${name} is required.`);
    return value;
  }

  function positiveInteger(env: Env, name: string, fallback: number): number {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
      throw configError(mustBe(name, 'a positive integer', raw));
    }
    return value;
  }

  /** A comma-separated list of positive integers, ascending. */
  function positiveIntegers(env: Env, name: string): number[] | undefined {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    return raw
      .split(',')
      .map((item) => positiveInteger({ [name]: item }, name, 0))
      .sort((a, b) => a - b);
  }

  function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      throw configError(mustBe(name, `one of ${allowed.join(', ')}`, raw));
    }
    return raw as T;
  }

  function flag(env: Env, name: string, fallback: boolean): boolean {
    const raw = env[name]?.trim().toLowerCase();
    if (!raw) return fallback;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    throw configError(mustBe(name, 'true or false', env[name]));
  }

  /** A JSON object; its fields are the reader's to check. */
  function jsonObject(env: Env, name: string): Record<string, unknown> {
    const raw = env[name]?.trim();
    if (!raw) return {};
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
    if (!isObject(value)) throw configError(mustBe(name, 'a JSON object', raw.slice(0, 40)));
    return value;
  }

  return { required, positiveInteger, positiveIntegers, oneOf, flag, jsonObject };
}
