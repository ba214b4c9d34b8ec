// The playground's parameter controls, made from the grammar's table: one for
// each parameter a viewer may give, in its group and order of FORM_PLACES
// (lambda/grammar/params.ts), made from its rule: a choice is a select of its
// choices, a number a field with its bounds and its kind's step, a boolean a
// checkbox, the rest a text field of what its kind reads. A new parameter
// gets its control with no edit here; the emulator serves index.html with
// the controls in place of CONTROLS_MARKER. The Cards group's parameters
// (template, fills) get none: the page's Cards section (playground/cards.js)
// sets them from a template's slots.

import {
  DATA,
  FORM_GROUPS,
  say,
  type Word,
  FORM_PLACES,
  type GrammarOptions,
  type ParamRecord,
  type ViewerParams,
  withFontChoices,
} from '../../lambda/grammar';

/** Where index.html has the parameter controls. */
const CONTROLS_MARKER = '<!-- parameter controls -->';

/** The group whose parameters the page's Cards section sets, a field per slot of the template picked. */
const CARDS_GROUP = 'Cards';

/** Groups shown folded, opened on a click: many controls that most requests leave alone. */
const FOLDED_GROUPS: string[] = ['Overlays 2–4'];

type ParamName = keyof ViewerParams;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** ` name="value"` for each attribute with a value, escaped. */
const attributes = (values: { [name: string]: string | number | undefined }) =>
  Object.entries(values)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}="${escapeHtml(String(value))}"`)
    .join('');

/** The smallest difference between two values of a number kind: the decimals its pattern allows (validate.ts). */
const NUMBER_STEPS: { [kind: string]: number } = { integer: 1, number: 0.1, factor: 0.01 };

/** A text field's example (and a colour's pattern), for the kinds whose values have a shape. */
const TEXT_SHAPES: { [kind: string]: { placeholder: string; pattern?: string } } = {
  point: { placeholder: '0.5,0.5' },
  region: { placeholder: '0.25,0,0.5,1' },
  border: { placeholder: '8,000000' },
  colour: { placeholder: 'none: rgb, rrggbb or rrggbbaa', pattern: '#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})' },
};

/** What a value of a kind is made of, beside the name of a parameter whose place says nothing. */
const KIND_NOTES: { [kind: string]: string } = {
  point: 'x,y fractions',
  region: 'x,y,w,h fractions',
  border: 'width,colour',
  factor: 'factor',
};

/** What a value may be, in the words of the grammar's refusals (validate.ts), for the kinds that have words. */
const allowed = (rule: ParamRecord, grammar: GrammarOptions) =>
  rule.kind in DATA.words
    ? say(rule.kind as Word, rule.low, rule.high ?? grammar.maxDimension) + (rule.auto ? ', or auto' : '')
    : undefined;

/** A side of the image: bounded by the deployment's maxDimension, snapped to its sizes, the source's when absent. */
const isSide = (rule: ParamRecord) => rule.kind === 'integer' && rule.high === undefined;

/** The parameter's name, its aliases, and a word on its value (its place's, or its kind's). */
function label(name: ParamName, rule: ParamRecord): string {
  const aliases = rule.aliases?.length ? ` <small>${escapeHtml(rule.aliases.join(', '))}</small>` : '';
  const note = FORM_PLACES[name].note ?? KIND_NOTES[rule.kind];
  return `${name}${aliases}${note ? ` <small>${escapeHtml(note)}</small>` : ''}`;
}

/**
 * A choice's select: its empty option is the value the choice's absence means, its `none` or else its
 * first choice (fit's cover, format's auto); a lone choice (segment's foreground) is something asked for, not a default.
 */
function choiceSelect(name: ParamName, rule: ParamRecord): string {
  const choices = rule.choices ?? [];
  const absent = rule.none ?? (choices.length > 1 ? choices[0] : undefined);
  // A synonym is the same choice spelled otherwise (pad, jpg).
  const offered = choices.filter((choice) => choice !== absent && !(String(choice) in DATA.synonyms));
  const options = offered.map((choice) => `<option>${escapeHtml(String(choice))}</option>`).join('');
  return `<select${attributes({ name })}><option value="">${escapeHtml(String(absent))}</option>${options}</select>`;
}

/** A number field; one that also takes `auto` is a text field of the kind's pattern, offering `auto` (a side: the sizes). */
function numberField(name: ParamName, rule: ParamRecord, grammar: GrammarOptions): string {
  const absent = rule.none !== undefined ? String(rule.none) : isSide(rule) ? 'source' : 'none';
  const common = { name, inputmode: rule.kind === 'integer' ? 'numeric' : 'decimal', title: allowed(rule, grammar) };
  if (!rule.auto) {
    const bounds = { min: rule.low, max: rule.high ?? grammar.maxDimension, step: NUMBER_STEPS[rule.kind] };
    return `<input${attributes({ type: 'number', ...common, ...bounds, placeholder: absent })}>`;
  }
  const pattern = `${DATA.patterns[rule.kind as 'integer'].replace(/^\^|\$$/g, '')}|auto`;
  const list = isSide(rule) ? 'sizes' : `${name}-values`;
  const field = `<input${attributes({ type: 'text', ...common, pattern, placeholder: `${absent}|auto`, list, spellcheck: 'false' })}>`;
  return isSide(rule) ? field : `${field}<datalist id="${list}"><option value="auto"></option></datalist>`;
}

/** A text field of the kind's shape; a colour's has a picker beside it (the page's form.js keeps them in step). */
function textField(name: ParamName, rule: ParamRecord, grammar: GrammarOptions): string {
  const shape = TEXT_SHAPES[rule.kind];
  const field = `<input${attributes({
    type: 'text',
    name,
    title: allowed(rule, grammar),
    placeholder: shape?.placeholder ?? 'none',
    pattern: shape?.pattern,
    spellcheck: 'false',
  })}>`;
  if (rule.kind !== 'colour') return field;
  const picker = `<input${attributes({ type: 'color', 'data-for': name, value: '#ffffff', 'aria-label': `${name} colour picker` })}>`;
  return `<div class="colour">${picker}${field}</div>`;
}

/** The element that takes a value of the rule. */
function valueControl(name: ParamName, rule: ParamRecord, grammar: GrammarOptions): string {
  if (rule.kind === 'choice') return choiceSelect(name, rule);
  // The deployment's names, which the page's form.js puts in from its configuration.
  if (rule.kind === 'named') return `<select${attributes({ name, id: name })}><option value="">none</option></select>`;
  if (NUMBER_STEPS[rule.kind] !== undefined) return numberField(name, rule, grammar);
  return textField(name, rule, grammar);
}

/** The control of one parameter, in its label. */
function control(name: ParamName, rule: ParamRecord, grammar: GrammarOptions): string {
  if (rule.kind === 'boolean') return `<label class="check"><input type="checkbox"${attributes({ name })}> ${label(name, rule)}</label>`;
  const wide = rule.kind in TEXT_SHAPES ? ' wide' : '';
  // A label names one control: a colour's two are a group.
  const tag = rule.kind === 'colour' ? 'div' : 'label';
  return `<${tag} class="field${wide}"><span>${label(name, rule)}</span>${valueControl(name, rule, grammar)}</${tag}>`;
}

/** Every parameter's control but the Cards group's, a fieldset per group: its fields, then its checkboxes. */
function parameterControls(grammar: GrammarOptions): string {
  const names = Object.keys(FORM_PLACES) as ParamName[];
  const groups = FORM_GROUPS.filter((group) => group !== CARDS_GROUP);
  return groups
    .map((group) => {
      const rules = names
        .filter((name) => FORM_PLACES[name].group === group)
        // The deployment's own fonts among text-font's choices, as its edge has them.
        .map((name) => ({ name, rule: withFontChoices(DATA.params[name] as ParamRecord, grammar) }));
      const fields = rules.filter(({ rule }) => rule.kind !== 'boolean').map(({ name, rule }) => control(name, rule, grammar));
      const checks = rules.filter(({ rule }) => rule.kind === 'boolean').map(({ name, rule }) => control(name, rule, grammar));
      const fieldset = [
        `<fieldset>`,
        `  <legend>${group}</legend>`,
        `  <div class="fields">\n    ${fields.join('\n    ')}\n  </div>`,
        ...(checks.length ? [`  <div class="checks">\n    ${checks.join('\n    ')}\n  </div>`] : []),
        `</fieldset>`,
      ].join('\n');
      return FOLDED_GROUPS.includes(group) ? `<details class="folded"><summary>${group}</summary>\n${fieldset}\n</details>` : fieldset;
    })
    .join('\n');
}

/** index.html with the parameter controls for a deployment of `grammar` in place of its marker. */
export function playgroundPage(template: string, grammar: GrammarOptions): string {
  if (!template.includes(CONTROLS_MARKER)) throw new Error(`The playground's index.html has no ${CONTROLS_MARKER}.`);
  return template.replace(CONTROLS_MARKER, () => parameterControls(grammar));
}
