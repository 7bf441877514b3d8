// The v3 representations (seed-api §2, rtd-behavior §2) as resource tables over the GraphQL types.
import { drfDateTime, titleCase } from '../format.ts';
import { expandInto, field, type Node, plain, type Resource, type RestEnv, selection, serialize } from '../resource.ts';

const projectLinks = (env: RestEnv, slug: string) => {
  const p = `${env.api}/projects/${slug}`;
  return {
    _self: `${p}/`,
    versions: `${p}/versions/`,
    builds: `${p}/builds/`,
    environmentvariables: `${p}/environmentvariables/`,
    redirects: `${p}/redirects/`,
    subprojects: `${p}/subprojects/`,
    superproject: `${p}/superproject/`,
    translations: `${p}/translations/`,
    notifications: `${p}/notifications/`,
    sync_versions: `${p}/sync-versions/`,
  };
};

const related = (graphqlField: string) =>
  field(`${graphqlField} { slug }`, (n, env) => {
    const p = n[graphqlField];
    return p ? { slug: p.slug, _links: projectLinks(env, p.slug) } : null;
  });

export const Build: Resource = {
  name: 'Build',
  fields: {
    id: plain('id'),
    version: plain('versionSlug'),
    project: field('project { slug }', (n) => n.project.slug),
    created: field('createdAt', (n) => drfDateTime(n.createdAt)),
    finished: field('finishedAt', (n) => drfDateTime(n.finishedAt)),
    duration: plain('duration'),
    state: field('state', (n) => ({ code: n.state, name: titleCase(n.state) })),
    success: plain('success'),
    error: plain('error'),
    commit: plain('commit'),
    _links: field('id versionSlug project { slug }', (n, env) => {
      const p = `${env.api}/projects/${n.project.slug}`;
      return {
        _self: `${p}/builds/${n.id}/`,
        project: `${p}/`,
        version: n.versionSlug ? `${p}/versions/${n.versionSlug}/` : null,
        notifications: `${p}/builds/${n.id}/notifications/`,
      };
    }),
    urls: field('id versionSlug project { slug }', (n, env) => ({
      build: `${env.api}/projects/${n.project.slug}/builds/${n.id}/`,
      project: `${env.api}/projects/${n.project.slug}/`,
      version: n.versionSlug ? `${env.api}/projects/${n.project.slug}/versions/${n.versionSlug}/` : null,
    })),
  },
  expandable: {
    config: { select: () => 'config', value: (n) => n.config ?? {} },
  },
};

export const Version: Resource = {
  name: 'Version',
  fields: {
    id: plain('id'),
    slug: plain('slug'),
    verbose_name: plain('verboseName'),
    identifier: plain('identifier'),
    ref: plain('ref'),
    built: plain('built'),
    active: plain('active'),
    hidden: plain('hidden'),
    type: plain('type'),
    privacy_level: plain('privacyLevel'),
    downloads: field('downloads { pdf htmlzip epub }', (n) =>
      Object.fromEntries(Object.entries(n.downloads as Node).filter(([k, v]) => k !== '__typename' && v)),
    ),
    urls: field('documentationUrl vcsUrl', (n) => ({ documentation: n.documentationUrl, vcs: n.vcsUrl })),
    _links: field('slug project { slug }', (n, env) => {
      const p = `${env.api}/projects/${n.project.slug}`;
      return { _self: `${p}/versions/${n.slug}/`, builds: `${p}/versions/${n.slug}/builds/`, project: `${p}/` };
    }),
  },
  expandable: {
    last_build: expandInto(Build, 'lastBuild', false),
  },
};

const projectFields: Resource['fields'] = {
  id: plain('id'),
  name: plain('name'),
  slug: plain('slug'),
  created: field('createdAt', (n) => drfDateTime(n.createdAt)),
  modified: field('modifiedAt', (n) => drfDateTime(n.modifiedAt)),
  language: field('language { code name }', (n) => ({ code: n.language.code, name: n.language.name })),
  programming_language: field('programmingLanguage { code name }', (n) => ({
    code: n.programmingLanguage.code,
    name: n.programmingLanguage.name,
  })),
  homepage: plain('homepage'),
  repository: field('repository { url type }', (n) => ({ url: n.repository.url, type: n.repository.type })),
  default_version: plain('defaultVersion'),
  default_branch: plain('defaultBranch'),
  subproject_of: related('superproject'),
  translation_of: related('translationOf'),
  urls: field('slug documentationUrl', (n, env) => ({
    documentation: n.documentationUrl,
    home: `${env.publicUrl}/docs/${n.slug}/`,
    builds: `${env.api}/projects/${n.slug}/builds/`,
    versions: `${env.api}/projects/${n.slug}/versions/`,
    downloads: null,
  })),
  tags: plain('tags'),
  users: field('users { username }', (n) => (n.users as Node[]).map((u) => ({ username: u.username }))),
  privacy_level: plain('privacyLevel'),
  external_builds_privacy_level: plain('externalBuildsPrivacyLevel'),
  versioning_scheme: plain('versioningScheme'),
  single_version: plain('singleVersion'),
  readthedocs_yaml_path: plain('readthedocsYamlPath'),
  _links: field('slug', (n, env) => projectLinks(env, n.slug)),
};

const projectExpandable: Resource['expandable'] = {
  // An object keyed by version slug (decisions §1), not Read the Docs' list.
  active_versions: {
    select: (flex) => `activeVersions { slug ${selection(Version, flex)} }`,
    value: (n, env, flex) => Object.fromEntries((n.activeVersions as Node[]).map((v) => [v.slug, serialize(Version, v, env, flex)])),
  },
  permissions: { select: () => 'viewerIsMaintainer', value: (n) => ({ admin: n.viewerIsMaintainer }) },
  organization: { select: () => '', value: () => null },
};

export const Project: Resource = { name: 'Project', fields: projectFields, expandable: projectExpandable };

/** A subproject's child: a Project without `subproject_of`. */
const { subproject_of: _omitted, ...childFields } = projectFields;
export const ChildProject: Resource = { name: 'Project', fields: childFields };

export const Subproject: Resource = {
  name: 'ProjectRelationship',
  fields: {
    alias: plain('alias'),
    child: field(`child { ${selection(ChildProject, { fields: null, omit: [], expand: [] })} }`, (n, env) =>
      serialize(ChildProject, n.child, env, { fields: null, omit: [], expand: [] }),
    ),
    _links: field('alias parent { slug }', (n, env) => ({
      _self: `${env.api}/projects/${n.parent.slug}/subprojects/${n.alias}/`,
      parent: `${env.api}/projects/${n.parent.slug}/`,
    })),
  },
};

/** Detail and list show an empty URL as null; create and update answers show it as stored. */
const redirectFields = (emptyAsNull: boolean): Resource['fields'] => ({
  pk: plain('id'),
  created: field('createdAt', (n) => drfDateTime(n.createdAt)),
  modified: field('modifiedAt', (n) => drfDateTime(n.modifiedAt)),
  project: field('project { slug }', (n) => n.project.slug),
  type: plain('type'),
  from_url: field('fromUrl', (n) => (emptyAsNull && n.fromUrl === '' ? null : n.fromUrl)),
  to_url: field('toUrl', (n) => (emptyAsNull && n.toUrl === '' ? null : n.toUrl)),
  force: plain('force'),
  enabled: plain('enabled'),
  description: plain('description'),
  http_status: plain('httpStatus'),
  position: plain('position'),
  _links: field('id project { slug }', (n, env) => ({
    _self: `${env.api}/projects/${n.project.slug}/redirects/${n.id}/`,
    project: `${env.api}/projects/${n.project.slug}/`,
  })),
});

export const Redirect: Resource = { name: 'Redirect', fields: redirectFields(true) };
export const RedirectWritten: Resource = { name: 'Redirect', fields: redirectFields(false) };

export const EnvironmentVariable: Resource = {
  name: 'EnvironmentVariable',
  fields: {
    pk: plain('id'),
    created: field('createdAt', (n) => drfDateTime(n.createdAt)),
    modified: field('modifiedAt', (n) => drfDateTime(n.modifiedAt)),
    name: plain('name'),
    public: plain('public'),
    project: field('project { slug }', (n) => n.project.slug),
    _links: field('id project { slug }', (n, env) => ({
      _self: `${env.api}/projects/${n.project.slug}/environmentvariables/${n.id}/`,
      project: `${env.api}/projects/${n.project.slug}/`,
    })),
  },
};
