// Scalars: DateTime (ISO 8601 in UTC), JSON (a build's normalized config) and Upload (a file part
// of a multipart request).
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { UploadedFile } from '../../uploads/spool.ts';
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

builder.scalarType('Upload', {
  description:
    'A file sent as a part of a multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec), its variable mapped to the part. Never a value written in the query or its JSON variables.',
  serialize: () => {
    throw new GraphQLError('Upload is an input only');
  },
  parseValue: (value) => {
    if (value instanceof UploadedFile) return value;
    throw new GraphQLError('Upload must be a file sent as a part of a multipart request (the GraphQL multipart request spec).');
  },
  parseLiteral: () => {
    throw new GraphQLError('Upload must be a file sent as a part of a multipart request, not a literal.');
  },
});
