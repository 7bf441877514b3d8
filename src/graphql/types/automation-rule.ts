// A project's automation rules for versions (docs/design/automation-rules.md), and what they
// did. Only maintainers read or write them.
import { queryFromInfo } from '@pothos/plugin-prisma';
import {
  ACTIONS,
  createAutomationRule,
  deleteAutomationRule,
  MATCHES,
  moveAutomationRule,
  patternOf,
  updateAutomationRule,
} from '../../domain/automation-rules.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import { pageComplexity, pageOf, rowQuery, VersionTypeEnum, window } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

const choices = (m: ReadonlyMap<string, string>) => [...m.keys()].map((k) => `\`${k}\``).join(', ');

export const AutomationRuleMatch = builder.prismaObject('AutomationRuleMatch', {
  description: 'One application of a rule, as the rule was then.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    versionName: t.exposeString('versionName', { description: 'The branch or tag it applied to.' }),
    versionType: t.expose('versionType', { type: VersionTypeEnum }),
    matchArg: t.exposeString('matchArg', { description: 'The regular expression the name matched.' }),
    action: t.exposeString('action'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const AutomationRule = builder.prismaObject('AutomationRule', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    priority: t.exposeInt('priority', { description: 'Rules apply in this order, 0 first.' }),
    description: t.exposeString('description'),
    predefinedMatchArg: t.exposeString('predefinedMatchArg', { description: `One of ${choices(MATCHES)}.` }),
    matchArg: t.exposeString('matchArg', { description: "A custom match's regular expression (RE2 syntax), searched in the version's name; '' otherwise." }),
    pattern: t.string({ description: 'The regular expression the rule searches version names with.', resolve: (r) => patternOf(r) }),
    versionType: t.expose('versionType', { type: VersionTypeEnum }),
    action: t.exposeString('action', { description: `One of ${choices(ACTIONS)}.` }),
    enabled: t.exposeBoolean('enabled'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
    matches: t.relation('matches', {
      description: 'Its latest applications, newest first.',
      query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 15 },
    }),
  }),
});

export const AutomationRulePage = pageOf<Prisma.AutomationRuleGetPayload<object>>('AutomationRulePage', AutomationRule);

builder.prismaObjectFields(Project, (t) => ({
  automationRules: t.field({
    type: AutomationRulePage,
    description: 'Automation rules in the order they apply. Maintainers only.',
    args: { limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: async (project, args, ctx, info) => {
      const where = { projectId: project.id };
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.automationRule.findMany({
          ...queryFromInfo({ context: ctx, info, path: ['nodes'] }),
          where,
          orderBy: [{ priority: 'asc' }, { id: 'asc' }],
          take,
          skip,
        }),
        totalCount: () => ctx.prisma.automationRule.count({ where }),
      };
    },
  }),
}));

const AutomationRuleInput = builder.inputType('AutomationRuleInput', {
  fields: (t) => ({
    description: t.string(),
    predefinedMatchArg: t.string({ description: `One of ${choices(MATCHES)}. Required to create.` }),
    matchArg: t.string({ description: 'With `custom-match`: the regular expression (RE2 syntax), searched in the name.' }),
    versionType: t.field({ type: VersionTypeEnum, description: '`tag` or `branch`. Required to create.' }),
    action: t.string({ description: `One of ${choices(ACTIONS)}. Required to create.` }),
    enabled: t.boolean(),
    priority: t.int({ description: 'Where it goes, 0 first; last by default.' }),
  }),
});

builder.mutationFields((t) => ({
  createAutomationRule: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: AutomationRule,
    args: { project: t.arg.string({ required: true }), input: t.arg({ type: AutomationRuleInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => createAutomationRule(ctx, args.project, args.input, rowQuery(query)),
  }),
  updateAutomationRule: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: AutomationRule,
    description: 'Changes the fields given; `priority` moves the rule.',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }), input: t.arg({ type: AutomationRuleInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => updateAutomationRule(ctx, args.project, args.id, args.input, rowQuery(query)),
  }),
  moveAutomationRule: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: AutomationRule,
    description: 'Moves a rule `steps` places (negative: earlier), wrapping around the ends, as Read the Docs moves them.',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }), steps: t.arg.int({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => moveAutomationRule(ctx, args.project, args.id, args.steps, rowQuery(query)),
  }),
  deleteAutomationRule: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: AutomationRule,
    description: 'Deletes a rule and closes the gap in the priorities. Answers with the rule as it was.',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => deleteAutomationRule(ctx, args.project, args.id, rowQuery(query)),
  }),
}));
