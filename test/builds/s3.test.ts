// A build publishing to S3 storage (LECTERN_STORAGE=s3://…), against a real S3 server (Ceph's
// radosgw started by test/setup/s3.ts): what several machines share in production.
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { artifactPrefix } from '../../src/storage/artifacts.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';
import { type S3Server, startS3 } from '../setup/s3.ts';

let s3: S3Server;
let t: TestApp;
let server: GitServer;
let worker: Worker;
let token: string;

beforeAll(async () => {
  s3 = await startS3();
  // openStorage reads the S3 settings from the environment, as `lectern serve` does.
  Object.assign(process.env, s3.env);
  t = await testApp({ LECTERN_STORAGE: `s3://${s3.bucket}/builds-test` });
  server = await startGitServer();
  token = await t.user('s3user');
  worker = await startTestWorker(t);
}, 120_000);
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
  await s3?.stop();
});

describe('a build on S3 storage', () => {
  it('publishes its HTML as objects in the bucket, under the configured prefix', async () => {
    const repo = server.repo('on-s3', sphinxFiles());
    const p = await importProject(t, token, 'On S3', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    const prefix = `${artifactPrefix(p.slug, 'latest', build.id, 'html')}/`;
    expect(await t.storage.list(prefix)).toContain(`${prefix}index.html`);

    // Seen by any S3 client, not only through Lectern.
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `builds-test/${prefix}` }));
    const keys = (listed.Contents ?? []).map((o) => o.Key);
    expect(keys).toContain(`builds-test/${prefix}index.html`);
    expect(keys).toContain(`builds-test/${prefix}guide.html`);
    client.destroy();
  });
});
