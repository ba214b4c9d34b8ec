// Which addresses a web source may come from: every refused range at its
// edges, the public addresses just outside them, IPv6 forms that carry an
// IPv4 address, and the spellings of an IP in a URL that WHATWG parsing
// turns into one.

import { BlockList, isIPv4 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressRefusal } from '../../../lambda/origin/web/addresses';

/** Each refused range, by its first and last address, and the range the log names. */
const REFUSED: [first: string, last: string, range: string][] = [
  ['0.0.0.0', '0.255.255.255', '0.0.0.0/8'],
  ['10.0.0.0', '10.255.255.255', '10.0.0.0/8'],
  ['100.64.0.0', '100.127.255.255', '100.64.0.0/10'],
  ['127.0.0.0', '127.255.255.255', '127.0.0.0/8'],
  ['169.254.0.0', '169.254.255.255', '169.254.0.0/16'],
  ['172.16.0.0', '172.31.255.255', '172.16.0.0/12'],
  ['192.0.0.0', '192.0.0.255', '192.0.0.0/24'],
  ['192.0.2.0', '192.0.2.255', '192.0.2.0/24'],
  ['192.88.99.0', '192.88.99.255', '192.88.99.0/24'],
  ['192.168.0.0', '192.168.255.255', '192.168.0.0/16'],
  ['198.18.0.0', '198.19.255.255', '198.18.0.0/15'],
  ['198.51.100.0', '198.51.100.255', '198.51.100.0/24'],
  ['203.0.113.0', '203.0.113.255', '203.0.113.0/24'],
  ['224.0.0.0', '239.255.255.255', '224.0.0.0/4'],
  ['240.0.0.0', '255.255.255.255', '240.0.0.0/4'],
  ['::', '::ffff:ffff', '::/96'],
  ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::/48'],
  ['100::', '100::ffff:ffff:ffff:ffff', '100::/64'],
  ['2001::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', '2001::/23'],
  ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db8::/32'],
  ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff::/20'],
  ['fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fc00::/7'],
  ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fe80::/10'],
  ['ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ff00::/8'],
];

/** The addresses that matter most, and the range that refuses each. */
const NAMED: [address: string, range: string][] = [
  ['169.254.169.254', '169.254.0.0/16'], // EC2, ECS and Lambda metadata
  ['127.0.0.1', '127.0.0.0/8'], // the Lambda Runtime API is 127.0.0.1:9001
  ['fd00:ec2::254', 'fc00::/7'], // EC2's metadata service over IPv6
  ['::1', '::/96'],
  ['0.0.0.0', '0.0.0.0/8'], // Linux connects it to the local host
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/23'], // Teredo
  ['fe80::1%eth0', 'fe80::/10'], // a zone id changes nothing
  ['::1%lo', '::/96'],
];

/** IPv6 addresses carrying a refused IPv4 address, and that address. */
const CARRIERS: [address: string, carried: string, range: string][] = [
  ['::ffff:127.0.0.1', '127.0.0.1', '::ffff:0:0/96'],
  ['::ffff:7f00:1', '127.0.0.1', '::ffff:0:0/96'],
  ['::ffff:a9fe:a9fe', '169.254.169.254', '::ffff:0:0/96'],
  ['64:ff9b::10.1.2.3', '10.1.2.3', '64:ff9b::/96'],
  ['64:ff9b::a9fe:a9fe', '169.254.169.254', '64:ff9b::/96'],
  ['2002:7f00:1::', '127.0.0.1', '2002::/16'],
  ['2002:c0a8:101:0:0:0:0:1', '192.168.1.1', '2002::/16'],
  ['2002:6440:1::', '100.64.0.1', '2002::/16'],
];

/** Public addresses, several just outside a refused range. */
const PUBLIC = [
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '2001:200::1',
  '::ffff:1.1.1.1', // mapped, NAT64 and 6to4 forms of public addresses are public
  '64:ff9b::1.1.1.1',
  '2002:101:101::1',
];

describe('addresses a web source may be fetched from', () => {
  it.each(REFUSED)('refuses %s to %s (%s)', (first, last, range) => {
    expect(addressRefusal(first)).toContain(range);
    expect(addressRefusal(last)).toContain(range);
  });

  it.each(NAMED)('refuses %s (%s)', (address, range) => {
    expect(addressRefusal(address)).toContain(range);
  });

  it.each(CARRIERS)('refuses %s for the %s inside', (address, carried, range) => {
    const refusal = addressRefusal(address);
    expect(refusal).toContain(range);
    expect(refusal).toContain(`of ${carried}`);
  });

  it('refuses every IPv6 address outside global unicast 2000::/3, named or not', () => {
    for (const address of ['1::1', '1000::1', '4000::1', 'e000::1', 'fb00::1'])
      expect(addressRefusal(address)).toContain('not global unicast');
  });

  it.each(PUBLIC)('lets %s through', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    for (const text of ['', 'localhost', '127.1', '0x7f000001', '1.2.3.4.5', '::g', '[::1]'])
      expect(addressRefusal(text)).toBe('not an IP address');
  });

  it('lets loopback through only when asked, and nothing else it refuses', () => {
    expect(addressRefusal('127.0.0.1', true)).toBeUndefined();
    expect(addressRefusal('127.9.9.9', true)).toBeUndefined();
    expect(addressRefusal('::1', true)).toBeUndefined();
    for (const address of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '169.254.169.254',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::127.0.0.1',
      '64:ff9b::7f00:1',
    ]) {
      expect(addressRefusal(address, true), address).toBeDefined();
    }
  });
});

describe('every address, against an independent oracle', () => {
  // node:net's BlockList, given the refused ranges above by their first and last addresses, judges
  // random addresses too: no gap between the ranges, and nothing refused beyond them.
  const oracle = new BlockList();
  for (const [first, last] of REFUSED) oracle.addRange(first, last, isIPv4(first) ? 'ipv4' : 'ipv6');
  const v4Number = (address: string) => address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
  const v4Text = (value: number) => [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
  // Anywhere, or within 1000 of a range's end, where an off-by-one prefix length would show.
  const edges = REFUSED.filter(([first]) => isIPv4(first)).flatMap(([first, last]) => [v4Number(first), v4Number(last) + 1]);
  const nearEdge = fc.tuple(fc.constantFrom(...edges), fc.integer({ min: -1000, max: 1000 })).map(([edge, offset]) => edge + offset);
  const v4 = fc
    .oneof(fc.nat(2 ** 32 - 1), nearEdge)
    .filter((value) => value >= 0 && value < 2 ** 32)
    .map(v4Text);
  const group = fc.nat(0xffff).map((value) => value.toString(16));

  it('refuses an IPv4 address exactly when it is in a refused range', () => {
    fc.assert(
      fc.property(v4, (address) => (addressRefusal(address) !== undefined) === oracle.check(address, 'ipv4')),
      { numRuns: 20_000 },
    );
  });

  it('refuses an IPv6 address in global unicast exactly when it is in a refused range', () => {
    // The refused ranges inside 2000::/3 are small: half the draws start where they are, next to their ends.
    const first = fc.oneof(fc.integer({ min: 0x2000, max: 0x3fff }), fc.constantFrom(0x2001, 0x3fff));
    const second = fc.oneof(fc.nat(0xffff), fc.constantFrom(0x0, 0x1ff, 0x200, 0xdb7, 0xdb8, 0xdb9, 0xfff, 0x1000));
    const globalUnicast = fc
      .tuple(first, second, fc.array(group, { minLength: 6, maxLength: 6 }))
      .map(([one, two, rest]) => [one.toString(16), two.toString(16), ...rest].join(':'))
      .filter((address) => !address.startsWith('2002:')); // 6to4: below
    fc.assert(
      fc.property(globalUnicast, (address) => (addressRefusal(address) !== undefined) === oracle.check(address, 'ipv6')),
      { numRuns: 20_000 },
    );
  });

  it('judges mapped, NAT64 and 6to4 addresses by the IPv4 address they carry', () => {
    const hex = (address: string) => address.split('.').map((octet) => Number(octet).toString(16).padStart(2, '0'));
    const carriers = v4.chain((inner) => {
      const [a, b, c, d] = hex(inner);
      return fc.constantFrom([inner, `::ffff:${inner}`], [inner, `64:ff9b::${a}${b}:${c}${d}`], [inner, `2002:${a}${b}:${c}${d}::1`]);
    });
    fc.assert(
      fc.property(carriers, ([inner, address]) => (addressRefusal(address) !== undefined) === oracle.check(inner!, 'ipv4')),
      { numRuns: 20_000 },
    );
  });
});

describe('an IP address spelled in a URL', () => {
  // WHATWG URL parsing turns every IPv4 spelling into dotted decimal, and IPv6 into its short form:
  // the fetcher judges that hostname, so each of these is refused as the address it names.
  const SPELLINGS: [host: string, hostname: string][] = [
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['[::1]', '[::1]'],
    ['[0:0:0:0:0:0:0:1]', '[::1]'],
    ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'],
    ['[::ffff:7f00:1]', '[::ffff:7f00:1]'],
    ['[64:ff9b::127.0.0.1]', '[64:ff9b::7f00:1]'],
    ['[2002:7f00:1::]', '[2002:7f00:1::]'],
    ['[FD00:EC2::254]', '[fd00:ec2::254]'],
  ];

  it.each(SPELLINGS)('http://%s/ names %s, which is refused', (host, hostname) => {
    const url = new URL(`http://${host}/`);
    expect(url.hostname).toBe(hostname);
    expect(addressRefusal(url.hostname.replace(/^\[(.*)\]$/, '$1'))).toBeDefined();
  });

  it('cannot carry a zone id', () => {
    expect(() => new URL('http://[fe80::1%25eth0]/')).toThrow();
    expect(() => new URL('http://[::1%25lo]/')).toThrow();
  });
});
