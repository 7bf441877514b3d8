// Which project a docs host serves (LECTERN_DOCS_DOMAIN): `<project>.<domain>`, and a pull
// request's preview host `<project>--<number>.<domain>` (Read the Docs' external version domain).
import { describe, expect, it } from 'vitest';
import { docsHostLabel } from '../../src/serve/paths.ts';

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
});
