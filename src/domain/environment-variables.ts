// Project environment variables: given to builds, never shown again. Values are encrypted at rest;
// limits follow Read the Docs (docs/design/read-the-docs.md §4.8), and names follow its dashboard rules, since a
// build's shell must be able to export them.
import type { EnvironmentVariable, Prisma } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import { audit } from './audit.ts';
import type { Context } from './context.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { Collector, checkString, notBlank, required } from './validate.ts';

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
  return forbiddenVariableName(name!) ?? undefined;
}

/**
 * Names a project may not give a variable, because they change how the build's programs load or
 * run (or where their traffic goes), or because Lectern sets them itself. Compared ignoring case:
 * some programs read these names in any case (Python's urllib reads `https_proxy` and
 * `HTTPS_PROXY` alike), and a lower-case twin is never what a project means.
 *
 * Left allowed on purpose: `PIP_*` (projects set their index this way), `LANG`/`LC_*` and `TZ`
 * (text and dates only), `SSL_CERT_*`/`REQUESTS_CA_BUNDLE` (they only change whom the project's
 * own downloads trust), `NPM_CONFIG_*`, `USER`.
 */
const RESERVED: { names?: string[]; prefixes?: string[]; suffixes?: string[]; why: string }[] = [
  { names: ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP'], why: 'Lectern sets it for the build (it decides where programs and files are found)' },
  {
    names: ['SHELL', 'ENV', 'IFS', 'CDPATH', 'GLOBIGNORE', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND'],
    prefixes: ['BASH_'],
    why: 'the shell reads it (start-up code, options, how commands are split)',
  },
  {
    names: ['GCONV_PATH', 'GLIBC_TUNABLES', 'HOSTALIASES', 'LOCPATH', 'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS', 'LOCALDOMAIN', 'TZDIR'],
    prefixes: ['LD_', 'DYLD_', 'MALLOC_'],
    why: 'the program loader or the C library reads it (it can load other code into every program)',
  },
  { prefixes: ['GIT_'], why: 'git reads it (configuration, hooks and helper programs)' },
  { prefixes: ['PYTHON'], why: 'Python reads it at start-up (module paths, start-up scripts)' },
  { names: ['NODE_OPTIONS', 'NODE_PATH'], why: 'Node.js reads it at start-up' },
  { names: ['PERL5LIB', 'PERLLIB', 'PERL5OPT', 'PERL5DB', 'RUBYOPT', 'RUBYLIB'], why: 'Perl or Ruby reads it at start-up' },
  { names: ['JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS'], why: 'Java reads it at start-up' },
  { names: ['OPENSSL_CONF', 'OPENSSL_ENGINES', 'OPENSSL_MODULES', 'SSH_ASKPASS'], why: 'it makes programs load or run other code' },
  { prefixes: ['XDG_'], why: 'programs read their configuration from where it points' },
  { names: ['NO_PROXY'], suffixes: ['_PROXY'], why: "it would route the build's network traffic" },
  { prefixes: ['LECTERN'], why: 'Lectern reserves these names' },
];

/**
 * Why a project may not have an environment variable of this name, or null when it may. Checked
 * when a variable is created; builds leave out (and report) older rows with such names.
 */
export function forbiddenVariableName(name: string): string | null {
  if (name.startsWith('__')) return "Variable name can't start with __ (double underscore)";
  const upper = name.toUpperCase();
  if (upper.startsWith('READTHEDOCS')) return "Variable name can't start with READTHEDOCS";
  if (!/^[a-zA-Z0-9_]+$/.test(name)) return 'Only letters, numbers and underscore are allowed';
  for (const rule of RESERVED) {
    const prefix = rule.prefixes?.find((p) => upper.startsWith(p));
    const suffix = rule.suffixes?.find((x) => upper.endsWith(x));
    const what = rule.names?.includes(upper) ? `be ${upper}` : prefix ? `start with ${prefix}` : suffix ? `end with ${suffix}` : null;
    if (what) return `Variable name can't ${what} (in any case): ${rule.why}`;
  }
  return null;
}

export async function createEnvironmentVariable(
  ctx: Context,
  projectSlug: string,
  input: EnvironmentVariableInput,
  query: EnvironmentVariableQuery = {},
): Promise<EnvironmentVariable> {
  const project = await projectToChange(ctx, projectSlug);
  const c = new Collector();
  c.add('name', checkName(input.name));
  if (input.value === undefined || input.value === null) c.add('value', required);
  else if (input.value.trim() === '') c.add('value', notBlank);
  else if (input.value.length > VALUE_MAX) c.add('value', `Ensure this field has no more than ${VALUE_MAX} characters.`);
  c.throwIfAny();
  const name = input.name!;
  const value = input.value!;
  const size = shellQuote(value).length;
  return ctx.prisma.$transaction(async (tx) => {
    // One create at a time per project, so the name and total-size checks hold under concurrency.
    await tx.$queryRaw`SELECT id FROM "Project" WHERE id = ${project.id} FOR NO KEY UPDATE`;
    if (await tx.environmentVariable.findFirst({ where: { projectId: project.id, name }, select: { id: true } })) {
      throw ValidationError.field('name', 'There is already a variable with this name for this project');
    }
    const total = await tx.environmentVariable.aggregate({ where: { projectId: project.id }, _sum: { valueSize: true } });
    if ((total._sum.valueSize ?? 0) + size > PROJECT_TOTAL_MAX) {
      throw ValidationError.field('nonFieldErrors', 'The total size of all environment variables in the project cannot exceed 256 KB.');
    }
    // Its name only: the value is a secret.
    await audit(ctx, { action: 'variable-added', project, data: { name, public: input.public ?? false } }, tx);
    return tx.environmentVariable.create({
      ...query,
      data: {
        projectId: project.id,
        name,
        valueEncrypted: ctx.cipher.encrypt(value),
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
  const project = await projectToChange(ctx, projectSlug);
  const where = { id, projectId: project.id };
  return ctx.prisma.$transaction(async (tx) => {
    const shown = await tx.environmentVariable.findFirst({ ...query, where });
    const name = await tx.environmentVariable.findFirst({ where, select: { name: true } });
    // Gone already, or removed by a concurrent delete between the read and here.
    if (!shown || !name || (await tx.environmentVariable.deleteMany({ where })).count === 0) throw new NotFoundError('EnvironmentVariable');
    await audit(ctx, { action: 'variable-removed', project, data: { name: name.name } }, tx);
    return shown;
  });
}
