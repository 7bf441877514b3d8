// The whole app in-process, through the real HTTP stack (supertest), on a fresh database of the
// project's kind, with a recorder of every SQL statement sent.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import supertest from 'supertest';
import { buildApp, type Handler } from '../../src/app.ts';
import { type Config, type Env, loadConfig } from '../../src/config.ts';
import type { Services } from '../../src/domain/context.ts';
import { createUser } from '../../src/domain/users.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import type { Storage } from '../../src/storage/index.ts';
import { type TestDatabase, testDatabase } from './db.ts';
import { TEST_NETWORK } from './git.ts';

export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef0123456789';

export interface GqlResult<T = Record<string, any>> {
  status: number;
  data: T;
  errors?: { message: string; extensions?: { code?: string; http?: { status?: number } }; path?: string[] }[];
}

export interface TestApp extends TestDatabase {
  http: supertest.Agent;
  /** The express app itself, without the docs fast path in front of it. */
  app: Express;
  /** What `lectern serve` listens with (the fast path, then the app): for a real listening server, as a browser or a load tool needs. */
  handler: Handler;
  config: Config;
  /** The storage the app serves from (file: under the data dir unless LECTERN_STORAGE is given). */
  storage: Storage;
  /** What the app's requests are served with (database, cipher, settings, logger, storage): for domain calls in tests. */
  services: Services;
  /** SQL statements sent since the last `queries.length = 0`. */
  queries: string[];
  /**
   * How many statements sent so far might have changed data: every one but plain reads and
   * transaction control (counted whatever a test does to `queries`). Equal counts before and after
   * a test mean the test left the database as it found it.
   */
  writes(): number;
  /** Creates a user and returns its API token. */
  user(username: string): Promise<string>;
  gql<T = Record<string, any>>(query: string, variables?: Record<string, unknown>, token?: string): Promise<GqlResult<T>>;
  close(): Promise<void>;
}

/** A base for build user ids that no other test app on this machine is likely to use. */
export function testUidBase(): number {
  return 1_600_000_000 + Math.floor(Math.random() * 20_000) * 100_000;
}

/** A statement that cannot change data: a SELECT without sequence calls, or transaction control. */
const READ_ONLY = /^\s*(SELECT|BEGIN|COMMIT|ROLLBACK|START TRANSACTION|SAVEPOINT|RELEASE|SHOW)\b/i;
const CHANGES_SEQUENCES = /\b(nextval|setval)\s*\(/i;
/**
 * When a token was last used, written by its first request of a minute (domain/context.ts): left
 * out of `queries` and `writes`, which count what a request costs and changes in the steady state.
 */
const TOKEN_USE = /^UPDATE "public"\."ApiToken" SET "lastUsedAt" = /;
/** Analytics written in batches off the request path (src/analytics/recorder.ts): not what a request costs. */
const ANALYTICS = /^\s*(INSERT INTO "(PageViewDaily|SearchQueryDaily)"|DELETE FROM "(PageViewDaily|SearchQueryDaily)")/;

/** `log`: the app's logger (silent by default), for a test that reads what the app logs. */
export async function testApp(env: Partial<Record<keyof Env, string>> = {}, opts: { log?: Logger } = {}): Promise<TestApp> {
  const queries: string[] = [];
  let writes = 0;
  const database = await testDatabase({
    onQuery: (sql) => {
      if (TOKEN_USE.test(sql) || ANALYTICS.test(sql)) return;
      queries.push(sql);
      if (!READ_ONLY.test(sql) || CHANGES_SEQUENCES.test(sql)) writes++;
    },
  });
  const config = loadConfig({
    LECTERN_DATA_DIR: database.dataDir,
    LECTERN_PUBLIC_URL: 'http://lectern.test',
    LECTERN_LOG_LEVEL: 'silent',
    LECTERN_API_THROTTLE: '0',
    // Builds may reach the test host that serves git (test/helpers/git.ts), as an operator allows an internal git server.
    LECTERN_BUILD_NETWORK_ALLOW: TEST_NETWORK,
    // Build user ids of this app's own: another test process's build N (a fork bomb, say) must not
    // share a user, and with it RLIMIT_NPROC, with this one's build N.
    LECTERN_BUILD_UID_BASE: String(testUidBase()),
    ...env,
  });
  const { app, handler, storage, services } = buildApp({ config, db: database.db, log: opts.log ?? createLogger('silent'), secretKey: TEST_SECRET_KEY });
  // Through the same entry as production: the docs fast path, then express.
  const http = supertest.agent(handler);
  return {
    ...database,
    http,
    app,
    handler,
    config,
    storage,
    services,
    queries,
    writes: () => writes,
    user: async (username) => (await createUser(database.db.prisma, username)).token,
    gql: async (query, variables, token) => {
      const req = http.post('/graphql').set('content-type', 'application/json').set('accept', 'application/json');
      if (token) req.set('authorization', `Token ${token}`);
      const res = await req.send({ query, variables });
      return { status: res.status, data: res.body.data, errors: res.body.errors };
    },
    close: async () => {
      await services.analytics?.close();
      await database.drop();
    },
  };
}

/**
 * A test app listening on 127.0.0.1 with that address as its public URL, for a real browser (the
 * session cookie speaks only for requests from the public URL's origin). `stop` closes both.
 * `hostname: 'localhost'` names it as `npm start` does (`http://localhost:<port>`), where each
 * project's docs get a host of their own, `<project>.localhost:<port>` (browsers resolve every
 * `*.localhost` name to this machine).
 */
export async function servedTestApp(
  env: Partial<Record<keyof Env, string>> = {},
  { hostname = '127.0.0.1' }: { hostname?: '127.0.0.1' | 'localhost' } = {},
): Promise<{ t: TestApp; origin: string; stop: () => Promise<void> }> {
  let app: TestApp | undefined;
  const server = createServer((req, res) => (app ? app.handler(req, res) : res.writeHead(503).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://${hostname}:${(server.address() as AddressInfo).port}`;
  app = await testApp({ LECTERN_PUBLIC_URL: origin, ...env });
  const t = app;
  return {
    t,
    origin,
    stop: async () => {
      await new Promise((r) => server.close(r));
      await t.close();
    },
  };
}
