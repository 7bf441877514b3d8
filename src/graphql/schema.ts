// The schema: the type files register themselves on the builder; this file only gathers them.
import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import './types/scalars.ts';
import './types/errors.ts';
import './types/common.ts';
import './types/user.ts';
import './types/project.ts';
import './types/version.ts';
import './types/build.ts';
import './types/subproject.ts';
import './types/redirect.ts';
import './types/environment-variable.ts';
import './types/integration.ts';
import './types/embed.ts';

builder.queryType({});
builder.mutationType({});

export const schema = builder.toSchema();

/** The SDL committed as schema.graphql. */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
