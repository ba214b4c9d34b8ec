// A deployment's own fonts in the grammar: a parameter whose record is
// flagged `fonts` (`text-font`, and any generated from its record) takes
// their names beside its choices. Read from the deployment's options at the
// origin (validate.ts, in code the edge's bundle drops); written into the
// record's choices in the edge's stored data (lambda/edge/store.ts), so the
// edge function reads them as data and holds no code for them.

import type { ValueRule } from './validate';

export interface FontGrammarOptions {
  /** The deployment's own fonts by the name a request gives (what each is, the grammar does not read). */
  fonts?: { readonly [name: string]: unknown };
}

// In the edge's language subset (ES5 and a few features, lib/edge-function.ts): no array spread or destructuring.

/** `rule` with the deployment's font names among its choices when it is flagged to take them. */
export const withFontChoices = <Rule extends ValueRule>(rule: Rule, options: FontGrammarOptions): Rule =>
  rule.fonts && options.fonts ? { ...rule, choices: (rule.choices || []).concat(Object.keys(options.fonts)) } : rule;

/** Every record of `params` as the edge stores it: the flagged ones with the deployment's names among their choices, and no flag. */
export function storedRecords<Rule extends ValueRule>(
  params: { [name: string]: Rule },
  options: FontGrammarOptions,
): { [name: string]: Rule } {
  const stored: { [name: string]: Rule } = {};
  Object.keys(params).forEach((name) => {
    const record = withFontChoices(params[name] as Rule, options);
    stored[name] = record;
    if (record.fonts !== undefined) {
      stored[name] = { ...record };
      delete stored[name].fonts;
    }
  });
  return stored;
}
