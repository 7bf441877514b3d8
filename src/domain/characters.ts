// Which characters no text Lectern takes may hold: C0 controls but tab, line feed and carriage
// return, DEL, C1 controls, and unpaired UTF-16 surrogates (docs/design/deliveries.md, "Input").
// Pure functions over strings and JSON values, used where text enters: GraphQL's validation rule
// (graphql/input-rule.ts), the REST adapter, and webhook payloads.

/** The first character of `s` no text may hold, as `U+0000`, and where; null when there is none. */
export function disallowedCharacter(s: string): { codePoint: string; index: number } | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let bad = false;
    if (c < 0x20) bad = c !== 0x09 && c !== 0x0a && c !== 0x0d;
    else if (c >= 0x7f && c <= 0x9f) bad = true;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else bad = true;
    } else if (c >= 0xdc00 && c <= 0xdfff) bad = true;
    if (bad) return { codePoint: `U+${c.toString(16).toUpperCase().padStart(4, '0')}`, index: i };
  }
  return null;
}

/**
 * The first string (a value or an object's key) in a JSON value holding a character no text may,
 * with its path: keys and list indexes, and `key: true` when it is a key that holds it. Walked
 * with a stack of its own, not recursion: a value nested 20,000 deep is walked as any other.
 * Plain objects only: an uploaded file (a multipart part) is no text.
 */
export function findDisallowed(value: unknown): { path: (string | number)[]; codePoint: string; key?: true } | null {
  // Each entry knows its parent, not its whole path: a deep value costs its size, not its depth squared.
  interface Entry {
    value: unknown;
    key: string | number | null;
    parent: Entry | null;
  }
  const pathOf = (e: Entry | null, last?: string): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let at = e; at && at.key !== null; at = at.parent) path.push(at.key);
    path.reverse();
    if (last !== undefined) path.push(last);
    return path;
  };
  const stack: Entry[] = [{ value, key: null, parent: null }];
  while (stack.length) {
    const e = stack.pop()!;
    const v = e.value;
    if (typeof v === 'string') {
      const bad = disallowedCharacter(v);
      if (bad) return { path: pathOf(e), codePoint: bad.codePoint };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: e });
    } else if (v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
      const entries = Object.entries(v);
      for (const [k] of entries) {
        const bad = disallowedCharacter(k);
        if (bad) return { path: pathOf(e, k), codePoint: bad.codePoint, key: true };
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: e });
    }
  }
  return null;
}

/** `$input.repository.url`, `$filter.slugs[2]`. */
