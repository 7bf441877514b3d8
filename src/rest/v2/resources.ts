// The v2 representations (docs/design/rest-api.md "v2 representations",
// docs/design/read-the-docs.md §5.1) as resource tables over the GraphQL types. Where the seed
// names a type and Read the Docs could answer null (a running build's `length`, a version without
// an identifier), the seed's type wins (docs/design/rest-api.md): 0 or "".

import { NO_FLEX } from '../flex.ts';
import { v2DateTime } from '../format.ts';
import { field, type Node, plain, type Resource, selection, serialize } from '../resource.ts';

/** `http://host/…` → `//host/…`, as v2's downloads are written. */
const schemeRelative = (url: string) => url.replace(/^[a-z][a-z0-9+.-]*:(?=\/\/)/i, '');

export const Project: Resource = {
  name: 'Project',
  graphqlType: 'Project',
  fields: {
    id: plain('id'),
    name: plain('name'),
    slug: plain('slug'),
    description: plain('description'),
    language: field('language { code }', (n) => n.language.code),
    programming_language: field('programmingLanguage { code }', (n) => n.programmingLanguage.code),
    repo: field('repository { url }', (n) => n.repository.url),
    repo_type: field('repository { type }', (n) => n.repository.type),
    default_version: plain('defaultVersion'),
    default_branch: plain('defaultBranch'),
    documentation_type: plain('documentationType'),
    users: field('users { id }', (n) => (n.users as Node[]).map((u) => u.id)),
    canonical_url: plain('documentationUrl'),
  },
};

const projectSelection = selection(Project, NO_FLEX);

export const Version: Resource = {
  name: 'Version',
  graphqlType: 'Version',
  fields: {
    id: plain('id'),
    project: field(`project { ${projectSelection} }`, (n, env) => serialize(Project, n.project, env, NO_FLEX)),
    slug: plain('slug'),
    identifier: field('identifier', (n) => n.identifier ?? ''),
    verbose_name: plain('verboseName'),
    privacy_level: plain('privacyLevel'),
    active: plain('active'),
    built: plain('built'),
    // Only the formats that were built, as Read the Docs lists them; keys as the seed names them.
    downloads: field('downloads { pdf htmlzip epub }', (n) =>
      Object.fromEntries((['pdf', 'htmlzip', 'epub'] as const).filter((k) => n.downloads[k]).map((k) => [k, schemeRelative(n.downloads[k])])),
    ),
    type: plain('type'),
    has_pdf: field('downloads { pdf }', (n) => !!n.downloads.pdf),
    has_epub: field('downloads { epub }', (n) => !!n.downloads.epub),
    has_htmlzip: field('downloads { htmlzip }', (n) => !!n.downloads.htmlzip),
    documentation_type: plain('documentationType'),
  },
};

const Command: Resource = {
  name: 'BuildCommand',
  graphqlType: 'BuildCommand',
  fields: {
    id: plain('id'),
    build: { select: '', value: () => null },
    command: plain('command'),
    description: plain('description'),
    output: plain('output'),
    exit_code: plain('exitCode'),
    start_time: field('startTime', (n) => v2DateTime(n.startTime)),
    end_time: field('endTime', (n) => v2DateTime(n.endTime)),
    run_time: plain('runTime'),
  },
};

export const Build: Resource = {
  name: 'Build',
  graphqlType: 'Build',
  fields: {
    id: plain('id'),
    project: field('project { id }', (n) => n.project.id),
    version: field('version { id }', (n) => n.version?.id ?? null),
    type: plain('type'),
    state: plain('state'),
    date: field('createdAt', (n) => v2DateTime(n.createdAt)),
    // Read the Docs' raw field: true until a build fails, so a running build reads true.
    success: field('success', (n) => n.success ?? true),
    error: field('error', (n) => n.error ?? ''),
    commit: field('commit', (n) => n.commit ?? ''),
    length: field('duration', (n) => n.duration ?? 0),
    project_slug: field('project { slug }', (n) => n.project.slug),
    version_slug: field('versionSlug', (n) => n.versionSlug ?? ''),
    docs_url: field('version { documentationUrl } project { documentationUrl }', (n) => n.version?.documentationUrl ?? n.project.documentationUrl),
    commands: field(`id commands { ${selection(Command, NO_FLEX)} }`, (n, env) =>
      (n.commands as Node[]).map((c) => ({ ...serialize(Command, c, env, NO_FLEX), build: n.id })),
    ),
  },
};
