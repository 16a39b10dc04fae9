import type { IncomingMessage, ServerResponse } from 'node:http';
import { actRandomly } from './activity.js';
import { ApiError } from './errors.js';
import { send } from './server.js';
import type { SimWorkspaceRuntime } from './workspace.js';

/** The path prefix of a workspace: `/w/<id>`. */
export const WORKSPACE_PREFIX = '/w/';

/**
 * Routes every request of the one HTTP server to its workspace: `/w/<id>/...` to the workspace of
 * that id with the prefix taken off, anything else to the root workspace (the single-workspace
 * form) or, when there is none, a 404 that says where the workspaces are. Keys are per workspace,
 * so one workspace's key on another's path is a 401 like any unknown key.
 */
export class WorkspaceRouter {
  private readonly byId = new Map<string, SimWorkspaceRuntime>();

  constructor(
    /** Serve each workspace's `/_control` surface. */
    private readonly control: boolean,
    private readonly root: SimWorkspaceRuntime | undefined,
    workspaces: readonly SimWorkspaceRuntime[],
  ) {
    for (const ws of workspaces) {
      if (this.byId.has(ws.settings.id)) throw new RangeError(`simulator workspace id ${JSON.stringify(ws.settings.id)} is given twice`);
      this.byId.set(ws.settings.id, ws);
    }
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    if (url.startsWith(WORKSPACE_PREFIX)) {
      const end = url.slice(WORKSPACE_PREFIX.length).search(/[/?]/);
      const id = end < 0 ? url.slice(WORKSPACE_PREFIX.length) : url.slice(WORKSPACE_PREFIX.length, WORKSPACE_PREFIX.length + end);
      const ws = this.byId.get(id);
      if (ws) {
        const rest = end < 0 ? '/' : url.slice(WORKSPACE_PREFIX.length + end);
        this.dispatch(ws, req, res, rest.startsWith('?') ? `/${rest}` : rest);
        return;
      }
      if (!this.root) {
        notFound(res, `No workspace ${JSON.stringify(id)} on this simulator; ${this.where()}`);
        return;
      }
    }
    if (this.root) {
      this.dispatch(this.root, req, res, url);
      return;
    }
    const path = url.split('?')[0];
    if (this.control && req.method === 'GET' && path === '/_control/workspaces') {
      const list = [...this.byId.values()].map((ws) => ({
        id: ws.settings.id,
        path: `${WORKSPACE_PREFIX}${ws.settings.id}`,
        generated: ws.generated,
      }));
      send(res, 200, JSON.stringify({ workspaces: list }));
      return;
    }
    notFound(res, `No such path; ${this.where()}`);
  }

  private where(): string {
    return `this simulator serves ${this.byId.size} workspace(s), each under ${WORKSPACE_PREFIX}<id>/api/v1.`;
  }

  private dispatch(ws: SimWorkspaceRuntime, req: IncomingMessage, res: ServerResponse, url: string): void {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path === '/_control' || path.startsWith('/_control/')) {
      if (this.control) ws.serveControl(req, res, path);
      else notFound(res, 'No such path.');
      return;
    }
    ws.serveApi(req, res, url);
  }
}

function notFound(res: ServerResponse, message: string): void {
  send(res, 404, new ApiError(404, 'not_found', message).body());
}

interface Owed {
  ws: SimWorkspaceRuntime;
  rate: number;
  owed: number;
  last: number;
}

/**
 * Live activity of every workspace on one timer, so a thousand workspaces cost one interval, not
 * a thousand. Each workspace owes `activity` writes per second from its generation; fractional
 * writes carry over between ticks. The timer ticks as often as the busiest workspace needs
 * (every 1000/rate ms, between 20 ms and 1 s).
 */
export class ActivityTicker {
  private readonly entries: Owed[] = [];
  private timer: NodeJS.Timeout | undefined;
  private intervalMs = 0;
  private closed = false;

  /** Starts a just-generated workspace's activity (nothing when its rate is 0). */
  add(ws: SimWorkspaceRuntime): void {
    const rate = ws.settings.activity;
    if (!(rate > 0) || this.closed) return;
    this.entries.push({ ws, rate, owed: 0, last: ws.activitySince });
    const interval = Math.max(20, Math.min(1000, Math.floor(1000 / rate)));
    if (this.timer && interval >= this.intervalMs) return;
    if (this.timer) clearInterval(this.timer);
    this.intervalMs = interval;
    this.timer = setInterval(() => this.tick(), interval);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    for (const e of this.entries) {
      e.owed += ((now - e.last) / 1000) * e.rate;
      e.last = now;
      const n = Math.floor(e.owed);
      e.owed -= n;
      if (n > 0) actRandomly(e.ws.world, n);
    }
  }

  stop(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
