// What `metadata=copyright` and `metadata=keep` keep, field by field: the
// only fields an output carries (metadata.ts reads them and writes them
// anew). A field is listed here or never kept; none of them places the
// picture, names its camera's serial numbers or owner, or holds a thumbnail.
// docs/url-contract.md publishes these tables, and a test holds it to them.

/** Modes that keep something; `keep` keeps what `copyright` does and what it lists. */
export type KeepingMode = 'copyright' | 'keep';

/** EXIF fields `keep` keeps, by IFD (0, and 2 for the Exif IFD) and tag, under libexif's names. */
export const EXIF_FIELDS: Record<number, Record<number, string>> = {
  0: {
    0x010e: 'ImageDescription',
    0x010f: 'Make',
    0x0110: 'Model',
    0x0131: 'Software',
    0x0132: 'DateTime',
    0x013b: 'Artist',
    0x8298: 'Copyright',
  },
  2: {
    0x829a: 'ExposureTime',
    0x829d: 'FNumber',
    0x8822: 'ExposureProgram',
    0x8827: 'ISOSpeedRatings',
    0x9003: 'DateTimeOriginal',
    0x9004: 'DateTimeDigitized',
    0x9201: 'ShutterSpeedValue',
    0x9202: 'ApertureValue',
    0x9203: 'BrightnessValue',
    0x9204: 'ExposureBiasValue',
    0x9205: 'MaxApertureValue',
    0x9207: 'MeteringMode',
    0x9208: 'LightSource',
    0x9209: 'Flash',
    0x920a: 'FocalLength',
    0xa402: 'ExposureMode',
    0xa403: 'WhiteBalance',
    0xa404: 'DigitalZoomRatio',
    0xa405: 'FocalLengthIn35mmFilm',
    0xa406: 'SceneCaptureType',
    0xa408: 'Contrast',
    0xa409: 'Saturation',
    0xa40a: 'Sharpness',
    0xa433: 'LensMake',
    0xa434: 'LensModel',
  },
};
/** The EXIF fields `copyright` keeps. */
export const COPYRIGHT_EXIF = ['Artist', 'Copyright'];

/**
 * An XMP namespace known to be harmless and the properties kept of it, by
 * local name. Only simple values (text) and arrays of them (rdf:Alt, Seq,
 * Bag) are kept: a structure, whatever its name, is left out whole.
 */
export interface XmpNamespace {
  /** The prefix the output's packet declares it with (a source may use any). */
  prefix: string;
  uri: string;
  copyright: string[];
  keep: string[];
}

export const XMP_NAMESPACES: XmpNamespace[] = [
  {
    prefix: 'dc',
    uri: 'http://purl.org/dc/elements/1.1/',
    copyright: ['creator', 'rights'],
    keep: ['title', 'description', 'subject', 'contributor', 'publisher', 'date'],
  },
  {
    prefix: 'xmpRights',
    uri: 'http://ns.adobe.com/xap/1.0/rights/',
    copyright: ['Marked', 'Owner', 'UsageTerms', 'WebStatement'],
    keep: ['Certificate'],
  },
  {
    prefix: 'photoshop',
    uri: 'http://ns.adobe.com/photoshop/1.0/',
    copyright: ['Credit'],
    keep: [
      'Source',
      'Headline',
      'Instructions',
      'CaptionWriter',
      'Category',
      'SupplementalCategories',
      'DateCreated',
      'TransmissionReference',
      'Urgency',
    ],
  },
  {
    prefix: 'xmp',
    uri: 'http://ns.adobe.com/xap/1.0/',
    copyright: [],
    keep: ['CreateDate', 'ModifyDate', 'MetadataDate', 'CreatorTool', 'Rating', 'Label'],
  },
  {
    prefix: 'Iptc4xmpCore',
    uri: 'http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/',
    copyright: [],
    keep: ['IntellectualGenre', 'Scene', 'SubjectCode'],
  },
  {
    prefix: 'tiff',
    uri: 'http://ns.adobe.com/tiff/1.0/',
    copyright: [],
    keep: ['ImageDescription', 'Make', 'Model', 'Software', 'DateTime', 'Artist', 'Copyright'],
  },
  {
    prefix: 'exif',
    uri: 'http://ns.adobe.com/exif/1.0/',
    copyright: [],
    keep: [
      'ExposureTime',
      'FNumber',
      'ExposureProgram',
      'ISOSpeedRatings',
      'DateTimeOriginal',
      'DateTimeDigitized',
      'ShutterSpeedValue',
      'ApertureValue',
      'BrightnessValue',
      'ExposureBiasValue',
      'MaxApertureValue',
      'MeteringMode',
      'LightSource',
      'FocalLength',
      'ExposureMode',
      'WhiteBalance',
      'DigitalZoomRatio',
      'FocalLengthIn35mmFilm',
      'SceneCaptureType',
      'Contrast',
      'Saturation',
      'Sharpness',
    ],
  },
  {
    prefix: 'exifEX',
    uri: 'http://cipa.jp/exif/1.0/',
    copyright: [],
    keep: ['LensMake', 'LensModel'],
  },
  {
    prefix: 'aux',
    uri: 'http://ns.adobe.com/exif/1.0/aux/',
    copyright: [],
    keep: ['Lens'],
  },
];

/** IPTC-IIM datasets kept, as `record:dataset`, by their names in the standard. */
export const IPTC_FIELDS: Record<KeepingMode, Record<string, string>> = {
  copyright: { '2:80': 'By-line', '2:110': 'Credit', '2:116': 'Copyright Notice' },
  keep: {
    '2:5': 'Object Name',
    '2:10': 'Urgency',
    '2:15': 'Category',
    '2:20': 'Supplemental Category',
    '2:25': 'Keywords',
    '2:40': 'Special Instructions',
    '2:55': 'Date Created',
    '2:60': 'Time Created',
    '2:62': 'Digital Creation Date',
    '2:63': 'Digital Creation Time',
    '2:85': 'By-line Title',
    '2:103': 'Original Transmission Reference',
    '2:105': 'Headline',
    '2:115': 'Source',
    '2:120': 'Caption/Abstract',
    '2:122': 'Writer/Editor',
  },
};
/** The record version and coded character set: kept beside any dataset kept, as the datasets' frame. */
export const IPTC_FRAME = ['1:90', '2:0'];
