// Hostile archives sent to the upload route (issue 14): each is refused with a 400 naming what was
// wrong, and nothing changes: no row written, no object stored, nothing left on disk. Sent as a
// client would, over HTTP, as the whole body and as a form's file part.
import fs from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { patchTarName, patchZipName, tarBuffer, tarGz, zipBuffer } from '../helpers/archives.ts';

let t: TestApp;
let token: string;
let stranger: string;
const SLUG = 'hostile-target';
const PAGE = '<html><head><title>ok</title></head><body><h1>ok</h1></body></html>';
const MAX_FILES = 40;
const MAX_UPLOAD = 256 * 1024;

beforeAll(async () => {
  t = await testApp({ LECTERN_BUILD_MAX_PUBLISH_FILES: String(MAX_FILES), LECTERN_UPLOAD_MAX_BYTES: String(MAX_UPLOAD) });
  token = await t.user('keeper');
  stranger = await t.user('stranger');
  const r = await t.gql(`mutation { importProject(input: {name: "Hostile target", uploadOnly: true}) { __typename } }`, {}, token);
  expect(r.data.importProject.__typename).toBe('MutationImportProjectSuccess');
});
afterAll(async () => {
  await t?.close();
});

const upload = (body: Buffer, as: 'body' | 'form' = 'body', who = token) => {
  const req = t.http.post(`/api/v3/projects/${SLUG}/versions/1.0/upload/`).set('authorization', `Token ${who}`);
  return as === 'body' ? req.set('content-type', 'application/octet-stream').send(body) : req.attach('file', body, 'docs.archive');
};

async function unchanged<T>(act: () => Promise<T>): Promise<T> {
  const writes = t.writes();
  const stored = await t.storage.list('');
  const result = await act();
  expect(t.writes(), 'database writes').toBe(writes);
  expect(await t.storage.list(''), 'stored objects').toEqual(stored);
  const tmp = path.join(t.config.dataDir, 'tmp', 'uploads');
  expect(await fs.readdir(tmp).catch(() => []), 'files left in the upload directory').toEqual([]);
  return result;
}

const zeros = (n: number) => Buffer.alloc(n);
const CASES: [what: string, archive: () => Promise<Buffer>, message: RegExp][] = [
  [
    'a path leaving the root',
    () =>
      tarGz([
        { name: 'index.html', body: PAGE },
        { name: '../escape.html', body: 'x' },
      ]),
    /"\.\.\/escape\.html": the path leaves the archive root/,
  ],
  [
    'a path leaving the root, deeper (zip)',
    async () => patchZipName(await zipBuffer([{ name: 'a/QQ/QQ/escape.html', body: 'x' }]), 'a/QQ/QQ/', Buffer.from('a/../../')),
    /"a\/\.\.\/\.\.\/escape\.html": the path leaves/,
  ],
  ['an absolute path', () => tarGz([{ name: '/etc/cron.d/evil', body: 'x' }]), /"\/etc\/cron\.d\/evil": an absolute path/],
  [
    'a drive letter',
    async () => patchZipName(await zipBuffer([{ name: 'CQ/Windows/evil.html', body: 'x' }]), 'CQ/', Buffer.from('C:/')),
    /"C:\/Windows\/evil\.html": a drive letter/,
  ],
  ['a backslash', () => tarGz([{ name: '..\\..\\evil.html', body: 'x' }]), /holds a backslash/],
  [
    'a symbolic link (tar)',
    () =>
      tarGz([
        { name: 'index.html', body: PAGE },
        { name: 'secrets', type: 'symlink', linkname: '/etc/shadow' },
      ]),
    /"secrets": a symbolic link \(to "\/etc\/shadow"\)/,
  ],
  [
    'a symbolic link (zip)',
    () =>
      zipBuffer([
        { name: 'index.html', body: PAGE },
        { name: 'link', body: '/etc/shadow', mode: 0o120777 },
      ]),
    /"link": a symbolic link/,
  ],
  [
    'a hard link',
    () =>
      tarGz([
        { name: 'index.html', body: PAGE },
        { name: 'hard', type: 'link', linkname: 'index.html' },
      ]),
    /"hard": a hard link/,
  ],
  ['a character device', () => tarGz([{ name: 'null', type: 'character-device' }]), /"null": a device file/],
  ['a block device', () => tarGz([{ name: 'sda', type: 'block-device' }]), /"sda": a device file/],
  ['a fifo', () => tarGz([{ name: 'pipe', type: 'fifo' }]), /"pipe": a fifo/],
  ['a device in a zip', () => zipBuffer([{ name: 'dev', body: '', mode: 0o020666 }]), /"dev": a device, fifo or socket/],
  [
    'a name twice',
    () =>
      tarGz([
        { name: 'index.html', body: PAGE },
        { name: './index.html', body: '<h1>swapped</h1>' },
      ]),
    /"\.\/index\.html": the archive holds this name more than once/,
  ],
  [
    'a name twice (zip)',
    () =>
      zipBuffer([
        { name: 'a.html', body: 'x' },
        { name: 'a.html', body: 'y' },
      ]),
    /"a\.html": the archive holds this name more than once/,
  ],
  [
    'a file that is also a directory',
    () =>
      tarGz([
        { name: 'a', body: 'x' },
        { name: 'a/b.html', body: 'y' },
      ]),
    /"a" is a file in this archive, and cannot also be a directory/,
  ],
  [
    'a name that is not UTF-8 (tar)',
    async () =>
      patchTarName(
        await tarBuffer([
          { name: 'index.html', body: PAGE },
          { name: 'BADNAME.html', body: 'x' },
        ]),
        'BADNAME',
        Buffer.from([0x66, 0xff, 0xfe, 0x80, 0x61, 0x62, 0x63]),
      ),
    /"f\\xff\\xfe\\x80abc\.html": the name is not valid UTF-8/,
  ],
  [
    'a name that is not UTF-8 (zip)',
    async () => patchZipName(await zipBuffer([{ name: 'BADNAME.html', body: 'x' }]), 'BADNAME', Buffer.from([0x66, 0xc3, 0x28, 0x61, 0x62, 0x63, 0x64])),
    /"f\\xc3\(abcd\.html": the name is not valid UTF-8/,
  ],
  [
    'a zip bomb (ratio)',
    () =>
      zipBuffer([
        { name: 'index.html', body: PAGE },
        { name: 'zeros.html', body: zeros(20 * 1024 * 1024) },
      ]),
    /expands to more than 100 times its size/,
  ],
  [
    'a gzip bomb (ratio)',
    () =>
      tarGz([
        { name: 'index.html', body: PAGE },
        { name: 'zeros.html', body: zeros(20 * 1024 * 1024) },
      ]),
    /expands to more than 100 times its size/,
  ],
  [
    'more files than allowed',
    () => tarGz(Array.from({ length: MAX_FILES + 1 }, (_, i) => ({ name: `p${i}.html`, body: PAGE }))),
    /more than 40 files \(LECTERN_BUILD_MAX_PUBLISH_FILES\)/,
  ],
  [
    'more files than allowed (zip)',
    () => zipBuffer(Array.from({ length: MAX_FILES * 2 + 1 }, (_, i) => ({ name: `p${i}.html`, body: PAGE }))),
    /more than 40 files/,
  ],
  ['not an archive', async () => Buffer.from('<html>just a page</html>'), /not a \.zip, \.tar\.gz or \.tar archive/],
  ['an empty archive', () => tarGz([{ name: 'empty/', type: 'directory' }]), /holds no files/],
  [
    'a damaged archive',
    async () => (await tarGz(Array.from({ length: 20 }, (_, i) => ({ name: `p${i}.html`, body: `${PAGE}${i}`.repeat(50) })))).subarray(0, 600),
    /The archive is damaged/,
  ],
  ['a gzip of garbage', async () => gzipSync(Buffer.from('not a tar at all '.repeat(100))), /damaged|no files/],
];

describe('hostile archives', () => {
  for (const [what, archive, message] of CASES) {
    it(`refuses ${what} with a 400 naming it, changing nothing`, async () => {
      const body = await archive();
      for (const as of ['body', 'form'] as const) {
        const res = await unchanged(() => upload(body, as));
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.archive?.[0]).toMatch(message);
      }
    });
  }

  it('refuses an archive over LECTERN_UPLOAD_MAX_BYTES with a 413, whether or not its length is declared', async () => {
    const big = await tarGz(
      Array.from({ length: 30 }, (_, i) => ({ name: `r${i}.html`, body: Buffer.from(Array.from({ length: 12_000 }, () => Math.floor(Math.random() * 256))) })),
    );
    expect(big.length).toBeGreaterThan(MAX_UPLOAD);
    const declared = await unchanged(() => upload(big));
    expect(declared.status).toBe(413);
    expect(declared.body.detail).toMatch(/larger than 262144 bytes \(LECTERN_UPLOAD_MAX_BYTES\)/);
    const form = await unchanged(() => upload(big, 'form'));
    expect(form.status).toBe(413);
  });

  it('reads no body from a stranger (403) or without a token (401), and builds nothing from an upload-only project', async () => {
    const ok = await tarGz([{ name: 'index.html', body: PAGE }]);
    const res = await unchanged(() => upload(ok, 'body', stranger));
    expect(res.status).toBe(403);
    const anon = await unchanged(() => t.http.post(`/api/v3/projects/${SLUG}/versions/1.0/upload/`).set('content-type', 'application/gzip').send(ok));
    expect(anon.status).toBe(401);
  });

  it('still takes a good archive after all that', async () => {
    const res = await upload(
      await tarGz([
        { name: 'site/index.html', body: PAGE },
        { name: 'site/_static/x.css', body: 'h1{}' },
      ]),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ success: true, state: { code: 'finished' } });
    expect((await t.http.get(`/docs/${SLUG}/en/1.0/`)).text).toContain('<h1>ok</h1>');
    expect((await t.http.get(`/docs/${SLUG}/en/1.0/_static/x.css`)).text).toBe('h1{}');
    // An upload-only project is never built.
    const build = await unchanged(() => t.http.post(`/api/v3/projects/${SLUG}/versions/1.0/builds/`).set('authorization', `Token ${token}`));
    expect(build.status).toBe(400);
    expect(build.body.project?.[0]).toMatch(/upload-only/);
  });
});
