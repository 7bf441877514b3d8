// Reading a build's output (src/storage/output.ts) as a hostile build leaves it: on real
// directories, every kind of entry that is not one of the build's own regular files is refused
// with a message naming the file and the rule, whether it was there when the output was walked or
// swapped in just before the read; limits of files and bytes; the htmlzip made from verified files
// only. Then publishBuild (src/builds/publish.ts): a refused build publishes nothing, the version
// keeps serving the build it served, and an ordinary build right after it is published.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishBuild } from '../../src/builds/publish.ts';
import { buildPrefix } from '../../src/storage/artifacts.ts';
import type { Storage } from '../../src/storage/index.ts';
import { listOutput, MAX_DEPTH, OutputDir, OutputRefused, openOutputFile, PublishBudget, zipDirectory } from '../../src/storage/output.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, publish } from '../helpers/publish.ts';

const RULE = "Lectern publishes only regular files inside the build's output";
const made: string[] = [];
const servers: net.Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await Promise.all(made.map((d) => fs.rm(d, { recursive: true, force: true })));
});

/** A build's output as a real directory: `<tmp>/_readthedocs/html/{index.html,_static/style.css}`, and a secret beside it. */
async function output(): Promise<{ root: string; html: string; secret: string; outsideDir: string }> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'lectern-output-'));
  made.push(tmp);
  const root = path.join(tmp, '_readthedocs');
  const html = path.join(root, 'html');
  await fs.mkdir(path.join(html, '_static'), { recursive: true });
  await fs.writeFile(path.join(html, 'index.html'), '<h1>docs</h1>');
  await fs.writeFile(path.join(html, '_static/style.css'), 'body{}');
  const outsideDir = path.join(tmp, 'outside');
  await fs.mkdir(outsideDir);
  const secret = path.join(outsideDir, 'style.css');
  await fs.writeFile(secret, 'LECTERN_SECRET_KEY=hunter2');
  return { root, html, secret, outsideDir };
}

async function refusal(p: Promise<unknown>): Promise<OutputRefused> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OutputRefused);
  return e as OutputRefused;
}

async function listen(socketPath: string): Promise<void> {
  const server = net.createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString();
}

describe('walking the output', () => {
  it('lists an ordinary tree: every regular file, sorted, with its size', async () => {
    const { html } = await output();
    await fs.writeFile(path.join(html, 'empty.txt'), '');
    expect(await listOutput(html)).toEqual([
      { relPath: '_static/style.css', size: 6 },
      { relPath: 'empty.txt', size: 0 },
      { relPath: 'index.html', size: 13 },
    ]);
  });

  const hostile: Record<string, { plant: (o: Awaited<ReturnType<typeof output>>) => Promise<unknown>; message: string; rule: string }> = {
    'a symlink to a file outside': {
      plant: ({ html, secret }) => fs.symlink(secret, path.join(html, 'leak.css')),
      message: 'html/leak.css is a symbolic link',
      rule: 'symlink',
    },
    'a symlink to /proc/self/environ': {
      plant: ({ html }) => fs.symlink('/proc/self/environ', path.join(html, '_static/env.txt')),
      message: 'html/_static/env.txt is a symbolic link',
      rule: 'symlink',
    },
    'a symlink to a directory': {
      plant: ({ html, outsideDir }) => fs.symlink(outsideDir, path.join(html, 'more')),
      message: 'html/more is a symbolic link',
      rule: 'symlink',
    },
    'a dangling symlink': {
      plant: ({ html }) => fs.symlink('nowhere', path.join(html, 'gone.html')),
      message: 'html/gone.html is a symbolic link',
      rule: 'symlink',
    },
    'a hard link to a file outside': {
      plant: ({ html, secret }) => fs.link(secret, path.join(html, '_static/hard.css')),
      message: 'html/_static/hard.css is a hard link (the file has 2 names)',
      rule: 'hardlink',
    },
    'a fifo': {
      plant: async ({ html }) => execFileSync('mkfifo', [path.join(html, 'pipe.html')]),
      message: 'html/pipe.html is a named pipe (fifo)',
      rule: 'fifo',
    },
    'a unix socket': {
      plant: ({ html }) => listen(path.join(html, 'sock')),
      message: 'html/sock is a socket',
      rule: 'socket',
    },
    'a device node (a copy of /dev/null)': {
      plant: async ({ html }) => execFileSync('mknod', [path.join(html, 'null'), 'c', '1', '3']),
      message: 'html/null is a device',
      rule: 'device',
    },
  };

  it.each(Object.keys(hostile))('refuses %s, naming it and the rule', async (name) => {
    const o = await output();
    await hostile[name].plant(o);
    const e = await refusal(listOutput(o.html));
    expect(e.message).toBe(`${hostile[name].message}: ${RULE}`);
    expect(e.rule).toBe(hostile[name].rule);
    // Labelled from the build's output directory, as the build's log shows it.
    const root = await OutputDir.open(o.root);
    try {
      const html = await root.subdir('html');
      expect((await refusal(html.list())).message).toBe(`_readthedocs/${hostile[name].message}: ${RULE}`);
      await html.close();
    } finally {
      await root.close();
    }
  });

  it('refuses an output directory that is itself a symbolic link', async () => {
    const o = await output();
    await fs.rename(o.html, path.join(o.root, 'real-html'));
    await fs.symlink(o.outsideDir, o.html);
    expect((await refusal(listOutput(o.html))).message).toBe(`html is a symbolic link: ${RULE}`);
    const root = await OutputDir.open(o.root);
    expect((await refusal(root.subdir('html'))).message).toBe(`_readthedocs/html is a symbolic link: ${RULE}`);
    await root.close();
  });

  it('refuses more files or bytes than the limits allow, naming the setting', async () => {
    const { html } = await output(); // 2 files, 19 bytes
    expect(await listOutput(html, { limits: { maxFiles: 2, maxBytes: 19 } })).toHaveLength(2);
    const files = await refusal(listOutput(html, { limits: { maxFiles: 1, maxBytes: 1000 } }));
    expect(files.message).toBe("The build's output has more than 1 file, the most one build may publish (LECTERN_BUILD_MAX_PUBLISH_FILES)");
    expect(files.rule).toBe('max-files');
    const bytes = await refusal(listOutput(html, { limits: { maxFiles: 10, maxBytes: 18 } }));
    expect(bytes.message).toBe("The build's output is larger than 18 bytes (18 bytes), the most one build may publish (LECTERN_BUILD_MAX_PUBLISH_BYTES)");
    expect(bytes.rule).toBe('max-bytes');
    // Directories count too, so an output of empty directories cannot be walked forever.
    for (let i = 0; i < 3; i++) await fs.mkdir(path.join(html, `d${i}`));
    expect((await refusal(listOutput(html, { limits: { maxFiles: 3, maxBytes: 1000 } }))).message).toMatch(/more than 3 directories/);
  });

  it('refuses directories nested deeper than it walks', async () => {
    const { html } = await output();
    const deep = Array.from({ length: MAX_DEPTH + 1 }, (_, i) => `d${i}`).join('/');
    await fs.mkdir(path.join(html, deep), { recursive: true });
    const e = await refusal(listOutput(html));
    expect(e.rule).toBe('too-deep');
    expect(e.message).toBe(`html/${deep} is nested more than ${MAX_DEPTH} directories deep: ${RULE}`);
  });

  it('counts bytes again as files are read: a file that grew after the walk is refused', async () => {
    const { html } = await output();
    const dir = await OutputDir.open(html);
    try {
      const limits = { maxFiles: 10, maxBytes: 19 };
      const entries = await dir.list({ limits });
      await fs.writeFile(path.join(html, 'index.html'), '<h1>docs, and much more than before</h1>');
      const budget = new PublishBudget(limits);
      const sizes: number[] = [];
      for (const entry of entries) {
        const file = await dir.openFile(entry.relPath);
        sizes.push(file.size);
        await file.handle.close();
      }
      expect(() => {
        for (const s of sizes) budget.add(s);
      }).toThrow(/larger than 19 bytes/);
    } finally {
      await dir.close();
    }
  });
});

describe('reading a file: checked on the opened descriptor, at the moment of reading', () => {
  it('reads an ordinary file through the verified descriptor', async () => {
    const { html } = await output();
    const { stream, size } = await openOutputFile(html, '_static/style.css');
    expect(size).toBe(6);
    expect(await readAll(stream)).toBe('body{}');
    const empty = path.join(html, 'empty.txt');
    await fs.writeFile(empty, '');
    const none = await openOutputFile(html, 'empty.txt');
    expect([none.size, await readAll(none.stream)]).toEqual([0, '']);
  });

  it('refuses a symlink swapped in after the walk', async () => {
    const o = await output();
    const dir = await OutputDir.open(o.html);
    try {
      expect(await dir.list()).toHaveLength(2);
      await fs.rm(path.join(o.html, '_static/style.css'));
      await fs.symlink(o.secret, path.join(o.html, '_static/style.css'));
      const e = await refusal(dir.openFile('_static/style.css'));
      expect(e.message).toBe(`html/_static/style.css is a symbolic link: ${RULE}`);
    } finally {
      await dir.close();
    }
  });

  it('refuses a parent directory swapped for a symlink after the walk', async () => {
    const o = await output();
    const dir = await OutputDir.open(o.html);
    try {
      expect(await dir.list()).toHaveLength(2);
      // The same name leads to a file of the same name outside: only the parent changed.
      await fs.rename(path.join(o.html, '_static'), path.join(o.root, 'moved'));
      await fs.symlink(o.outsideDir, path.join(o.html, '_static'));
      expect(await fs.readFile(path.join(o.html, '_static/style.css'), 'utf8')).toContain('hunter2');
      const e = await refusal(dir.openFile('_static/style.css'));
      expect(e.message).toBe(`html/_static is a symbolic link: ${RULE}`);
      expect(e.rule).toBe('symlink');
    } finally {
      await dir.close();
    }
  });

  it('refuses a hard link, a fifo (without hanging) and a socket swapped in after the walk', async () => {
    const o = await output();
    const dir = await OutputDir.open(o.html);
    try {
      await fs.writeFile(path.join(o.html, 'a.html'), 'a');
      await fs.writeFile(path.join(o.html, 'b.html'), 'b');
      await fs.writeFile(path.join(o.html, 'c.html'), 'c');
      expect(await dir.list()).toHaveLength(5);
      await fs.rm(path.join(o.html, 'a.html'));
      await fs.link(o.secret, path.join(o.html, 'a.html'));
      await fs.rm(path.join(o.html, 'b.html'));
      execFileSync('mkfifo', [path.join(o.html, 'b.html')]);
      await fs.rm(path.join(o.html, 'c.html'));
      await listen(path.join(o.html, 'c.html'));
      expect((await refusal(dir.openFile('a.html'))).rule).toBe('hardlink');
      expect((await refusal(dir.openFile('b.html'))).message).toBe(`html/b.html is a named pipe (fifo): ${RULE}`);
      expect((await refusal(dir.openFile('c.html'))).message).toBe(`html/c.html is a socket: ${RULE}`);
    } finally {
      await dir.close();
    }
  });

  it('refuses a file whose output directory was moved away after it was opened', async () => {
    const o = await output();
    const dir = await OutputDir.open(o.html);
    try {
      await fs.rename(o.html, path.join(o.root, 'elsewhere'));
      const e = await refusal(dir.openFile('index.html'));
      expect(e.message).toBe(`html/index.html moved while it was being read: ${RULE}`);
    } finally {
      await dir.close();
    }
  });

  it('refuses a file removed after the walk, and paths that climb out', async () => {
    const o = await output();
    const dir = await OutputDir.open(o.html);
    try {
      await fs.rm(path.join(o.html, 'index.html'));
      expect((await refusal(dir.openFile('index.html'))).rule).toBe('missing');
      await expect(dir.openFile('../outside/style.css')).rejects.toThrow(/is not a path below html/);
    } finally {
      await dir.close();
    }
  });
});

describe('zipDirectory (the htmlzip download)', () => {
  const zipListing = (zip: string) => execFileSync('zipinfo', ['-1', zip], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();

  it('zips an ordinary tree under one folder', async () => {
    const o = await output();
    const target = path.join(o.root, 'htmlzip', 'proj.zip');
    expect(await zipDirectory(o.html, target, 'proj-latest')).toEqual({ files: 2, bytes: 19 });
    expect(zipListing(target)).toEqual(['proj-latest/_static/style.css', 'proj-latest/index.html']);
    expect(execFileSync('unzip', ['-p', target, 'proj-latest/index.html'], { encoding: 'utf8' })).toBe('<h1>docs</h1>');
  });

  it('refuses a link in the tree and leaves no zip', async () => {
    const o = await output();
    await fs.symlink(o.secret, path.join(o.html, 'leak.css'));
    const target = path.join(o.root, 'htmlzip', 'proj.zip');
    expect((await refusal(zipDirectory(o.html, target, 'proj'))).message).toBe(`html/leak.css is a symbolic link: ${RULE}`);
    await expect(fs.lstat(target)).rejects.toThrow(/ENOENT/);
  });

  it('refuses past its limits, and leaves no zip', async () => {
    const o = await output();
    const target = path.join(o.root, 'htmlzip', 'proj.zip');
    expect((await refusal(zipDirectory(o.html, target, 'proj', { limits: { maxFiles: 1, maxBytes: 100 } }))).rule).toBe('max-files');
    await expect(fs.lstat(target)).rejects.toThrow(/ENOENT/);
  });

  it('never writes through a link planted at the target or as its directory', async () => {
    const o = await output();
    await fs.mkdir(path.join(o.root, 'htmlzip'));
    await fs.symlink(o.secret, path.join(o.root, 'htmlzip', 'proj.zip'));
    await expect(zipDirectory(o.html, path.join(o.root, 'htmlzip', 'proj.zip'), 'proj')).rejects.toThrow(/already exists/);
    await fs.symlink(o.outsideDir, path.join(o.root, 'linked'));
    await expect(zipDirectory(o.html, path.join(o.root, 'linked', 'proj.zip'), 'proj')).rejects.toThrow(/linked is a symbolic link/);
    expect(await fs.readFile(o.secret, 'utf8')).toBe('LECTERN_SECRET_KEY=hunter2');
    expect(await fs.readdir(o.outsideDir)).toEqual(['style.css']);
  });
});

describe('publishBuild', () => {
  let t: TestApp;
  let project: { id: number; slug: string };
  let versionId: number;
  let servedBuild: number;

  beforeAll(async () => {
    t = await testApp();
    project = await makeProject(t, { slug: 'guarded' });
    const o = await output();
    await fs.mkdir(path.join(o.root, 'epub'));
    await fs.writeFile(path.join(o.root, 'epub', 'guarded.epub'), 'EPUB-ONE');
    ({ buildId: servedBuild, versionId } = await publish(t, {
      project,
      version: 'latest',
      html: o.html,
      downloads: { epub: path.join(o.root, 'epub', 'guarded.epub') },
    }));
  });
  afterAll(() => t?.close());

  const newBuild = async () => {
    const now = new Date();
    const build = await t.db.prisma.build.create({
      data: { projectId: project.id, versionId, versionSlug: 'latest', state: 'building', startedAt: now },
    });
    return build.id;
  };
  const version = () => t.db.prisma.version.findUniqueOrThrow({ where: { id: versionId } });

  /** What a reader sees: the page and the epub download of the served build. */
  async function served(): Promise<{ page: string; epub: string }> {
    const page = await t.http.get('/docs/guarded/en/latest/index.html');
    const epub = await t.http.get('/docs/guarded/_/downloads/en/latest/epub/').buffer(true);
    expect(page.status).toBe(200);
    expect(epub.status).toBe(200);
    return { page: page.text.replace(/<script[\s\S]*?<\/script>/g, ''), epub: Buffer.isBuffer(epub.body) ? epub.body.toString() : epub.text };
  }

  async function expectNothingPublished(buildId: number): Promise<void> {
    expect((await version()).publishedBuildId).toBe(servedBuild);
    expect(await t.storage.list(`${buildPrefix('guarded', 'latest', buildId)}/`)).toEqual([]);
    expect(await served()).toEqual({ page: '<h1>docs</h1>', epub: 'EPUB-ONE' });
  }

  it('refuses an epub that is a symlink to the server environment: nothing published', async () => {
    const o = await output();
    await fs.mkdir(path.join(o.root, 'epub'));
    await fs.writeFile(path.join(o.html, 'index.html'), '<h1>hostile</h1>');
    await fs.symlink('/proc/self/environ', path.join(o.root, 'epub', 'guarded.epub'));
    const buildId = await newBuild();
    const e = await refusal(
      publishBuild(t.services, {
        projectSlug: 'guarded',
        version: { id: versionId, slug: 'latest' },
        buildId,
        htmlDir: o.html,
        outputDir: o.root,
        downloads: { epub: path.join(o.root, 'epub', 'guarded.epub') },
      }),
    );
    expect(e.message).toBe(`_readthedocs/epub/guarded.epub is a symbolic link: ${RULE}`);
    await expectNothingPublished(buildId);
  });

  it('refuses an epub directory that is a symlink out of the output', async () => {
    const o = await output();
    await fs.writeFile(path.join(o.outsideDir, 'guarded.epub'), 'SOMEONE ELSE');
    await fs.symlink(o.outsideDir, path.join(o.root, 'epub'));
    const buildId = await newBuild();
    const e = await refusal(
      publishBuild(t.services, {
        projectSlug: 'guarded',
        version: { id: versionId, slug: 'latest' },
        buildId,
        htmlDir: o.html,
        outputDir: o.root,
        downloads: { epub: path.join(o.root, 'epub', 'guarded.epub') },
      }),
    );
    expect(e.message).toBe(`_readthedocs/epub is a symbolic link: ${RULE}`);
    await expectNothingPublished(buildId);
  });

  it('refuses a link planted in the HTML while the downloads go up, and removes what went up', async () => {
    const o = await output();
    await fs.mkdir(path.join(o.root, 'epub'));
    await fs.writeFile(path.join(o.root, 'epub', 'guarded.epub'), 'EPUB-TWO');
    const buildId = await newBuild();
    // The real storage; the first object stored is the moment a racing build plants its link.
    let planted = false;
    const store = t.storage;
    const racing: Storage = {
      put: async (key, body, opts) => {
        await store.put(key, body, opts);
        if (!planted) {
          planted = true;
          await fs.rm(path.join(o.html, '_static/style.css'));
          await fs.symlink(o.secret, path.join(o.html, '_static/style.css'));
        }
      },
      putDirectory: (dir, prefix, opts) => store.putDirectory(dir, prefix, opts),
      get: (key, opts) => store.get(key, opts),
      head: (key) => store.head(key),
      list: (prefix) => store.list(prefix),
      deletePrefix: (prefix) => store.deletePrefix(prefix),
    };
    const e = await refusal(
      publishBuild(
        { ...t.services, storage: racing },
        {
          projectSlug: 'guarded',
          version: { id: versionId, slug: 'latest' },
          buildId,
          htmlDir: o.html,
          outputDir: o.root,
          downloads: { epub: path.join(o.root, 'epub', 'guarded.epub') },
        },
      ),
    );
    expect(planted).toBe(true);
    expect(e.message).toBe(`_readthedocs/html/_static/style.css is a symbolic link: ${RULE}`);
    await expectNothingPublished(buildId);
  });

  it('refuses an output over the limits of files or bytes, downloads included', async () => {
    const o = await output(); // 2 HTML files, 19 bytes
    await fs.mkdir(path.join(o.root, 'epub'));
    await fs.writeFile(path.join(o.root, 'epub', 'guarded.epub'), 'EPUB-TWO'); // 8 bytes
    const attempt = async (limits: { maxFiles: number; maxBytes: number }) => {
      const buildId = await newBuild();
      const e = await refusal(
        publishBuild(t.services, {
          projectSlug: 'guarded',
          version: { id: versionId, slug: 'latest' },
          buildId,
          htmlDir: o.html,
          outputDir: o.root,
          downloads: { epub: path.join(o.root, 'epub', 'guarded.epub') },
          limits,
        }),
      );
      await expectNothingPublished(buildId);
      return e.message;
    };
    expect(await attempt({ maxFiles: 2, maxBytes: 1000 })).toMatch(/more than 2 files.*LECTERN_BUILD_MAX_PUBLISH_FILES/);
    expect(await attempt({ maxFiles: 10, maxBytes: 26 })).toMatch(/larger than 26 bytes.*LECTERN_BUILD_MAX_PUBLISH_BYTES/);
  });

  it('publishes an ordinary build right after, within its limits', async () => {
    const o = await output();
    await fs.writeFile(path.join(o.html, 'index.html'), '<h1>docs two</h1>');
    await fs.mkdir(path.join(o.root, 'epub'));
    await fs.writeFile(path.join(o.root, 'epub', 'guarded.epub'), 'EPUB-TWO');
    const buildId = await newBuild();
    const result = await publishBuild(t.services, {
      projectSlug: 'guarded',
      version: { id: versionId, slug: 'latest' },
      buildId,
      htmlDir: o.html,
      outputDir: o.root,
      downloads: { epub: path.join(o.root, 'epub', 'guarded.epub') },
      limits: { maxFiles: 3, maxBytes: 6 + 17 + 8 },
    });
    expect(result).toMatchObject({ published: true, upload: { files: 2, bytes: 23, skipped: [] } });
    expect((await version()).publishedBuildId).toBe(buildId);
    expect(await served()).toEqual({ page: '<h1>docs two</h1>', epub: 'EPUB-TWO' });
    servedBuild = buildId;
  });
});
