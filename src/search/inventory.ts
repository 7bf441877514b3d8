// Sphinx's objects.inv (inventory format version 2, what intersphinx reads): the domain objects a
// build documents (Python functions, classes and methods, options, `:ref:` labels...), each with
// the page and anchor that document it. Search indexes them beside the sections, so `json.dumps`
// or `Session.mount` finds the place the object is described. The file is the build's, so it is
// read as hostile: its compressed part is inflated to a bounded size, lines that are not entries
// are skipped, and only so many objects are kept.
import { inflateSync } from 'node:zlib';

export interface InventoryObject {
  /** `json.dumps`, `requests.Session.mount`, a label. */
  name: string;
  /** `py:function`, `std:label`, `std:option`… */
  role: string;
  /** The page documenting it, relative to the version's root (`library/json.html`). */
  path: string;
  anchor: string;
  /** What Sphinx shows for it (a label's section title; the name itself for most). */
  display: string;
}

const MAX_INFLATED = 32 * 1024 * 1024;
export const MAX_OBJECTS = 50_000;
// Sphinx's own reading of an entry (sphinx/util/inventory.py): name, domain:role, priority, uri, display name.
const ENTRY = /^(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+?(\S*)\s+(.*)$/;

/** The objects of an inventory file; empty when it is not a version 2 inventory. Throws when it cannot be inflated. */
export function parseInventory(file: Buffer): InventoryObject[] {
  let at = 0;
  const header: string[] = [];
  for (let i = 0; i < 4; i++) {
    const nl = file.indexOf(0x0a, at);
    if (nl < 0) return [];
    header.push(file.subarray(at, nl).toString('utf8'));
    at = nl + 1;
  }
  if (header[0]?.trim() !== '# Sphinx inventory version 2' || !header[3]?.includes('zlib')) return [];
  const text = inflateSync(file.subarray(at), { maxOutputLength: MAX_INFLATED }).toString('utf8');
  const objects: InventoryObject[] = [];
  for (const line of text.split('\n')) {
    const m = ENTRY.exec(line);
    // Priority -1 marks objects Sphinx keeps out of its own search (labels among them, found there
    // by their sections' titles); labels are kept here, to be found by their names too. Whole
    // documents are pages already.
    if (!m || (m[3] === '-1' && m[2] !== 'std:label') || m[2] === 'std:doc') continue;
    const [, name, role, , rawUri, rawDisplay] = m as unknown as [string, string, string, string, string, string];
    const uri = rawUri.endsWith('$') ? rawUri.slice(0, -1) + name : rawUri;
    const hash = uri.indexOf('#');
    const path = hash < 0 ? uri : uri.slice(0, hash);
    // Only pages of this build: no absolute URLs, no way out of the version's root.
    if (/^[a-z][a-z0-9+.-]*:|^\/|(^|\/)\.\.(\/|$)/i.test(path)) continue;
    objects.push({ name, role, path, anchor: hash < 0 ? '' : uri.slice(hash + 1), display: rawDisplay === '-' ? name : rawDisplay });
    if (objects.length >= MAX_OBJECTS) break;
  }
  return objects;
}

/** How a role reads in a result: `py:function` → `Python function`. */
export function roleName(role: string): string {
  const [domain, kind] = role.split(':') as [string, string | undefined];
  const domains: Record<string, string> = { py: 'Python', c: 'C', cpp: 'C++', js: 'JavaScript', rst: 'reStructuredText', std: '' };
  const what = (kind ?? domain).replace(/^cmdoption$/, 'option').replace(/^label$/, 'section');
  return [domains[domain] ?? domain, what].filter(Boolean).join(' ');
}
