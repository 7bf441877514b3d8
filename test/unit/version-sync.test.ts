// Choosing `stable`, reading `git ls-remote` and the waits between a failing sync's runs, without a database.
import { describe, expect, it } from 'vitest';
import { parseLsRemote } from '../../src/domain/git.ts';
import { stableCandidate } from '../../src/domain/version-sync.ts';
import { describeJobError as describeSyncError, retryDelaySeconds } from '../../src/queue/jobs.ts';

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

describe('retryDelaySeconds', () => {
  const policy = { baseSeconds: 10, capSeconds: 600, maxAttempts: 8 };
  it('doubles from the base after each failed run and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelaySeconds(n, policy, () => 0.999999))).toEqual(
      [10, 20, 40, 80, 160, 320, 600, 600].map((s) => expect.closeTo(s, 2)),
    );
  });
  it('jitters down to half, never below, and never past the cap however many runs failed', () => {
    expect([1, 2, 7, 30, 1000].map((n) => retryDelaySeconds(n, policy, () => 0))).toEqual([5, 10, 300, 300, 300]);
    for (let i = 0; i < 1000; i++) {
      const n = 1 + (i % 12);
      const d = retryDelaySeconds(n, policy);
      const full = Math.min(600, 10 * 2 ** (n - 1));
      expect(d).toBeGreaterThanOrEqual(full / 2);
      expect(d).toBeLessThan(full);
    }
  });
  it('waits at least as long after a later failure as after an earlier one, up to the cap', () => {
    // The range after run n is [full(n)/2, full(n)); after run n+1 it starts where that one ends.
    for (let n = 1; n < 6; n++) expect(retryDelaySeconds(n + 1, policy, () => 0)).toBeGreaterThanOrEqual(retryDelaySeconds(n, policy, () => 0.999999) - 1e-9);
  });
});

describe('describeSyncError', () => {
  it('masks credentials in URLs and bounds the message', () => {
    expect(
      describeSyncError(
        new Error("git ls-remote https://bot:ghp_secret@github.com/me/docs.git failed: fatal: unable to access 'https://bot:ghp_secret@github.com/'"),
      ),
    ).toBe("git ls-remote https://***@github.com/me/docs.git failed: fatal: unable to access 'https://***@github.com/'");
    expect(describeSyncError(new Error('x'.repeat(5000)))).toHaveLength(2000);
  });
});
