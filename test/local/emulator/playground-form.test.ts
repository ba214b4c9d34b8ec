// The playground's form against the grammar's parameter table: one control
// per parameter a viewer may give, each offering only values the grammar
// accepts, with the same bounds. A parameter added to the table without a
// control (or a bound changed on one side only) fails here.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GRAMMAR_OPTIONS, FITS, PARAMS_BY_NAME, POSITIONS, VIEWER_PARAMS, type Param } from '../../../lambda/grammar/index';

const HTML = readFileSync(new URL('../../../local/emulator/playground/index.html', import.meta.url), 'utf8');

/** The form's controls by name: their attributes, and a select's option values. */
function controls(): Map<string, { attributes: Record<string, string>; options?: string[] }> {
  const found = new Map<string, { attributes: Record<string, string>; options?: string[] }>();
  const attributesOf = (text: string) =>
    Object.fromEntries([...text.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, name = '', value = '']) => [name, value]));
  for (const [, text = ''] of HTML.matchAll(/<input\b([^>]*)>/g)) {
    const attributes = attributesOf(text);
    if (attributes.name) found.set(attributes.name, { attributes });
  }
  for (const [, text = '', body = ''] of HTML.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const attributes = attributesOf(text);
    const options = [...body.matchAll(/<option(?: value="([^"]*)")?>([^<]*)<\/option>/g)].map(([, value, label = '']) => value ?? label);
    if (attributes.name) found.set(attributes.name, { attributes, options });
  }
  return found;
}

const accepts = (param: Param, value: string) => {
  try {
    param.read(value, DEFAULT_GRAMMAR_OPTIONS);
    return true;
  } catch {
    return false;
  }
};

describe('the playground form', () => {
  const form = controls();

  it('has a control for every parameter a viewer may give, and for presets', () => {
    const names = VIEWER_PARAMS.map((param) => param.name as string);
    expect(names.filter((name) => !form.has(name))).toEqual([]);
    expect(form.has('preset')).toBe(true);
  });

  it("shows each parameter's aliases beside its name", () => {
    for (const param of VIEWER_PARAMS.filter((one) => one.aliases.length > 0)) {
      expect(HTML, param.name).toContain(`${param.name} <small>${param.aliases.join(', ')}</small>`);
    }
  });

  it('offers only values the grammar accepts, and every fit and position', () => {
    for (const [name, control] of form) {
      const param = PARAMS_BY_NAME[name];
      if (!param || !control.options) continue;
      // The empty option is the parameter left out: the default.
      expect(
        control.options.filter((value) => value !== '' && !accepts(param, value)),
        name,
      ).toEqual([]);
    }
    expect(form.get('fit')?.options?.concat('cover').sort()).toEqual([...FITS, ''].sort());
    expect(form.get('position')?.options?.concat('center').sort()).toEqual([...POSITIONS, ''].sort());
  });

  it('bounds each number field as the grammar bounds the parameter', () => {
    for (const [name, control] of form) {
      const param = PARAMS_BY_NAME[name];
      if (!param || control.attributes.type !== 'number') continue;
      const { min, max, step } = control.attributes;
      expect(min, name).toBeDefined();
      expect(accepts(param, String(min)), `${name} accepts its min ${min}`).toBe(true);
      expect(accepts(param, String(Number(min) - Number(step))), `${name} refuses below its min`).toBe(false);
      if (max === undefined) continue;
      expect(accepts(param, String(max)), `${name} accepts its max ${max}`).toBe(true);
      expect(accepts(param, String(Number(max) + Number(step))), `${name} refuses above its max`).toBe(false);
    }
  });

  it('lets a text field take auto exactly where the grammar does (width, dpr, quality)', () => {
    const takeAuto: string[] = [];
    for (const [name, control] of form) {
      const param = PARAMS_BY_NAME[name];
      if (!param || control.attributes.pattern === undefined) continue;
      const formTakes = new RegExp(`^(?:${control.attributes.pattern})$`).test('auto');
      expect(formTakes, name).toBe(accepts(param, 'auto'));
      if (formTakes) takeAuto.push(name);
    }
    expect(takeAuto.sort()).toEqual(['dpr', 'quality', 'width']);
  });
});
