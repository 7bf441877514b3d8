// In-process signals from the domain to whoever listens (the build worker wakes on
// `buildQueued`; the docs server forgets what it cached on `servedChanged`). Across processes the
// database is the source of truth; this only saves a wait.
import { EventEmitter } from 'node:events';

export interface DomainEvents {
  buildQueued: [{ buildId: number; projectId: number }];
  /** Emitted after a committed write that changes what a docs URL serves (project, version, redirect, subproject, publish). */
  servedChanged: [{ projectId?: number }];
}

export const events = new EventEmitter<DomainEvents>();
events.setMaxListeners(100);
