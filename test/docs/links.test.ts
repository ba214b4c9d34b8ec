// Every relative link in the README and docs/ leads somewhere: the file
// exists and, when the link names an anchor, the page has that heading. Pages
// move and headings get renamed; a reader following a dead link notices.

import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, headingAnchors, proseLines, readDoc } from './markdown';

const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The link targets in a page's prose (not in code), e.g. "operations.md#the-failure-queue". */
function relativeLinks(markdown: string): string[] {
  const targets = proseLines(markdown)
    .join('\n')
    .matchAll(/\]\(([^)\s]+)\)/g);
  return [...targets].map(([, target = '']) => target).filter((target) => !/^[a-z]+:/i.test(target));
}

describe.each(pages)('%s', (page) => {
  it('links only to pages and headings that exist', () => {
    const dead: string[] = [];
    for (const target of relativeLinks(readDoc(page))) {
      const [file = '', anchor] = target.split('#');
      const path = file === '' ? page : normalize(join(dirname(page), file));
      if (!existsSync(join(ROOT, path))) dead.push(`${target} (no file ${path})`);
      else if (anchor !== undefined && !headingAnchors(readDoc(path)).has(anchor))
        dead.push(`${target} (no heading #${anchor} in ${path})`);
    }
    expect(dead).toEqual([]);
  });
});

it("the README's contents list every page in docs/", () => {
  const linked = new Set(relativeLinks(readDoc('README.md')).map((target) => target.split('#')[0]));
  expect(pages.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  expect(linked).toContain('docs/configuration.md');
});

/** The README is the front door: what a newcomer reads first; details belong in docs/. */
const FRONT_DOOR_LINES = 350;

it(`the README stays a front door of at most ${FRONT_DOOR_LINES} lines`, () => {
  expect(readDoc('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(FRONT_DOOR_LINES);
});
