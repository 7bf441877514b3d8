// Heavy operations take turns. The cost limit bounds what one operation may do; it does not bound
// how many run at once, and on one event loop four clients sending the heaviest operation the limit
// allows, again and again, keep enough work queued that /healthz and docs pages wait behind it
// (p99 over 250 ms on this machine). Here an operation costing more than a small one waits until
// the operations already running leave room in a budget (one limit's worth of cost), first come
// first served: the heaviest operations run one at a time, the work queued ahead of a docs request
// stays about one operation's step, and small operations (a page, a project) never wait.
import { complexityFromQuery } from '@pothos/plugin-complexity';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { isExemptFromCostLimit } from './builder.ts';
import { refusingControlCharacters } from './input-rule.ts';

/** Operations costing at most this share of the limit run without waiting. */
const SMALL_SHARE = 0.05;

/** A budget of cost shared first come, first served: `take(cost)` resolves when `cost` fits. */
export class CostBudget {
  #inUse = 0;
  readonly #waiting: { cost: number; go: () => void }[] = [];
  readonly capacity: number;
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  async take(cost: number): Promise<() => void> {
    const c = Math.min(cost, this.capacity);
    if (this.#waiting.length || this.#inUse + c > this.capacity) await new Promise<void>((go) => this.#waiting.push({ cost: c, go }));
    else this.#inUse += c;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse -= c;
      this.#admit();
    };
  }

  #admit(): void {
    while (this.#waiting.length && this.#inUse + this.#waiting[0]!.cost <= this.capacity) {
      const next = this.#waiting.shift()!;
      this.#inUse += next.cost;
      next.go();
    }
  }
}

/**
 * The yoga plugin: operations over the small share wait for room in the budget before they
 * execute. It brings the other admission rule with it: an operation whose strings hold control
 * characters is refused before it runs (input-rule.ts), on /graphql and the REST adapter alike.
 */
export function takingTurnsByCost(schema: GraphQLSchema, maxComplexity: () => number): Plugin {
  let budget: CostBudget | undefined;
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(refusingControlCharacters());
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const max = maxComplexity();
      if (budget?.capacity !== max) budget = new CostBudget(max);
      const context = args.contextValue as object;
      if (isExemptFromCostLimit(context)) return;
      let cost: number;
      try {
        cost = complexityFromQuery(args.document, { schema, ctx: context, variables: args.variableValues ?? {} }).complexity;
      } catch {
        return; // an operation the cost model can't read is refused by the limit as it starts
      }
      // Too costly: refused as it starts, at no cost, so it need not wait. Small: runs at once.
      if (cost > max || cost <= max * SMALL_SHARE) return;
      const mine = budget;
      setExecuteFn(async (a) => {
        const release = await mine.take(cost);
        try {
          return await executeFn(a);
        } finally {
          release();
        }
      });
    },
  };
}
