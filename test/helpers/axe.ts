// axe-core's scan of a page in Chromium, as the dashboard's tests judge it: the serious and critical
// violations, each as `<rule>: <elements>`. The script is evaluated through the devtools protocol:
// the dashboard's CSP (rightly) refuses a script tag.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function seriousViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE);
  return p.evaluate(async () => {
    const result = await (
      window as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
    ).axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}
