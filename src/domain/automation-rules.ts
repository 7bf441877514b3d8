// Read the Docs' automation rules for versions (docs/design/automation-rules.md): per project, in
// priority order, each a match (any version, a SemVer version, or a regular expression of the
// maintainer's, on tags or on branches) and an action applied to the versions a sync adds
// (activate, hide, make public, make private, set as default) or, for `delete-version`, to active
// versions whose branch or tag is gone. Every rule that matches applies, as Read the Docs runs
// them; each application is recorded, the project keeping its last 15.
//
// The expressions are RE2's (re2js): matching takes time linear in the name, whatever the
// expression, so neither a maintainer's pattern nor a pushed branch name can stall a sync. Read
// the Docs guards Python's backtracking engine with a one-second timeout instead.
import type * as Re2js from 're2js';
import type { AutomationRule, Prisma, Version, VersionType } from '../generated/prisma/client.ts';
import { lazyModule } from '../lazy-module.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError } from './errors.ts';
import { lockProjects } from './locks.ts';
import { Collector, checkChoice, checkString, invalidChoice, required } from './validate.ts';

type Tx = Prisma.TransactionClient;
/** Loaded with the first rule checked or matched, not when the API's modules load (docs/design/startup.md). */
const re2js = lazyModule<typeof Re2js>('re2js');

export const ALL_VERSIONS = 'all-versions';
export const SEMVER_VERSIONS = 'semver-versions';
export const CUSTOM_MATCH = 'custom-match';
/** Read the Docs' predefined patterns (readthedocs/builds/constants.py), searched in the version's name. */
const PREDEFINED: Readonly<Record<string, string>> = {
  [ALL_VERSIONS]: '.*',
  [SEMVER_VERSIONS]:
    '^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$',
};
export const MATCHES: ReadonlyMap<string, string> = new Map([
  [ALL_VERSIONS, 'Any version'],
  [SEMVER_VERSIONS, 'SemVer versions'],
  [CUSTOM_MATCH, 'Custom match'],
]);

/** The actions on an added version, and the one on a version whose branch or tag is gone. */
export const ADDED_ACTIONS = ['activate-version', 'hide-version', 'make-version-public', 'make-version-private', 'set-default-version'] as const;
export const DELETED_ACTIONS = ['delete-version'] as const;
export type RuleAction = (typeof ADDED_ACTIONS)[number] | (typeof DELETED_ACTIONS)[number];
export const ACTIONS: ReadonlyMap<string, string> = new Map([
  ['activate-version', 'Activate version'],
  ['hide-version', 'Hide version'],
  ['make-version-public', 'Make version public'],
  ['make-version-private', 'Make version private'],
  ['set-default-version', 'Set version as default'],
  ['delete-version', 'Delete version'],
]);
const VERSION_TYPES: ReadonlySet<string> = new Set(['tag', 'branch']);
/** Rules per project, as a bound on the work of every sync. */
export const RULE_LIMIT = 100;
/** Applications kept per project (Read the Docs' `max_registers`). */
const MATCHES_KEPT = 15;

export interface AutomationRuleInput {
  description?: string | null;
  predefinedMatchArg?: string | null;
  matchArg?: string | null;
  versionType?: string | null;
  action?: string | null;
  enabled?: boolean | null;
  /** Where it goes: 0 first; last by default. */
  priority?: number | null;
}

/** The expression a rule searches version names with. */
export function patternOf(rule: Pick<AutomationRule, 'predefinedMatchArg' | 'matchArg'>): string {
  return PREDEFINED[rule.predefinedMatchArg] ?? rule.matchArg;
}

/** Whether a version matches `rule` (its type, then its name searched by the rule's expression), the expression compiled once. */
function matcherOf(rule: Pick<AutomationRule, 'predefinedMatchArg' | 'matchArg' | 'versionType'>): (version: Pick<Version, 'verboseName' | 'type'>) => boolean {
  let compiled: Re2js.RE2JS | null;
  try {
    compiled = re2js().RE2JS.compile(patternOf(rule));
  } catch {
    // An expression stored before a check it fails (none today): matches nothing.
    compiled = null;
  }
  return (version) => version.type === rule.versionType && compiled !== null && compiled.matcher(version.verboseName).find();
}

/** Why `pattern` is not an expression a rule can use; undefined when it is. */
function checkPattern(pattern: string): string | undefined {
  try {
    re2js().RE2JS.compile(pattern);
    return undefined;
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^error parsing regexp: /, '') : String(e);
    return `Enter a valid regular expression (RE2 syntax: no lookaround or backreferences): ${why}.`;
  }
}

/** The fields as given: every problem at once, nothing written. `whole` is a create (what a rule needs is required). */
function checkInput(input: AutomationRuleInput, whole: boolean, current?: AutomationRule): void {
  const c = new Collector();
  c.add('description', checkString(input.description, { max: 255, allowBlank: true }));
  c.add('predefinedMatchArg', whole && !input.predefinedMatchArg ? required : checkChoice(input.predefinedMatchArg, MATCHES));
  c.add('versionType', whole && !input.versionType ? required : checkChoice(input.versionType, VERSION_TYPES));
  c.add('action', whole && !input.action ? required : checkChoice(input.action, ACTIONS));
  const match = input.predefinedMatchArg ?? current?.predefinedMatchArg;
  const arg = input.matchArg ?? (input.predefinedMatchArg ? '' : current?.matchArg) ?? '';
  if (match === CUSTOM_MATCH) {
    c.add(
      'matchArg',
      arg.trim() === ''
        ? 'A custom match needs a regular expression.'
        : arg.length > 255
          ? 'Ensure this field has no more than 255 characters.'
          : checkPattern(arg),
    );
  } else if (input.matchArg) {
    c.add('matchArg', `Only a custom match takes a regular expression; "${match}" has its own.`);
  }
  if (input.priority != null && input.priority < 0) c.add('priority', 'Ensure this value is greater than or equal to 0.');
  c.throwIfAny();
}

async function findRule(client: Tx, projectId: number, id: number): Promise<AutomationRule> {
  const rule = await client.automationRule.findFirst({ where: { id, projectId } });
  if (!rule) throw new NotFoundError('AutomationRule');
  return rule;
}

/** Moves the rule at `from` to `to` (both within 0..count-1), shifting those between. */
async function reorder(tx: Tx, projectId: number, id: number, from: number, to: number): Promise<void> {
  if (to < from) await tx.automationRule.updateMany({ where: { projectId, priority: { gte: to, lt: from } }, data: { priority: { increment: 1 } } });
  else if (to > from) await tx.automationRule.updateMany({ where: { projectId, priority: { gt: from, lte: to } }, data: { priority: { decrement: 1 } } });
  await tx.automationRule.update({ where: { id }, data: { priority: to } });
}

export interface AutomationRuleQuery {
  include?: Prisma.AutomationRuleInclude;
  select?: Prisma.AutomationRuleSelect;
}

export async function createAutomationRule(ctx: Context, projectSlug: string, input: AutomationRuleInput, query: AutomationRuleQuery = {}) {
  const project = await projectToChange(ctx, projectSlug);
  checkInput(input, true);
  return ctx.prisma.$transaction(async (tx) => {
    await lockProjects(tx, [project.id]);
    const count = await tx.automationRule.count({ where: { projectId: project.id } });
    if (count >= RULE_LIMIT) new Collector().add('nonFieldErrors', `A project has at most ${RULE_LIMIT} automation rules.`).throwIfAny();
    const priority = Math.min(input.priority ?? count, count);
    await tx.automationRule.updateMany({ where: { projectId: project.id, priority: { gte: priority } }, data: { priority: { increment: 1 } } });
    return tx.automationRule.create({
      ...query,
      data: {
        projectId: project.id,
        priority,
        description: input.description?.trim() ?? '',
        predefinedMatchArg: input.predefinedMatchArg!,
        matchArg: input.predefinedMatchArg === CUSTOM_MATCH ? input.matchArg! : '',
        versionType: input.versionType as VersionType,
        action: input.action!,
        enabled: input.enabled ?? true,
      },
    });
  });
}

/** Changes the fields given (PATCH); `priority` moves it. */
export async function updateAutomationRule(ctx: Context, projectSlug: string, id: number, input: AutomationRuleInput, query: AutomationRuleQuery = {}) {
  const project = await projectToChange(ctx, projectSlug);
  return ctx.prisma.$transaction(async (tx) => {
    await lockProjects(tx, [project.id]);
    const current = await findRule(tx, project.id, id);
    checkInput(input, false, current);
    const data: Prisma.AutomationRuleUpdateInput = {};
    if (input.description != null) data.description = input.description.trim();
    if (input.predefinedMatchArg != null) data.predefinedMatchArg = input.predefinedMatchArg;
    const match = input.predefinedMatchArg ?? current.predefinedMatchArg;
    if (input.predefinedMatchArg != null || input.matchArg != null) data.matchArg = match === CUSTOM_MATCH ? (input.matchArg ?? current.matchArg) : '';
    if (input.versionType != null) data.versionType = input.versionType as VersionType;
    if (input.action != null) data.action = input.action;
    if (input.enabled != null) data.enabled = input.enabled;
    if (input.priority != null && input.priority !== current.priority) {
      const count = await tx.automationRule.count({ where: { projectId: project.id } });
      await reorder(tx, project.id, id, current.priority, Math.min(input.priority, count - 1));
    }
    return tx.automationRule.update({ ...query, where: { id }, data });
  });
}

/** Read the Docs' `move(steps)`: `steps` up (negative) or down, wrapping around the ends. */
export async function moveAutomationRule(ctx: Context, projectSlug: string, id: number, steps: number, query: AutomationRuleQuery = {}) {
  const project = await projectToChange(ctx, projectSlug);
  return ctx.prisma.$transaction(async (tx) => {
    await lockProjects(tx, [project.id]);
    const current = await findRule(tx, project.id, id);
    const count = await tx.automationRule.count({ where: { projectId: project.id } });
    const to = (((current.priority + steps) % count) + count) % count;
    await reorder(tx, project.id, id, current.priority, to);
    return tx.automationRule.findUniqueOrThrow({ ...query, where: { id } });
  });
}

/** Answers with the rule as it was (`query` read before it goes). */
export async function deleteAutomationRule(ctx: Context, projectSlug: string, id: number, query: AutomationRuleQuery = {}) {
  const project = await projectToChange(ctx, projectSlug);
  return ctx.prisma.$transaction(async (tx) => {
    await lockProjects(tx, [project.id]);
    const current = await findRule(tx, project.id, id);
    const shown = await tx.automationRule.findUniqueOrThrow({ ...query, where: { id } });
    await tx.automationRule.delete({ where: { id } });
    await tx.automationRule.updateMany({ where: { projectId: project.id, priority: { gt: current.priority } }, data: { priority: { decrement: 1 } } });
    return shown;
  });
}

/** What the rules did in a sync: versions to build (activated, not built yet), and versions deleted. */
export interface RulesApplied {
  toBuild: Version[];
  deleted: string[];
}

/**
 * Applies the project's enabled rules, in priority order, to the versions a sync added and to the
 * active versions whose branch or tag is gone (`delete-version` only), inside the sync's
 * transaction (which holds the project's row). Every matching rule applies; each application is
 * recorded. The default version is never deleted.
 */
export async function applyAutomationRules(tx: Tx, projectId: number, added: Version[], gone: Version[]): Promise<RulesApplied> {
  const done: RulesApplied = { toBuild: [], deleted: [] };
  if (added.length === 0 && gone.length === 0) return done;
  const rules = await tx.automationRule.findMany({ where: { projectId, enabled: true }, orderBy: [{ priority: 'asc' }, { id: 'asc' }] });
  if (rules.length === 0) return done;
  const compiled = rules.map((rule) => ({ rule, matches: matcherOf(rule) }));
  const addedRules = compiled.filter((r) => (ADDED_ACTIONS as readonly string[]).includes(r.rule.action));
  const deleteRules = compiled.filter((r) => r.rule.action === 'delete-version');
  const toBuild = new Map<number, Version>();
  let recorded = false;
  for (const version of added) {
    let v = version;
    for (const { rule, matches } of addedRules) {
      if (!matches(v)) continue;
      v = await act(tx, rule.action as RuleAction, v, toBuild);
      await record(tx, rule, v);
      recorded = true;
    }
  }
  // Read after the added versions' rules, which may have set it.
  let defaultVersion: string | undefined;
  for (const v of gone) {
    const rule = deleteRules.find((r) => r.matches(v))?.rule;
    if (!rule) continue;
    defaultVersion ??= (await tx.project.findUniqueOrThrow({ where: { id: projectId }, select: { defaultVersion: true } })).defaultVersion;
    if (defaultVersion === v.slug) continue;
    await record(tx, rule, v);
    recorded = true;
    await tx.version.delete({ where: { id: v.id } });
    done.deleted.push(v.slug);
  }
  if (recorded) await keepLatestMatches(tx, projectId);
  done.toBuild = [...toBuild.values()].filter((v) => v.active && !v.built);
  return done;
}

/** One action on `v`; answers the version as it now is. */
async function act(tx: Tx, action: RuleAction, v: Version, toBuild: Map<number, Version>): Promise<Version> {
  const update = async (data: Prisma.VersionUpdateInput) => {
    const updated = await tx.version.update({ where: { id: v.id }, data });
    if (updated.active) toBuild.set(updated.id, updated);
    return updated;
  };
  switch (action) {
    case 'activate-version':
      return update({ active: true });
    // Read the Docs activates a version it hides, and one it makes the default.
    case 'hide-version':
      return update({ hidden: true, active: true });
    case 'set-default-version': {
      const updated = await update({ active: true });
      await tx.project.update({ where: { id: v.projectId }, data: { defaultVersion: v.slug } });
      return updated;
    }
    case 'make-version-public':
      return update({ privacyLevel: 'public' });
    case 'make-version-private':
      return update({ privacyLevel: 'private' });
    default:
      throw new Error(`${invalidChoice(action)} (an action on added versions)`);
  }
}

async function record(tx: Tx, rule: AutomationRule, v: Version): Promise<void> {
  await tx.automationRuleMatch.create({
    data: { ruleId: rule.id, versionName: v.verboseName, versionType: v.type, matchArg: patternOf(rule), action: rule.action },
  });
}

/** Keeps the project's last MATCHES_KEPT applications: once a sync's rules have run, not after each one. */
async function keepLatestMatches(tx: Tx, projectId: number): Promise<void> {
  const old = await tx.automationRuleMatch.findMany({
    where: { rule: { projectId } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: MATCHES_KEPT,
    select: { id: true },
  });
  if (old.length) await tx.automationRuleMatch.deleteMany({ where: { id: { in: old.map((m) => m.id) } } });
}
