// Every mutation answers a selection of only `__typename` (a client checking success or error
// type without reading the data) as it answers a full one: never "Unexpected error.".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await testApp();
  token = await t.user('typename');
  const res = await t.gql(`mutation { importProject(input: {name: "Names", repository: {url: "https://github.com/acme/names"}}) { __typename } }`, {}, token);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
});
afterAll(() => t.close());

const mutations: [string, string][] = [
  ['updateProject', `updateProject(slug: "names", input: {name: "Names 2"})`],
  ['updateVersion', `updateVersion(project: "names", slug: "latest", input: {hidden: true})`],
  ['triggerBuild', `triggerBuild(project: "names", version: "latest")`],
  ['createRedirect', `createRedirect(project: "names", input: {type: page, fromUrl: "/a.html", toUrl: "/b.html"})`],
  ['updateRedirect', `updateRedirect(project: "names", id: 1, input: {type: page, fromUrl: "/c.html", toUrl: "/d.html"})`],
  ['deleteRedirect', `deleteRedirect(project: "names", id: 1)`],
  ['createEnvironmentVariable', `createEnvironmentVariable(project: "names", input: {name: "X", value: "y"})`],
  ['deleteEnvironmentVariable', `deleteEnvironmentVariable(project: "names", id: 1)`],
  ['createIntegration', `createIntegration(project: "names", provider: github)`],
  ['deleteIntegration', `deleteIntegration(project: "names", id: 1)`],
];

describe('queries selecting only __typename', () => {
  it.each([
    ['project', `project(slug: "names")`, 'Project'],
    ['version', `version(id: 1)`, 'Version'],
    ['build', `build(id: 1)`, 'Build'],
    ['projects', `projects`, 'ProjectPage'],
  ])('%s answers its type', async (name, call, type) => {
    const res = await t.gql(`query { ${call} { __typename } }`, {}, token);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data[name].__typename).toBe(type);
  });
});

describe('mutations selecting only __typename', () => {
  it.each(mutations)('%s answers its success type', async (name, call) => {
    const res = await t.gql(`mutation { ${call} { __typename } }`, {}, token);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data[name].__typename).toMatch(/Success$/);
  });
});
