// Archives for upload tests, hostile ones included: tar(.gz) through tar-stream's packer (which
// writes links, devices and fifos as asked), zips through yazl (which writes any unix mode), and
// names that are not UTF-8 patched into the bytes afterwards (both libraries write names as UTF-8).
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import yazl from 'yazl';

export interface TarEntry {
  name: string;
  body?: string | Buffer;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'block-device' | 'fifo';
  linkname?: string;
}

export async function tarBuffer(entries: TarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const e of entries) {
    const type = e.type ?? 'file';
    const body = e.body === undefined ? undefined : Buffer.from(e.body);
    const header = { name: e.name, type, linkname: e.linkname, size: type === 'file' ? (body?.length ?? 0) : 0, mode: type === 'directory' ? 0o755 : 0o644 };
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => (err ? reject(err) : resolve());
      if (type === 'file') pack.entry(header, body ?? Buffer.alloc(0), done);
      else pack.entry(header, done);
    });
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

export async function tarGz(entries: TarEntry[]): Promise<Buffer> {
  return gzipSync(await tarBuffer(entries));
}

/** Replaces `placeholder` (same length) in a tar's headers with raw bytes, fixing each header's checksum. */
export function patchTarName(tarball: Buffer, placeholder: string, bytes: Buffer): Buffer {
  const out = Buffer.from(tarball);
  const needle = Buffer.from(placeholder);
  if (needle.length !== bytes.length) throw new Error('the patch must keep the length');
  for (let at = 0; at + 512 <= out.length; at += 512) {
    const i = out.subarray(at, at + 100).indexOf(needle);
    if (i < 0) continue;
    bytes.copy(out, at + i);
    out.fill(0x20, at + 148, at + 156);
    let sum = 0;
    for (let k = at; k < at + 512; k++) sum += out[k]!;
    out.write(`${sum.toString(8).padStart(6, '0')}\0 `, at + 148, 'latin1');
  }
  return out;
}

export interface ZipEntry {
  name: string;
  body?: string | Buffer;
  /** Unix mode, type bits included (0o120777 for a symbolic link). */
  mode?: number;
  directory?: boolean;
}

export async function zipBuffer(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    if (e.directory) zip.addEmptyDirectory(e.name, e.mode ? { mode: e.mode } : {});
    else zip.addBuffer(Buffer.from(e.body ?? ''), e.name, e.mode ? { mode: e.mode } : {});
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Replaces every occurrence of `placeholder` (same length) in a zip's bytes: its local and central names. */
export function patchZipName(zip: Buffer, placeholder: string, bytes: Buffer): Buffer {
  const out = Buffer.from(zip);
  const needle = Buffer.from(placeholder);
  for (let i = out.indexOf(needle); i >= 0; i = out.indexOf(needle, i + 1)) bytes.copy(out, i);
  return out;
}
