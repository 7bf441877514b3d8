// Users and their API tokens, made from the command line. A token's key is returned once; only
// its hash is stored.

import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { hashToken, newTokenKey } from '../secrets.ts';
import { ValidationError } from './errors.ts';
import { Collector, checkString } from './validate.ts';

const USERNAME = /^[\w.@+-]+$/;

export async function createUser(db: PrismaClient, username: string, email?: string) {
  const c = new Collector();
  c.add(
    'username',
    checkString(username, { max: 150, required: true }) ??
      (USERNAME.test(username) ? undefined : 'Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters.'),
  );
  if (email !== undefined) c.add('email', /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) && email.length <= 254 ? undefined : 'Enter a valid email address.');
  c.throwIfAny();
  try {
    const user = await db.user.create({ data: { username, email: email ?? null } });
    const token = await createToken(db, user.id);
    return { user, token };
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
      throw ValidationError.field('username', 'A user with that username already exists.');
    }
    throw e;
  }
}

/** Creates a token for the user and returns its key, which is not stored anywhere. */
export async function createToken(db: PrismaClient, userId: number): Promise<string> {
  const key = newTokenKey();
  await db.apiToken.create({ data: { userId, keyHash: hashToken(key), keyPrefix: key.slice(0, 8) } });
  return key;
}

export async function createTokenFor(db: PrismaClient, username: string): Promise<string> {
  const user = await db.user.findUnique({ where: { username } });
  if (!user) throw ValidationError.field('username', `No user named "${username}".`);
  return createToken(db, user.id);
}
