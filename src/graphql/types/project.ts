// Projects: the main unit. Root fields `projects` and `project`, and the import/update mutations.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { canSeeProject, isMaintainer, projectsWithAccess, visibleProjects } from '../../domain/access.ts';
import { badgeToken } from '../../domain/badges.ts';
import { LANGUAGES, languageName, PROGRAMMING_LANGUAGES, programmingLanguageName } from '../../domain/choices.ts';
import { addMaintainer, addTranslation, removeMaintainer, removeTranslation } from '../../domain/maintainers.ts';
import { deleteProject, importProject, updateProject } from '../../domain/projects.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { documentationUrl } from '../../urls.ts';
import { builder, LOOKUP_COST } from '../builder.ts';
import type { Context } from '../context.ts';
import { ConflictError } from '../errors.ts';
import {
  alsoSelecting,
  ChoiceRef,
  type Page,
  PrivacyLevelEnum,
  pageComplexity,
  pageOf,
  rowQuery,
  whenAwaited,
  window,
  withServedPrimed,
  withServedProject,
} from './common.ts';
import { writeErrors } from './errors.ts';
import { User } from './user.ts';

interface Repository {
  url: string;
  type: string;
}
const RepositoryRef = builder.objectRef<Repository>('Repository').implement({
  fields: (t) => ({ url: t.exposeString('url'), type: t.exposeString('type') }),
});

/** A related project the viewer may not be allowed to see: shown only when visible. */
async function visibleOrNull<T extends { id: number; privacyLevel: string }>(ctx: Context, p: T | null | undefined) {
  return p && (await canSeeProject(ctx, p)) ? p : null;
}

export const Project = builder.prismaObject('Project', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    description: t.exposeString('description'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
    language: t.field({ type: ChoiceRef, resolve: (p) => ({ code: p.language, name: languageName(p.language) }) }),
    programmingLanguage: t.field({
      type: ChoiceRef,
      resolve: (p) => ({ code: p.programmingLanguage, name: programmingLanguageName(p.programmingLanguage) }),
    }),
    homepage: t.string({ nullable: true, resolve: (p) => p.homepage || null }),
    repository: t.field({ type: RepositoryRef, resolve: (p) => ({ url: p.repositoryUrl, type: p.repositoryType }) }),
    defaultVersion: t.exposeString('defaultVersion'),
    defaultBranch: t.string({
      description: 'The branch `latest` builds; `master` when none was set (as Read the Docs answers).',
      resolve: (p) => p.defaultBranch ?? 'master',
    }),
    defaultBranchOverride: t.string({
      nullable: true,
      description: "The branch set for `latest` in the project's settings; null when `latest` follows the repository's own default branch.",
      resolve: (p) => p.defaultBranch,
    }),
    repositoryDefaultBranch: t.string({
      nullable: true,
      description: "The repository's own default branch (its HEAD, by `git ls-remote --symref`) as the last version sync read it; null before one.",
      resolve: (p) => p.repositoryHead,
    }),
    privacyLevel: t.expose('privacyLevel', { type: PrivacyLevelEnum }),
    externalBuildsPrivacyLevel: t.expose('externalBuildsPrivacyLevel', { type: PrivacyLevelEnum }),
    versioningScheme: t.exposeString('versioningScheme'),
    singleVersion: t.boolean({ resolve: (p) => p.singleVersion || p.versioningScheme === 'single_version_without_translations' }),
    tags: t.stringList({ resolve: (p) => [...p.tags].sort() }),
    users: t.relation('users', { description: 'The maintainers.', query: { orderBy: { username: 'asc' } } }),
    documentationUrl: t.string({
      description: "The docs of the default version; a subproject's and a translation's are under their parent's path.",
      complexity: LOOKUP_COST,
      resolve: (p, _a, ctx) => withServedProject(ctx, p.id, (served) => documentationUrl(ctx.config, served, p.defaultVersion)),
    }),
    documentationType: t.string({
      description: 'How the default version is built (`sphinx`, `mkdocs`, …); `sphinx` until it has been built.',
      // Active versions only: the default version is one, and the list stays short.
      select: { defaultVersion: true, versions: { where: { active: true }, select: { slug: true, documentationType: true } } },
      resolve: (p) => p.versions.find((v) => v.slug === p.defaultVersion)?.documentationType ?? 'sphinx',
    }),
    viewerIsMaintainer: t.boolean({
      description: "Whether the caller maintains this project (Read the Docs' `permissions.admin`).",
      resolve: (p, _a, ctx) => isMaintainer(ctx, p.id),
    }),
    badgeToken: t.string({
      description:
        "What a build status badge of a private version needs: `/projects/<slug>/badge/?version=<v>&token=<this>` (Read the Docs' badge token). It changes only with the installation's secret key. Maintainers only.",
      authScopes: (p) => ({ maintainerOf: p.id }),
      resolve: (p, _a, ctx) => badgeToken(ctx, p.id),
    }),
  }),
});

// What the project's settings turn on and off in its served pages, its builds and its email.
builder.prismaObjectFields(Project, (t) => ({
  showVersionWarning: t.exposeBoolean('showVersionWarning'),
  versionSwitcher: t.exposeBoolean('versionSwitcher', {
    description: "Whether served HTML pages carry the version and language menu (Read the Docs' flyout addon).",
  }),
  addonsEnabled: t.exposeBoolean('addonsEnabled', {
    description:
      "Whether served HTML pages get Read the Docs' addons data (/_/addons/, and the readthedocs-addons-data-ready event a theme's own version selector waits for); off, pages get no version menu either.",
  }),
  hotkeysEnabled: t.exposeBoolean('hotkeysEnabled', { description: "Whether the addons answer turns on the addons script's hotkeys." }),
  docDiffEnabled: t.exposeBoolean('docDiffEnabled', { description: "Whether the addons answer turns on the addons script's doc diff." }),
  emailNotifications: t.exposeBoolean('emailNotifications', {
    description:
      'Whether maintainers get email when a build of the default version fails, and when one passes again (when the installation sends email; each maintainer may turn it off for themself).',
  }),
  externalBuildsEnabled: t.exposeBoolean('externalBuildsEnabled', {
    description:
      "Pull requests (GitHub's pull_request, GitLab's merge_request events on an integration) are built as previews: external versions named by their number, private or public as externalBuildsPrivacyLevel says, removed LECTERN_PREVIEW_RETENTION_DAYS after they close.",
  }),
  uploadOnly: t.exposeBoolean('uploadOnly', { description: 'No repository: versions come from uploads of built docs, and nothing is built.' }),
  docsSearch: t.exposeBoolean('docsSearch', {
    description: "Whether served HTML pages carry Lectern's search box, and a Sphinx search.html is answered with the server's results.",
  }),
  analyticsCode: t.exposeString('analyticsCode', { nullable: true }),
  analyticsDisabled: t.exposeBoolean('analyticsDisabled'),
  readthedocsYamlPath: t.exposeString('readthedocsYamlPath', { nullable: true }),
}));

// Fields that return projects again, added once Project exists (a type cannot name itself while it is made).
builder.prismaObjectFields(Project, (t) => ({
  superproject: t.field({
    type: Project,
    nullable: true,
    description:
      "The parent project, when this project is a subproject (Read the Docs' `subproject_of`); null for a translation, which is served under its main project instead.",
    // Whether there is one is read with the page's other projects (withServedProject); the parent's row only where there is.
    resolve: (p, _a, ctx) =>
      p.mainLanguageProjectId
        ? null
        : withServedProject(ctx, p.id, (served) => {
            const parent = served.superprojects[0]?.parent;
            return parent ? ctx.prisma.project.findUnique({ where: { slug: parent.slug } }).then((row) => visibleOrNull(ctx, row)) : null;
          }),
  }),
  translationOf: t.field({
    type: Project,
    nullable: true,
    description: 'The main-language project, when this project is a translation.',
    // Most projects are none: no read then.
    resolve: (p, _a, ctx) =>
      p.mainLanguageProjectId === null
        ? null
        : ctx.prisma.project.findUnique({ where: { id: p.mainLanguageProjectId } }).then((main) => visibleOrNull(ctx, main)),
  }),
}));

export const ProjectPage = pageOf<Prisma.ProjectGetPayload<object>>('ProjectPage', Project);

export const ProjectFilter = builder.inputType('ProjectFilter', {
  fields: (t) => ({
    mine: t.boolean({
      description: 'Only projects the caller has access to: maintains, or reaches through an organization or its teams (what REST v3 lists).',
    }),
    language: t.string(),
    programmingLanguage: t.string(),
    slug: t.string({ description: 'Substring of the slug, case-insensitive.' }),
    slugExact: t.string({ description: "The slug, exactly (the v2 API's `slug` filter)." }),
    name: t.string({ description: 'Substring of the name, case-insensitive.' }),
    tag: t.string({ description: 'Projects with this tag, as written.' }),
    organization: t.string({ description: 'Projects of the organization with this slug.' }),
  }),
});

builder.queryFields((t) => ({
  languages: t.field({
    authScopes: { public: true },
    type: [ChoiceRef],
    description: "The languages a project's docs can be written in, as import and settings offer them (Read the Docs' list).",
    resolve: () => [...LANGUAGES].map(([code, name]) => ({ code, name })),
  }),
  programmingLanguages: t.field({
    authScopes: { public: true },
    type: [ChoiceRef],
    description: "The programming languages a project can name (Read the Docs' list).",
    resolve: () => [...PROGRAMMING_LANGUAGES].map(([code, name]) => ({ code, name })),
  }),
  projects: t.field({
    authScopes: { public: true },
    type: ProjectPage,
    description: 'Projects the caller can see, by slug.',
    args: { filter: t.arg({ type: ProjectFilter }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (_root, args, ctx, info): Page<never> => {
      const f = args.filter ?? {};
      const where: Prisma.ProjectWhereInput = {
        AND: [
          // Projects the caller has access to are ones they can see: that rule alone (both doubled the statement's joins).
          f.mine ? (ctx.viewer ? projectsWithAccess(ctx.viewer, 'read') : { id: -1 }) : visibleProjects(ctx.viewer),
          f.language ? { language: f.language } : {},
          f.programmingLanguage ? { programmingLanguage: f.programmingLanguage } : {},
          f.slug ? { slug: { contains: f.slug, mode: 'insensitive' } } : {},
          f.slugExact ? { slug: f.slugExact } : {},
          f.name ? { name: { contains: f.name, mode: 'insensitive' } } : {},
          f.tag ? { tags: { has: f.tag.trim() } } : {},
          f.organization ? { organization: { slug: f.organization } } : {},
        ],
      };
      const { take, skip } = window(args, ctx);
      const query = queryFromInfo({ context: ctx, info, path: ['nodes'] });
      return {
        nodes: whenAwaited(() =>
          ctx.prisma.project.findMany({ ...query, where, orderBy: { slug: 'asc' }, take, skip }).then(withServedPrimed(ctx, info)),
        ) as never,
        totalCount: () => ctx.prisma.project.count({ where }),
      };
    },
  }),
  project: t.prismaField({
    authScopes: { public: true },
    type: Project,
    nullable: true,
    description: 'One project by slug; null when there is none the caller can see.',
    args: { slug: t.arg.string({ required: true }) },
    // A unique lookup checked here (canSeeProject): Prisma batches the lookups of one tick, aliases included.
    resolve: async (query, _root, args, ctx, info) => {
      const project = await ctx.prisma.project.findUnique({ ...alsoSelecting(query, { id: true, privacyLevel: true }), where: { slug: args.slug } });
      return project && (await canSeeProject(ctx, project)) ? withServedPrimed(ctx, info)([project]).then(() => project) : null;
    },
  }),
  projectById: t.prismaField({
    authScopes: { public: true },
    type: Project,
    nullable: true,
    description: 'One project by id (the v2 API looks projects up this way); null when there is none the caller can see.',
    args: { id: t.arg.int({ required: true }) },
    resolve: async (query, _root, args, ctx, info) => {
      const project = await ctx.prisma.project.findUnique({ ...alsoSelecting(query, { id: true, privacyLevel: true }), where: { id: args.id } });
      return project && (await canSeeProject(ctx, project)) ? withServedPrimed(ctx, info)([project]).then(() => project) : null;
    },
  }),
}));

const RepositoryInput = builder.inputType('RepositoryInput', {
  fields: (t) => ({ url: t.string(), type: t.string({ description: 'Only `git`.' }) }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** Fields import and update share. */
const projectInputFields = (t: PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>) => ({
  name: t.string(),
  repository: t.field({ type: RepositoryInput }),
  homepage: t.string(),
  language: t.string({ description: 'A language code such as `en`.' }),
  programmingLanguage: t.string({ description: 'A code such as `py`.' }),
  tags: t.stringList(),
  defaultBranch: t.string(),
  description: t.string(),
});

export const ImportProjectInput = builder.inputType('ImportProjectInput', {
  fields: (t) => ({
    ...projectInputFields(t),
    privacyLevel: t.field({ type: PrivacyLevelEnum }),
    uploadOnly: t.boolean({
      description: 'No repository (leave `repository` out): the versions come from uploads of built docs (uploadDocs), and nothing is built.',
    }),
  }),
});

export const UpdateProjectInput = builder.inputType('UpdateProjectInput', {
  fields: (t) => ({
    ...projectInputFields(t),
    defaultVersion: t.string(),
    analyticsCode: t.string(),
    analyticsDisabled: t.boolean(),
    singleVersion: t.boolean(),
    showVersionWarning: t.boolean(),
    versionSwitcher: t.boolean(),
    docsSearch: t.boolean(),
    addonsEnabled: t.boolean({
      description: "Read the Docs' addons data on served pages (the readthedocs-addons-data-ready event, which the version menu reads). On by default.",
    }),
    hotkeysEnabled: t.boolean({ description: "The addons answer's hotkeys. On by default." }),
    docDiffEnabled: t.boolean({ description: "The addons answer's doc diff. On by default." }),
    emailNotifications: t.boolean({ description: 'Email to maintainers about builds of the default version. On by default.' }),
    externalBuildsEnabled: t.boolean({ description: 'Build pull requests as previews (GitHub and GitLab integrations). Off by default.' }),
    versioningScheme: t.string(),
    readthedocsYamlPath: t.string(),
    privacyLevel: t.field({ type: PrivacyLevelEnum }),
    externalBuildsPrivacyLevel: t.field({ type: PrivacyLevelEnum }),
  }),
});

const withConflicts = { types: [...writeErrors.types, ConflictError] };

builder.mutationFields((t) => ({
  addMaintainer: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Project,
    description: 'Makes a user (by username) a maintainer of the project. Answers with the project.',
    args: { project: t.arg.string({ required: true }), username: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => addMaintainer(ctx, args.project, args.username, rowQuery(query)),
  }),
  removeMaintainer: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Project,
    description: 'Removes a maintainer (yourself too); the last one stays (ConflictError). Answers with the project.',
    args: { project: t.arg.string({ required: true }), username: t.arg.string({ required: true }) },
    errors: withConflicts,
    resolve: (query, _root, args, ctx) => removeMaintainer(ctx, args.project, args.username, rowQuery(query)),
  }),
  addTranslation: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Project,
    description:
      "Makes a project you also maintain (`translation`, by slug) a translation of this one, served under its path with its own language code (Read the Docs' rules: other language, one per language, no chains). Answers with this project.",
    args: { project: t.arg.string({ required: true }), translation: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => addTranslation(ctx, args.project, args.translation, rowQuery(query)),
  }),
  removeTranslation: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Project,
    description: 'Ends a translation relationship; both projects stay. Answers with this project.',
    args: { project: t.arg.string({ required: true }), translation: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => removeTranslation(ctx, args.project, args.translation, rowQuery(query)),
  }),
  deleteProject: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Project,
    description:
      'Deletes a project with its versions, builds, redirects, variables and integrations, and its stored files. `confirm` repeats the slug. Answers with the project as it was.',
    args: { project: t.arg.string({ required: true }), confirm: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => deleteProject(ctx, args.project, args.confirm, rowQuery(query)),
  }),
  importProject: t.prismaField({
    authScopes: { loggedIn: true },
    type: Project,
    description: 'Imports a repository as a project maintained by the caller; creates `latest` and queues its first build.',
    args: { input: t.arg({ type: ImportProjectInput, required: true }) },
    errors: writeErrors,
    // The client's selection is read with the row written, not looked up again afterwards.
    resolve: (query, _root, args, ctx) => importProject(ctx, args.input, rowQuery(query)),
  }),
  updateProject: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.slug }),
    type: Project,
    description: 'Changes the given fields of a project; the slug never changes.',
    args: { slug: t.arg.string({ required: true }), input: t.arg({ type: UpdateProjectInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => updateProject(ctx, args.slug, args.input, rowQuery(query)),
  }),
}));

export { User };
