// Bytes handed on as they were read, without a copy: PGlite's file bundle sent to its thread
// (src/db/threaded-pglite.ts) and Prisma's query compiler (src/prisma-wasm-hook.ts). A copy of a
// few megabytes is new memory the process touches page by page (docs/design/startup.md).

/**
 * The bytes of `data` as an ArrayBuffer of their own. A file larger than Node's shared pool (4 KB)
 * is read into a buffer of its own: it is used as it is, not copied again (6 MB, 0.04 s); a buffer
 * sharing the pool is copied out of it.
 */
export function wholeBuffer(data: Buffer): ArrayBuffer {
  const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  return (own ? data.buffer : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)) as ArrayBuffer;
}
