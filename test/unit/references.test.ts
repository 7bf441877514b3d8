// Every path a comment cites resolves in this repository (issue 23: "every comment's reference
// resolves"): `@see` targets, `docs/…md` pages, `src/…` and `test/…` files, and relative `./…` and
// `../…` paths, in the comments of src/, test/ and the top-level configuration. A reference is
// resolved against the repository root when it starts with docs/, src/, test/ or prisma/, else
// against the citing file's directory; a section (`§2`, `"Steps"`), an anchor (`#x`) or a line
// (`:12`) after it is not part of the path. URLs are not checked. A numbered section of a
// docs/design page (`docs/design/read-the-docs.md §2.9`, `§6.2–§6.4`, `§2.4, §4.1`) must be a
// heading of that page. The design decisions comments cite live in docs/design/, so nothing may
// cite the spec or reference notes kept outside it, by path or by their short names (the REST
// contract and the Read the Docs notes: docs/design/rest-api.md and read-the-docs.md now).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Files whose comments are checked: source and tests (not generated code, not fixtures, which are other people's files), and the top-level configuration. */
function filesToCheck(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (rel !== 'src/generated' && rel !== 'test/fixtures' && e.name !== 'node_modules') walk(rel);
      } else if (/\.(ts|tsx|mts|js|mjs|cjs|sh|css|html|jsonc)$/.test(e.name)) out.push(rel);
    }
  };
  walk('src');
  walk('test');
  for (const e of readdirSync(root, { withFileTypes: true })) if (e.isFile() && /\.(ts|jsonc|json)$/.test(e.name)) out.push(e.name);
  out.push('prisma/schema.prisma');
  return out.sort();
}

/**
 * The comment text of each line (1-based): `//` and `/* … *\/` comments, and `#` comments in shell
 * scripts. A `//` counts only at the start of a line or after a space, so `http://` does not.
 */
function commentLines(file: string, text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const hash = /\.(sh)$/.test(file);
  const slashes = /\.(prisma)$/.test(file) || !hash;
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    let rest = raw;
    let comment = '';
    for (;;) {
      if (inBlock) {
        const end = rest.indexOf('*/');
        if (end < 0) {
          comment += ` ${rest}`;
          break;
        }
        comment += ` ${rest.slice(0, end)}`;
        rest = rest.slice(end + 2);
        inBlock = false;
        continue;
      }
      if (hash) {
        const m = /(?:^|\s)#(?!!)/.exec(rest);
        if (m) comment += ` ${rest.slice(m.index + m[0].length)}`;
        break;
      }
      if (!slashes) break;
      const m = /(?:^|\s)(\/\/|\/\*)/.exec(rest);
      if (!m) break;
      const at = m.index + m[0].length;
      if (m[1] === '//') {
        comment += ` ${rest.slice(at)}`;
        break;
      }
      inBlock = true;
      rest = rest.slice(at);
    }
    if (comment.trim()) out.push({ line: i + 1, text: comment });
  });
  return out;
}

// A path: segments of word characters, `.`, `@` and `-`, ending in a file name with an extension.
// What follows may not continue it (a `*` or `<…>` makes it a pattern, not a file).
const PATH = String.raw`(?:[\w@-]+\/)*[\w@.-]*\w\.[A-Za-z][\w]*(?![\w/*<{$]|\.\w)`;
/** Lectern's own kinds of file, for relative paths (a `./docs/conf.py` is a path in a repository being built). */
const OWN = String.raw`(?:[\w@-]+\/)*[\w@.-]*\w\.(?:ts|tsx|md|sh|json|jsonc|css|prisma)(?![\w/*<{$]|\.\w)`;
/**
 * `src/…`, `test/…`, `prisma/…` and `docs/….md` from the repository root, not inside a longer path
 * (`../src/…` is relative). Other `docs/…` files (`docs/conf.py`) are in the repositories builds read.
 */
const FROM_ROOT = new RegExp(String.raw`(?<![\w./@$-])((?:src|test|prisma)\/${PATH}|docs\/(?:[\w@-]+\/)*[\w@.-]+\.md\b)`, 'g');
/** A relative path to one of Lectern's own kinds of file: from the citing file's directory. */
const RELATIVE = new RegExp(String.raw`(?<![\w./@$-])((?:\.\.?\/)+${OWN})`, 'g');
/** A line that cites a URL is about that URL's project: `https://github.com/graphile/worker src/sql/getJobs.ts` is not a path here. */
const CITES_URL = /\bhttps?:\/\//;
/** `@see x.ts` (a file beside the citing one): the first word of each `,`/`;`-separated item. */
const SEE = /@see\s+([^\n]*)/g;
/**
 * The spec and reference notes kept outside the repository, by path, by the decisions page's name
 * (its sections are in docs/design/ now), or by the short names comments gave the REST contract
 * and the Read the Docs notes (what the code relies on of them is in docs/design/rest-api.md and
 * docs/design/read-the-docs.md now). Written so that this file does not match itself.
 */
const OUTSIDE = /shared\/(?:spec|reference)\b|\bdecisions(?:\.md)? \u00a7|\b(?:rtd-behavio[r]|seed-ap[i])\b/u;

/** Pages outside src/ and test/ scanned for citations of those notes too: the design pages and the README. */
function pagesToCheck(): string[] {
  return [
    'README.md',
    ...readdirSync(path.join(root, 'docs/design'))
      .filter((n) => n.endsWith('.md'))
      .map((n) => `docs/design/${n}`),
  ].sort();
}

/**
 * The numbered sections a comment cites of a docs/design page: each `§N.M` after the page's path,
 * up to the next path, `)` or `;` (`docs/design/read-the-docs.md §2.4 "Version update", §4.3` cites
 * §2.4 and §4.3; `§6.2–§6.4` cites both ends).
 */
function sectionsIn(comment: string): { page: string; section: string }[] {
  const out: { page: string; section: string }[] = [];
  for (const m of comment.matchAll(/(?<![\w./@$-])(docs\/design\/[\w-]+\.md)((?:(?!(?<![\w./@$-])(?:docs|src|test|prisma)\/)[^;)])*)/g)) {
    for (const s of m[2]!.matchAll(/\u00a7\s?(\d+(?:\.\d+)*)/gu)) out.push({ page: m[1]!, section: s[1]! });
  }
  return out;
}

/** Whether `page` has a heading numbered `section` (`## 2. …` for §2, `### 2.9 …` for §2.9). */
function hasSection(page: string, section: string): boolean {
  const file = path.join(root, page);
  if (!existsSync(file)) return false;
  const heading = new RegExp(String.raw`^#+\s+${section.replaceAll('.', String.raw`\.`)}\.?\s`, 'm');
  return heading.test(readFileSync(file, 'utf8'));
}

function referencesIn(comment: string): string[] {
  const found = new Set<string>();
  if (CITES_URL.test(comment)) return [];
  for (const m of comment.matchAll(FROM_ROOT)) found.add(m[1]!);
  for (const m of comment.matchAll(RELATIVE)) found.add(m[1]!);
  for (const m of comment.matchAll(SEE)) {
    for (const item of m[1]!.split(/[,;]/)) {
      const word = item.trim().split(/\s+/)[0] ?? '';
      if (/^[\w@-]+\.(?:ts|tsx|md|sh|js|json|jsonc|prisma|css|html)$/.test(word)) found.add(`./${word}`);
    }
  }
  return [...found];
}

function resolve(file: string, ref: string): string {
  return /^(?:docs|src|test|prisma)\//.test(ref) ? path.join(root, ref) : path.resolve(root, path.dirname(file), ref);
}

describe('references in comments', () => {
  it('finds paths, and leaves sections, lines, URLs and patterns out', () => {
    const refs = (c: string) => referencesIn(c).sort();
    expect(refs(' @see docs/design/urls.md §2, ../other.ts:12; ./storage.ts "Steps"')).toEqual(['../other.ts', './storage.ts', 'docs/design/urls.md']);
    expect(refs(' applied by src/db/migrate.ts. See docs/design/builds.md#steps')).toEqual(['docs/design/builds.md', 'src/db/migrate.ts']);
    expect(refs(' https://example.org/ src/x.ts')).toEqual([]);
    expect(refs(' test/**/*.test.ts, prisma/migrations/<name>/migration.sql, docs/conf.py, ./docs/conf.py')).toEqual([]);
    expect(refs(' @see storage.ts')).toEqual(['./storage.ts']);
    expect(commentLines('a.ts', "const u = 'http://x/src/y.ts'; // see src/z.ts\n/**\n * test/a.ts\n */ code").map((c) => c.line)).toEqual([1, 2, 3]);
  });

  it('finds the numbered sections cited of design pages, and the notes outside the repository by name', () => {
    const cited = (c: string) => sectionsIn(c).map((s) => `${s.page} ${s.section}`);
    expect(cited(' (docs/design/read-the-docs.md §2.4 "Version update", §4.3; RFC 9110 §14)')).toEqual([
      'docs/design/read-the-docs.md 2.4',
      'docs/design/read-the-docs.md 4.3',
    ]);
    expect(cited(' docs/design/a.md §6.2\u2013§6.4 and src/x.ts §1, docs/design/b.md "Steps", docs/design/c.md §3')).toEqual([
      'docs/design/a.md 6.2',
      'docs/design/a.md 6.4',
      'docs/design/c.md 3',
    ]);
    expect(hasSection('docs/design/read-the-docs.md', '2')).toBe(true);
    expect(hasSection('docs/design/read-the-docs.md', '2.99')).toBe(false);
    expect(hasSection('docs/design/read-the-docs.md', '99')).toBe(false);
    // Built from parts, so that this file does not cite them itself.
    for (const name of ['rtd-', 'seed-']) {
      const full = name === 'rtd-' ? `${name}behavior` : `${name}api`;
      expect(OUTSIDE.test(`// as Read the Docs does (${full} \u00a72.9)`), full).toBe(true);
      expect(OUTSIDE.test(`// ${full}.md`), full).toBe(true);
    }
    expect(OUTSIDE.test('// docs/design/read-the-docs.md §3.7')).toBe(false);
  });

  it('every one names a file in this repository, and none the notes outside it', () => {
    const broken: string[] = [];
    for (const file of filesToCheck()) {
      const text = readFileSync(path.join(root, file), 'utf8');
      text.split('\n').forEach((line, i) => {
        if (OUTSIDE.test(line)) broken.push(`${file}:${i + 1}: cites notes outside the repository (${line.trim()})`);
      });
      // This file's own examples name files that need not exist.
      if (file === 'test/unit/references.test.ts') continue;
      for (const c of commentLines(file, text)) {
        for (const ref of referencesIn(c.text)) {
          if (!existsSync(resolve(file, ref))) broken.push(`${file}:${c.line}: ${ref} does not exist`);
        }
        for (const { page, section } of sectionsIn(c.text)) {
          if (!hasSection(page, section)) broken.push(`${file}:${c.line}: ${page} has no section ${section}`);
        }
      }
    }
    for (const page of pagesToCheck()) {
      readFileSync(path.join(root, page), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (OUTSIDE.test(line)) broken.push(`${page}:${i + 1}: cites notes outside the repository (${line.trim()})`);
        });
    }
    expect(broken).toEqual([]);
  });
});
