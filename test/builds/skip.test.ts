// No wasted builds (issue 14): a build whose commit and configuration are those of the build the
// version serves finishes at once, successful, saying it was skipped, and the served files stay;
// `force` builds it anyway; a new commit builds. A `build.jobs` step (or a build.commands command)
// that exits with 183 ends the build without failing it, publishing nothing (Read the Docs'
// RTD_SKIP_BUILD_EXIT_CODE). Real git over git://, a real worker, both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let worker: Worker;
let token: string;

const TRIGGER = `mutation($p: String!, $v: String!, $force: Boolean) { triggerBuild(project: $p, version: $v, force: $force) {
  __typename ... on MutationTriggerBuildSuccess { data { build { id } } } ... on Error { message } } }`;
const yaml = (commands: string[]) => ['version: 2', 'build:', '  commands:', ...commands.map((c) => `    - ${JSON.stringify(c)}`), ''].join('\n');
const PAGE = (text: string) => [`mkdir -p $READTHEDOCS_OUTPUT/html`, `echo "<h1>${text}</h1>" > $READTHEDOCS_OUTPUT/html/index.html`];

async function trigger(slug: string, force?: boolean): Promise<number> {
  const r = await t.gql(TRIGGER, { p: slug, v: 'latest', force }, token);
  const id = r.data?.triggerBuild?.data?.build?.id as number | undefined;
  if (!id) throw new Error(JSON.stringify(r));
  return id;
}
const build = (id: number) => t.db.prisma.build.findUniqueOrThrow({ where: { id }, include: { commands: true } });
const served = async (slug: string) => (await t.db.prisma.version.findFirstOrThrow({ where: { slug: 'latest', project: { slug } } })).publishedBuildId;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('skipper');
  worker = await startTestWorker(t);
}, 60_000);
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
});

describe('no wasted builds', () => {
  it('skips a build of the commit and configuration already served, unless forced; a new commit builds', async () => {
    const repo = server.repo('unchanged', { '.readthedocs.yaml': yaml(PAGE('First')) });
    const { slug } = await importProject(t, token, 'Unchanged', repo.url);
    const first = await waitForBuild(t, await latestBuildOf(t, slug));
    expect(first.success, first.error ?? '').toBe(true);
    expect(await served(slug)).toBe(first.id);

    const again = await waitForBuild(t, await trigger(slug));
    expect(again).toMatchObject({ success: true, error: null });
    expect(again.message).toMatch(
      new RegExp(
        `^Skipped: commit ${first.commit!.slice(0, 12)} with this configuration and these environment variables is already built and published \\(build #${first.id}\\)`,
      ),
    );
    expect(again.commit).toBe(first.commit);
    expect((await build(again.id)).commands.map((c) => c.command)).not.toContainEqual(expect.stringContaining('READTHEDOCS_OUTPUT'));
    expect(await served(slug)).toBe(first.id);
    expect((await t.http.get(`/docs/${slug}/en/latest/`)).text).toContain('<h1>First</h1>');

    const forced = await waitForBuild(t, await trigger(slug, true));
    expect([forced.success, forced.message]).toEqual([true, null]);
    expect(await served(slug)).toBe(forced.id);

    // A variable added since: the build is not the same, so it runs.
    const added = await t.gql(
      `mutation($p: String!) { createEnvironmentVariable(project: $p, input: {name: "DOCS_KEY", value: "v1"}) { __typename } }`,
      { p: slug },
      token,
    );
    expect(added.data.createEnvironmentVariable.__typename).toBe('MutationCreateEnvironmentVariableSuccess');
    const withVariable = await waitForBuild(t, await trigger(slug));
    expect([withVariable.success, withVariable.message]).toEqual([true, null]);
    // Read the Docs' REST trigger always builds.
    const rest = await t.http.post(`/api/v3/projects/${slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
    expect(rest.status).toBe(202);
    expect((await waitForBuild(t, rest.body.build.id)).message).toBeNull();

    repo.commit({ '.readthedocs.yaml': yaml(PAGE('Second')) }, 'second');
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const next = await waitForBuild(t, await trigger(slug));
    expect([next.success, next.message]).toEqual([true, null]);
    expect(await served(slug)).toBe(next.id);
    expect((await t.http.get(`/docs/${slug}/en/latest/`)).text).toContain('<h1>Second</h1>');
  }, 180_000);

  it('builds a version turned off and on again for real, by GraphQL and by REST, and serves it again', async () => {
    const repo = server.repo('toggled', { '.readthedocs.yaml': yaml(PAGE('Toggled')) });
    const { slug } = await importProject(t, token, 'Toggled', repo.url);
    const first = await waitForBuild(t, await latestBuildOf(t, slug));
    expect(first.success, first.error ?? '').toBe(true);
    const UPDATE = `mutation($p: String!, $active: Boolean!) { updateVersion(project: $p, slug: "latest", input: {active: $active}) {
      __typename ... on MutationUpdateVersionSuccess { data { active built } } } }`;
    const toggles: Array<[string, () => Promise<unknown>]> = [
      ['GraphQL', async () => t.gql(UPDATE, { p: slug, active: false }, token).then(() => t.gql(UPDATE, { p: slug, active: true }, token))],
      [
        'REST v3 PATCH',
        async () => {
          for (const active of [false, true]) {
            const r = await t.http.patch(`/api/v3/projects/${slug}/versions/latest/`).set('authorization', `Token ${token}`).send({ active });
            expect(r.status, JSON.stringify(r.body)).toBe(204);
          }
        },
      ],
    ];
    let last = first.id;
    for (const [how, toggle] of toggles) {
      await toggle();
      const rebuilt = await waitForBuild(t, await latestBuildOf(t, slug));
      expect(rebuilt.id, how).toBeGreaterThan(last);
      // Not "already built and published": turned off, the version served nothing, so the build is real.
      expect([rebuilt.success, rebuilt.message], how).toEqual([true, null]);
      expect(await served(slug), how).toBe(rebuilt.id);
      const page = await t.http.get(`/docs/${slug}/en/latest/`);
      expect([page.status, page.text], how).toEqual([200, expect.stringContaining('<h1>Toggled</h1>')]);
      last = rebuilt.id;
    }
  }, 180_000);

  it('ends a build whose build.jobs step exits with 183 without failing it, publishing nothing', async () => {
    const repo = server.repo('skipping', { '.readthedocs.yaml': yaml(PAGE('Kept')) });
    const { slug } = await importProject(t, token, 'Skipping', repo.url);
    const first = await waitForBuild(t, await latestBuildOf(t, slug));
    expect(first.success, first.error ?? '').toBe(true);

    repo.commit(
      {
        '.readthedocs.yaml': ['version: 2', 'build:', '  jobs:', '    post_checkout:', '      - "echo only docs matter; exit 183"', '', 'mkdocs: {}', ''].join(
          '\n',
        ),
        'mkdocs.yml': 'site_name: Skipping\n',
        'docs/index.md': '# Replaced\n',
      },
      'skip me',
    );
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const skipped = await waitForBuild(t, await trigger(slug));
    expect(skipped).toMatchObject({ success: true, error: null });
    expect(skipped.message).toMatch(/^Skipped: `echo only docs matter; exit 183` \(build\.jobs\.post_checkout\) exited with code 183/);
    expect(await served(slug)).toBe(first.id);
    expect((await t.http.get(`/docs/${slug}/en/latest/`)).text).toContain('<h1>Kept</h1>');
    // And GraphQL says it.
    const r = await t.gql(`query($id: Int!) { build(id: $id) { success error message } }`, { id: skipped.id }, token);
    expect(r.data.build).toEqual({ success: true, error: null, message: skipped.message });
  }, 180_000);
});
