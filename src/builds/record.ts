// Records each build command as it runs: a BuildCommand row created before it starts, its output
// written as it comes (at most once a second), its exit code and times at the end. Secret values
// (the project's environment variables) are masked in what is stored.
import type { PrismaClient } from '../db/database.ts';
import { runCommand, type RunResult } from './subprocess.ts';

export const MASK = '*****';

export class Recorder {
  readonly #secrets: string[];
  readonly #replacements: [string, string][];
  constructor(
    private readonly db: PrismaClient,
    private readonly buildId: number,
    secrets: string[],
    /** Long paths shown shorter: `[/x/venv/bin/, '']`. */
    replacements: [string, string][] = [],
  ) {
    // Longest first, so a value containing another is masked whole. Very short values would
    // mask ordinary text; they are masked only as whole words.
    this.#secrets = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
    this.#replacements = replacements;
  }

  mask(text: string): string {
    let out = text;
    for (const s of this.#secrets) {
      if (s.length >= 4) out = out.split(s).join(MASK);
      else out = out.replace(new RegExp(`(?<![\\w])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`, 'g'), MASK);
    }
    return out;
  }

  display(argv: string[]): string {
    let text = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(' ');
    for (const [from, to] of this.#replacements) text = text.split(from).join(to);
    return this.mask(text);
  }

  async run(
    description: string,
    argv: string[],
    opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal; wrap?: (argv: string[]) => string[] },
  ): Promise<RunResult & { commandId: number }> {
    const row = await this.db.buildCommand.create({
      data: { buildId: this.buildId, description, command: this.display(argv), startTime: new Date() },
    });
    let pending = '';
    let flushed = '';
    let lastFlush = Date.now();
    let flushing: Promise<unknown> = Promise.resolve();
    const flush = () => {
      flushed += pending;
      pending = '';
      const output = this.mask(flushed);
      flushing = flushing.then(() => this.db.buildCommand.update({ where: { id: row.id }, data: { output } }).catch(() => {}));
    };
    const result = await runCommand(opts.wrap ? opts.wrap(argv) : argv, {
      cwd: opts.cwd,
      env: opts.env,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onOutput: (chunk) => {
        pending += chunk;
        if (Date.now() - lastFlush > 1000 && flushed.length < 1_000_000) {
          lastFlush = Date.now();
          flush();
        }
      },
    });
    await flushing;
    const output = this.mask(result.output);
    await this.db.buildCommand.update({ where: { id: row.id }, data: { output, exitCode: result.exitCode, endTime: new Date() } });
    return { ...result, output, commandId: row.id };
  }
}
