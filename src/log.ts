// One structured logger (pino: JSON lines, cheap when a level is off). Secrets are redacted by
// key name as a second line of defence; code should never log them in the first place.
import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * A logger writing to `destination`, or else to standard output as each line is logged, as Node's
 * own console writes to a file or a pipe. pino's default hands each write to libuv's thread pool:
 * at `lectern serve`'s start, both cores busy (V8 optimizing PostgreSQL's WebAssembly, the build
 * worker starting), the line saying it listens reached the terminal 0.2-0.3 s after the listen
 * (docs/design/startup.md). Lectern logs a few lines per event, none per request. A reader that
 * goes away stops the logging, not the process.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['*.authorization', '*.headers.authorization', '*.token', '*.value', '*.secret', '*.password', '*.DATABASE_URL'],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
