// Path traversal against the docs server: `..`, encoded dots and slashes, backslashes, NUL,
// absolute paths and malformed encodings must never read outside the version asked for, and
// must answer 4xx, never 500. Requests go over a real socket with the path sent byte for byte
// (an HTTP client library would normalize some of these away before they reach the server).

import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, type World } from './world.ts';

let w: World;
let server: http.Server;
let port: number;
const MARKER = 'TOP-SECRET-MARKER';

beforeAll(async () => {
  w = await makeWorld({ LECTERN_DOCS_DOMAIN: 'docs.test' });
  // Things a traversal would like to reach: another project's files, a build that is not
  // published, and a file in the data dir outside storage.
  await w.t.storage.put('projects/secret/latest/999/html/marker.html', Buffer.from(`<p>${MARKER}</p>`));
  await w.t.storage.put('projects/fixture/latest/999/html/marker.html', Buffer.from(`<p>${MARKER}</p>`));
  await writeFile(path.join(w.t.dataDir, 'marker.html'), MARKER);
  server = http.createServer(w.t.handler).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await w?.t.close();
});

function get(pathname: string, host: string): Promise<{ status: number; body: string; location?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method: 'GET', headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `pathname` asked of `host`; on the main host, a `/docs/…` path is sent to the project's docs host
 * (a docs domain is set): the redirect must stay on a docs host, and is followed once.
 */
async function raw(pathname: string, host = `127.0.0.1:${port}`): Promise<{ status: number; body: string }> {
  const res = await get(pathname, host);
  if (host.endsWith('.docs.test') || res.status !== 302) return res;
  const to = /^http:\/\/([a-z0-9-]+\.docs\.test)(\/.*)$/.exec(res.location ?? '');
  expect(to, `${pathname} sent to ${res.location}`).not.toBeNull();
  expect(res.body).not.toContain(MARKER);
  return get(to![2]!, to![1]!);
}

const attempts = [
  '/docs/fixture/en/latest/../../../../secret/latest/999/html/marker.html',
  '/docs/fixture/en/latest/../../../latest/999/html/marker.html',
  '/docs/fixture/en/latest/%2e%2e/%2e%2e/%2e%2e/latest/999/html/marker.html',
  '/docs/fixture/en/latest/%2E%2E%2F%2E%2E%2F%2E%2E%2Flatest%2F999%2Fhtml%2Fmarker.html',
  '/docs/fixture/en/latest/..%2f..%2f..%2flatest%2f999%2fhtml%2fmarker.html',
  '/docs/fixture/en/latest/..%5c..%5c..%5clatest%5c999%5chtml%5cmarker.html',
  '/docs/fixture/en/latest/..\\..\\..\\latest\\999\\html\\marker.html',
  '/docs/fixture/en/latest/%00/../marker.html',
  '/docs/fixture/en/latest/marker.html%00.html',
  '/docs/fixture/en/latest//etc/passwd',
  '/docs/fixture/en/latest/%2fetc%2fpasswd',
  '/docs/fixture/en/latest/%2Fprojects%2Fsecret%2Flatest%2F999%2Fhtml%2Fmarker.html',
  '/docs/fixture/en/latest%2f..%2f..%2fsecret/latest/999/html/marker.html',
  '/docs/fixture/en/..%2fsecret/latest/',
  '/docs/..%2fsecret/en/latest/',
  '/docs/%2e%2e/secret/en/latest/',
  '/docs/fixture/en/latest/%c0%ae%c0%ae/%c0%ae%c0%ae/marker.html',
  '/docs/fixture/en/latest/%',
  '/docs/fixture/en/latest/%zz/index.html',
  '/docs/fixture/_/downloads/en/..%2f..%2fsecret/pdf/',
  '/docs/fixture/_/downloads/en/latest/..%2f..%2fpdf/',
  '/docs/fixture/projects/..%2f..%2fsecret/en/latest/',
  '/docs/fixture/en/latest/./index.html',
  '/docs/fixture/en/latest/%2e/index.html',
  '/docs/secret/en/latest/../../fixture/en/latest/',
];

describe('path traversal', () => {
  it('never reads outside the version, and answers 4xx, never 500', async () => {
    for (const attempt of attempts) {
      const res = await raw(attempt);
      expect(res.body, attempt).not.toContain(MARKER);
      expect(res.status >= 400 && res.status < 500, `${attempt} answered ${res.status}`).toBe(true);
    }
  });

  it('does the same on a docs host', async () => {
    for (const attempt of [
      '/../../marker.html',
      '//etc/passwd',
      '/en/latest/%2e%2e%2f%2e%2e%2fmarker.html',
      '/en/latest/..\\..\\marker.html',
      '/%2e%2e/secret/',
    ]) {
      const res = await raw(attempt, 'fixture.docs.test');
      expect(res.body, attempt).not.toContain(MARKER);
      expect(res.status >= 400 && res.status < 500, `${attempt} answered ${res.status}`).toBe(true);
    }
  });

  it('still serves the same pages by their plain names', async () => {
    const ok = await raw('/docs/fixture/en/latest/guide/install.html');
    expect(ok.status).toBe(200);
    const encoded = await raw('/docs/fixture/en/latest/guide/%69nstall.html');
    expect(encoded.status).toBe(200);
  });
});
