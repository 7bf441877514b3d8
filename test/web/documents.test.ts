// Every operation the dashboard sends costs less than the cost limit Lectern puts on a client's
// operation (LECTERN_GRAPHQL_MAX_COMPLEXITY, 20000 by default): each selection of a list is priced
// again, so a page whose components' fragments each select a project's 500 versions would be
// refused whole (docs/design/dashboard-data.md). The documents are read from src/web, each with the
// fragments it spreads, and priced by the complexity plugin with the schema Lectern serves.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import { Kind, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';

const WEB = path.resolve(import.meta.dirname, '../../src/web');
const MAX = 20_000;

const sources = readdirSync(WEB, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.tsx') || (f.endsWith('.ts') && !f.startsWith('graphql-env')))
  .map((f) => readFileSync(path.join(WEB, f), 'utf8'));
/** Every document's text: the template given to `graphql(`. */
const texts = sources.flatMap((s) => [...s.matchAll(/graphql\(\s*`([^`]*)`/g)].map((m) => m[1]!));
const fragments = new Map(texts.filter((t) => /^\s*fragment /.test(t)).map((t) => [/fragment (\w+)/.exec(t)![1]!, t]));

/** A document with every fragment it spreads, as gql.tada sends it. */
function whole(text: string): string {
  const seen = new Set<string>();
  const add = (t: string) => {
    for (const [, name] of t.matchAll(/\.\.\.(\w+)/g)) {
      if (seen.has(name!) || !fragments.has(name!)) continue;
      seen.add(name!);
      add(fragments.get(name!)!);
    }
  };
  add(text);
  return [text, ...[...seen].map((n) => fragments.get(n)!)].join('\n');
}

/** A value for each required variable (its cost does not depend on it), nothing for the others. */
function variables(doc: ReturnType<typeof parse>) {
  const op = doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const values: Record<string, unknown> = {};
  for (const v of op.variableDefinitions ?? []) {
    if (v.type.kind !== Kind.NON_NULL_TYPE) continue;
    const type = v.type.type.kind === Kind.NAMED_TYPE ? v.type.type.name.value : 'list';
    values[v.variable.name.value] = type === 'Int' ? 1 : type === 'Boolean' ? true : type === 'String' ? 'x' : null;
  }
  return values;
}

describe("the dashboard's operations", () => {
  const operations = texts.filter((t) => /^\s*(query|mutation|subscription) /.test(t));

  it('are found in src/web', () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(fragments.size).toBeGreaterThan(10);
  });

  it.each(operations.filter((t) => /^\s*query /.test(t)).map((t) => [/query (\w+)/.exec(t)![1]!, t]))('%s costs less than the limit', (_name, text) => {
    const doc = parse(whole(text!));
    const { complexity } = complexityFromQuery(doc, { schema, variables: variables(doc) });
    expect(complexity).toBeLessThan(MAX);
  });
});
