// Bad text is refused where it enters GraphQL, for the whole schema at once: a control character
// (C0 but tab, line feed and carriage return; DEL; C1) or an unpaired UTF-16 surrogate in any
// string of an operation, whether written in the query (a literal, nested in input objects and
// lists, a variable's default) or sent as a variable's value, is an error naming the argument
// and the path to the string, before any resolver runs. PostgreSQL cannot store a NUL at all (it
// answered INTERNAL_SERVER_ERROR), and the others have no place in a slug, a name, a URL or a
// search, while they can forge log lines and drive terminals (docs/design/deliveries.md, "Input").
//
// One rule, two moments: literals are checked with the document's validation (validated once
// per document text, as yoga caches it), variables as the operation starts, where their values
// are known (validation never sees them, and the REST adapter runs its cached documents with new
// variables through the same execute). Scalars, enums and custom scalars alike: every string is
// looked at, whatever type reads it.
import {
  type ASTNode,
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type ObjectFieldNode,
  type ValidationContext,
  type ValidationRule,
  validate,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { disallowedCharacter, findDisallowed } from '../domain/characters.ts';

/** The code of the errors this rule gives (the REST adapter answers them with 400). */
export const BAD_CHARACTER = 'BAD_USER_INPUT';

const WHAT = 'control characters (but tab, line feed and carriage return), DEL and unpaired surrogates are not allowed';

const pathText = (root: string, path: (string | number)[]) => path.reduce<string>((p, s) => (typeof s === 'number' ? `${p}[${s}]` : `${p}.${s}`), root);

/**
 * `input.repository.url`, `filter.slugs[2]`: where a node is below the argument it is in. `above`:
 * the visitor's ancestors and the node's parent, `keys` its path (the key in each of them).
 */
function pathBelowArgument(ancestors: readonly (ASTNode | readonly ASTNode[])[], keys: readonly (string | number)[]): string {
  let at = ancestors.findLastIndex((a) => !Array.isArray(a) && ((a as ASTNode).kind === Kind.ARGUMENT || (a as ASTNode).kind === Kind.VARIABLE_DEFINITION));
  const head = ancestors[at] as ASTNode | undefined;
  let path = head?.kind === Kind.ARGUMENT ? head.name.value : head?.kind === Kind.VARIABLE_DEFINITION ? `$${head.variable.name.value}` : '';
  for (at++; at < ancestors.length; at++) {
    const a = ancestors[at]!;
    if (Array.isArray(a)) {
      if ((ancestors[at - 1] as ASTNode).kind === Kind.LIST) path += `[${keys[at]}]`;
    } else if ((a as ASTNode).kind === Kind.OBJECT_FIELD) path += `.${(a as ObjectFieldNode).name.value}`;
  }
  return path;
}

/** `Argument "slug" of "project"`, or of a directive; a variable's default value otherwise. */
function argumentOf(context: ValidationContext): { argument: string | null; field: string | null; text: string } {
  const argument = context.getArgument()?.name ?? null;
  const directive = context.getDirective();
  const field = directive ? `@${directive.name}` : (context.getFieldDef()?.name ?? null);
  return { argument, field, text: argument ? `argument "${argument}" of "${field}"` : 'a default value' };
}

/**
 * The rule: with `literals`, strings written in the document; with `variables`, the values sent
 * for the variables the document uses, each reported once, naming the argument it is given to.
 */
export function noControlCharacters(opts: { literals: boolean; variables?: Record<string, unknown> | null }): ValidationRule {
  return (context) => {
    const reported = new Set<string>();
    return {
      StringValue(node, _key, parent, keys, ancestors) {
        if (!opts.literals) return;
        const bad = disallowedCharacter(node.value);
        if (!bad) return;
        const where = argumentOf(context);
        const path = pathBelowArgument([...ancestors, parent as ASTNode], keys);
        context.reportError(
          new GraphQLError(`The ${where.text} holds ${bad.codePoint} at ${path || 'its value'}: ${WHAT}.`, {
            nodes: node,
            extensions: { code: BAD_CHARACTER, argument: where.argument, field: where.field, path, character: bad.codePoint },
          }),
        );
      },
      Variable(node, _key, parent, keys, ancestors) {
        const variables = opts.variables;
        const name = node.name.value;
        if (!variables || reported.has(name) || !Object.hasOwn(variables, name)) return;
        // A variable's own definition is not a use of it.
        if (parent && !Array.isArray(parent) && (parent as ASTNode).kind === Kind.VARIABLE_DEFINITION) return;
        const bad = findDisallowed(variables[name]);
        if (!bad) return;
        const found = { codePoint: bad.codePoint, path: `${pathText(`$${name}`, bad.path)}${bad.key ? ' (a key)' : ''}` };
        reported.add(name);
        const where = argumentOf(context);
        const below = pathBelowArgument([...ancestors, parent as ASTNode], keys);
        context.reportError(
          new GraphQLError(
            `Variable "$${name}", given as ${where.text}${below.includes('.') || below.includes('[') ? ` at ${below}` : ''}, holds ${found.codePoint} at ${found.path}: ${WHAT}.`,
            {
              nodes: node,
              extensions: { code: BAD_CHARACTER, argument: where.argument, field: where.field, variable: name, path: found.path, character: found.codePoint },
            },
          ),
        );
      },
    };
  };
}

/** The errors of the variables' check of an operation about to run (none without variables). */
export function variableErrors(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | null | undefined): readonly GraphQLError[] {
  if (!variables || !Object.keys(variables).length) return [];
  // Looked at directly first: the document is walked (a validation pass) only to name the argument
  // a bad value was given to, not for the many operations whose variables hold none.
  if (!Object.values(variables).some((value) => findDisallowed(value))) return [];
  return validate(schema, document, [noControlCharacters({ literals: false, variables })]);
}

/** The yoga plugin: the literals' rule joins validation; the variables are checked before execution or a subscription starts. */
export function refusingControlCharacters(): Plugin {
  const check = ({
    args,
    setResultAndStopExecution,
  }: {
    args: { schema: GraphQLSchema; document: DocumentNode; variableValues?: unknown };
    setResultAndStopExecution: (r: never) => void;
  }) => {
    const errors = variableErrors(args.schema, args.document, args.variableValues as Record<string, unknown> | undefined);
    if (errors.length) setResultAndStopExecution({ errors } as never);
  };
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(noControlCharacters({ literals: true }));
    },
    onExecute: check as never,
    onSubscribe: check as never,
  };
}
