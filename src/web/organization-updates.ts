// What a change to an organization's data does to the lists the normalized cache holds
// (docs/design/dashboard-data.md), as src/web/cache-updates.ts does for a project's: a new team,
// invitation or organization takes its place in its list, one removed leaves it, and a member's
// new role reaches their row, the owners' list and the reader's own role.
import type { Cache, UpdateResolver, UpdatesConfig } from '@urql/exchange-graphcache';
import { gql } from 'urql';
import { answered, editLinks, inSlugOrder, keyOf, type Row } from './cache-updates.ts';

/** An organization's plain list `field`, its rows edited by `edit`. */
const editOrganizationList = (cache: Cache, slug: unknown, field: string, edit: (keys: string[]) => string[]) =>
  editLinks(cache, organizationKey(cache, slug), field, edit);

/** A new team takes its place among the organization's teams (by slug). */
const createdTeam: UpdateResolver = (result, args, cache, info) => {
  const key = keyOf(cache, answered(result, info.fieldName));
  if (key) editOrganizationList(cache, args.organization, 'teams', (keys) => inSlugOrder(cache, keys, key));
};

/** A deleted team leaves the organization's teams, and the cache (a member's list of teams then reads it again). */
const deletedTeam: UpdateResolver = (result, args, cache, info) => {
  const key = keyOf(cache, answered(result, info.fieldName));
  if (!key) return;
  editOrganizationList(cache, args.organization, 'teams', (keys) => keys.filter((k) => k !== key));
  cache.invalidate(key);
};

const organizationKey = (cache: Cache, slug: unknown) =>
  typeof slug === 'string' ? (cache.resolve('Query', 'organization', { slug }) as string | null) : null;

const MemberRoles = gql`
  query MemberRoles($slug: String!) { organization(slug: $slug) { id members { role user { id username } } } }
`;
const ViewerRole = gql`
  fragment ViewerRole on Organization { id viewerRole }
`;

/** The cache's key of the user with this username among an organization's members. */
function memberUser(cache: Cache, org: string, username: unknown): string | null {
  for (const m of (cache.resolve(org, 'members') as string[] | null) ?? []) {
    const user = cache.resolve(m, 'user') as string | null;
    if (user && cache.resolve(user, 'username') === username) return user;
  }
  return null;
}

/**
 * A member's new role (the answer is the member, which has no key of its own): their row's role,
 * the organization's owners (by username), and, when it is the reader's own, what they may do.
 */
const memberRoleSet: UpdateResolver = (result, args, cache, info) => {
  const role = (result[info.fieldName] as { data?: { role?: string } } | null)?.data?.role;
  const org = organizationKey(cache, args.organization);
  const user = org && memberUser(cache, org, args.username);
  if (!role || !org || !user) return;
  cache.updateQuery({ query: MemberRoles, variables: { slug: args.organization } }, (data) => {
    const members = (data?.organization as { members: { role: string; user: { username: string } }[] } | null)?.members;
    for (const m of members ?? []) if (m.user.username === args.username) m.role = role;
    return data;
  });
  const owners = cache.resolve(org, 'owners') as string[] | null;
  if (owners) cache.link(org, 'owners', role === 'owner' ? inSlugOrder(cache, owners, user, 'username') : owners.filter((k) => k !== user));
  if (cache.resolve('Query', 'viewer') === user)
    cache.writeFragment(ViewerRole, { __typename: 'Organization', id: cache.resolve(org, 'id'), viewerRole: role });
};

/** A member removed (the answer is only true): out of the members, the owners and every team of the organization. */
const memberRemoved: UpdateResolver = (result, args, cache, info) => {
  if ((result[info.fieldName] as { data?: unknown } | null)?.data !== true) return;
  const org = organizationKey(cache, args.organization);
  const user = org && memberUser(cache, org, args.username);
  if (!org || !user) return;
  const members = (cache.resolve(org, 'members') as string[] | null) ?? [];
  cache.link(
    org,
    'members',
    members.filter((m) => cache.resolve(m, 'user') !== user),
  );
  const owners = cache.resolve(org, 'owners') as string[] | null;
  if (owners)
    cache.link(
      org,
      'owners',
      owners.filter((k) => k !== user),
    );
  for (const team of (cache.resolve(org, 'teams') as string[] | null) ?? []) {
    const people = cache.resolve(team, 'members') as string[] | null;
    if (people?.includes(user))
      cache.link(
        team,
        'members',
        people.filter((k) => k !== user),
      );
  }
};

/** A new invitation goes first among the pending ones (newest first). */
const invited: UpdateResolver = (result, args, cache, info) => {
  const key = keyOf(cache, (result[info.fieldName] as { data?: { invitation?: Row } } | null)?.data?.invitation);
  if (key) editOrganizationList(cache, args.organization, 'invitations', (keys) => (keys.includes(key) ? keys : [key, ...keys]));
};

/** A revoked invitation (the answer is only true) leaves the pending ones, and the cache. */
const revoked: UpdateResolver = (result, args, cache, info) => {
  if ((result[info.fieldName] as { data?: unknown } | null)?.data !== true) return;
  const key = cache.keyOfEntity({ __typename: 'OrganizationInvitation', id: args.id as number });
  if (!key) return;
  editOrganizationList(cache, args.organization, 'invitations', (keys) => keys.filter((k) => k !== key));
  cache.invalidate(key);
};

const OrganizationsTotal = gql`
  query OrganizationsTotal($limit: Int, $offset: Int) { organizations(limit: $limit, offset: $offset) { totalCount } }
`;

/** A new organization takes its place (by slug) in the reader's lists of organizations that start at the first. */
const createdOrganization: UpdateResolver = (result, _args, cache, info) => {
  const key = keyOf(cache, answered(result, info.fieldName));
  if (!key) return;
  for (const f of cache.inspectFields('Query')) {
    if (f.fieldName !== 'organizations' || f.arguments?.offset) continue;
    const page = cache.resolve('Query', f.fieldKey) as string | null;
    const nodes = page ? (cache.resolve(page, 'nodes') as string[] | null) : null;
    if (!page || !nodes || nodes.includes(key)) continue;
    const limit = (f.arguments?.limit as number | undefined) ?? nodes.length + 1;
    cache.link(page, 'nodes', inSlugOrder(cache, nodes, key).slice(0, limit));
    cache.updateQuery({ query: OrganizationsTotal, variables: { ...f.arguments } }, (data) => {
      const total = data?.organizations as { totalCount: number } | null;
      if (total) total.totalCount += 1;
      return data;
    });
  }
};

/** What each mutation of an organization's data does to the lists the cache holds. */
export const ORGANIZATION_UPDATES: NonNullable<UpdatesConfig['Mutation']> = {
  createOrganization: createdOrganization,
  setOrganizationMemberRole: memberRoleSet,
  removeOrganizationMember: memberRemoved,
  inviteToOrganization: invited,
  revokeInvitation: revoked,
  createTeam: createdTeam,
  deleteTeam: deletedTeam,
};
