// Real photos with and without faces, for the face detector's tests and bench:
// taken from two wheels on PyPI at test time, into the git-ignored .cache/,
// never committed. scikit-image ships NASA's portrait of Eileen Collins
// (astronaut.png, public domain), the cameraman (camera.png, CC0) and photos
// with no face (coffee.png, CC0; rocket.jpg, public domain); matplotlib ships
// the US Navy's portrait of Grace Hopper (grace_hopper.jpg, public domain).
// test/support/wheel-files.ts fetches them.

import sharp, { type OverlayOptions } from 'sharp';
import { boxOverlap } from '../../lambda/origin/image/faces';
import { wheelFiles, type Wheel, type WheelFiles } from './wheel-files';

/** The wheels, each pinned, and the files read from it (path in the wheel, name here). */
const WHEELS: Wheel[] = [
  {
    requirement: 'scikit-image==0.26.0',
    files: {
      'skimage/data/astronaut.png': 'astronaut.png',
      'skimage/data/camera.png': 'camera.png',
      'skimage/data/coffee.png': 'coffee.png',
      'skimage/data/rocket.jpg': 'rocket.jpg',
    },
  },
  { requirement: 'matplotlib==3.11.2', files: { 'matplotlib/mpl-data/sample_data/grace_hopper.jpg': 'grace_hopper.jpg' } },
];

export type PhotoName = 'astronaut.png' | 'camera.png' | 'coffee.png' | 'rocket.jpg' | 'grace_hopper.jpg';

/** Where the face is in each photo, in fractions of it, read off the photos by eye. */
export const KNOWN_FACES: Partial<Record<PhotoName, Box>> = {
  'astronaut.png': { x: 0.35, y: 0.14, width: 0.18, height: 0.21 },
  'grace_hopper.jpg': { x: 0.33, y: 0.22, width: 0.37, height: 0.33 },
  'camera.png': { x: 0.36, y: 0.235, width: 0.14, height: 0.16 },
};

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type FacePhotos = WheelFiles<PhotoName>;

/** The photos, or undefined (with a message) when they cannot be had outside CI. */
export function facePhotos(): FacePhotos | undefined {
  return wheelFiles<PhotoName>(WHEELS, 'face test photos');
}

/** `box` of an image placed at `left`, `top` with `scale` on a canvas of `width` x `height`, in fractions of the canvas. */
export function placedBox(
  box: Box,
  [imageWidth, imageHeight]: [number, number],
  placement: { left: number; top: number; scale: number },
  [width, height]: [number, number],
): Box {
  return {
    x: (placement.left + box.x * imageWidth * placement.scale) / width,
    y: (placement.top + box.y * imageHeight * placement.scale) / height,
    width: (box.width * imageWidth * placement.scale) / width,
    height: (box.height * imageHeight * placement.scale) / height,
  };
}

/** The head around a known face (the face box doubled, within the photo), as a PNG, and the face in it. */
export async function headOf(photo: Buffer, face: Box): Promise<{ head: Buffer; size: [number, number]; face: Box }> {
  const { width, height } = await sharp(photo).metadata();
  const left = Math.max(0, Math.round((face.x - face.width / 2) * width));
  const top = Math.max(0, Math.round((face.y - face.height / 2) * height));
  const headWidth = Math.min(width - left, Math.round(2 * face.width * width));
  const headHeight = Math.min(height - top, Math.round(2 * face.height * height));
  const head = await sharp(photo).extract({ left, top, width: headWidth, height: headHeight }).toColourspace('srgb').png().toBuffer();
  const inHead = {
    x: (face.x * width - left) / headWidth,
    y: (face.y * height - top) / headHeight,
    width: (face.width * width) / headWidth,
    height: (face.height * height) / headHeight,
  };
  return { head, size: [headWidth, headHeight], face: inHead };
}

/**
 * A picture of `count` heads in a grid on `background` (covering `width` x
 * `height`), each face `faceShare` of the canvas's short side; and where the faces are.
 */
export async function crowdOf(
  heads: { head: Buffer; size: [number, number]; face: Box }[],
  background: Buffer,
  [width, height]: [number, number],
  count: number,
  faceShare: number,
): Promise<{ image: Buffer; faces: Box[] }> {
  const columns = Math.ceil(Math.sqrt((count * width) / height));
  const rows = Math.ceil(count / columns);
  const layers: OverlayOptions[] = [];
  const faces: Box[] = [];
  for (let i = 0; i < count; i++) {
    const { head, size, face } = heads[i % heads.length]!;
    const scale = (faceShare * Math.min(width, height)) / (face.height * size[1]);
    const [headWidth, headHeight] = [Math.round(size[0] * scale), Math.round(size[1] * scale)];
    const left = Math.round((i % columns) * (width / columns) + (width / columns - headWidth) / 2);
    const top = Math.round(Math.floor(i / columns) * (height / rows) + (height / rows - headHeight) / 2);
    layers.push({ input: await sharp(head).resize(headWidth, headHeight, { fit: 'fill' }).toBuffer(), left, top });
    faces.push(placedBox(face, [headWidth, headHeight], { left, top, scale: 1 }, [width, height]));
  }
  const canvas = sharp(background).resize(width, height, { fit: 'cover' });
  return { image: await canvas.composite(layers).png().toBuffer(), faces };
}

/**
 * A close portrait: `photo` cut to a square around its known `face`, the face
 * box `fill` of the square's height with its top an eighth of the way down,
 * at 800x800 (the crops asked of it are smaller). The face box begins at the
 * brows, so a crop shorter than it must choose between forehead and chin.
 */
export async function closePortrait(photo: Buffer, face: Box, fill: number): Promise<Buffer> {
  const { width, height } = await sharp(photo).metadata();
  const side = Math.round((face.height * height) / fill);
  const left = Math.max(0, Math.min(width - side, Math.round((face.x + face.width / 2) * width - side / 2)));
  const top = Math.max(0, Math.round(face.y * height - side / 8));
  return sharp(photo)
    .extract({ left, top, width: side, height: Math.min(side, height - top) })
    .resize(800, 800, { fit: 'fill' })
    .png()
    .toBuffer();
}

/** Grey pixels of `image` resized to `width` x `height`. */
async function grey(image: Buffer, width: number, height: number) {
  const { data, info } = await sharp(image).resize(width, height, { fit: 'fill' }).greyscale().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Where a cover crop shows its source: the crop is the source scaled as cover
 * scales it, cut along one side, so the cut's offset is found by sliding the
 * crop along the scaled source (both at a quarter of the crop's size) and
 * keeping the offset that matches best. In fractions of the source.
 */
export async function shownPart(source: Buffer, crop: Buffer): Promise<Box> {
  const [{ width: w, height: h }, { width: cw, height: ch }] = await Promise.all([sharp(source).metadata(), sharp(crop).metadata()]);
  const scale = Math.max(cw / w, ch / h) / 4;
  const [sw, sh, tw, th] = [Math.round(w * scale), Math.round(h * scale), Math.round(cw / 4), Math.round(ch / 4)];
  const [big, small] = await Promise.all([grey(source, sw, sh), grey(crop, tw, th)]);
  const across = sw - tw > sh - th;
  let best = { offset: 0, difference: Infinity };
  for (let offset = 0; offset <= (across ? sw - tw : sh - th); offset++) {
    let difference = 0;
    for (let y = 0; y < th; y++) {
      for (let x = 0; x < tw; x++)
        difference += Math.abs(small.data[y * tw + x]! - big.data[(across ? y : y + offset) * sw + (across ? x + offset : x)]!);
    }
    if (difference < best.difference) best = { offset, difference };
  }
  return across ? { x: best.offset / sw, y: 0, width: tw / sw, height: 1 } : { x: 0, y: best.offset / sh, width: 1, height: th / sh };
}

/** A picture and the faces in it (none for a picture without people). */
export interface FaceCase {
  name: string;
  image: Buffer;
  faces: Box[];
}

const heads = (photos: FacePhotos, names: PhotoName[]) => Promise.all(names.map((name) => headOf(photos.read(name), KNOWN_FACES[name]!)));

/**
 * The set the detector is measured on: the three portraits as they are; a
 * tall portrait with the face near the top and a wide landscape with the
 * person off-centre, both cut or placed from the astronaut; groups of heads
 * from all three at 12% and 6% of the short side, a lone face at 5%; and
 * photos without a face.
 */
export async function faceCases(photos: FacePhotos): Promise<FaceCase[]> {
  const astronaut = photos.read('astronaut.png');
  const portraits = (['astronaut.png', 'grace_hopper.jpg', 'camera.png'] as const).map((name) => ({
    name,
    image: photos.read(name),
    faces: [KNOWN_FACES[name]!],
  }));
  const face = KNOWN_FACES['astronaut.png']!;
  const tall = await sharp(astronaut).extract({ left: 100, top: 0, width: 256, height: 512 }).png().toBuffer();
  const coffee = photos.read('coffee.png');
  const landscape = await sharp(coffee)
    .resize(1920, 640, { fit: 'cover' })
    .composite([{ input: await sharp(astronaut).resize(480, 480).toBuffer(), left: 1300, top: 160 }])
    .png()
    .toBuffer();
  const all = await heads(photos, ['astronaut.png', 'grace_hopper.jpg', 'camera.png']);
  const group = await crowdOf(all, coffee, [1600, 1000], 6, 0.12);
  const small = await crowdOf(all.slice(0, 2), coffee, [1600, 1000], 8, 0.06);
  const tiny = await crowdOf(all.slice(0, 1), coffee, [1200, 800], 1, 0.05);
  return [
    ...portraits,
    { name: 'tall portrait', image: tall, faces: [placedBox(face, [512, 512], { left: -100, top: 0, scale: 1 }, [256, 512])] },
    {
      name: 'landscape, person at the right',
      image: landscape,
      faces: [placedBox(face, [512, 512], { left: 1300, top: 160, scale: 480 / 512 }, [1920, 640])],
    },
    { name: 'group of 6, faces 12% of the short side', image: group.image, faces: group.faces },
    { name: 'group of 8 frontal faces, 6% of the short side', image: small.image, faces: small.faces },
    { name: 'one face, 5% of the short side', image: tiny.image, faces: tiny.faces },
    { name: 'coffee.png', image: coffee, faces: [] },
    { name: 'rocket.jpg', image: photos.read('rocket.jpg'), faces: [] },
  ];
}

/** How many of `expected` some box of `found` matches (overlapping by at least a quarter, one box per face). */
export function facesFound(found: Box[], expected: Box[]): number {
  const used = new Set<number>();
  for (const face of expected) {
    const match = found.findIndex((box, i) => !used.has(i) && boxOverlap(box, face) >= 0.25);
    if (match !== -1) used.add(match);
  }
  return used.size;
}
