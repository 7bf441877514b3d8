// Read the Docs' addons API on a docs root: `GET <docs root>/_/addons/?api-version=1&project-slug=
// &version-slug=` or `&url=<page>` (docs/design/addons.md). What Read the Docs' addons script and
// today's themes (sphinx_rtd_theme 3's version selector) read about the page they are on: the
// project and its translations, the version and the versions a menu lists, its last build, and
// which addons are on. Privacy follows the reader: what they may not read is left out, as if it
// did not exist.
import { readableVersionRule, visibleProjects } from '../domain/access.ts';
import { languageName, programmingLanguageName } from '../domain/choices.ts';
import type { Context } from '../domain/context.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { documentationUrl, downloadUrl, oneString, servedProjectSelect, servedRoot, versionWebUrl } from '../urls.ts';
import { compareVersions } from './switcher.ts';

const projectSelect = {
  ...servedProjectSelect,
  id: true,
  name: true,
  createdAt: true,
  modifiedAt: true,
  programmingLanguage: true,
  homepage: true,
  repositoryUrl: true,
  repositoryType: true,
  defaultVersion: true,
  defaultBranch: true,
  privacyLevel: true,
  readthedocsYamlPath: true,
  externalBuildsPrivacyLevel: true,
  versioningScheme: true,
  singleVersion: true,
  analyticsCode: true,
  analyticsDisabled: true,
  showVersionWarning: true,
  versionSwitcher: true,
  docsSearch: true,
  addonsEnabled: true,
  hotkeysEnabled: true,
  docDiffEnabled: true,
  mainLanguageProjectId: true,
} satisfies Prisma.ProjectSelect;
type ProjectRow = Prisma.ProjectGetPayload<{ select: typeof projectSelect }>;

const versionSelect = {
  id: true,
  slug: true,
  verboseName: true,
  identifier: true,
  type: true,
  machine: true,
  active: true,
  built: true,
  hidden: true,
  privacyLevel: true,
  hasPdf: true,
  hasEpub: true,
  hasHtmlzip: true,
} satisfies Prisma.VersionSelect;
type VersionRow = Prisma.VersionGetPayload<{ select: typeof versionSelect }>;

/** The page the addons are asked about: its project (by slug) and version, and its file. */
export interface AddonsTarget {
  projectSlug: string;
  versionSlug: string | null;
  /** The page's path below the version (`/install.html`), when asked by URL. */
  filename: string | null;
  /** Asked with `url`: the doc diff's base is answered too. */
  byUrl: boolean;
}

export type AddonsAnswer = { status: number; body: unknown };

/** The request's parameters as Read the Docs reads them, or the 400 it answers. */
export function addonsParams(
  query: Record<string, unknown>,
): { apiMajor: number; url: string | null; project: string | null; version: string | null } | AddonsAnswer {
  const one = (v: unknown) => oneString(v) ?? null;
  const url = one(query.url) || null;
  const project = one(query['project-slug']) || null;
  const version = one(query['version-slug']) || null;
  if (!url && (!project || !version)) {
    return { status: 400, body: { error: "'project-slug' and 'version-slug' GET attributes are required when not sending 'url'" } };
  }
  const api = one(query['api-version']);
  if (!api) return { status: 400, body: { error: "'api-version' GET attribute is required" } };
  if (!/^\d+(\.\d+)*$/.test(api)) return { status: 400, body: { error: "The version specified in 'api-version' is invalid" } };
  const apiMajor = Number(api.split('.')[0]);
  if (apiMajor !== 1 && apiMajor !== 2) return { status: 400, body: { error: "The version specified in 'api-version' is currently not supported" } };
  return { apiMajor, url, project, version };
}

export interface AddonsDeps {
  ctx: Context;
  /** The docs root asked (absolute): only projects served under it are answered about, never another site's. */
  siteRoot: string;
  /** Lectern's own address: the dashboard's links. */
  publicUrl: string;
}

/** The v1 answer for `target`, or 404 when the reader may not see its project. */
export async function addonsV1(deps: AddonsDeps, target: AddonsTarget): Promise<AddonsAnswer> {
  const { ctx } = deps;
  const prisma = ctx.prisma;
  const project = await prisma.project.findFirst({ where: { AND: [visibleProjects(ctx.viewer), { slug: target.projectSlug }] }, select: projectSelect });
  // Another docs site's project is not this page's business: its pages run on another origin.
  const root = project && servedRoot(ctx.config, project);
  if (!project || (root !== deps.siteRoot && !root?.startsWith(`${deps.siteRoot}/projects/`)))
    return { status: 404, body: { detail: 'No Project matches the given query.' } };
  const row = target.versionSlug ? await prisma.version.findFirst({ where: { projectId: project.id, slug: target.versionSlug }, select: versionSelect }) : null;
  // A version the reader may not read is answered as one that does not exist.
  const version = row && (await readableVersionRule.allows(ctx, { ...row, projectId: project.id, project })) ? row : null;
  const main = project.mainLanguageProjectId ?? project.id;
  const [listed, translations, build] = await Promise.all([
    prisma.version.findMany({
      where: { AND: [readableVersionRule.where(ctx.viewer), { projectId: project.id, hidden: false, type: { not: 'external' } }] },
      select: versionSelect,
    }),
    prisma.project.findMany({
      where: { AND: [visibleProjects(ctx.viewer), { OR: [{ id: main }, { mainLanguageProjectId: main }] }, { id: { not: project.id } }] },
      select: projectSelect,
      orderBy: { language: 'asc' },
    }),
    version
      ? prisma.build.findFirst({
          where: { versionId: version.id, state: 'finished', success: true },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          select: { id: true, createdAt: true, finishedAt: true, duration: true, state: true, success: true, commit: true },
        })
      : null,
  ]);
  const active = project.singleVersion ? listed.filter((v) => v.slug === project.defaultVersion) : listed.sort((a, b) => compareVersions(a.slug, b.slug));
  const write = new Writer(ctx, deps.publicUrl);
  const filter = version ? `project:${project.slug}/${version.slug}` : `project:${project.slug}`;
  const body = {
    api_version: '1',
    projects: {
      current: write.project(project, version?.slug ?? project.defaultVersion),
      translations: translations.map((t) => write.project(t, version?.slug ?? t.defaultVersion)),
    },
    versions: { current: version ? write.version(project, version) : null, active: active.map((v) => write.version(project, v)) },
    builds: { current: build && version ? write.build(project, version, build) : null },
    domains: { dashboard: new URL(deps.publicUrl).host },
    readthedocs: { analytics: { code: null }, resolver: { filename: target.filename } },
    addons: addonsOf(project, target, filter, documentationUrl(ctx.config, project, 'latest')),
  };
  return { status: 200, body };
}

/**
 * Which addons are on, as the project's settings say: none when it turned the addons off. The
 * doc diff's base is the same page in `latest` (`latestRoot`), answered only when asked by URL.
 */
function addonsOf(project: ProjectRow, target: AddonsTarget, filter: string, latestRoot: string) {
  const on = project.addonsEnabled;
  const docDiff = on && project.docDiffEnabled;
  return {
    options: { load_when_embedded: false, root_selector: null },
    analytics: { enabled: on && !project.analyticsDisabled && !!project.analyticsCode, code: project.analyticsCode },
    notifications: { enabled: on && project.showVersionWarning, show_on_latest: true, show_on_non_stable: true, show_on_external: true },
    flyout: { enabled: on && project.versionSwitcher, position: null },
    customscript: { enabled: false, src: null },
    search: { enabled: on && project.docsSearch, filters: [], default_filter: filter },
    linkpreviews: { enabled: false, selector: null },
    hotkeys: {
      enabled: on && project.hotkeysEnabled,
      doc_diff: { enabled: docDiff, trigger: 'KeyD' },
      search: { enabled: on && project.docsSearch, trigger: 'Slash' },
    },
    filetreediff: { enabled: false },
    ...(target.byUrl
      ? { doc_diff: { enabled: docDiff, base_url: target.filename ? `${latestRoot}${target.filename.replace(/^\//, '')}` : null, inject_styles: true } }
      : {}),
  };
}

/** The addons API's representations: Read the Docs' API v3 serializers without `_links`. */
class Writer {
  readonly #ctx: Context;
  readonly #dashboard: string;
  constructor(ctx: Context, publicUrl: string) {
    this.#ctx = ctx;
    this.#dashboard = publicUrl;
  }

  project(p: ProjectRow, versionSlug: string) {
    const home = `${this.#dashboard}/projects/${p.slug}/`;
    const parent = p.mainLanguageProject ? null : p.superprojects[0]?.parent;
    return {
      id: p.id,
      name: p.name,
      slug: p.slug,
      created: p.createdAt.toISOString(),
      modified: p.modifiedAt.toISOString(),
      language: { code: p.language, name: languageName(p.language) },
      programming_language: { code: p.programmingLanguage, name: programmingLanguageName(p.programmingLanguage) },
      homepage: p.homepage,
      repository: { url: p.repositoryUrl, type: p.repositoryType },
      default_version: p.defaultVersion,
      default_branch: p.defaultBranch ?? 'master',
      subproject_of: parent && parent.privacyLevel === 'public' ? { slug: parent.slug } : null,
      translation_of: p.mainLanguageProject && p.mainLanguageProject.privacyLevel === 'public' ? { slug: p.mainLanguageProject.slug } : null,
      urls: {
        documentation: documentationUrl(this.#ctx.config, p, versionSlug),
        home,
        builds: `${home}builds`,
        versions: home,
        downloads: null,
      },
      privacy_level: p.privacyLevel,
      readthedocs_yaml_path: p.readthedocsYamlPath,
      external_builds_privacy_level: p.externalBuildsPrivacyLevel,
      versioning_scheme: p.versioningScheme,
      single_version: p.singleVersion,
    };
  }

  version(p: ProjectRow, v: VersionRow) {
    const url = (f: 'pdf' | 'htmlzip' | 'epub') => downloadUrl(this.#ctx.config, p.slug, p.language, v.slug, f);
    const downloads = Object.fromEntries(
      (
        [
          ['htmlzip', v.hasHtmlzip],
          ['pdf', v.hasPdf],
          ['epub', v.hasEpub],
        ] as const
      )
        .filter(([, has]) => has)
        .map(([f]) => [f, url(f)]),
    );
    return {
      aliases: [],
      id: v.id,
      slug: v.slug,
      verbose_name: v.verboseName,
      identifier: v.identifier,
      ref: null,
      built: v.built,
      active: v.active,
      hidden: v.hidden,
      type: v.type,
      privacy_level: v.privacyLevel,
      downloads,
      urls: {
        documentation: documentationUrl(this.#ctx.config, p, v.slug),
        vcs: versionWebUrl(p, v),
        dashboard: { edit: `${this.#dashboard}/projects/${p.slug}/versions` },
      },
    };
  }

  build(
    p: ProjectRow,
    v: VersionRow,
    b: { id: number; createdAt: Date; finishedAt: Date | null; duration: number | null; state: string; success: boolean | null; commit: string | null },
  ) {
    return {
      id: b.id,
      version: v.slug,
      project: p.slug,
      created: b.createdAt.toISOString(),
      finished: b.finishedAt?.toISOString() ?? null,
      duration: b.duration,
      state: { code: b.state, name: b.state.charAt(0).toUpperCase() + b.state.slice(1) },
      success: b.state === 'finished' ? b.success : null,
      error: '',
      commit: b.commit,
      urls: {
        build: `${this.#dashboard}/projects/${p.slug}/builds/${b.id}`,
        project: `${this.#dashboard}/projects/${p.slug}/`,
        version: `${this.#dashboard}/projects/${p.slug}/versions`,
      },
    };
  }
}
