// A build prints a secret variable in every form Python writes it (issue 21: masking missed
// urllib.parse.quote's): percent-encoded by quote (with `/` kept), quote_plus, quote(safe=''),
// encodeURIComponent's and encodeURI's sets, lower-case hex, every byte encoded, JSON as json.dumps
// writes it with and without ensure_ascii, base64 plain, URL-safe and inside `user:secret`. A real
// build runs the script; what a maintainer reads of its log (GraphQL, REST v2's log.txt) holds
// none of them. Forms are computed here too, independently of the recorder.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let git: GitServer;
let token: string;
let worker: Worker;

/** A value whose encodings all differ: a space, `/`, `+`, `!*'()~`, `&=`, a quote, non-ASCII. */
const SECRET = `tok/3n+x y!*'()~&k=v"é☃-${createHash('sha256').update(String(Date.now())).digest('hex').slice(0, 8)}`;

const SCRIPT = `import base64, json, os, re, urllib.parse as up
v = os.environ['DEPLOY_TOKEN']
b = v.encode()
lower = lambda s: re.sub('%[0-9A-F]{2}', lambda m: m.group(0).lower(), s)
forms = {
  'plain': v,
  'quote': up.quote(v),
  'quote_plus': up.quote_plus(v),
  'quote_safe_empty': up.quote(v, safe=''),
  'quote_lower': lower(up.quote(v)),
  'quote_plus_lower': lower(up.quote_plus(v)),
  'encodeURIComponent': up.quote(v, safe="-_.!~*'()"),
  'encodeURIComponent_lower': lower(up.quote(v, safe="-_.!~*'()")),
  'encodeURI': up.quote(v, safe=";,/?:@&=+$#-_.!~*'()"),
  'urlencode': up.urlencode({'t': v})[2:],
  'every_byte': ''.join('%%%02X' % c for c in b),
  'every_byte_lower': ''.join('%%%02x' % c for c in b),
  'json_ascii': json.dumps(v),
  'json_utf8': json.dumps(v, ensure_ascii=False),
  'base64': base64.b64encode(b).decode(),
  'base64_url': base64.urlsafe_b64encode(b).decode(),
  'basic_auth': base64.b64encode(b'user:' + b).decode(),
}
for name, form in forms.items():
  print(f'{name}: https://x.test/hook?t={form}&a=1')
`;

beforeAll(async () => {
  t = await testApp();
  git = await startGitServer();
  token = await t.user('masker');
  worker = await startTestWorker(t);
}, 120_000);
afterAll(async () => {
  await worker?.stop(1000);
  await git?.close();
  await t?.close();
});

/** The forms of SECRET the script prints, computed here: no 12 characters of any may be left in a log. */
function forms(v: string): Record<string, string> {
  const b = Buffer.from(v, 'utf8');
  const quote = (safe: string, plus = false, lower = false) =>
    [...b]
      .map((c) => {
        const ch = String.fromCharCode(c);
        if (c < 0x80 && (/[A-Za-z0-9_.~-]/.test(ch) || safe.includes(ch))) return ch;
        if (plus && ch === ' ') return '+';
        const hex = c.toString(16).toUpperCase().padStart(2, '0');
        return `%${lower ? hex.toLowerCase() : hex}`;
      })
      .join('');
  return {
    plain: v,
    quote: quote('/'),
    quote_plus: quote('', true),
    quote_safe_empty: quote(''),
    quote_lower: quote('/', false, true),
    encodeURIComponent: encodeURIComponent(v),
    encodeURI: quote(";,/?:@&=+$#!*'()"),
    every_byte: [...b].map((c) => `%${c.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
    json_ascii: JSON.stringify(v).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    json_utf8: JSON.stringify(v),
    base64: b.toString('base64'),
    base64_url: b.toString('base64url'),
  };
}

describe('masking in a real build', () => {
  it('hides a secret printed in every form Python writes it, in the log read by GraphQL and REST', async () => {
    const repo = git.repo('masked', {
      'forms.py': SCRIPT,
      '.readthedocs.yaml': [
        'version: 2',
        'build:',
        '  commands:',
        '    - python3 forms.py',
        '    - mkdir -p $READTHEDOCS_OUTPUT/html',
        '    - echo "<p>ok</p>" > $READTHEDOCS_OUTPUT/html/index.html',
        '',
      ].join('\n'),
    });
    const p = await importProject(t, token, 'Masked', repo.url);
    await waitForBuild(t, await latestBuildOf(t, p.slug));
    const set = await t.gql(
      `mutation($p: String!, $v: String!) { createEnvironmentVariable(project: $p, input: {name: "DEPLOY_TOKEN", value: $v}) { __typename ... on Error { message } } }`,
      { p: p.slug, v: SECRET },
      token,
    );
    expect(set.data.createEnvironmentVariable.__typename, JSON.stringify(set.data)).toMatch(/Success/);
    const trigger = await t.http.post(`/api/v3/projects/${p.slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
    expect(trigger.status).toBe(202);
    const build = await waitForBuild(t, trigger.body.build.id);
    expect(build.success, `${build.error}\n${build.commands.map((c) => `${c.command}\n${c.output}`).join('\n')}`).toBe(true);

    const gql = await t.gql(`query($id: Int!) { build(id: $id) { commands { command output } } }`, { id: build.id }, token);
    const output = (gql.data.build.commands as { command: string; output: string }[]).find((c) => c.command.includes('forms.py'))!.output;
    const log = (await t.http.get(`/api/v2/build/${build.id}.txt`)).text;
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(17);
    for (const line of lines) {
      const [name] = line.split(':');
      // The value's whole form masked: only `user:`'s base64 edge is left beside it.
      if (name === 'basic_auth') expect(line, line).toMatch(/^basic_auth: https:\/\/x\.test\/hook\?t=\S{0,8}\*{5}\S{0,4}&a=1$/);
      else if (name!.startsWith('json')) expect(line, line).toBe(`${name}: https://x.test/hook?t="*****"&a=1`);
      else if (name!.startsWith('base64')) expect(line, line).toMatch(new RegExp(`^${name}: https://x\\.test/hook\\?t=\\*{5}\\S{0,4}&a=1$`));
      else expect(line, line).toBe(`${name}: https://x.test/hook?t=*****&a=1`);
    }
    for (const [name, form] of Object.entries(forms(SECRET))) {
      for (let i = 0; i + 12 <= form.length; i++) {
        expect(output, `${name}: ${form.slice(i, i + 12)}`).not.toContain(form.slice(i, i + 12));
        expect(log, `${name} in log.txt`).not.toContain(form.slice(i, i + 12));
      }
    }
    expect(log).toContain('quote: https://x.test/hook?t=*****&a=1');
  }, 240_000);
});
