// Uploading built docs (issue 14): Debian's python3-doc HTML sent three ways (the REST route with
// curl's body, GraphQL's multipart request, and `lectern upload` against a listening server), each
// published through the same step as a build: a Build row with the uploader and sizes, served, found
// by search, listed by every API. An upload-only project has no repository and is never built.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { servedTestApp } from '../helpers/app.ts';
import { zipBuffer } from '../helpers/archives.ts';
import { cliEnv, runCli, show } from '../helpers/cli-process.ts';

const run = promisify(execFile);
const PYTHON_DOCS = '/usr/share/doc/python3-doc/html';

let t: TestApp;
let origin: string;
let stop: () => Promise<void>;
let token: string;
let work: string;
let site: string;
let siteFiles: number;

beforeAll(async () => {
  if (!existsSync(path.join(PYTHON_DOCS, 'index.html'))) {
    throw new Error(`${PYTHON_DOCS} is missing: install Debian's python3-doc (test/setup/system-deps.sh does, as root)`);
  }
  ({ t, origin, stop } = await servedTestApp());
  token = await t.user('ci-bot');
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'lectern-upload-'));
  // The package's HTML with its two symbolic links resolved, as a CI job's output would be.
  site = path.join(work, 'html');
  await run('cp', ['-rL', PYTHON_DOCS, site]);
  siteFiles = Number((await run('sh', ['-c', `find "${site}" -type f | wc -l`])).stdout.trim());
  const r = await t.gql(
    `mutation { importProject(input: {name: "Pydocs", uploadOnly: true}) { __typename ... on MutationImportProjectSuccess { data { slug uploadOnly versions { totalCount } } } } }`,
    {},
    token,
  );
  expect(r.data.importProject.data).toEqual({ slug: 'pydocs', uploadOnly: true, versions: { totalCount: 0 } });
}, 120_000);
afterAll(async () => {
  await stop?.();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

const SEARCH = `query($q: String!, $v: String) { search(query: $q, project: "pydocs", version: $v, limit: 3) { nodes { path title } } }`;

describe('uploading built docs', () => {
  it('publishes a .tar.gz sent to the REST route as a new version, served, searchable and listed', async () => {
    const archive = path.join(work, 'html.tar.gz');
    await run('tar', ['-czf', archive, '-C', site, '.']);
    const size = (await fs.stat(archive)).size;
    const res = await t.http
      .post('/api/v3/projects/pydocs/versions/3.11/upload/')
      .set('authorization', `Token ${token}`)
      .set('content-type', 'application/gzip')
      .send(await fs.readFile(archive));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      project: 'pydocs',
      version: '3.11',
      success: true,
      error: null,
      state: { code: 'finished' },
      upload: { uploaded_by: 'ci-bot', archive_bytes: size, files: siteFiles },
      docs_url: `${origin}/docs/pydocs/en/3.11/`,
    });
    expect(res.body.message).toMatch(new RegExp(`^Uploaded by ci-bot: ${siteFiles} files, \\d+ bytes, from a tar\\.gz archive of ${size} bytes\\.$`));

    const page = await t.http.get('/docs/pydocs/en/3.11/library/os.path.html');
    expect(page.status).toBe(200);
    expect(page.text).toContain('os.path.join');
    const search = await t.gql(SEARCH, { q: 'os.path.join', v: '3.11' });
    expect(search.data.search.nodes[0]).toMatchObject({ path: 'library/os.path.html' });

    // Every API lists it: the version (active, built, sphinx), and the build with its uploader.
    const version = await t.http.get('/api/v3/projects/pydocs/versions/3.11/').set('authorization', `Token ${token}`);
    expect(version.body).toMatchObject({ slug: '3.11', active: true, built: true, type: 'unknown' });
    const builds = await t.http.get('/api/v3/projects/pydocs/builds/').set('authorization', `Token ${token}`);
    expect(builds.body.results.map((b: { id: number }) => b.id)).toEqual([res.body.id]);
    const g = await t.gql(
      `{ project(slug: "pydocs") { versions { nodes { slug documentationType lastBuild { id message upload { uploadedBy archiveBytes files } } } } } }`,
      {},
      token,
    );
    expect(g.data.project.versions.nodes).toEqual([
      {
        slug: '3.11',
        documentationType: 'sphinx',
        lastBuild: { id: res.body.id, message: res.body.message, upload: { uploadedBy: 'ci-bot', archiveBytes: size, files: siteFiles } },
      },
    ]);
    const v2 = await t.http.get('/api/v2/version/?project__slug=pydocs');
    expect(v2.body.results.map((v: { slug: string }) => v.slug)).toEqual(['3.11']);
  }, 120_000);

  it("takes a zip through GraphQL's multipart request, in Read the Docs' output layout with a download", async () => {
    const zip = await zipBuffer([
      { name: 'html/index.html', body: '<html><head><title>Next</title></head><body><h1>Next release notes</h1></body></html>' },
      { name: 'html/_static/site.css', body: 'h1 { color: teal }' },
      { name: 'htmlzip/pydocs.zip', body: await zipBuffer([{ name: 'pydocs/index.html', body: '<h1>offline</h1>' }]) },
    ]);
    const operations = JSON.stringify({
      query: `mutation($archive: Upload!) { uploadDocs(project: "pydocs", version: "next", archive: $archive) {
        __typename ... on MutationUploadDocsSuccess { data { id success versionSlug upload { files } version { downloads { htmlzip } } } } ... on Error { message } } }`,
      variables: { archive: null },
    });
    const res = await t.http
      .post('/graphql')
      .set('authorization', `Token ${token}`)
      .field('operations', operations)
      .field('map', JSON.stringify({ 0: ['variables.archive'] }))
      .attach('0', zip, 'site.zip');
    expect(res.status, res.text).toBe(200);
    const data = res.body.data.uploadDocs.data;
    expect(data).toMatchObject({ success: true, versionSlug: 'next', upload: { files: 3 } });
    expect((await t.http.get('/docs/pydocs/en/next/')).text).toContain('Next release notes');
    const offline = await fetch(data.version.downloads.htmlzip);
    expect(offline.status).toBe(200);
    expect(
      Buffer.from(await offline.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK');
    // The 3.11 upload is still served beside it.
    expect((await t.http.get('/docs/pydocs/en/3.11/library/os.path.html')).status).toBe(200);
  });

  it('refuses an Upload given as JSON, a multipart request without a token, and one naming a part it lacks', async () => {
    const asJson = await t.gql(
      `mutation($a: Upload!) { uploadDocs(project: "pydocs", version: "x", archive: $a) { __typename } }`,
      { a: 'L2V0Yy9wYXNzd2Q=' },
      token,
    );
    expect(asJson.errors?.[0]?.message).toMatch(/Upload must be a file sent as a part of a multipart request/);
    const ops = JSON.stringify({
      query: 'mutation($a: Upload!) { uploadDocs(project: "pydocs", version: "x", archive: $a) { __typename } }',
      variables: { a: null },
    });
    const anonymous = await t.http.post('/graphql').field('operations', ops).field('map', '{"0":["variables.a"]}').attach('0', Buffer.from('x'), 'x.zip');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors[0].message).toMatch(/needs a token/);
    const missing = await t.http.post('/graphql').set('authorization', `Token ${token}`).field('operations', ops).field('map', '{"1":["variables.a"]}');
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].message).toMatch(/file part "1" the request does not hold/);
    const polluting = await t.http
      .post('/graphql')
      .set('authorization', `Token ${token}`)
      .field('operations', ops)
      .field('map', '{"0":["__proto__.polluted"]}')
      .attach('0', Buffer.from('x'), 'x.zip');
    expect(polluting.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await t.db.prisma.version.count({ where: { slug: 'x' } })).toBe(0);
  });

  it('`lectern upload` sends a directory (packed as it goes) to a remote server, and says why it was refused', async () => {
    const args = ['upload', '--url', origin, 'pydocs', 'latest', site];
    const r = await runCli(args, cliEnv({ LECTERN_TOKEN: token }));
    expect(r.code, show(args, r)).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^build #\\d+: Uploaded by ci-bot: ${siteFiles} files`, 'm'));
    expect((await t.http.get('/docs/pydocs/en/latest/tutorial/index.html')).status).toBe(200);
    expect(r.stdout + r.stderr).not.toContain(token);

    const bad = path.join(work, 'bad.tar.gz');
    await fs.writeFile(bad, 'not an archive');
    const refused = await runCli(['upload', '--url', origin, 'pydocs', 'latest', bad], cliEnv({ LECTERN_TOKEN: token }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^lectern: the server refused the upload \(400\): archive: The upload is not a \.zip, \.tar\.gz or \.tar archive\./m);
    const noToken = await runCli(['upload', '--url', origin, 'pydocs', 'latest', site], cliEnv({ LECTERN_TOKEN: '' }));
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/LECTERN_TOKEN/);
  }, 120_000);
});
