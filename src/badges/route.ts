// GET /projects/<project>/badge/?version=&style=&token=: a project's build status badge, an SVG, as
// Read the Docs answers it (docs/design/badges.md). The images are Read the Docs' own (NOTICE.md).
import { readFileSync } from 'node:fs';
import express from 'express';
import { type BadgeStatus, badgeStatus } from '../domain/badges.ts';
import type { Services } from '../domain/context.ts';
import { oneString } from '../urls.ts';

const STYLES = ['flat', 'flat-square', 'for-the-badge', 'plastic', 'social'] as const;
const STATUSES: BadgeStatus[] = ['passing', 'failing', 'unknown'];

/** The fifteen images, read once: `<status>-<style>`. */
const IMAGES = new Map(
  STATUSES.flatMap((status) => STYLES.map((style) => [`${status}-${style}`, readFileSync(new URL(`./${status}-${style}.svg`, import.meta.url), 'utf8')])),
);

export function badgeRouter(services: Pick<Services, 'prisma' | 'cipher'>): express.Router {
  const router = express.Router();
  router.get('/projects/:project/badge/', async (req, res, next) => {
    try {
      const token = oneString(req.query.token) || undefined;
      // Read the Docs' default is `latest`, whatever the project's default version (its dashboard names the version).
      const version = oneString(req.query.version) || 'latest';
      const style = STYLES.find((s) => s === oneString(req.query.style)) ?? 'flat';
      const status = await badgeStatus(services, req.params.project, version, token);
      res
        .status(200)
        // Briefly: a README shows the status of a build that just finished. A token's answer is its holder's.
        .set('Cache-Control', token ? 'private, max-age=60' : 'public, max-age=60')
        .type('image/svg+xml')
        .send(IMAGES.get(`${status}-${style}`));
    } catch (e) {
      next(e);
    }
  });
  return router;
}
