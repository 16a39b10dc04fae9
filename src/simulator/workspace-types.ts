import type { SimulatorControl, SimulatorOptions } from './types.js';

/**
 * Public contracts of a simulator serving many workspaces from one process (docs/simulator.md,
 * "Many workspaces"). Each workspace lives under its own path prefix, `/w/<id>`, so its base
 * address is `<server>/w/<id>` and its API `<server>/w/<id>/api/v1/...`.
 */

/** The options of one workspace; any option not given here comes from the server-wide option of the same name. */
export interface WorkspaceOptions extends Omit<SimulatorOptions, 'host' | 'port' | 'control'> {
  /** The workspace's name in its path, `/w/<id>`: 1 to 63 letters, digits, `_`, `.` or `-`, starting with a letter or digit. Required. */
  id: string;
  /**
   * One accepted API key, for the workspace owner (shorthand for `apiKeys: { [apiKey]: '' }`).
   * Default, when neither this nor `apiKeys` is given: `key-<id>`.
   */
  apiKey?: string;
}

/** `startSimulator` options for many workspaces: every option besides `workspaces` is a default for each workspace. */
export interface MultiSimulatorOptions extends Omit<SimulatorOptions, 'apiKeys'> {
  /**
   * The workspaces served, each under `/w/<id>`. A workspace's `seed` defaults to the server-wide
   * `seed` (default 1) plus its position in this list, so no two share their data by accident.
   * Generated on first use (a request, or a call on its `control`); `activity` runs from then.
   */
  workspaces: WorkspaceOptions[];
}

/** One workspace of a running simulator. */
export interface SimulatorWorkspace {
  readonly id: string;
  /** The workspace's base address, `<server>/w/<id>` (what wsmirror's `baseUrl` names; the API is under it at `/api/v1`). */
  readonly baseUrl: string;
  /** The first accepted API key. */
  readonly apiKey: string;
  /** Every accepted API key. */
  readonly apiKeys: readonly string[];
  /** Whether the workspace has been generated yet (it is, at its first request or control call). */
  readonly generated: boolean;
  /** This workspace's control handle; reading it generates the workspace. Its request log holds paths without the `/w/<id>` prefix. */
  readonly control: SimulatorControl;
}

/** A simulator serving many workspaces. */
export interface MultiSimulator {
  /** The server's own address, e.g. `http://127.0.0.1:43127` (no workspace serves there). */
  url: string;
  port: number;
  /** Every workspace, in the order given. */
  workspaces: readonly SimulatorWorkspace[];
  /** The workspace of this id; throws a RangeError naming the ids when there is none. */
  workspace(id: string): SimulatorWorkspace;
  /** Stops activity and timers, closes the server and every open socket. */
  close(): Promise<void>;
}
