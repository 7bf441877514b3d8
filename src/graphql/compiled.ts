// Compiled execution (docs/design/graphql-reads.md, "Compiled execution"): a query operation run
// a second time is compiled by graphql-jit into a function of its own, and from then on runs as
// that function instead of through graphql-js's field-by-field executor. The resolvers, the plugins
// that wrap them (auth scopes, cost, Prisma's selections) and the answer are the same.
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLFieldConfig,
  type GraphQLFieldResolver,
  type GraphQLInputObjectType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isCompositeType,
  isInputObjectType,
  type OperationDefinitionNode,
  typeFromAST,
  visit,
} from 'graphql';
import type * as GraphqlJit from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { lazyModule } from '../lazy-module.ts';
import type { Executor } from '../metrics.ts';

/** Loaded at the first compiling, not with the API's modules (docs/design/startup.md, "Packages loaded when first used"). */
const jit = lazyModule<typeof GraphqlJit>('graphql-jit');

/** Documents whose compiled operations are kept; one compiled operation is tens of kilobytes of code. */
const KEPT_DOCUMENTS = 200;

// What is never compiled, and runs interpreted however often it is sent:
//
// - a document with a string holding graphql-jit's markers (`__MAGIC_DATE__…`): graphql-jit writes
//   a field's literal arguments into the code it generates as JSON, then turns strings holding its
//   markers back into code with a regular expression, so such a string argument would be code the
//   server runs;
// - a document of more than MAX_COMPILED_FIELDS fields;
// - a field answered as `__proto__` (an alias may be anything), or an object written in the query
//   with a `__proto__` key: graphql-jit builds answers and literal arguments as object literals in
//   code, where that key sets the object's prototype, and the field or the key went missing;
// - introspection, which would describe the schema graphql-jit runs against (the same schema,
//   copied with wrapped resolvers, below), and that copy lists its types in another order;
// - an operation with a variable of an input type that holds itself (selfHoldingInputs).
const JIT_MARKER = '__MAGIC_';
const INTROSPECTION = new Set(['__schema', '__type']);

/**
 * The most fields a compiled document selects. Compiling takes the event loop for longer than
 * validating (8 to 15 times as long, measured here), so a document as large as the token limit
 * allows would hold every other request for a quarter of a second; Lectern's own operations (the
 * REST adapter's largest selects 105 fields, the dashboard's fewer) are well under it.
 */
export const MAX_COMPILED_FIELDS = 300;

/**
 * Input types that hold themselves, at any depth. graphql-jit writes the parsing of a variable's
 * value out in full, field by field, and for such a type never stops (the process runs out of
 * memory); an operation with a variable of one is never compiled.
 */
function selfHoldingInputs(schema: GraphQLSchema): Set<string> {
  const holds = (type: GraphQLInputObjectType, seen: Set<string>): Set<string> => {
    for (const field of Object.values(type.getFields())) {
      const inner = getNamedType(field.type);
      if (isInputObjectType(inner) && !seen.has(inner.name)) holds(inner, seen.add(inner.name));
    }
    return seen;
  };
  const types = Object.values(schema.getTypeMap()).filter(isInputObjectType);
  return new Set(types.filter((t) => holds(t, new Set()).has(t.name)).map((t) => t.name));
}

function safeToCompile(schema: GraphQLSchema, selfHolding: Set<string>, document: DocumentNode, operation: OperationDefinitionNode): boolean {
  for (const v of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, v.type);
    if (!type || selfHolding.has(getNamedType(type).name)) return false;
  }
  let safe = true;
  let fields = 0;
  visit(document, {
    StringValue(node) {
      if (node.value.includes(JIT_MARKER)) safe = false;
    },
    ObjectField(node) {
      if (node.name.value === '__proto__') safe = false;
    },
    Field(node) {
      if (++fields > MAX_COMPILED_FIELDS || (node.alias ?? node.name).value === '__proto__' || INTROSPECTION.has(node.name.value)) safe = false;
    },
  });
  return safe;
}

/** A response path as graphql-js links it: `prev` is the path of the field above, list indices included. */
interface Path {
  readonly prev: Path | undefined;
  readonly key: string | number;
  readonly typename: string | undefined;
}

/** A canonical path, with the canonical paths one key below it. */
interface Canonical extends Path {
  readonly prev: Canonical | undefined;
  below?: Map<string | number, Canonical>;
}

/**
 * The schema graphql-jit compiles against: the same, with the resolvers that look paths up given
 * the request's one path object per position. graphql-js passes a field's resolver the very path
 * object it passed the field above as `prev`, and the Prisma plugin finds what a parent's query
 * loaded by that identity; graphql-jit writes each path as a new literal at every call. The
 * resolvers that look paths up are the Prisma plugin's (a field with a `pothosPrisma…` extension)
 * and those that plan a query for what is selected below them (queryFromInfo), which return an
 * object; a resolver of a scalar field of its own never does, and is left as it is.
 */
function withCanonicalPaths(schema: GraphQLSchema): GraphQLSchema {
  // Keyed by the request's context: the paths go with the request.
  const roots = new WeakMap<object, Map<string | number, Canonical>>();
  const canonical = (context: object, path: Path | undefined): Canonical | undefined => {
    if (!path) return undefined;
    const prev = canonical(context, path.prev);
    let below = prev ? prev.below : roots.get(context);
    if (!below) {
      below = new Map();
      if (prev) prev.below = below;
      else roots.set(context, below);
    }
    let own = below.get(path.key);
    if (!own) below.set(path.key, (own = { prev, key: path.key, typename: path.typename }));
    return own;
  };
  const wrap =
    (resolve: GraphQLFieldResolver<unknown, object>): GraphQLFieldResolver<unknown, object> =>
    (parent, args, context, info) => {
      (info as { path: Path | undefined }).path = canonical(context, info.path as Path);
      return resolve(parent, args, context, info);
    };
  const looksUpPaths = (field: GraphQLFieldConfig<unknown, unknown>) =>
    isCompositeType(getNamedType(field.type)) || Object.keys(field.extensions ?? {}).some((k) => k.startsWith('pothosPrisma'));
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field) => (field.resolve && looksUpPaths(field) ? { ...field, resolve: wrap(field.resolve) } : field),
  });
}

/**
 * graphql-jit's errors say where in the document they were found (`locations`) but not at which
 * nodes, and yoga rebuilds every error of an answer from its nodes, or its source and positions:
 * the locations would be lost. Each error is given the document's source and the positions of its
 * locations, as graphql-js's own errors have.
 */
function relocating(document: DocumentNode): (error: GraphQLError) => GraphQLError {
  const source = document.loc?.source;
  let lineStarts: number[] | undefined;
  return (error) => {
    if (!source || error.nodes || !error.locations?.length) return error;
    if (!lineStarts) {
      // Where each line starts, lines ending as graphql-js ends them (\r\n, \n or \r).
      lineStarts = [0];
      for (const m of source.body.matchAll(/\r\n|[\n\r]/g)) lineStarts.push(m.index + m[0].length);
    }
    const starts = lineStarts;
    const positions = error.locations.map((l) => (starts[l.line - 1] ?? 0) + l.column - 1);
    return new GraphQLError(error.message, { source, positions, path: error.path, originalError: error.originalError, extensions: error.extensions });
  };
}

/** A query compiled, its errors placed in its document. */
function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined): Compiled | null {
  const { compileQuery, isCompiledQuery } = jit();
  let compiled: GraphqlJit.CompiledQuery | ExecutionResult;
  try {
    compiled = compileQuery(schema, document, operationName);
  } catch {
    return null; // what graphql-jit cannot compile, graphql-js runs
  }
  if (!isCompiledQuery(compiled)) return null;
  const relocate = relocating(document);
  const placed = (r: ExecutionResult) => (r.errors?.length ? { ...r, errors: r.errors.map(relocate) } : r);
  return (root, context, variables) => {
    const result = compiled.query(root, context, variables);
    return result instanceof Promise ? result.then(placed) : placed(result);
  };
}

type Compiled = (root: unknown, context: unknown, variables: Record<string, unknown>) => PromiseOrValue<ExecutionResult>;
type PromiseOrValue<T> = T | Promise<T>;

/** What is known of one operation of a document: run once so far, compiled, or not compilable. */
type Entry = { state: 'seen' } | { state: 'compiled'; run: Compiled } | { state: 'interpreted' };

/**
 * The yoga plugin. Only queries: a mutation's fields run one after another and are rarely repeated
 * at the rate that pays for compiling, and subscriptions run elsewhere. An operation is compiled on
 * its second run, so operations sent once (a person's query in GraphiQL, a stranger's variety) cost
 * no compiling, and the REST adapter's operations, built once per route, are compiled by their
 * second request. It comes before any plugin that wraps execution, which then wraps this one.
 */
export function compiledExecution(schema: GraphQLSchema, counted: (executor: Executor) => void = () => {}): Plugin {
  // Made at the first compiling, as graphql-jit is loaded.
  let compiledSchema: GraphQLSchema | undefined;
  let selfHolding: Set<string> | undefined;
  const documents = new LRUCache<DocumentNode, Map<string, Entry>>({ max: KEPT_DOCUMENTS });
  /** The compiled operation to run, or null while (or where) graphql-js runs it. */
  const compiledFor = (document: DocumentNode, operation: OperationDefinitionNode, operationName: string | undefined): Compiled | null => {
    let entries = documents.get(document);
    if (!entries) documents.set(document, (entries = new Map()));
    const key = operationName ?? '';
    const entry = entries.get(key);
    if (!entry) entries.set(key, { state: 'seen' });
    if (entry?.state !== 'seen') return entry?.state === 'compiled' ? entry.run : null;
    selfHolding ??= selfHoldingInputs(schema);
    const run = safeToCompile(schema, selfHolding, document, operation)
      ? compile((compiledSchema ??= withCanonicalPaths(schema)), document, operationName)
      : null;
    entries.set(key, run ? { state: 'compiled', run } : { state: 'interpreted' });
    return run;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      const run = operation?.operation === 'query' ? compiledFor(args.document, operation, args.operationName ?? undefined) : null;
      counted(run ? 'compiled' : 'interpreted');
      if (!run || !operation) return;
      // Variables are checked first: wrong ones are refused by the interpreting executor, in its
      // words and with its status (graphql-jit words them otherwise); right ones are read by the
      // compiled query to the same values.
      const definitions = operation.variableDefinitions ?? [];
      setExecuteFn((a) => {
        const inputs = a.variableValues ?? {};
        if (definitions.length && getVariableValues(schema, definitions, inputs).errors) return executeFn(a);
        return run(a.rootValue, a.contextValue, inputs);
      });
    },
  };
}
