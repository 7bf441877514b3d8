// One live subscription to a build over server-sent events (`buildUpdated`), as a browser opens
// it: the first event it gets, or the error that refused it. The stream stays open (its controller
// is pushed to `streams`) so that it counts against the bound per client until the test aborts it.

/** Opens the subscription with `headers` (a token, an X-Forwarded-For) and answers with its first event. */
export async function firstBuildUpdate(
  base: string,
  buildId: number,
  headers: Record<string, string>,
  streams: AbortController[],
): Promise<{ ok: boolean; error?: string }> {
  const controller = new AbortController();
  streams.push(controller);
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: 'subscription($id: Int!) { buildUpdated(id: $id) { kind } }', variables: { id: buildId } }),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    const block = /event: next\ndata: (.*)\n\n/.exec(text);
    if (block) {
      const result = JSON.parse(block[1]!);
      return result.errors ? { ok: false, error: result.errors[0].message } : { ok: true };
    }
  }
  return { ok: false, error: `ended without an update: ${text}` };
}
