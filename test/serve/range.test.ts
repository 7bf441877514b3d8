// Range requests (RFC 9110 §14) against real served files, on file: storage and on a real S3
// server (radosgw, test/setup/s3.ts): a download and a page kept in memory, and larger ones
// streamed from storage (a ranged read), so a download that stopped resumes where it stopped.
// Also that the fast path (src/serve/fast.ts) answers a Range byte for byte as the router does.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, get as httpGet, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SWITCHER_REVISION } from '../../src/serve/switcher.ts';
import type { StoredObject } from '../../src/storage/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, publish } from '../helpers/publish.ts';
import { type S3Server, startS3 } from '../setup/s3.ts';
import { rawRequest } from './world.ts';

const KiB = 1024;
const GZIP = { 'accept-encoding': 'gzip, deflate, br' };

/** A page of `size` bytes or so, with text worth compressing. */
function html(title: string, size: number): string {
  const para = `<p>${title}: a paragraph of documentation, long enough to compress well.</p>\n`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>\n${para.repeat(Math.ceil(size / para.length))}</body></html>\n`;
}

const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3 * 1024 * KiB)]);
const files: Record<string, Buffer> = {
  'guide.html': Buffer.from(html('Guide', 6 * KiB)),
  'big.html': Buffer.from(html('Big', 400 * KiB)),
  '_static/small.png': randomBytes(20 * KiB),
  '_static/big.js': Buffer.from(`// big\n${'var x = "some javascript, as a theme ships it";\n'.repeat(12_000)}`),
  '_static/empty.txt': Buffer.alloc(0),
};
const zip = Buffer.concat([Buffer.from('PK\x03\x04'), randomBytes(40 * KiB)]);

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Whether express handled the request (the fast path did not answer it). */
  express: boolean;
}

const V = '/docs/ranged/en/latest';
const PDF = '/docs/ranged/_/downloads/en/latest/pdf/';
const ZIP = '/docs/ranged/_/downloads/en/latest/htmlzip/';

/** What is served, in each of the ways send.ts answers: kept in memory, or streamed from storage. */
const TARGETS = [
  { name: 'a kept page (with the switcher tag)', path: `${V}/guide.html`, text: true },
  { name: 'a streamed page (tag put in on the way)', path: `${V}/big.html`, text: true },
  { name: 'a kept image', path: `${V}/_static/small.png`, text: false },
  { name: 'a streamed script (gzipped on the way when asked)', path: `${V}/_static/big.js`, text: true },
  { name: 'a kept download (htmlzip)', path: ZIP, text: false },
  { name: 'a streamed download (pdf)', path: PDF, text: false },
] as const;

/** Empties the app's caches of what URLs resolve to and the fast path's, as a write through the domain does. */
const forget = (t: TestApp) => t.services.events.emit('servedChanged', {});

/** What must be identical between the two paths: all but the per-connection headers. */
const comparable = (r: Raw) => {
  const { date: _d, connection: _c, 'keep-alive': _k, ...headers } = r.headers;
  return { status: r.status, headers, body: r.body.toString('base64') };
};

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

// Started on first use and shared by the S3 describe.
let s3Server: Promise<S3Server> | undefined;
afterAll(async () => {
  if (s3Server) await (await s3Server.catch(() => undefined))?.stop();
});

describe.each(['file', 's3'] as const)('Range requests on %s storage', (backend) => {
  let t: TestApp;
  let alice: string;
  let server: Server;
  let origin: string;
  let work: string;

  beforeAll(async () => {
    let env = {};
    if (backend === 's3') {
      const s3 = await (s3Server ??= startS3());
      // openStorage reads the S3 settings from the environment, as `lectern serve` does.
      Object.assign(process.env, s3.env);
      env = { LECTERN_STORAGE: `s3://${s3.bucket}/range-test` };
    }
    t = await testApp(env);
    alice = await t.user('alice');
    const aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;

    work = await mkdtemp(path.join(os.tmpdir(), 'lectern-range-'));
    const htmlDir = path.join(work, 'html');
    for (const [rel, bytes] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(htmlDir, rel)), { recursive: true });
      await writeFile(path.join(htmlDir, rel), bytes);
    }
    await writeFile(path.join(work, 'doc.pdf'), pdf);
    await writeFile(path.join(work, 'doc.zip'), zip);
    const downloads = { pdf: path.join(work, 'doc.pdf'), htmlzip: path.join(work, 'doc.zip') };
    const project = await makeProject(t, { slug: 'ranged', maintainers: [aliceId] });
    await publish(t, { project, version: 'latest', html: htmlDir, downloads });
    await publish(t, { project, version: 'internal', html: htmlDir, downloads, versionData: { privacyLevel: 'private' } });

    server = createServer(t.handler).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    await new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r()));
    await t?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const raw = async (p: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> => {
    // handle() is what express's app function calls; its typings do not list it.
    const handle = vi.spyOn(t.app as unknown as { handle: () => void }, 'handle');
    try {
      const res = await rawRequest(`${origin}${p}`, headers, method);
      return { ...res, express: handle.mock.calls.length > 0 };
    } finally {
      handle.mockRestore();
    }
  };

  /** The whole answer without content coding: what every range is a part of. */
  const whole = async (p: string) => {
    const res = await raw(p);
    expect(res.status, p).toBe(200);
    return res;
  };

  it('serves the stored bytes whole, saying it takes byte ranges', async () => {
    for (const target of TARGETS) {
      const res = await whole(target.path);
      expect([target.name, res.headers['accept-ranges'], res.headers['content-encoding']]).toEqual([target.name, 'bytes', undefined]);
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
    }
    expect((await whole(PDF)).body.equals(pdf)).toBe(true);
    expect((await whole(ZIP)).body.equals(zip)).toBe(true);
    expect((await whole(`${V}/_static/big.js`)).body.equals(files['_static/big.js']!)).toBe(true);
    // A page gets the switcher tag: its ranges count in the page as sent.
    expect((await whole(`${V}/guide.html`)).body.toString()).toContain(`src="/docs/ranged/_/switcher.js?v=${SWITCHER_REVISION}"`);
  });

  it('answers one range, an open-ended one and a suffix with 206 and exactly those bytes', async () => {
    for (const target of TARGETS) {
      const full = await whole(target.path);
      const size = full.body.length;
      const cases: [string, number, number][] = [
        ['bytes=0-99', 0, 99],
        ['bytes=0-0', 0, 0],
        ['bytes=100-', 100, size - 1],
        ['bytes=-100', size - 100, size - 1],
        [`bytes=1000-${size + 5000}`, 1000, size - 1],
        // A suffix longer than the representation stands for all of it (§14.1.3).
        [`bytes=-${size + 1}`, 0, size - 1],
        // Overlapping and adjacent ranges are one range.
        ['bytes=10-19,15-29,30-39', 10, 39],
        // The unit in any case, spaces around a range (RFC 9110's OWS in a list).
        ['Bytes=5-9', 5, 9],
        ['bytes= 5-9 , 7-12', 5, 12],
      ];
      for (const [range, start, end] of cases) {
        const res = await raw(target.path, { range });
        const what = `${target.name}: ${range}`;
        expect([what, res.status, res.headers['content-range']]).toEqual([what, 206, `bytes ${start}-${end}/${size}`]);
        expect(Number(res.headers['content-length']), what).toBe(end - start + 1);
        expect(res.body.equals(full.body.subarray(start, end + 1)), what).toBe(true);
        for (const h of ['etag', 'last-modified', 'content-type', 'cache-control', 'content-disposition', 'vary']) {
          expect(res.headers[h], `${what} ${h}`).toBe(full.headers[h]);
        }
        expect(res.headers['content-encoding'], what).toBeUndefined();
      }
    }
  });

  it('answers 416 with the length when no range asked for is there', async () => {
    for (const target of TARGETS) {
      const size = (await whole(target.path)).body.length;
      for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=-0', `bytes=${size}-,${size + 1}-${size + 9}`]) {
        const res = await raw(target.path, { range });
        const what = `${target.name}: ${range}`;
        expect([what, res.status, res.headers['content-range']]).toEqual([what, 416, `bytes */${size}`]);
        expect(res.headers['cache-control'], what).toBe('no-store');
      }
    }
  });

  it('answers the whole file to a Range it does not take: several ranges, another unit, one not well formed; and to HEAD', async () => {
    for (const target of TARGETS) {
      const full = await whole(target.path);
      // RFC 9110 lets a server answer several ranges whole rather than as multipart/byteranges (as express's `send` does).
      for (const range of ['bytes=0-9,100-109', 'bytes=-5,0-4', 'items=0-9', 'bytes=nine-ten', 'bytes 0-9', 'bytes=0-9;x']) {
        const res = await raw(target.path, { range });
        const what = `${target.name}: ${range}`;
        expect([what, res.status, res.headers['content-range']]).toEqual([what, 200, undefined]);
        expect(res.body.equals(full.body), what).toBe(true);
      }
      // HEAD: Range is defined for GET only (§14.2); the headers of the whole answer.
      const head = await raw(target.path, { range: 'bytes=0-9' }, 'HEAD');
      expect([target.name, head.status, head.body.length, head.headers['accept-ranges'], head.headers['content-range']]).toEqual([
        target.name,
        200,
        0,
        'bytes',
        undefined,
      ]);
      expect(head.headers['content-length'], target.name).toBe(String(full.body.length));
    }
  });

  it('If-Range: the current ETag or Last-Modified gives the range, anything else the whole file', async () => {
    for (const target of TARGETS) {
      const full = await whole(target.path);
      const { etag, 'last-modified': lastModified } = full.headers;
      const cases: [string, number][] = [
        [etag!, 206],
        [lastModified!, 206],
        ['"a-previous-build"', 200],
        // Compared strongly: a weak tag never matches.
        [`W/${etag}`, 200],
        ['Sat, 01 Jan 2000 00:00:00 GMT', 200],
        ['not a date', 200],
      ];
      for (const [ifRange, status] of cases) {
        const res = await raw(target.path, { range: 'bytes=0-9', 'if-range': ifRange });
        const what = `${target.name}: If-Range ${ifRange}`;
        expect([what, res.status]).toEqual([what, status]);
        expect(res.body.equals(status === 206 ? full.body.subarray(0, 10) : full.body), what).toBe(true);
      }
    }
  });

  it('If-None-Match and If-Modified-Since come first: a 304 even when a Range is asked', async () => {
    for (const target of TARGETS) {
      const full = await whole(target.path);
      const byTag = await raw(target.path, { range: 'bytes=0-9', 'if-none-match': full.headers.etag! });
      const byDate = await raw(target.path, { range: 'bytes=0-9', 'if-modified-since': full.headers['last-modified']! });
      expect([target.name, byTag.status, byDate.status, byTag.body.length]).toEqual([target.name, 304, 304, 0]);
    }
  });

  it('a Range asked with gzip accepted gets a part of the bytes without coding, under their ETag', async () => {
    for (const target of TARGETS.filter((x) => x.text)) {
      const full = await whole(target.path);
      const gz = await raw(target.path, GZIP);
      expect([target.name, gz.headers['content-encoding'], gz.headers['accept-ranges']]).toEqual([target.name, 'gzip', 'bytes']);
      expect(gz.headers.etag).not.toBe(full.headers.etag);
      const part = await raw(target.path, { ...GZIP, range: 'bytes=50-149' });
      expect([target.name, part.status, part.headers['content-encoding'], part.headers.etag]).toEqual([target.name, 206, undefined, full.headers.etag]);
      expect(part.body.equals(full.body.subarray(50, 150)), target.name).toBe(true);
      // The gzip copy's ETag names another representation: If-Range with it gets the whole (gzipped) answer.
      const other = await raw(target.path, { ...GZIP, range: 'bytes=50-149', 'if-range': gz.headers.etag! });
      expect([target.name, other.status, other.headers['content-encoding']]).toEqual([target.name, 200, 'gzip']);
    }
  });

  it('a download cut off mid-way resumes where it stopped, and the parts make the file', async () => {
    // A reader's connection dies after the first chunks of the PDF…
    const first = await new Promise<{ got: Buffer; etag: string }>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let got = 0;
      const req = httpGet(`${origin}${PDF}`, { agent: false }, (res) => {
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          got += c.length;
          if (got >= 256 * KiB) {
            req.destroy();
            resolve({ got: Buffer.concat(chunks), etag: res.headers.etag! });
          }
        });
        res.on('error', () => {});
      });
      req.on('error', () => {});
      setTimeout(() => reject(new Error('no bytes came')), 20_000).unref();
    });
    expect(first.got.length).toBeLessThan(pdf.length);
    // …and it asks for the rest, of the same file.
    const rest = await raw(PDF, { range: `bytes=${first.got.length}-`, 'if-range': first.etag });
    expect(rest.status).toBe(206);
    expect(rest.headers['content-range']).toBe(`bytes ${first.got.length}-${pdf.length - 1}/${pdf.length}`);
    expect(rest.headers['content-disposition']).toBe('attachment; filename="ranged-latest.pdf"');
    expect(Buffer.concat([first.got, rest.body]).equals(pdf)).toBe(true);
  });

  it('keeps the rules of private files and missing pages: 206 private for a maintainer, 404 without a range', async () => {
    const priv = await raw('/docs/ranged/_/downloads/en/internal/pdf/', { range: 'bytes=0-99', authorization: `Token ${alice}` });
    expect([priv.status, priv.headers['cache-control']]).toEqual([206, 'private, no-cache']);
    expect(priv.body.equals(pdf.subarray(0, 100))).toBe(true);
    expect((await raw('/docs/ranged/_/downloads/en/internal/pdf/', { range: 'bytes=0-99' })).status).toBe(404);
    const missing = await raw(`${V}/nope.html`, { range: 'bytes=0-9' });
    expect([missing.status, missing.headers['content-range']]).toEqual([404, undefined]);
    // An empty file has no range to give: sent whole (empty).
    const empty = await raw(`${V}/_static/empty.txt`, { range: 'bytes=0-9' });
    expect([empty.status, empty.body.length]).toEqual([200, 0]);
  });

  it('the fast path answers a Range byte for byte as the router does', async () => {
    const page = `${V}/guide.html`;
    const asked: Record<string, string>[] = [
      { range: 'bytes=0-99' },
      { range: 'bytes=-64' },
      { range: 'bytes=100-' },
      { range: 'bytes=0-9,100-109' },
      { range: 'bytes=999999-' },
      { range: 'items=0-9' },
      { ...GZIP, range: 'bytes=10-20' },
    ];
    const { etag } = (await whole(page)).headers;
    asked.push({ range: 'bytes=0-9', 'if-range': etag! }, { range: 'bytes=0-9', 'if-range': '"old"' }, { range: 'bytes=0-9', 'if-none-match': etag! });
    const viaRouter: Raw[] = [];
    for (const h of asked) {
      // Each from the router: an answer sent whole (200) would be recorded, and answer the next.
      forget(t);
      viaRouter.push(await raw(page, h));
    }
    expect(viaRouter.every((r) => r.express)).toBe(true);
    expect(viaRouter.map((r) => r.status)).toEqual([206, 206, 206, 200, 416, 200, 206, 206, 200, 304]);
    // Whole answers are recorded (one per encoding); ranges are then answered in front of express.
    await raw(page);
    await raw(page, GZIP);
    for (const [i, h] of asked.entries()) {
      const fast = await raw(page, h);
      expect(fast.express, JSON.stringify(h)).toBe(false);
      expect(comparable(fast), JSON.stringify(h)).toEqual(comparable(viaRouter[i]!));
    }
  });

  it('storage reads a range of an object: those bytes only, the size of the whole', async () => {
    const key = `ranged/${backend}/object.bin`;
    const bytes = randomBytes(100 * KiB);
    await t.storage.put(key, bytes);
    const got = (await t.storage.get(key, { range: { start: 1000, end: 1999 } })) as StoredObject;
    expect(got.size).toBe(bytes.length);
    expect((await readAll(got.body)).equals(bytes.subarray(1000, 2000))).toBe(true);
    // An end past the last byte reads to the end.
    const tail = (await t.storage.get(key, { range: { start: bytes.length - 10, end: bytes.length + 100 } })) as StoredObject;
    expect((await readAll(tail.body)).equals(bytes.subarray(bytes.length - 10))).toBe(true);
  });
});
