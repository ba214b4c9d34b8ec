// The deployment `npm start` runs: the settings a deploy takes (the context of
// cdk.json and `-c key=value`, as `cdk` reads them), made into the
// construct's props by bin/app.ts's own code (lib/context.ts), resolved and
// checked by the construct's (lib/resolved-settings.ts), and planned once
// (lib/plan.ts). What the plan holds is what a deployment with these settings
// would run; only the buckets and the distribution are the emulator's own.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { isObject } from '../../lambda/common/checks';
import { appSettingsFromContext, CONTEXT_KEYS, propsFromContext, type ContextKey } from '../../lib/context';
import type { ImageTransformerProps } from '../../lib/props';
import { deploymentPlan, type DeploymentPlan } from '../../lib/plan';
import { resolveSettings, type ResolvedSettings } from '../../lib/resolved-settings';
import { PROJECT_ROOT } from '../../lib/project-root';
import { UsageError } from '../harness/command-line';

export interface LocalDeployment {
  settings: ResolvedSettings;
  plan: DeploymentPlan;
}

/** The context `cdk` reads before the command line's: cdk.json's `context`, then cdk.context.json's. */
export function projectContext(root = PROJECT_ROOT): Record<string, unknown> {
  const read = (file: string, pick: (json: Record<string, unknown>) => unknown) => {
    const path = join(root, file);
    if (!existsSync(path)) return {};
    const value = pick(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
    return isObject(value) ? value : {};
  };
  return { ...read('cdk.json', (json) => json.context), ...read('cdk.context.json', (json) => json) };
}

/** `-c key=value` options (`--context` too), as `cdk` takes them: values are strings, the last of a key wins. */
export function commandLineContext(values: string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (const value of values) {
    const split = value.indexOf('=');
    if (split < 1) throw new UsageError(`-c must be <key>=<value>, e.g. sizes=320,640, not "${value}"`);
    const key = value.slice(0, split);
    if (!(key in CONTEXT_KEYS))
      throw new UsageError(`-c ${key}: no such setting; the settings are ${Object.keys(CONTEXT_KEYS).join(', ')}`);
    context[key] = value.slice(split + 1);
  }
  return context;
}

/** `given` without its undefined values, so that spreading it keeps what it leaves out. */
function defined<T extends object>(given: T): Partial<T> {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/**
 * The deployment of `context` (a deploy's settings), over `local` (what the
 * emulator sets itself: its watermark, presets, signing); a setting the
 * context gives wins. Imports the context names (a bucket, a certificate) are
 * made in a stack of their own and never reached.
 */
export function localDeployment(context: Record<string, unknown>, local: ImageTransformerProps = {}): LocalDeployment {
  const app = new App({ context });
  const get = (key: ContextKey): unknown => app.node.tryGetContext(key);
  const stack = new Stack(app, appSettingsFromContext(get).stackName);
  const settings = resolveSettings(stack, { ...local, ...defined(propsFromContext(stack, get)) });
  return { settings, plan: deploymentPlan(settings) };
}
