// Users: maintainers of projects. Only the username is public; `viewer` is the caller.
import { builder } from '../builder.ts';

export const User = builder.prismaObject('User', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    username: t.exposeString('username'),
  }),
});

builder.queryField('viewer', (t) =>
  t.prismaField({
    authScopes: { public: true },
    type: User,
    nullable: true,
    description: 'The user whose token made this request; null when anonymous.',
    resolve: (query, _root, _args, ctx) => (ctx.viewer ? ctx.prisma.user.findUnique({ ...query, where: { id: ctx.viewer.id } }) : null),
  }),
);
