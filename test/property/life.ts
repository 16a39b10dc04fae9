/* eslint-disable @typescript-eslint/no-explicit-any */
import fc from 'fast-check';
import type { Simulator } from '../../src/simulator/index.js';

/**
 * A workspace life for the property test: a list of steps a team could take through the public
 * API, drawn by fast-check and shrunk by it. Steps name records by index (modulo the records that
 * exist then), so any shrunk list is still a life; a step that names nothing, or that the
 * workspace refuses, does nothing.
 */
export type Step =
  | { do: 'ticket'; assignee: number | null; priority: number; team: number | null }
  | { do: 'reply'; t: number; internal: boolean; status: number | null }
  | {
      do: 'patchTicket';
      t: number;
      status: number | null;
      priority: number | null;
      assignee: number | null | 'none';
      team: number | null | 'none';
    }
  | { do: 'subject'; t: number }
  | { do: 'hideTicket'; t: number; reason: 'deleted' | 'spam' | 'merged' }
  | { do: 'deal'; pipeline: number; amount: number | null; currency: 'EUR' | 'USD'; owner: number }
  | { do: 'move'; d: number; stage: number }
  | {
      do: 'patchDeal';
      d: number;
      amount: number | null | 'none';
      currency: 'EUR' | 'USD' | 'none';
      closeDay: number | null | 'none';
      owner: number | 'none';
    }
  | { do: 'deleteDeal'; d: number }
  | { do: 'wait'; minutes: number }
  | { do: 'sync' };

const idx = fc.nat({ max: 7 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const orNone = <T>(a: fc.Arbitrary<T>) => fc.oneof(fc.constant('none' as const), a);

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ do: fc.constant('ticket' as const), assignee: maybe(idx), priority: fc.nat({ max: 3 }), team: maybe(idx) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ do: fc.constant('reply' as const), t: idx, internal: fc.boolean(), status: maybe(fc.nat({ max: 4 })) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      do: fc.constant('patchTicket' as const),
      t: idx,
      status: maybe(fc.nat({ max: 4 })),
      priority: maybe(fc.nat({ max: 3 })),
      assignee: orNone(maybe(idx)),
      team: orNone(maybe(idx)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('subject' as const), t: idx }) },
  {
    weight: 1,
    arbitrary: fc.record({ do: fc.constant('hideTicket' as const), t: idx, reason: fc.constantFrom('deleted', 'spam', 'merged') }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      do: fc.constant('deal' as const),
      pipeline: fc.nat({ max: 1 }),
      amount: maybe(fc.integer({ min: 0, max: 500_000 })),
      currency: fc.constantFrom('EUR', 'USD'),
      owner: idx,
    }),
  },
  { weight: 4, arbitrary: fc.record({ do: fc.constant('move' as const), d: idx, stage: fc.nat({ max: 9 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      do: fc.constant('patchDeal' as const),
      d: idx,
      amount: orNone(maybe(fc.integer({ min: 0, max: 500_000 }))),
      currency: orNone(fc.constantFrom('EUR' as const, 'USD' as const)),
      closeDay: orNone(maybe(fc.nat({ max: 400 }))),
      owner: orNone(idx),
    }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('deleteDeal' as const), d: idx }) },
  { weight: 4, arbitrary: fc.record({ do: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 3 * 24 * 60 }) }) },
  { weight: 3, arbitrary: fc.constant({ do: 'sync' as const }) },
);

/** Ten numbers in [0, 1), read in turn by `randomDialect`; they shrink towards 0, the default dialect. */
export const dialectDrawsArb = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 10, maxLength: 10 });

/**
 * The live mirror's page size and the simulator's `removeServedAtPage` fault during its backfill:
 * records served leave the list. Shrinks to one page of 100 and no fault.
 */
export const pagingArb = fc.record({
  pageSize: fc.constantFrom(100, 1, 2, 3),
  removeServedAtPage: fc.constantFrom(0, 2, 3),
  removeServedCount: fc.integer({ min: 1, max: 2 }),
});

export const lifeArb = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  dialect: dialectDrawsArb,
  paging: pagingArb,
  steps: fc.array(stepArb, { minLength: 1, maxLength: 30 }),
});

export type Paging = { pageSize: number; removeServedAtPage: number; removeServedCount: number };
export type Life = { seed: number; dialect: number[]; paging: Paging; steps: Step[] };

/** A generator over fixed draws, for `randomDialect`. */
export function drawsRng(draws: readonly number[]): () => number {
  let i = 0;
  return () => draws[i++ % draws.length] ?? 0;
}

const STATUSES = ['open', 'pending', 'on_hold', 'solved', 'closed'];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];

/** What the life runner needs of the world: the simulator, and a live sync to run on `sync` steps. */
export interface LifeTarget {
  sim: Simulator;
  sync(): Promise<void>;
  api(method: string, path: string, body?: unknown): Promise<any>;
}

/** Plays the steps; returns how many the workspace accepted (for the runs' figures). */
export async function play(target: LifeTarget, steps: readonly Step[], teams: readonly string[]): Promise<number> {
  const { sim } = target;
  const api = (method: string, path: string, body?: unknown) => target.api(method, path, body);
  const at = <T>(list: readonly T[], i: number): T | undefined => (list.length === 0 ? undefined : list[i % list.length]);
  const truth = () => sim.control.truth() as any;
  const members = (truth().members as any[]).map((m) => m.id as string);
  const pipelines = truth().pipelines as any[];
  const tickets = () => (truth().tickets as any[]).map((t) => t.id as string);
  const deals = () => (truth().deals as any[]).map((d) => ({ id: d.id as string, pipeline: d.pipeline.id as string }));
  let accepted = 0;
  let n = 0;
  for (const s of steps) {
    n++;
    try {
      switch (s.do) {
        case 'ticket': {
          const body: any = { subject: `life ${n}`, body: 'help', email: `c${n}@example.com`, priority: PRIORITIES[s.priority] };
          if (s.assignee !== null) body.assigneeId = at(members, s.assignee);
          if (s.team !== null && teams.length > 0) body.teamId = at(teams, s.team);
          await api('POST', '/tickets', body);
          break;
        }
        case 'reply': {
          const t = at(tickets(), s.t);
          if (!t) continue;
          const body: any = { body: `reply ${n}`, internal: s.internal };
          if (s.status !== null) body.status = STATUSES[s.status];
          await api('POST', `/tickets/${t}/messages`, body);
          break;
        }
        case 'patchTicket': {
          const t = at(tickets(), s.t);
          if (!t) continue;
          const body: any = {};
          if (s.status !== null) body.status = STATUSES[s.status];
          if (s.priority !== null) body.priority = PRIORITIES[s.priority];
          if (s.assignee !== 'none') body.assigneeId = s.assignee === null ? null : at(members, s.assignee);
          if (s.team !== 'none' && teams.length > 0) body.teamId = s.team === null ? null : at(teams, s.team);
          if (Object.keys(body).length === 0) continue;
          await api('PATCH', `/tickets/${t}`, body);
          break;
        }
        case 'subject': {
          const t = at(tickets(), s.t);
          if (!t) continue;
          await api('PATCH', `/tickets/${t}`, { subject: `renamed ${n}` });
          break;
        }
        case 'hideTicket': {
          const t = at(tickets(), s.t);
          if (!t) continue;
          sim.control.hideTicket(t, s.reason);
          break;
        }
        case 'deal': {
          const p = at(pipelines, s.pipeline);
          const amount = s.amount === null ? null : (s.amount / 100).toFixed(2);
          await api('POST', '/deals', { name: `deal ${n}`, amount, currency: s.currency, ownerId: at(members, s.owner), pipelineId: p.id });
          break;
        }
        case 'move': {
          const d = at(deals(), s.d);
          if (!d) continue;
          const stages = pipelines.find((p) => p.id === d.pipeline).stages as any[];
          await api('PATCH', `/deals/${d.id}`, { stage: at(stages, s.stage).id });
          break;
        }
        case 'patchDeal': {
          const d = at(deals(), s.d);
          if (!d) continue;
          const body: any = {};
          if (s.amount !== 'none') body.amount = s.amount === null ? null : (s.amount / 100).toFixed(2);
          if (s.currency !== 'none') body.currency = s.currency;
          if (s.closeDay !== 'none')
            body.closeDate =
              s.closeDay === null ? null : new Date(Date.UTC(2024, 0, 1) + s.closeDay * 86_400_000).toISOString().slice(0, 10);
          if (s.owner !== 'none') body.ownerId = at(members, s.owner);
          if (Object.keys(body).length === 0) continue;
          await api('PATCH', `/deals/${d.id}`, body);
          break;
        }
        case 'deleteDeal': {
          const d = at(deals(), s.d);
          if (!d) continue;
          await api('DELETE', `/deals/${d.id}`);
          break;
        }
        case 'wait':
          sim.control.advanceClock(s.minutes * 60_000);
          continue;
        case 'sync':
          await target.sync();
          continue;
      }
      accepted++;
    } catch (err) {
      // The workspace refused the step (a 4xx, e.g. a move the workflow forbids): the life goes on.
      if (!(err instanceof RefusedError)) throw err;
    }
    // Every write takes a little time, so the log's order is the order of the steps.
    sim.control.advanceClock(1000);
  }
  return accepted;
}

/** A 4xx answer of the simulator to a step: the workspace refused it. */
export class RefusedError extends Error {}

/** One call to the simulator's API as a user would make it; a 4xx throws RefusedError, anything else unexpected throws. */
export async function callApi(sim: Simulator, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sim.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 400 && res.status < 500) throw new RefusedError(`${method} ${path}: ${res.status} ${text}`);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}
