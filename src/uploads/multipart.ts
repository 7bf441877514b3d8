// GraphQL multipart requests (https://github.com/jaydenseric/graphql-multipart-request-spec) on
// /graphql, read here rather than by yoga: yoga's reader keeps every file part in memory, and an
// upload of built docs may be gigabytes. Each file part is written to a file of its own as it
// arrives (./spool.ts), bounded by LECTERN_UPLOAD_MAX_BYTES, and its variable becomes an
// UploadedFile, the only value the `Upload` scalar accepts. The request then reaches yoga as the
// parsed `operations`, and the files are removed once the answer is sent.
//
// busboy is the multipart parser Node's servers use (multer's, and yoga's own underneath).
// A multipart request carries no session (app.ts: a browser's session speaks only in a POST of
// JSON), so only a token can upload: a request without an Authorization header is refused before
// its body is read.
import busboy from 'busboy';
import type express from 'express';
import { spool, type UploadedFile, UploadTooLarge } from './spool.ts';

export interface MultipartOptions {
  /** Where file parts are written while the request is handled. */
  dir: string;
  /** Largest file part (LECTERN_UPLOAD_MAX_BYTES). */
  maxBytes: number;
  /** Largest `operations` or `map` field (LECTERN_MAX_BODY_BYTES). */
  maxFieldBytes: number;
}

class BadMultipart extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.status = status;
  }
}

const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/** Puts `file` at a dotted path of the operations (`variables.archive`, `0.variables.files.1`), which must lead to a null placeholder. */
function place(operations: unknown, dotted: string, file: UploadedFile): void {
  const parts = dotted.split('.');
  if (parts.some((p) => UNSAFE.has(p) || p === '')) throw new BadMultipart(`The map names an invalid path "${dotted}".`);
  let at = operations as Record<string, unknown>;
  for (const p of parts.slice(0, -1)) {
    const next = Object.hasOwn(at, p) ? at[p] : undefined;
    if (next === null || typeof next !== 'object') throw new BadMultipart(`The map's path "${dotted}" is not in the operations.`);
    at = next as Record<string, unknown>;
  }
  const last = parts[parts.length - 1]!;
  if (!Object.hasOwn(at, last) || at[last] !== null) throw new BadMultipart(`The map's path "${dotted}" must be a null placeholder in the operations.`);
  at[last] = file;
}

/** The request's `operations` with each file the `map` names put in place of its null placeholder. */
function operationsWithFiles(fields: Map<string, string>, files: Map<string, UploadedFile>): unknown {
  const ops = fields.get('operations');
  const map = fields.get('map');
  if (ops === undefined) throw new BadMultipart('The multipart request has no "operations" field (the GraphQL multipart request spec).');
  let operations: unknown;
  let mapping: unknown;
  try {
    operations = JSON.parse(ops);
    mapping = map === undefined ? {} : JSON.parse(map);
  } catch (e) {
    throw new BadMultipart(`The multipart "operations" or "map" field is not JSON: ${(e as Error).message}.`);
  }
  if (operations === null || typeof operations !== 'object') throw new BadMultipart('The multipart "operations" field must be a JSON object.');
  if (mapping === null || typeof mapping !== 'object' || Array.isArray(mapping)) throw new BadMultipart('The multipart "map" field must be a JSON object.');
  for (const [part, paths] of Object.entries(mapping)) {
    const file = files.get(part);
    if (!file) throw new BadMultipart(`The map names a file part "${part}" the request does not hold.`);
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string')) throw new BadMultipart(`The map's entry "${part}" must be a list of paths.`);
    for (const p of paths as string[]) place(operations, p, file);
  }
  return operations;
}

/** What a multipart request's parts have left so far: its fields, its files spooled to disk, and the first failure. */
interface Parts {
  fields: Map<string, string>;
  files: Map<string, UploadedFile>;
  /** Each file's spooling, settled or not. */
  pending: Promise<unknown>[];
  spooled: UploadedFile[];
  /** The file streams still being read. */
  active: Set<NodeJS.ReadableStream & { destroy(e?: Error): void }>;
  failed?: unknown;
}

export function graphqlMultipart(opts: MultipartOptions): express.RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST' || !/^multipart\/form-data\b/i.test(req.get('content-type') ?? '')) return next();
    if (!req.get('authorization')) {
      return next(new BadMultipart('A multipart request (an upload) needs a token: send "Authorization: Token <key>".', 401));
    }
    const parts: Parts = { fields: new Map(), files: new Map(), pending: [], spooled: [], active: new Set() };
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        limits: { fieldSize: opts.maxFieldBytes, fields: 2, files: 8, parts: 10, fileSize: opts.maxBytes + 1 },
      });
    } catch (e) {
      return next(new BadMultipart(`Malformed multipart request: ${(e as Error).message}.`));
    }
    const fail = (e: unknown) => {
      if (parts.failed) return;
      parts.failed = e;
      req.unpipe(bb);
      // What is still coming is not read: the connection closes after the answer.
      if (!res.headersSent) res.set('Connection', 'close');
      for (const s of parts.active) s.destroy(new Error('refused'));
      bb.destroy();
    };
    // A client that goes away mid-body leaves nothing behind.
    req.once('close', () => {
      if (!req.complete) fail(new BadMultipart('The request ended before its body did.'));
    });
    readParts(bb, parts, opts, fail);
    let closed = false;
    bb.on('close', () => {
      if (closed) return;
      closed = true;
      void finishParts(req, res, next, parts);
    });
    req.pipe(bb);
  };
}

/** Each field kept and each file spooled as busboy reads them; a part too large or too many parts fail the request. */
function readParts(bb: busboy.Busboy, parts: Parts, opts: MultipartOptions, fail: (e: unknown) => void): void {
  bb.on('field', (name, value, info) => {
    if (info.valueTruncated) fail(new BadMultipart(`The multipart field "${name}" is larger than ${opts.maxFieldBytes} bytes.`, 413));
    else parts.fields.set(name, value);
  });
  bb.on('file', (name, stream, info) => {
    if (parts.failed) {
      stream.resume();
      return;
    }
    parts.active.add(stream);
    parts.pending.push(
      spool(stream, opts.dir, opts.maxBytes, info.filename ?? '').then(
        (f) => {
          parts.active.delete(stream);
          parts.spooled.push(f);
          parts.files.set(name, f);
        },
        (e: unknown) => {
          parts.active.delete(stream);
          stream.resume();
          fail(e); // UploadTooLarge carries its 413
        },
      ),
    );
  });
  for (const limit of ['fieldsLimit', 'filesLimit', 'partsLimit'] as const) {
    bb.on(limit, () => fail(new BadMultipart(`The multipart request has more parts than an upload needs (${limit}).`)));
  }
  bb.on('error', (e: Error) => fail(new BadMultipart(`Malformed multipart request: ${e.message}.`)));
}

/**
 * Once every file is spooled: the GraphQL request with its files in place goes on, or the failure;
 * the spooled files are removed when the answer is sent (at once, on a failure).
 */
async function finishParts(req: express.Request, res: express.Response, next: express.NextFunction, parts: Parts): Promise<void> {
  const cleanup = () => Promise.all(parts.spooled.map((f) => f.remove().catch(() => {})));
  await Promise.all(parts.pending);
  res.once('close', () => void cleanup());
  if (parts.failed) {
    await cleanup();
    return next(parts.failed);
  }
  try {
    req.body = operationsWithFiles(parts.fields, parts.files);
    next();
  } catch (e) {
    await cleanup();
    next(e);
  }
}

/**
 * The archive a REST upload sends: the whole body (`--data-binary @docs.tar.gz`), or the first
 * file part of a multipart form (`-F file=@docs.zip`). Written to disk as it arrives.
 * @throws an error with `status` 413 past `maxBytes`, 400 for a form without a file.
 */
export async function spoolRequestBody(req: express.Request, dir: string, maxBytes: number): Promise<UploadedFile> {
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) throw new UploadTooLarge(maxBytes);
  if (!/^multipart\/form-data\b/i.test(req.get('content-type') ?? '')) return spool(req, dir, maxBytes);
  return new Promise<UploadedFile>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxBytes + 1, fields: 16, fieldSize: 4096 } });
    } catch (e) {
      reject(new BadMultipart(`Malformed multipart request: ${(e as Error).message}.`));
      return;
    }
    let taken: Promise<UploadedFile> | undefined;
    const stop = (e: unknown) => {
      req.unpipe(bb);
      bb.destroy();
      reject(e);
    };
    bb.on('file', (_name, stream, info) => {
      if (taken) {
        stream.resume();
        return;
      }
      taken = spool(stream, dir, maxBytes, info.filename ?? '');
      taken.catch((e: unknown) => {
        stream.resume();
        stop(e);
      });
    });
    bb.on('error', (e: Error) => stop(new BadMultipart(`Malformed multipart request: ${e.message}.`)));
    bb.on('close', () => {
      if (!taken) reject(new BadMultipart('The form holds no file: send the archive as a file part (curl -F file=@docs.tar.gz).'));
      else taken.then(resolve, () => {});
    });
    req.once('close', () => {
      if (!req.complete) stop(new BadMultipart('The request ended before its body did.'));
    });
    req.pipe(bb);
  });
}
