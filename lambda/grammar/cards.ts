// The grammar's types of card templates (docs/templates.md): the two ops a
// card's URL adds, and the option that versions a template at the edge;
// params.ts holds their records (data the edge's store carries, where they
// stand in the canonical order) and their places in the playground's form.

import type { FontGrammarOptions } from './fonts';

/** The ops of a card. */
export interface CardOps {
  /**
   * A card template the deployment names (lambda/origin/templates.ts): `<name>`
   * as a viewer asks, `<name>.<version>` in a canonical URI, versioned by the
   * edge like a watermark. The URL's key fills its first image slot.
   */
  template?: string;
  /**
   * The template's other slots: a JSON object of slot names to texts or source
   * keys, its UTF-8 bytes in hex; read at the origin (a case-insensitive
   * encoding, so the edge's `named` reader lower-cases it without harm).
   */
  fills?: string;
}

/** The deployment's card templates; and its own fonts, which their text slots and `text-font` may name. */
export interface CardGrammarOptions extends FontGrammarOptions {
  /** The deployment's card templates, name to version: the edge writes `<name>.<version>` for `template=<name>`. */
  templates?: { [name: string]: string };
}
