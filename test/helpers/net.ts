// A TCP port nobody listens on right now, for the servers tests start themselves (PostgreSQL,
// radosgw, git daemon, lectern serve, nginx): the kernel picks it, so parallel test files never clash.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}
