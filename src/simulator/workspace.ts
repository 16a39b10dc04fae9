import type { IncomingMessage, ServerResponse } from 'node:http';
import { createControlHandler } from './control-http.js';
import { createControl } from './control.js';
import { startingDialect } from './dialect.js';
import { defaultFaults, mergeFaults } from './faults-config.js';
import { FaultInjector } from './faults.js';
import { generateWorkspace, type GenerateCounts } from './generator.js';
import { RequestLog } from './request-log.js';
import { createHandler } from './server.js';
import type { FaultConfig, SimulatorControl, SimulatorOptions } from './types.js';
import { simKinds } from './kinds.js';
import { World, type WorldSettings } from './world.js';

const DAY = 86_400_000;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

function count(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`simulator option ${name} must be a whole number >= 0, got ${String(value)}`);
  return n;
}

/** Everything a workspace is made from, checked when the simulator starts so a bad option fails there, not at first use. */
export interface WorkspaceSettings extends WorldSettings {
  /** '' for the single workspace served at the server's root. */
  id: string;
  faults: FaultConfig;
  counts: GenerateCounts;
  /** API key -> member id; '' is the workspace owner (the first member). */
  apiKeys: [string, string][];
  /** Random writes per second. */
  activity: number;
}

/** Checks one workspace's options (already merged over the server-wide ones) into its settings. */
export function workspaceSettings(id: string, options: SimulatorOptions, defaultKeys: Record<string, string>): WorkspaceSettings {
  if (id !== '' && !ID.test(id))
    throw new RangeError(
      `simulator workspace id ${JSON.stringify(id)} must be 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit`,
    );
  const startMs = options.startTime ? options.startTime.getTime() : Date.now();
  if (Number.isNaN(startMs)) throw new RangeError('simulator option startTime is not a valid date');
  const faults = defaultFaults();
  if (options.faults) mergeFaults(faults, options.faults);
  const activity = options.activity ?? 0;
  if (!(activity >= 0) || !Number.isFinite(activity))
    throw new RangeError(`simulator option activity must be a number of writes per second >= 0, got ${String(activity)}`);
  const apiKeys = Object.entries(options.apiKeys ?? defaultKeys);
  if (apiKeys.length === 0) throw new RangeError(`simulator workspace ${JSON.stringify(id)} needs at least one API key`);
  return {
    id,
    seed: count('seed', options.seed, 1),
    startMs,
    realTime: options.realTime ?? true,
    autoAssignOnReply: options.autoAssignOnReply ?? true,
    autoCloseSolvedAfterMs: options.autoCloseSolvedAfterMs ?? 4 * DAY,
    dialect: startingDialect(options.dialect),
    faults,
    counts: {
      tickets: count('tickets', options.tickets, 50),
      deals: count('deals', options.deals, 20),
      pipelines: Math.max(1, count('pipelines', options.pipelines, 2)),
      members: Math.max(1, count('members', options.members, 8)),
    },
    apiKeys,
    activity,
  };
}

/** A generated workspace: its records and clock, faults, request log and handlers. */
interface Live {
  world: World;
  control: SimulatorControl;
  api: (req: IncomingMessage, res: ServerResponse, url: string) => void;
  controlHttp: (req: IncomingMessage, res: ServerResponse, path: string) => void;
  /** Accepted keys, to members. */
  keys: Map<string, string>;
}

/**
 * One workspace, generated on first use: a thousand idle workspaces cost their settings only.
 * `onGenerated` lets the server start the workspace's activity from that moment.
 */
export class SimWorkspaceRuntime {
  private live: Live | undefined;
  /** performance.now() at generation, for the activity ticker. */
  activitySince = 0;

  constructor(
    readonly settings: WorkspaceSettings,
    /** Simulated time already elapsed when the server started this long ago: a late generation keeps the clock where it would be. */
    private readonly serverStartedAt: number,
    private readonly onGenerated: (ws: SimWorkspaceRuntime) => void,
  ) {}

  get generated(): boolean {
    return this.live !== undefined;
  }

  get world(): World {
    return this.generate().world;
  }

  get control(): SimulatorControl {
    return this.generate().control;
  }

  /** Answers one API request; `url` is the path and query below the workspace's prefix. */
  serveApi(req: IncomingMessage, res: ServerResponse, url: string): void {
    this.generate().api(req, res, url);
  }

  /** Answers one control request; `path` starts with `/_control`. */
  serveControl(req: IncomingMessage, res: ServerResponse, path: string): void {
    this.generate().controlHttp(req, res, path);
  }

  private generate(): Live {
    if (this.live) return this.live;
    const s = this.settings;
    const elapsed = s.realTime ? Math.floor(performance.now() - this.serverStartedAt) : 0;
    // startMs is the clock's start before the time that passed between the server's start and this generation.
    const world = new World({ ...s, startMs: s.startMs + elapsed }, simKinds());
    mergeFaults(world.faults, s.faults);
    generateWorkspace(world, s.counts, s.seed);
    const keys = acceptKeys(world, s.apiKeys);
    const faults = new FaultInjector(world);
    const log = new RequestLog();
    const control = createControl(world, faults, log);
    this.live = {
      world,
      control,
      api: createHandler({ world, faults, apiKeys: keys, log }),
      controlHttp: createControlHandler(control),
      keys,
    };
    this.activitySince = performance.now();
    this.onGenerated(this);
    return this.live;
  }
}

/** Each key's member; an unknown member id becomes an extra member named "API user". */
function acceptKeys(world: World, given: [string, string][]): Map<string, string> {
  const first = world.memberList[0]?.id as string;
  const keys = new Map<string, string>();
  for (const [key, memberId] of given) {
    // An empty member id means "the workspace owner" (the first member), so a CLI can just list keys.
    const id = memberId === '' ? first : memberId;
    if (!world.members.has(id))
      world.addMember({ id, name: 'API user', email: `${id.toLowerCase().replace(/[^a-z0-9._-]/g, '')}@workspace.example` });
    keys.set(key, id);
  }
  return keys;
}
