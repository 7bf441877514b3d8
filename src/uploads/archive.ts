// Unpacking an uploaded archive of built docs (.zip, .tar.gz or .tar) into an empty directory of
// Lectern's own, from which the build's publish step takes it. An upload is hostile: it may name
// files outside the directory (`../x`, `/etc/x`, `C:\x`), carry symbolic or hard links, devices or
// fifos, name one file twice, use names that are not UTF-8, or expand to far more than it weighs
// (a zip bomb). Each of those is refused with ArchiveRefused, whose message names the entry and
// the rule, before the entry is written; the caller then removes the directory, and nothing is
// published. Everything is streamed: memory does not grow with the archive.
//
// Libraries: tar-stream (the streaming tar parser tar-fs and npm's own tools use) behind zlib's
// gunzip, and yauzl (the zip reader that checks each entry's sizes against what it inflates and
// reads the central directory, so a zip's total is known before anything is written).
import { constants, createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type TarStream from 'tar-stream';
import type Yauzl from 'yauzl';
import { lazyModule } from '../lazy-module.ts';

const tar = lazyModule<typeof TarStream>('tar-stream');
const yauzl = lazyModule<typeof Yauzl>('yauzl');

export interface ArchiveLimits {
  /** Bytes all files may expand to (LECTERN_BUILD_MAX_PUBLISH_BYTES). */
  maxBytes: number;
  /** Files the archive may hold (LECTERN_BUILD_MAX_PUBLISH_FILES); directories count apart, up to as many. */
  maxFiles: number;
  /** How many times its own size the archive may expand to (LECTERN_UPLOAD_MAX_RATIO). */
  maxRatio: number;
}

export type ArchiveRule =
  | 'format'
  | 'corrupt'
  | 'path'
  | 'symlink'
  | 'hardlink'
  | 'device'
  | 'fifo'
  | 'not-regular'
  | 'duplicate'
  | 'encoding'
  | 'encrypted'
  | 'max-bytes'
  | 'max-files'
  | 'ratio'
  | 'empty';

export class ArchiveRefused extends Error {
  override name = 'ArchiveRefused';
  readonly rule: ArchiveRule;
  /** The entry as the archive names it (bytes that are not UTF-8 as \xNN), or null. */
  readonly entry: string | null;
  constructor(message: string, rule: ArchiveRule, entry: string | null = null) {
    super(message);
    this.rule = rule;
    this.entry = entry;
  }
}

export interface Extracted {
  format: 'zip' | 'tar.gz' | 'tar';
  files: number;
  bytes: number;
}

/** Deepest directory nesting accepted (as a build's output, src/storage/output.ts MAX_DEPTH). */
const MAX_DEPTH = 64;
const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** How an entry's name is shown in a message: printable as is, other bytes as \xNN. */
function shown(raw: Buffer | string): string {
  const s = typeof raw === 'string' ? raw : raw.toString('latin1');
  return [...s]
    .map((ch) =>
      ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f || (typeof raw !== 'string' && ch.charCodeAt(0) > 0x7e)
        ? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`
        : ch,
    )
    .join('');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The path components of an entry's name, or a refusal: names must be UTF-8, relative, without
 * `..`, backslashes, drive letters or control characters. `.` and empty components are dropped
 * (`./index.html` is `index.html`); a name that is only those is the root itself ([]).
 */
export function entryPath(raw: Buffer | string): string[] {
  let name: string;
  if (typeof raw === 'string') {
    if (raw.includes('\uFFFD')) throw new ArchiveRefused(`"${shown(raw)}": the name is not valid UTF-8.`, 'encoding', shown(raw));
    name = raw;
  } else {
    try {
      name = utf8.decode(raw);
    } catch {
      throw new ArchiveRefused(`"${shown(raw)}": the name is not valid UTF-8.`, 'encoding', shown(raw));
    }
  }
  const refuse = (why: string): never => {
    throw new ArchiveRefused(`"${shown(name)}": ${why}`, 'path', shown(name));
  };
  if (/[\u0000-\u001f\u007f]/.test(name)) refuse('the name holds a control character.');
  if (name.includes('\\')) refuse("the name holds a backslash; archive paths are separated by '/'.");
  if (name.startsWith('/')) refuse('an absolute path; every entry must be relative to the archive root.');
  if (/^[A-Za-z]:/.test(name)) refuse('a drive letter; every entry must be relative to the archive root.');
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) refuse("the path leaves the archive root ('..').");
  if (parts.some((p) => Buffer.byteLength(p) > 255)) refuse('a path component longer than 255 bytes.');
  if (parts.length > MAX_DEPTH) refuse(`nested deeper than ${MAX_DEPTH} directories.`);
  return parts;
}

type Kind = 'file' | 'directory';

/** Writes entries below `root`, each checked against the rules and the limits before it is written. */
class Writer {
  private readonly seen = new Map<string, Kind>();
  private readonly made = new Set<string>(['']);
  files = 0;
  dirs = 0;
  bytes = 0;

  private readonly root: string;
  private readonly limits: ArchiveLimits;
  private readonly archiveBytes: number;
  constructor(root: string, limits: ArchiveLimits, archiveBytes: number) {
    this.root = root;
    this.limits = limits;
    this.archiveBytes = archiveBytes;
  }

  /** Registers an entry: refuses duplicates, a name below a file, and counts against the limits. */
  private claim(parts: string[], kind: Kind, name: string): string {
    const key = parts.join('/');
    for (let i = 1; i < parts.length; i++) {
      const above = parts.slice(0, i).join('/');
      if (this.seen.get(above) === 'file')
        throw new ArchiveRefused(`"${name}": "${above}" is a file in this archive, and cannot also be a directory.`, 'duplicate', name);
    }
    const before = this.seen.get(key);
    if (before && (before === 'file' || kind === 'file')) throw new ArchiveRefused(`"${name}": the archive holds this name more than once.`, 'duplicate', name);
    this.seen.set(key, kind);
    if (kind === 'file' && ++this.files > this.limits.maxFiles) {
      throw new ArchiveRefused(`The archive holds more than ${this.limits.maxFiles} files (LECTERN_BUILD_MAX_PUBLISH_FILES).`, 'max-files');
    }
    if (kind === 'directory' && !before && ++this.dirs > this.limits.maxFiles) {
      throw new ArchiveRefused(`The archive holds more than ${this.limits.maxFiles} directories.`, 'max-files');
    }
    return key;
  }

  /** Counts `n` more expanded bytes, refusing past the byte limit or the expansion ratio. */
  count(n: number, name: string): void {
    this.bytes += n;
    this.checkTotal(this.bytes, name);
  }

  checkTotal(total: number, name: string | null): void {
    if (total > this.limits.maxBytes) {
      throw new ArchiveRefused(
        `${name ? `"${name}": ` : ''}the archive expands to more than ${this.limits.maxBytes} bytes (LECTERN_BUILD_MAX_PUBLISH_BYTES).`,
        'max-bytes',
        name,
      );
    }
    if (total > this.limits.maxRatio * Math.max(this.archiveBytes, 1) && total > 1_048_576) {
      throw new ArchiveRefused(
        `${name ? `"${name}": ` : ''}the archive expands to more than ${this.limits.maxRatio} times its size of ${this.archiveBytes} bytes (LECTERN_UPLOAD_MAX_RATIO).`,
        'ratio',
        name,
      );
    }
  }

  private async mkdirs(parts: string[]): Promise<void> {
    for (let i = 1; i <= parts.length; i++) {
      const key = parts.slice(0, i).join('/');
      if (this.made.has(key)) continue;
      // Only this writer creates anything below root, and never a link: plain mkdir is safe.
      await fs.mkdir(path.join(this.root, ...parts.slice(0, i)), { mode: 0o755 });
      this.made.add(key);
    }
  }

  async directory(parts: string[], name: string): Promise<void> {
    if (!parts.length) return;
    this.claim(parts, 'directory', name);
    await this.mkdirs(parts);
  }

  /** Writes one file from `source`, counting its bytes as they come; `declared` is checked first when known. */
  async file(parts: string[], name: string, source: Readable, declared?: number): Promise<void> {
    if (!parts.length) throw new ArchiveRefused(`"${name}": a file cannot be the archive root.`, 'path', name);
    this.claim(parts, 'file', name);
    if (declared !== undefined) this.checkTotal(this.bytes + declared, name);
    await this.mkdirs(parts.slice(0, -1));
    const handle = await fs.open(path.join(this.root, ...parts), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        try {
          this.count(chunk.length, name);
          done(null, chunk);
        } catch (e) {
          done(e as Error);
        }
      },
    });
    // The stream closes the handle when it ends, and when the pipeline destroys it on an error.
    await pipeline(source, counter, handle.createWriteStream());
  }
}

/** Reads the first bytes of a file to tell its format. */
async function sniff(file: string): Promise<Extracted['format'] | null> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(262);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip'; // an empty zip
    if (bytesRead >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
    return null;
  } finally {
    await handle.close();
  }
}

/**
 * Unpacks `file` into `dest` (an empty directory). Throws ArchiveRefused for anything the rules or
 * limits refuse; what was written by then is left in `dest` for the caller to remove.
 */
export async function extractArchive(file: string, dest: string, limits: ArchiveLimits): Promise<Extracted> {
  const { size } = await fs.stat(file);
  const format = await sniff(file);
  if (!format) throw new ArchiveRefused('The upload is not a .zip, .tar.gz or .tar archive.', 'format');
  const writer = new Writer(dest, limits, size);
  if (format === 'zip') await extractZip(file, writer, limits);
  else await extractTar(file, format === 'tar.gz', writer, limits);
  if (writer.files === 0) throw new ArchiveRefused('The archive holds no files.', 'empty');
  return { format, files: writer.files, bytes: writer.bytes };
}

async function extractTar(file: string, gzipped: boolean, writer: Writer, limits: ArchiveLimits): Promise<void> {
  // Names are read as bytes (latin1 keeps each byte) so that UTF-8 can be checked; a PAX `path`
  // record is already text, where tar-stream put U+FFFD for bytes that were not UTF-8.
  const extract = tar().extract({ filenameEncoding: 'latin1' } as never);
  const work = (async () => {
    for await (const entry of extract) {
      const h = entry.header;
      const raw: Buffer | string = (h.pax as { path?: string } | undefined)?.path !== undefined ? h.name : Buffer.from(h.name, 'latin1');
      const name = shown(raw);
      const refuse = (rule: ArchiveRule, what: string): never => {
        throw new ArchiveRefused(`"${name}": ${what}; an upload may hold only regular files and directories.`, rule, name);
      };
      const parts = entryPath(raw);
      switch (h.type) {
        case 'file':
        case 'contiguous-file':
          await writer.file(parts, name, entry as unknown as Readable, h.size ?? 0);
          break;
        case 'directory':
          await writer.directory(parts, name);
          entry.resume();
          break;
        case 'symlink':
          refuse('symlink', `a symbolic link (to "${shown(h.linkname ?? '')}")`);
          break;
        case 'link':
          refuse('hardlink', `a hard link (to "${shown(h.linkname ?? '')}")`);
          break;
        case 'character-device':
        case 'block-device':
          refuse('device', 'a device file');
          break;
        case 'fifo':
          refuse('fifo', 'a fifo');
          break;
        default:
          refuse('not-regular', `an entry of type ${h.type}`);
      }
    }
  })();
  const source = createReadStream(file);
  // What gunzip gives is bounded too: a gzip of nothing but zeros is refused by its ratio, however
  // little of it the tar holds as files.
  const size = (await fs.stat(file)).size;
  let inflated = 0;
  const bounded = new Transform({
    transform: (chunk: Buffer, _enc, done) => {
      inflated += chunk.length;
      if (inflated > limits.maxRatio * size && inflated > 1_048_576) {
        return done(
          new ArchiveRefused(`The archive expands to more than ${limits.maxRatio} times its size of ${size} bytes (LECTERN_UPLOAD_MAX_RATIO).`, 'ratio'),
        );
      }
      if (inflated > limits.maxBytes + limits.maxFiles * 2048 + 1_048_576) {
        return done(new ArchiveRefused(`The archive expands to more than ${limits.maxBytes} bytes (LECTERN_BUILD_MAX_PUBLISH_BYTES).`, 'max-bytes'));
      }
      done(null, chunk);
    },
  });
  const feeding = gzipped ? pipeline(source, createGunzip(), bounded, extract) : pipeline(source, bounded, extract);
  const [fed, worked] = await Promise.allSettled([feeding, work]);
  if (fed.status === 'fulfilled' && worked.status === 'fulfilled') return;
  source.destroy();
  extract.destroy();
  // The first refusal is the reason; a parser's complaint that its stream was cut short is not.
  const reasons = [worked, fed].flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  const refusal = reasons.find((r) => r instanceof ArchiveRefused);
  if (refusal) throw refusal;
  throw new ArchiveRefused(`The archive is damaged: ${(reasons[0] as Error).message}.`, 'corrupt');
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

async function extractZip(file: string, writer: Writer, limits: ArchiveLimits): Promise<void> {
  const open = () =>
    new Promise<Yauzl.ZipFile>((resolve, reject) =>
      yauzl().open(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false }, (err, zip) =>
        err ? reject(err) : resolve(zip),
      ),
    );
  let zip: Yauzl.ZipFile;
  try {
    zip = await open();
  } catch (e) {
    throw new ArchiveRefused(`The zip archive is damaged: ${(e as Error).message}.`, 'corrupt');
  }
  try {
    // The central directory says what is coming: too many entries are refused before reading one.
    if (zip.entryCount > limits.maxFiles * 2)
      throw new ArchiveRefused(`The archive holds more than ${limits.maxFiles} files (LECTERN_BUILD_MAX_PUBLISH_FILES).`, 'max-files');
    const entries: Yauzl.Entry[] = [];
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (e: Yauzl.Entry) => {
        entries.push(e);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', (e: Error) => reject(new ArchiveRefused(`The zip archive is damaged: ${e.message}.`, 'corrupt')));
      zip.readEntry();
    });
    // Declared sizes first (yauzl then holds each entry to its declaration): a bomb is refused
    // before anything is inflated, however its entries overlap.
    let declared = 0;
    for (const e of entries) declared += e.uncompressedSize;
    writer.checkTotal(declared, null);
    for (const e of entries) {
      const raw = e.fileName as unknown as Buffer;
      const name = shown(raw);
      const parts = entryPath(raw);
      const madeOnUnix = e.versionMadeBy >> 8 === 3;
      const mode = madeOnUnix ? (e.externalFileAttributes >>> 16) & S_IFMT : 0;
      const isDir = raw[raw.length - 1] === 0x2f || mode === S_IFDIR;
      if (mode === S_IFLNK) throw new ArchiveRefused(`"${name}": a symbolic link; an upload may hold only regular files and directories.`, 'symlink', name);
      if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
        throw new ArchiveRefused(`"${name}": a device, fifo or socket; an upload may hold only regular files and directories.`, 'device', name);
      }
      if (isDir) {
        await writer.directory(parts, name);
        continue;
      }
      if (e.isEncrypted()) throw new ArchiveRefused(`"${name}": the entry is encrypted.`, 'encrypted', name);
      const stream = await new Promise<Readable>((resolve, reject) =>
        zip.openReadStream(e, (err, s) => (err ? reject(new ArchiveRefused(`"${name}": ${err.message}.`, 'corrupt', name)) : resolve(s))),
      );
      try {
        await writer.file(parts, name, stream, e.uncompressedSize);
      } catch (err) {
        stream.destroy();
        if (err instanceof ArchiveRefused) throw err;
        throw new ArchiveRefused(`"${name}": the entry is damaged: ${(err as Error).message}.`, 'corrupt', name);
      }
    }
  } finally {
    zip.close();
  }
}

/**
 * Where the docs are in an unpacked upload. Read the Docs' output layout (`html/`, and one file
 * each in `pdf/`, `epub/`, `htmlzip/`) when the root holds `html/` and nothing but those; else the
 * root is the HTML, or its one directory when that is all the root holds (`tar -czf x.tgz html/`).
 */
export async function docsLayout(root: string): Promise<{ htmlDir: string; downloads: Partial<Record<'pdf' | 'epub' | 'htmlzip', string>> }> {
  const FORMATS = ['pdf', 'epub', 'htmlzip'] as const;
  const top = await fs.readdir(root, { withFileTypes: true });
  const names = top.map((d) => d.name);
  const dirs = new Set(top.filter((d) => d.isDirectory()).map((d) => d.name));
  if (dirs.has('html') && names.every((n) => n === 'html' || (FORMATS as readonly string[]).includes(n))) {
    const downloads: Partial<Record<(typeof FORMATS)[number], string>> = {};
    for (const f of FORMATS) {
      if (!names.includes(f)) continue;
      if (!dirs.has(f)) throw new ArchiveRefused(`"${f}": in Read the Docs' layout, ${f}/ is a directory holding one file.`, 'path', f);
      const inside = await fs.readdir(path.join(root, f), { withFileTypes: true });
      if (inside.length !== 1 || !inside[0]!.isFile())
        throw new ArchiveRefused(`"${f}/": holds ${inside.length} entries; Read the Docs' layout has exactly one file there.`, 'path', f);
      downloads[f] = path.join(root, f, inside[0]!.name);
    }
    return { htmlDir: path.join(root, 'html'), downloads };
  }
  if (top.length === 1 && top[0]!.isDirectory()) return docsLayout(path.join(root, top[0]!.name));
  return { htmlDir: root, downloads: {} };
}
