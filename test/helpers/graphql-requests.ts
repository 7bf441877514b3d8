// What the dashboard asks the API for while a person changes something (docs/design/dashboard-data.md):
// a change is shown from its own answer, so the only operation it sends is its mutation.
import type { Page, Request } from 'playwright-core';
import { until } from './wait.ts';

/**
 * The names of the GraphQL operations `page` sends to `${origin}/graphql` while `act` runs and
 * until `shown` holds, and until the page has settled: no request to the API in flight, and two
 * frames rendered since. A query sent again because of the change (a refetch, a reload) is sent
 * while the mutation's answer is handled, so it is counted.
 */
export async function operationsOf(page: Page, origin: string, act: () => Promise<unknown>, shown: () => Promise<unknown>): Promise<string[]> {
  const operations: string[] = [];
  const inFlight = new Set<Request>();
  const api = (r: Request) => r.url() === `${origin}/graphql`;
  const sent = (r: Request) => {
    if (!api(r)) return;
    // A subscription's stream stays open while the page lives: it is sent, but never ends.
    if (!r.headers().accept?.includes('text/event-stream')) inFlight.add(r);
    operations.push(JSON.parse(r.postData() ?? '{}').operationName ?? '?');
  };
  const ended = (r: Request) => inFlight.delete(r);
  page.on('request', sent);
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  try {
    await act();
    await shown();
    const settled = async () => {
      // Two frames: whatever the last answer made the page do (render, then ask) has happened.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      return inFlight.size === 0;
    };
    await until('the API requests to end', settled, 10_000, 20);
  } finally {
    page.off('request', sent);
    page.off('requestfinished', ended);
    page.off('requestfailed', ended);
  }
  return operations;
}
