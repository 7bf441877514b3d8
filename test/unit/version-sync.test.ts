// Choosing `stable` and reading `git ls-remote`, without a database.
import { describe, expect, it } from 'vitest';
import { parseLsRemote } from '../../src/domain/git.ts';
import { stableCandidate } from '../../src/domain/version-sync.ts';

const v = (verboseName: string, type = 'tag') => ({ verboseName, type });

describe('stableCandidate', () => {
  it('picks the highest final release by PEP 440, not by text', () => {
    expect(stableCandidate([v('1.9'), v('1.10'), v('1.2')])?.verboseName).toBe('1.10');
  });
  it('ignores pre-releases, dev releases and names that are not versions', () => {
    expect(stableCandidate([v('2.0rc1'), v('2.0.dev3'), v('1.4'), v('nightly')])?.verboseName).toBe('1.4');
  });
  it('accepts a leading v and prefers tags over branches', () => {
    expect(stableCandidate([v('v3.0', 'branch'), v('v1.1'), v('v1.0')])?.verboseName).toBe('v1.1');
  });
  it('falls back to the highest branch when no tag is a release', () => {
    expect(stableCandidate([v('2.x', 'branch'), v('2.1', 'branch'), v('main', 'branch')])?.verboseName).toBe('2.x');
  });
  it('has no candidate when nothing parses', () => {
    expect(stableCandidate([v('main', 'branch'), v('feature/x', 'branch')])).toBeNull();
  });
});

describe('parseLsRemote', () => {
  it('reads branches, tags (peeled commits win) and the default branch', () => {
    const out = [
      'ref: refs/heads/main\tHEAD',
      'aaa\tHEAD',
      'aaa\trefs/heads/main',
      'bbb\trefs/heads/feature/x',
      'ccc\trefs/tags/v1.0',
      'ddd\trefs/tags/v2.0',
      'eee\trefs/tags/v2.0^{}',
    ].join('\n');
    expect(parseLsRemote(out)).toEqual({
      head: 'main',
      branches: [
        { name: 'main', commit: 'aaa' },
        { name: 'feature/x', commit: 'bbb' },
      ],
      tags: [
        { name: 'v1.0', commit: 'ccc' },
        { name: 'v2.0', commit: 'eee' },
      ],
    });
  });
});
