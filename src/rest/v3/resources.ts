// The v3 representations (docs/design/rest-api.md "v3 representations",
// docs/design/read-the-docs.md §3) as resource tables over the GraphQL types.
import { NO_FLEX } from '../flex.ts';
import { drfDateTime, titleCase } from '../format.ts';
import { derived, expandInto, field, type JsonSchema, type Node, plain, type Resource, type RestEnv, selection, serialize } from '../resource.ts';

// Schemas of the values these tables compute (openapi.ts derives the others from the GraphQL types).
const uri: JsonSchema = { type: 'string', format: 'uri' };
const orNull = (s: JsonSchema): JsonSchema => ({ oneOf: [s, { type: 'null' }] });
const object = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', properties, required: Object.keys(properties) });
const links = (keys: string[], nullable: string[] = []): JsonSchema =>
  object(Object.fromEntries([...keys.map((k) => [k, uri]), ...nullable.map((k) => [k, orNull(uri)])]));
const slug: JsonSchema = { type: 'string', description: 'A project slug.' };
const choice = object({ code: { type: 'string' }, name: { type: 'string' } });
/** A datetime as DRF writes it (docs/design/read-the-docs.md §1.2); null where the GraphQL field may be. */
const dateTime = (graphqlName: string) => derived(graphqlName, (n) => drfDateTime(n[graphqlName]), { type: 'string', format: 'date-time' });
/** `project { slug }` written as the slug. */
const projectSlug = field('project { slug }', (n) => n.project.slug, slug);

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

const PROJECT_LINKS = [
  '_self',
  'versions',
  'builds',
  'environmentvariables',
  'redirects',
  'subprojects',
  'superproject',
  'translations',
  'notifications',
  'sync_versions',
];

/** A list of users as Read the Docs' UserSerializer writes each: `{username}`. */
const usernames = (n: Node[]) => n.map((u) => ({ username: u.username }));
const usersSchema: JsonSchema = { type: 'array', items: object({ username: { type: 'string' } }) };

/** An organization's `_links` (Read the Docs' OrganizationLinksSerializer); like a project's, its notifications have no route here. */
const organizationLinks = (env: RestEnv, slug: string) => {
  const o = `${env.api}/organizations/${slug}`;
  return { _self: `${o}/`, projects: `${o}/projects/`, notifications: `${o}/notifications/` };
};
const ORGANIZATION_LINKS = ['_self', 'projects', 'notifications'];

const related = (graphqlField: string) =>
  field(
    `${graphqlField} { slug }`,
    (n, env) => {
      const p = n[graphqlField];
      return p ? { slug: p.slug, _links: projectLinks(env, p.slug) } : null;
    },
    orNull(object({ slug, _links: links(PROJECT_LINKS) })),
  );

export const Build: Resource = {
  name: 'Build',
  graphqlType: 'Build',
  fields: {
    id: plain('id'),
    version: plain('versionSlug'),
    project: projectSlug,
    created: dateTime('createdAt'),
    finished: dateTime('finishedAt'),
    duration: plain('duration'),
    state: field('state', (n) => ({ code: n.state, name: titleCase(n.state) }), choice),
    success: plain('success'),
    error: plain('error'),
    commit: plain('commit'),
    _links: field(
      'id versionSlug project { slug }',
      (n, env) => {
        const p = `${env.api}/projects/${n.project.slug}`;
        return {
          _self: `${p}/builds/${n.id}/`,
          project: `${p}/`,
          version: n.versionSlug ? `${p}/versions/${n.versionSlug}/` : null,
          notifications: `${p}/builds/${n.id}/notifications/`,
        };
      },
      links(['_self', 'project', 'notifications'], ['version']),
    ),
    urls: field(
      'id versionSlug project { slug }',
      (n, env) => ({
        build: `${env.api}/projects/${n.project.slug}/builds/${n.id}/`,
        project: `${env.api}/projects/${n.project.slug}/`,
        version: n.versionSlug ? `${env.api}/projects/${n.project.slug}/versions/${n.versionSlug}/` : null,
      }),
      links(['build', 'project'], ['version']),
    ),
  },
  expandable: {
    config: { select: () => 'config', value: (n) => n.config ?? {}, schema: { type: 'object', description: 'The normalized build configuration.' } },
  },
};

/** A version's fields, but `aliases`: the same in a version and in the version its `aliases` holds. */
const versionFields: Resource['fields'] = {
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
  downloads: field(
    'downloads { pdf htmlzip epub }',
    (n) => Object.fromEntries(Object.entries(n.downloads as Node).filter(([k, v]) => k !== '__typename' && v)),
    { type: 'object', properties: { pdf: uri, htmlzip: uri, epub: uri }, description: 'The offline formats built, each where it is downloaded.' },
  ),
  // `dashboard.edit`: where the version's settings are changed, the project's Versions tab of the
  // dashboard (Read the Docs' version edit page; Lectern has no page of one version's own).
  urls: field(
    'documentationUrl vcsUrl project { slug }',
    (n, env) => ({
      documentation: n.documentationUrl,
      vcs: n.vcsUrl,
      dashboard: { edit: `${env.publicUrl}/projects/${n.project.slug}/versions` },
    }),
    object({ documentation: uri, vcs: uri, dashboard: links(['edit']) }),
  ),
  _links: field(
    'slug project { slug }',
    (n, env) => {
      const p = `${env.api}/projects/${n.project.slug}`;
      return { _self: `${p}/versions/${n.slug}/`, builds: `${p}/versions/${n.slug}/builds/`, project: `${p}/` };
    },
    links(['_self', 'builds', 'project']),
  ),
};

const versionRef: JsonSchema = { $ref: '#/components/schemas/Version' };

/**
 * The version a machine `stable` or `latest` stands for, inside its `aliases`: serialized whole, as
 * Read the Docs does, with no expansion; its own `aliases` are empty, as an original's always are
 * (docs/design/read-the-docs.md §3.2).
 */
const AliasedVersion: Resource = {
  name: 'AliasedVersion',
  graphqlType: 'Version',
  fields: { aliases: field('', () => [], { type: 'array', items: versionRef, maxItems: 0 }), ...versionFields },
};

export const Version: Resource = {
  name: 'Version',
  graphqlType: 'Version',
  fields: {
    // First, where Read the Docs declares it.
    aliases: field(
      `original { ${selection(AliasedVersion, NO_FLEX)} }`,
      (n, env) => (n.original ? [serialize(AliasedVersion, n.original, env, NO_FLEX)] : []),
      { type: 'array', items: versionRef, description: 'For a machine-managed `stable` or `latest`: the active version it stands for.' },
    ),
    ...versionFields,
  },
  expandable: {
    last_build: expandInto(Build, 'lastBuild', false),
  },
};

const projectFields: Resource['fields'] = {
  id: plain('id'),
  name: plain('name'),
  slug: plain('slug'),
  created: dateTime('createdAt'),
  modified: dateTime('modifiedAt'),
  language: field('language { code name }', (n) => ({ code: n.language.code, name: n.language.name }), choice),
  programming_language: field(
    'programmingLanguage { code name }',
    (n) => ({
      code: n.programmingLanguage.code,
      name: n.programmingLanguage.name,
    }),
    choice,
  ),
  homepage: plain('homepage'),
  repository: field(
    'repository { url type }',
    (n) => ({ url: n.repository.url, type: n.repository.type }),
    object({ url: { type: 'string' }, type: { type: 'string' } }),
  ),
  default_version: plain('defaultVersion'),
  default_branch: plain('defaultBranch'),
  subproject_of: related('superproject'),
  translation_of: related('translationOf'),
  urls: field(
    'slug documentationUrl',
    (n, env) => ({
      documentation: n.documentationUrl,
      home: `${env.publicUrl}/docs/${n.slug}/`,
      builds: `${env.api}/projects/${n.slug}/builds/`,
      versions: `${env.api}/projects/${n.slug}/versions/`,
      downloads: null,
    }),
    links(['documentation', 'home', 'builds', 'versions'], ['downloads']),
  ),
  tags: plain('tags'),
  users: field('users { username }', (n) => usernames(n.users), usersSchema),
  privacy_level: plain('privacyLevel'),
  external_builds_privacy_level: plain('externalBuildsPrivacyLevel'),
  versioning_scheme: plain('versioningScheme'),
  single_version: plain('singleVersion'),
  readthedocs_yaml_path: plain('readthedocsYamlPath'),
  _links: field('slug', (n, env) => projectLinks(env, n.slug), links(PROJECT_LINKS)),
};

const projectExpandable: Resource['expandable'] = {
  // An object keyed by version slug (docs/design/rest-api.md), not Read the Docs' list.
  active_versions: {
    select: (inner) => `activeVersions { slug ${inner} }`,
    nested: Version,
    value: (n, env, flex) => Object.fromEntries((n.activeVersions as Node[]).map((v) => [v.slug, serialize(Version, v, env, flex)])),
    schema: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Version' }, description: 'The active versions, by slug.' },
  },
  permissions: { select: () => 'viewerIsMaintainer', value: (n) => ({ admin: n.viewerIsMaintainer }), schema: object({ admin: { type: 'boolean' } }) },
  // Read the Docs' RelatedOrganizationSerializer: the slug and links only, which anyone who sees the
  // project may read (the rest is its members', on /organizations/).
  organization: {
    select: () => 'organization { slug }',
    value: (n, env) => (n.organization ? { slug: n.organization.slug, _links: organizationLinks(env, n.organization.slug) } : null),
    schema: orNull(object({ slug: { type: 'string', description: 'An organization slug.' }, _links: links(ORGANIZATION_LINKS) })),
  },
};

export const Project: Resource = { name: 'Project', graphqlType: 'Project', fields: projectFields, expandable: projectExpandable };

/** A subproject's child: a Project without `subproject_of`. */
const { subproject_of: _omitted, ...childFields } = projectFields;
export const ChildProject: Resource = { name: 'ChildProject', graphqlType: 'Project', fields: childFields };

export const Subproject: Resource = {
  name: 'Subproject',
  graphqlType: 'Subproject',
  fields: {
    alias: plain('alias'),
    child: field(
      `child { ${selection(ChildProject, { fields: null, omit: [], expand: [] })} }`,
      (n, env) => serialize(ChildProject, n.child, env, { fields: null, omit: [], expand: [] }),
      { $ref: '#/components/schemas/ChildProject' },
    ),
    _links: field(
      'alias parent { slug }',
      (n, env) => ({
        _self: `${env.api}/projects/${n.parent.slug}/subprojects/${n.alias}/`,
        parent: `${env.api}/projects/${n.parent.slug}/`,
      }),
      links(['_self', 'parent']),
    ),
  },
};

/** `_links` of an object a project owns (a redirect, a variable): itself, by pk, and its project. */
const ownedLinks = (collection: string) =>
  field(
    'id project { slug }',
    (n, env) => ({
      _self: `${env.api}/projects/${n.project.slug}/${collection}/${n.id}/`,
      project: `${env.api}/projects/${n.project.slug}/`,
    }),
    links(['_self', 'project']),
  );

/** A redirect's URL: an empty one as null when `emptyAsNull`. */
const redirectUrl = (graphqlName: 'fromUrl' | 'toUrl', emptyAsNull: boolean) =>
  field(graphqlName, (n) => (emptyAsNull && n[graphqlName] === '' ? null : n[graphqlName]), emptyAsNull ? orNull({ type: 'string' }) : { type: 'string' });

/** Detail and list show an empty URL as null; create and update answers show it as stored. */
const redirectFields = (emptyAsNull: boolean): Resource['fields'] => ({
  pk: plain('id'),
  created: dateTime('createdAt'),
  modified: dateTime('modifiedAt'),
  project: projectSlug,
  type: plain('type'),
  from_url: redirectUrl('fromUrl', emptyAsNull),
  to_url: redirectUrl('toUrl', emptyAsNull),
  force: plain('force'),
  enabled: plain('enabled'),
  description: plain('description'),
  http_status: plain('httpStatus'),
  position: plain('position'),
  _links: ownedLinks('redirects'),
});

export const Redirect: Resource = { name: 'Redirect', graphqlType: 'Redirect', fields: redirectFields(true) };
export const RedirectWritten: Resource = { name: 'RedirectWritten', graphqlType: 'Redirect', fields: redirectFields(false) };

export const EnvironmentVariable: Resource = {
  name: 'EnvironmentVariable',
  graphqlType: 'EnvironmentVariable',
  fields: {
    pk: plain('id'),
    created: dateTime('createdAt'),
    modified: dateTime('modifiedAt'),
    name: plain('name'),
    public: plain('public'),
    project: projectSlug,
    _links: ownedLinks('environmentvariables'),
  },
};

/** Read the Docs' OrganizationSerializer. */
export const Organization: Resource = {
  name: 'Organization',
  graphqlType: 'Organization',
  fields: {
    name: plain('name'),
    description: plain('description'),
    url: plain('url'),
    slug: plain('slug'),
    email: plain('email'),
    owners: field('owners { username }', (n) => usernames(n.owners), usersSchema),
    created: dateTime('createdAt'),
    modified: dateTime('modifiedAt'),
    disabled: plain('disabled'),
    _links: field('slug', (n, env) => organizationLinks(env, n.slug), links(ORGANIZATION_LINKS)),
  },
};

/** Read the Docs' TeamSerializer: its members (`{username}` each) with `expand=members`. */
export const Team: Resource = {
  name: 'Team',
  graphqlType: 'Team',
  fields: {
    name: plain('name'),
    slug: plain('slug'),
    created: dateTime('createdAt'),
    modified: dateTime('modifiedAt'),
    access: plain('access'),
  },
  expandable: {
    members: { select: () => 'members { username }', value: (n) => usernames(n.members), schema: usersSchema },
  },
};

/**
 * Components of the OpenAPI document that no route names as its resource: those other resources
 * point to (`$ref`), and a team, which the teams route answers inside a page of its own making.
 */
export const v3Referenced: Resource[] = [ChildProject, Build, Version, Team];
