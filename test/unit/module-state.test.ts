// Module-level mutable state in src/ (issue 23: "no module-level mutable state in src/ outside what
// buildApp, or a service object it creates, owns"; docs/design/events.md "What stays the
// process's"). Every file of the server (src/ but the dashboard's browser code and Prisma's
// generated client) is parsed, and each top-level binding that can change is found: a `let` or
// `var`, or a `const` holding a new Map, Set, WeakMap, WeakSet or EventEmitter (a read-only table
// is named in capitals, as SEARCH_SKIP is, and is left out). Each one found must be on the list
// below with the kind of state it is, one of events.md's; anything else is an app's and belongs in
// what buildApp makes.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');

/** The kinds of module-level state docs/design/events.md allows, and why no app owns them. */
type Kind =
  | 'a fact of this machine or of the installed packages, the same for every app'
  | 'a memo of a pure function, bounded: every app gets the same answers'
  | 'keyed by an object an app or a request owns (a WeakMap or WeakSet): gone with it'
  | 'what the command line starts before it knows which code runs; a server never starts it'
  | 'the data dir locks this process holds, and its sandbox run names: the process is what they name'
  | "PGlite's thread's own (a worker thread runs one database)";

const ALLOWED: Record<string, Kind> = {
  'builds/steps/install.ts:systemPip': 'a fact of this machine or of the installed packages, the same for every app',
  'builds/tools.ts:hostPython': 'a fact of this machine or of the installed packages, the same for every app',
  'sandbox/sandbox.ts:available': 'a fact of this machine or of the installed packages, the same for every app',
  'sandbox/sandbox.ts:found': 'a fact of this machine or of the installed packages, the same for every app',
  'sandbox/sandbox.ts:root': 'a fact of this machine or of the installed packages, the same for every app',
  'sandbox/sandbox.ts:walked': 'a fact of this machine or of the installed packages, the same for every app',
  'domain/passwords.ts:common': 'a fact of this machine or of the installed packages, the same for every app',
  'domain/passwords.ts:decoy': 'a fact of this machine or of the installed packages, the same for every app',
  'db/schema-engine.ts:glue': 'a fact of this machine or of the installed packages, the same for every app',
  'rest/format.ts:orders': 'a memo of a pure function, bounded: every app gets the same answers',
  'serve/send.ts:gzipAccepted': 'a memo of a pure function, bounded: every app gets the same answers',
  'domain/sso.ts:settingsSynced': 'keyed by an object an app or a request owns (a WeakMap or WeakSet): gone with it',
  'embed/cache.ts:caches': 'keyed by an object an app or a request owns (a WeakMap or WeakSet): gone with it',
  'graphql/builder.ts:ownOperations': 'keyed by an object an app or a request owns (a WeakMap or WeakSet): gone with it',
  'graphql/builder.ts:costs': 'keyed by an object an app or a request owns (a WeakMap or WeakSet): gone with it',
  'rest/router.ts:renderings': 'keyed by an object an app or a request owns (a WeakMap or WeakSet): gone with it',
  'db/database.ts:early': 'what the command line starts before it knows which code runs; a server never starts it',
  'db/threaded-pglite.ts:prestarted': 'what the command line starts before it knows which code runs; a server never starts it',
  'db/lock.ts:held': 'the data dir locks this process holds, and its sandbox run names: the process is what they name',
  'sandbox/sandbox.ts:sequence': 'the data dir locks this process holds, and its sandbox run names: the process is what they name',
  'db/pglite-thread.js:transactions': "PGlite's thread's own (a worker thread runs one database)",
};

const MUTABLE = /^(Map|Set|WeakMap|WeakSet|EventEmitter)$/;

function sourceFiles(dir = src): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!['generated', 'web'].includes(path.relative(src, p))) out.push(...sourceFiles(p));
    } else if (/\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

type Node = { type: string; [key: string]: unknown };

/** The names of `text`'s top-level bindings that can change, as described at the top. */
function mutableTopLevel(text: string): string[] {
  const program = parse(text, { sourceType: 'module', plugins: ['typescript'] }).program as unknown as { body: Node[] };
  const out: string[] = [];
  for (const statement of program.body) {
    const s = statement.type === 'ExportNamedDeclaration' && statement.declaration ? (statement.declaration as Node) : statement;
    if (s.type !== 'VariableDeclaration') continue;
    for (const d of s.declarations as { id: { name?: string }; init: Node | null }[]) {
      const name = d.id.name ?? '(a destructured binding)';
      const init = d.init as { type?: string; callee?: { name?: string } } | null;
      const made = init?.type === 'NewExpression' && MUTABLE.test(init.callee?.name ?? '');
      if (s.kind !== 'const' || (made && name !== name.toUpperCase())) out.push(name);
    }
  }
  return out;
}

describe('module-level state in src/', () => {
  it('is found as written: let and var, and new collections not named as constants', () => {
    const text = [
      'let cache;',
      'export let exported = 1;',
      'var old = 2;',
      'const memo = new Map();',
      'export const owners = new WeakMap();',
      "const SKIP = new Set(['a']);",
      'const fixed = 3;',
      'function f() { let inner = 1; const m = new Map(); return [inner, m]; }',
    ].join('\n');
    expect(mutableTopLevel(text)).toEqual(['cache', 'exported', 'old', 'memo', 'owners']);
  });

  it("is only of the kinds that are no app's, each listed with its kind (docs/design/events.md)", () => {
    const found: string[] = [];
    for (const file of sourceFiles()) {
      const rel = path.relative(src, file);
      for (const name of mutableTopLevel(readFileSync(file, 'utf8'))) found.push(`${rel}:${name}`);
    }
    const unlisted = found.filter((key) => !(key in ALLOWED));
    expect(unlisted, 'module-level state an app should own: make it in buildApp (src/app.ts) or a service it creates').toEqual([]);
    expect(
      Object.keys(ALLOWED).filter((key) => !found.includes(key)),
      'listed but gone: take it off the list',
    ).toEqual([]);
  });
});
