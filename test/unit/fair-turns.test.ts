// FairTurns (src/db/database.ts): statements take turns between requests, and on PostgreSQL their
// results are handed back one per turn of the event loop, so the work each result resumes never
// piles up into one long turn that /healthz and docs pages would wait behind.
import { describe, expect, it } from 'vitest';
import { dbOwner, FairTurns } from '../../src/db/database.ts';

const immediate = () => new Promise<void>((r) => setImmediate(r));

describe('FairTurns', () => {
  it('hands results back one per turn of the event loop, with other work between any two', async () => {
    const turns = new FairTurns(8, undefined, { handBackOnePerTurn: true });
    const seen: string[] = [];
    let ticking = true;
    const tick = () => {
      seen.push('io');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    // Eight statements whose results are all ready at once (as eight connections answering together).
    await Promise.all(Array.from({ length: 8 }, (_, i) => turns.run(async () => i).then((v) => void seen.push(`r${v}`))));
    ticking = false;
    const results = seen.filter((s) => s !== 'io');
    expect(results).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    for (let i = 1; i < seen.length; i++) expect(`${seen[i - 1]} ${seen[i]}`).not.toMatch(/^r\d r\d$/);
  });

  it('hands back failures the same way', async () => {
    const turns = new FairTurns(2, undefined, { handBackOnePerTurn: true });
    await expect(turns.run(async () => Promise.reject(new Error('statement failed')))).rejects.toThrow('statement failed');
    await expect(turns.run(async () => 'after')).resolves.toBe('after');
  });

  it('serves owners round-robin: one owner with many statements does not hold back another', async () => {
    const turns = new FairTurns(1, (start) => setImmediate(start), { handBackOnePerTurn: true });
    const order: string[] = [];
    const busy = dbOwner.run({}, () => Array.from({ length: 6 }, (_, i) => turns.run(async () => order.push(`busy${i}`))));
    await immediate();
    const docs = dbOwner.run({}, () => turns.run(async () => order.push('docs')));
    await Promise.all([...busy, docs]);
    // docs waits for the statement running and the next of the busy owner's, not for all six.
    expect(order.indexOf('docs')).toBeLessThan(order.indexOf('busy4'));
  });

  it('without hand-back (the embedded database), results resolve as their statements end', async () => {
    const turns = new FairTurns(4);
    const values = await Promise.all([1, 2, 3].map((n) => turns.run(async () => n * 2)));
    expect(values).toEqual([2, 4, 6]);
  });
});
