// Domain objects in search (issue 13): a real Sphinx build documenting a Python module, an option
// and a label; its objects.inv is indexed with its pages, so `json.dumps`-style dotted names,
// methods (`Session.mount`), options and labels are found at the anchor that documents them, as
// GraphQL's results and Read the Docs' v3 `domain` blocks. A hostile objects.inv (a zlib bomb,
// entries pointing outside the build) is bounded and never fails the publish.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInventory } from '../../src/search/inventory.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, publish } from '../helpers/publish.ts';
import { sphinxHtml } from '../helpers/publish-embed.ts';

let t: TestApp;
const dirs: string[] = [];

const SOURCES: Record<string, string> = {
  'conf.py': "project = 'Netlib'\nextensions = []\n",
  'index.rst': 'Netlib\n======\n\n.. toctree::\n\n   api\n   cli\n',
  'api.rst': [
    'API reference',
    '=============',
    '',
    '.. py:module:: netlib',
    '',
    '.. py:function:: fetch(url, timeout=None)',
    '',
    '   Download what the URL names.',
    '',
    '.. py:class:: Session()',
    '',
    '   Keeps connections open between calls.',
    '',
    '   .. py:method:: mount(prefix, adapter)',
    '',
    '      Use the adapter for URLs under the prefix.',
    '',
  ].join('\n'),
  'cli.rst': ['.. _command-line:', '', 'Command line', '============', '', '.. option:: --retries <n>', '', '   How many times to try again.', ''].join('\n'),
};

beforeAll(async () => {
  t = await testApp();
  const src = mkdtempSync(path.join(os.tmpdir(), 'lectern-objects-src-'));
  dirs.push(src);
  for (const [name, text] of Object.entries(SOURCES)) writeFileSync(path.join(src, name), text);
  const html = await sphinxHtml(src);
  dirs.push(html);
  const p = await makeProject(t, { slug: 'netlib' });
  await publish(t, { project: p, version: 'latest', html });
}, 120_000);
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await t.close();
});

const SEARCH = `query($q: String!) { search(query: $q, project: "netlib", limit: 5) { totalCount nodes { path title anchor role url } } }`;
const search = async (q: string) =>
  (await t.gql(SEARCH, { q })).data.search as {
    totalCount: number;
    nodes: { path: string; title: string; anchor: string; role: string | null; url: string }[];
  };

describe("Sphinx's domain objects", () => {
  it('finds a function, a method and an option by name, first, at the anchor that documents them', async () => {
    expect((await search('netlib.fetch')).nodes[0]).toMatchObject({ title: 'netlib.fetch', role: 'py:function', path: 'api.html', anchor: 'netlib.fetch' });
    expect((await search('Session.mount')).nodes[0]).toMatchObject({ title: 'netlib.Session.mount', role: 'py:method', anchor: 'netlib.Session.mount' });
    const option = (await search('retries')).nodes.find((n) => n.role === 'std:cmdoption');
    expect(option).toMatchObject({ path: 'cli.html' });
    // A label is found by its section's title and linked to it.
    expect((await search('command line')).nodes.map((n) => n.role)).toContain('std:label');
  });

  it('answers them in Read the Docs v3 as domain blocks', async () => {
    const res = await t.http.get('/api/v3/search/').query({ q: 'netlib.fetch project:netlib' });
    const block = res.body.results[0].blocks.find((b: { type: string }) => b.type === 'domain');
    expect(block).toMatchObject({ type: 'domain', role: 'py:function', name: 'netlib.fetch', id: 'netlib.fetch' });
  });

  it('reads a hostile inventory within bounds: no way out of the build, no bomb', () => {
    const header = '# Sphinx inventory version 2\n# Project: x\n# Version: 1\n# The remainder of this file is compressed using zlib.\n';
    const body = [
      'ok py:function 1 api.html#$ -',
      'out py:function 1 ../../other/secret.html#x -',
      'abs py:function 1 https://evil.example/x -',
      'root py:function 1 /etc/passwd -',
    ].join('\n');
    expect(parseInventory(Buffer.concat([Buffer.from(header), deflateSync(body)])).map((o) => o.name)).toEqual(['ok']);
    const bomb = Buffer.concat([Buffer.from(header), deflateSync(Buffer.alloc(64 * 1024 * 1024, 0x61))]);
    expect(() => parseInventory(bomb)).toThrow(/maxOutputLength|buffer/i);
    expect(parseInventory(Buffer.from('not an inventory\n'))).toEqual([]);
  });
});
