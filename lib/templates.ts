// Card templates at synth: each named template is checked by the origin's own
// check (lambda/origin/templates.ts) against the packaged fonts and the
// deployment's own, and
// versioned. The versions go to the edge (its KeyValueStore) and the
// definitions to the origin (its environment), from the one deploy, so the
// canonical URIs change exactly when a template does.

import { NAMED_FONTS } from '../lambda/origin/image/text/fonts';
import { checkedTemplate, MAX_TEMPLATES, type TemplateDefinition } from '../lambda/origin/templates';
import { fail } from './settings';
import type { PackagedFont } from './own-fonts';

/**
 * The most bytes the templates' JSON may take in the origin's environment:
 * Lambda allows 4 KB for all of its variables, and the others take about 1.5 KB.
 */
export const MAX_TEMPLATES_JSON_BYTES = 2000;

/** The templates checked and versioned, by name; throws naming the template and the field. */
export function checkTemplates(
  templates: { [name: string]: unknown } = {},
  own: PackagedFont[] = [],
): { [name: string]: TemplateDefinition } {
  const names = Object.keys(templates);
  if (names.length > MAX_TEMPLATES) fail(`templates: at most ${MAX_TEMPLATES} templates, not ${names.length}.`);
  const fonts = [...Object.keys(NAMED_FONTS), ...own.map((font) => font.name)];
  const checked = Object.fromEntries(
    names.map((name) => {
      try {
        return [name, checkedTemplate(name, templates[name], fonts)];
      } catch (error) {
        return fail((error as Error).message);
      }
    }),
  );
  const bytes = Buffer.byteLength(JSON.stringify(checked));
  if (bytes > MAX_TEMPLATES_JSON_BYTES)
    fail(
      `templates: their definitions take ${bytes} bytes of the origin's environment, over ${MAX_TEMPLATES_JSON_BYTES}; use fewer slots or templates.`,
    );
  return checked;
}

/** Each template's version, by name: what the edge writes after `template=<name>`. */
export const templateVersions = (templates: { [name: string]: TemplateDefinition }): { [name: string]: string } =>
  Object.fromEntries(Object.entries(templates).map(([name, template]) => [name, template.version]));
