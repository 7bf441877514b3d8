// Which project a docs host serves (LECTERN_DOCS_DOMAIN): `<project>.<domain>`, and a pull
// request's preview host `<project>--<number>.<domain>` (Read the Docs' external version domain).
import { describe, expect, it } from 'vitest';
import { docsHostLabel, previewNumberOf } from '../../src/serve/paths.ts';

describe('docs hosts', () => {
  it("names the project of a project's host and of its pull requests' preview hosts", () => {
    expect(docsHostLabel('docs.test', 'handbook.docs.test')).toBe('handbook');
    expect(docsHostLabel('docs.test', 'handbook--7.docs.test')).toBe('handbook');
    expect(docsHostLabel('docs.test', 'Handbook--123.Docs.Test')).toBe('handbook');
    expect(docsHostLabel('docs.test:8080', 'my-docs--42.docs.test:8080')).toBe('my-docs');
  });

  it('is no docs host for anything else', () => {
    expect(docsHostLabel('docs.test', 'docs.test')).toBeNull();
    expect(docsHostLabel('docs.test', '--7.docs.test')).toBeNull();
    expect(docsHostLabel('docs.test', 'evil.example.com')).toBeNull();
    expect(docsHostLabel('docs.test', 'a.b.docs.test')).toBeNull();
    expect(docsHostLabel(undefined, 'handbook--7.docs.test')).toBeNull();
  });

  it("tells a preview's host, the one host that serves a preview, by its pull request's number", () => {
    expect(previewNumberOf('docs.test', 'handbook--7.docs.test')).toBe('7');
    expect(previewNumberOf('docs.test:8080', 'My-Docs--42.Docs.Test:8080')).toBe('42');
    for (const host of [
      'handbook.docs.test',
      'handbook--7.evil.test',
      'a.handbook--7.docs.test',
      '--7.docs.test',
      'handbook--x7.docs.test',
      'handbook--7.docs.test.evil',
    ])
      expect([host, previewNumberOf('docs.test', host)]).toEqual([host, undefined]);
    expect(previewNumberOf(undefined, 'handbook--7.docs.test')).toBeUndefined();
  });
});
