// Importing and updating projects, with Read the Docs' rules (docs/design/read-the-docs.md §2.4, §4.1, §4.9).
// An import creates the machine-managed `latest` version and queues its first build.
import { Prisma, type Project } from '../generated/prisma/client.ts';
import { projectToChange, signedIn } from './access.ts';
import { audit } from './audit.ts';
import { announceBuild, queueBuild } from './builds.ts';
import { LANGUAGES, PROGRAMMING_LANGUAGES } from './choices.ts';
import type { Context } from './context.ts';
import { ValidationError } from './errors.ts';
import { projectSlug } from './slug.ts';
import { Collector, checkChoice, checkRepositoryUrl, checkString, checkUrl, maxLength } from './validate.ts';

export interface RepositoryInput {
  url?: string | null;
  type?: string | null;
}

export interface ImportProjectInput {
  name?: string | null;
  repository?: RepositoryInput | null;
  homepage?: string | null;
  language?: string | null;
  programmingLanguage?: string | null;
  tags?: string[] | null;
  defaultBranch?: string | null;
  description?: string | null;
  privacyLevel?: 'public' | 'private' | null;
  /** No repository: versions come from uploads of built docs (uploads/upload-docs.ts), and nothing is built. */
  uploadOnly?: boolean | null;
}

export const VERSIONING_SCHEMES = new Set([
  'multiple_versions_with_translations',
  'multiple_versions_without_translations',
  'single_version_without_translations',
]);
const PRIVACY = new Set(['public', 'private']);

function checkRepository(c: Collector, repo: RepositoryInput | null | undefined, required: boolean, localRepositories: string[]) {
  if (repo === undefined || repo === null) {
    if (required) c.add('repository', 'This field is required.');
    return;
  }
  c.add('repository.url', checkRepositoryUrl(repo.url, localRepositories));
  if (repo.type !== undefined && repo.type !== null && repo.type !== 'git') c.add('repository.type', `"${repo.type}" is not a valid choice.`);
}

function checkTags(c: Collector, tags: string[] | null | undefined) {
  if (!tags) return;
  if (tags.length > 100) c.add('tags', 'Ensure this field has no more than 100 elements.');
  for (const [i, t] of tags.entries()) c.add(`tags.${i}`, checkString(t, { max: 100, required: true }));
}

function checkYamlPath(path: string | null | undefined): string | undefined {
  if (path === undefined || path === null) return undefined;
  const p = path.trim();
  if (p === '') return undefined;
  if (p.length > 1024) return maxLength(1024);
  if (p.startsWith('/')) return "Use a relative path. It should not begin with '/'. The path is relative to the root of your repository.";
  if (p.endsWith('/')) return 'The path cannot end with a slash.';
  if (p.includes('..')) return "The path cannot include '..'.";
  if (/[[\]{}()`'"\\%&<>|,]/.test(p)) return 'The path contains invalid characters.';
  if (p !== '.readthedocs.yaml' && !p.endsWith('/.readthedocs.yaml')) return 'The only allowed filename is <code>.readthedocs.yaml</code>.';
  return undefined;
}

const uniqueTags = (tags: string[] | null | undefined) => (tags ? [...new Set(tags.map((t) => t.trim()))].sort() : undefined);

/** `query` is the client's selection of the answer (GraphQL's), read as the row is written. */
export async function importProject(ctx: Context, input: ImportProjectInput, query: ProjectQuery = {}): Promise<Project> {
  const viewer = signedIn(ctx);
  const c = new Collector();
  c.add('name', checkString(input.name, { max: 63, required: true }));
  const uploadOnly = input.uploadOnly ?? false;
  if (uploadOnly && input.repository) c.add('repository', 'An upload-only project has no repository: leave it out.');
  else checkRepository(c, input.repository, !uploadOnly, ctx.config.build.localRepositories);
  c.add('homepage', checkUrl(input.homepage));
  c.add('language', checkChoice(input.language, LANGUAGES));
  c.add('programmingLanguage', checkChoice(input.programmingLanguage, PROGRAMMING_LANGUAGES));
  c.add('defaultBranch', checkString(input.defaultBranch, { max: 255 }));
  c.add('description', checkString(input.description, { max: 10_000, allowBlank: true }));
  c.add('privacyLevel', checkChoice(input.privacyLevel, PRIVACY));
  checkTags(c, input.tags);
  c.throwIfAny();

  const name = input.name!.trim();
  const slug = projectSlug(name);
  if (!slug) throw ValidationError.field('name', `Invalid project name "${name}": no slug generated.`);
  const exists = () => ValidationError.field('name', `Project with slug "${slug}" already exists.`);
  if (await ctx.prisma.project.findUnique({ where: { slug }, select: { id: true } })) throw exists();

  try {
    const defaultBranch = input.defaultBranch || null;
    const privacyLevel = input.privacyLevel ?? 'public';
    // A selection of relations (its versions, their builds) is read once `latest` and its build
    // exist; a selection of columns only comes back with the insert.
    const later = selectsRelations(query);
    const { project, build } = await ctx.prisma.$transaction(async (tx) => {
      const created = await tx.project.create({
        ...(later ? { select: { id: true } } : query),
        data: {
          name,
          slug,
          repositoryUrl: uploadOnly ? '' : input.repository!.url!.trim(),
          repositoryType: 'git',
          uploadOnly,
          homepage: input.homepage || null,
          language: input.language ?? 'en',
          programmingLanguage: input.programmingLanguage ?? 'words',
          defaultBranch,
          description: input.description ?? '',
          privacyLevel,
          tags: uniqueTags(input.tags) ?? [],
          users: { connect: { id: viewer.id } },
        },
      });
      if (uploadOnly) return { project: later ? await tx.project.findUniqueOrThrow({ ...query, where: { id: created.id } }) : created, build: null };
      const latest = await tx.version.create({
        data: {
          projectId: created.id,
          slug: 'latest',
          verboseName: 'latest',
          machine: true,
          active: true,
          type: 'branch',
          identifier: defaultBranch,
          privacyLevel,
        },
      });
      const build = await queueBuild(tx, ctx.events, latest);
      return { project: later ? await tx.project.findUniqueOrThrow({ ...query, where: { id: created.id } }) : created, build };
    });
    if (build) {
      announceBuild(ctx.events, build);
      ctx.events.emit('servedChanged', { projectId: build.projectId });
    }
    return project as Project;
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') throw exists();
    throw e;
  }
}

/** The client's selection of a project a write answers with (GraphQL's `query`). */
export interface ProjectQuery {
  include?: Prisma.ProjectInclude;
  select?: Prisma.ProjectSelect;
}

/** Whether a selection reads relations (nested objects), not only the row's columns. */
const selectsRelations = (q: ProjectQuery) => q.include !== undefined || Object.values(q.select ?? {}).some((v) => typeof v === 'object' && v !== null);

export interface UpdateProjectInput extends Omit<ImportProjectInput, 'repository'> {
  repository?: RepositoryInput | null;
  defaultVersion?: string | null;
  analyticsCode?: string | null;
  analyticsDisabled?: boolean | null;
  singleVersion?: boolean | null;
  showVersionWarning?: boolean | null;
  versionSwitcher?: boolean | null;
  docsSearch?: boolean | null;
  addonsEnabled?: boolean | null;
  hotkeysEnabled?: boolean | null;
  docDiffEnabled?: boolean | null;
  emailNotifications?: boolean | null;
  externalBuildsEnabled?: boolean | null;
  versioningScheme?: string | null;
  readthedocsYamlPath?: string | null;
  externalBuildsPrivacyLevel?: 'public' | 'private' | null;
}

/** PATCH semantics: only the fields given change; the slug never does (docs/design/read-the-docs.md §2.4). */
export async function updateProject(ctx: Context, slug: string, input: UpdateProjectInput, query: ProjectQuery = {}): Promise<Project> {
  const project = await projectToChange(ctx, slug);
  const c = new Collector();
  if (input.name !== undefined) c.add('name', checkString(input.name, { max: 63, required: true }));
  if (input.repository !== undefined) checkRepository(c, input.repository, true, ctx.config.build.localRepositories);
  c.add('homepage', checkUrl(input.homepage));
  c.add('language', checkChoice(input.language, LANGUAGES));
  c.add('programmingLanguage', checkChoice(input.programmingLanguage, PROGRAMMING_LANGUAGES));
  c.add('defaultVersion', checkString(input.defaultVersion, { max: 255 }));
  c.add('defaultBranch', checkString(input.defaultBranch, { max: 255, allowBlank: true }));
  c.add('analyticsCode', checkString(input.analyticsCode, { max: 50, allowBlank: true }));
  c.add('description', checkString(input.description, { max: 10_000, allowBlank: true }));
  c.add('versioningScheme', checkChoice(input.versioningScheme, VERSIONING_SCHEMES));
  c.add('readthedocsYamlPath', checkYamlPath(input.readthedocsYamlPath));
  c.add('privacyLevel', checkChoice(input.privacyLevel, PRIVACY));
  c.add('externalBuildsPrivacyLevel', checkChoice(input.externalBuildsPrivacyLevel, PRIVACY));
  checkTags(c, input.tags);
  c.throwIfAny();

  const data: Prisma.ProjectUpdateInput = {};
  if (input.name != null) data.name = input.name.trim();
  if (input.repository != null) data.repositoryUrl = input.repository.url!.trim();
  if (input.homepage !== undefined) data.homepage = input.homepage || null;
  if (input.language != null) data.language = input.language;
  if (input.programmingLanguage != null) data.programmingLanguage = input.programmingLanguage;
  if (input.defaultVersion != null) data.defaultVersion = input.defaultVersion;
  if (input.defaultBranch !== undefined) data.defaultBranch = input.defaultBranch || null;
  if (input.analyticsCode !== undefined) data.analyticsCode = input.analyticsCode || null;
  if (input.analyticsDisabled != null) data.analyticsDisabled = input.analyticsDisabled;
  if (input.singleVersion != null) data.singleVersion = input.singleVersion;
  if (input.showVersionWarning != null) data.showVersionWarning = input.showVersionWarning;
  if (input.versionSwitcher != null) data.versionSwitcher = input.versionSwitcher;
  if (input.docsSearch != null) data.docsSearch = input.docsSearch;
  if (input.addonsEnabled != null) data.addonsEnabled = input.addonsEnabled;
  if (input.hotkeysEnabled != null) data.hotkeysEnabled = input.hotkeysEnabled;
  if (input.docDiffEnabled != null) data.docDiffEnabled = input.docDiffEnabled;
  if (input.emailNotifications != null) data.emailNotifications = input.emailNotifications;
  if (input.externalBuildsEnabled != null) data.externalBuildsEnabled = input.externalBuildsEnabled;
  if (input.versioningScheme != null) data.versioningScheme = input.versioningScheme;
  if (input.readthedocsYamlPath !== undefined) data.readthedocsYamlPath = input.readthedocsYamlPath?.trim() || null;
  if (input.description != null) data.description = input.description;
  if (input.privacyLevel != null) data.privacyLevel = input.privacyLevel;
  if (input.externalBuildsPrivacyLevel != null) data.externalBuildsPrivacyLevel = input.externalBuildsPrivacyLevel;
  if (input.tags != null) data.tags = uniqueTags(input.tags);
  return ctx.prisma
    .$transaction(async (tx) => {
      const updated = await tx.project.update({ ...query, where: { id: project.id }, data });
      // Which settings changed, never their values (an analytics code, a repository URL with a password in it).
      await audit(ctx, { action: 'project-settings-changed', project, data: { fields: Object.keys(data) } }, tx);
      // A machine `latest` follows the default branch (docs/design/read-the-docs.md §4.2).
      if (input.defaultBranch !== undefined) {
        await tx.version.updateMany({
          where: { projectId: project.id, slug: 'latest', machine: true },
          data: { identifier: input.defaultBranch || null },
        });
      }
      return updated as Project;
    })
    .finally(() => ctx.events.emit('servedChanged', { projectId: project.id }));
}

/**
 * Deletes a project, with everything that belongs to it (versions, builds and their logs,
 * redirects, variables, integrations, subproject links; its translations are served on their own
 * again), and its stored files. `confirm` must repeat the slug. The answer is the project as it
 * was, read with `query` before it goes.
 */
export async function deleteProject(ctx: Context, slug: string, confirm: string, query: ProjectQuery = {}): Promise<Project> {
  const project = await projectToChange(ctx, slug);
  if (confirm !== project.slug) throw ValidationError.field('confirm', `Type the project's slug, "${project.slug}", to delete it.`);
  const shown = await ctx.prisma
    .$transaction(async (tx) => {
      const row = (await tx.project.findUniqueOrThrow({ ...query, where: { id: project.id } })) as Project;
      await tx.project.delete({ where: { id: project.id } });
      return row;
    })
    .finally(() => ctx.events.emit('servedChanged', { projectId: project.id }));
  // The files go after the rows: nothing serves them any more, and a failure here leaves files no
  // one can reach, never a project without its files. With the slash: `projects/docs` also starts
  // `projects/docs-two/`.
  await ctx.storage.deletePrefix(`projects/${project.slug}/`).catch((err: unknown) => {
    ctx.log.error({ err, project: project.slug }, 'could not delete the stored files of a deleted project; they are no longer served');
  });
  return shown;
}
