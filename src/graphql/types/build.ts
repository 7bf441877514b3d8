// Builds and the commands they ran. Lists per project and per version, one build by id, the
// mutation that triggers a build, and the subscription that follows one live.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { Repeater } from 'graphql-yoga';
import { announceProgress, type BuildProgress, followBuild } from '../../db/progress.ts';
import { visibleBuilds, visibleProjects } from '../../domain/access.ts';
import { cancelBuild, triggerBuild } from '../../domain/builds.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { uploadDocs } from '../../uploads/upload-docs.ts';
import { builder } from '../builder.ts';
import type { Context } from '../context.ts';
import { ConflictError, LecternError, NotFoundError } from '../errors.ts';
import { BuildStateEnum, type PageArgs, pageComplexity, pageOf, projectOf, rowQuery, window } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';
import { Version } from './version.ts';

export const BuildCommand = builder.prismaObject('BuildCommand', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    description: t.exposeString('description'),
    command: t.exposeString('command'),
    output: t.exposeString('output'),
    exitCode: t.exposeInt('exitCode', { nullable: true }),
    startTime: t.expose('startTime', { type: 'DateTime' }),
    endTime: t.expose('endTime', { type: 'DateTime', nullable: true }),
    runTime: t.int({
      nullable: true,
      description: 'Whole seconds the command ran.',
      resolve: (c) => (c.endTime ? Math.round((c.endTime.getTime() - c.startTime.getTime()) / 1000) : null),
    }),
  }),
});

const FINAL_STATES = ['finished'] as const;

const BuildUpload = builder.objectRef<{ uploadedBy: string; archiveBytes: number; files: number; bytes: number }>('BuildUpload').implement({
  description: 'An upload of built docs.',
  fields: (t) => ({
    uploadedBy: t.exposeString('uploadedBy', { description: 'The username of who uploaded it, as it was then.' }),
    archiveBytes: t.exposeFloat('archiveBytes', { description: 'Size of the archive sent.' }),
    files: t.exposeInt('files', { description: 'Files the archive held.' }),
    bytes: t.exposeFloat('bytes', { description: 'Bytes the files held, unpacked.' }),
  }),
});

export const Build = builder.prismaObject('Build', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    state: t.expose('state', { type: BuildStateEnum }),
    success: t.boolean({ nullable: true, description: 'Null until the build is finished.', resolve: (b) => (b.state === 'finished' ? b.success : null) }),
    error: t.exposeString('error', { nullable: true, description: 'Why the build failed; null unless it did.' }),
    message: t.exposeString('message', {
      nullable: true,
      description:
        'What a successful build has to say: that it was skipped (its commit and configuration already built and published, or a build.jobs step exited with 183), and why. Null otherwise.',
    }),
    commit: t.exposeString('commit', { nullable: true }),
    type: t.exposeString('type'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    duration: t.exposeInt('duration', { nullable: true, description: 'Seconds from start to finish.' }),
    config: t.expose('config', { type: 'JSON', nullable: true, description: 'The normalized build configuration.' }),
    versionSlug: t.exposeString('versionSlug', { nullable: true }),
    upload: t.field({
      type: BuildUpload,
      nullable: true,
      description: 'When the build is an upload of built docs (uploadDocs): who sent it and what it held. Null for a build from the repository.',
      resolve: (b) =>
        b.uploadedBy === null
          ? null
          : { uploadedBy: b.uploadedBy, archiveBytes: Number(b.uploadArchiveBytes ?? 0), files: b.uploadFiles ?? 0, bytes: Number(b.uploadBytes ?? 0) },
    }),
    // The page's own row where a query's page read it (projectOf): none for a project's last builds.
    project: t.field({ type: Project, resolve: (b, _a, ctx) => projectOf(ctx, b.projectId) }),
    version: t.relation('version', { nullable: true }),
    commands: t.relation('commands', { query: { orderBy: { id: 'asc' } } }),
  }),
});

export const BuildPage = pageOf<Prisma.BuildGetPayload<object>>('BuildPage', Build);

const BuildFilter = builder.inputType('BuildFilter', {
  fields: (t) => ({
    commit: t.string(),
    running: t.boolean({ description: 'true: not finished yet; false: finished.' }),
    projectSlug: t.string(),
    versionSlug: t.string(),
  }),
});

function buildWhere(filter: { commit?: string | null; running?: boolean | null; projectSlug?: string | null; versionSlug?: string | null } | null | undefined) {
  const f = filter ?? {};
  return [
    f.commit ? { commit: f.commit } : {},
    f.running === true ? { state: { notIn: [...FINAL_STATES] } } : f.running === false ? { state: { in: [...FINAL_STATES] } } : {},
    f.projectSlug ? { project: { slug: f.projectSlug } } : {},
    f.versionSlug ? { version: { slug: f.versionSlug } } : {},
  ] satisfies Prisma.BuildWhereInput[];
}

/** A page of builds matching all of `conditions`, newest first. */
function buildPage(conditions: Prisma.BuildWhereInput[], args: PageArgs, ctx: Context, info: GraphQLResolveInfo) {
  const where: Prisma.BuildWhereInput = { AND: conditions };
  const { take, skip } = window(args, ctx);
  return {
    nodes: ctx.prisma.build.findMany({ ...queryFromInfo({ context: ctx, info, path: ['nodes'] }), where, orderBy: { createdAt: 'desc' }, take, skip }),
    totalCount: () => ctx.prisma.build.count({ where }),
  };
}

builder.prismaObjectFields(Project, (t) => ({
  builds: t.field({
    type: BuildPage,
    description: 'Builds the caller can see, newest first.',
    args: { filter: t.arg({ type: BuildFilter }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (project, args, ctx, info) => {
      return buildPage([{ projectId: project.id }, visibleBuilds(ctx.viewer), ...buildWhere(args.filter)], args, ctx, info);
    },
  }),
  build: t.prismaField({
    type: Build,
    nullable: true,
    args: { id: t.arg.int({ required: true }) },
    resolve: (query, project, args, ctx) =>
      ctx.prisma.build.findFirst({ ...query, where: { AND: [{ id: args.id, projectId: project.id }, visibleBuilds(ctx.viewer)] } }),
  }),
}));

builder.prismaObjectFields(Version, (t) => ({
  builds: t.field({
    type: BuildPage,
    description: 'Builds of this version, newest first.',
    args: { filter: t.arg({ type: BuildFilter }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (version, args, ctx, info) => {
      return buildPage([{ versionId: version.id }, visibleBuilds(ctx.viewer), ...buildWhere(args.filter)], args, ctx, info);
    },
  }),
}));

builder.queryFields((t) => ({
  build: t.prismaField({
    authScopes: { public: true },
    type: Build,
    nullable: true,
    description: 'One build by id.',
    args: { id: t.arg.int({ required: true }) },
    resolve: (query, _root, args, ctx) =>
      ctx.prisma.build.findFirst({ ...query, where: { AND: [{ id: args.id }, visibleBuilds(ctx.viewer), { project: visibleProjects(ctx.viewer) }] } }),
  }),
  builds: t.field({
    authScopes: { public: true },
    type: BuildPage,
    description: 'Builds of every project the caller can see, newest first.',
    args: { filter: t.arg({ type: BuildFilter }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (_root, args, ctx, info) => {
      return buildPage([visibleBuilds(ctx.viewer), { project: visibleProjects(ctx.viewer) }, ...buildWhere(args.filter)], args, ctx, info);
    },
  }),
}));

interface Triggered {
  build: Prisma.BuildGetPayload<object>;
  project: Prisma.ProjectGetPayload<object>;
  version: Prisma.VersionGetPayload<object>;
}
const TriggeredBuild = builder.objectRef<Triggered>('TriggeredBuild').implement({
  fields: (t) => ({
    build: t.field({ type: Build, resolve: (r) => r.build }),
    project: t.field({ type: Project, resolve: (r) => r.project }),
    version: t.field({ type: Version, resolve: (r) => r.version }),
  }),
});

builder.mutationField('triggerBuild', (t) =>
  t.field({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: TriggeredBuild,
    description:
      'Queues a build of a version; a pending older build of the same version is superseded. Unless `force`, a build whose commit and configuration are those of the build the version serves finishes at once, successful, saying it was skipped.',
    args: { project: t.arg.string({ required: true }), version: t.arg.string({ required: true }), force: t.arg.boolean() },
    errors: writeErrors,
    resolve: (_root, args, ctx) => triggerBuild(ctx, args.project, args.version, args.force ?? false),
  }),
);

builder.mutationField('uploadDocs', (t) =>
  t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Build,
    description:
      "Publishes built docs as a version: a .zip, .tar.gz or .tar of the HTML (or of Read the Docs' output layout: html/, and one file each in pdf/, epub/, htmlzip/), sent as a multipart request. The version is made from the name if missing. The answer is the upload's build, finished. An archive with anything but regular files and directories inside the root, a name twice or not UTF-8, or beyond the limits is refused (VALIDATION on `archive`) and nothing changes.",
    args: {
      project: t.arg.string({ required: true }),
      version: t.arg.string({ required: true, description: 'The version name (a branch or tag name, `latest`); its slug is made from it.' }),
      archive: t.arg({ type: 'Upload', required: true }),
    },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => uploadDocs(ctx, { project: args.project, version: args.version, archive: args.archive }, rowQuery(query)),
  }),
);

builder.mutationField('cancelBuild', (t) =>
  t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Build,
    description:
      "Cancels a build that has not finished: it ends unsuccessful, saying who cancelled it. A queued build never starts; a running one is stopped at its worker's next heartbeat, and publishes nothing.",
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: { types: [...writeErrors.types, ConflictError] },
    resolve: async (query, _root, args, ctx) => {
      const build = await cancelBuild(ctx, args.project, args.id, rowQuery(query));
      // Whoever follows the build live sees it end.
      await announceProgress(ctx, args.id);
      return build;
    },
  }),
);

// ---------------------------------------------------------------------------------------------
// Live build logs: a subscription (served over server-sent events by yoga) fed by followBuild(),
// which re-reads the rows whenever the worker announces a write, wherever the worker runs. The
// bound per client and the LISTEN connection are the app's (ctx.live, db/progress.ts LiveBuilds).

const BuildUpdateKindEnum = builder.enumType('BuildUpdateKind', {
  values: {
    STATE: { description: 'The build changed state (the first update always says the state it is in).' },
    COMMAND_STARTED: { description: 'A command started; `output` is what it printed so far.' },
    OUTPUT: { description: 'A running command printed more.' },
    COMMAND_FINISHED: { description: 'A command ended, with its exit code; `output` is the rest of what it printed.' },
  } as const,
});

const BuildUpdate = builder.objectRef<BuildProgress>('BuildUpdate').implement({
  description: 'One change of a build being followed live.',
  fields: (t) => ({
    kind: t.field({ type: BuildUpdateKindEnum, resolve: (u) => u.kind }),
    build: t.field({ type: Build, description: 'The build as it was at this update.', resolve: (u) => u.build }),
    command: t.field({ type: BuildCommand, nullable: true, resolve: (u) => u.command }),
    output: t.string({
      nullable: true,
      description: "Text added to the command's output since its previous update (secrets masked).",
      resolve: (u) => u.output,
    }),
    outputOffset: t.int({
      nullable: true,
      description:
        "Where `output` goes in the command's whole output: keep what came before it, replace the rest. Equal to the length received so far unless earlier text was rewritten.",
      resolve: (u) => u.outputOffset,
    }),
  }),
});

/** Who is asking, for the per-client bound: the user, or the address of an anonymous client. */
function clientKey(ctx: Context): string {
  if (ctx.viewer) return `user:${ctx.viewer.id}`;
  const req = (ctx as { req?: { ip?: string; socket?: { remoteAddress?: string } } }).req;
  return `addr:${req?.ip ?? req?.socket?.remoteAddress ?? 'unknown'}`;
}

builder.subscriptionField('buildUpdated', (t) =>
  t.field({
    authScopes: { public: true },
    type: BuildUpdate,
    description:
      'Follows one build live: its state changes and command output as they are recorded, ending after the update that says it is finished. The same builds as `Query.build` are visible.',
    args: { id: t.arg.int({ required: true }) },
    subscribe: (_root, args, ctx) =>
      new Repeater<BuildProgress>(async (push, stop) => {
        // Counted by the app (ctx.live), as its LISTEN connection is: another app's clients are not these.
        const key = clientKey(ctx);
        if (!ctx.live.admit(key)) {
          stop(new LecternError('CONFLICT', `This client already follows ${ctx.live.maxPerClient} builds live: close one first.`));
          return;
        }
        const controller = new AbortController();
        void stop.then(() => controller.abort());
        let found = false;
        // Visibility is checked on every read, so a build that becomes private stops streaming.
        const load = async (db: Prisma.TransactionClient) => {
          const build = await db.build.findFirst({
            where: { AND: [{ id: args.id }, visibleBuilds(ctx.viewer), { project: visibleProjects(ctx.viewer) }] },
          });
          if (!build && !found) throw new NotFoundError('Build');
          found = true;
          return build;
        };
        try {
          const updates = followBuild(ctx.prisma, args.id, { load, signal: controller.signal, live: ctx.live });
          for await (const update of updates) await push(update);
          stop();
        } catch (e) {
          stop(e);
        } finally {
          ctx.live.release(key);
        }
      }),
    resolve: (update) => update,
  }),
);
