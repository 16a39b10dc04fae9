import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startActivity } from './activity.js';
import { createControlHandler } from './control-http.js';
import { createControl } from './control.js';
import { startingDialect } from './dialect.js';
import { mergeFaults } from './faults-config.js';
import { FaultInjector } from './faults.js';
import { generateWorkspace } from './generator.js';
import { RequestLog } from './request-log.js';
import { createHandler } from './server.js';
import type { Simulator, SimulatorOptions } from './types.js';
import { simKinds } from './kinds.js';
import { World } from './world.js';

export { registerSimKind, type SimKind } from './kinds.js';
export type { Listed as SimRecord } from './model.js';
export type { World as SimWorld } from './world.js';
export type {
  ActivityRecord,
  CorruptionKind,
  DialectOptions,
  FailNextRule,
  FaultConfig,
  HideReason,
  InjectedEvent,
  RequestLogEntry,
  Simulator,
  SimulatorControl,
  SimulatorOptions,
  Truth,
  TruthChange,
} from './types.js';
export { defaultFaults } from './faults-config.js';
export { STATUSES, PRIORITIES, TICKET_FIELDS, DEAL_FIELDS, UNLISTED_STATUSES, UNLISTED_PRIORITIES } from './catalog.js';
export { DIALECT_ENV, DIALECT_VALUES, SIMULATOR_DIALECTS, defaultDialect, dialectPreset, randomDialect } from './dialect.js';

const DAY = 86_400_000;

function count(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`simulator option ${name} must be a whole number >= 0, got ${String(value)}`);
  return n;
}

/** Generates a seeded workspace and serves the workspace API (docs/upstream.md) over HTTP until close(). Prints nothing. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = count('seed', options.seed, 1);
  const startMs = options.startTime ? options.startTime.getTime() : Date.now();
  if (Number.isNaN(startMs)) throw new RangeError('simulator option startTime is not a valid date');
  const world = new World(
    {
      seed,
      startMs,
      realTime: options.realTime ?? true,
      autoAssignOnReply: options.autoAssignOnReply ?? true,
      autoCloseSolvedAfterMs: options.autoCloseSolvedAfterMs ?? 4 * DAY,
      dialect: startingDialect(options.dialect),
    },
    simKinds(),
  );
  if (options.faults) mergeFaults(world.faults, options.faults);
  generateWorkspace(
    world,
    {
      tickets: count('tickets', options.tickets, 50),
      deals: count('deals', options.deals, 20),
      pipelines: Math.max(1, count('pipelines', options.pipelines, 2)),
      members: Math.max(1, count('members', options.members, 8)),
    },
    seed,
  );

  const first = world.memberList[0]?.id as string;
  const apiKeys = new Map<string, string>();
  for (const [key, memberId] of Object.entries(options.apiKeys ?? { 'test-key': first })) {
    // An empty member id means "the workspace owner" (the first member), so a CLI can just list keys.
    const id = memberId === '' ? first : memberId;
    if (!world.members.has(id))
      world.addMember({ id, name: 'API user', email: `${id.toLowerCase().replace(/[^a-z0-9._-]/g, '')}@workspace.example` });
    apiKeys.set(key, id);
  }

  const faults = new FaultInjector(world);
  const log = new RequestLog();
  const control = createControl(world, faults, log);
  const server: Server = createServer(
    { keepAlive: true },
    createHandler({ world, faults, apiKeys, log, control: options.control ? createControlHandler(control) : null }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const stopActivity = startActivity(world, options.activity ?? 0);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    control,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        stopActivity();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
