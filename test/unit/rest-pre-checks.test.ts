// The REST adapter's maintainers-only pre-check (src/rest/pre-checks.ts) is read from the GraphQL
// fields a route runs: the scope maps of Pothos's scope-auth plugin, as it reads them ($any by
// default, $all, $granted), and the real schema's fields.
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { onlyMaintainers, requiresMaintainer } from '../../src/rest/pre-checks.ts';
import type { Route } from '../../src/rest/route.ts';

const route = (field: string): Route => ({ name: field, method: 'GET', path: '/x/', summary: '', status: 200, envelope: 'object', field });

describe('which scope maps only a maintainer passes', () => {
  it('reads alternatives ($any, the default) and requirements ($all) as Pothos does', () => {
    expect(onlyMaintainers({ maintainerOf: 1 })).toBe(true);
    expect(onlyMaintainers({ maintainerOfProject: 'p' })).toBe(true);
    expect(onlyMaintainers({ public: true })).toBe(false);
    expect(onlyMaintainers({ maintainerOf: 1, siteAdmin: true }), 'an admin passes too').toBe(false);
    expect(onlyMaintainers({ $all: { loggedIn: true, maintainerOf: 1 } })).toBe(true);
    expect(onlyMaintainers({ $any: { maintainerOf: 1, loggedIn: true } })).toBe(false);
    expect(onlyMaintainers({ $granted: 'x' })).toBe(false);
    expect(onlyMaintainers({})).toBe(false);
  });

  it("reads the schema's fields along a route's coordinate", () => {
    expect(requiresMaintainer(schema, route('Query.project.redirects'))).toBe(true);
    expect(requiresMaintainer(schema, route('Query.project.environmentVariables'))).toBe(true);
    expect(requiresMaintainer(schema, route('Query.project.versions'))).toBe(false);
    expect(requiresMaintainer(schema, route('Query.projects'))).toBe(false);
    expect(requiresMaintainer(schema, route('Mutation.updateVersion'))).toBe(true);
    expect(() => requiresMaintainer(schema, route('Query.nothing'))).toThrow(/Query\.nothing is not in the schema/);
  });
});
