// The order Read the Docs lists a project's versions in: `latest`, then `stable`, then the versions
// whose names are PEP 440 versions (a leading `v` allowed), newest first, then every other name
// (branches such as `main`) alphabetically.
import { compare, valid } from '@renovatebot/pep440';

const versionOf = (name: string): string | null => {
  const bare = name.replace(/^v(?=\d)/i, '');
  return valid(bare) ? bare : null;
};

export function sortVersions<V extends { slug: string; verboseName: string }>(versions: readonly V[]): V[] {
  const rank = (v: V) => (v.slug === 'latest' ? 0 : v.slug === 'stable' ? 1 : versionOf(v.verboseName) ? 2 : 3);
  return [...versions].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra - rb;
    if (ra === 2) return compare(versionOf(b.verboseName)!, versionOf(a.verboseName)!) || a.verboseName.localeCompare(b.verboseName);
    return a.verboseName.localeCompare(b.verboseName);
  });
}
