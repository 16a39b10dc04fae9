import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoggedRequest {
  /** performance.now() when the request arrived: the server's own clock, not the test's sleeps. */
  at: number;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => unknown;

export interface Fixture {
  url: string;
  log: LoggedRequest[];
  /** Highest number of requests the server was handling at once. */
  peakInFlight: () => number;
  close: () => Promise<void>;
}

/** A tiny real HTTP server for the client's integration tests (until the simulator exists). */
export async function startFixture(handler: Handler): Promise<Fixture> {
  const log: LoggedRequest[] = [];
  let inFlight = 0;
  let peak = 0;
  const server = createServer((req, res) => {
    log.push({ at: performance.now(), method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    inFlight++;
    peak = Math.max(peak, inFlight);
    const done = () => {
      inFlight--;
    };
    res.on('close', done);
    void Promise.resolve(handler(req, res, log.length)).catch((err: unknown) => {
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    peakInFlight: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
