// What the LECTERN_STORAGE setting names, without opening a storage: a module of its own, light,
// so code that only needs a file: storage's directory (domain/git.ts, which the command line's
// user and token commands load) does not load the S3 SDK with index.ts (docs/design/startup.md).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory of a `file:` storage setting (absolute), or null for any other kind. */
export function fileStorageDir(spec: string): string | null {
  if (!spec.startsWith('file:')) return null;
  const dir = spec.startsWith('file://') ? fileURLToPath(spec) : spec.slice('file:'.length);
  if (!dir) throw new Error('LECTERN_STORAGE: file: needs a directory, as in file:/var/lib/lectern/storage');
  return path.resolve(dir);
}
