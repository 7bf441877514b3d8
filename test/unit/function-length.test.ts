// The length of src/'s functions (issue 23: "no function over 80 lines in src/, the dashboard's
// components included"; docs/design/layers.md "Functions"). Every function, method, arrow and
// React component of src/ is parsed (Babel's parser, TypeScript and JSX) and counted from its first
// line to its last; a function over the limit fails the test, named with its length.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');
const LIMIT = 80;

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'ClassPrivateMethod', 'ObjectMethod']);

function sourceFiles(dir = src): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (path.relative(src, p) !== 'generated') out.push(...sourceFiles(p));
    } else if (/\.(ts|tsx|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

type Node = { type: string; loc: { start: { line: number }; end: { line: number } }; [key: string]: unknown };
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';
const nameOf = (v: unknown): string | undefined => {
  const n = v as { name?: unknown; property?: { name?: unknown } } | undefined;
  return typeof n?.name === 'string' ? n.name : typeof n?.property?.name === 'string' ? n.property.name : undefined;
};

/**
 * The functions of `text` over `limit` lines, as `name` and `lines`: a function's own name, else
 * the variable or property it is assigned to, else `(argument of f)` for a callback given to `f`,
 * else the name of the function it is in.
 */
function tooLong(text: string, jsx: boolean, limit = LIMIT): { name: string; lines: number }[] {
  const ast = parse(text, { sourceType: 'module', plugins: jsx ? ['typescript', 'jsx'] : ['typescript'] });
  const out: { name: string; lines: number }[] = [];
  const visit = (n: Node, around: string) => {
    const own = FUNCTIONS.has(n.type) ? (nameOf(n.id) ?? nameOf(n.key) ?? around) : undefined;
    if (own !== undefined) {
      const lines = n.loc.end.line - n.loc.start.line + 1;
      if (lines > limit) out.push({ name: own, lines });
    }
    const here =
      own !== undefined
        ? own
        : n.type === 'VariableDeclarator'
          ? (nameOf(n.id) ?? around)
          : n.type === 'ObjectProperty' || n.type === 'ClassProperty'
            ? (nameOf(n.key) ?? around)
            : n.type === 'CallExpression' || n.type === 'NewExpression'
              ? `(argument of ${nameOf(n.callee) ?? 'a call'})`
              : around;
    for (const [key, value] of Object.entries(n)) {
      if (key === 'loc') continue;
      for (const child of Array.isArray(value) ? value : [value]) if (isNode(child)) visit(child, here);
    }
  };
  visit(ast.program as unknown as Node, '(top level)');
  return out;
}

describe(`the functions of src/ (at most ${LIMIT} lines)`, () => {
  it('are measured as a reader counts them: by name, from the first line to the last', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const a${i} = ${i};`).join('\n');
    const text = [
      `export function long() {\n${body(LIMIT - 1)}\n}`,
      `function short() {\n${body(LIMIT - 2)}\n}`,
      `const arrow = () => {\n${body(LIMIT)}\n};`,
      `use(() => {\n${body(LIMIT)}\n});`,
      `class C {\n  method() {\n${body(LIMIT)}\n  }\n}`,
    ].join('\n');
    expect(tooLong(text, false)).toEqual([
      { name: 'long', lines: LIMIT + 1 },
      { name: 'arrow', lines: LIMIT + 2 },
      { name: '(argument of use)', lines: LIMIT + 2 },
      { name: 'method', lines: LIMIT + 2 },
    ]);
    const paragraphs = Array.from({ length: LIMIT }, (_, i) => `      <p>{${i}}</p>`).join('\n');
    expect(tooLong(`export function Page() {\n  return (\n    <div>\n${paragraphs}\n    </div>\n  );\n}`, true)).toEqual([{ name: 'Page', lines: LIMIT + 6 }]);
  });

  it(`are at most ${LIMIT} lines long`, () => {
    const problems: string[] = [];
    for (const file of sourceFiles()) {
      const rel = path.relative(src, file);
      for (const f of tooLong(readFileSync(file, 'utf8'), file.endsWith('x'))) {
        problems.push(`${rel}: ${f.name} has ${f.lines} lines: split it into functions of at most ${LIMIT}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
