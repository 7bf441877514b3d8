// The worker thread of a threaded PGlite (src/db/threaded-pglite.ts): PostgreSQL in WebAssembly
// started and run here, on a thread of its own, while the main thread loads the command's modules
// and Prisma (docs/design/startup.md, "PGlite on a thread of its own"). Plain JavaScript: a worker
// thread loads its file without the main thread's TypeScript hooks.
//
// The thread may be started before the data dir is known (src/bin.js starts it first thing for a
// database command): it loads PGlite meanwhile, and starts PostgreSQL once it has both
// { artifacts: { wasm, data } } (PGlite's WebAssembly compiled, its file bundle read: null where
// the main thread could not) and { start: { dir, startParams } } (startParams: what to add to
// PGlite's default start parameters). Messages in after that: { id, op: 'query', sql, params,
// rowMode, raw, tx } (raw: the type OIDs whose values are sent back as PostgreSQL's text, for the
// main thread's own parsers; tx: the id of the `begin` that opened the transaction it runs in), { id, op: 'exec', sql, tx }, { id, op: 'begin' },
// { id, op: 'commit' | 'rollback', tx }, { id, op: 'close' }. Out: { ready: true } or
// { ready: false, error } once, then { id, result } or { id, error } for each message.
// A transaction is PGlite's own (`db.transaction`), held open until its commit or rollback: PGlite
// keeps statements from outside it waiting, and tells a COMMIT that rolled back.
import { enableCompileCache } from 'node:module';
import { parentPort } from 'node:worker_threads';

/** @type {MessagePort} */
const port = /** @type {any} */ (parentPort);
/** @type {Promise<{ dir: string, startParams: string[] }>} */
const told = new Promise((resolve) =>
  port.on('message', (/** @type {any} */ m) => {
    if ('start' in m) resolve(m.start);
  }),
);

// What PGlite.create would read and compile: its WebAssembly and its file bundle (the files
// PostgreSQL reads: time zones, encodings, the catalog's templates), which the main thread sends
// with { artifacts } (src/db/threaded-pglite.ts); where it could not, PGlite.create reads them.
// The bundle is handed over as what PGlite reads of a Blob, its arrayBuffer(): a Blob made of it
// and read back would copy its 6 MB twice (0.14 s of this thread's time in a profile).
/** @type {Promise<{ pgliteWasmModule?: WebAssembly.Module, fsBundle?: { arrayBuffer(): Promise<ArrayBuffer> } }>} */
const artifacts = new Promise((resolve) =>
  port.on('message', (/** @type {any} */ m) => {
    if (!('artifacts' in m)) return;
    const { wasm, data } = m.artifacts ?? {};
    resolve(wasm && data ? { pgliteWasmModule: wasm, fsBundle: { arrayBuffer: async () => data } } : {});
  }),
);
// The compile cache is each thread's own to turn on (src/bin.js turns on the main thread's): on
// before PGlite's modules load.
enableCompileCache?.();
const { messages, PGlite } = await import('@electric-sql/pglite');

/** What the main thread needs of an error to throw the same one: PostgreSQL's fields for a DatabaseError. */
function errorData(/** @type {any} */ e) {
  // Its own fields, PostgreSQL's (code, detail, constraint…): not the query PGlite attaches, whose options hold functions.
  if (e instanceof messages.DatabaseError) {
    const fields = Object.entries(e).filter(([k, v]) => typeof v !== 'object' && typeof v !== 'function' && !k.startsWith('query'));
    return { database: true, ...Object.fromEntries(fields), message: e.message };
  }
  return { database: false, message: e instanceof Error ? e.message : String(e) };
}

/** Parsers that leave the values of the types `raw` names as the text PostgreSQL sent. */
function textFor(/** @type {number[]} */ raw) {
  return Object.fromEntries(raw.map((oid) => [oid, (/** @type {string} */ text) => text]));
}

/** Rows, fields and affected rows: what the adapter reads of a result, without PGlite's blob. */
const plain = (/** @type {any} */ r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows });

/** @type {Map<number, { tx: any, done: () => void, result: Promise<unknown> }>} */
const transactions = new Map();

/** Opens a transaction, held until `finish`; resolves once it has begun. */
function begin(/** @type {any} */ db, /** @type {number} */ id) {
  return new Promise((resolve, reject) => {
    /** @type {() => void} */
    let done = () => {};
    const finished = new Promise((r) => (done = () => r(undefined)));
    const result = db.transaction(async (/** @type {any} */ tx) => {
      transactions.set(id, { tx, done, result });
      resolve(undefined);
      await finished;
    });
    result.catch(reject);
  });
}

/** Ends transaction `id`: rolled back first when `rollback`; its COMMIT's error, if any, is thrown. */
async function finish(/** @type {number} */ id, /** @type {boolean} */ rollback) {
  const t = transactions.get(id);
  if (!t) throw new Error(`no open transaction ${id}`);
  transactions.delete(id);
  if (rollback && !t.tx.closed) await t.tx.rollback();
  t.done();
  await t.result;
}

try {
  const [{ dir, startParams }, given] = await Promise.all([told, artifacts]);
  const db = await PGlite.create(dir, { ...given, startParams: [...PGlite.defaultStartParams, ...startParams] });
  /** The transaction a statement runs in, or the database. */
  const on = (/** @type {any} */ m) => {
    if (!m.tx) return db;
    const t = transactions.get(m.tx);
    if (!t) throw new Error('Transaction is closed');
    return t.tx;
  };
  port.on('message', async (/** @type {any} */ m) => {
    try {
      let result = null;
      if (m.op === 'query') result = plain(await on(m).query(m.sql, m.params, { rowMode: m.rowMode, parsers: textFor(m.raw) }));
      else if (m.op === 'exec') result = (await on(m).exec(m.sql)).map(plain);
      else if (m.op === 'begin') await begin(db, m.id);
      else if (m.op === 'commit' || m.op === 'rollback') await finish(m.tx, m.op === 'rollback');
      else if (m.op === 'close') await db.close();
      port.postMessage({ id: m.id, result });
      if (m.op === 'close') port.close();
    } catch (e) {
      port.postMessage({ id: m.id, error: errorData(e) });
    }
  });
  port.postMessage({ ready: true });
} catch (e) {
  port.postMessage({ ready: false, error: errorData(e) });
}
