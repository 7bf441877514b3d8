// In-process signals from the domain to whoever listens: the build worker wakes on `buildQueued`,
// `syncQueued` and `deliveryQueued`; the docs server forgets what it cached on `servedChanged`;
// live build logs read again on `buildProgress`.
// One emitter per app (buildApp makes it, Services carries it, the app's worker is given the same):
// two apps in one process hear nothing of each other. Across processes the database, and NOTIFY on
// PostgreSQL, are the truth; a signal only saves a wait. docs/design/events.md.
import { EventEmitter } from 'node:events';

export interface DomainEvents {
  /** A build was queued and committed: a worker may claim it. */
  buildQueued: [{ buildId: number; projectId: number }];
  /** A version sync was queued (queue/version-syncs.ts). */
  syncQueued: [{ projectId: number }];
  /** Webhook notifications or commit statuses were queued (queue/deliveries.ts). */
  deliveryQueued: [];
  /** Emitted after a committed write that changes what a docs URL serves (project, version, redirect, subproject, publish). */
  servedChanged: [{ projectId?: number }];
  /** A build's rows changed (db/progress.ts announceProgress, or a NOTIFY the app's LISTEN connection heard): its live log reads them again. */
  buildProgress: [{ buildId: number }];
  /** The app's LISTEN connection came back: announcements may have been missed, every live log reads again. */
  progressResync: [];
}

/** An app's signals. */
export type Events = EventEmitter<DomainEvents>;

/** The signals of one app (or of one `lectern worker` process): nothing is shared with another's. */
export function createEvents(): Events {
  const events = new EventEmitter<DomainEvents>();
  // The worker and the docs caches' counter listen once each; every live build log followed adds
  // two (bounded per client, not in all).
  events.setMaxListeners(0);
  return events;
}
