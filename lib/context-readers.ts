// How a CDK context value becomes a prop: from a string on the command line
// (`cdk deploy -c sizes=320,640`) or a JSON value in cdk.json /
// cdk.context.json, both accepted. Unset (absent, null or ""): undefined, so
// the prop's default applies. A value that cannot be read is an error that
// names the key, never silently ignored.

import { Duration } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import { isObject, mustBe } from '../lambda/common/checks';
import { ImageTransformerConfigError } from './settings';

/** Reads the context value of a key. */
export type Lookup<Key extends string = string> = (key: Key) => unknown;

/** Reads `key` from the context as a prop's value, or undefined when it is unset. */
export type ContextReader<Value> = <Key extends string>(get: Lookup<Key>, key: Key) => Value | undefined;

export const bad = (key: string, expected: string, value: unknown): never => {
  throw new ImageTransformerConfigError(mustBe(`context ${key}`, expected, value));
};

const unset = (value: unknown) => value === undefined || value === null || value === '';

export const text: ContextReader<string> = (get, key) => {
  const value = get(key);
  if (unset(value)) return undefined;
  if (typeof value !== 'string') bad(key, 'a string', value);
  return (value as string).trim();
};

export const flag: ContextReader<boolean> = (get, key) => {
  const value = get(key);
  if (unset(value)) return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return bad(key, 'true or false', value);
};

export const integer: ContextReader<number> = (get, key) => {
  const value = get(key);
  if (unset(value)) return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number)) bad(key, 'a whole number', value);
  return number;
};

/** A whole number, or `false` for "off" (false, "false" or "none"). */
export const integerOrOff: ContextReader<number | false> = (get, key) => {
  const value = get(key);
  if (value === false || (typeof value === 'string' && /^\s*(false|none)\s*$/i.test(value))) return false;
  return integer(get, key);
};

/** A whole number of seconds, as a Duration. */
export const seconds: ContextReader<Duration> = (get, key) => {
  const value = integer(get, key);
  return value === undefined ? undefined : Duration.seconds(value);
};

/** A whole number of days, as a Duration. */
export const days: ContextReader<Duration> = (get, key) => {
  const value = integer(get, key);
  return value === undefined ? undefined : Duration.days(value);
};

/** One of `choices`, spelled as it is there. */
export function oneOf<Choice extends string>(choices: readonly Choice[]): ContextReader<Choice> {
  return (get, key) => {
    const value = text(get, key);
    if (value === undefined) return undefined;
    return (choices as readonly string[]).includes(value) ? (value as Choice) : bad(key, choices.join(' or '), value);
  };
}

export const list: ContextReader<string[]> = (get, key) => {
  const value = get(key);
  if (unset(value)) return undefined;
  const items = Array.isArray(value)
    ? value.map(String)
    : typeof value === 'string'
      ? value.split(',')
      : bad(key, 'a comma-separated list', value);
  return items.map((item) => item.trim()).filter((item) => item !== '');
};

export const integers: ContextReader<number[]> = (get, key) => {
  const items = list(get, key);
  if (!items) return undefined;
  return items.map((item) => (/^\d+$/.test(item) ? Number(item) : bad(key, 'comma-separated whole numbers', get(key))));
};

/** A JSON object given as text (`-c key='{...}'`) or as an object (cdk.json); `example` words what it holds. */
export function jsonObject<Key extends string>(get: Lookup<Key>, key: Key, example: string): Record<string, unknown> | undefined {
  const raw = get(key);
  if (unset(raw)) return undefined;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      bad(key, `JSON (${(error as Error).message})`, raw);
    }
  }
  return isObject(value) ? value : bad(key, `a JSON object of ${example}`, raw);
}

/** CloudFront's price class: 100, 200 or All (PriceClass_100 and the like too). */
export const priceClass: ContextReader<cloudfront.PriceClass> = (get, key) => {
  const value = text(get, key);
  if (value === undefined) return undefined;
  const classes: Record<string, cloudfront.PriceClass> = {
    '100': cloudfront.PriceClass.PRICE_CLASS_100,
    '200': cloudfront.PriceClass.PRICE_CLASS_200,
    all: cloudfront.PriceClass.PRICE_CLASS_ALL,
  };
  return classes[value.toLowerCase().replace(/^priceclass_?/, '')] ?? bad(key, '100, 200 or All', value);
};

/** The names `-c deploymentConfig=` takes: aws-cdk-lib's predefined Lambda deployment configurations. */
const DEPLOYMENT_CONFIGS: Record<string, codedeploy.ILambdaDeploymentConfig> = {
  ALL_AT_ONCE: codedeploy.LambdaDeploymentConfig.ALL_AT_ONCE,
  CANARY_10PERCENT_5MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  CANARY_10PERCENT_10MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
  CANARY_10PERCENT_15MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_15MINUTES,
  CANARY_10PERCENT_30MINUTES: codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
  LINEAR_10PERCENT_EVERY_1MINUTE: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  LINEAR_10PERCENT_EVERY_2MINUTES: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_2MINUTES,
  LINEAR_10PERCENT_EVERY_3MINUTES: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_3MINUTES,
  LINEAR_10PERCENT_EVERY_10MINUTES: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
};

/** One of aws-cdk-lib's predefined Lambda deployment configurations, by name (any case). */
export const deploymentConfig: ContextReader<codedeploy.ILambdaDeploymentConfig> = (get, key) => {
  const value = text(get, key);
  if (value === undefined) return undefined;
  return DEPLOYMENT_CONFIGS[value.toUpperCase()] ?? bad(key, `one of ${Object.keys(DEPLOYMENT_CONFIGS).join(', ')}`, value);
};
