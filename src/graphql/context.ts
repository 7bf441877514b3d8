// The per-request context: who is asking, and nothing else. Built fresh for every request, from
// `Authorization: Token <key>` (Read the Docs' scheme); any other scheme counts as anonymous.
import { hashToken } from '../secrets.ts';
import { prisma } from '../services.ts';
import { UnauthenticatedError } from './errors.ts';

export interface Viewer {
  id: number;
  username: string;
}

export type Context = Readonly<{
  viewer: Viewer | null;
  /** Ids of the projects the viewer maintains, read once per request. */
  maintainedProjectIds: () => Promise<ReadonlySet<number>>;
}>;

/** The context of a caller already identified (a viewer, or null for anonymous). */
export function contextFor(viewer: Viewer | null): Context {
  let maintained: Promise<ReadonlySet<number>> | undefined;
  return {
    viewer,
    maintainedProjectIds: () =>
      (maintained ??= viewer
        ? prisma()
            .project.findMany({ where: { users: { some: { id: viewer.id } } }, select: { id: true } })
            .then((rows) => new Set(rows.map((r) => r.id)))
        : Promise.resolve(new Set<number>())),
  };
}

/** Resolves the Authorization header to a viewer; throws UnauthenticatedError for a bad token. */
export async function authenticate(authorization: string | null | undefined): Promise<Viewer | null> {
  if (!authorization) return null;
  const [scheme, ...rest] = authorization.trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'token') return null;
  if (rest.length === 0) throw new UnauthenticatedError('Invalid token header. No credentials provided.');
  if (rest.length > 1) throw new UnauthenticatedError('Invalid token header. Token string should not contain spaces.');
  const token = await prisma().apiToken.findUnique({
    where: { keyHash: hashToken(rest[0]!) },
    select: { id: true, user: { select: { id: true, username: true } } },
  });
  if (!token) throw new UnauthenticatedError('Invalid token.');
  return token.user;
}

export async function createContext(authorization: string | null | undefined): Promise<Context> {
  return contextFor(await authenticate(authorization));
}

export const anonymousContext = (): Context => contextFor(null);
