// Project environment variables: given to builds, never shown again. Values are encrypted at rest;
// limits follow Read the Docs (rtd-behavior §5.8), and names follow its dashboard rules, since a
// build's shell must be able to export them.
import type { Prisma } from '../generated/prisma/client.ts';
import type { Context } from '../graphql/context.ts';
import { NotFoundError, ValidationError } from '../graphql/errors.ts';
import { prisma, services } from '../services.ts';
import { requireMaintainedProject } from './access.ts';
import { checkString, Collector, notBlank, required } from './validate.ts';

export const VALUE_MAX = 48_000;
export const PROJECT_TOTAL_MAX = 256_000;

export interface EnvironmentVariableInput {
  name?: string | null;
  value?: string | null;
  public?: boolean | null;
}

/** POSIX shell quoting, as Python's shlex.quote: the stored form whose size counts. */
export function shellQuote(value: string): string {
  if (value === '') return "''";
  if (/^[\w@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

function checkName(name: string | null | undefined): string | undefined {
  const basic = checkString(name, { max: 128, required: true });
  if (basic) return basic;
  const n = name!;
  if (n.startsWith('__')) return "Variable name can't start with __ (double underscore)";
  if (n.toUpperCase().startsWith('READTHEDOCS')) return "Variable name can't start with READTHEDOCS";
  if (!/^[a-zA-Z0-9_]+$/.test(n)) return 'Only letters, numbers and underscore are allowed';
  return undefined;
}

export async function createEnvironmentVariable(ctx: Context, projectSlug: string, input: EnvironmentVariableInput) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const c = new Collector();
  c.add('name', checkName(input.name));
  if (input.value === undefined || input.value === null) c.add('value', required);
  else if (input.value.trim() === '') c.add('value', notBlank);
  else if (input.value.length > VALUE_MAX) c.add('value', `Ensure this field has no more than ${VALUE_MAX} characters.`);
  c.throwIfAny();
  const name = input.name!;
  const value = input.value!;
  const size = shellQuote(value).length;
  return prisma().$transaction(async (tx) => {
    // One create at a time per project, so the name and total-size checks hold under concurrency.
    await tx.$queryRaw`SELECT id FROM "Project" WHERE id = ${project.id} FOR NO KEY UPDATE`;
    if (await tx.environmentVariable.findFirst({ where: { projectId: project.id, name }, select: { id: true } })) {
      throw ValidationError.field('name', 'There is already a variable with this name for this project');
    }
    const total = await tx.environmentVariable.aggregate({ where: { projectId: project.id }, _sum: { valueSize: true } });
    if ((total._sum.valueSize ?? 0) + size > PROJECT_TOTAL_MAX) {
      throw ValidationError.field('nonFieldErrors', 'The total size of all environment variables in the project cannot exceed 256 KB.');
    }
    return tx.environmentVariable.create({
      data: {
        projectId: project.id,
        name,
        valueEncrypted: services().cipher.encrypt(value),
        valueSize: size,
        public: input.public ?? false,
      },
    });
  });
}

export interface EnvironmentVariableQuery {
  include?: Prisma.EnvironmentVariableInclude;
  select?: Prisma.EnvironmentVariableSelect;
}

/** `query` (the GraphQL selection) is read before the row goes, so the answer can show its relations. */
export async function deleteEnvironmentVariable(ctx: Context, projectSlug: string, id: number, query: EnvironmentVariableQuery = {}) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const where = { id, projectId: project.id };
  return prisma().$transaction(async (tx) => {
    const shown = await tx.environmentVariable.findFirst({ ...query, where });
    // Gone already, or removed by a concurrent delete between the read and here.
    if (!shown || (await tx.environmentVariable.deleteMany({ where })).count === 0) throw new NotFoundError('EnvironmentVariable');
    return shown;
  });
}
