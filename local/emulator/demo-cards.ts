// The card templates of the playground's demonstration (docs/templates.md),
// served when `npm start` is given no deployment settings.

import type { TemplateProps } from '../../lambda/origin/templates';

/** The docs' Open Graph card with a caption, and a banner whose logo is a second image slot, which a URL's fills name. */
export const LOCAL_TEMPLATES: { [name: string]: TemplateProps } = {
  og: {
    width: 1200,
    height: 630,
    background: '#101828',
    slots: {
      photo: { kind: 'image', box: [0, 0, 600, 630], position: 'attention' },
      title: { kind: 'text', box: [640, 60, 520, 440], font: 'sans-bold', size: [32, 96], colour: '#ffffff', maxLength: 120 },
      caption: { kind: 'text', box: [640, 530, 520, 60], font: 'sans', size: [18, 28], colour: '#98a2b3', maxLength: 60, required: false },
    },
  },
  banner: {
    width: 1200,
    height: 400,
    background: '#000000',
    slots: {
      photo: { kind: 'image', box: [0, 0, 1200, 400] },
      logo: { kind: 'image', box: [1020, 30, 150, 150], fit: 'contain' },
      title: { kind: 'text', box: [40, 250, 900, 120], font: 'sans-bold', size: [24, 72], colour: '#ffffff', maxLength: 60 },
    },
  },
};
