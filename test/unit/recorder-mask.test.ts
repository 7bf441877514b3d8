// Masking secrets in build logs: a project's variable values are hidden in the forms programs
// print them, not only as they are: JSON-escaped, URL-encoded, base64 (standard and URL-safe, at
// any alignment inside a longer encoded text). And what is held back from a partial write (or cut
// where output was not kept) is exactly what could be part of one.
import { describe, expect, it } from 'vitest';
import { MASK, Recorder, secretForms } from '../../src/builds/record.ts';
import type { PrismaClient } from '../../src/db/database.ts';
import { createEvents } from '../../src/events.ts';

// Masking reads no database: the recorder is made without one.
const recorder = (secrets: string[]) => new Recorder({ prisma: null as unknown as PrismaClient, events: createEvents() }, 1, secrets);

const SECRET = 's3cr3t value/with+odd "chars"&more=yes';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

describe('Recorder.mask', () => {
  const r = recorder([SECRET]);

  it.each([
    ['as it is', `token: ${SECRET}\n`],
    ['JSON-escaped', `{"token": ${JSON.stringify(SECRET)}}`],
    ['URL-encoded (encodeURIComponent)', `https://x.test/?t=${encodeURIComponent(SECRET)}&a=1`],
    ['URL-encoded with + for spaces', `t=${encodeURIComponent(SECRET).replace(/%20/g, '+')}&a=1`],
    ['as a form body', `${new URLSearchParams({ t: SECRET, a: '1' })}`],
    ['base64', `Authorization: Bearer ${b64(SECRET)}`],
    ['base64 after one byte', `x ${b64(`:${SECRET}`)}`],
    ['base64 after two bytes', `x ${b64(`u:${SECRET}`)}`],
    ['base64 inside Basic auth', `Authorization: Basic ${b64(`alice:${SECRET}`)}`],
    ['base64 URL-safe', `jwt=${b64url(SECRET)}`],
    ['base64 URL-safe after one byte', `jwt=${b64url(`.${SECRET}`)}`],
    ['base64 URL-safe after two bytes', `jwt=${b64url(`..${SECRET}`)}x`],
  ])('hides the value %s', (_, printed) => {
    const out = r.mask(printed);
    expect(out).toContain(MASK);
    for (const form of secretForms(SECRET)) expect(out).not.toContain(form);
    // Nothing longer than a few characters of any encoding of the value survives.
    const encodings = [SECRET, JSON.stringify(SECRET), encodeURIComponent(SECRET), b64(SECRET), b64url(SECRET)];
    for (const e of encodings) for (let i = 0; i + 12 <= e.length; i++) expect(out).not.toContain(e.slice(i, i + 12));
  });

  it('hides every percent-encoding programs write: quote, quote_plus, quote(safe=""), encodeURI, lower-case hex, every byte encoded', () => {
    // What Python's urllib.parse writes for SECRET (computed by hand from its rules: letters,
    // digits and `_.-~` kept; quote also keeps `/`; quote_plus writes a space as `+`).
    const quote = (v: string, safe: string, plus = false) =>
      [...Buffer.from(v, 'utf8')]
        .map((b) => {
          const c = String.fromCharCode(b);
          if (/[A-Za-z0-9_.~-]/.test(c) || safe.includes(c)) return c;
          if (plus && c === ' ') return '+';
          return `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
        })
        .join('');
    const value = `${SECRET} caf\u00e9 (1)!*~`;
    const m = recorder([value]);
    const lower = (s: string) => s.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
    const whole = [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    for (const [name, printed] of [
      ['quote', quote(value, '/')],
      ['quote_plus', quote(value, '', true)],
      ["quote(safe='')", quote(value, '')],
      ['quote, lower-case hex', lower(quote(value, '/'))],
      ['encodeURIComponent, lower-case hex', lower(encodeURIComponent(value))],
      ['encodeURI', encodeURI(value)],
      ['every byte, lower-case', whole],
      ['every byte, upper-case', whole.toUpperCase()],
      ["Python's json.dumps", JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)],
    ]) {
      const out = m.mask(`url=https://x.test/?t=${printed}&a=1`);
      expect(out, name).toBe(`url=https://x.test/?t=${printed.startsWith('"') ? `"${MASK}"` : MASK}&a=1`);
    }
  });

  it('covers base64 of the value at each of the three alignments, standard and URL-safe', () => {
    // A value whose encodings contain + and /, so the URL-safe forms differ.
    const value = '\u00fb\u00ef\u00bf\u00ff\u00fe>?secret-with-bits';
    const m = recorder([value]);
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:', 'https://u:']) {
      for (const encode of [b64, b64url]) {
        const printed = `<${encode(`${prefix + value}tail`)}>`;
        const out = m.mask(printed);
        expect(out, `${prefix} ${printed}`).toContain(MASK);
        expect(out.length, `${prefix} ${printed}`).toBeLessThan(printed.length);
      }
    }
  });

  it('hides a JSON-escaped value with newlines, quotes, backslashes and non-ASCII characters', () => {
    const value = 'line1\nline2\t"quoted" \\ back \u00e9\u00e8 \u2603';
    const m = recorder([value]);
    const json = JSON.stringify({ value });
    expect(m.mask(json)).toBe(`{"value":"${MASK}"}`);
    expect(m.mask(encodeURIComponent(value))).toBe(MASK);
    expect(m.mask(value)).toBe(MASK);
  });

  it('masks each of several secrets, the longer one whole when one contains another', () => {
    const m = recorder(['abcd-1234', 'abcd-1234-longer-one']);
    expect(m.mask('a abcd-1234-longer-one b abcd-1234 c')).toBe(`a ${MASK} b ${MASK} c`);
    expect(m.mask(b64('abcd-1234-longer-one'))).not.toContain(b64('abcd-1234-longer-one').slice(2, 20));
  });

  it('masks a very short value only as a whole word, and not its encodings (they would hide ordinary text)', () => {
    const m = recorder(['ab1']);
    expect(m.mask('ab1 cab1 ab1x ab1')).toBe(`${MASK} cab1 ab1x ${MASK}`);
    expect(secretForms('ab1')).toEqual(['ab1']);
    // Four characters: no base64 piece is long enough to mask without hitting other text; the
    // value percent-encoded byte by byte is (12 characters no ordinary text holds).
    expect(secretForms('abcd').filter((f) => f !== 'abcd')).toEqual(['%61%62%63%64']);
    expect(secretForms('abcdef').length).toBeGreaterThan(1);
  });

  it('leaves text without secrets as it is', () => {
    expect(r.mask('Running Sphinx v7.2.6\nbuild succeeded.\n')).toBe('Running Sphinx v7.2.6\nbuild succeeded.\n');
    expect(recorder([]).mask(`token ${SECRET}`)).toBe(`token ${SECRET}`);
  });
});

describe('what is held back where output is cut', () => {
  const value = 'hunter2-very-secret';
  const r = recorder([value]);

  it('the end that could be the start of the value or of any of its forms', () => {
    for (const form of secretForms(value)) {
      for (const k of [1, 3, form.length - 1]) {
        const text = `ordinary output ${form.slice(0, k)}`;
        expect(r.unsafeTail(text), `${form} cut to ${k}`).toBeGreaterThanOrEqual(k);
      }
    }
    expect(r.unsafeTail('ordinary output\n')).toBe(0);
  });

  it('the start that could be the end of the value or of any of its forms', () => {
    for (const form of secretForms(value)) {
      for (const k of [1, 3, form.length - 1]) {
        const text = `${form.slice(form.length - k)} more output`;
        expect(r.unsafeHead(text), `${form} from ${form.length - k}`).toBeGreaterThanOrEqual(k);
      }
    }
    expect(r.unsafeHead('more output\n')).toBe(0);
  });
});
