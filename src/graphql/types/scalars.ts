// Scalars: DateTime (ISO 8601 in UTC) and JSON (a build's normalized config).
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from '../builder.ts';

builder.scalarType('DateTime', {
  description: 'A point in time, ISO 8601 in UTC (`2026-01-31T12:00:00.000Z`).',
  serialize: (value) => (value as Date).toISOString(),
  parseValue: (value) => {
    const d = typeof value === 'string' ? new Date(value) : null;
    if (!d || Number.isNaN(d.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return d;
  },
});

function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return node.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      throw new GraphQLError('JSON literals cannot hold variables');
  }
}

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literal,
});
