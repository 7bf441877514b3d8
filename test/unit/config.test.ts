// loadConfig(): every setting of docs/design/settings.md, validated at once; an invalid configuration
// names every bad variable and never echoes a value (it may be a secret).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(Object.keys(env))}`);
}

describe('loadConfig', () => {
  it('has the defaults of docs/design/settings.md when nothing is set', () => {
    const c = loadConfig({});
    expect(c.dataDir).toBe(path.resolve('./.lectern'));
    expect(path.isAbsolute(c.dataDir)).toBe(true);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.storage).toBe(`file:${path.join(c.dataDir, 'storage')}`);
    expect(c.host).toBe('0.0.0.0');
    expect(c.port).toBe(8000);
    expect(c.publicUrl).toBe('http://localhost:8000');
    // Each project's docs on an origin of its own, <project>.localhost:8000, out of the box.
    expect(c.docsDomain).toBe('localhost:8000');
    expect(c.secretKey).toBeUndefined();
    expect(c.buildConcurrency).toBe(1);
    expect(c.logLevel).toBe('info');
  });

  it('reads the SMTP settings, and asks for what email needs without echoing the password', () => {
    expect(loadConfig({}).email).toBeNull();
    const ca = path.resolve(import.meta.dirname, '../fixtures/addons/data-validation.ts');
    const c = loadConfig({
      LECTERN_SMTP_HOST: 'smtp.example.com',
      LECTERN_SMTP_USER: 'lectern',
      LECTERN_SMTP_PASSWORD: 'hunter2 smtp',
      LECTERN_SMTP_FROM: 'Docs <docs@example.com>',
      LECTERN_SMTP_CA_FILE: ca,
    });
    expect(c.email).toMatchObject({
      host: 'smtp.example.com',
      port: 587,
      security: 'starttls',
      user: 'lectern',
      password: 'hunter2 smtp',
      from: 'Docs <docs@example.com>',
    });
    expect(c.email?.ca).toContain('schemas');
    const cases: [Record<string, string>, string][] = [
      [{ LECTERN_SMTP_HOST: 'smtp.example.com' }, 'LECTERN_SMTP_HOST: needs LECTERN_SMTP_FROM'],
      [{ LECTERN_SMTP_HOST: 'smtp.example.com', LECTERN_SMTP_FROM: 'docs@example.com', LECTERN_SMTP_PASSWORD: 'hunter2 smtp' }, 'go together'],
      [
        { LECTERN_SMTP_HOST: 'smtp.example.com', LECTERN_SMTP_FROM: 'docs@example.com', LECTERN_SMTP_CA_FILE: '/nonexistent/ca.pem' },
        'LECTERN_SMTP_CA_FILE cannot be read',
      ],
      [{ LECTERN_SMTP_HOST: 'smtp.example.com', LECTERN_SMTP_FROM: 'docs', LECTERN_SMTP_SECURITY: 'maybe' }, 'LECTERN_SMTP_SECURITY'],
      [{ LECTERN_SMTP_HOST: 'smtp.example.com', LECTERN_SMTP_FROM: 'Docs <docs@example.com>\r\nBcc: x@y.z' }, 'LECTERN_SMTP_FROM: must be an email address'],
    ];
    for (const [env, message] of cases) {
      const e = configError(env);
      expect(e.message, JSON.stringify(env)).toContain(message);
      expect(e.message).not.toContain('hunter2');
    }
  });

  it('reads every setting', () => {
    const c = loadConfig({
      LECTERN_DATA_DIR: '/srv/lectern',
      DATABASE_URL: 'postgresql://u:p@db:5432/lectern',
      LECTERN_STORAGE: 's3://bucket/prefix',
      HOST: '127.0.0.1',
      PORT: '9000',
      LECTERN_PUBLIC_URL: 'https://docs.example.com/',
      LECTERN_DOCS_DOMAIN: 'docs.example.com',
      LECTERN_SECRET_KEY: 'k'.repeat(32),
      LECTERN_BUILD_CONCURRENCY: '0',
      LECTERN_LOG_LEVEL: 'warn',
    });
    expect(c).toMatchObject({
      dataDir: '/srv/lectern',
      databaseUrl: 'postgresql://u:p@db:5432/lectern',
      storage: 's3://bucket/prefix',
      host: '127.0.0.1',
      port: 9000,
      publicUrl: 'https://docs.example.com', // no trailing slash: links are built on it
      docsDomain: 'docs.example.com',
      secretKey: 'k'.repeat(32),
      buildConcurrency: 0, // 0 = this process runs no builds
      logLevel: 'warn',
    });
  });

  it('derives the public URL from PORT when it is not set', () => {
    expect(loadConfig({ PORT: '8123' }).publicUrl).toBe('http://localhost:8123');
  });

  it('serves docs on <project>.localhost:<port> when the public URL is on localhost, unless told otherwise', () => {
    expect(loadConfig({ PORT: '8123' }).docsDomain).toBe('localhost:8123');
    expect(loadConfig({ LECTERN_PUBLIC_URL: 'http://localhost/' }).docsDomain).toBe('localhost');
    expect(loadConfig({ LECTERN_PUBLIC_URL: 'https://LOCALHOST:8443' }).docsDomain).toBe('localhost:8443');
    // `off`: docs sandboxed under /docs/ of Lectern's origin, as on any other public URL without a docs domain.
    expect(loadConfig({ LECTERN_DOCS_DOMAIN: 'off' }).docsDomain).toBeUndefined();
    expect(loadConfig({ LECTERN_DOCS_DOMAIN: 'OFF', PORT: '9000' }).docsDomain).toBeUndefined();
    expect(loadConfig({ LECTERN_PUBLIC_URL: 'http://127.0.0.1:8000' }).docsDomain).toBeUndefined();
    expect(loadConfig({ LECTERN_PUBLIC_URL: 'https://lectern.example.com' }).docsDomain).toBeUndefined();
    expect(loadConfig({ LECTERN_PUBLIC_URL: 'http://localhost.example.com' }).docsDomain).toBeUndefined();
    expect(loadConfig({ LECTERN_DOCS_DOMAIN: 'docs.example:8000' }).docsDomain).toBe('docs.example:8000');
    for (const bad of ['https://docs.example.com', 'docs.example.com/path', 'docs example', 'docs.example:port']) {
      expect(configError({ LECTERN_DOCS_DOMAIN: bad }).message).toMatch(/^\s*LECTERN_DOCS_DOMAIN: must be a domain/m);
    }
  });

  it('treats an empty variable as unset', () => {
    const c = loadConfig({ PORT: '', DATABASE_URL: '', LECTERN_SECRET_KEY: '', LECTERN_DATA_DIR: '' });
    expect(c.port).toBe(8000);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.secretKey).toBeUndefined();
    expect(c.dataDir).toBe(path.resolve('./.lectern'));
  });

  it('ignores variables it does not know', () => {
    expect(() => loadConfig({ PATH: '/bin', LECTERN_UNKNOWN: 'x', NODE_ENV: 'production' })).not.toThrow();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['DATABASE_URL', 'mysql://root@db/lectern'],
    ['LECTERN_PUBLIC_URL', 'ftp://docs.example.com'],
    ['LECTERN_PUBLIC_URL', 'not a url'],
    ['LECTERN_SECRET_KEY', 'too-short'],
    ['LECTERN_BUILD_CONCURRENCY', '-1'],
    ['LECTERN_BUILD_CONCURRENCY', 'many'],
    ['LECTERN_LOG_LEVEL', 'loud'],
  ])('rejects %s=%j', (key, value) => {
    const e = configError({ [key]: value });
    expect(e.message).toMatch(new RegExp(`^\\s*${key}: `, 'm'));
  });

  it('lists every invalid variable at once, one per line, and no other', () => {
    const e = configError({
      PORT: 'abc',
      DATABASE_URL: 'mysql://root:pw@db/x',
      LECTERN_PUBLIC_URL: 'gopher://x',
      LECTERN_SECRET_KEY: 'short',
      LECTERN_BUILD_CONCURRENCY: '1000',
      LECTERN_LOG_LEVEL: 'chatty',
      HOST: '127.0.0.1', // valid
    });
    const named = e.message
      .split('\n')
      .map((l) => /^\s+([A-Z_]+):/.exec(l)?.[1])
      .filter(Boolean)
      .sort();
    expect(named).toEqual(['DATABASE_URL', 'LECTERN_BUILD_CONCURRENCY', 'LECTERN_LOG_LEVEL', 'LECTERN_PUBLIC_URL', 'LECTERN_SECRET_KEY', 'PORT'].sort());
    expect(e.message).toMatch(/^invalid configuration/);
  });

  it('never prints a value, invalid or valid', () => {
    const values = {
      PORT: 'port-S3CRET-1',
      DATABASE_URL: 'mysql://admin:S3CRET-pw-2@db.internal/x',
      LECTERN_SECRET_KEY: 'S3CRET-3',
      LECTERN_PUBLIC_URL: 'S3CRET-4://x',
      LECTERN_LOG_LEVEL: 'S3CRET-5',
      LECTERN_BUILD_CONCURRENCY: 'S3CRET-6',
      LECTERN_STORAGE: 's3://S3CRET-7/bucket', // valid, beside invalid ones
      LECTERN_DOCS_DOMAIN: 'S3CRET-8.example.com/x',
    };
    const e = configError(values);
    expect(e.message).not.toContain('S3CRET');
    expect(String(e.stack)).not.toContain('S3CRET');
    expect(e.message).not.toContain('admin');
  });

  it('reads LECTERN_SERVE_X_ACCEL: a path with slashes at both ends, for file: storage only', () => {
    expect(loadConfig({}).serveXAccel).toBeUndefined();
    expect(loadConfig({ LECTERN_SERVE_X_ACCEL: '/_lectern_files/' }).serveXAccel).toBe('/_lectern_files/');
    expect(loadConfig({ LECTERN_SERVE_X_ACCEL: '/internal/', LECTERN_STORAGE: 'file:/srv/docs' }).serveXAccel).toBe('/internal/');
    for (const bad of ['internal/', '/internal', '/a/../b/', '/a b/', 'http://x/']) {
      expect(configError({ LECTERN_SERVE_X_ACCEL: bad }).message).toMatch(/^\s*LECTERN_SERVE_X_ACCEL: /m);
    }
    const e = configError({ LECTERN_SERVE_X_ACCEL: '/internal/', LECTERN_STORAGE: 's3://bucket/prefix' });
    expect(e.message).toMatch(/^\s*LECTERN_SERVE_X_ACCEL: needs LECTERN_STORAGE=file:/m);
  });

  it('reads LECTERN_SERVE_CACHE_SECONDS: whole seconds, 2 by default, 0 turns the cache off', () => {
    expect(loadConfig({}).serveCacheSeconds).toBe(2);
    expect(loadConfig({ LECTERN_SERVE_CACHE_SECONDS: '0' }).serveCacheSeconds).toBe(0);
    expect(loadConfig({ LECTERN_SERVE_CACHE_SECONDS: '30' }).serveCacheSeconds).toBe(30);
    for (const bad of ['-1', '1.5', 'soon', '301']) {
      expect(configError({ LECTERN_SERVE_CACHE_SECONDS: bad }).message).toMatch(/^\s*LECTERN_SERVE_CACHE_SECONDS: /m);
    }
  });

  it('does not echo a valid secret when another setting is invalid', () => {
    const secret = 'a-perfectly-valid-secret-key-0123456789';
    const e = configError({ LECTERN_SECRET_KEY: secret, DATABASE_URL: `postgres://u:${secret}@h/db`, PORT: 'x' });
    expect(e.message).toContain('PORT');
    expect(e.message).not.toContain(secret);
  });
});
