// Where a build's files live in storage. A version is served from the build its
// `publishedBuildId` names, so a new build's files become visible all at once, when that one
// field changes, and never as a mix of two builds.
export type Format = 'html' | 'htmlzip' | 'pdf' | 'epub';

/** Where a build's files are stored. Delete or list them with a slash after it: `…/12` also starts `…/120`. */
export function buildPrefix(projectSlug: string, versionSlug: string, buildId: number): string {
  return `projects/${projectSlug}/${encodeURIComponent(versionSlug)}/${buildId}`;
}

export function artifactPrefix(projectSlug: string, versionSlug: string, buildId: number, format: Format): string {
  return `${buildPrefix(projectSlug, versionSlug, buildId)}/${format}`;
}

const EXT: Record<Exclude<Format, 'html'>, string> = { htmlzip: 'zip', pdf: 'pdf', epub: 'epub' };

/** The single file of an offline format, named after the project (as Read the Docs names it). */
export function downloadKey(projectSlug: string, versionSlug: string, buildId: number, format: Exclude<Format, 'html'>): string {
  return `${artifactPrefix(projectSlug, versionSlug, buildId, format)}/${projectSlug}.${EXT[format]}`;
}
