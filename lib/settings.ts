// Synth-time checks of the ImageTransformer's settings. Everything a request
// would otherwise trip over (a preset with a typo, a size above maxDimension,
// an eager preset that does not exist) fails `cdk synth` here, with a message
// that names the setting, instead of failing viewers' requests after a deploy.

import { Token } from 'aws-cdk-lib';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { isObject, mustBe } from '../lambda/common/checks';
import { prefixesRefusal } from '../lambda/common/sources';
import {
  HDR_MODES,
  PARAMS_BY_NAME,
  PRESET_SPELLINGS,
  SIGNATURE_PARAMS,
  presetRefusal,
  type GrammarOptions,
  type Preset,
} from '../lambda/grammar';

/** Thrown for an ImageTransformer setting that cannot work. */
export class ImageTransformerConfigError extends Error {
  constructor(message: string) {
    super(`ImageTransformer: ${message}`);
    this.name = 'ImageTransformerConfigError';
  }
}

/** Refuses the construct's props with `message`. */
export const fail = (message: string): never => {
  throw new ImageTransformerConfigError(message);
};

/** Largest width/height sharp can write to every output format (WebP's limit). */
export const MAX_OUTPUT_DIMENSION = 16383;

/** A preset name travels as a query value: keep it to URL-safe characters. */
const PRESET_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Parameter names a preset may not contain: they are not image operations. */
const NOT_IN_PRESET = new Set<string>([...PRESET_SPELLINGS, ...SIGNATURE_PARAMS]);

/** Checks an integer setting; CDK tokens (e.g. CfnParameters) are left to CloudFormation. */
export function checkInteger(name: string, value: number | undefined, min: number, max: number): void {
  if (value === undefined || Token.isUnresolved(value)) return;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    fail(mustBe(name, `an integer from ${min} to ${max}`, value));
  }
}

/** `value`, checked as checkInteger does. */
export function checkedInteger(name: string, value: number, min: number, max: number): number {
  checkInteger(name, value, min, max);
  return value;
}

/** Sizes (breakpoints): integers within 1..maxDimension, returned ascending without duplicates. */
export function checkSizes(sizes: number[] | undefined, maxDimension: number): number[] | undefined {
  if (sizes === undefined) return undefined;
  if (!Array.isArray(sizes) || sizes.length === 0) {
    fail(mustBe('sizes', 'a list of at least one width (or left out to allow any size)', sizes));
  }
  sizes.forEach((size, index) => checkInteger(`sizes[${index}]`, size, 1, maxDimension));
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/**
 * Presets: URL-safe names, known parameter names, and values the grammar
 * accepts under these options (so a width above the largest size fails too).
 */
export function checkPresets(grammar: GrammarOptions): void {
  const presets = grammar.presets ?? {};
  for (const name of Object.keys(presets)) {
    if (!PRESET_NAME.test(name)) {
      fail(mustBe('a preset name', '1-64 letters, digits, "-" or "_" (it is sent as ?preset=<name>)', name));
    }
    const preset = presets[name] as Preset;
    if (!isObject(preset)) {
      fail(mustBe(`preset "${name}"`, "an object of parameter names to values, e.g. { width: '200', fit: 'cover' }", preset));
    }
    if (Object.keys(preset).length === 0) fail(mustBe(`preset "${name}"`, 'an object of at least one parameter', preset));
    for (const [param, value] of Object.entries(preset)) {
      const spelling = param.toLowerCase();
      if (NOT_IN_PRESET.has(spelling)) fail(`preset "${name}" may not contain "${param}".`);
      if (!Object.prototype.hasOwnProperty.call(PARAMS_BY_NAME, spelling)) {
        const known = Object.keys(PARAMS_BY_NAME)
          .filter((n) => !NOT_IN_PRESET.has(n))
          .sort()
          .join(', ');
        fail(`preset "${name}" has an unknown parameter "${param}"; known parameters: ${known}.`);
      }
      if (typeof value !== 'string') {
        fail(mustBe(`the ${param} of preset "${name}"`, 'a string', value));
      }
    }
    // The same code the edge and the origin run; a preset that parses here parses there.
    const refusal = presetRefusal(name, grammar);
    if (refusal) fail(`preset "${name}" is invalid: ${refusal}`);
  }
  if (grammar.presetsOnly && Object.keys(presets).length === 0) {
    fail('presetsOnly needs at least one preset (otherwise no transformation could ever be requested).');
  }
}

export function checkEagerPresets(eager: string[], grammar: GrammarOptions): void {
  const presets = grammar.presets ?? {};
  for (const name of eager) {
    if (!Object.prototype.hasOwnProperty.call(presets, name)) {
      const defined = Object.keys(presets).join(', ') || '(none are defined)';
      fail(`eagerPresets names "${name}", which is not a preset; defined presets: ${defined}.`);
    }
  }
  if (new Set(eager).size !== eager.length) fail(`eagerPresets lists a preset twice: ${eager.join(', ')}.`);
}

/** The whole grammar: what the edge function and the origin are configured with. */
export function checkGrammar(grammar: GrammarOptions): GrammarOptions {
  checkInteger('maxDimension', grammar.maxDimension, 1, MAX_OUTPUT_DIMENSION);
  const checked: GrammarOptions = { maxDimension: grammar.maxDimension };
  const sizes = checkSizes(grammar.sizes, grammar.maxDimension);
  if (sizes) checked.sizes = sizes;
  if (grammar.presets && Object.keys(grammar.presets).length > 0) checked.presets = grammar.presets;
  if (grammar.presetsOnly) checked.presetsOnly = true;
  if (grammar.watermarks && Object.keys(grammar.watermarks).length > 0) checked.watermarks = grammar.watermarks;
  if (grammar.templates && Object.keys(grammar.templates).length > 0) checked.templates = grammar.templates;
  if (grammar.fonts && Object.keys(grammar.fonts).length > 0) checked.fonts = grammar.fonts;
  if (grammar.hdr !== undefined && !(HDR_MODES as readonly string[]).includes(grammar.hdr))
    fail(mustBe('hdr', HDR_MODES.join(' or '), grammar.hdr));
  if (grammar.hdr) checked.hdr = grammar.hdr;
  checkPresets(checked);
  return checked;
}

/** An AWS region name such as eu-west-1 (Origin Shield). */
export function checkRegion(name: string, value: string | undefined): void {
  if (value === undefined || Token.isUnresolved(value)) return;
  if (!/^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(value)) fail(mustBe(name, 'an AWS region such as eu-west-1', value));
}

/**
 * The buckets mapped to key prefixes: prefixes that make valid, distinct keys
 * (lambda/common/sources.ts), and each bucket once and apart from the default
 * source bucket, or an object's change could not be mapped back to one URL key.
 */
export function checkSourceBuckets(
  buckets: { [prefix: string]: s3.IBucket },
  sourceBucket: s3.IBucket | undefined,
): { [prefix: string]: s3.IBucket } {
  const refusal = prefixesRefusal('sourceBuckets', Object.keys(buckets));
  if (refusal) fail(refusal);
  const seen: [string, s3.IBucket][] = sourceBucket ? [['(the sourceBucket)', sourceBucket]] : [];
  for (const [prefix, bucket] of Object.entries(buckets)) {
    const same = seen.find(
      ([, other]) => other === bucket || (!Token.isUnresolved(bucket.bucketName) && other.bucketName === bucket.bucketName),
    );
    if (same) fail(`sourceBuckets maps "${prefix}" to the bucket of ${same[0]}: each bucket serves one prefix, and the sourceBucket none.`);
    seen.push([`"${prefix}"`, bucket]);
  }
  return buckets;
}
