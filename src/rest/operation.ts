// A REST route's GraphQL operation, built as a document from the schema, as SOFA builds one per
// root field: the route names a coordinate (`Query.project.versions`, `Mutation.updateVersion`),
// each field on the way takes its arguments as variables typed as the schema declares them, and
// the innermost field selects the resource (`totalCount nodes { … }` for a page, the success
// member's `data { … }` and the error types for a mutation). Nothing is written as operation text.
import {
  type ArgumentNode,
  astFromValue,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type GraphQLType,
  getNamedType,
  isObjectType,
  isUnionType,
  Kind,
  type OperationTypeNode,
  parse,
  type SelectionNode,
  type SelectionSetNode,
  type TypeNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { Route } from './route.ts';

/** What a mutation's union answers with besides its data: the error types' fields. */
const ERROR_FIELDS = '... on Error { code status message } ... on ValidationError { fieldErrors { field messages } } ... on NotFoundError { model }';

/** A route's coordinate: the root type and the fields from it to the one that answers. */
export function coordinateOf(route: Route): { root: 'Query' | 'Mutation'; path: string[] } {
  const [root, ...path] = route.field.split('.');
  if ((root !== 'Query' && root !== 'Mutation') || path.length === 0) throw new Error(`route ${route.name}: not a coordinate: ${route.field}`);
  return { root, path };
}

function typeNode(type: GraphQLType): TypeNode {
  const t = type as { ofType?: GraphQLType; name?: string; toString(): string };
  const text = String(t);
  if (text.endsWith('!')) return { kind: Kind.NON_NULL_TYPE, type: typeNode(t.ofType!) as never };
  if (text.startsWith('[')) return { kind: Kind.LIST_TYPE, type: typeNode(t.ofType!) };
  return { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: t.name! } };
}

const name = (value: string) => ({ kind: Kind.NAME, value }) as const;

/** A selection set from a resource's selection text (`id slug project { slug }`). */
function selectionsOf(text: string): readonly SelectionNode[] {
  const op = parse(`{ ${text} }`, { noLocation: true }).definitions[0] as { selectionSet: SelectionSetNode };
  return op.selectionSet.selections;
}

/**
 * The argument a route binds: `$name` is a variable, anything else a literal value. An argument the
 * route does not bind is bound to the variable of its own name when the route has one: a path
 * parameter (`{project}`), the page's `limit` and `offset`, the body's `input`, the query's `filter`.
 */
function bindingsOf(route: Route, field: string, last: boolean): (arg: string) => unknown {
  const given = route.args?.[field] ?? {};
  const params = new Set([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
  return (arg) => {
    if (arg in given) return given[arg];
    if (params.has(arg)) return `$${arg}`;
    if (!last) return undefined;
    if (route.envelope === 'page' && (arg === 'limit' || arg === 'offset')) return `$${arg}`;
    if (arg === 'input' && route.input) return '$input';
    if (arg === 'filter' && (route.filters || route.variables)) return '$filter';
    return undefined;
  };
}

const booleanVariable = (v: string): VariableDefinitionNode => ({
  kind: Kind.VARIABLE_DEFINITION,
  variable: { kind: Kind.VARIABLE, name: name(v) },
  type: { kind: Kind.NON_NULL_TYPE, type: { kind: Kind.NAMED_TYPE, name: name('Boolean') } },
});

/**
 * The operation of `route` selecting `selection` (the resource's fields, or the route's own);
 * `booleans`: the variables of the selection's @include directives, declared `Boolean!`.
 */
export function buildOperation(schema: GraphQLSchema, route: Route, selection: string, booleans: readonly string[] = []): DocumentNode {
  const { root, path } = coordinateOf(route);
  let type: GraphQLObjectType | null | undefined = root === 'Query' ? schema.getQueryType() : schema.getMutationType();
  const variables = new Map<string, VariableDefinitionNode>();
  const fields: { node: Omit<FieldNode, 'selectionSet'>; def: GraphQLField<unknown, unknown> }[] = [];
  for (const [i, fieldName] of path.entries()) {
    const def = type?.getFields()[fieldName];
    if (!def) throw new Error(`route ${route.name}: ${type?.name}.${fieldName} is not in the schema`);
    const bind = bindingsOf(route, fieldName, i === path.length - 1);
    const args: ArgumentNode[] = [];
    for (const arg of def.args) {
      const b = bind(arg.name);
      if (b === undefined) continue;
      if (typeof b === 'string' && b.startsWith('$')) {
        const v = b.slice(1);
        variables.set(v, { kind: Kind.VARIABLE_DEFINITION, variable: { kind: Kind.VARIABLE, name: name(v) }, type: typeNode(arg.type) });
        args.push({ kind: Kind.ARGUMENT, name: name(arg.name), value: { kind: Kind.VARIABLE, name: name(v) } });
      } else {
        const value = astFromValue(b, arg.type as GraphQLInputType);
        if (!value) throw new Error(`route ${route.name}: ${JSON.stringify(b)} is not a ${String(arg.type)} for ${fieldName}(${arg.name})`);
        args.push({ kind: Kind.ARGUMENT, name: name(arg.name), value });
      }
    }
    for (const given of Object.keys(route.args?.[fieldName] ?? {})) {
      if (!def.args.some((a) => a.name === given)) throw new Error(`route ${route.name}: ${fieldName} takes no argument ${given}`);
    }
    fields.push({ node: { kind: Kind.FIELD, name: name(fieldName), arguments: args }, def });
    const named = getNamedType(def.type);
    type = isObjectType(named) ? named : null;
  }

  // The innermost selection: a mutation's union, a page, or the resource.
  const last = fields[fields.length - 1]!.def;
  const answer = getNamedType(last.type);
  let inner: readonly SelectionNode[];
  if (isUnionType(answer)) {
    const success = answer.getTypes().find((t) => t.name.endsWith('Success'));
    if (!success) throw new Error(`route ${route.name}: ${answer.name} has no success member`);
    const data = success.getFields().data!;
    const dataNode: FieldNode = isObjectType(getNamedType(data.type))
      ? { kind: Kind.FIELD, name: name('data'), selectionSet: { kind: Kind.SELECTION_SET, selections: selectionsOf(selection) } }
      : { kind: Kind.FIELD, name: name('data') };
    inner = [
      {
        kind: Kind.INLINE_FRAGMENT,
        typeCondition: { kind: Kind.NAMED_TYPE, name: name(success.name) },
        selectionSet: { kind: Kind.SELECTION_SET, selections: [dataNode] },
      },
      ...selectionsOf(ERROR_FIELDS),
    ];
  } else if (route.envelope === 'page') {
    inner = selectionsOf(`totalCount nodes { ${selection} }`);
  } else {
    inner = selectionsOf(selection);
  }

  let selections: readonly SelectionNode[] = inner;
  for (const f of [...fields].reverse()) {
    selections = [{ ...f.node, selectionSet: { kind: Kind.SELECTION_SET, selections } } as FieldNode];
  }
  return {
    kind: Kind.DOCUMENT,
    definitions: [
      {
        kind: Kind.OPERATION_DEFINITION,
        operation: (root === 'Query' ? 'query' : 'mutation') as OperationTypeNode,
        variableDefinitions: [...variables.values(), ...booleans.map(booleanVariable)],
        selectionSet: { kind: Kind.SELECTION_SET, selections },
      },
    ],
  };
}
