// The source searched by the models, once per source version: faces
// (faces.ts) and the salient subject (subject.ts), in one small copy of the
// first frame as displayed, each only when the request reads it and nothing
// remembered answers it, and only within the request's budget.

import sharp from 'sharp';
import type { Ops } from '../../grammar';
import type { Limits } from '../config';
import { afterSearch, FACE_MODEL, SUBJECT_MODEL, withModels, type Budget, type ModelRun } from './budget';
import { detectFaces, FACE_SEARCH_SIDE, faceModelLoaded, faceSearchCopy, roundedFace, type FaceBox } from './faces';
import { undecodableBy, type OpenedSource } from './input';
import { findSubject, subjectModelLoaded, type Subject } from './subject';
import { isCutOut, wantsFaces, wantsSubject, type Findings } from './findings';
import { packSubject, unpackSubject } from './subject-record';

/**
 * What the rest of the transform knows of the source, the budget left and the
 * source it reads (the copy searched, when format=json keeps it), and what was
 * searched now (the handler remembers it).
 */
export interface Found {
  faces?: FaceBox[];
  subject?: Subject;
  budget: Budget;
  source: OpenedSource;
  searched: Findings;
}

/** The budget of a job in a child that holds the models this request loads, or an earlier one did. */
export function heldBudget(ops: Ops, granted: Budget): Budget {
  const faces = wantsFaces(ops) || faceModelLoaded();
  const subject = wantsSubject(ops) || subjectModelLoaded();
  return withModels(granted, [...(faces ? [FACE_MODEL] : []), ...(subject ? [SUBJECT_MODEL] : [])]);
}

/**
 * `source` with its first frame decoded once, as displayed, at most
 * FACE_SEARCH_SIDE on its long side (sRGB, alpha kept): format=json searches
 * this copy and makes its previews from it, so the source is not decoded twice.
 */
async function firstFrameCopy(source: OpenedSource): Promise<OpenedSource> {
  const { data, info } = await (
    await source.firstFrame()
  )
    .autoOrient()
    .resize({ width: FACE_SEARCH_SIDE, height: FACE_SEARCH_SIDE, fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } };
  return { ...source, firstFrame: async () => sharp(data, raw) };
}

/**
 * The source's faces and subject as the request needs them: remembered, else
 * searched in a small copy when that fits `budget` (already heldBudget's) and
 * leaves what the rest of the request needs (`leaves`); else unknown. With
 * `position=auto`, faces come first: the subject is searched only when the
 * photo has none, unless format=json or a cut-out needs it.
 */
export async function searchSource(
  source: OpenedSource,
  ops: Ops,
  limits: Limits,
  budget: Budget,
  remembered: Findings,
  leaves: (rest: Budget) => boolean,
): Promise<Found> {
  const faces = remembered.faces;
  const subject = remembered.subject ? unpackSubject(remembered.subject) : undefined;
  const seekFaces = wantsFaces(ops) && !faces;
  const subjectFirst = ops.format === 'json' || isCutOut(ops);
  const seekSubject = wantsSubject(ops) && !subject && (subjectFirst || !faces?.length);
  const known: Found = { faces, subject, budget, source, searched: {} };
  if (!seekFaces && !seekSubject) return known;
  const runs: ModelRun[] = [
    ...(seekFaces ? [{ model: FACE_MODEL, loaded: faceModelLoaded() }] : []),
    ...(seekSubject ? [{ model: SUBJECT_MODEL, loaded: subjectModelLoaded() }] : []),
  ];
  const left = afterSearch(source.info, budget, limits.maxDimension, runs);
  if (!left || !leaves(left)) return known;
  const undecodable = undecodableBy(limits);
  const searched = ops.format === 'json' ? await firstFrameCopy(source).catch(undecodable) : source;
  const copy = await faceSearchCopy((await searched.firstFrame()).autoOrient()).catch(undecodable);
  const found: Found = { ...known, budget: left, source: searched };
  if (seekFaces) {
    found.faces = (await detectFaces(copy)).map(roundedFace);
    found.searched.faces = found.faces;
  }
  if (seekSubject && (subjectFirst || !found.faces?.length)) {
    found.subject = await findSubject(copy);
    found.searched.subject = packSubject(found.subject);
  }
  return found;
}
