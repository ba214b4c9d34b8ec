// Card templates at synth (lib/templates.ts): what the edge's store and the
// origin's environment receive, and each check a deployment meets in `cdk synth`.

import { describe, expect, it } from 'vitest';
import { DATA_FIELDS, DATA_KEY_PREFIX } from '../../lambda/edge/store';
import type { TemplateProps } from '../../lambda/origin/templates';
import { ImageTransformerConfigError } from '../../lib/settings';
import { checkTemplates } from '../../lib/templates';
import { only, originFunction, synth } from './synth';

const OG: TemplateProps = {
  width: 1200,
  height: 630,
  background: '#101828',
  slots: {
    photo: { kind: 'image', box: [0, 0, 600, 630] },
    title: { kind: 'text', box: [640, 60, 520, 400], font: 'sans-bold', size: [32, 96], colour: '#FFFFFF' },
  },
};

/** The data's JSON the edge reads, from its parts in the store's entries. */
function edgeData(entries: Record<string, string>): Record<string, unknown> {
  const parts = Object.keys(entries)
    .filter((key) => key.startsWith(DATA_KEY_PREFIX))
    .sort((a, b) => Number(a.split(':').pop()) - Number(b.split(':').pop()));
  return JSON.parse(parts.map((key) => entries[key]).join('')) as Record<string, unknown>;
}

describe('a deployment with templates', () => {
  it("puts each template's version in the edge's store and its definition in the origin's environment", () => {
    const deployed = synth(() => ({ templates: { og: OG } }));
    const { og } = checkTemplates({ og: OG });
    expect(og!.version).toMatch(/^[0-9a-f]{8}$/);
    expect(edgeData(only(deployed, 'Custom::EdgeData')[1].Properties.Entries)[DATA_FIELDS.templates as string]).toEqual({
      og: og!.version,
    });
    const env = originFunction(deployed).Properties.Environment.Variables;
    expect(JSON.parse(env.TEMPLATES)).toEqual({
      og: {
        width: 1200,
        height: 630,
        background: '101828',
        slots: {
          photo: { kind: 'image', box: [0, 0, 600, 630], fit: 'cover', position: 'center' },
          title: {
            kind: 'text',
            box: [640, 60, 520, 400],
            font: 'sans-bold',
            size: [32, 96],
            colour: 'ffffff',
            align: 'left',
            maxLength: 100,
            required: true,
          },
        },
        version: og!.version,
      },
    });
  });
});

const title = OG.slots.title as Extract<TemplateProps['slots'][string], { kind: 'text' }>;
const withTitle = (changes: object): TemplateProps => ({ ...OG, slots: { ...OG.slots, title: { ...title, ...changes } } });

describe('checks at synth', () => {
  it.each([
    ['an unknown font', withTitle({ font: 'comic' }), 'template "og": slots.title.font must be one of sans, sans-bold, not "comic".'],
    [
      'a box outside the canvas',
      withTitle({ box: [640, 60, 600, 400] }),
      'template "og": slots.title.box must be a box of some size inside the 1200x630 canvas, not [640,60,600,400].',
    ],
    [
      'an inverted size range',
      withTitle({ size: [96, 32] }),
      'template "og": slots.title.size must be a range [min, max] with min at most max, not [96,32].',
    ],
    [
      'too many slots',
      { ...OG, slots: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`s${i}`, { kind: 'image', box: [0, 0, 10, 10] }])) },
      'template "og": slots must be from 1 to 8 slots, not ["s0","s1","s2","s3","s4","s5","s6","s7","s8"].',
    ],
    [
      'a canvas over the pixel limit',
      { ...OG, width: 4000, height: 2000 },
      'template "og": width x height must be at most 4000000 pixels, not "4000x2000".',
    ],
    [
      'no image for the URL key',
      { ...OG, slots: { title: OG.slots.title } },
      'template "og": slots must be at least one image slot (the URL key fills the first), or the template a source, not ["title"].',
    ],
  ])('refuses %s, naming the template and the field', (_case, template, message) => {
    expect(() => synth(() => ({ templates: { og: template as TemplateProps } }))).toThrow(new ImageTransformerConfigError(message));
  });

  it("refuses templates that would not fit the origin's environment", () => {
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`t${i}`, OG]));
    expect(() => checkTemplates(many)).toThrow(/templates: their definitions take \d+ bytes of the origin's environment, over 2000/);
  });
});
