// The rules of src/domain/access.ts have two faces: a Prisma condition for lists (`where`) and a
// check of one row (`allows`). Both must say the same thing for every caller and every row, or a
// list would show what a lookup hides (or the reverse). Checked here on generated worlds of users,
// projects, maintainers, versions, builds and subprojects, organizations with owners, members and
// teams (read-only or admin, with chosen or all projects), against the real database; and both
// faces against the rule as docs/design/organizations.md words it, worked out here by hand.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRule, type Caller, offeredVersions, projectRule, readableVersionRule, subprojectRule, versionRule } from '../../src/domain/access.ts';
import { contextFor } from '../../src/domain/context.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

const privacy = fc.constantFrom('public', 'private');
const world = fc.record({
  users: fc.integer({ min: 1, max: 3 }),
  projects: fc.array(
    fc.record({
      privacyLevel: privacy,
      maintainers: fc.subarray([0, 1, 2]),
      versions: fc.array(
        fc.record({
          privacyLevel: privacy,
          type: fc.constantFrom('branch', 'tag', 'external', 'unknown'),
          active: fc.boolean(),
          built: fc.boolean(),
          hidden: fc.boolean(),
          builds: fc.integer({ min: 0, max: 2 }),
        }),
        { maxLength: 4 },
      ),
      versionlessBuilds: fc.integer({ min: 0, max: 1 }),
      parent: fc.option(fc.nat(), { nil: null }),
      organization: fc.option(fc.nat({ max: 1 }), { nil: null, freq: 3 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  organizations: fc.array(
    fc.record({
      // Each user's place in it: not in it, a member, or an owner.
      roles: fc.tuple(...[0, 1, 2].map(() => fc.constantFrom(null, 'member', 'member', 'owner'))),
      teams: fc.array(
        fc.record({
          access: fc.constantFrom('readonly', 'admin'),
          allProjects: fc.boolean(),
          members: fc.subarray([0, 1, 2]),
          projects: fc.subarray([0, 1, 2, 3, 4]),
        }),
        { maxLength: 3 },
      ),
    }),
    { minLength: 1, maxLength: 2 },
  ),
  // Limited API tokens of the users (docs/design/tokens.md): read-only, limited to projects, or both.
  tokens: fc.array(fc.record({ user: fc.nat({ max: 2 }), readOnly: fc.boolean(), projects: fc.option(fc.subarray([0, 1, 2, 3, 4]), { nil: null }) }), {
    maxLength: 3,
  }),
});
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

async function load(w: World) {
  const db = t.db.prisma;
  await db.subproject.deleteMany();
  await db.build.deleteMany();
  await db.version.deleteMany();
  await db.project.deleteMany();
  await db.organization.deleteMany();
  await db.user.deleteMany();
  const users = await db.user.createManyAndReturn({
    data: Array.from({ length: w.users }, (_, i) => ({ username: `u${i}` })),
    select: { id: true, username: true, isAdmin: true },
  });
  const orgs: { id: number }[] = [];
  for (const [i, o] of w.organizations.entries()) {
    const members = o.roles.flatMap((role, u) => (role && u < users.length ? [{ userId: users[u]!.id, role: role as never }] : []));
    orgs.push(await db.organization.create({ data: { slug: `o${i}`, name: `o${i}`, members: { create: members } } }));
  }
  const projects: { id: number; organizationId: number | null }[] = [];
  for (const [i, p] of w.projects.entries()) {
    const maintainers = p.maintainers.filter((m) => m < users.length).map((m) => ({ id: users[m]!.id }));
    const org = p.organization === null ? undefined : orgs[p.organization % orgs.length];
    const project = await db.project.create({
      data: {
        name: `p${i}`,
        slug: `p${i}`,
        repositoryUrl: `https://x.org/p${i}`,
        privacyLevel: p.privacyLevel as never,
        users: { connect: maintainers },
        organizationId: org?.id ?? null,
      },
    });
    projects.push(project);
    for (const [j, v] of p.versions.entries()) {
      const version = await db.version.create({
        data: {
          projectId: project.id,
          slug: `v${j}`,
          verboseName: `v${j}`,
          privacyLevel: v.privacyLevel as never,
          type: v.type as never,
          active: v.active,
          built: v.built,
          hidden: v.hidden,
        },
      });
      await db.build.createMany({
        data: Array.from({ length: v.builds }, () => ({ projectId: project.id, versionId: version.id, versionSlug: version.slug })),
      });
    }
    await db.build.createMany({ data: Array.from({ length: p.versionlessBuilds }, () => ({ projectId: project.id, versionSlug: 'gone' })) });
  }
  for (const [i, p] of w.projects.entries()) {
    const parent = p.parent === null ? null : projects[p.parent % projects.length]!;
    if (parent && parent.id !== projects[i]!.id) await db.subproject.create({ data: { parentId: parent.id, childId: projects[i]!.id, alias: `a${i}` } });
  }
  // Teams hold the organization's members and are granted the organization's projects only, as
  // domain/organizations.ts keeps them.
  for (const [i, o] of w.organizations.entries()) {
    for (const [j, team] of o.teams.entries()) {
      const members = team.members.filter((u) => u < users.length && o.roles[u]);
      const granted = team.projects.filter((k) => projects[k]?.organizationId === orgs[i]!.id);
      await db.team.create({
        data: {
          organizationId: orgs[i]!.id,
          slug: `t${j}`,
          name: `t${j}`,
          access: team.access as never,
          allProjects: team.allProjects,
          projects: { connect: granted.map((k) => ({ id: projects[k]!.id })) },
          members: { create: members.map((u) => ({ userId: users[u]!.id })) },
        },
      });
    }
  }
  return users;
}

/**
 * The projects a user has access to at a level, as docs/design/organizations.md words it: the
 * project's maintainers; its organization's owners; members of its organization's teams of that
 * level (admin; or any, to read) that are granted the project or all the organization's.
 */
function expectedAccess(w: World, u: number, level: 'read' | 'admin'): number[] {
  const out: number[] = [];
  for (const [k, p] of w.projects.entries()) {
    const o = p.organization === null ? undefined : w.organizations[p.organization % w.organizations.length];
    const granted = (team: World['organizations'][number]['teams'][number]) =>
      team.members.includes(u) && o!.roles[u] !== null && (level === 'read' || team.access === 'admin') && (team.allProjects || team.projects.includes(k));
    if (p.maintainers.includes(u) || (o && (o.roles[u] === 'owner' || o.teams.some(granted)))) out.push(k);
  }
  return out;
}

/** The ids `allows` lets through, awaiting where it answers with a promise. */
async function allowed<R extends { id: number }>(caller: Caller, rows: R[], allows: (c: Caller, r: R) => boolean | Promise<boolean>): Promise<number[]> {
  const out: number[] = [];
  for (const r of rows) if (await allows(caller, r)) out.push(r.id);
  return out.sort((a, b) => a - b);
}
const ids = (rows: { id: number }[]) => rows.map((r) => r.id).sort((a, b) => a - b);

describe('each rule: the list condition and the one-row check agree', () => {
  it('for projects, versions, readable and offered versions, builds and subprojects, for every caller', async () => {
    const db = t.db.prisma;
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const users = await load(w);
        const projects = await db.project.findMany();
        const versions = await db.version.findMany({ include: { project: true } });
        const builds = await db.build.findMany({ include: { project: true, version: true } });
        const relationships = await db.subproject.findMany({ include: { child: true } });
        // A token limited to projects names them by id; one whose projects are all gone names none.
        const limited = w.tokens.flatMap((k) => {
          const user = users[k.user];
          if (!user) return [];
          const projectIds = k.projects?.flatMap((i) => projects.find((p) => p.slug === `p${i}`)?.id ?? []) ?? null;
          return [{ ...user, limits: { readOnly: k.readOnly, projectIds }, token: k }];
        });
        for (const viewer of [null, ...users, ...limited]) {
          const caller = contextFor(t.services, viewer);
          const token = viewer && 'token' in viewer ? (viewer.token as World['tokens'][number]) : null;
          const who = `${viewer?.username ?? 'anonymous'}${token ? ` with a token ${JSON.stringify(token)}` : ''}`;
          expect(await allowed(caller, projects, projectRule.allows), `projects for ${who}`).toEqual(
            ids(await db.project.findMany({ where: projectRule.where(viewer) })),
          );
          expect(await allowed(caller, versions, versionRule.allows), `versions for ${who}`).toEqual(
            ids(await db.version.findMany({ where: versionRule.where(viewer) })),
          );
          expect(await allowed(caller, versions, readableVersionRule.allows), `readable versions for ${who}`).toEqual(
            ids(await db.version.findMany({ where: readableVersionRule.where(viewer) })),
          );
          expect(await allowed(caller, builds, buildRule.allows), `builds for ${who}`).toEqual(
            ids(await db.build.findMany({ where: buildRule.where(viewer) })),
          );
          expect(await allowed(caller, relationships, subprojectRule.allows), `subprojects for ${who}`).toEqual(
            ids(await db.subproject.findMany({ where: subprojectRule.where(viewer) })),
          );
          // Both faces against the rule worked out by hand.
          const u = viewer ? users.findIndex((x) => x.id === viewer.id) : -1;
          // A limited token: its user's access, within its projects; a read-only one maintains nothing.
          const within = (ks: number[]) => (token?.projects ? ks.filter((k) => token.projects!.includes(k) && k < w.projects.length) : ks);
          const reads = viewer ? within(expectedAccess(w, u, 'read')) : [];
          const byIndex = (ks: number[]) => ks.map((k) => projects.find((p) => p.slug === `p${k}`)!.id).sort((a, b) => a - b);
          expect(ids(await db.project.findMany({ where: projectRule.where(viewer) })), `projects for ${who}, by hand`).toEqual(
            byIndex(w.projects.flatMap((p, k) => (p.privacyLevel === 'public' || reads.includes(k) ? [k] : []))),
          );
          expect(
            [...(await caller.readableProjectIds())].sort((a, b) => a - b),
            `read access of ${who}`,
          ).toEqual(byIndex(reads));
          expect(
            [...(await caller.maintainedProjectIds())].sort((a, b) => a - b),
            `admin access of ${who}`,
          ).toEqual(byIndex(viewer && !token?.readOnly ? within(expectedAccess(w, u, 'admin')) : []));
        }
        // Offered versions are what an anonymous reader can open (minus the hidden ones in menus),
        // pull requests' previews aside: they are opened by their own URL, never offered.
        const anonymous = contextFor(t.services, null);
        const readable = (await allowed(anonymous, versions, readableVersionRule.allows)).filter(
          (id) => versions.find((v) => v.id === id)!.type !== 'external',
        );
        expect(ids(await db.version.findMany({ where: offeredVersions({ includeHidden: true }) }))).toEqual(readable);
        expect(ids(await db.version.findMany({ where: offeredVersions({ includeHidden: false }) }))).toEqual(
          readable.filter((id) => !versions.find((v) => v.id === id)!.hidden),
        );
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
