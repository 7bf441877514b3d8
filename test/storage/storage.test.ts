// One contract, both backends: every test in "contract" runs against the file backend (a temp
// dir) and against a real S3 server (radosgw, started once for this file by test/setup/s3.ts),
// so code written against Storage behaves the same whichever LECTERN_STORAGE says.
// @see ../../src/storage/storage.ts
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FileStorage } from '../../src/storage/file.ts';
import { openStorage } from '../../src/storage/index.ts';
import { OutputRefused } from '../../src/storage/output.ts';
import { S3Storage } from '../../src/storage/s3.ts';
import { mapLimit, type NotModified, type Storage, StorageKeyError, type StoredObject } from '../../src/storage/storage.ts';
import { type S3Server, startS3 } from '../setup/s3.ts';

const tmpDirs: string[] = [];
async function tmpDir(name: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `lectern-storage-${name}-`));
  tmpDirs.push(dir);
  return dir;
}

// Started on first use, so a missing radosgw fails the S3 tests (with its message) and only them.
let s3Server: Promise<S3Server> | undefined;
const s3 = () => (s3Server ??= startS3());

afterAll(async () => {
  if (s3Server) await (await s3Server.catch(() => undefined))?.stop();
  await Promise.all(tmpDirs.map((d) => fs.rm(d, { recursive: true, force: true })));
});

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

function isObject(got: StoredObject | NotModified | null): asserts got is StoredObject {
  expect(got).not.toBeNull();
  expect(got!.notModified).toBeFalsy();
}

async function text(storage: Storage, key: string): Promise<string | null> {
  const got = await storage.get(key);
  if (!got) return null;
  isObject(got);
  return (await readAll(got.body)).toString();
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const backends: Record<string, () => Promise<Storage>> = {
  file: async () => openStorage(`file:${await tmpDir('file')}`),
  s3: async () => {
    const server = await s3();
    return openStorage(`s3://${server.bucket}/lectern/contract`, server.env);
  },
};

describe.each(Object.keys(backends))('contract: %s backend', (backend) => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await backends[backend]();
  });

  test('put a Buffer, get it back with size, content type from the extension, etag and date', async () => {
    const before = Date.now();
    await storage.put('p/versions/latest/html/index.html', Buffer.from('<h1>hello</h1>'));
    const got = await storage.get('p/versions/latest/html/index.html');
    isObject(got);
    expect((await readAll(got.body)).toString()).toBe('<h1>hello</h1>');
    expect(got.size).toBe(14);
    expect(got.contentType).toBe('text/html; charset=utf-8');
    expect(got.etag).toMatch(/^"[^"]+"$/);
    // S3 dates have whole seconds.
    expect(got.lastModified.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(got.lastModified.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
  });

  test('content types: an explicit one wins, and putting again without one goes back to the extension', async () => {
    await storage.put('types/manual.pdf', Buffer.from('%PDF'));
    await storage.put('types/objects.inv', Buffer.from('inv'));
    await storage.put('types/app.js', Buffer.from('1'));
    await storage.put('types/data.bin', Buffer.from('x'), { contentType: 'application/x-custom' });
    expect((await storage.head('types/manual.pdf'))?.contentType).toBe('application/pdf');
    expect((await storage.head('types/objects.inv'))?.contentType).toBe('application/octet-stream');
    expect((await storage.head('types/app.js'))?.contentType).toBe('text/javascript; charset=utf-8');
    expect((await storage.head('types/data.bin'))?.contentType).toBe('application/x-custom');
    const got = await storage.get('types/data.bin');
    isObject(got);
    got.body.destroy();
    expect(got.contentType).toBe('application/x-custom');
    await storage.put('types/data.bin', Buffer.from('y'));
    expect((await storage.head('types/data.bin'))?.contentType).toBe('application/octet-stream');
  });

  test('missing objects: get and head answer null', async () => {
    await storage.put('missing/index.html', Buffer.from('x'));
    expect(await storage.get('missing/nope.html')).toBeNull();
    expect(await storage.head('missing/nope.html')).toBeNull();
    expect(await storage.get('nowhere/at/all.html')).toBeNull();
    expect(await storage.get('missing/index.html/below')).toBeNull();
    expect(await storage.head('missing/index.html/below')).toBeNull();
    expect(await storage.get('missing/nope.html', { ifNoneMatch: '*' })).toBeNull();
  });

  test('head agrees with get; the etag is stable and changes with the body', async () => {
    await storage.put('etag/a.txt', Buffer.from('one'));
    const head1 = await storage.head('etag/a.txt');
    const head2 = await storage.head('etag/a.txt');
    const got = await storage.get('etag/a.txt');
    isObject(got);
    got.body.destroy();
    expect(head1).toEqual(head2);
    expect(head1).toEqual({ size: got.size, contentType: got.contentType, etag: got.etag, lastModified: got.lastModified });
    await storage.put('etag/a.txt', Buffer.from('two!'));
    const head3 = await storage.head('etag/a.txt');
    expect(head3?.etag).not.toBe(head1?.etag);
    expect(head3?.size).toBe(4);
  });

  test('ifNoneMatch: the current etag (also weak, in a list, or *) answers notModified; another one the body', async () => {
    await storage.put('inm/page.html', Buffer.from('<p>cached</p>'));
    const { etag } = (await storage.head('inm/page.html'))!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const got = await storage.get('inm/page.html', { ifNoneMatch: header });
      expect(got, header).toEqual({ notModified: true, etag });
    }
    const fresh = await storage.get('inm/page.html', { ifNoneMatch: '"stale"' });
    isObject(fresh);
    expect((await readAll(fresh.body)).toString()).toBe('<p>cached</p>');
    await storage.put('inm/page.html', Buffer.from('<p>changed</p>'));
    const changed = await storage.get('inm/page.html', { ifNoneMatch: etag });
    isObject(changed);
    expect((await readAll(changed.body)).toString()).toBe('<p>changed</p>');
  });

  test('a Readable of unknown length (12 MiB: several S3 parts) round-trips', async () => {
    const big = Buffer.alloc(12 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4) big.writeUInt32LE(i, i);
    const chunks = function* () {
      for (let i = 0; i < big.length; i += 1_000_003) yield big.subarray(i, i + 1_000_003);
    };
    await storage.put('stream/manual.pdf', Readable.from(chunks()));
    const got = await storage.get('stream/manual.pdf');
    isObject(got);
    expect(got.size).toBe(big.length);
    expect(got.contentType).toBe('application/pdf');
    expect(sha(await readAll(got.body))).toBe(sha(big));
  });

  test('a stream that fails leaves the previous object (or none) in place', async () => {
    const failing = () =>
      new Readable({
        read() {
          this.push(Buffer.alloc(64 * 1024, 1));
          this.destroy(new Error('build output vanished'));
        },
      });
    await expect(storage.put('failing/new.html', failing())).rejects.toThrow();
    expect(await storage.get('failing/new.html')).toBeNull();
    await storage.put('failing/old.html', Buffer.from('old'));
    await expect(storage.put('failing/old.html', failing())).rejects.toThrow();
    expect(await text(storage, 'failing/old.html')).toBe('old');
  });

  test('concurrent puts to one key: every reader sees one whole version', async () => {
    const versions = [1, 2, 3].map((n) => Buffer.alloc(256 * 1024 + n, n));
    const reads: Promise<string | null>[] = [];
    const writes: Promise<void>[] = [];
    await storage.put('race/page.html', versions[0]);
    for (let i = 0; i < 9; i++) {
      writes.push(storage.put('race/page.html', versions[i % 3]));
      reads.push(
        storage.get('race/page.html').then(async (got) => {
          isObject(got);
          const body = await readAll(got.body);
          return body.length === got.size && body.every((b) => b === body[0]) ? `v${body[0]}:${body.length}` : 'torn';
        }),
      );
    }
    await Promise.all(writes);
    for (const r of await Promise.all(reads)) expect(['v1:262145', 'v2:262146', 'v3:262147']).toContain(r);
  });

  test('list: a plain string prefix, in byte order, nothing outside it', async () => {
    const keys = ['l/a/2.html', 'l/a/1.html', 'l/ab/3.html', 'l/b/a.html', 'l/b/Z.html', 'l/z.txt', 'l/é.txt'];
    for (const k of keys) await storage.put(k, Buffer.from(k));
    expect(await storage.list('l/a')).toEqual(['l/a/1.html', 'l/a/2.html', 'l/ab/3.html']);
    expect(await storage.list('l/a/')).toEqual(['l/a/1.html', 'l/a/2.html']);
    expect(await storage.list('l/')).toEqual(['l/a/1.html', 'l/a/2.html', 'l/ab/3.html', 'l/b/Z.html', 'l/b/a.html', 'l/z.txt', 'l/é.txt']);
    expect(await storage.list('l/b/a.html')).toEqual(['l/b/a.html']);
    expect(await storage.list('l/nothing/')).toEqual([]);
    expect(await storage.list('nothing')).toEqual([]);
    expect(await storage.list('')).toEqual(expect.arrayContaining(keys));
  });

  test('deletePrefix: deletes only under the prefix, counts, and refuses the empty prefix', async () => {
    for (const k of ['d/x/1.html', 'd/x/2/3.html', 'd/x/2/4/5.html', 'd/xy/6.html', 'd/z.html']) await storage.put(k, Buffer.from(k));
    expect(await storage.deletePrefix('d/x/')).toBe(3);
    expect(await storage.list('d/')).toEqual(['d/xy/6.html', 'd/z.html']);
    expect(await storage.deletePrefix('d/x/')).toBe(0);
    expect(await storage.deletePrefix('d/x')).toBe(1);
    expect(await storage.list('d/')).toEqual(['d/z.html']);
    await expect(storage.deletePrefix('')).rejects.toThrow(/non-empty prefix/);
    await storage.put('d/x/2/again.html', Buffer.from('again'));
    expect(await text(storage, 'd/x/2/again.html')).toBe('again');
  });

  test('keys that could escape the root, or mean different things to the backends, are refused', async () => {
    const bad = ['', '/etc/passwd', '../x', 'a/../../x', 'a/..', '..', 'a\\..\\x', 'a\0b', 'a//b', 'a/', './a', 'a/./b'];
    for (const key of bad) {
      await expect(storage.put(key, Buffer.from('x')), JSON.stringify(key)).rejects.toThrow(StorageKeyError);
      await expect(storage.get(key), JSON.stringify(key)).rejects.toThrow(StorageKeyError);
      await expect(storage.head(key), JSON.stringify(key)).rejects.toThrow(StorageKeyError);
    }
    for (const prefix of ['/', '../', 'a/../', 'a\\b', '/abs/']) {
      await expect(storage.list(prefix), prefix).rejects.toThrow(StorageKeyError);
      await expect(storage.deletePrefix(prefix), prefix).rejects.toThrow(StorageKeyError);
    }
    const site = await tmpDir('bad-prefix');
    await expect(storage.putDirectory(site, '../up')).rejects.toThrow(StorageKeyError);
    await expect(storage.putDirectory(path.join(site, 'missing'), 'up')).rejects.toThrow(
      "missing is missing (or was removed while it was being read): Lectern publishes only regular files inside the build's output",
    );
  });

  test('putDirectory uploads a build output with types and sizes', async () => {
    const site = path.join(await tmpDir('site'), 'html');
    await fs.mkdir(path.join(site, '_static/js'), { recursive: true });
    const big = Buffer.alloc(3 * 1024 * 1024 + 5, 7); // above the size read whole: streamed
    const files: Record<string, Buffer> = {
      'index.html': Buffer.from('<h1>docs</h1>'),
      '_static/style.css': Buffer.from('body{}'),
      '_static/js/app.js': Buffer.from('void 0'),
      'empty.txt': Buffer.alloc(0),
      'manual.pdf': big,
      'objects.inv': Buffer.from('inv'),
    };
    for (const [rel, body] of Object.entries(files)) await fs.writeFile(path.join(site, rel), body);

    const result = await storage.putDirectory(site, 'p/builds/7/html');
    expect(result).toEqual({ files: 6, bytes: Object.values(files).reduce((n, b) => n + b.length, 0), skipped: [] });
    expect(await storage.list('p/builds/7/')).toEqual(
      ['_static/js/app.js', '_static/style.css', 'empty.txt', 'index.html', 'manual.pdf', 'objects.inv'].map((k) => `p/builds/7/html/${k}`),
    );
    for (const [rel, body] of Object.entries(files)) {
      const got = await storage.get(`p/builds/7/html/${rel}`);
      isObject(got);
      expect(sha(await readAll(got.body)), rel).toBe(sha(body));
      expect(got.size, rel).toBe(body.length);
    }
    const types = async (rel: string) => (await storage.head(`p/builds/7/html/${rel}`))?.contentType;
    expect(await types('index.html')).toBe('text/html; charset=utf-8');
    expect(await types('_static/style.css')).toBe('text/css; charset=utf-8');
    expect(await types('manual.pdf')).toBe('application/pdf');
    expect(await types('objects.inv')).toBe('application/octet-stream');
  });

  // A hostile build leaves one of these beside ordinary pages: the upload is refused whole, with a
  // message for the build's log, and nothing reaches storage (not even the ordinary pages).
  const hostile: Record<string, { plant: (site: string, outside: string) => Promise<void>; message: string }> = {
    'a symlink to a file outside': {
      plant: (site, outside) => fs.symlink(path.join(outside, 'secret.txt'), path.join(site, 'leak.txt')),
      message: 'html/leak.txt is a symbolic link',
    },
    'a relative symlink climbing out': {
      plant: (site) => fs.symlink('../../outside/secret.txt', path.join(site, '_static/leak.txt')),
      message: 'html/_static/leak.txt is a symbolic link',
    },
    'a symlink to a file inside': {
      plant: (site) => fs.symlink('index.html', path.join(site, 'alias.html')),
      message: 'html/alias.html is a symbolic link',
    },
    'a symlink to a directory': {
      plant: (site, outside) => fs.symlink(outside, path.join(site, 'leak-dir')),
      message: 'html/leak-dir is a symbolic link',
    },
    'a symlink to /proc/self/environ': {
      plant: (site) => fs.symlink('/proc/self/environ', path.join(site, 'env.txt')),
      message: 'html/env.txt is a symbolic link',
    },
    'a hard link to a file outside': {
      plant: (site, outside) => fs.link(path.join(outside, 'secret.txt'), path.join(site, 'hard.txt')),
      message: 'html/hard.txt is a hard link (the file has 2 names)',
    },
    'a fifo': {
      plant: async (site) => void execFileSync('mkfifo', [path.join(site, 'pipe')]),
      message: 'html/pipe is a named pipe (fifo)',
    },
    'a device node': {
      plant: async (site) => void execFileSync('mknod', [path.join(site, 'null'), 'c', '1', '3']),
      message: 'html/null is a device',
    },
  };
  test.each(Object.keys(hostile))('putDirectory refuses %s and uploads nothing', async (name) => {
    const root = await tmpDir('hostile');
    const site = path.join(root, 'html');
    const outside = path.join(root, 'outside');
    await fs.mkdir(path.join(site, '_static'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'secret.txt'), 'SECRET');
    await fs.writeFile(path.join(site, 'index.html'), '<h1>docs</h1>');
    await fs.writeFile(path.join(site, '_static/style.css'), 'body{}');
    await hostile[name].plant(site, outside);
    const prefix = `hostile/${name.replaceAll(' ', '-').replaceAll('/', '_')}/html`;
    const refused = storage.putDirectory(site, prefix);
    await expect(refused).rejects.toThrow(OutputRefused);
    await expect(refused).rejects.toThrow(`${hostile[name].message}: Lectern publishes only regular files inside the build's output`);
    expect(await storage.list(`${prefix}/`)).toEqual([]);
  });

  test('putDirectory refuses an output over its limits of files or bytes before uploading any of it', async () => {
    const site = await tmpDir('limits');
    for (let i = 0; i < 5; i++) await fs.writeFile(path.join(site, `p${i}.html`), Buffer.alloc(100, 65));
    await expect(storage.putDirectory(site, 'limited/a', { limits: { maxFiles: 4, maxBytes: 1_000_000 } })).rejects.toThrow(
      "The build's output has more than 4 files, the most one build may publish (LECTERN_BUILD_MAX_PUBLISH_FILES)",
    );
    await expect(storage.putDirectory(site, 'limited/b', { limits: { maxFiles: 100, maxBytes: 499 } })).rejects.toThrow(
      "The build's output is larger than 499 bytes (499 bytes), the most one build may publish (LECTERN_BUILD_MAX_PUBLISH_BYTES)",
    );
    expect(await storage.list('limited/')).toEqual([]);
    expect(await storage.putDirectory(site, 'limited/c', { limits: { maxFiles: 5, maxBytes: 500 } })).toEqual({ files: 5, bytes: 500, skipped: [] });
    expect(await storage.deletePrefix('limited/')).toBe(5);
  });

  test('putDirectory: hundreds of files, with a prefix ending in "/"', async () => {
    const site = await tmpDir('many');
    for (let d = 0; d < 10; d++) {
      await fs.mkdir(path.join(site, `chapter${d}`));
      for (let f = 0; f < 30; f++) await fs.writeFile(path.join(site, `chapter${d}`, `page${f}.html`), `<p>${d}.${f}</p>`);
    }
    const result = await storage.putDirectory(site, 'many/');
    expect(result).toMatchObject({ files: 300, skipped: [] });
    const keys = await storage.list('many/');
    expect(keys).toHaveLength(300);
    expect(keys[0]).toBe('many/chapter0/page0.html');
    expect(await text(storage, 'many/chapter9/page29.html')).toBe('<p>9.29</p>');
    expect(await storage.deletePrefix('many/')).toBe(300);
  });
});

describe('file backend', () => {
  test('keeps bodies as plain files under objects/ and leaves no temp files', async () => {
    const dir = await tmpDir('plain');
    const storage = openStorage(`file:${dir}`);
    await storage.put('a/b/index.html', Buffer.from('plain'));
    await storage.put('a/b/index.html', Readable.from([Buffer.from('plain again')]));
    expect(await fs.readFile(path.join(dir, 'objects/a/b/index.html'), 'utf8')).toBe('plain again');
    expect(await fs.readdir(path.join(dir, 'tmp'))).toEqual([]);
    expect(await fs.readdir(dir)).toEqual(expect.arrayContaining(['objects', 'tmp', 'types']));
  });

  test('the etag survives reopening the storage, and a put makes a new one', async () => {
    const dir = await tmpDir('reopen');
    await openStorage(`file:${dir}`).put('x.html', Buffer.from('same'));
    const a = await openStorage(`file:${dir}`).head('x.html');
    const b = await openStorage(`file:${dir}`).head('x.html');
    expect(a?.etag).toBe(b?.etag);
    await openStorage(`file:${dir}`).put('x.html', Buffer.from('same'));
    expect((await openStorage(`file:${dir}`).head('x.html'))?.etag).not.toBe(a?.etag);
  });

  test('does not follow symlinks planted in its tree', async () => {
    const dir = await tmpDir('planted');
    const outside = await tmpDir('planted-outside');
    await fs.writeFile(path.join(outside, 'secret.html'), 'SECRET');
    const storage = openStorage(`file:${dir}`);
    await storage.put('real/page.html', Buffer.from('ok'));
    await fs.symlink(outside, path.join(dir, 'objects/planted'));
    await fs.symlink(path.join(outside, 'secret.html'), path.join(dir, 'objects/real/link.html'));

    expect(await storage.get('planted/secret.html')).toBeNull();
    expect(await storage.head('planted/secret.html')).toBeNull();
    expect(await storage.get('real/link.html')).toBeNull();
    expect(await storage.list('')).toEqual(['real/page.html']);
    expect(await storage.list('planted/')).toEqual([]);
    await expect(storage.put('planted/new.html', Buffer.from('x'))).rejects.toThrow(/symlink/);
    expect(await storage.deletePrefix('planted')).toBe(0);
    expect(await fs.readdir(outside)).toEqual(['secret.html']);
    // Replacing the symlinked key writes a regular file in the tree; the outside file stays.
    await storage.put('real/link.html', Buffer.from('mine'));
    expect(await text(storage, 'real/link.html')).toBe('mine');
    expect(await fs.readFile(path.join(outside, 'secret.html'), 'utf8')).toBe('SECRET');
  });

  test('a key that is both an object and a directory is refused, not half-written', async () => {
    const storage = openStorage(`file:${await tmpDir('conflict')}`);
    await storage.put('a/b', Buffer.from('file'));
    await expect(storage.put('a/b/c', Buffer.from('x'))).rejects.toThrow();
    expect(await text(storage, 'a/b')).toBe('file');
    expect(await storage.list('a/')).toEqual(['a/b']);
  });
});

describe('S3 backend', () => {
  test('the prefix in s3://bucket/prefix keeps storages in one bucket apart', async () => {
    const server = await s3();
    const one = openStorage(`s3://${server.bucket}/apart/one`, server.env);
    const two = openStorage(`s3://${server.bucket}/apart/one-more/`, server.env);
    await one.put('index.html', Buffer.from('one'));
    await two.put('index.html', Buffer.from('two'));
    expect(await one.list('')).toEqual(['index.html']);
    expect(await two.list('')).toEqual(['index.html']);
    expect(await text(one, 'index.html')).toBe('one');
    expect(await one.deletePrefix('index')).toBe(1);
    expect(await text(two, 'index.html')).toBe('two');
  });

  test('list and deletePrefix follow continuation pages', async () => {
    const server = await s3();
    const storage = new S3Storage({
      bucket: server.bucket,
      prefix: 'paged',
      endpoint: server.endpoint,
      region: server.region,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      pageSize: 7,
    });
    const site = await tmpDir('paged');
    for (let i = 0; i < 30; i++) await fs.writeFile(path.join(site, `p${String(i).padStart(2, '0')}.html`), `${i}`);
    await storage.putDirectory(site, 'b');
    const keys = await storage.list('b/');
    expect(keys).toHaveLength(30);
    expect(keys.at(-1)).toBe('b/p29.html');
    expect(await storage.deletePrefix('b/')).toBe(30);
    expect(await storage.list('')).toEqual([]);
  });

  test('wrong credentials fail loudly instead of looking like missing objects', async () => {
    const server = await s3();
    const storage = openStorage(`s3://${server.bucket}/x`, { ...server.env, AWS_SECRET_ACCESS_KEY: 'wrong' });
    await expect(storage.get('index.html')).rejects.toThrow();
    await expect(storage.list('')).rejects.toThrow();
  });
});

describe('openStorage', () => {
  test('file: specs, absolute, as URL or relative to the working directory', () => {
    expect(openStorage('file:/var/lib/lectern/storage')).toMatchObject({ root: '/var/lib/lectern/storage' });
    expect(openStorage('file:///var/lib/lectern/storage')).toMatchObject({ root: '/var/lib/lectern/storage' });
    expect(openStorage('file:./store')).toMatchObject({ root: path.resolve('store') });
    expect(openStorage('file:/x')).toBeInstanceOf(FileStorage);
  });

  test('s3: specs with the S3_* and AWS_* settings', async () => {
    const env = { S3_ENDPOINT: 'http://127.0.0.1:9', S3_REGION: 'eu-1', AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' };
    const storage = openStorage('s3://docs-bucket/lectern/prod/', env);
    expect(storage).toBeInstanceOf(S3Storage);
    expect(storage).toMatchObject({ bucket: 'docs-bucket', prefix: 'lectern/prod/' });
    const client = (storage as S3Storage).client;
    expect(await client.config.region()).toBe('eu-1');
    expect(client.config.forcePathStyle).toBe(true);
    expect(openStorage('s3://docs-bucket', env)).toMatchObject({ prefix: '' });
  });

  test('refuses what it cannot use, naming the problem', () => {
    expect(() => openStorage('ftp://x')).toThrow(/file:\/dir or s3:\/\/bucket\/prefix/);
    expect(() => openStorage('/plain/path')).toThrow(/file:\/dir or s3:\/\/bucket\/prefix/);
    expect(() => openStorage('file:')).toThrow(/needs a directory/);
    expect(() => openStorage('s3://')).toThrow(/bucket name/);
    expect(() => openStorage('s3://Bad_Bucket/x')).toThrow(/bucket name/);
    expect(() => openStorage('s3://bucket/a/../b')).toThrow(/prefix/);
    expect(() => openStorage('s3://bucket/x', { AWS_ACCESS_KEY_ID: 'k' })).toThrow(/both/);
  });
});

describe('mapLimit', () => {
  test('runs at most `limit` at once, all of them, and reports the first failure after the others settle', async () => {
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    const work = async (n: number) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n % 3));
      running--;
      done.push(n);
    };
    await mapLimit([...Array(40).keys()], 4, work);
    expect(peak).toBe(4);
    expect(done.sort((a, b) => a - b)).toEqual([...Array(40).keys()]);
    await expect(
      mapLimit([1, 2, 3], 2, async (n) => {
        if (n === 2) throw new Error('two');
        await work(n);
      }),
    ).rejects.toThrow('two');
    expect(running).toBe(0);
  });
});
