// What the origin reads of an SVG's text before librsvg sees it: whether the
// first bytes start an SVG document, and why one is not rendered. Untrusted
// bytes, so every scan here moves forward only: linear in the text, whatever
// it holds (a regular expression with nested repeats took minutes on a few
// hundred bytes of comments).

/**
 * Largest SVG source rendered (SVG_POLICY=rasterize), below MAX_SOURCE_BYTES: the XML
 * parser and the renderer hold and walk the whole document, whatever size is asked for.
 * Kept here, in a module that does not import sharp: the management API's Lambda reads it and has no sharp.
 */
export const MAX_SVG_BYTES = 1024 * 1024;

/** White space as the earlier expressions' `\s` read it, within Latin-1. */
const isSpace = (code: number) => code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0;

/** The first position from `at` that is not white space. */
function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** Where white space after the end of `<open ... close` leads; -1 when it does not close. */
function after(text: string, at: number, close: string): number {
  const end = text.indexOf(close, at);
  return end === -1 ? -1 : skipSpace(text, end + close.length);
}

/**
 * Whether `head` (the first bytes, as Latin-1) starts an SVG document: an
 * optional UTF-8 byte order mark, an optional XML declaration, comments and
 * at most one `<!DOCTYPE svg ...>`, whose internal subset (`[...]`, as
 * Illustrator writes) ends at the first `]` before `>`, then `<svg` and white
 * space or `>`. Case-insensitive, as libvips' own sniffing is.
 */
export function startsAsSvg(head: string): boolean {
  const text = head.toLowerCase();
  let at = skipSpace(text, text.startsWith('\xef\xbb\xbf') ? 3 : 0);
  if (text.startsWith('<?xml', at)) at = after(text, at, '>');
  let doctypeSeen = false;
  while (at !== -1) {
    if (text.startsWith('<!--', at)) {
      at = after(text, at + 4, '-->');
    } else if (!doctypeSeen && text.startsWith('<!doctype svg', at)) {
      doctypeSeen = true;
      at = afterDoctype(text, at);
    } else {
      return text.startsWith('<svg', at) && at + 4 < text.length && (isSpace(text.charCodeAt(at + 4)) || text[at + 4] === '>');
    }
  }
  return false;
}

/** Where white space after a DOCTYPE starting at `at` leads; -1 when it does not close. */
function afterDoctype(text: string, at: number): number {
  let end = at;
  while (end < text.length && text[end] !== '[' && text[end] !== '>') end++;
  if (text[end] !== '[') return end < text.length ? skipSpace(text, end + 1) : -1;
  // The internal subset: to the first `]` that white space and `>` follow.
  for (let close = text.indexOf(']', end); close !== -1; close = text.indexOf(']', close + 1)) {
    const next = skipSpace(text, close + 1);
    if (text[next] === '>') return skipSpace(text, next + 1);
  }
  return -1;
}

/** A code point as text, or nothing when there is no such character. */
const codePoint = (code: number) => (code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '');

/** A letter, digit or `_` (in lower-case text): what `\b` tells from a word's start. */
const isNameCharacter = (code: number) => (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x5f;

/** Encoding names (lower case, quoted either way) that read as UTF-8 here. */
const UTF8_NAMES = ['utf-8', 'utf8', 'us-ascii', 'ascii'];

/** Whether one XML declaration's text (from `<?xml` to before its `>`) names an encoding other than UTF-8. */
function namesOtherEncoding(declaration: string): boolean {
  for (let at = declaration.indexOf('encoding'); at !== -1; at = declaration.indexOf('encoding', at + 1)) {
    if (at > 0 && isNameCharacter(declaration.charCodeAt(at - 1))) continue; // part of a longer name
    const eq = skipSpace(declaration, at + 'encoding'.length);
    if (declaration[eq] !== '=') continue;
    const value = skipSpace(declaration, eq + 1);
    const quoted = (name: string) =>
      `"'`.includes(declaration[value] ?? '-') &&
      declaration.startsWith(name, value + 1) &&
      `"'`.includes(declaration[value + 1 + name.length] ?? '-');
    if (!UTF8_NAMES.some(quoted)) return true;
  }
  return false;
}

/** Whether any `<?xml ...>` in the (lower-case) text names an encoding other than UTF-8. */
function declaresOtherEncoding(text: string): boolean {
  // Declarations do not overlap, so each character is looked at once.
  for (let start = text.indexOf('<?xml'); start !== -1;) {
    const end = text.indexOf('>', start);
    if (namesOtherEncoding(text.slice(start, end === -1 ? text.length : end))) return true;
    start = end === -1 ? -1 : text.indexOf('<?xml', end);
  }
  return false;
}

/**
 * Why an SVG is not rendered even under SVG_POLICY=rasterize, or undefined.
 * librsvg loads no file or http reference (it has no base URL), but it does
 * decode a data: URL in full, whatever its pixels: a PNG bomb in a 65 KB SVG
 * took 3.5 GB, past MAX_INPUT_PIXELS, which sees only the SVG's own size. So:
 * - no data: URL anywhere (images, `<use>`d or XIncluded documents,
 *   stylesheets), looked for after XML character references and CSS escapes
 *   are decoded and tabs and newlines dropped, as a URL parser drops them;
 * - no entity declarations, which could assemble such a URL (or markup) that
 *   the text does not show, and expand past any byte limit;
 * - no text encoding but UTF-8 (or its subsets), in which the text is read here.
 * Each expression below matches at most a few characters from each position
 * it tries (no nested or adjacent repeats), so each pass is linear.
 */
export function svgRefusal(bytes: Buffer): string | undefined {
  const text = bytes.toString('latin1');
  const lower = text.toLowerCase();
  if (lower.includes('<!entity')) return 'it declares XML entities';
  if (declaresOtherEncoding(lower)) return 'its encoding is not UTF-8';
  const decoded = text
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => codePoint(parseInt(hex, 16)))
    .replace(/&#([0-9]+);?/g, (_, decimal: string) => codePoint(parseInt(decimal, 10)))
    .replace(/\\([0-9a-f]{1,6})[ \t\r\n\f]?/gi, (_, hex: string) => codePoint(parseInt(hex, 16)))
    .replace(/\\([^\r\n\f])/g, '$1')
    .replace(/[\t\r\n]/g, '');
  if (/(^|[^a-z0-9+.-])data:/i.test(decoded)) return 'it embeds a data: URL';
  return undefined;
}
