// The long-lived parts resolvers and domain code use (database, cipher, settings, logger, storage), set
// once when the app is built. The per-request GraphQL context holds identity only.
import type { Config } from './config.ts';
import type { PrismaClient } from './db/database.ts';
import type { Logger } from './log.ts';
import type { Cipher } from './secrets.ts';
import type { Storage } from './storage/index.ts';

export interface Services {
  prisma: PrismaClient;
  cipher: Cipher;
  config: Config;
  log: Logger;
  /** Where built docs are kept (LECTERN_STORAGE). */
  storage: Storage;
}

let current: Services | undefined;

export function setServices(s: Services): void {
  current = s;
}

export function services(): Services {
  if (!current) throw new Error('services used before the app was built');
  return current;
}

export const prisma = (): PrismaClient => services().prisma;
export const storage = (): Storage => services().storage;
