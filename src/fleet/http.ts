import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { bearerGate, PAGE_CSP, renderPage } from '../daemon/index.js';
import type { Logger } from '../log/index.js';
import type { FleetMetrics } from './metrics.js';
import { renderFleetPage } from './page.js';
import { readWorkspace } from './rows.js';
import { readFleetStatus, type WorkspaceStatus } from './status.js';
import { notCreated, workspaceReport, workspaceSnapshot, type WorkspaceReader } from './workspace-page.js';

export interface FleetHttpOptions {
  host: string;
  port: number;
  authToken?: string | undefined;
  pool: pg.Pool;
  metrics: FleetMetrics;
  logger: Logger;
  /** Reads a workspace's own mirror for its page, on connections of its own. */
  reader: WorkspaceReader;
  /** Liveness: false once the worker lost its queue or database. */
  alive: () => boolean;
  /** Readiness: true once the worker reconciled the fleet file and joined the queue, false again once it stops. */
  ready: () => boolean;
}

/**
 * The worker's HTTP server: the fleet page, /fleet.json, /workspaces/<id>, /metrics, /healthz,
 * /readyz. The token rule is the daemon's (`bearerGate`): every path but /healthz needs it.
 */
export async function startFleetHttp(o: FleetHttpOptions): Promise<Server> {
  const allowed = bearerGate(o.authToken);
  const server = createServer((req, res) => {
    void route(o, allowed, req.url ?? '/', req.headers.authorization)
      .then(({ status, type, body }) => {
        const csp = type.startsWith('text/html') ? { 'content-security-policy': PAGE_CSP } : {};
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...csp });
        res.end(body);
      })
      .catch((err: unknown) => {
        o.logger.warn({ err }, 'fleet page failed');
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('the fleet database could not be read; see the worker log\n');
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  o.logger.info({ host: o.host, port: typeof address === 'object' && address ? address.port : o.port }, 'fleet page listening');
  return server;
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

async function route(
  o: FleetHttpOptions,
  allowed: (path: string, authorization: string | undefined) => boolean,
  url: string,
  authorization: string | undefined,
): Promise<Reply> {
  const { pathname, searchParams } = new URL(url, 'http://x');
  if (!allowed(pathname, authorization)) return text(401, 'send Authorization: Bearer <http.authToken>\n');
  if (pathname === '/healthz') return o.alive() ? text(200, 'ok\n') : text(503, 'the worker lost its database or queue\n');
  if (pathname === '/readyz') return readiness(o);
  const status = await readFleetStatus(o.pool);
  if (pathname === '/')
    return { status: 200, type: 'text/html; charset=utf-8', body: renderFleetPage(status, searchParams.get('sort') ?? 'staleness') };
  if (pathname === '/fleet.json') return { status: 200, type: 'application/json', body: JSON.stringify(status) };
  if (pathname === '/metrics') return { status: 200, type: o.metrics.registry.contentType, body: await o.metrics.render(status, o.pool) };
  const m = /^\/workspaces\/([^/]+?)(\/status\.json)?$/.exec(pathname);
  const one = m ? status.workspaces.find((w) => w.id === decodeURIComponent(m[1]!)) : undefined;
  if (!m || !one) return text(404, 'not found\n');
  return workspacePage(o, one, m[2] !== undefined);
}

/** A workspace's own status page, or its JSON: the mirror in its schema read on the reader's connections. */
async function workspacePage(o: FleetHttpOptions, w: WorkspaceStatus, json: boolean): Promise<Reply> {
  const view = { ...w, settings: (await readWorkspace(o.pool, w.id))?.settings ?? {} };
  if (json) {
    const report = await workspaceReport(o.reader, view).catch((err: unknown) => {
      if (notCreated(err)) return null;
      throw err;
    });
    if (report === null) return text(503, `workspace ${w.id} has no mirror yet: no slice has created it in schema "${w.schema}"\n`);
    return { status: 200, type: 'application/json', body: JSON.stringify(report) };
  }
  return { status: 200, type: 'text/html; charset=utf-8', body: renderPage(await workspaceSnapshot(o.reader, view)) };
}

function text(status: number, body: string): Reply {
  return { status, type: 'text/plain; charset=utf-8', body };
}

function readiness(o: FleetHttpOptions): Reply {
  if (!o.alive()) return text(503, 'not ready: the worker lost its database or queue\n');
  if (!o.ready()) return text(503, 'not ready: the worker is starting (reconciling the fleet file, joining the queue) or stopping\n');
  return text(200, 'ready\n');
}
