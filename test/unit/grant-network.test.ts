// networkOf(): the network a URL grant is bound to (docs/design/grants.md): an IPv4 address itself,
// an IPv6 address's /64, whatever way the address is written.
import { describe, expect, it } from 'vitest';
import { networkOf } from '../../src/serve/grants.ts';

describe('networkOf', () => {
  it('is the IPv4 address itself, also when written IPv4-mapped', () => {
    expect(networkOf('192.0.2.1')).toBe('192.0.2.1');
    expect(networkOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(networkOf('::FFFF:192.0.2.1')).toBe('192.0.2.1');
  });

  it("is an IPv6 address's /64, however it is written", () => {
    const same = ['2001:db8:0:1::1', '2001:0db8:0000:0001:abcd:0:0:9', '2001:DB8:0:1:ffff:ffff:ffff:ffff', '2001:db8::1:0:0:0:1'];
    expect(new Set(same.map(networkOf))).toEqual(new Set(['2001:db8:0:1::/64']));
    expect(networkOf('2001:db8:0:2::1')).not.toBe(networkOf('2001:db8:0:1::1'));
    expect(networkOf('::1')).toBe('0:0:0:0::/64');
    expect(networkOf('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('keeps anything else as it is, so no two clients share a network by accident', () => {
    expect(networkOf(undefined)).toBe('');
    expect(networkOf('not an address')).toBe('not an address');
  });
});
