import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Simulator, SimulatorOptions } from './types.js';
import { workspaceSettings, SimWorkspaceRuntime } from './workspace.js';
import type { MultiSimulator, MultiSimulatorOptions, SimulatorWorkspace, WorkspaceOptions } from './workspace-types.js';
import { ActivityTicker, WORKSPACE_PREFIX, WorkspaceRouter } from './workspaces.js';

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
export type { MultiSimulator, MultiSimulatorOptions, SimulatorWorkspace, WorkspaceOptions } from './workspace-types.js';
export { defaultFaults } from './faults-config.js';
export { STATUSES, PRIORITIES, TICKET_FIELDS, DEAL_FIELDS, UNLISTED_STATUSES, UNLISTED_PRIORITIES } from './catalog.js';
export { DIALECT_ENV, DIALECT_VALUES, SIMULATOR_DIALECTS, defaultDialect, dialectPreset, randomDialect } from './dialect.js';

/**
 * Generates a seeded workspace and serves the workspace API (docs/upstream.md) over HTTP until
 * close(). Prints nothing. With `workspaces`, serves each of them under its own `/w/<id>` prefix
 * (docs/simulator.md, "Many workspaces").
 */
export function startSimulator(options?: SimulatorOptions & { workspaces?: undefined }): Promise<Simulator>;
export function startSimulator(options: MultiSimulatorOptions): Promise<MultiSimulator>;
export async function startSimulator(options: SimulatorOptions | MultiSimulatorOptions = {}): Promise<Simulator | MultiSimulator> {
  const startedAt = performance.now();
  const ticker = new ActivityTicker();
  const onGenerated = (ws: SimWorkspaceRuntime) => ticker.add(ws);
  if (!('workspaces' in options) || options.workspaces === undefined) {
    const root = new SimWorkspaceRuntime(workspaceSettings('', options, { 'test-key': '' }), startedAt, onGenerated);
    // The single workspace is generated at once, as it always was: its size and timing are the caller's to see.
    const control = root.control;
    const served = await serve(new WorkspaceRouter(options.control ?? false, root, []), options, ticker);
    return { url: served.url, port: served.port, control, close: served.close };
  }
  const { workspaces, ...defaults } = options;
  const runtimes = workspaces.map(
    (ws, i) =>
      new SimWorkspaceRuntime(workspaceSettings(ws.id, mergeWorkspace(defaults, ws, i), { [`key-${ws.id}`]: '' }), startedAt, onGenerated),
  );
  const served = await serve(new WorkspaceRouter(options.control ?? false, undefined, runtimes), options, ticker);
  const handles = runtimes.map((rt) => handle(rt, `${served.url}${WORKSPACE_PREFIX}${rt.settings.id}`));
  return {
    url: served.url,
    port: served.port,
    workspaces: handles,
    workspace(id: string): SimulatorWorkspace {
      const found = handles.find((h) => h.id === id);
      if (!found)
        throw new RangeError(`no simulator workspace ${JSON.stringify(id)}; workspaces are ${handles.map((h) => h.id).join(', ')}`);
      return found;
    },
    close: served.close,
  };
}

/** A workspace's options over the server-wide ones; faults and dialect merge key by key. */
function mergeWorkspace(defaults: Omit<MultiSimulatorOptions, 'workspaces'>, ws: WorkspaceOptions, index: number): SimulatorOptions {
  const merged: SimulatorOptions = { ...defaults, ...ws, seed: ws.seed ?? (defaults.seed ?? 1) + index };
  if (defaults.faults || ws.faults) merged.faults = { ...defaults.faults, ...ws.faults };
  if (defaults.dialect || ws.dialect) merged.dialect = { ...defaults.dialect, ...ws.dialect };
  if (ws.apiKeys === undefined && ws.apiKey !== undefined) merged.apiKeys = { [ws.apiKey]: '' };
  return merged;
}

function handle(rt: SimWorkspaceRuntime, baseUrl: string): SimulatorWorkspace {
  const keys = rt.settings.apiKeys.map(([key]) => key);
  return {
    id: rt.settings.id,
    baseUrl,
    apiKey: keys[0] as string,
    apiKeys: keys,
    get generated() {
      return rt.generated;
    },
    get control() {
      return rt.control;
    },
  };
}

/** Listens on `host:port` (default 127.0.0.1, an ephemeral port) until close(). */
async function serve(
  router: WorkspaceRouter,
  options: SimulatorOptions,
  ticker: ActivityTicker,
): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const server: Server = createServer({ keepAlive: true }, (req, res) => router.handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => {
      ticker.stop();
      reject(err);
    });
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: (): Promise<void> => {
      closing ??= new Promise<void>((resolve) => {
        ticker.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
