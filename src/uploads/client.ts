// `lectern upload`: sends built docs to a Lectern server (this one or another) through its REST
// upload route, as a CI job would. A directory is packed as a .tar.gz while it is sent (nothing is
// written to disk, nothing held whole in memory); an archive file is sent as it is.
//
// A directory's symbolic links are followed (as `tar -h` does), each directory once: the server
// accepts only regular files, and a link in a build's output usually stands for its target.
import { createReadStream, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';

export interface UploadOptions {
  /** The server's public URL (`https://docs.example.com`). */
  url: string;
  token: string;
  project: string;
  version: string;
  /** A directory of built HTML (or Read the Docs' output layout), or a .zip/.tar.gz/.tar. */
  source: string;
}

export class UploadFailed extends Error {
  override name = 'UploadFailed';
}

/** Packs `dir` as a gzipped tar, streamed: entries are read one at a time as the stream is consumed. */
export function packDirectory(dir: string): Readable {
  const pack = tar.pack();
  const out = new PassThrough();
  const seen = new Set<string>();
  const add = (header: Partial<tar.Header> & { name: string }, body?: Readable) =>
    new Promise<void>((resolve, reject) => {
      if (!body) {
        pack.entry(header, (err) => (err ? reject(err) : resolve()));
        return;
      }
      const entry = pack.entry(header, (err) => (err ? reject(err) : resolve()));
      body.on('error', reject);
      body.pipe(entry);
    });
  const walk = async (abs: string, rel: string): Promise<void> => {
    const real = await fs.realpath(abs);
    if (seen.has(real)) return;
    seen.add(real);
    const names = (await fs.readdir(abs)).sort();
    for (const name of names) {
      const child = path.join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      let st: Stats;
      try {
        st = await fs.stat(child); // follows links
      } catch {
        throw new UploadFailed(`${child}: a link to nothing`);
      }
      if (st.isDirectory()) {
        await add({ name: `${childRel}/`, type: 'directory', mode: 0o755, mtime: st.mtime });
        await walk(child, childRel);
      } else if (st.isFile()) {
        await add({ name: childRel, type: 'file', size: st.size, mode: 0o644, mtime: st.mtime }, createReadStream(child));
      } else {
        throw new UploadFailed(`${child}: not a regular file or directory`);
      }
    }
  };
  walk(dir, '').then(
    () => pack.finalize(),
    (e: unknown) => pack.destroy(e as Error),
  );
  pipeline(pack, createGzip(), out).catch((e: unknown) => out.destroy(e as Error));
  return out;
}

/** Uploads and returns the build the server answered with; throws UploadFailed with the server's reasons. */
export async function upload(opts: UploadOptions): Promise<{ id: number; success: boolean; error: string | null; message: string | null }> {
  const st = await fs.stat(opts.source).catch(() => null);
  if (!st) throw new UploadFailed(`${opts.source}: no such file or directory`);
  const base = opts.url.replace(/\/+$/, '');
  const target = `${base}/api/v3/projects/${encodeURIComponent(opts.project)}/versions/${encodeURIComponent(opts.version)}/upload/`;
  const body = st.isDirectory() ? packDirectory(opts.source) : createReadStream(opts.source);
  const headers: Record<string, string> = { authorization: `Token ${opts.token}`, 'content-type': 'application/octet-stream' };
  if (!st.isDirectory()) headers['content-length'] = String(st.size);
  let res: Response;
  try {
    res = await fetch(target, { method: 'POST', headers, body: Readable.toWeb(body) as ReadableStream, duplex: 'half' } as RequestInit);
  } catch (e) {
    body.destroy();
    const cause = (e as { cause?: Error }).cause;
    throw new UploadFailed(`could not reach ${base}: ${cause?.message ?? (e as Error).message}`);
  }
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  if (res.status !== 201 || !json) {
    const reasons = json
      ? typeof json.detail === 'string'
        ? json.detail
        : Object.entries(json)
            .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(' ') : String(v)}`)
            .join('; ')
      : text.slice(0, 500);
    throw new UploadFailed(`the server refused the upload (${res.status}): ${reasons}`);
  }
  return { id: json.id as number, success: json.success as boolean, error: (json.error as string) || null, message: (json.message as string) ?? null };
}
