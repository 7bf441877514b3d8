// Where things are served, for the URLs the API shows (docs, downloads). One place, so the API
// and the docs server agree.
// @see docs/design/urls.md
import type { Config } from './config.ts';

/** The settings that decide where docs are served: the public URL, and the docs domain if any. */
export type DocsHost = Pick<Config, 'publicUrl' | 'docsDomain'>;

export function docsRoot({ publicUrl, docsDomain }: DocsHost, projectSlug: string): string {
  if (docsDomain) {
    const scheme = new URL(publicUrl).protocol;
    return `${scheme}//${projectSlug.replace(/_/g, '-')}.${docsDomain}`;
  }
  return `${publicUrl}/docs/${projectSlug}`;
}

/** What decides where a project's docs are served: its own slug, or its parent's path. */
export interface ServedProject {
  slug: string;
  language: string;
  superprojects: { alias: string; parent: { slug: string; privacyLevel: string } }[];
  mainLanguageProject: { slug: string; privacyLevel: string } | null;
}

/** The Prisma selection that loads a ServedProject. */
export const servedProjectSelect = {
  slug: true,
  language: true,
  superprojects: { select: { alias: true, parent: { select: { slug: true, privacyLevel: true } } } },
  mainLanguageProject: { select: { slug: true, privacyLevel: true } },
} as const;

/**
 * The docs root of a project: a translation is served under its main project (with its own
 * language code), a subproject under `/projects/<alias>/` of its parent (docs/design/urls.md). A private
 * parent does not lend its path to a public project: the URL would name the private project to
 * readers who may not know it exists, so such a project keeps its own root.
 */
export function servedRoot(host: DocsHost, p: ServedProject): string {
  const main = p.mainLanguageProject;
  if (main && main.privacyLevel === 'public') return docsRoot(host, main.slug);
  const rel = p.superprojects[0];
  if (rel && rel.parent.privacyLevel === 'public') return `${docsRoot(host, rel.parent.slug)}/projects/${rel.alias}`;
  return docsRoot(host, p.slug);
}

export function documentationUrl(host: DocsHost, p: ServedProject, versionSlug: string): string {
  return `${servedRoot(host, p)}/${p.language}/${versionSlug}/`;
}

export function downloadUrl(host: DocsHost, projectSlug: string, language: string, versionSlug: string, format: 'pdf' | 'htmlzip' | 'epub'): string {
  // On the docs host when there is one: docs (downloads included) are never served on the API host.
  return `${docsRoot(host, projectSlug)}/_/downloads/${language}/${versionSlug}/${format}/`;
}

/**
 * The web address of a version in its repository: a tag by its name, a branch by its identifier,
 * `latest` without one by the project's default branch (`master` when unknown), as Read the Docs
 * links them.
 */
export function versionWebUrl(
  project: { repositoryUrl: string; defaultBranch: string | null },
  v: { type: string; machine: boolean; verboseName: string; identifier: string | null; slug: string },
): string {
  const identifier = v.type === 'tag' && !v.machine ? v.verboseName : (v.identifier ?? (v.slug === 'latest' ? (project.defaultBranch ?? 'master') : null));
  return repositoryWebUrl(project.repositoryUrl, identifier);
}

/** The web address of a repository (RTD's get_vcs_url): `.git` dropped, git:// shown as https://. */
export function repositoryWebUrl(repositoryUrl: string, identifier: string | null): string {
  const base = repositoryUrl.replace(/^git:\/\//, 'https://').replace(/\.git$/, '');
  if (identifier && /^https:\/\/(github\.com|gitlab\.com)\//.test(base)) return `${base}/tree/${identifier}/`;
  if (identifier && /^https:\/\/bitbucket\.org\//.test(base)) return `${base}/src/${identifier}`;
  return base;
}

/** A query parameter's value; repeated, the last one, as Django's QueryDict answers `get()`. */
export const oneString = (v: unknown): string | undefined => (Array.isArray(v) ? oneString(v[v.length - 1]) : typeof v === 'string' ? v : undefined);
