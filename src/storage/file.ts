// Storage on the local disk (LECTERN_STORAGE=file:/dir, the default under the data dir). Objects are
// plain files, so the tree can be inspected or backed up with ordinary tools:
//   <root>/objects/<key>   the bodies
//   <root>/types/<key>     a content type, only where put() was given one the extension would not give
//   <root>/tmp/            bodies being written; renamed into objects/ when complete
// Writes are atomic for readers (temp file + rename; not fsynced: artifacts can be rebuilt). The
// backend never creates symlinks and refuses to follow any it finds in its tree, so no key, and no
// symlink planted in the tree, reaches outside the root.
// @see ./storage.ts
import { createHash, randomUUID } from 'node:crypto';
import { type BigIntStats, constants, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { OutputDir } from './output.ts';
import {
  assertKey,
  assertPrefix,
  compareKeys,
  contentTypeFor,
  etagMatches,
  type GetOptions,
  type NotModified,
  type ObjectInfo,
  type PutDirectoryOptions,
  type PutDirectoryResult,
  type Storage,
  type StoredObject,
  uploadDirectory,
} from './storage.ts';

/** Temp files older than this are left-overs of a crashed process, removed when the storage opens. */
const STALE_TMP_MS = 24 * 60 * 60 * 1000;

interface Dirs {
  objects: string;
  types: string;
  tmp: string;
}

export class FileStorage implements Storage {
  readonly root: string;
  #dirs: Promise<Dirs> | undefined;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** Creates the layout on first use; every path below is built on these resolved (symlink-free) directories. */
  #ready(): Promise<Dirs> {
    this.#dirs ??= (async () => {
      await fs.mkdir(this.root, { recursive: true });
      const root = await fs.realpath(this.root);
      const dirs = { objects: path.join(root, 'objects'), types: path.join(root, 'types'), tmp: path.join(root, 'tmp') };
      for (const d of Object.values(dirs)) {
        await fs.mkdir(d, { recursive: true });
        if ((await fs.lstat(d)).isSymbolicLink()) throw new Error(`storage directory ${d} is a symlink`);
      }
      await removeStaleTmp(dirs.tmp);
      return dirs;
    })();
    this.#dirs.catch(() => (this.#dirs = undefined));
    return this.#dirs;
  }

  async put(key: string, body: Buffer | Readable, opts: { contentType?: string } = {}): Promise<void> {
    assertKey(key);
    const dirs = await this.#ready();
    const tmp = path.join(dirs.tmp, randomUUID());
    try {
      if (Buffer.isBuffer(body)) await fs.writeFile(tmp, body, { flag: 'wx' });
      else await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
      const type = opts.contentType && opts.contentType !== contentTypeFor(key) ? opts.contentType : undefined;
      // The type first: a reader in between sees the old body with the new type at worst.
      if (type) {
        const typeTmp = `${tmp}.type`;
        await fs.writeFile(typeTmp, type, { flag: 'wx' });
        await renameInto(typeTmp, dirs.types, key);
      } else {
        await fs.rm(await safePath(dirs.types, key, false), { force: true });
      }
      await renameInto(tmp, dirs.objects, key);
    } catch (e) {
      await Promise.all([fs.rm(tmp, { force: true }), fs.rm(`${tmp}.type`, { force: true })]);
      throw e;
    }
  }

  putDirectory(localDir: string | OutputDir, prefix: string, opts: PutDirectoryOptions = {}): Promise<PutDirectoryResult> {
    return uploadDirectory(localDir, prefix, opts, (key, body, _size, contentType) => this.put(key, body, { contentType }));
  }

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject | NotModified | null> {
    assertKey(key);
    const dirs = await this.#ready();
    const opened = await openObject(dirs.objects, key);
    if (!opened) return null;
    const { handle, stats } = opened;
    try {
      const info = await this.#info(dirs, key, stats);
      if (opts.ifNoneMatch && etagMatches(opts.ifNoneMatch, info.etag)) {
        await handle.close();
        return { notModified: true, etag: info.etag };
      }
      // Reads the file that was opened: a put() renaming a new body in meanwhile does not affect it.
      const { range } = opts;
      return { ...info, body: handle.createReadStream(range ? { start: range.start, end: range.end } : undefined) };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    assertKey(key);
    const dirs = await this.#ready();
    const opened = await openObject(dirs.objects, key);
    if (!opened) return null;
    try {
      return await this.#info(dirs, key, opened.stats);
    } finally {
      await opened.handle.close();
    }
  }

  async #info(dirs: Dirs, key: string, st: BigIntStats): Promise<ObjectInfo> {
    return {
      size: Number(st.size),
      contentType: (await readType(dirs.types, key)) ?? contentTypeFor(key),
      etag: etagOf(st),
      lastModified: new Date(Number(st.mtimeMs)),
    };
  }

  async list(prefix: string): Promise<string[]> {
    assertPrefix(prefix);
    const dirs = await this.#ready();
    return (await listFiles(dirs.objects, prefix)).sort(compareKeys);
  }

  async deletePrefix(prefix: string): Promise<number> {
    assertPrefix(prefix);
    if (prefix === '') throw new Error('deletePrefix needs a non-empty prefix (refusing to delete everything)');
    const dirs = await this.#ready();
    const keys = await listFiles(dirs.objects, prefix);
    const parents = new Set<string>();
    for (const key of keys) {
      await fs.rm(await safePath(dirs.types, key, false), { force: true });
      await fs.rm(await safePath(dirs.objects, key, false), { force: true });
      for (let d = path.posix.dirname(key); d !== '.'; d = path.posix.dirname(d)) parents.add(d);
    }
    // Empty directories left behind, deepest first; a concurrent put() may have refilled one.
    for (const d of [...parents].sort((a, b) => b.split('/').length - a.split('/').length)) {
      for (const base of [dirs.objects, dirs.types]) await fs.rmdir(path.join(base, ...d.split('/'))).catch(() => {});
    }
    return keys.length;
  }
}

/** Stable while the file is unchanged; every put() makes a new inode with a new mtime (so a new type comes with a new tag too). */
function etagOf(st: BigIntStats): string {
  return `"${createHash('sha256').update(`${st.size}:${st.mtimeNs}:${st.ino}`).digest('hex').slice(0, 32)}"`;
}

/**
 * The path of `key` under `base`, having checked that no directory on the way is a symlink (with
 * `create`, making the missing ones). Nothing else writes symlinks into the tree, so one found
 * there was planted, and following it could leave the root.
 */
async function safePath(base: string, key: string, create: boolean): Promise<string> {
  const segments = key.split('/');
  let dir = base;
  for (const segment of segments.slice(0, -1)) {
    dir = path.join(dir, segment);
    let st = await fs.lstat(dir).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
    if (!st && create) {
      await fs.mkdir(dir).catch((e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)));
      st = await fs.lstat(dir);
    }
    if (!st) break; // missing: the caller's open or rm finds nothing
    if (!st.isDirectory()) {
      throw new Error(`storage key ${JSON.stringify(key)}: ${path.relative(base, dir)} is ${st.isSymbolicLink() ? 'a symlink' : 'not a directory'}`);
    }
  }
  return path.join(base, ...segments);
}

/** Moves a complete temp file to `key`, retrying when a concurrent deletePrefix removed the new parent directory. */
async function renameInto(tmp: string, base: string, key: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const target = await safePath(base, key, true);
    try {
      await fs.rename(tmp, target);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw e;
    }
  }
}

/** Opens the object's file without following symlinks anywhere on the way; null if there is no such regular file. */
async function openObject(base: string, key: string): Promise<{ handle: fs.FileHandle; stats: BigIntStats } | null> {
  let file: string;
  try {
    file = await safePath(base, key, false);
  } catch {
    return null; // a symlink or file where a directory would be: not an object
  }
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'EISDIR') return null;
    throw e;
  }
  const stats = await handle.stat({ bigint: true });
  if (!stats.isFile()) {
    await handle.close();
    return null;
  }
  return { handle, stats };
}

async function readType(base: string, key: string): Promise<string | undefined> {
  const opened = await openObject(base, key);
  if (!opened) return undefined;
  try {
    return (await opened.handle.readFile('utf8')) || undefined;
  } finally {
    await opened.handle.close();
  }
}

/** Keys of the regular files under `base` starting with `prefix`; symlinks are neither listed nor entered. */
async function listFiles(base: string, prefix: string): Promise<string[]> {
  const slash = prefix.lastIndexOf('/');
  const dirKey = slash < 0 ? '' : prefix.slice(0, slash);
  const rest = prefix.slice(slash + 1);
  let start = base;
  if (dirKey) {
    try {
      start = await safePath(base, `${dirKey}/x`, false).then(path.dirname);
      if (!(await fs.lstat(start)).isDirectory()) return [];
    } catch {
      return [];
    }
  }
  const keys: string[] = [];
  const walk = async (abs: string, rel: string, filter: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(abs, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // removed meanwhile
      throw e;
    }
    for (const entry of entries) {
      if (!entry.name.startsWith(filter)) continue;
      const key = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(abs, entry.name), key, '');
      else if (entry.isFile()) keys.push(key);
    }
  };
  await walk(start, dirKey, rest);
  return keys;
}

async function removeStaleTmp(tmp: string): Promise<void> {
  const now = Date.now();
  for (const name of await fs.readdir(tmp)) {
    const file = path.join(tmp, name);
    const st = await fs.lstat(file).catch(() => undefined);
    if (st && now - st.mtimeMs > STALE_TMP_MS) await fs.rm(file, { recursive: true, force: true });
  }
}
