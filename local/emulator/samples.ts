// Sample sources for the playground when no --images folder is given: drawn
// in code (SVG rendered by sharp), so nothing third-party is committed. Each
// exercises something the service must get right.

import sharp from 'sharp';

export interface Sample {
  key: string;
  body: Buffer;
  contentType: string;
}

const WIDTH = 2400;
const HEIGHT = 1600;

/** A landscape: sky gradient, sun, three mountain ridges and a lake. */
function landscapeSvg(width: number, height: number, hue: number): string {
  const ridge = (base: number, amplitude: number, seed: number) => {
    const points: string[] = [`0,${height}`];
    for (let x = 0; x <= width; x += width / 24) {
      const y = base - amplitude * Math.abs(Math.sin((x / width) * 7 + seed) * Math.cos((x / width) * 3 + seed * 2));
      points.push(`${x.toFixed(0)},${y.toFixed(0)}`);
    }
    points.push(`${width},${height}`);
    return points.join(' ');
  };
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs>
      <linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
        <stop offset="0" stop-color="hsl(${hue},70%,35%)"/><stop offset="1" stop-color="hsl(${hue + 40},90%,80%)"/>
      </linearGradient>
      <radialGradient id="sun"><stop offset="0" stop-color="#fff8d0"/><stop offset="1" stop-color="#ffb347" stop-opacity="0"/></radialGradient>
    </defs>
    <rect width="100%" height="100%" fill="url(#sky)"/>
    <circle cx="${width * 0.7}" cy="${height * 0.3}" r="${height * 0.22}" fill="url(#sun)"/>
    <polygon points="${ridge(height * 0.55, height * 0.25, 1)}" fill="hsl(${hue + 10},25%,55%)"/>
    <polygon points="${ridge(height * 0.68, height * 0.2, 4)}" fill="hsl(${hue},30%,35%)"/>
    <polygon points="${ridge(height * 0.8, height * 0.12, 9)}" fill="hsl(${hue - 60},35%,20%)"/>
    <rect y="${height * 0.86}" width="100%" height="${height * 0.14}" fill="hsl(${hue},45%,30%)" opacity="0.85"/>
  </svg>`;
}

function logoSvg(size: number): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}">
    <circle cx="${size / 2}" cy="${size / 2}" r="${size * 0.45}" fill="#ff6a00"/>
    <circle cx="${size / 2}" cy="${size / 2}" r="${size * 0.3}" fill="#ffffff" fill-opacity="0.9"/>
    <rect x="${size * 0.38}" y="${size * 0.2}" width="${size * 0.24}" height="${size * 0.6}" rx="${size * 0.05}" fill="#1f6feb"/>
  </svg>`;
}

const render = (svg: string) => sharp(Buffer.from(svg));

async function bouncingBall(frames: number, width: number, height: number): Promise<Buffer> {
  const raw = await Promise.all(
    Array.from({ length: frames }, (_, i) => {
      const y = height * 0.2 + Math.abs(Math.sin((i / frames) * Math.PI)) * height * 0.55;
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
        <rect width="100%" height="100%" fill="#dff3ff"/>
        <circle cx="${width * (0.15 + (0.7 * i) / frames)}" cy="${height - y}" r="${height * 0.12}" fill="#e0245e"/>
      </svg>`;
      return render(svg).removeAlpha().raw().toBuffer();
    }),
  );
  return sharp(Buffer.concat(raw), { raw: { width, height: height * frames, channels: 3, pageHeight: height } })
    .gif({ delay: Array(frames).fill(60), loop: 0 })
    .toBuffer();
}

export async function generateSamples(): Promise<Sample[]> {
  const landscape = await render(landscapeSvg(WIDTH, HEIGHT, 210))
    .jpeg({ quality: 90 })
    .toBuffer();
  const sunset = await render(landscapeSvg(WIDTH, HEIGHT, 10))
    .jpeg({ quality: 90 })
    .toBuffer();
  return [
    { key: 'samples/mountains.jpg', body: landscape, contentType: 'image/jpeg' },
    {
      // Stored turned on its side with EXIF orientation 6: it must still be displayed upright.
      key: 'samples/exif-rotated.jpg',
      body: await sharp(sunset).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer(),
      contentType: 'image/jpeg',
    },
    { key: 'samples/logo.png', body: await render(logoSvg(800)).png().toBuffer(), contentType: 'image/png' },
    { key: 'samples/bouncing-ball.gif', body: await bouncingBall(16, 320, 240), contentType: 'image/gif' },
    {
      key: 'samples/cmyk-poster.jpg',
      body: await sharp(sunset).resize(1200).toColourspace('cmyk').jpeg({ quality: 90 }).toBuffer(),
      contentType: 'image/jpeg',
    },
    {
      key: 'samples/deep-16-bit.png',
      body: await sharp(landscape).resize(800).toColourspace('rgb16').png().toBuffer(),
      contentType: 'image/png',
    },
    { key: 'samples/photo.webp', body: await sharp(sunset).resize(1600).webp().toBuffer(), contentType: 'image/webp' },
    // A key with a space, '+', '#' and a non-ASCII letter: it must round-trip through URLs.
    { key: 'samples/café menu + specials #1.jpg', body: await sharp(landscape).resize(1200).jpeg().toBuffer(), contentType: 'image/jpeg' },
  ];
}

/** The playground's watermark, `logo`: a white badge with a dark outline, transparent around it, so it shows on any image. */
export async function sampleWatermark(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="160">
    <rect x="6" y="6" width="468" height="148" rx="28" fill="#ffffff" fill-opacity="0.85" stroke="#1b2838" stroke-width="8"/>
    <circle cx="84" cy="80" r="44" fill="#e4572e"/>
    <rect x="150" y="52" width="290" height="22" rx="11" fill="#1b2838"/>
    <rect x="150" y="92" width="200" height="18" rx="9" fill="#5b6b7b"/>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
