// Which REST routes answer "not a maintainer" before their operation runs, read from the GraphQL
// fields the route runs (their Pothos `authScopes`), not declared by the route. DRF checks
// permission before the throttle, the method, lookups and validation answer (docs/design/
// read-the-docs.md §2.3); in Lectern that permission is the fields' rule, so the adapter asks it
// first exactly where the fields on the route's coordinate require a maintainer.
import { type GraphQLField, type GraphQLObjectType, type GraphQLSchema, getNamedType, isObjectType } from 'graphql';
import { coordinateOf } from './operation.ts';
import type { Route } from './route.ts';

type ScopeMap = Record<string, unknown>;
type Scopes = ScopeMap | ((...a: unknown[]) => ScopeMap) | undefined;

const MAINTAINER = new Set(['maintainerOf', 'maintainerOfProject']);

/** Stands for any parent object or arguments: every property is a placeholder value. */
const anything: unknown = new Proxy({}, { get: (_t, key) => (key === Symbol.toPrimitive ? () => 0 : 0) });

/**
 * Whether a Pothos scope map lets only a maintainer through: of a map's alternatives (`$any`,
 * Pothos's default) every one must be a maintainer scope; of `$all`, one is enough.
 */
export function onlyMaintainers(map: ScopeMap, all = false): boolean {
  const entries = Object.entries(map);
  const needs = ([key, value]: [string, unknown]): boolean =>
    MAINTAINER.has(key) ||
    ((key === '$all' || key === '$any') && typeof value === 'object' && value !== null && onlyMaintainers(value as ScopeMap, key === '$all'));
  if (entries.length === 0) return false;
  return all ? entries.some(needs) : entries.every(needs);
}

function scopesOf(field: GraphQLField<unknown, unknown>): ScopeMap | null {
  const scopes = (field.extensions as { pothosOptions?: { authScopes?: Scopes } }).pothosOptions?.authScopes;
  if (scopes === undefined) return null;
  if (typeof scopes !== 'function') return scopes;
  try {
    return scopes(anything, anything, anything, anything);
  } catch (e) {
    throw new Error(`the authScopes of ${field.name} cannot be read for the REST adapter: ${(e as Error).message}`);
  }
}

/** Whether the fields `route` runs let only a maintainer of its project through. */
export function requiresMaintainer(schema: GraphQLSchema, route: Route): boolean {
  const { root, path } = coordinateOf(route);
  let type: GraphQLObjectType | null | undefined = root === 'Query' ? schema.getQueryType() : schema.getMutationType();
  for (const name of path) {
    const field = type?.getFields()[name];
    if (!field) throw new Error(`route ${route.name}: ${type?.name}.${name} is not in the schema`);
    const scopes = scopesOf(field);
    if (scopes && onlyMaintainers(scopes)) return true;
    const named = getNamedType(field.type);
    type = isObjectType(named) ? named : null;
  }
  return false;
}
