// Lectern's REST v3 answers against Read the Docs' own (issue 23: "the goldens come from Read the
// Docs' own API responses ... not from Lectern's output, where such sources exist"). Read the
// Docs keeps the body each of its v3 endpoints answers in its tests
// (readthedocs/api/v3/tests/responses/), transcribed into test/rest/rtd-responses/ (NOTICE.md).
// Lectern's golden of the same request (test/rest/golden/, which the REST route tests hold
// Lectern's answers to) must have the same shape: the same keys at every level, and values of the
// same JSON type. Values themselves differ (hosts, ids, dates). Where Lectern answers otherwise on
// purpose, or does not yet, the difference is listed below with the reason; anything else fails.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const rest = path.resolve(import.meta.dirname, '../rest');
const read = (dir: string, name: string): unknown => JSON.parse(readFileSync(path.join(rest, dir, `${name}.json`), 'utf8'));

/** Read the Docs' response file, and Lectern's golden of the same request where its name differs. */
const PAIRS: Record<string, string> = {
  'projects-builds-detail': 'projects-builds-detail',
  'projects-builds-list': 'projects-builds-list',
  // Read the Docs' test asks `?expand=active_versions,permissions`.
  'projects-detail': 'projects-detail-expand-active_versions-permissions',
  'projects-environmentvariables-detail': 'projects-environmentvariables-detail',
  'projects-environmentvariables-list': 'projects-environmentvariables-list',
  'projects-environmentvariables-list_POST': 'projects-environmentvariables-list_POST',
  'projects-list-empty': 'projects-list-empty',
  'projects-list': 'projects-list',
  'projects-list_POST': 'projects-list_POST',
  'projects-redirects-detail': 'projects-redirects-detail',
  'projects-redirects-detail_PUT': 'projects-redirects-detail_PUT',
  'projects-redirects-list': 'projects-redirects-list',
  'projects-redirects-list_POST': 'projects-redirects-list_POST',
  'projects-subprojects-detail': 'projects-subprojects-detail',
  'projects-subprojects-list': 'projects-subprojects-list',
  'projects-subprojects-list_POST': 'projects-subprojects-list_POST',
  'projects-superproject': 'projects-superproject',
  'projects-sync-versions': 'projects-sync-versions',
  'projects-versions-builds-list_POST': 'projects-versions-builds-list_POST',
  'projects-versions-detail': 'projects-versions-detail',
};

/**
 * Where Lectern's shape differs from Read the Docs', by the key's name (wherever it appears): what
 * Lectern answers there and why. `missing`: Read the Docs has the key and Lectern has not.
 */
const DIFFERENCES: Record<string, { missing?: true; why: string }> = {
  active_versions: {
    why: 'an object keyed by version slug, not a list, as the REST contract says (docs/design/rest-api.md): its values are compared with the list items',
  },
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const kind = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** How `lectern` differs in shape from `rtd` below `at`, in words; what DIFFERENCES allows is not counted. */
function shapeDifferences(rtd: Json, lectern: Json, at = ''): string[] {
  if (rtd === null || lectern === null) return []; // a value one side happens not to have
  const key = at.split('.').pop() ?? '';
  if (key === 'active_versions' && Array.isArray(rtd) && kind(lectern) === 'object') {
    return rtd.flatMap((item) => Object.values(lectern as Record<string, Json>).flatMap((v) => shapeDifferences(item, v, `${at}[]`)));
  }
  if (kind(rtd) !== kind(lectern)) return [`${at || 'the body'}: Read the Docs answers ${kind(rtd)}, Lectern ${kind(lectern)}`];
  if (Array.isArray(rtd)) {
    const [first] = rtd;
    return first === undefined ? [] : (lectern as Json[]).flatMap((item) => shapeDifferences(first, item, `${at}[]`));
  }
  if (kind(rtd) !== 'object') return [];
  const r = rtd as Record<string, Json>;
  const l = lectern as Record<string, Json>;
  const out: string[] = [];
  for (const k of Object.keys(r)) {
    if (!(k in l)) {
      if (!DIFFERENCES[k]?.missing) out.push(`${at}.${k}: Read the Docs has it, Lectern has not`);
    } else out.push(...shapeDifferences(r[k]!, l[k]!, `${at}.${k}`));
  }
  for (const k of Object.keys(l)) if (!(k in r)) out.push(`${at}.${k}: Lectern has it, Read the Docs has not`);
  return out;
}

describe("Lectern's v3 answers in the shape of Read the Docs' own", () => {
  it('finds a key missing or added, a value of another type, and follows lists and nulls', () => {
    expect(shapeDifferences({ a: 1, b: { c: 'x' }, d: [{ e: true }] }, { a: 2, b: { c: 'y' }, d: [{ e: false }, { e: true }] })).toEqual([]);
    expect(shapeDifferences({ a: 1, b: { c: 'x' } }, { a: '1', b: { d: 'x' } })).toEqual([
      '.a: Read the Docs answers number, Lectern string',
      '.b.c: Read the Docs has it, Lectern has not',
      '.b.d: Lectern has it, Read the Docs has not',
    ]);
    expect(shapeDifferences({ a: null, b: [] }, { a: { deep: 1 }, b: [{ any: 1 }] })).toEqual([]);
  });

  for (const [theirs, ours] of Object.entries(PAIRS)) {
    it(`${theirs}: as Lectern's ${ours}`, () => {
      expect(shapeDifferences(read('rtd-responses', theirs) as Json, read('golden', ours) as Json)).toEqual([]);
    });
  }
});
