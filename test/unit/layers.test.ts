// The folder graph of src/ (issue 23: "layers point one way … no import cycles between folders";
// docs/design/layers.md). Each folder under src/ is a node, and so is each file at src/'s top; an
// import from a file of one node of a file of another is an edge: static, dynamic (`import()`) and
// type-only imports alike, since a type is a dependency too. The test fails on a cycle, naming the
// imports that make it, and on an edge that points up the layers, or a node in no layer.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');

/**
 * From the top down; a node may import its own layer's nodes and those below. docs/design/layers.md
 * says what each layer is. A new folder or top-level file goes into one of them.
 */
const LAYERS: { name: string; nodes: string[] }[] = [
  { name: 'entry points and composition', nodes: ['bin', 'cli', 'control', 'commands', 'app'] },
  { name: 'HTTP adapters', nodes: ['rest', 'serve', 'webhooks', 'badges', 'sso', 'dashboard', 'graphiql'] },
  { name: 'GraphQL', nodes: ['graphql'] },
  { name: 'features over the domain', nodes: ['uploads', 'embed', 'builds', 'analytics'] },
  { name: 'domain', nodes: ['domain'] },
  { name: 'services the domain calls', nodes: ['notifications', 'search'] },
  {
    name: 'ports and foundations',
    nodes: [
      'queue',
      'storage',
      'sandbox',
      'db',
      'events',
      'throttle',
      'config',
      'urls',
      'log',
      'secrets',
      'metrics',
      'prisma-wasm-hook',
      'resolve-cache',
      'lazy-module',
      'local-cache',
      'bytes',
      'server-bundle',
      'setup',
    ],
  },
];
/** Not part of the server's graph: Prisma's generated client (below everything) and the dashboard's browser code (its own build). */
const OUTSIDE = new Set(['generated', 'web']);

/** The node of a path relative to src/: its top folder, or the file's name without extension. */
const nodeOf = (rel: string): string => (rel.includes('/') ? rel.split('/')[0]! : rel.replace(/\.[^.]+$/, ''));

function sourceFiles(dir = src): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!OUTSIDE.has(path.relative(src, p))) out.push(...sourceFiles(p));
    } else if (/\.(ts|tsx|js|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

/**
 * The relative specifiers a file imports: `import … from`, `export … from`, `import '…'` and
 * `import('…')`, type-only ones included, outside comments (whole-line `//` comments and block
 * comments, the only kinds this codebase writes between statements).
 */
function importsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const pattern = /\b(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
  for (const m of code.matchAll(pattern)) out.push((m[1] ?? m[2] ?? m[3])!);
  return out;
}

/** Edges between nodes, each with the imports (`from -> to`) that make it. */
function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles()) {
    const from = nodeOf(path.relative(src, file));
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const rel = path.relative(src, path.resolve(path.dirname(file), specifier));
      if (rel.startsWith('..')) continue;
      const to = nodeOf(rel);
      if (to === from || OUTSIDE.has(to)) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      edges.set(to, [...(edges.get(to) ?? []), `${path.relative(src, file)} -> ${rel}`]);
    }
  }
  return graph;
}

/** One cycle through the graph, as its nodes in order (the first again at the end), or null. */
function findCycle(graph: Map<string, Map<string, string[]>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    state.set(n, 'open');
    stack.push(n);
    for (const next of graph.get(n)?.keys() ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(n, 'done');
    return null;
  };
  for (const n of graph.keys()) {
    if (!state.has(n)) {
      const found = visit(n);
      if (found) return found;
    }
  }
  return null;
}

describe('the layers of src/', () => {
  const graph = folderGraph();

  it('reads every kind of import, and none in a comment', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b/b.ts';",
      'import {\n  c,\n  type D,\n} from "./c.ts";',
      "export { e } from './e.ts';",
      "import './side-effect.ts';",
      "const f = await import('./f.ts');",
      "// import { g } from './g.ts';",
      "/* import('./h.ts') */",
    ].join('\n');
    expect(importsOf(text)).toEqual(['./a.ts', '../b/b.ts', './c.ts', './e.ts', './side-effect.ts', './f.ts']);
  });

  it('finds the imports it judges: every node of src/ is seen, and edges are found', () => {
    const nodes = new Set(sourceFiles().map((f) => nodeOf(path.relative(src, f))));
    expect(nodes).toContain('domain');
    expect(graph.get('graphql')?.get('domain')?.length).toBeGreaterThan(0);
    // A dynamic import is an edge too (the command line loads the API when it serves).
    expect(graph.get('cli')?.get('app')).toEqual(['cli.ts -> app.ts']);
  });

  it('has no import cycle between folders (nor top-level files)', () => {
    const cycle = findCycle(graph);
    const how = cycle?.slice(1).map((to, i) => `${cycle[i]} -> ${to}: ${graph.get(cycle[i]!)!.get(to)!.join(', ')}`);
    expect(how ?? [], 'a cycle, with the imports that make each step').toEqual([]);
  });

  it('points down the layers: each node imports only its own layer and those below, and every node has a layer', () => {
    const rank = new Map(LAYERS.flatMap((l, i) => l.nodes.map((n) => [n, i] as const)));
    const nodes = new Set(sourceFiles().map((f) => nodeOf(path.relative(src, f))));
    expect(
      [...nodes].filter((n) => !rank.has(n)),
      'nodes in no layer: add them to LAYERS and docs/design/layers.md',
    ).toEqual([]);
    const upward: string[] = [];
    for (const [from, edges] of graph) {
      for (const [to, imports] of edges) {
        if (rank.get(to)! < rank.get(from)!)
          upward.push(`${from} (${LAYERS[rank.get(from)!]!.name}) -> ${to} (${LAYERS[rank.get(to)!]!.name}): ${imports.join(', ')}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
