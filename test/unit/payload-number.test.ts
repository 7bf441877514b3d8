// Numbers in incoming webhook payloads (issue 21): a JSON number that is a whole number from 1 to
// 2^53 - 1, or a string of ASCII digits without a leading zero. docs/design/deliveries.md.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { payloadNumber } from '../../src/domain/webhooks.ts';

describe('payloadNumber', () => {
  it('reads JSON numbers and ASCII digit strings', () => {
    expect(payloadNumber(8)).toBe(8);
    expect(payloadNumber('8')).toBe(8);
    expect(payloadNumber('1234567890')).toBe(1234567890);
    expect(payloadNumber(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    '0x10',
    '1e3',
    ' 8',
    '8 ',
    '+8',
    '-8',
    '08',
    '0',
    '8.0',
    '8_0',
    '\uFF18',
    '\u0668',
    '8\u0000',
    '',
    '\t8',
    '99999999999999999999',
    '9007199254740993',
    0,
    -1,
    8.5,
    1e21,
    Number.MAX_SAFE_INTEGER + 1,
    Number.NaN,
    Infinity,
    true,
    null,
    undefined,
    [8],
    { n: 8 },
    8n,
  ])('refuses %o', (v) => {
    expect(payloadNumber(v)).toBeNull();
  });

  it('accepts exactly the canonical decimal spelling of a safe positive integer', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 20 }), (s) => {
        const canonical = /^[1-9][0-9]*$/.test(s) && Number.isSafeInteger(Number(s));
        expect(payloadNumber(s)).toBe(canonical ? Number(s) : null);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(payloadNumber(String(n))).toBe(n);
      }),
    );
  });
});
