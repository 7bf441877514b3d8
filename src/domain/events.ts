// In-process signals from the domain to whoever listens (the build worker wakes on
// `buildQueued`). Across processes the database is the source of truth; this only saves a wait.
import { EventEmitter } from 'node:events';

export interface DomainEvents {
  buildQueued: [{ buildId: number; projectId: number }];
}

export const events = new EventEmitter<DomainEvents>();
events.setMaxListeners(100);
