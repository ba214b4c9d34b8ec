// The items of a HEIF's meta box, looked up for a set of items at a time:
// their types (iinf), properties (ipma, ipco), references (iref) and bytes
// (iloc). Each lookup walks its box once, whatever the number of items asked
// for, so that sizing a grid of 65536 tiles stays linear in the file.

import { childBoxes, eachBox, HeifDamaged, itemLocations, reader, type Box } from './heif-boxes';

/** The boxes of meta that describe its items. */
export interface HeifMeta {
  bytes: Buffer;
  pitm: Box;
  iinf: Box;
  iloc: Box;
  ipco: Box;
  ipma: Box;
  iref?: Box;
  idat?: Box;
}

export function heifMeta(bytes: Buffer): HeifMeta {
  const top = childBoxes(bytes, { type: 'file', start: 0, end: bytes.length }, ['ftyp', 'meta']);
  const meta = top.get('meta');
  if (!top.has('ftyp') || !meta) throw new HeifDamaged('no ftyp or meta box');
  const parts = childBoxes(bytes, meta, ['pitm', 'iinf', 'iloc', 'iprp', 'iref', 'idat'], 4);
  const [pitm, iinf, iloc, iprp] = ['pitm', 'iinf', 'iloc', 'iprp'].map((type) => parts.get(type));
  if (!pitm || !iinf || !iloc || !iprp) throw new HeifDamaged('meta lacks pitm, iinf, iloc or iprp');
  const properties = childBoxes(bytes, iprp, ['ipco', 'ipma']);
  const [ipco, ipma] = [properties.get('ipco'), properties.get('ipma')];
  if (!ipco || !ipma) throw new HeifDamaged('iprp lacks ipco or ipma');
  return { bytes, pitm, iinf, iloc, ipco, ipma, iref: parts.get('iref'), idat: parts.get('idat') };
}

/** An item's four-character type, and for a `mime` item its content's (XMP's is `application/rdf+xml`). */
export interface ItemType {
  type: string;
  contentType?: string;
}

/** The type of each of `items`, every item's without it (an item described twice is refused: which description libheif keeps is its own choice). */
export function itemTypes(meta: HeifMeta, items?: Set<number>): Map<number, ItemType> {
  const { bytes, iinf } = meta;
  const countSize = reader(bytes, iinf).fullBox().version === 0 ? 2 : 4;
  const types = new Map<number, ItemType>();
  eachBox(bytes, iinf.start + 4 + countSize, iinf.end, (infe) => {
    if (infe.type !== 'infe') return;
    const entry = reader(bytes, infe);
    const { version } = entry.fullBox();
    if (version < 2) return; // versions 0 and 1 describe files, not images
    const item = entry.uint(version === 2 ? 2 : 4);
    if (items && !items.has(item)) return;
    if (types.has(item)) throw new HeifDamaged(`item ${item} is described twice`);
    entry.uint(2); // protection index
    const type = entry.type();
    if (type !== 'mime') return void types.set(item, { type });
    entry.text(); // the item's name
    types.set(item, { type, contentType: entry.text() });
  });
  return types;
}

/**
 * The properties of each of `items`: the first box of each type that ipma
 * associates with it, in ipma's order. Indices are gathered as sets (at most
 * 32768 an item), so an ipma that repeats itself costs time, not memory.
 */
export function itemProperties(meta: HeifMeta, items: Set<number>): Map<number, Map<string, Box>> {
  const { bytes, ipma, ipco } = meta;
  const fields = reader(bytes, ipma);
  const { version, flags } = fields.fullBox();
  const indices = new Map<number, Set<number>>();
  for (let entries = fields.uint(4); entries > 0; entries--) {
    const id = fields.uint(version < 1 ? 2 : 4);
    const own = items.has(id) ? (indices.get(id) ?? indices.set(id, new Set()).get(id)!) : undefined;
    for (let associations = fields.uint(1); associations > 0; associations--) {
      const index = flags & 1 ? fields.uint(2) & 0x7fff : fields.uint(1) & 0x7f; // the top bit says "essential"
      own?.add(index);
    }
  }
  const wanted = new Set([...indices.values()].flatMap((set) => [...set]));
  const boxes = new Map<number, Box>();
  let index = 0;
  eachBox(bytes, ipco.start, ipco.end, (property) => {
    if (wanted.has(++index)) boxes.set(index, property);
  });
  const properties = new Map<number, Map<string, Box>>();
  for (const item of items) {
    const own = new Map<string, Box>();
    for (const at of indices.get(item) ?? []) {
      const box = boxes.get(at);
      if (at !== 0 && !box) throw new HeifDamaged(`item ${item} has property ${at}, beyond ipco's ${index}`);
      if (box && !own.has(box.type)) own.set(box.type, box);
    }
    properties.set(item, own);
  }
  return properties;
}

/** Calls `visit` with each reference of iref: its type, the item it is from, and a reader of the items it points to. */
function eachReference(meta: HeifMeta, visit: (type: string, from: number, to: () => number[]) => void): void {
  const { bytes, iref } = meta;
  if (!iref) return;
  const idSize = reader(bytes, iref).fullBox().version === 0 ? 2 : 4;
  eachBox(bytes, iref.start + 4, iref.end, (reference) => {
    const fields = reader(bytes, reference);
    const from = fields.uint(idSize);
    const count = fields.uint(2);
    visit(reference.type, from, () => Array.from({ length: count }, () => fields.uint(idSize)));
  });
}

/** The items `from` points to with references of `type`; two such references from it are refused (libheif reads only the first). */
export function referencesFrom(meta: HeifMeta, type: string, from: number): number[] {
  let found: number[] | undefined;
  eachReference(meta, (kind, item, to) => {
    if (kind !== type || item !== from) return;
    if (found) throw new HeifDamaged(`item ${from} has two ${type} references`);
    found = to();
  });
  return found ?? [];
}

/** The items with a reference of `type` to `to` (for `auxl`: its auxiliary images). */
export function referencesTo(meta: HeifMeta, type: string, to: number): number[] {
  const from: number[] = [];
  eachReference(meta, (kind, item, targets) => {
    if (kind === type && targets().includes(to)) from.push(item);
  });
  return from;
}

/**
 * Where the bytes of each of `items` (of every item, without it) are, every
 * extent in order, as ranges of the file (in it, or in meta's idat). Data in
 * another file or built from other items is refused, and so are items that
 * share a byte: libde265 would decode the same bytes once for each, which
 * their count alone does not show.
 */
export function itemRanges(meta: HeifMeta, items?: Set<number>): Map<number, [number, number][]> {
  const { bytes, iloc, idat } = meta;
  const ranges = new Map<number, [number, number][]>();
  for (const location of itemLocations(bytes, iloc, items)) {
    const { item, method, reference, base } = location;
    if (ranges.has(item)) throw new HeifDamaged(`item ${item} is located twice`);
    if (reference !== 0 || method > 1) throw new HeifDamaged(`item ${item}'s data is not in this file's bytes (method ${method})`);
    const [start, end] = method === 1 ? [idat?.start ?? 0, idat?.end ?? 0] : [0, bytes.length];
    let total = 0;
    ranges.set(
      item,
      location.extents().map(({ offset, length }): [number, number] => {
        const at = start + base.value + offset;
        const until = length === 0 ? end : at + length;
        total += until - at;
        if (at > end || until > end || total > bytes.length) throw new HeifDamaged(`item ${item}'s data is not where iloc says`);
        return [at, until];
      }),
    );
  }
  const all = [...ranges.values()].flat().sort((a, b) => a[0] - b[0]);
  let reached = 0;
  for (const [at, until] of all) {
    if (at < reached) throw new HeifDamaged('two items share their data');
    reached = Math.max(reached, until);
  }
  for (const item of items ?? []) if (!ranges.has(item)) throw new HeifDamaged(`item ${item} has no location`);
  return ranges;
}

/** The bytes of each of `items` (itemRanges'); an item of more than `maxBytes` is left out of the answer, never copied. */
export function itemData(meta: HeifMeta, items: Set<number>, maxBytes = Infinity): Map<number, Buffer> {
  const ranges = itemRanges(meta, items);
  const data = new Map<number, Buffer>();
  for (const item of items) {
    const own = ranges.get(item)!;
    if (own.reduce((sum, [at, until]) => sum + until - at, 0) > maxBytes) continue;
    data.set(item, Buffer.concat(own.map(([at, until]) => meta.bytes.subarray(at, until))));
  }
  return data;
}
