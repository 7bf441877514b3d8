// An uploaded file, as the API hands it to the domain: written to a file of Lectern's own first
// (never held in memory), bounded while it arrives. GraphQL's `Upload` scalar accepts only these
// objects, which only the HTTP layer makes (src/uploads/multipart.ts for /graphql, the REST
// adapter for its upload route): a variable sent as JSON can never be one.
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class UploadedFile {
  /** Where the bytes are, a file Lectern made; removed by `remove()`. */
  readonly path: string;
  /** The name the client gave it (its multipart filename), or ''. */
  readonly name: string;
  readonly size: number;
  constructor(file: string, name: string, size: number) {
    this.path = file;
    this.name = name;
    this.size = size;
  }

  async remove(): Promise<void> {
    await fs.rm(path.dirname(this.path), { recursive: true, force: true });
  }
}

/** The upload is larger than allowed: the HTTP layer answers 413. */
export class UploadTooLarge extends Error {
  override name = 'UploadTooLarge';
  readonly status = 413;
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`The upload is larger than ${maxBytes} bytes (LECTERN_UPLOAD_MAX_BYTES).`);
    this.maxBytes = maxBytes;
  }
}

/**
 * Writes `source` to a new file in a directory of its own under `dir`, refusing it (and removing
 * what was written) as soon as it passes `maxBytes`.
 */
export async function spool(source: Readable, dir: string, maxBytes: number, name = ''): Promise<UploadedFile> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const own = await fs.mkdtemp(path.join(dir, 'upload-'));
  const file = path.join(own, 'archive');
  let size = 0;
  try {
    await pipeline(
      source,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          size += chunk.length;
          if (size > maxBytes) throw new UploadTooLarge(maxBytes);
          yield chunk;
        }
      },
      createWriteStream(file, { flags: 'wx', mode: 0o600 }),
    );
  } catch (e) {
    await fs.rm(own, { recursive: true, force: true });
    throw e;
  }
  return new UploadedFile(file, name, size);
}
