// The playground's form as the emulator serves it, against the grammar's
// parameter table: one control per parameter a viewer may give, in its group,
// each offering only values the grammar accepts, with the same bounds (the
// deployment's maxDimension where the rule has no upper bound). A parameter
// the form leaves out, or a bound the controls say otherwise, fails here; the
// Cards group's (template, fills) are the page's Cards section's instead.

import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_GRAMMAR_OPTIONS,
  FITS,
  FORM_PLACES,
  PARAMS_BY_NAME,
  POSITIONS,
  VIEWER_PARAMS,
  type GrammarOptions,
  type Param,
} from '../../../lambda/grammar/index';
import { playgroundFile } from '../../../local/emulator/server';

type Control = { attributes: Record<string, string>; options?: string[]; group?: string };

/** index.html as the emulator serves it to a deployment of `grammar`. */
async function servedPage(grammar: GrammarOptions): Promise<string> {
  const file = await playgroundFile('index.html', '', grammar);
  expect(file?.headers['content-type']).toMatch(/^text\/html/);
  return String(file?.body);
}

const attributesOf = (text: string) =>
  Object.fromEntries([...text.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, name = '', value = '']) => [name, value]));

/** The legend of the fieldset each offset of `html` is in. */
function groupAt(html: string): (offset: number) => string | undefined {
  const fieldsets = [...html.matchAll(/<fieldset>\s*<legend>([^<]*)<\/legend>([\s\S]*?)<\/fieldset>/g)].map((match) => ({
    legend: match[1],
    start: match.index,
    end: match.index + match[0].length,
  }));
  return (offset) => fieldsets.find(({ start, end }) => offset >= start && offset < end)?.legend;
}

/** The form's controls by name: their attributes, a select's option values, and the group they are in; a name given twice is listed twice. */
function controls(html: string): { found: Map<string, Control>; names: string[] } {
  const found = new Map<string, Control>();
  const names: string[] = [];
  const inGroup = groupAt(html);
  for (const match of html.matchAll(/<input\b([^>]*)>/g)) {
    const attributes = attributesOf(match[1] ?? '');
    if (!attributes.name) continue;
    found.set(attributes.name, { attributes, group: inGroup(match.index) });
    names.push(attributes.name);
  }
  for (const match of html.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const attributes = attributesOf(match[1] ?? '');
    const options = [...(match[2] ?? '').matchAll(/<option(?: value="([^"]*)")?>([^<]*)<\/option>/g)].map(
      ([, value, label = '']) => value ?? label,
    );
    if (!attributes.name) continue;
    found.set(attributes.name, { attributes, options, group: inGroup(match.index) });
    names.push(attributes.name);
  }
  return { found, names };
}

const accepts = (param: Param, value: string, grammar: GrammarOptions = DEFAULT_GRAMMAR_OPTIONS) => {
  try {
    param.read(value, grammar);
    return true;
  } catch {
    return false;
  }
};

const inCards = (name: string) => FORM_PLACES[name as keyof typeof FORM_PLACES].group === 'Cards';
/** The parameters the form has a control for: all a viewer may give but the Cards section's. */
const viewerNames = () => VIEWER_PARAMS.map((param) => param.name as string).filter((name) => !inCards(name));

describe('the playground form, as the emulator serves it', () => {
  let html: string;
  let form: Map<string, Control>;
  let names: string[];
  beforeAll(async () => {
    html = await servedPage(DEFAULT_GRAMMAR_OPTIONS);
    ({ found: form, names } = controls(html));
  });

  it('has one control for every parameter a viewer may give, and one for presets', () => {
    expect(viewerNames().filter((name) => !form.has(name))).toEqual([]);
    expect(form.has('preset')).toBe(true);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });

  it("leaves a card's template and fills to the Cards section, which sets them from a template's slots", () => {
    const cards = VIEWER_PARAMS.map((param) => param.name as string).filter(inCards);
    expect(cards.sort()).toEqual(['fills', 'template']);
    expect(cards.filter((name) => form.has(name))).toEqual([]);
    expect(html).toMatch(/<section[^>]* id="cards"[\s\S]*<select id="card-template"/);
  });

  it('folds the numbered overlay slots, thirty controls most requests leave alone, under their group', () => {
    const folded = html.match(/<details class="folded"><summary>Overlays 2–4<\/summary>([\s\S]*?)<\/details>/);
    expect(folded).not.toBeNull();
    for (const name of ['watermark2', 'text2', 'text3-size', 'text4-width']) expect(folded![1], name).toContain(`name="${name}"`);
    expect(folded![1]).not.toContain('name="text-size"');
  });

  it("puts each parameter's control in its group, and shows its aliases beside its name", () => {
    for (const name of viewerNames()) {
      expect(form.get(name)?.group, name).toBe(FORM_PLACES[name as keyof typeof FORM_PLACES].group);
    }
    for (const param of VIEWER_PARAMS.filter((one) => one.aliases.length > 0)) {
      expect(html, param.name).toContain(`${param.name} <small>${param.aliases.join(', ')}</small>`);
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

  it("offers a deployment's own fonts beside the packaged ones, each one its grammar accepts", async () => {
    const grammar = { ...DEFAULT_GRAMMAR_OPTIONS, fonts: { brand: {}, 'brand-bold': {} } };
    const options = controls(await servedPage(grammar)).found.get('text-font')?.options;
    expect(options).toEqual(['', 'sans-bold', 'brand', 'brand-bold']);
    expect(options?.filter((value) => value !== '' && !accepts(PARAMS_BY_NAME['text-font']!, value, grammar))).toEqual([]);
    expect(form.get('text-font')?.options).toEqual(['', 'sans-bold']);
  });

  it("bounds each number field as the grammar bounds the parameter, steps included, a side by the deployment's maxDimension", async () => {
    for (const grammar of [DEFAULT_GRAMMAR_OPTIONS, { maxDimension: 4000 }]) {
      const { found } = controls(await servedPage(grammar));
      const numbers = [...found].filter(([name, control]) => PARAMS_BY_NAME[name] && control.attributes.type === 'number');
      expect(numbers.map(([name]) => name)).toContain('height');
      for (const [name, { attributes }] of numbers) {
        const param = PARAMS_BY_NAME[name]!;
        const [min, max, step] = [attributes.min, attributes.max, attributes.step].map(Number) as [number, number, number];
        // A step above the least is a value the grammar reads (no finer than its decimals).
        const written = (value: number) => String(Number(value.toFixed(2)));
        const above = written(min + step);
        expect(
          [min, max, above].map((value) => accepts(param, String(value), grammar)),
          `${name} accepts ${min}, ${max}, ${above}`,
        ).toEqual([true, true, true]);
        expect(accepts(param, written(min - step), grammar), `${name} refuses below its min`).toBe(false);
        expect(accepts(param, written(max + step), grammar), `${name} refuses above its max`).toBe(false);
      }
      expect(found.get('height')?.attributes.max).toBe(String(grammar.maxDimension));
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

  it("shows in a text field's placeholder an example the grammar accepts (crop, border, fp)", () => {
    const examples = [...form].filter(
      ([name, { attributes }]) => PARAMS_BY_NAME[name] && attributes.type === 'text' && /^[\d.,a-f]+$/.test(attributes.placeholder ?? ''),
    );
    expect(examples.map(([name]) => name).sort()).toEqual(['border', 'crop', 'fp']);
    for (const [name, { attributes }] of examples) expect(accepts(PARAMS_BY_NAME[name]!, attributes.placeholder!), name).toBe(true);
  });
});
