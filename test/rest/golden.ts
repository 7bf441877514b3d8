// Golden response bodies: a whole JSON body compared with test/rest/golden/<name>.json.
// `UPDATE_GOLDEN=1` rewrites them (review the diff before committing); otherwise a missing or
// different file fails the test. Where Read the Docs' own tests keep the body of the same request
// (test/rest/rtd-responses/), test/unit/rtd-responses.test.ts holds the golden to its shape, so a
// golden rewritten from Lectern's output cannot drift from what Read the Docs answers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

const dir = path.resolve(import.meta.dirname, 'golden');

/** Timestamps made during the test, replaced as Read the Docs' own tests do before comparing. */
export function pinTimes(body: unknown, keys = ['created', 'modified']): unknown {
  if (Array.isArray(body)) return body.map((b) => pinTimes(b, keys));
  if (body && typeof body === 'object') {
    return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, keys.includes(k) && typeof v === 'string' ? '<pinned>' : pinTimes(v, keys)]));
  }
  return body;
}

export function expectGolden(name: string, body: unknown): void {
  const file = path.join(dir, `${name}.json`);
  const text = `${JSON.stringify(body, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, text);
    return;
  }
  if (!existsSync(file)) throw new Error(`golden file ${path.relative(process.cwd(), file)} is missing: run with UPDATE_GOLDEN=1 and review it`);
  expect(body, `body differs from ${name}.json`).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}
