// Every name of imgix's own parameter list (the imgix-url-params package:
// its parameters and their aliases) is translated by the imgix rule book,
// refused with a 400 that names it, or listed in docs/migrating.md as ignored
// because it cannot change the pixels. None is dropped silently, so an imgix
// URL never gives another image here; a new release of the list, installed,
// fails this test with the names it added.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { imgix, IMGIX_BOOK } from '../../../lambda/edge/dialects/imgix';
import { isGrammarError } from '../../../lambda/grammar/index';
import { readDoc } from '../../docs/markdown';

interface ImgixParameterList {
  version: string;
  parameters: Record<string, unknown>;
  aliases: Record<string, string>;
}

const list = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('imgix-url-params/dist/parameters.json'), 'utf8'),
) as ImgixParameterList;

/** The names docs/migrating.md lists as ignored: `name` or a prefix `name…`, in the first column of its table. */
function documentedIgnored(): { names: Set<string>; prefixes: string[] } {
  const doc = readDoc('docs/migrating.md');
  const lines = doc.slice(doc.indexOf('| imgix | why it is ignored |')).split('\n');
  // The rows after the header and its rule, to the first line that is not the table's.
  const rows = lines.slice(
    2,
    lines.findIndex((line) => !line.startsWith('|')),
  );
  const spelled = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
  return {
    names: new Set(spelled.filter((name) => !name.endsWith('…'))),
    prefixes: spelled.filter((name) => name.endsWith('…')).map((name) => name.slice(0, -1)),
  };
}

type Outcome = 'translated' | 'refused' | 'ignored' | 'dropped';

const ignored = documentedIgnored();
const isDocumentedIgnored = (name: string) => ignored.names.has(name) || ignored.prefixes.some((prefix) => name.startsWith(prefix));
/** What the book does with the name alone: the pairs an unknown name leaves (imgix's defaults) are what "nothing" looks like. */
const nothing = imgix.translate({ uri: '/a.jpg', pairs: [] }).pairs;

function outcomeOf(name: string): Outcome {
  const spelling = IMGIX_BOOK.spellings[name] ?? name;
  if (Object.hasOwn(IMGIX_BOOK.rules, spelling)) return 'translated';
  try {
    const { pairs } = imgix.translate({ uri: '/a.jpg', pairs: [[name, '1']] });
    expect(pairs, `${name} changes nothing`).toEqual(nothing);
  } catch (error) {
    if (!isGrammarError(error)) throw error;
    expect(error.message, `the refusal names ${name}`).toContain(`imgix ${name}=1: `);
    return 'refused';
  }
  return isDocumentedIgnored(name) ? 'ignored' : 'dropped';
}

describe(`imgix's parameter list (imgix-url-params ${list.version})`, () => {
  const names = [...Object.keys(list.parameters), ...Object.keys(list.aliases)];
  const outcomes = new Map(names.map((name) => [name, outcomeOf(name)]));
  const having = (outcome: Outcome) => names.filter((name) => outcomes.get(name) === outcome);

  it('drops no name silently: each is translated, refused with a 400 naming it, or documented as ignored', () => {
    expect(having('dropped')).toEqual([]);
  });

  it('lists as ignored only names that imgix defines and that the book neither translates nor refuses', () => {
    const stale = [...ignored.names].filter((name) => outcomes.get(name) !== 'ignored');
    expect(stale).toEqual([]);
    expect(ignored.prefixes.every((prefix) => names.some((name) => name.startsWith(prefix)))).toBe(true);
  });

  it('refuses what imgix does to the pixels and we lack, under every alias', () => {
    const refused = ['face-blur', 'face-pixel', 'face-pixelate', 'lp-blur', 'license-plate-blur', 't', 'tsz', 'frame', 'reverse'];
    refused.push('background-replace', 'object-removal-rect', 'rasterize-bypass', 'trimmd', 'trimsd');
    expect(refused.filter((name) => outcomes.get(name) !== 'refused')).toEqual([]);
  });

  it('still translates what it did, and ignores what imgix does not define', () => {
    expect(having('translated')).toEqual(
      expect.arrayContaining(['w', 'h', 'fit', 'crop', 'auto', 'fm', 'q', 'width', 'height', 'bg-remove', 'background-remove']),
    );
    expect(imgix.translate({ uri: '/a.jpg', pairs: [['utm_source', 'x']] }).pairs).toEqual(nothing);
  });
});
