// A catalogue of the places real photos carry their location, written at test
// time by exiftool (Debian's libimage-exiftool-perl, which .ci/run installs)
// into small images of each source format, with sentinel values no picture
// holds by chance (a town called Zzyzx..., 47.123456 N, 122.654321 W, 1234.567
// m): camera EXIF GPS, a phone's GPS in XMP, a DJI drone's XMP (as
// attributes, as elements, in a typed node, nested in a kept value), IPTC Core
// and Extension locations, XMP Dynamic Media's shot location, Photoshop's
// city, state and country, Darwin Core's and iView MediaPro's locations, Dublin
// Core's coverage, a creator's contact address, and the IPTC-IIM location
// datasets. Beside them, the rights and creator every mode keeps and the
// fields only `keep` keeps, so that an output stripped of everything is seen.
// And exiftool again, once over many outputs, to read back what they carry.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const EXIFTOOL = process.env.EXIFTOOL_PATH ?? 'exiftool';

/** Why the catalogue cannot be made here, or undefined when exiftool is there. In CI (CI=true) a missing exiftool is an error, never a skip. */
export function exiftoolMissing(): string | undefined {
  if (spawnSync(EXIFTOOL, ['-ver']).error === undefined) return undefined;
  const why = `exiftool is not installed: \`apt-get install -y libimage-exiftool-perl\` (as root, after apt-get update), or set EXIFTOOL_PATH.`;
  if (process.env.CI === 'true') throw new Error(why);
  return why;
}

/** What every mode keeps, and what only `keep` keeps: in EXIF, XMP and IPTC-IIM alike. */
export const COPYRIGHT = 'Zcopyright Ann Example';
export const CREATOR = 'Zcreator Ann Example';
export const KEYWORD = 'Zkeyword harbour';
export const MAKE = 'Zmake Examplecam';

/** Text no output may hold, in any case: the place names begin with it. */
export const PLACE_TEXT = 'zzyzx';
/** Coordinates and altitudes, as numbers (exiftool reads EXIF's rationals back to them) and as the texts XMP writes them in. */
export const PLACE_NUMBERS = [47.123456, 122.654321, 1234.567, 89.0123];
export const PLACE_STRINGS = ['47.123456', '122.654321', '1234.567', '89.0123', '47,7.40736', '122,39.25926', '1234567/1000'];
/** Names of location carriers, lower case: no output may name them, even empty. */
export const PLACE_NAMES = ['gpslatitude', 'gpslongitude', 'gpsaltitude', 'absolutealtitude', 'relativealtitude', 'shotlocation'];

const NS = {
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  dc: 'http://purl.org/dc/elements/1.1/',
  xmp: 'http://ns.adobe.com/xap/1.0/',
  xmpRights: 'http://ns.adobe.com/xap/1.0/rights/',
  exif: 'http://ns.adobe.com/exif/1.0/',
  photoshop: 'http://ns.adobe.com/photoshop/1.0/',
  Iptc4xmpCore: 'http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/',
  Iptc4xmpExt: 'http://iptc.org/std/Iptc4xmpExt/2008-02-29/',
  xmpDM: 'http://ns.adobe.com/xmp/1.0/DynamicMedia/',
  'drone-dji': 'http://www.dji.com/drone-dji/1.0/',
  dwc: 'http://rs.tdwg.org/dwc/index.htm',
  mediapro: 'http://ns.iview-multimedia.com/mediapro/1.0/',
};
const declarations = Object.entries(NS)
  .map(([prefix, uri]) => `xmlns:${prefix}="${uri}"`)
  .join('\n    ');

/** An IPTC Extension location structure, as LocationShown and LocationCreated hold it. */
const IPTC_LOCATION = `<rdf:li rdf:parseType="Resource">
      <Iptc4xmpExt:City>Zzyzxcity</Iptc4xmpExt:City>
      <Iptc4xmpExt:Sublocation>Zzyzxsublocation</Iptc4xmpExt:Sublocation>
      <Iptc4xmpExt:ProvinceState>Zzyzxstate</Iptc4xmpExt:ProvinceState>
      <Iptc4xmpExt:CountryName>Zzyzxland</Iptc4xmpExt:CountryName>
      <Iptc4xmpExt:CountryCode>ZZYZX</Iptc4xmpExt:CountryCode>
      <Iptc4xmpExt:WorldRegion>Zzyzxregion</Iptc4xmpExt:WorldRegion>
      <exif:GPSLatitude>47,7.40736N</exif:GPSLatitude>
      <exif:GPSLongitude>122,39.25926W</exif:GPSLongitude>
      <exif:GPSAltitude>1234567/1000</exif:GPSAltitude>
     </rdf:li>`;

/** The catalogue's XMP packet, as cameras, phones, drones and picture desks write it. */
export const CATALOGUE_XMP = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="${NS.rdf}">
  <rdf:Description rdf:about=""
    ${declarations}
    exif:GPSLatitude="47,7.40736N" exif:GPSLongitude="122,39.25926W" exif:GPSAltitude="1234567/1000" exif:GPSAltitudeRef="0"
    photoshop:City="Zzyzxcity" photoshop:State="Zzyzxstate" photoshop:Country="Zzyzxland"
    Iptc4xmpCore:Location="Zzyzxsublocation" Iptc4xmpCore:CountryCode="ZZYZX"
    drone-dji:GpsLatitude="+47.123456" drone-dji:GpsLongitude="-122.654321"
    drone-dji:AbsoluteAltitude="+1234.567" drone-dji:RelativeAltitude="+89.0123"
    xmp:CreatorTool="${MAKE}" photoshop:Credit="${CREATOR}">
   <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">${COPYRIGHT}</rdf:li></rdf:Alt></dc:rights>
   <dc:creator><rdf:Seq><rdf:li>${CREATOR}</rdf:li></rdf:Seq></dc:creator>
   <dc:subject><rdf:Bag><rdf:li>${KEYWORD}</rdf:li></rdf:Bag></dc:subject>
   <dc:contributor><rdf:Bag><rdf:li drone-dji:GpsLatitude="47.123456">Zzyzxcity crew</rdf:li></rdf:Bag></dc:contributor>
   <dc:coverage>Zzyzxcity, Zzyzxland</dc:coverage>
   <exif:GPSDestLatitude>47,7.40736N</exif:GPSDestLatitude>
   <exif:GPSAreaInformation>Zzyzxregion</exif:GPSAreaInformation>
   <Iptc4xmpExt:LocationShown><rdf:Bag>${IPTC_LOCATION}</rdf:Bag></Iptc4xmpExt:LocationShown>
   <Iptc4xmpExt:LocationCreated><rdf:Bag>${IPTC_LOCATION}</rdf:Bag></Iptc4xmpExt:LocationCreated>
   <Iptc4xmpExt:City>Zzyzxcity</Iptc4xmpExt:City>
   <Iptc4xmpExt:CountryName>Zzyzxland</Iptc4xmpExt:CountryName>
   <Iptc4xmpExt:Sublocation>Zzyzxsublocation</Iptc4xmpExt:Sublocation>
   <Iptc4xmpExt:GPSLatitude>47,7.40736N</Iptc4xmpExt:GPSLatitude>
   <Iptc4xmpCore:CreatorContactInfo rdf:parseType="Resource">
    <Iptc4xmpCore:CiAdrCity>Zzyzxcity</Iptc4xmpCore:CiAdrCity>
    <Iptc4xmpCore:CiAdrCtry>Zzyzxland</Iptc4xmpCore:CiAdrCtry>
    <Iptc4xmpCore:CiAdrRegion>Zzyzxstate</Iptc4xmpCore:CiAdrRegion>
   </Iptc4xmpCore:CreatorContactInfo>
   <xmpDM:shotLocation>Zzyzxcity pier</xmpDM:shotLocation>
   <drone-dji:GimbalYawDegree>+12.30</drone-dji:GimbalYawDegree>
   <dwc:Location rdf:parseType="Resource">
    <dwc:decimalLatitude>47.123456</dwc:decimalLatitude>
    <dwc:decimalLongitude>-122.654321</dwc:decimalLongitude>
    <dwc:locality>Zzyzxcity</dwc:locality>
   </dwc:Location>
   <mediapro:Location>Zzyzxsublocation</mediapro:Location>
   <mediapro:City>Zzyzxcity</mediapro:City>
  </rdf:Description>
  <drone-dji:Flight rdf:about="" xmlns:drone-dji="${NS['drone-dji']}" xmlns:dc="${NS.dc}">
   <drone-dji:GpsLatitude>47.123456</drone-dji:GpsLatitude>
   <drone-dji:GpsLongitude>-122.654321</drone-dji:GpsLongitude>
   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">Zzyzxcity from the air</rdf:li></rdf:Alt></dc:title>
  </drone-dji:Flight>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;

/** exiftool's assignments: camera EXIF (GPS, the photographer's and the camera's fields) and IPTC-IIM (location, rights, keywords). */
const EXIFTOOL_ASSIGNMENTS = [
  `-EXIF:Copyright=${COPYRIGHT}`,
  `-EXIF:Artist=${CREATOR}`,
  `-EXIF:Make=${MAKE}`,
  '-GPSLatitude=47.123456',
  '-GPSLatitudeRef=N',
  '-GPSLongitude=122.654321',
  '-GPSLongitudeRef=W',
  '-GPSAltitude=1234.567',
  '-GPSAltitudeRef=0',
  '-GPSDestLatitude=47.123456',
  '-GPSDestLatitudeRef=N',
  '-GPSAreaInformation=Zzyzxregion',
  '-IPTC:City=Zzyzxcity',
  '-IPTC:Sub-location=Zzyzxsublocation',
  '-IPTC:Province-State=Zzyzxstate',
  '-IPTC:Country-PrimaryLocationCode=ZZYZX',
  '-IPTC:Country-PrimaryLocationName=Zzyzxland',
  '-IPTC:ContentLocationCode=ZZYZX',
  '-IPTC:ContentLocationName=Zzyzxplace',
  `-IPTC:CopyrightNotice=${COPYRIGHT}`,
  `-IPTC:By-line=${CREATOR}`,
  `-IPTC:Keywords=${KEYWORD}`,
];

/** Tag names that speak of place, in any case. */
const PLACE_TAG = /gps|locat|city|country|state(?!ment)|province|region|latitude|longitude|altitude|coverage|drone|locality/i;

/** What in an image (its bytes, and its tags as exiftool reads them) tells a place: empty for every output. */
export function placesIn(bytes: Buffer, tags: Record<string, unknown>): string[] {
  const found: string[] = [];
  const raw = bytes.toString('latin1').toLowerCase();
  for (const text of [PLACE_TEXT, ...PLACE_STRINGS, ...PLACE_NAMES]) if (raw.includes(text)) found.push(`bytes: ${text}`);
  for (const [name, value] of Object.entries(tags)) {
    // exiftool's own and the file system's: the temporary file's name and dates.
    if (name === 'SourceFile' || name.startsWith('System:') || name.startsWith('ExifTool:')) continue;
    const text = JSON.stringify(value).toLowerCase();
    const numbers = (text.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
    const placed =
      PLACE_TAG.test(name) ||
      [PLACE_TEXT, ...PLACE_STRINGS].some((place) => text.includes(place)) ||
      numbers.some((number) => PLACE_NUMBERS.some((place) => Math.abs(Math.abs(number) - place) < 0.001));
    if (placed) found.push(`${name}: ${text}`);
  }
  return found;
}

/** `files` written to a temporary folder, `run` given their paths, the folder removed after. */
function inFolder<T>(files: { name: string; bytes: Buffer }[], run: (dir: string, paths: string[]) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'catalogue-'));
  try {
    const paths = files.map(({ name, bytes }) => {
      writeFileSync(join(dir, name), bytes);
      return join(dir, name);
    });
    return run(dir, paths);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function exiftool(args: string[]): string {
  const run = spawnSync(EXIFTOOL, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0 && !run.stdout) throw new Error(`exiftool failed: ${run.stderr || run.error}`);
  return run.stdout;
}

/** `images` (name with its extension, bytes) with the whole catalogue written into them, in one exiftool run. */
export function withCatalogue(images: { name: string; bytes: Buffer }[]): Buffer[] {
  return inFolder([...images, { name: 'catalogue.xmp', bytes: Buffer.from(CATALOGUE_XMP) }], (dir, paths) => {
    const targets = paths.slice(0, images.length);
    // -m: IPTC's country code is three characters by the standard; the catalogue's is longer, to be found.
    exiftool(['-m', '-q', '-overwrite_original', `-xmp<=${join(dir, 'catalogue.xmp')}`, ...EXIFTOOL_ASSIGNMENTS, ...targets]);
    return targets.map((path) => readFileSync(path));
  });
}

/** Everything exiftool reads in each of `images`, every group and duplicate, values as numbers where they are (-n), in one run. */
export function readTags(images: { name: string; bytes: Buffer }[]): Record<string, unknown>[] {
  return inFolder(images, (_, paths) => {
    // Without -m, which would leave out a WebP's EXIF behind the `Exif\0\0` header libvips writes.
    const tags = JSON.parse(exiftool(['-j', '-a', '-G1', '-n', ...paths])) as Record<string, unknown>[];
    // exiftool answers in the order asked; SourceFile says which.
    return paths.map((path) => tags.find((entry) => entry.SourceFile === path)!);
  });
}
