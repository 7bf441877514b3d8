// Where the dashboard goes after signing in (src/web/next.ts): `/sign-in?next=…` is followed only
// when it stays on Lectern's origin. Each spelling below is what `next` holds once the query string
// is decoded (URLSearchParams), as the sign-in page reads it; the hostile ones would each reach
// another site, run script, or land somewhere other than a path of Lectern if cleaned up naively.
import { describe, expect, it } from 'vitest';
import { nextTarget } from '../../src/web/next.ts';

const ORIGIN = 'https://lectern.example.org';

describe('nextTarget', () => {
  it("follows paths of Lectern's own origin, with their query and fragment", () => {
    for (const [next, to] of [
      ['/', '/'],
      ['/account', '/account'],
      ['/projects/acme/builds?page=2#top', '/projects/acme/builds?page=2#top'],
      ['/_/docs-access?next=https%3A%2F%2Facme.docs.example%2Fen%2Flatest%2F', '/_/docs-access?next=https%3A%2F%2Facme.docs.example%2Fen%2Flatest%2F'],
      ['/docs/acme/en/latest/caf%C3%A9.html', '/docs/acme/en/latest/caf%C3%A9.html'],
      [`${ORIGIN}/admin`, '/admin'],
      ['/projects/../account', '/account'],
    ]) {
      expect(nextTarget(next, ORIGIN), next).toBe(to);
    }
  });

  it('sends everything else to /: other sites, schemes, and whatever a browser would read as either', () => {
    const hostile = [
      // Other sites, plainly and scheme-relative.
      'https://evil.example/',
      'http://lectern.example.org/', // another origin: http, not https
      'https://lectern.example.org.evil.example/',
      'https://lectern.example.org:444/',
      '//evil.example/',
      '///evil.example/',
      '////evil.example/',
      // Backslashes, which browsers read as slashes in http(s) URLs.
      '/\\evil.example/',
      '\\\\evil.example/',
      '\\/evil.example/',
      '/\\/evil.example/',
      // Tabs, newlines and other characters the URL parser drops (the issue's /%09/ and /%0a/).
      '/\t/evil.example/',
      '/\n/evil.example/',
      '/\r\n/evil.example/',
      '\t//evil.example/',
      ' //evil.example/',
      '/ /evil.example/',
      '/\u0000/evil.example/',
      '/\u000b/evil.example/',
      '/\u00a0/evil.example/',
      '/\u3000/evil.example/',
      '/\ufeff/evil.example/',
      // Encoded once more (what /sign-in?next=/%2509/… decodes to), and encoded slashes.
      '/%09/evil.example/',
      '/%0a/evil.example/',
      '/%0d%0a/evil.example/',
      '/%2f/evil.example/',
      '/%2F%2Fevil.example/',
      '%2f%2fevil.example/',
      '/%5c/evil.example/',
      '/%5Cevil.example/',
      '/%252f%252fevil.example/',
      '/%25%32%66/evil.example/',
      // Dot segments the parser folds into `//`.
      '/.//evil.example/',
      '/./\\evil.example/',
      '/x/..//evil.example/',
      // Other schemes.
      'javascript:alert(document.domain)',
      'JaVaScRiPt:alert(1)',
      'java\tscript:alert(1)',
      ' javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'https:evil.example',
      'https:/evil.example',
      'http:\\\\evil.example',
      // User info: the host is what follows the @.
      'https://lectern.example.org@evil.example/',
      'https://lectern.example.org:pw@evil.example/',
      `https://user:pw@lectern.example.org/`,
      '//lectern.example.org@evil.example/',
      '/@evil.example/'.replace('/@', '//@'),
      // Not a path at all, or broken.
      'evil.example',
      'account',
      '?next=//evil.example/',
      '#//evil.example/',
      '/%E0%A4%A',
      '',
      null,
      undefined,
    ];
    for (const next of hostile) expect(nextTarget(next, ORIGIN), JSON.stringify(next)).toBe('/');
  });

  it('answers a path that, followed by a browser, stays on the origin', () => {
    // Whatever nextTarget answers, resolved as location.assign() would, is on Lectern's origin.
    const samples = ['/a', '/%2e%2e/%2e%2e/x', '/a?b=//evil.example', '/a#//evil.example', '/caf\u00e9'];
    for (const next of samples) {
      const to = nextTarget(next, ORIGIN);
      expect(new URL(to, ORIGIN).origin, next).toBe(ORIGIN);
      expect(to.startsWith('/') && !to.startsWith('//'), next).toBe(true);
    }
  });
});
