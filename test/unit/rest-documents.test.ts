// The REST APIs' GraphQL documents (src/rest/documents.ts): one per route, built and validated on
// the route's first request, each resource selected whole under @include directives whose variables a
// request's fields, omit and expand set. What a request's variables include must be exactly what
// the same parameters select written out (`selection`), at every level of expansion.
import { type FieldNode, Kind, type OperationDefinitionNode, parse, type SelectionSetNode, type ValueNode, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import type { Yoga } from '../../src/graphql/yoga.ts';
import { ApiDocuments } from '../../src/rest/documents.ts';
import { type FlexParams, parseFlex, permit } from '../../src/rest/flex.ts';
import { type Resource, ResourceSelection, selection } from '../../src/rest/resource.ts';
import * as v2 from '../../src/rest/v2/resources.ts';
import { v2Routes } from '../../src/rest/v2/routes.ts';
import * as v3 from '../../src/rest/v3/resources.ts';
import { v3Routes } from '../../src/rest/v3/routes.ts';

const yoga = { getEnveloped: () => ({ schema, parse, validate }) } as unknown as Yoga;

/** The field paths a selection set selects with `variables` (fragments flattened, @include and @skip applied). */
function paths(set: SelectionSetNode, variables: Record<string, boolean>, prefix = '', out = new Set<string>()): Set<string> {
  const value = (v: ValueNode) => (v.kind === Kind.VARIABLE ? variables[v.name.value] : v.kind === Kind.BOOLEAN ? v.value : undefined);
  for (const s of set.selections) {
    const directive = (name: string) => s.directives?.find((d) => d.name.value === name)?.arguments?.[0]?.value;
    const include = directive('include');
    const skip = directive('skip');
    if (include && value(include) !== true) continue;
    if (skip && value(skip) === true) continue;
    if (s.kind === Kind.INLINE_FRAGMENT) paths(s.selectionSet, variables, prefix, out);
    else if (s.kind === Kind.FIELD) {
      const path = `${prefix}${(s as FieldNode).name.value}`;
      out.add(path);
      if (s.selectionSet) paths(s.selectionSet, variables, `${path}.`, out);
    }
  }
  return out;
}

const setOf = (text: string) => (parse(`{ ${text} }`).definitions[0] as OperationDefinitionNode).selectionSet;

const FLEX: Record<string, string>[] = [
  {},
  { fields: 'name,slug' },
  { omit: '_links,urls' },
  { fields: 'slug', omit: 'slug' },
  { expand: 'active_versions' },
  { expand: 'active_versions.last_build' },
  { expand: 'active_versions.last_build.config', fields: 'slug,active_versions.slug,active_versions.last_build.id' },
  { expand: 'active_versions.last_build', omit: 'active_versions.last_build.urls' },
  { expand: '*' },
  { expand: '~all', fields: '*' },
  { expand: 'permissions,organization,nothing' },
  { expand: 'active_versions', omit: 'active_versions' },
  { expand: 'last_build,last_build.config', fields: 'last_build' },
];

describe('a resource selected whole under @include', () => {
  const resources: [string, Resource][] = [
    ['v3 Project', v3.Project],
    ['v3 Version', v3.Version],
    ['v3 Build', v3.Build],
    ['v3 Subproject', v3.Subproject],
    ['v2 Project', v2.Project],
    ['v2 Version', v2.Version],
    ['v2 Build', v2.Build],
  ];

  it.each(resources)("%s: each request's variables select what its parameters select written out", (_name, resource) => {
    const whole = new ResourceSelection(resource);
    const permittedSets: (Set<string> | undefined)[] = [undefined, new Set(['active_versions', 'last_build']), new Set()];
    for (const query of FLEX) {
      for (const permitted of permittedSets) {
        let flex: FlexParams = parseFlex(query);
        if (permitted) flex = permit(flex, permitted);
        const variables = whole.variables(flex, permitted);
        expect(Object.keys(variables).sort(), 'every declared variable is given').toEqual([...whole.variableNames].sort());
        const label = `${JSON.stringify(query)} permitted ${JSON.stringify(permitted && [...permitted])}`;
        expect([...paths(setOf(whole.text), variables)].sort(), label).toEqual([...paths(setOf(selection(resource, flex, permitted)), {})].sort());
      }
    }
  });

  it('gives nested resources variables of their own, named by the expansion', () => {
    const names = new ResourceSelection(v3.Project).variableNames;
    expect(names).toContain('f_slug');
    expect(names).toContain('f__links');
    expect(names).toContain('x_active_versions');
    expect(names).toContain('active_versions__f_slug');
    expect(names).toContain('active_versions__x_last_build');
    expect(names).toContain('active_versions__last_build__x_config');
    // `organization` reads the project's organization only when expanded.
    expect(names).toContain('x_organization');
  });
});

describe("the APIs' documents", () => {
  it.each([
    ['v3', v3Routes],
    ['v2', v2Routes],
  ])('%s: every route has one, valid against the schema, with its @include variables declared Boolean!', (_api, routes) => {
    const documents = new ApiDocuments(yoga, routes);
    for (const route of routes) {
      const d = documents.of(route);
      expect(d.document, route.name).toBe(documents.of(route).document);
      expect(validate(schema, d.document), route.name).toEqual([]);
      const op = d.document.definitions[0] as OperationDefinitionNode;
      for (const v of d.selection?.variableNames ?? []) {
        const def = op.variableDefinitions?.find((x) => x.variable.name.value === v);
        expect(def?.type, `${route.name} $${v}`).toMatchObject({ kind: Kind.NON_NULL_TYPE, type: { name: { value: 'Boolean' } } });
      }
      if (route.path.includes('{project}')) expect(validate(schema, d.lookups!.document), route.name).toEqual([]);
    }
  });

  it('refuses a route whose operation does not validate, naming it, on its first use', () => {
    const bad = { ...v3Routes[0]!, name: 'broken-route', select: 'noSuchField' };
    const documents = new ApiDocuments(yoga, [bad]);
    expect(() => documents.of(bad)).toThrow(/route broken-route: its operation does not validate: Cannot query field "noSuchField"/);
    expect(() => documents.of(bad), 'and on every use after').toThrow(/route broken-route/);
  });

  it('answers only for the routes it was made with', () => {
    const documents = new ApiDocuments(yoga, v2Routes);
    expect(() => documents.of(v3Routes[0]!)).toThrow(/is not one of this API's/);
  });
});
