// Waiting in tests for something another part does in its own time (a worker, a receiver): the
// probe's first truthy answer, or a failure naming what never came.

/** Polls `probe` every `everyMs` until it answers something truthy, and returns that; throws naming `what` after `ms`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  ms = 60_000,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
