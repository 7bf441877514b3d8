// Which build image a `build.os` gets, and what `build.tools` runs on it (docs/design/images.md).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseImage, type InstalledImage } from '../../src/builds/images.ts';
import { chooseTools, hostPythonVersion, listToolPythons, upstreamVersion } from '../../src/builds/tools.ts';

const image = (name: 'debian-12' | 'debian-13', python: string, tools: Partial<InstalledImage['tools']> = {}): InstalledImage => ({
  name,
  suite: name === 'debian-12' ? 'bookworm' : 'trixie',
  rootfs: `/images/${name}/v/rootfs`,
  created: '2026-11-27T00:00:00.000Z',
  sources: [],
  packages: [],
  tools: { python, nodejs: null, ruby: null, rust: null, golang: null, ...tools },
});
const d12 = image('debian-12', '3.11.2', { nodejs: '18.19.0+dfsg-6~deb12u2', rust: '1.63.0+dfsg1-2', golang: '2:1.19~1', ruby: '1:3.1' });
const d13 = image('debian-13', '3.13.5', { nodejs: '20.19.2+dfsg-1', rust: '1.85.0+dfsg3-1', golang: '2:1.24~2', ruby: '1:3.3' });
const both = [d13, d12];
const tool = (version: string) => ({ version, full_version: version });

describe('chooseImage', () => {
  it("maps Read the Docs' names to the nearest Debian, and says so", () => {
    expect(chooseImage('ubuntu-22.04', both)).toMatchObject({ image: d12, note: expect.stringContaining('the image closest to ubuntu-22.04') });
    expect(chooseImage('ubuntu-20.04', both).image).toBe(d12);
    expect(chooseImage('ubuntu-24.04', both).image).toBe(d13);
    expect(chooseImage('ubuntu-lts-latest', both).image).toBe(d13);
    expect(chooseImage('debian-12', both)).toMatchObject({
      image: d12,
      note: 'build.os debian-12: the build runs on debian-12 (Debian bookworm, made 2026-11-27, Python 3.11.2).',
    });
  });

  it('takes the newest image without build.os, and the closest installed when the one it maps to is not', () => {
    expect(chooseImage(null, both).image).toBe(d13);
    expect(chooseImage('ubuntu-22.04', [d13])).toMatchObject({ image: d13, note: expect.stringContaining('debian-12 is not installed here') });
  });

  it('refuses an unknown name, listing the known ones', () => {
    const r = chooseImage('windows-2022', both);
    expect(r.image).toBeNull();
    expect('problem' in r && r.problem).toContain('build.os: "windows-2022" is not an operating system Lectern builds on; it takes "ubuntu-20.04"');
  });

  it('runs on the host, saying how to make an image, when none is installed', () => {
    const r = chooseImage('ubuntu-24.04', []);
    expect(r.image).toBeNull();
    expect('note' in r && r.note).toContain('No build image is installed on this machine (lectern images build debian-12|debian-13)');
  });
});

describe('chooseTools', () => {
  it("takes the image's Python for its version, 3 or latest, with its full version", () => {
    for (const asked of ['3.13', '3', 'latest'])
      expect(chooseTools({ python: tool(asked) }, d13, both)).toEqual({ chosen: [{ tool: 'python', asked, version: '3.13.5', packages: [] }] });
  });

  it('refuses another Python, naming the one there is and the build.os that has the one asked', () => {
    expect(chooseTools({ python: tool('3.11') }, d13, both)).toEqual({
      problem:
        'build.tools.python: Python 3.11 is not available on debian-13, which has Python 3.13 ("3.13" or "3"). debian-12 has it: set build.os to "ubuntu-22.04". Other versions come from a directory of relocatable Pythons (LECTERN_BUILD_TOOLS_DIR).',
    });
    expect(chooseTools({ python: tool('3.12') }, d13, both)).toMatchObject({ problem: expect.stringContaining('Python 3.12 is not available on debian-13') });
  });

  it('takes a Python of the tool directory for a version no image has, the newest of its minor version', () => {
    const toolPythons = [
      { version: '3.12.10', path: '/tools/python/3.12.10' },
      { version: '3.12.9', path: '/tools/python/3.12.9' },
    ];
    expect(chooseTools({ python: tool('3.12') }, d13, both, toolPythons)).toEqual({
      chosen: [{ tool: 'python', asked: '3.12', version: '3.12.10', packages: [], path: '/tools/python/3.12.10' }],
    });
    // The image's own first, when it has it.
    expect(chooseTools({ python: tool('3.13') }, d13, both, toolPythons)).toMatchObject({ chosen: [{ version: '3.13.5' }] });
    expect(chooseTools({ python: tool('3.10') }, d13, both, toolPythons)).toMatchObject({
      problem: expect.stringContaining('The tool directory has Python 3.12.10, 3.12.9.'),
    });
  });

  it("checks this machine's Python when no image is installed", () => {
    const host = hostPythonVersion();
    const minor = host.split('.').slice(0, 2).join('.');
    expect(chooseTools({ python: tool(minor) }, null, [])).toEqual({ chosen: [{ tool: 'python', asked: minor, version: host, packages: [] }] });
    expect(chooseTools({ python: tool('2.7') }, null, [])).toMatchObject({
      problem: expect.stringContaining('not available on this machine (no build image is installed)'),
    });
  });

  it("installs nodejs, ruby, rust and golang from the image's packages when the version matches", () => {
    expect(chooseTools({ nodejs: tool('20'), rust: tool('1.85'), golang: tool('latest'), ruby: tool('3.3') }, d13, both)).toEqual({
      chosen: [
        { tool: 'nodejs', asked: '20', version: '20.19.2', packages: ['nodejs'] },
        { tool: 'rust', asked: '1.85', version: '1.85.0', packages: ['rustc', 'cargo'] },
        { tool: 'golang', asked: 'latest', version: '1.24', packages: ['golang-go'] },
        { tool: 'ruby', asked: '3.3', version: '3.3', packages: ['ruby'] },
      ],
    });
    expect(chooseTools({ nodejs: tool('22') }, d13, both)).toEqual({
      problem: 'build.tools.nodejs: nodejs 22 is not available on debian-13, which has nodejs 20.19.2 ("20").',
    });
    expect(chooseTools({ nodejs: tool('20') }, null, [])).toMatchObject({ problem: expect.stringContaining('none is installed on this machine') });
  });
});

describe('listToolPythons', () => {
  it('lists python/<version>/ entries that hold bin/python3, newest first, and nothing without a directory', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-tools-'));
    try {
      for (const v of ['3.9.18', '3.12.2', '3.12.10', 'not-a-version']) {
        mkdirSync(path.join(dir, 'python', v, 'bin'), { recursive: true });
        writeFileSync(path.join(dir, 'python', v, 'bin', 'python3'), '');
      }
      mkdirSync(path.join(dir, 'python', '3.11.1')); // no bin/python3
      expect(listToolPythons(dir).map((p) => p.version)).toEqual(['3.12.10', '3.12.2', '3.9.18']);
      expect(listToolPythons(null)).toEqual([]);
      expect(listToolPythons(path.join(dir, 'missing'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('upstreamVersion', () => {
  it("drops Debian's epoch and revision", () => {
    expect(upstreamVersion('2:1.19~1')).toBe('1.19');
    expect(upstreamVersion('18.19.0+dfsg-6~deb12u2')).toBe('18.19.0');
    expect(upstreamVersion('1:3.1')).toBe('3.1');
  });
});
