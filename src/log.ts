// One structured logger (pino: JSON lines, cheap when a level is off). Secrets are redacted by
// key name as a second line of defence; code should never log them in the first place.
import { type Logger, pino } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['*.authorization', '*.headers.authorization', '*.token', '*.value', '*.secret', '*.password', '*.DATABASE_URL'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
