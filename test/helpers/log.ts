// A logger for tests that keeps what it writes, to count what a worker or a server logged.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.ts';

/** A logger at `info` whose JSON lines are kept, parsed, in `lines`. */
export function recordingLog(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('info', sink), lines };
}
