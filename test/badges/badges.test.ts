// Build status badges (docs/design/badges.md): GET /projects/<project>/badge/ answers Read the Docs'
// images, passing or failing by the newest finished build of a version, unknown for anything the
// caller may not see, the same image whether a private project exists or not; a private version's
// needs the project's badge token, which GraphQL shows its maintainers only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PrivacyLevel } from '../../src/generated/prisma/client.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject } from '../helpers/publish.ts';

let t: TestApp;
let aliceToken: string;
let bobToken: string;
let aliceId: number;

beforeAll(async () => {
  t = await testApp();
  aliceToken = await t.user('alice');
  bobToken = await t.user('bob');
  aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
  const open = await makeProject(t, { slug: 'open', maintainers: [aliceId] });
  await version(open.id, 'latest', [{ success: true }]);
  await version(open.id, 'broken', [{ success: true }, { success: false }]);
  await version(open.id, 'queued', [{ state: 'triggered' }]);
  await version(open.id, 'never', []);
  // A cancelled build is not the version's status: the one before it is.
  await version(open.id, 'cancelled', [{ success: false }, { success: false, error: 'Cancelled by alice.' }]);
  await version(open.id, 'off', [{ success: true }], { active: false });
  await version(open.id, 'closed', [{ success: false }], { privacyLevel: 'private' });
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers: [aliceId] });
  await version(secret.id, 'latest', [{ success: true }]);
  const other = await makeProject(t, { slug: 'other', maintainers: [aliceId] });
  await version(other.id, 'latest', [{ success: true }]);
});
afterAll(() => t?.close());

/** A version of `projectId` with builds made in order (the last the newest), finished unless a state is given. */
async function version(
  projectId: number,
  slug: string,
  builds: { success?: boolean; state?: 'triggered'; error?: string }[],
  data: { active?: boolean; privacyLevel?: PrivacyLevel } = {},
) {
  const v = await t.db.prisma.version.create({ data: { projectId, slug, verboseName: slug, type: 'branch', active: true, ...data } });
  let at = Date.now() - 3600_000;
  for (const b of builds) {
    const finished = b.state === undefined;
    await t.db.prisma.build.create({
      data: {
        projectId,
        versionId: v.id,
        versionSlug: slug,
        state: b.state ?? 'finished',
        success: finished ? (b.success ?? true) : null,
        error: b.error ?? (finished && b.success === false ? 'Building failed.' : null),
        createdAt: new Date((at += 60_000)),
      },
    });
  }
}

const badge = (path: string) =>
  t.http
    .get(path)
    .buffer(true)
    .parse((res, done) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => done(null, text));
    });
const statusOf = async (path: string) => {
  const res = await badge(path);
  expect(res.status, path).toBe(200);
  expect(res.headers['content-type'], path).toBe('image/svg+xml; charset=utf-8');
  const said = /(passing|failing|unknown)/i.exec(res.body as string)?.[1]?.toLowerCase();
  return said;
};
const tokenOf = async (slug: string, token: string) =>
  (await t.gql<{ project: { badgeToken: string | null } | null }>('query($s: String!) { project(slug: $s) { badgeToken } }', { s: slug }, token)).data?.project
    ?.badgeToken;

describe('a public version', () => {
  it('passes or fails by its newest finished build; unknown without one', async () => {
    expect(await statusOf('/projects/open/badge/?version=latest')).toBe('passing');
    expect(await statusOf('/projects/open/badge/?version=broken')).toBe('failing');
    expect(await statusOf('/projects/open/badge/?version=queued')).toBe('unknown');
    expect(await statusOf('/projects/open/badge/?version=never')).toBe('unknown');
    expect(await statusOf('/projects/open/badge/?version=cancelled')).toBe('failing');
    expect(await statusOf('/projects/open/badge/?version=nope')).toBe('unknown');
  });

  it("is `latest` when no version is named, as Read the Docs' view takes it", async () => {
    expect(await statusOf('/projects/open/badge/')).toBe('passing');
    expect(await statusOf('/projects/open/badge')).toBe('passing');
  });

  it("comes in Read the Docs' five styles, flat for anything else, and may be kept a minute", async () => {
    const flat = await badge('/projects/open/badge/?version=latest');
    expect(flat.body).toContain('width="86"');
    expect(flat.headers['cache-control']).toBe('public, max-age=60');
    expect((await badge('/projects/open/badge/?style=plastic')).body).toContain('rx="4"');
    expect((await badge('/projects/open/badge/?style=social')).body).toContain('rlink');
    expect((await badge('/projects/open/badge/?style=for-the-badge')).body).toContain('PASSING');
    expect((await badge('/projects/open/badge/?style=flat-square')).body).toContain('crispEdges');
    for (const odd of ['?style=<script>', '?style=', '?style=flat&style=../../etc/passwd', '?style[]=social'])
      expect((await badge(`/projects/open/badge/${odd}`)).body, odd).toBe(flat.body);
  });
});

describe('what a stranger may not see', () => {
  it('is unknown, the very image of a project that does not exist', async () => {
    const missing = (await badge('/projects/no-such-project/badge/')).body;
    expect((await badge('/projects/secret/badge/')).body).toBe(missing);
    expect((await badge('/projects/open/badge/?version=closed')).body).toBe(missing);
    expect((await badge('/projects/open/badge/?version=off')).body).toBe(missing);
    // Signed in changes nothing: a badge is an image on another site.
    expect((await badge('/projects/secret/badge/').set('Authorization', `Token ${aliceToken}`)).body).toBe(missing);
  });

  it("is the project's with its badge token, which only its maintainers are shown", async () => {
    const token = await tokenOf('open', aliceToken);
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await statusOf(`/projects/open/badge/?version=closed&token=${token}`)).toBe('failing');
    expect(await statusOf(`/projects/open/badge/?version=off&token=${token}`)).toBe('passing');
    expect((await badge(`/projects/open/badge/?version=closed&token=${token}`)).headers['cache-control']).toBe('private, max-age=60');
    const secretToken = await tokenOf('secret', aliceToken);
    expect(await statusOf(`/projects/secret/badge/?token=${secretToken}`)).toBe('passing');
    // Bob maintains nothing: no token for him.
    const asBob = await t.gql('query { project(slug: "open") { slug badgeToken } }', {}, bobToken);
    expect(asBob.data?.project?.badgeToken ?? null).toBeNull();
    expect(JSON.stringify(asBob)).not.toContain(token!);
  });

  it('is unknown with a token that is not the project’s, even for a public version', async () => {
    const otherToken = await tokenOf('other', aliceToken);
    const openToken = await tokenOf('open', aliceToken);
    expect(otherToken).not.toBe(openToken);
    expect(await statusOf(`/projects/open/badge/?version=latest&token=${otherToken}`)).toBe('unknown');
    expect(await statusOf(`/projects/secret/badge/?token=${openToken}`)).toBe('unknown');
    expect(await statusOf(`/projects/open/badge/?version=latest&token=${'x'.repeat(10_000)}`)).toBe('unknown');
    expect(await statusOf(`/projects/open/badge/?version=${'v'.repeat(5000)}`)).toBe('unknown');
  });
});
