// Reading what a build left behind (its HTML, its pdf/epub/zip, a repository's own files) without
// ever reading anything else. A build is hostile: it may leave symbolic links (to the server's
// secrets, another project's files, /proc/self/environ), hard links to files it could not name
// otherwise, fifos that hang a reader, sockets or device nodes, and it may swap any of them in
// while Lectern reads. So every read goes through one rule, applied to the opened descriptor:
//
//  - the root is opened once (O_DIRECTORY|O_NOFOLLOW) and every path below it is opened one
//    component at a time relative to the descriptor of the one before (through /proc/self/fd/N,
//    which is openat(2) for Node), each directory with O_NOFOLLOW, so no link on the way is followed;
//  - the file itself is opened O_NOFOLLOW|O_NONBLOCK (a fifo swapped in cannot hang the open) and
//    then fstat'ed: it must be a regular file with one name (nlink 1), and the descriptor's own path
//    must still be the root's path plus the file's, so a root moved away meanwhile is noticed too.
//
// Anything else raises OutputRefused, whose message names the file (relative to the root, under a
// label such as `_readthedocs/html`) and the rule, for the build's log. Walks check the same
// things with lstat first, so a refusal is reported before anything is uploaded, and count what
// would be published against the build's limits (LECTERN_BUILD_MAX_PUBLISH_BYTES/FILES).
// Linux only (it needs /proc/self/fd), like the sandbox.
import { constants, type Stats, type WriteStream } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type * as Archiver from 'archiver';
import { lazyModule } from '../lazy-module.ts';

const archiver = lazyModule<typeof Archiver>('archiver');

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY, O_NOCTTY, O_WRONLY, O_CREAT, O_EXCL } = constants;
/** How a file of the output is opened: a link is not followed, a fifo does not block, a tty is not taken. */
export const FILE_OPEN_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIR_OPEN_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** What one build may publish (config.build.maxPublishBytes / maxPublishFiles). */
export interface OutputLimits {
  maxBytes: number;
  maxFiles: number;
}

export type RefusalRule =
  | 'symlink'
  | 'hardlink'
  | 'fifo'
  | 'socket'
  | 'device'
  | 'not-regular'
  | 'not-directory'
  | 'missing'
  | 'moved'
  | 'too-deep'
  | 'max-bytes'
  | 'max-files';

/** Something in a build's output (or a repository) Lectern will not read; the message says what and why. */
export class OutputRefused extends Error {
  override name = 'OutputRefused';
  /** The file as the message names it (`<label>/<relative path>`), or null for a limit. */
  readonly file: string | null;
  readonly rule: RefusalRule;
  constructor(message: string, file: string | null, rule: RefusalRule) {
    super(message);
    this.file = file;
    this.rule = rule;
  }
}

export interface OutputOptions {
  /** How messages name the root (`<label>/<relPath>`; '' for just `<relPath>`); by default the root's last path component. */
  label?: string;
  /** The end of every refusal message: what Lectern reads. */
  reads?: string;
}

const PUBLISHES = "Lectern publishes only regular files inside the build's output";
/** Directories nested deeper than this are refused (each level holds a descriptor while it is walked). */
export const MAX_DEPTH = 64;

/** A regular file found by a walk: its path relative to the root (`/`-separated) and its size then. */
export interface OutputEntry {
  relPath: string;
  size: number;
}

/** A file opened and verified: read it through `handle` only, and close it. */
export interface OutputFile {
  relPath: string;
  handle: FileHandle;
  size: number;
}

const fdPath = (h: FileHandle, name?: string) => (name === undefined ? `/proc/self/fd/${h.fd}` : `/proc/self/fd/${h.fd}/${name}`);

function code(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as NodeJS.ErrnoException).code : undefined;
}

/**
 * A directory of build output, held open by descriptor. Everything below it is read through
 * {@link OutputDir.openFile}, which applies the rules above at the moment of reading.
 */
export class OutputDir {
  private readonly handle: FileHandle;
  /** The root's path as the kernel sees it now (symlinks above it resolved). */
  readonly realRoot: string;
  readonly label: string;
  private readonly reads: string;
  private constructor(handle: FileHandle, realRoot: string, label: string, reads: string) {
    this.handle = handle;
    this.realRoot = realRoot;
    this.label = label;
    this.reads = reads;
  }

  /**
   * Opens `root`, which must be a directory and not itself a symbolic link (the directories above
   * it are the caller's: Lectern's own, which no build can write).
   */
  static async open(root: string, opts: OutputOptions = {}): Promise<OutputDir> {
    const label = opts.label ?? path.basename(path.resolve(root));
    const reads = opts.reads ?? PUBLISHES;
    let handle: FileHandle;
    try {
      handle = await fs.open(root, DIR_OPEN_FLAGS);
    } catch (e) {
      const link = code(e) === 'ENOTDIR' && (await isLink(root));
      throw (link ? OutputDir.refusal({ code: 'ELOOP' }, label, reads) : OutputDir.refusal(e, label, reads)) ?? e;
    }
    try {
      return new OutputDir(handle, await fs.readlink(fdPath(handle)), label, reads);
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /** The directory `rel` below this one, opened component by component without following links. */
  async subdir(rel: string, opts: { label?: string } = {}): Promise<OutputDir> {
    const segments = this.segments(rel);
    const handle = await this.openDirs(segments, segments.length);
    try {
      const real = await fs.readlink(fdPath(handle));
      if (real !== path.join(this.realRoot, ...segments)) throw this.refuse(segments.join('/'), 'moved', 'moved while it was being read');
      return new OutputDir(handle, real, opts.label ?? this.name(segments.join('/')), this.reads);
    } catch (e) {
      if (handle !== this.handle) await handle.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  /** `<label>/<rel>`: how messages name a file. */
  name(rel: string): string {
    return rel && this.label ? `${this.label}/${rel}` : rel || this.label;
  }

  refuse(rel: string, rule: RefusalRule, what: string): OutputRefused {
    return new OutputRefused(`${this.name(rel)} ${what}: ${this.reads}`, this.name(rel), rule);
  }

  /**
   * Every regular file below the root, in a stable order (sorted by name in each directory). Any
   * other kind of entry raises OutputRefused; so does going over `limits` (files, or bytes as
   * the walk sees them), before the caller has read anything.
   */
  async list(opts: { limits?: OutputLimits } = {}): Promise<OutputEntry[]> {
    const entries: OutputEntry[] = [];
    let bytes = 0;
    let directories = 0;
    const limits = opts.limits;
    const walk = async (dir: FileHandle, rel: string, depth: number): Promise<void> => {
      if (depth > MAX_DEPTH) throw this.refuse(rel, 'too-deep', `is nested more than ${MAX_DEPTH} directories deep`);
      const names = (await fs.readdir(fdPath(dir))).sort();
      for (const name of names) {
        const childRel = rel ? `${rel}/${name}` : name;
        let st: Stats;
        try {
          st = await fs.lstat(fdPath(dir, name));
        } catch (e) {
          throw this.refusal(e, childRel) ?? e;
        }
        if (st.isDirectory()) {
          if (limits && ++directories > limits.maxFiles) throw tooManyFiles(limits, 'directories');
          let child: FileHandle;
          try {
            child = await fs.open(fdPath(dir, name), DIR_OPEN_FLAGS);
          } catch (e) {
            throw (await this.dirRefusal(e, fdPath(dir, name), childRel)) ?? e;
          }
          try {
            await walk(child, childRel, depth + 1);
          } finally {
            await child.close();
          }
          continue;
        }
        this.check(st, childRel);
        entries.push({ relPath: childRel, size: st.size });
        bytes += st.size;
        if (limits) checkLimits(limits, entries.length, bytes);
      }
    };
    await walk(this.handle, '', 0);
    return entries;
  }

  /** What the walk sees of one file below the root (lstat, no links followed on the way). */
  async entry(rel: string): Promise<OutputEntry> {
    const segments = this.segments(rel);
    const parent = await this.openDirs(segments, segments.length - 1);
    try {
      let st: Stats;
      try {
        st = await fs.lstat(fdPath(parent, segments.at(-1)));
      } catch (e) {
        throw this.refusal(e, rel) ?? e;
      }
      this.check(st, rel);
      return { relPath: segments.join('/'), size: st.size };
    } finally {
      if (parent !== this.handle) await parent.close();
    }
  }

  /**
   * Opens `rel` for reading, checked on the opened descriptor: reached without following any link,
   * a regular file with a single name, still at the root's path plus `rel`. The caller closes it.
   */
  async openFile(rel: string): Promise<OutputFile> {
    const segments = this.segments(rel);
    const relPath = segments.join('/');
    const parent = await this.openDirs(segments, segments.length - 1);
    let handle: FileHandle;
    try {
      const file = fdPath(parent, segments.at(-1));
      // Refused before the open when the entry plainly is no regular file: opening a device node
      // can have effects of its own. The fstat below is what decides.
      try {
        this.check(await fs.lstat(file), relPath);
        handle = await fs.open(file, FILE_OPEN_FLAGS);
      } catch (e) {
        throw this.refusal(e, relPath) ?? e;
      }
    } finally {
      if (parent !== this.handle) await parent.close();
    }
    try {
      const st = await handle.stat();
      this.check(st, relPath);
      if ((await fs.readlink(fdPath(handle))) !== path.join(this.realRoot, ...segments)) {
        throw this.refuse(relPath, 'moved', 'moved while it was being read');
      }
      return { relPath, handle, size: st.size };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /** A stream of exactly the `size` bytes the verified file had when opened; it closes the file when done. */
  async openStream(rel: string): Promise<{ relPath: string; stream: Readable; size: number }> {
    const { relPath, handle, size } = await this.openFile(rel);
    if (size === 0) {
      await handle.close();
      return { relPath, stream: Readable.from([]), size };
    }
    return { relPath, stream: handle.createReadStream({ start: 0, end: size - 1 }), size };
  }

  /** Refuses anything but a regular file with a single name. */
  private check(st: Stats, rel: string): void {
    if (st.isFile()) {
      if (st.nlink !== 1) throw this.refuse(rel, 'hardlink', `is a hard link (the file has ${st.nlink} names)`);
      return;
    }
    if (st.isSymbolicLink()) throw this.refuse(rel, 'symlink', 'is a symbolic link');
    if (st.isFIFO()) throw this.refuse(rel, 'fifo', 'is a named pipe (fifo)');
    if (st.isSocket()) throw this.refuse(rel, 'socket', 'is a socket');
    if (st.isCharacterDevice() || st.isBlockDevice()) throw this.refuse(rel, 'device', 'is a device');
    if (st.isDirectory()) throw this.refuse(rel, 'not-regular', 'is a directory, not a file');
    throw this.refuse(rel, 'not-regular', 'is not a regular file');
  }

  /**
   * The refusal a failed directory open stands for: with O_DIRECTORY, Linux answers ENOTDIR (not
   * ELOOP) for a symbolic link, so what is there is looked at to say which.
   */
  private async dirRefusal(e: unknown, at: string, rel: string): Promise<OutputRefused | undefined> {
    if (code(e) === 'ENOTDIR' && (await isLink(at))) return this.refuse(rel, 'symlink', 'is a symbolic link');
    return this.refusal(e, rel);
  }

  /** The refusal an open/lstat error stands for, or undefined for a real I/O error. */
  private refusal(e: unknown, rel: string): OutputRefused | undefined {
    return OutputDir.refusal(e, this.label, this.reads, rel);
  }

  private static refusal(e: unknown, label: string, reads: string, rel = ''): OutputRefused | undefined {
    const name = rel && label ? `${label}/${rel}` : rel || label;
    const make = (rule: RefusalRule, what: string) => new OutputRefused(`${name} ${what}: ${reads}`, name, rule);
    switch (code(e)) {
      case 'ELOOP':
        return make('symlink', 'is a symbolic link');
      case 'ENOTDIR':
        return make('not-directory', 'is not a directory (or something on its path is not)');
      case 'ENOENT':
        return make('missing', 'is missing (or was removed while it was being read)');
      case 'ENXIO':
        return make('socket', 'is a socket');
      default:
        return undefined;
    }
  }

  private segments(rel: string): string[] {
    const segments = rel.split('/').filter((s) => s !== '' && s !== '.');
    if (segments.length === 0 || segments.some((s) => s === '..' || s.includes('\0'))) {
      throw new Error(`${JSON.stringify(rel)} is not a path below ${this.label}`);
    }
    return segments;
  }

  /** The directory of the first `count` segments, each opened O_DIRECTORY|O_NOFOLLOW relative to the one before. */
  private async openDirs(segments: string[], count: number): Promise<FileHandle> {
    let dir = this.handle;
    for (let i = 0; i < count; i++) {
      let next: FileHandle;
      try {
        next = await fs.open(fdPath(dir, segments[i]), DIR_OPEN_FLAGS);
      } catch (e) {
        const refused = await this.dirRefusal(e, fdPath(dir, segments[i]), segments.slice(0, i + 1).join('/'));
        if (dir !== this.handle) await dir.close();
        throw refused ?? e;
      }
      if (dir !== this.handle) await dir.close();
      dir = next;
    }
    return dir;
  }
}

async function isLink(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    (st) => st.isSymbolicLink(),
    () => false,
  );
}

function tooManyFiles(limits: OutputLimits, what: 'files' | 'directories'): OutputRefused {
  return new OutputRefused(
    `The build's output has more than ${limits.maxFiles} ${limits.maxFiles === 1 ? what.replace(/ies$/, 'y').replace(/s$/, '') : what}, the most one build may publish (LECTERN_BUILD_MAX_PUBLISH_FILES)`,
    null,
    'max-files',
  );
}

/** Refuses `files` files of `bytes` bytes in all when over `limits`, naming the limit and its setting. */
export function checkLimits(limits: OutputLimits, files: number, bytes: number): void {
  if (files > limits.maxFiles) throw tooManyFiles(limits, 'files');
  if (bytes > limits.maxBytes) {
    throw new OutputRefused(
      `The build's output is larger than ${limits.maxBytes} bytes (${formatBytes(limits.maxBytes)}), the most one build may publish (LECTERN_BUILD_MAX_PUBLISH_BYTES)`,
      null,
      'max-bytes',
    );
  }
}

function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}

/** Counts bytes and files as they are read, refusing past the limits (files may grow after a walk). */
export class PublishBudget {
  files = 0;
  bytes = 0;
  readonly limits: OutputLimits | undefined;
  constructor(limits: OutputLimits | undefined) {
    this.limits = limits;
  }
  add(size: number): void {
    this.files += 1;
    this.bytes += size;
    if (this.limits) checkLimits(this.limits, this.files, this.bytes);
  }
  /** Refuses `files` more files of `bytes` bytes beside what was counted, without counting them. */
  check(files: number, bytes: number): void {
    if (this.limits) checkLimits(this.limits, this.files + files, this.bytes + bytes);
  }
}

/** Opens `dir` unless it is an OutputDir already; `close` is a no-op for one passed in. */
export async function useOutputDir(dir: string | OutputDir, opts: OutputOptions = {}): Promise<{ dir: OutputDir; close: () => Promise<void> }> {
  if (dir instanceof OutputDir) return { dir, close: async () => {} };
  const opened = await OutputDir.open(dir, opts);
  return { dir: opened, close: () => opened.close() };
}

/** The regular files below `root`, refusing anything else (see OutputDir.list). */
export async function listOutput(root: string, opts: OutputOptions & { limits?: OutputLimits } = {}): Promise<OutputEntry[]> {
  const dir = await OutputDir.open(root, opts);
  try {
    return await dir.list(opts);
  } finally {
    await dir.close();
  }
}

/** A read stream of `relPath` below `root`, from the descriptor that was verified (see OutputDir.openFile). */
export async function openOutputFile(root: string, relPath: string, opts: OutputOptions = {}): Promise<{ stream: Readable; size: number }> {
  const dir = await OutputDir.open(root, opts);
  try {
    const { stream, size } = await dir.openStream(relPath);
    return { stream, size };
  } finally {
    await dir.close();
  }
}

/**
 * Zips the regular files below `dir` into `target`, each under `rootName/` (the htmlzip download).
 * Only verified files go in, one open at a time; anything else raises OutputRefused and leaves no
 * target. `target` is created new (never an existing file or a link) in a directory that must not
 * be a link.
 */
export async function zipDirectory(
  dir: string | OutputDir,
  target: string,
  rootName: string,
  opts: OutputOptions & { limits?: OutputLimits } = {},
): Promise<{ files: number; bytes: number }> {
  const { dir: output, close } = await useOutputDir(dir, opts);
  let zip: Archiver.ZipArchive | undefined;
  let written: WriteStream | undefined;
  try {
    const entries = await output.list({ limits: opts.limits });
    const budget = new PublishBudget(opts.limits);
    const out = await createNew(target);
    written = out.createWriteStream(); // closes `out` when it ends or is destroyed
    const archive = (zip = new (archiver().ZipArchive)({ zlib: { level: 9 } }));
    const finished = new Promise<void>((resolve, reject) => {
      written!.on('close', resolve);
      written!.on('error', reject);
      archive.on('error', reject);
      archive.on('warning', reject);
    });
    finished.catch(() => {}); // awaited below, or raced while appending
    archive.pipe(written);
    for (const entry of entries) {
      const file = await output.openStream(entry.relPath);
      try {
        budget.add(file.size);
      } catch (e) {
        file.stream.destroy();
        throw e;
      }
      // One file at a time: the next is opened when archiver has taken this one whole.
      const taken = new Promise<void>((resolve) => archive.once('entry', () => resolve()));
      archive.append(file.stream, { name: `${rootName}/${entry.relPath}` });
      await Promise.race([taken, finished]);
    }
    void archive.finalize();
    await finished;
    return { files: budget.files, bytes: budget.bytes };
  } catch (e) {
    zip?.abort();
    if (written && !written.destroyed) {
      const closed = new Promise<void>((resolve) => written!.once('close', () => resolve()));
      written.destroy();
      await closed;
    }
    if (written) await fs.rm(target, { force: true }).catch(() => {});
    throw e;
  } finally {
    await close();
  }
}

/** Creates `file` anew for writing: its directory must be a real directory, and nothing may be there yet. */
async function createNew(file: string): Promise<FileHandle> {
  const parentPath = path.dirname(file);
  await fs.mkdir(parentPath, { recursive: true });
  const parent = await fs.open(parentPath, DIR_OPEN_FLAGS).catch(async (e: unknown) => {
    const link = code(e) === 'ELOOP' || (code(e) === 'ENOTDIR' && (await isLink(parentPath)));
    throw link ? new OutputRefused(`${parentPath} is a symbolic link: Lectern writes only inside the build's output`, parentPath, 'symlink') : e;
  });
  try {
    return await fs.open(fdPath(parent, path.basename(file)), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
  } catch (e) {
    if (code(e) === 'EEXIST') throw new OutputRefused(`${file} already exists: Lectern writes the zip only as a new file`, file, 'not-regular');
    throw e;
  } finally {
    await parent.close();
  }
}
