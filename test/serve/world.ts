// The docs-server scenario the test files share: a Sphinx project with several versions (hidden,
// inactive, private), its Spanish translation, an MkDocs subproject and a private project, all
// published from real builder output. `alice` maintains every project; `bob` maintains none.

import { type IncomingHttpHeaders, request } from 'node:http';
import type { Env } from '../../src/config.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, mkdocsBuild, publish, sphinxBuild } from '../helpers/publish.ts';

export interface World {
  t: TestApp;
  alice: string;
  bob: string;
  ids: Record<'fixture' | 'es' | 'child' | 'secret', number>;
}

export async function makeWorld(env: Partial<Record<keyof Env, string>> = {}): Promise<World> {
  const [v1, v2, es, child] = await Promise.all([
    sphinxBuild('sphinx', { overrides: { release: '1.0' } }),
    sphinxBuild('sphinx', { overrides: { release: '2.0' } }),
    sphinxBuild('sphinx-es'),
    mkdocsBuild('mkdocs'),
  ]);
  const t = await testApp(env);
  const alice = await t.user('alice');
  const bob = await t.user('bob');
  const aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
  const maintainers = [aliceId];

  const fixture = await makeProject(t, { slug: 'fixture', maintainers });
  await publish(t, { project: fixture, version: 'latest', html: v1 });
  await publish(t, { project: fixture, version: 'v2.0', html: v2 });
  await publish(t, { project: fixture, version: 'old', html: v1, versionData: { hidden: true } });
  await publish(t, { project: fixture, version: 'v0.9', html: v1, versionData: { active: false } });
  await publish(t, { project: fixture, version: 'internal', html: v2, versionData: { privacyLevel: 'private' } });

  const esProject = await makeProject(t, { slug: 'fixture-es', language: 'es', maintainers, mainLanguageProjectId: fixture.id });
  await publish(t, { project: esProject, version: 'latest', html: es });

  const childProject = await makeProject(t, { slug: 'child', maintainers });
  await publish(t, { project: childProject, version: 'latest', html: child, documentationType: 'mkdocs' });
  await t.db.prisma.subproject.create({ data: { parentId: fixture.id, childId: childProject.id, alias: 'kid' } });

  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers });
  await publish(t, { project: secret, version: 'latest', html: v1 });

  return { t, alice, bob, ids: { fixture: fixture.id, es: esProject.id, child: childProject.id, secret: secret.id } };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request on its own connection, the body kept as sent (no decompression, unlike supertest). */
export function rawRequest(url: string, headers: Record<string, string | string[]> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
