// Where things are served, for the URLs the API shows (docs, downloads). One place, so the API
// and the docs server agree.
// @see ../../../shared/spec/decisions.md §2
import { services } from '../services.ts';

export function docsRoot(projectSlug: string): string {
  const { publicUrl, docsDomain } = services().config;
  if (docsDomain) {
    const scheme = new URL(publicUrl).protocol;
    return `${scheme}//${projectSlug.replace(/_/g, '-')}.${docsDomain}`;
  }
  return `${publicUrl}/docs/${projectSlug}`;
}

export function documentationUrl(projectSlug: string, language: string, versionSlug: string): string {
  return `${docsRoot(projectSlug)}/${language}/${versionSlug}/`;
}

export function downloadUrl(projectSlug: string, language: string, versionSlug: string, format: 'pdf' | 'htmlzip' | 'epub'): string {
  return `${services().config.publicUrl}/docs/${projectSlug}/_/downloads/${language}/${versionSlug}/${format}/`;
}

/** The web address of a repository (RTD's get_vcs_url): `.git` dropped, git:// shown as https://. */
export function repositoryWebUrl(repositoryUrl: string, identifier: string | null): string {
  const base = repositoryUrl.replace(/^git:\/\//, 'https://').replace(/\.git$/, '');
  if (identifier && /^https:\/\/(github\.com|gitlab\.com)\//.test(base)) return `${base}/tree/${identifier}/`;
  if (identifier && /^https:\/\/bitbucket\.org\//.test(base)) return `${base}/src/${identifier}`;
  return base;
}
