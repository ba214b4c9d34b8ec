// XMP kept by allowlist: the source's packet is read, the properties
// metadata-fields.ts lists for the mode are taken out of it (by namespace URI
// and local name, whatever prefix the source used), and a fresh packet is
// written with them alone. Only a property of an rdf:Description is read, and
// only when its value is text or an array of texts with no attribute but a
// language: a typed node, a structure, an attribute nested in a property and
// an unknown namespace never reach the output. The packet is read once,
// tag by tag, in time linear in its length.

import { XMP_NAMESPACES, type KeepingMode, type XmpNamespace } from './metadata-fields';

const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const XML = 'http://www.w3.org/XML/1998/namespace';
const ARRAYS = ['Alt', 'Seq', 'Bag'];

/** A property kept: its namespace and local name, and its value's texts (more than one only in an array). */
interface XmpProperty {
  namespace: XmpNamespace;
  name: string;
  array?: string;
  items: { text: string; lang?: string }[];
}

/** The properties each mode keeps, by namespace URI. */
const WANTED: Record<KeepingMode, Map<string, { namespace: XmpNamespace; names: Set<string> }>> = {
  copyright: new Map(XMP_NAMESPACES.map((namespace) => [namespace.uri, { namespace, names: new Set(namespace.copyright) }])),
  keep: new Map(
    XMP_NAMESPACES.map((namespace) => [namespace.uri, { namespace, names: new Set([...namespace.copyright, ...namespace.keep]) }]),
  ),
};

type Token =
  | { kind: 'open'; name: string; attributes: [string, string][]; empty: boolean }
  | { kind: 'close'; name: string }
  | { kind: 'text'; text: string | undefined }
  | { kind: 'malformed' };

/** Processing instructions and comments, skipped, and character data, read as it stands. */
const SKIPPED: [string, string][] = [
  ['<?', '?>'],
  ['<!--', '-->'],
];
const CDATA = ['<![CDATA[', ']]>'] as const;
/** A start, end or empty tag, at lastIndex. */
const TAG = /<\/?[^\s/>]+(?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*\/?>/y;
const ATTRIBUTE = /\s+([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
/** XML's predefined entities and character references; any other `&` is not plain XMP. */
const ENTITY = /&(?:#x([0-9a-fA-F]{1,6});|#([0-9]{1,7});|(amp|lt|gt|quot|apos);)?/g;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** `raw` with its references replaced, or undefined when one is not XML's own. */
function decoded(raw: string): string | undefined {
  let valid = true;
  const text = raw.replace(ENTITY, (match, hex?: string, decimal?: string, name?: string) => {
    if (name) return PREDEFINED[name]!;
    const code = hex ? parseInt(hex, 16) : decimal ? Number(decimal) : NaN;
    if (!(code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff))) valid = false;
    return valid ? String.fromCodePoint(code) : match;
  });
  return valid ? text : undefined;
}

/** The packet's tags and texts in order; a DOCTYPE, an unclosed comment or a tag that is not one ends it as malformed. */
function* xmlTokens(xmp: string): Generator<Token> {
  let at = 0;
  while (at < xmp.length) {
    const open = xmp.indexOf('<', at);
    if (open !== at) yield { kind: 'text', text: decoded(xmp.slice(at, open === -1 ? xmp.length : open)) };
    if (open === -1) return;
    const skipped = SKIPPED.find(([opener]) => xmp.startsWith(opener, open));
    const cdata = xmp.startsWith(CDATA[0], open);
    if (skipped || cdata) {
      const [opener, closer] = skipped ?? CDATA;
      const close = xmp.indexOf(closer, open + opener.length);
      if (close === -1) return yield { kind: 'malformed' };
      if (cdata) yield { kind: 'text', text: xmp.slice(open + opener.length, close) };
      at = close + closer.length;
      continue;
    }
    TAG.lastIndex = open;
    const tag = xmp.startsWith('<!', open) ? undefined : TAG.exec(xmp)?.[0];
    if (!tag) return yield { kind: 'malformed' };
    at = open + tag.length;
    const name = /^<\/?([^\s/>]+)/.exec(tag)![1]!;
    if (tag.startsWith('</')) {
      yield { kind: 'close', name };
      continue;
    }
    // One attribute after another from where the last ended: a global search would start
    // again at every blank of a long run of them, in quadratic time.
    const attributes: [string, string][] = [];
    ATTRIBUTE.lastIndex = name.length + 1;
    for (let match = ATTRIBUTE.exec(tag); match; match = ATTRIBUTE.exec(tag)) {
      const value = decoded(match[2] ?? match[3] ?? '');
      // An attribute with a bad reference is kept undecodable: whatever holds it is left out.
      attributes.push([match[1]!, value ?? '\0']);
    }
    yield { kind: 'open', name, attributes, empty: tag.endsWith('/>') };
  }
}

/** What an element is to the reader: where it stands in RDF, or left out with all it holds. */
type Role = 'outside' | 'rdf' | 'description' | 'property' | 'array' | 'item' | 'left';

interface Element {
  name: string;
  role: Role;
  /** The prefixes it declares, undeclared when it closes. */
  declares: string[];
}

/** Namespace prefixes in scope: each prefix's declarations, innermost last (the default namespace under ''). */
class Scopes {
  private readonly uris = new Map<string, string[]>([['xml', [XML]]]);

  declare(attributes: [string, string][]): string[] {
    const declared: string[] = [];
    for (const [name, value] of attributes) {
      if (name !== 'xmlns' && !name.startsWith('xmlns:')) continue;
      const prefix = name.slice(6);
      (this.uris.get(prefix) ?? this.uris.set(prefix, []).get(prefix)!).push(value);
      declared.push(prefix);
    }
    return declared;
  }

  undeclare(prefixes: string[]): void {
    for (const prefix of prefixes) this.uris.get(prefix)!.pop();
  }

  /** A qualified name's namespace URI and local name; an unprefixed attribute has no namespace. */
  resolve(qualified: string, attribute = false): { uri: string | undefined; local: string } {
    const colon = qualified.indexOf(':');
    if (colon === -1 && attribute) return { uri: undefined, local: qualified };
    const uri = this.uris.get(colon === -1 ? '' : qualified.slice(0, colon))?.at(-1);
    return { uri, local: qualified.slice(colon + 1) };
  }
}

/** An attribute that may stand on a value: a namespace declaration or the text's language. */
const harmless = (name: string) => name === 'xmlns' || name.startsWith('xmlns:') || name === 'xml:lang';
/** A language tag (RFC 5646's shape), the only text an attribute of a value may hold. */
const LANGUAGE = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,8}$/;

/**
 * The properties of `xmp` that `wanted` lists, in the packet's order (a
 * property named twice counts once); undefined when the packet is not the
 * plain XML an XMP packet is (a DOCTYPE, unbalanced tags). A value with a
 * reference XML does not define is left out.
 */
function readProperties(xmp: string, mode: KeepingMode, also: XmpNamespace[]): XmpProperty[] | undefined {
  const table = also.length
    ? new Map([...WANTED[mode], ...also.map((namespace) => [namespace.uri, { namespace, names: new Set(namespace.keep) }] as const)])
    : WANTED[mode];
  const wanted = (uri: string | undefined, local: string) => {
    const found = uri === undefined ? undefined : table.get(uri);
    return found?.names.has(local) ? found.namespace : undefined;
  };
  const scopes = new Scopes();
  const stack: Element[] = [];
  const properties = new Map<string, XmpProperty>();
  let current: (XmpProperty & { spoilt: boolean; text: string }) | undefined;
  const add = (property: XmpProperty) => {
    const key = `${property.namespace.uri} ${property.name}`;
    if (!properties.has(key) && property.items.some(({ text }) => text.trim())) properties.set(key, property);
  };
  for (const token of xmlTokens(xmp)) {
    if (token.kind === 'malformed') return undefined;
    const parent = stack.at(-1)?.role ?? 'outside';
    if (token.kind === 'text') {
      if (!current || (parent !== 'property' && parent !== 'array' && parent !== 'item')) continue;
      if (token.text === undefined || (parent === 'array' && token.text.trim())) current.spoilt = true;
      else if (parent === 'property') current.text += token.text;
      else current.items.at(-1)!.text += token.text;
      continue;
    }
    if (token.kind === 'close') {
      const element = stack.pop();
      if (element?.name !== token.name) return undefined;
      scopes.undeclare(element.declares);
      if (element.role === 'property' && current && !current.spoilt && (current.array ? !current.text.trim() : true)) {
        add(current.array ? current : { ...current, items: [{ text: current.text }] });
      }
      if (element.role === 'property') current = undefined;
      continue;
    }
    const declares = scopes.declare(token.attributes);
    const { uri, local } = scopes.resolve(token.name);
    const rdf = (names: string[]) => uri === RDF && names.includes(local);
    const lang = token.attributes.find(([name]) => name === 'xml:lang')?.[1];
    const plain =
      token.attributes.every(([name, value]) => harmless(name) && !value.includes('\0')) && (lang === undefined || LANGUAGE.test(lang));
    let role: Role = 'left';
    if (parent === 'outside') role = rdf(['RDF']) ? 'rdf' : 'outside';
    else if (parent === 'rdf' && rdf(['Description'])) role = 'description';
    else if (parent === 'description') {
      const namespace = plain ? wanted(uri, local) : undefined;
      if (namespace) [role, current] = ['property', { namespace, name: local, items: [], spoilt: false, text: '' }];
    } else if (parent === 'property' && current && plain && rdf(ARRAYS) && !current.array) {
      [role, current.array] = ['array', local];
    } else if (parent === 'array' && current && plain && rdf(['li'])) {
      role = 'item';
      current.items.push({ text: '', ...(lang ? { lang } : {}) });
    }
    // Anything else inside a property (a structure, an attribute, a second array) spoils it.
    if (role === 'left' && current) current.spoilt = true;
    if (role === 'description') {
      for (const [name, value] of token.attributes) {
        const attribute = scopes.resolve(name, true);
        const namespace = harmless(name) || value.includes('\0') ? undefined : wanted(attribute.uri, attribute.local);
        if (namespace) add({ namespace, name: attribute.local, items: [{ text: value }] });
      }
    }
    if (token.empty) {
      scopes.undeclare(declares);
      if (role === 'property') current = undefined;
    } else stack.push({ name: token.name, role, declares });
  }
  return stack.length === 0 ? [...properties.values()] : undefined;
}

const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** How keptXmp writes its packet. */
export interface PacketOptions {
  /** Namespaces kept beside the mode's (each its `keep` names); their texts written as attributes, as their readers expect. */
  also?: XmpNamespace[];
  /** The shortest form: no packet wrapper, no whitespace, no rdf:about, a description with no elements closed on itself. */
  compact?: boolean;
}

/** A fresh packet holding `properties` alone, each namespace declared under the table's prefix. */
function xmpPacket(properties: XmpProperty[], { also = [], compact = false }: PacketOptions): string {
  const namespaces = [...new Set(properties.map(({ namespace }) => namespace))];
  const [line, indent] = compact ? ['', ' '] : ['\n', '\n    '];
  const declarations = namespaces.map(({ prefix, uri }) => `${indent}xmlns:${prefix}="${uri}"`).join('');
  const attribute = (property: XmpProperty) => !property.array && also.includes(property.namespace);
  const attributes = properties
    .filter(attribute)
    .map(({ namespace, name, items }) => `${indent}${namespace.prefix}:${name}="${escaped(items[0]!.text)}"`)
    .join('');
  const values = properties
    .filter((property) => !attribute(property))
    .map(({ namespace, name, array, items }) => {
      const qualified = `${compact ? '' : '   '}<${namespace.prefix}:${name}>`;
      const close = `</${namespace.prefix}:${name}>`;
      if (!array) return `${qualified}${escaped(items[0]!.text)}${close}`;
      const lis = items.map(({ text, lang }) => `<rdf:li${lang ? ` xml:lang="${escaped(lang)}"` : ''}>${escaped(text)}</rdf:li>`);
      return `${qualified}<rdf:${array}>${lis.join('')}</rdf:${array}>${close}`;
    });
  const description = `<rdf:Description${compact ? '' : ' rdf:about=""'}${declarations}${attributes}`;
  const lines = [
    ...(compact ? [] : ['<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>']),
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    `${compact ? '' : ' '}<rdf:RDF xmlns:rdf="${RDF}">`,
    ...(compact && values.length === 0
      ? [`${description}/>`]
      : [`${compact ? '' : '  '}${description}>`, ...values, `${compact ? '' : '  '}</rdf:Description>`]),
    `${compact ? '' : ' '}</rdf:RDF>`,
    '</x:xmpmeta>',
    ...(compact ? [] : ['<?xpacket end="w"?>']),
  ];
  return lines.join(line);
}

/** The packet of what `mode` keeps of `xmp` (and `options.also`'s); undefined when nothing, or when `xmp` is not plain XML. */
export function keptXmp(xmp: string, mode: KeepingMode, options: PacketOptions = {}): string | undefined {
  const properties = readProperties(xmp, mode, options.also ?? []);
  return properties?.length ? xmpPacket(properties, options) : undefined;
}
