// The text fonts in the origin Lambda (lambda/origin/image/text/fonts.ts):
// Noto Sans and its siblings for Korean, Japanese, Chinese and Arabic, and
// Noto Emoji, under the SIL Open Font License, as the npm registry's
// @expo-google-fonts packages ship them. Those packages hold every weight
// (120 MB together), so they are no dependency of this one: the few files
// the origin draws with are fetched from the pinned tarballs into a cache
// (.cache/fonts/, git-ignored) when the origin is bundled, the tests start or
// the emulator starts, and copied into `fonts/` beside the bundle's entry with
// each package's licence. A tarball is gzip'd tar: read here with node:zlib.

import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { FONT_FILES, FONTS_FOLDER, TEXT_FONTS_ENV } from '../lambda/origin/image/text/fonts';
import {
  downloadPinned,
  holds,
  PinnedFileError,
  provideInEnvironment,
  scriptCommand,
  startedAs,
  verified,
  writeAtomically,
  type PinnedFile,
  type PinnedMember,
  type ProvideOptions,
} from './pinned-files';
import { PROJECT_ROOT } from './project-root';

/** A registry tarball, and the members taken from it: the fonts (named as the origin knows them) and the licence. */
export interface FontPackage extends PinnedFile {
  readonly name: string;
  readonly version: string;
  readonly fonts: readonly PinnedMember[];
  readonly licence: PinnedMember;
}

const tarball = (name: string, version: string) => `https://registry.npmjs.org/@expo-google-fonts/${name}/-/${name}-${version}.tgz`;

/** Every package's OFL text, as `package/LICENSE_FONT`. */
const licence = (bytes: number, sha256: string): PinnedMember => ({ name: 'package/LICENSE_FONT', bytes, sha256 });

/** The packages and members, pinned (the registry serves a version's tarball unchanged). */
export const FONT_PACKAGES: readonly FontPackage[] = [
  {
    name: 'noto-sans',
    version: '0.4.2',
    bytes: 7_447_518,
    sha256: '98cf14a19b8e67a0e76bfd4d5df98937b9734e6dde570bd750f2259042042548',
    fonts: [
      {
        name: 'package/400Regular/NotoSans_400Regular.ttf',
        bytes: 629_024,
        sha256: 'fe8c022f48d8dd29f17b744d16f9346f4357e16f7d4f7be58b000ae7c291b614',
      },
      {
        name: 'package/700Bold/NotoSans_700Bold.ttf',
        bytes: 630_968,
        sha256: '13a813c49624ae3ba3c5c6e72c5ebffc4b9e1e6ea32f421c04069b037c6ad431',
      },
    ],
    licence: licence(4_396, 'cee9892f9f0cc8fe882c9e9537ee6a89621d86ee7ceaf70b02e2b2b1c25c061a'),
  },
  {
    name: 'noto-sans-kr',
    version: '0.4.3',
    bytes: 27_602_552,
    sha256: '7614af529705ea48e8b76cb3b056b92db66b7625ef3fc97ce76366063df94d3f',
    fonts: [
      {
        name: 'package/400Regular/NotoSansKR_400Regular.ttf',
        bytes: 6_185_868,
        sha256: '8cbc9b353bb9ce848fd69bb6a507319dfacc659cf5fd643db5d88f3c4970e1dd',
      },
    ],
    licence: licence(4_388, '1c05c68c34f9708415aada51f17e1b0092d2cea709bf4a94cd38114f9e73d7d9'),
  },
  {
    name: 'noto-sans-jp',
    version: '0.4.3',
    bytes: 28_996_407,
    sha256: '563ee80509692e2b2f42ceae6a0b82afecb90daa1b3d025bcebdf3d9120f43a3',
    fonts: [
      {
        name: 'package/400Regular/NotoSansJP_400Regular.ttf',
        bytes: 5_472_784,
        sha256: 'd930d5d52d15231c283089760f84584272ad5e37e14607ba0d19c798e7a9caec',
      },
    ],
    licence: licence(4_388, '1c05c68c34f9708415aada51f17e1b0092d2cea709bf4a94cd38114f9e73d7d9'),
  },
  {
    name: 'noto-sans-sc',
    version: '0.4.3',
    bytes: 56_954_252,
    sha256: '0d69d0f4971d2ff574e3d93cbc218dc950bf3f3f8f8e2c008d97687ed53aee59',
    fonts: [
      {
        name: 'package/400Regular/NotoSansSC_400Regular.ttf',
        bytes: 10_559_284,
        sha256: 'd45f67f0a7c0ca3f256950777ce6a61cc7ce5f9696d02900cbbaac25f8aa7d16',
      },
    ],
    licence: licence(4_388, '1c05c68c34f9708415aada51f17e1b0092d2cea709bf4a94cd38114f9e73d7d9'),
  },
  {
    name: 'noto-sans-arabic',
    version: '0.4.3',
    bytes: 1_778_562,
    sha256: '29e966f9d48a4ce7dd3c2c4c016f29cd888089538217303fb2c87de9e7f048ed',
    fonts: [
      {
        name: 'package/400Regular/NotoSansArabic_400Regular.ttf',
        bytes: 194_176,
        sha256: '252629ca0e87b6233851249b8cbf7b43445211a8caf199f1b306a19202251508',
      },
      {
        name: 'package/700Bold/NotoSansArabic_700Bold.ttf',
        bytes: 194_380,
        sha256: 'a86a704ff8b315082f4859b04c2f8f746f4cefb14553ef10505f143e0d4829d3',
      },
    ],
    licence: licence(4_382, '07fc70bfeb985cc1a87a8587d0a0c80bab11c86c9dc3fd95b6f0cb332f983e96'),
  },
  {
    name: 'noto-emoji',
    version: '0.4.7',
    bytes: 2_961_105,
    sha256: '6a25fd5a4da5bb34bbc2d300531bbf32de86afd866e119314d7e358f61a6104d',
    fonts: [
      {
        name: 'package/400Regular/NotoEmoji_400Regular.ttf',
        bytes: 886_572,
        sha256: '24aaa2a20c9c06ffe9bf04284bfd1f14376a329d10122f902abe2770817eb504',
      },
    ],
    licence: licence(4_330, '500bb1ccf43df7bbb522112f9133a52b16e1c35e809632f5d8609b179152de5b'),
  },
];

/** Where the fonts and licences are cached: git-ignored, never committed or packed. */
export const FONTS_CACHE = join(PROJECT_ROOT, '.cache', FONTS_FOLDER);

/** A member's file name in the fonts' folder; a licence is named for its package. */
export const fileOf = (member: PinnedMember): string => member.name.slice(member.name.lastIndexOf('/') + 1);
export const licenceFileOf = (pkg: FontPackage): string => `OFL-${pkg.name}.txt`;

/** Every file the fonts' folder holds, with its pin. */
const pinnedFiles = (pkg: FontPackage): [string, PinnedFile][] => [
  ...pkg.fonts.map((font): [string, PinnedFile] => [fileOf(font), font]),
  [licenceFileOf(pkg), pkg.licence],
];

/** Reads an octal field of a tar header (NUL- or space-terminated). */
const octal = (header: Buffer, at: number, length: number) =>
  parseInt(header.toString('latin1', at, at + length).replace(/[\0 ]+$/, '') || '0', 8);

/**
 * The member `pinned.name` of the tar archive `tar`, checked against its pin:
 * headers walked by their sizes (ustar, and GNU/PAX long names skipped with
 * their data), the member's bytes sliced out, never larger than the pin.
 */
export function tarMember(tar: Buffer, pinned: PinnedMember, what = 'The tarball'): Buffer {
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const name = header.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const prefix = header.toString('utf8', 345, 500).replace(/\0.*$/s, '');
    const size = octal(header, 124, 12);
    const path = prefix ? `${prefix}/${name}` : name;
    if (path === pinned.name) {
      if (size !== pinned.bytes)
        throw new PinnedFileError(`${what}'s ${pinned.name} says it is ${size} bytes, not the pinned ${pinned.bytes}.`);
      const bytes = tar.subarray(at + 512, at + 512 + size);
      if (bytes.length !== size) throw new PinnedFileError(`${what} is cut short inside ${pinned.name}.`);
      return verified(`${what}'s ${pinned.name}`, Buffer.from(bytes), pinned);
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new PinnedFileError(`${what} has no member ${pinned.name}.`);
}

/** How to put a package's files in place without this code's download. */
const byHand = (pkg: FontPackage, folder: string) =>
  `Fetch it yourself (\`npm pack @expo-google-fonts/${pkg.name}@${pkg.version}\`) and copy ${pkg.fonts.map(fileOf).join(', ')} ` +
  `from its package/ folder and package/LICENSE_FONT as ${licenceFileOf(pkg)} into ${folder}, then run again.`;

/** Downloads `pkg`'s tarball and writes its fonts and licence into `folder`. */
async function fetchPackage(pkg: FontPackage, folder: string, download: typeof fetch): Promise<void> {
  const what = `@expo-google-fonts/${pkg.name}@${pkg.version}`;
  const gzip = await downloadPinned(
    { ...pkg, url: tarball(pkg.name, pkg.version), what: `${what} from npm`, called: 'tarball', byHand: byHand(pkg, folder) },
    download,
  );
  const tar = gunzipSync(gzip, { maxOutputLength: 256 * 1024 * 1024 });
  for (const member of [...pkg.fonts, pkg.licence]) {
    const name = member === pkg.licence ? licenceFileOf(pkg) : fileOf(member);
    writeAtomically(join(folder, name), tarMember(tar, member, what));
  }
}

/**
 * The fonts and their licences in `folder` (default the cache): a package's
 * kept when its files there are the pinned ones, else taken from its tarball,
 * downloaded. Throws a PinnedFileError saying what failed and how to fix it.
 */
export async function ensureFonts(folder = FONTS_CACHE, download: typeof fetch = fetch): Promise<string> {
  mkdirSync(folder, { recursive: true });
  for (const pkg of FONT_PACKAGES) {
    if (!pinnedFiles(pkg).every(([file, pin]) => holds(join(folder, file), pin))) await fetchPackage(pkg, folder, download);
  }
  return folder;
}

/** Copies the fonts and licences (ensured in the cache) into `folder`/fonts: the bundle's, beside its entry. */
export async function copyFonts(folder: string): Promise<void> {
  const cache = await ensureFonts();
  const into = join(folder, FONTS_FOLDER);
  mkdirSync(into, { recursive: true });
  for (const [file] of FONT_PACKAGES.flatMap(pinnedFiles)) copyFileSync(join(cache, file), join(into, file));
}

/**
 * For the tests and the emulator: the fonts cached, and TEXT_FONTS_DIR naming
 * their folder, unless it is set already (provideInEnvironment).
 */
export const provideFonts = (warn: (line: string) => void, options: ProvideOptions = {}): Promise<void> =>
  provideInEnvironment(TEXT_FONTS_ENV, ensureFonts, 'The text fonts are missing, so text overlays will fail', warn, {
    folder: FONTS_CACHE,
    ...options,
  });

/** This module's file: a .ts source in a checkout (run by tsx), compiled .js in the installed package. */
const THIS_FILE = fileURLToPath(import.meta.url);

/** Shell commands, run in the bundle's folder, that put the fonts there: this module run as a script, by tsx from the sources, by node from the package. */
export function fontsCommands(quote: (text: string) => string): string[] {
  return [scriptCommand(THIS_FILE, PROJECT_ROOT, quote), ...FONT_FILES.map((file) => `test -f ${FONTS_FOLDER}/${file}`)];
}

// Run as a script (by fontsCommands): `<runner> fonts <folder>`.
if (startedAs(THIS_FILE)) {
  copyFonts(resolve(process.argv[2] ?? '.')).catch((error: Error) => {
    process.stderr.write(`edge-image-transformer: ${error.message}\n`);
    process.exitCode = 1;
  });
}
