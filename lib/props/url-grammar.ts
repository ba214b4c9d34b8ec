// ImageTransformerProps, URL grammar: what a URL may ask for, and where its image comes from.

import type { Duration, SecretValue } from 'aws-cdk-lib';
import type { DialectName } from '../../lambda/edge/dialects/dialect';
import type { HdrMode, Preset } from '../../lambda/grammar';
import type { WatermarkProps } from '../watermarks';
import type { FontProps } from '../own-fonts';
import type { TemplateProps } from '../../lambda/origin/templates';

/** A site a key prefix is served from (see {@link ImageTransformerProps.webOrigins}). */
export interface WebOriginProps {
  /** The base URL a key's remainder is appended to: http(s), ending in `/`, without credentials, query or fragment. */
  readonly url: string;
  /**
   * How long a variant is served before the site is asked whether its image changed.
   * @default Duration.days(1)
   */
  readonly revalidateAfter?: Duration;
}

/** The props of the URLs served: sizes, presets, watermarks, web sources, dialects, signing. */
export interface UrlGrammarProps {
  /**
   * Largest width or height a request may ask for and an output may have
   * (also the origin's MAX_DIMENSION).
   * @default 8192
   */
  readonly maxDimension?: number;

  /**
   * Allowed widths and heights (breakpoints). A requested size snaps up to the
   * next one; one above the largest is a 400. Bounds the variants per source.
   * @default - any size from 1 to maxDimension
   */
  readonly sizes?: number[];

  /**
   * Named parameter sets for `?preset=<name>`, e.g.
   * `{ thumb: { width: '200', height: '200', fit: 'cover' } }`. Checked at synth
   * time by the same grammar the edge runs: a typo fails `cdk synth`.
   * @default - no presets
   */
  readonly presets?: { [name: string]: Preset };

  /**
   * Serve presets only: any parameter other than `preset` is a 400.
   * Needs at least one preset.
   * @default false
   */
  readonly presetsOnly?: boolean;

  /**
   * Watermarks a URL asks for by name with `wm=<name>`: PNG files of the app,
   * packaged with the origin function (never served as sources), each with its
   * placement: `{ logo: { file: 'brand/logo.png', position: 'bottom-right', size: 0.2, opacity: 0.8 } }`.
   * A changed file or placement gets a new version in every canonical URI on
   * the next deploy, so no variant keeps the old one.
   * @default - no watermarks
   */
  readonly watermarks?: { [name: string]: WatermarkProps };

  /**
   * Key prefixes served only with a watermark, to its name: `{ 'users/': 'logo' }`.
   * Under a prefix, a URL without `wm=<name>` is a 403 that says what to add.
   * (Presets with `presetsOnly` or `signing` are the other way to make every URL carry one.)
   * @default - none
   */
  readonly requireWatermark?: { [prefix: string]: string };

  /**
   * Card templates a URL fills by name with `template=<name>` (docs/templates.md):
   * a canvas (`width`, `height`, a `background` colour, a `source` key beneath)
   * and up to 8 `slots`, image slots (`box`, `fit`, `position`; the URL's key
   * fills the first) and text slots (`box`, `font`, `size` [min, max],
   * `colour`, `align`, `maxLength`, `required`):
   * `{ og: { width: 1200, height: 630, background: '#101828', slots: { photo: { kind: 'image', box: [0, 0, 600, 630] }, title: { kind: 'text', box: [640, 60, 500, 510], font: 'sans-bold', size: [36, 72], colour: '#ffffff' } } } }`.
   * Checked at synth; a changed template gets a new version in every canonical URI.
   * @default - no templates
   */
  readonly templates?: { [name: string]: TemplateProps };

  /**
   * The deployment's own fonts, which `text-font=<name>` and a card's text
   * slots name beside the packaged `sans` and `sans-bold`: TrueType or
   * OpenType files of the app (not WOFF or collections), packaged with the
   * origin function: `{ brand: { file: 'brand/Brand-Regular.ttf' } }`. A name is
   * lower-case letters, digits and -; at most 8 fonts, 20 MiB each
   * (docs/text.md). Checked at synth: each file's family is read from it, and
   * must be its own. A font's changed file under the same name keeps the URIs
   * of the variants already made: give it a new name.
   * @default - the packaged fonts alone
   */
  readonly fonts?: { [name: string]: FontProps };

  /**
   * A PNG or JPEG of the app (at most 1 MiB and 4 megapixels, 8 bits per
   * sample), packaged with the origin function and answered in place of the
   * error for a source that is missing (404), of a type not read (415) or
   * damaged (422): made at the size and format the URL asks (at most
   * `sqrt(maxInlineBytes / 4.1)` px a side, 1047 px by default), with the
   * error's status and the error's short lifetime, and never stored. Bad URLs,
   * refusals and `format=json` keep their JSON errors.
   * @default - none: those errors answer JSON
   */
  readonly fallbackImage?: string;

  /**
   * Key prefixes served from web sites instead of the source bucket:
   * `{ 'shop/': { url: 'https://shop.example.com/images/' } }` serves
   * `/shop/a/b.jpg?w=640` from `https://shop.example.com/images/a/b.jpg`. The
   * origin fetches from that host alone (redirects included), only at public
   * addresses, within maxSourceBytes and the time budget, and reads the type
   * from the bytes ([web sources](docs/hostile-input.md#web-sources)). Each
   * prefix gets its own cache behavior, whose origin is the Lambda: it serves
   * the variant it stored for `revalidateAfter`, then asks the site whether
   * the image changed (ETag, Last-Modified) and makes it again if it did.
   * @default - none
   */
  readonly webOrigins?: { [prefix: string]: WebOriginProps };

  /**
   * Let `format=auto` choose AVIF for browsers that accept it. AVIF files are
   * smaller but take seconds to encode on the first request of each variant;
   * without it `format=auto` picks WebP. An explicit `format=avif` works either way.
   * @default true
   */
  readonly avif?: boolean;

  /**
   * What a URL without `hdr` does with a source's HDR gain map (Ultra HDR
   * JPEG): `keep` it in a JPEG output, where `format=auto` then stays JPEG,
   * or `drop` it for the SDR image in the format the browser takes best. The
   * edge writes the choice into the canonical URI, so changing it makes new
   * cache keys (docs/url-contract.md#hdr-gain-maps has the bytes and browsers
   * behind the default).
   * @default 'keep'
   */
  readonly hdr?: HdrMode;

  /**
   * Other image services' URL grammars served beside ours, so that a team can
   * move here without changing its URLs (docs/migrating.md): `dit` (AWS's
   * Dynamic Image Transformation: its base64 JSON requests under a behavior of
   * their own, `/eyJ*`, and its Thumbor paths everywhere else), `imgix`,
   * `cloudflare`. Each is translated at the edge into the canonical URI of the
   * native URL for the same image. `dit` and `imgix` both read every path: not both.
   * With `signing`, URLs are signed the dialect's way.
   * @default - none
   */
  readonly dialects?: DialectName[];

  /**
   * Require signed URLs (`sig`, see the URL contract), verified with secrets in
   * the viewer-request function's KeyValueStore
   * ({@link ImageTransformer.keyValueStore}). The construct never sees a secret: after
   * deploying, the operator puts the active secrets (comma- or
   * newline-separated; several at once for rotation) under the key
   * `signing-secrets`:
   * `aws cloudfront-keyvaluestore put-key --kvs-arn <arn> --key signing-secrets --value <secrets> --if-match <etag>`
   * (the ETag from `describe-key-value-store`). Until then every request is
   * refused with 403.
   * @default false
   */
  readonly signing?: boolean;

  /**
   * Presets made as soon as a source image is created (by the invalidation
   * Lambda), so that the first viewer gets a cache hit. Each must be a preset.
   * @default - none
   */
  readonly eagerPresets?: string[];

  /**
   * With `signing` and `eagerPresets`: the secret the warming requests are
   * signed with, one of those in the KeyValueStore. Prefer a reference, e.g.
   * `SecretValue.secretsManager('image-signing-secret')`: CloudFormation resolves
   * it at deploy time, so it is not in the template (it is in the invalidation
   * Lambda's environment).
   * @default - none; required when signing is on and eagerPresets is not empty
   */
  readonly eagerSigningSecret?: SecretValue;
}
