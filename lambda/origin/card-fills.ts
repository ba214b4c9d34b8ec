// A card's request read against its template: the template its canonical URI
// names (at the version the edge wrote), and its fills, checked slot by slot.
// Every refusal is a precise 4xx before any source is read; an origin that
// does not have the version the URI names says so, as for a watermark.

import { invalidParameter, isGrammarError, oneOf, opsSegment, validateKey, type CanonicalRequest, type Ops } from '../grammar';
import { deployedVersion, HttpError } from './errors';
import { keySlot, type TemplateDefinition } from './templates';

/** A card's fills as drawn: each text slot's text, each image slot's source key (the URL's key among them). */
export interface CardFills {
  texts: Record<string, string>;
  images: Record<string, string>;
}

/** The ops a card may carry beside its template and fills: its size and everything else are the template's. */
const CARD_OPS: (keyof Ops)[] = ['template', 'fills', 'quality', 'hdr', 'format', 'accept'];

/** S3's longest key, which a card's variant key must fit in (a web source's with its leading `/`). */
export const MAX_CARD_KEY_BYTES = 1023;

const invalidFill = (message: string) => new HttpError('invalid_fill', message);

/** The template `<name>.<version>` names; a 503 while the edge and this function disagree on the version (a deploy in progress). */
export const templateOf = (versioned: string, templates: Record<string, TemplateDefinition>): TemplateDefinition =>
  deployedVersion(versioned, templates, 'template_unavailable', 'template');

/** The JSON object `fills` (hex of its UTF-8 bytes) holds, its values strings. */
function decodedFills(fills: string | undefined): Record<string, string> {
  if (fills === undefined) return {};
  const wrong = () =>
    invalidFill('fills must be the hex of a JSON object of slot names to strings (UTF-8), e.g. 7b227469746c65223a224869227d.');
  if (!/^(?:[0-9a-f]{2})+$/.test(fills)) throw wrong();
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(fills, 'hex')));
  } catch {
    throw wrong();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string'))
    throw wrong();
  return value as Record<string, string>;
}

/** A text fill within its slot's length, without control characters but line breaks. */
function checkedText(slot: string, text: string, maxLength: number): string {
  const length = Array.from(text).length;
  if (length > maxLength) throw invalidFill(`The slot "${slot}" takes at most ${maxLength} characters, not ${length}.`);
  if (/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text))
    throw invalidFill(`The slot "${slot}" takes text without control characters.`);
  return text;
}

/** An image fill: a valid source key. */
function checkedKey(slot: string, key: string): string {
  try {
    return validateKey(key);
  } catch (error) {
    if (isGrammarError(error)) throw invalidFill(`The slot "${slot}": ${error.message}`);
    throw error;
  }
}

/** The fills of a card request, checked against its template: unknown, missing, too long, and the URL key's slot. */
export function cardFills(request: CanonicalRequest, template: TemplateDefinition, name: string): CardFills {
  const given = decodedFills(request.ops.fills);
  const first = keySlot(template);
  const fills: CardFills = { texts: {}, images: first ? { [first]: request.key } : {} };
  const slotNames = Object.keys(template.slots);
  for (const [slot, value] of Object.entries(given)) {
    const definition = Object.hasOwn(template.slots, slot) ? template.slots[slot] : undefined;
    if (!definition) throw invalidFill(`The template "${name}" has no slot "${slot.slice(0, 40)}"; its slots: ${slotNames.join(', ')}.`);
    if (slot === first) throw invalidFill(`The slot "${slot}" is filled by the URL's key, not by fills.`);
    if (definition.kind === 'text') fills.texts[slot] = checkedText(slot, value, definition.maxLength);
    else fills.images[slot] = checkedKey(slot, value);
  }
  const missing = slotNames.filter(
    (slot) =>
      !(slot in fills.texts) && !(slot in fills.images) && (template.slots[slot]!.kind === 'image' || template.slots[slot]!.required),
  );
  if (missing.length)
    throw invalidFill(`The template "${name}" needs the slot${missing.length > 1 ? 's' : ''} ${missing.join(', ')} filled.`);
  if (!first && request.key !== template.source)
    throw invalidFill(`The template "${name}" has no image slot: its URL's key is its source, "${template.source}".`);
  return fills;
}

/**
 * The card a request asks for, its ops and fills checked: only the ops a
 * card takes, a key that fits S3, a template at the URI's version.
 */
export function checkCard(request: CanonicalRequest, templates: Record<string, TemplateDefinition>): CardFills | undefined {
  const { ops } = request;
  if (ops.template === undefined) {
    if (ops.fills !== undefined) throw new HttpError('invalid_parameter', 'fills go with a template: add template=<name>.');
    return undefined;
  }
  const other = (Object.keys(ops) as (keyof Ops)[]).find((op) => !CARD_OPS.includes(op));
  if (other)
    throw new HttpError(
      'invalid_parameter',
      `A card takes no ${other}: its size and looks are its template's (beside template and fills: format and quality).`,
    );
  // Without templates the edge leaves the name as it is (lib/edge-function.ts): refused here in its words.
  if (Object.keys(templates).length === 0)
    throw new HttpError('invalid_parameter', invalidParameter('template', ops.template, oneOf('', 'templates')).message);
  const template = templateOf(ops.template, templates);
  if (Buffer.byteLength(`${request.key}/${opsSegment(ops)}`) > MAX_CARD_KEY_BYTES)
    throw invalidFill(`The card's key and fills take more than ${MAX_CARD_KEY_BYTES} bytes: shorten its texts.`);
  return cardFills(request, template, ops.template.split('.')[0]!);
}
