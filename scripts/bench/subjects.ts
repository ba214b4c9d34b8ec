// The subject set's scores (docs/subjects.md, "The subject set and how it is
// scored"): for each photo of test/support/subject-photos.ts, a portrait (3:4)
// and a wide (2:1) cover crop with position=center, attention and auto through
// the real transform, and the share of the hand-drawn subject box each keeps
// (kept: at least KEPT_SHARE); then segment=foreground's mean alpha over the
// subject's hand-drawn outline, over its box, and over the border frame away
// from the box, for the photos whose outline is drawn (the whole subject).
// Exits non-zero when the issue's criteria fail: auto keeps the subject in all
// crops but one at most and never fewer than attention; a cut-out's mean alpha
// is at least 0.5 on the subject (its outline) and at most 0.2 on the border. A position or parameter the grammar still refuses is skipped with a
// note, and its criteria are not judged.
//   npx tsx scripts/bench/subjects.ts

import type { Ops } from '../../lambda/grammar';
import {
  cropQuery,
  cutOutMeans,
  KEPT_SHARE,
  keptShare,
  cutOutOps,
  opsOf,
  SUBJECT_CROPS,
  subjectCases,
  subjectPhotos,
  transformed,
  type SubjectCase,
  type SubjectCrop,
} from '../../test/support/subject-photos';
import { provideSubjectModel } from '../../lib/subject-model';

const POSITIONS = ['center', 'attention', 'auto'] as const;
const CUT_OUT = { subject: 0.5, border: 0.2 };

/** Which positions the grammar takes, with the refusal of each it does not. */
function positionsTaken(sample: SubjectCase): { taken: string[]; refused: string[] } {
  const taken: string[] = [];
  const refused: string[] = [];
  for (const position of POSITIONS) {
    const ops = opsOf(cropQuery(sample, 'portrait', position));
    if (typeof ops === 'string') refused.push(`position=${position} skipped: ${ops}`);
    else taken.push(position);
  }
  return { taken, refused };
}

/** Prints each photo's crops and the kept counts; the failures of the criteria. */
async function crops(cases: SubjectCase[], positions: string[]): Promise<string[]> {
  const kept: Record<string, number> = {};
  console.log(`Cover crops, share of the subject's box kept (${positions.join(' / ')}; kept at ${KEPT_SHARE * 100}%: *):`);
  for (const subjectCase of cases) {
    const cells: string[] = [];
    for (const crop of Object.keys(SUBJECT_CROPS) as SubjectCrop[]) {
      const marks: string[] = [];
      for (const position of positions) {
        const share = await keptShare(subjectCase, opsOf(cropQuery(subjectCase, crop, position)) as Ops);
        if (share >= KEPT_SHARE) kept[position] = (kept[position] ?? 0) + 1;
        marks.push(`${(share * 100).toFixed(0).padStart(3)}%${share >= KEPT_SHARE ? '*' : ' '}`);
      }
      cells.push(`${crop.padEnd(8)} ${marks.join(' / ')}`);
    }
    console.log(`  ${subjectCase.name.padEnd(26)} ${cells.join('   ')}`);
  }
  const total = cases.length * Object.keys(SUBJECT_CROPS).length;
  console.log(`  kept of ${total} crops: ${positions.map((position) => `${position} ${kept[position] ?? 0}`).join(', ')}`);
  if (!positions.includes('auto')) return [];
  const auto = kept.auto ?? 0;
  return [
    ...(auto < total - 1 ? [`position=auto kept the subject in ${auto} of ${total} crops (at least ${total - 1} wanted)`] : []),
    ...(auto < (kept.attention ?? 0) ? [`position=auto kept fewer subjects (${auto}) than attention (${kept.attention})`] : []),
  ];
}

/** Prints the cut-outs' mean alphas; the failures of the criteria. */
async function cutOuts(cases: SubjectCase[]): Promise<string[]> {
  const ops = cutOutOps();
  if (typeof ops === 'string') {
    console.log(`segment=foreground skipped: ${ops}`);
    return [];
  }
  const failures: string[] = [];
  console.log(
    `segment=foreground, mean alpha on the subject's outline (>= ${CUT_OUT.subject}), on its box, and on the border away from it (<= ${CUT_OUT.border}):`,
  );
  for (const { name, image, subject, outline } of cases) {
    if (!outline) continue;
    const means = await cutOutMeans(await transformed(image, ops), subject, outline);
    const fine = means.outline >= CUT_OUT.subject && means.border <= CUT_OUT.border;
    const [inside, box, border] = [means.outline, means.box, means.border].map((mean) => mean.toFixed(2));
    if (!fine) failures.push(`${name}: cut-out alpha ${inside} on the subject, ${border} on the border`);
    console.log(`  ${name.padEnd(26)} outline ${inside}  box ${box}  border ${border}${fine ? '' : '  FAILS'}`);
  }
  return failures;
}

async function main(): Promise<number> {
  const photos = subjectPhotos();
  if (!photos) return 1;
  const cases = await subjectCases(photos);
  const { taken, refused } = positionsTaken(cases[0]!);
  for (const note of refused) console.log(note);
  const failures = [...(await crops(cases, taken)), ...(await cutOuts(cases))];
  for (const failure of failures) console.log(`FAILS: ${failure}`);
  return failures.length > 0 ? 1 : 0;
}

// The model as the tests have it: cached from its wheel, named by SUBJECT_MODEL_FILE.
await provideSubjectModel((line) => console.warn(line));
process.exitCode = await main();
