// Which IP addresses a web source may be fetched from: public unicast only.
// Every address a host name resolves to, and every literal IP in a URL, is
// judged here before any connection is made. An IPv6 address that carries an
// IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 address inside.

import { isIPv4, isIPv6 } from 'node:net';

interface Range {
  /** The network's first address and prefix length, in the family's width (32 or 128 bits). */
  network: bigint;
  bits: number;
  /** What the range is, for the log: `10.0.0.0/8 (private)`. */
  name: string;
}

const V4_RANGES: [cidr: string, what: string][] = [
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback, incl. the Lambda Runtime API'],
  ['169.254.0.0/16', 'link-local, incl. the cloud metadata service'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved, incl. broadcast'],
];

/** Refused whatever follows; beyond these, only global unicast (2000::/3) is public. */
const V6_RANGES: [cidr: string, what: string][] = [
  ['::/96', 'unspecified, loopback and IPv4-compatible'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard'],
  ['2001::/23', 'IETF protocol assignments, incl. Teredo'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique local, incl. the EC2 metadata service fd00:ec2::254'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

/** IPv6 ranges that carry an IPv4 address, and the bit at which it starts. */
const V6_CARRIERS: [cidr: string, what: string, v4At: number][] = [
  ['::ffff:0:0/96', 'IPv4-mapped', 96],
  ['64:ff9b::/96', 'NAT64', 96],
  ['2002::/16', '6to4', 16],
];

const GLOBAL_UNICAST = parseRange('2000::/3', 'global unicast');

function v4Value(address: string): bigint {
  return address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

/** A valid IPv6 address (without zone) as 128 bits: `::` expanded, a dotted IPv4 tail as two groups. */
function v6Value(address: string): bigint {
  const groupsOf = (part: string): bigint[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [BigInt(`0x${group}`)];
      const v4 = v4Value(group);
      return [v4 >> 16n, v4 & 0xffffn];
    });
  };
  const [head = '', tail] = address.split('::');
  const before = groupsOf(head);
  const after = tail === undefined ? [] : groupsOf(tail);
  const groups = [...before, ...Array<bigint>(8 - before.length - after.length).fill(0n), ...after];
  return groups.reduce((value, group) => (value << 16n) | group, 0n);
}

function parseRange(cidr: string, what: string): Range {
  const [address = '', bits = ''] = cidr.split('/');
  return { network: isIPv4(address) ? v4Value(address) : v6Value(address), bits: Number(bits), name: `${cidr} (${what})` };
}

const contains = (range: Range, value: bigint, width: number) =>
  value >> BigInt(width - range.bits) === range.network >> BigInt(width - range.bits);

const v4Ranges = V4_RANGES.map(([cidr, what]) => parseRange(cidr, what));
const v6Ranges = V6_RANGES.map(([cidr, what]) => parseRange(cidr, what));
const v6Carriers = V6_CARRIERS.map(([cidr, what, v4At]) => ({ range: parseRange(cidr, what), v4At }));

function v4Refusal(value: bigint): string | undefined {
  return v4Ranges.find((range) => contains(range, value, 32))?.name;
}

const v4Text = (value: bigint) => [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 0xffn).join('.');

const V4_LOOPBACK = parseRange('127.0.0.0/8', 'loopback');

/**
 * Why an IP address may not be fetched from (the range it is in, for the
 * log), or undefined for a public address. Anything that is not an IP
 * address (a name, a typo) is refused too. A zone id (`fe80::1%eth0`) is
 * ignored: the address decides. `allowLoopback` lets 127.0.0.0/8 and ::1
 * through, for tests and the local emulator only.
 */
export function addressRefusal(address: string, allowLoopback = false): string | undefined {
  if (isIPv4(address)) {
    const value = v4Value(address);
    return allowLoopback && contains(V4_LOOPBACK, value, 32) ? undefined : v4Refusal(value);
  }
  const bare = address.split('%')[0] ?? '';
  if (!isIPv6(bare)) return 'not an IP address';
  const value = v6Value(bare);
  if (allowLoopback && value === 1n) return undefined;
  for (const { range, v4At } of v6Carriers) {
    if (!contains(range, value, 128)) continue;
    const v4 = (value >> BigInt(128 - v4At - 32)) & 0xffffffffn;
    const refusal = v4Refusal(v4);
    return refusal && `${range.name} of ${v4Text(v4)}, ${refusal}`;
  }
  const named = v6Ranges.find((range) => contains(range, value, 128))?.name;
  if (named) return named;
  return contains(GLOBAL_UNICAST, value, 128) ? undefined : 'outside 2000::/3 (not global unicast)';
}
