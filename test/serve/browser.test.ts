// The switcher in a real browser (Debian's Chromium through playwright-core): open a served page,
// see the menu, pick another version, land on the same page in that version.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/publish.ts';
import { makeWorld, type World } from './world.ts';

let w: World;
let server: Server;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  w = await makeWorld();
  server = createServer(w.t.handler).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  await w?.t.close();
});

describe('the switcher in a browser', () => {
  it('goes to the same page in the version picked', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${origin}/docs/fixture/en/latest/guide/install.html`);
    expect(await page.title()).toContain('Fixture 1.0 documentation');

    const versions = page.locator('#lectern-switcher select[name="version"]');
    await versions.waitFor({ state: 'visible' });
    expect(await versions.locator('option').allTextContents()).toEqual(['latest', 'v2.0']);
    expect(await page.locator('#lectern-switcher select[name="language"] option').allTextContents()).toEqual(['English', 'Spanish']);

    await Promise.all([page.waitForURL(`${origin}/docs/fixture/en/v2.0/guide/install.html`), versions.selectOption('v2.0')]);
    expect(await page.title()).toContain('Fixture 2.0 documentation');
    expect(await page.locator('h1').first().textContent()).toContain('Installation');
    expect(await page.locator('#lectern-switcher select[name="version"]').inputValue()).toBe('v2.0');
    expect(errors).toEqual([]);
    await page.close();
  });
});
