// Project and version slugs as Read the Docs makes them (docs/design/read-the-docs.md §4.1, §4.3). The version
// cases marked "RTD test" are the ones in readthedocs.org's rtd_tests/tests/test_version_slug.py.
import { describe, expect, it } from 'vitest';
import { projectSlug, VERSION_SLUG_PATTERN, versionSlug } from '../../src/domain/slug.ts';

describe('projectSlug (docs/design/read-the-docs.md §4.1)', () => {
  it.each([
    ['Test Project', 'test-project'],
    ['test-project', 'test-project'],
    ['My_Project', 'my-project'], // runs of -/_ become one -
    ['a__b--c_-_d', 'a-b-c-d'],
    ['  Leading and trailing  ', 'leading-and-trailing'],
    ['-_edge_-', 'edge'],
    ['Hello, World!', 'hello-world'], // punctuation is dropped, not replaced
    ['C++ Guide', 'c-guide'],
    ['v1.2 docs', 'v12-docs'], // Django's slugify drops dots
    ['Café Ünïcode', 'cafe-unicode'], // NFKD, then ASCII only
    ['tabs\tand\nnewlines', 'tabs-and-newlines'],
    ['ＦＵＬＬ width', 'full-width'],
  ])('%j -> %j', (name, slug) => {
    expect(projectSlug(name)).toBe(slug);
  });

  it.each(['*', '---', '日本語', '   '])('%j has no slug at all (the import rejects it)', (name) => {
    expect(projectSlug(name)).toBe('');
  });

  it('is stable: a slug slugifies to itself', () => {
    for (const name of ['Test Project', 'a__b--c', 'Café 2']) {
      const slug = projectSlug(name);
      expect(projectSlug(slug)).toBe(slug);
    }
  });
});

describe('versionSlug (docs/design/read-the-docs.md §4.3, builds/version_slug.py)', () => {
  it.each([
    ['1.0', '1.0'], // RTD test
    ['1%0', '1-0'], // RTD test
    ['releases/1.0', 'releases-1.0'], // RTD test
    ['SomeString-charclass', 'somestring-charclass'], // RTD test
    ['camión', 'camion'], // RTD test
    ['ŭñíč°də-branch', 'unicd-branch'], // RTD test
    ['1!0', '1-0'],
    ['1?0', '1-0'],
    ['feature/foo/bar', 'feature-foo-bar'],
    ['v1.0_rc1', 'v1.0_rc1'], // dots and underscores are kept
    ['Release 2.0', 'release-2.0'],
    ['with_', 'with_'],
    ['with.', 'with.'],
  ])('%j -> %j', (name, slug) => {
    expect(versionSlug(name)).toBe(slug);
    expect(slug).toMatch(VERSION_SLUG_PATTERN);
  });

  it('strips leading -._ only', () => {
    expect(versionSlug('_private')).toBe('private');
    expect(versionSlug('.hidden.')).toBe('hidden.');
    expect(versionSlug('-/-x')).toBe('x');
  });

  // unicode-slugify keeps letters, numbers, `-._` and spaces; anything else is dropped (not
  // replaced), and runs of `-` and spaces collapse to one `-`, after the surrounding spaces are
  // stripped.
  it.each([
    ['foo+bar', 'foobar'],
    ['fix#123', 'fix123'],
    ['v1.0 (beta)', 'v1.0-beta'],
    ['a--b', 'a-b'],
    ['1%%0', '1-0'],
    ['a - b', 'a-b'],
    ['  v2  ', 'v2'],
    ['tab\there', 'tabhere'],
  ])('drops other characters and collapses dashes: %j -> %j', (name, slug) => {
    expect(versionSlug(name)).toBe(slug);
  });

  it.each(['-', '-./.-', '', '%%', '°°'])('%j becomes "unknown"', (name) => {
    expect(versionSlug(name)).toBe('unknown');
  });

  it('appends _a, _b, ... _z, _ba on a collision (underscore, as RTD does)', () => {
    expect(versionSlug('1!0', new Set(['1-0']))).toBe('1-0_a'); // RTD test
    expect(versionSlug('1?0', new Set(['1-0', '1-0_a']))).toBe('1-0_b'); // RTD test
    expect(versionSlug('-./.-', new Set(['unknown']))).toBe('unknown_a'); // RTD test
    const upToZ = new Set(['x', ...'abcdefghijklmnopqrstuvwxyz'.split('').map((c) => `x_${c}`)]);
    expect(versionSlug('x', upToZ)).toBe('x_ba');
    upToZ.add('x_ba');
    expect(versionSlug('x', upToZ)).toBe('x_bb');
  });

  it('follows the suffix numbering of uniquifying_suffix (0 -> a, 25 -> z, 26 -> ba, 52 -> ca)', () => {
    const taken = new Set(['v']);
    const got: string[] = [];
    for (let i = 0; i <= 52; i++) {
      const slug = versionSlug('v', taken);
      got.push(slug);
      taken.add(slug);
    }
    expect([got[0], got[25], got[26], got[52]]).toEqual(['v_a', 'v_z', 'v_ba', 'v_ca']);
    expect(new Set(got).size).toBe(got.length);
  });

  it('always yields a slug the validator accepts', () => {
    for (const name of ['Ünïcode/Branch!', '..', 'a b c', 'x'.repeat(300), '🎉 party', 'v1.0 (beta)', 'A_B-C.D']) {
      expect(versionSlug(name)).toMatch(VERSION_SLUG_PATTERN);
    }
  });
});

describe('VERSION_SLUG_PATTERN', () => {
  it('matches what RTD matches', () => {
    expect('v').toMatch(VERSION_SLUG_PATTERN);
    expect('release-1.0').toMatch(VERSION_SLUG_PATTERN);
    expect('fix_this-and-that.').toMatch(VERSION_SLUG_PATTERN);
    expect('.').not.toMatch(VERSION_SLUG_PATTERN);
    expect('with!').not.toMatch(VERSION_SLUG_PATTERN);
    expect('Upper').not.toMatch(VERSION_SLUG_PATTERN);
  });
});
