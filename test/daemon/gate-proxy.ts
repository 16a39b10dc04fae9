import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A loopback proxy in front of the simulator for the status page test. It can hold requests (the
 * daemon then stays in the state the test wants to look at, however slow the machine), and it
 * rewrites fields of chosen records in every answer that carries them (upstream-provided strings
 * the page must show as text). The simulator stays the upstream of record.
 */
export interface GateProxy {
  url: string;
  /** Requests seen, in order (path and query). */
  log: string[];
  /** Requests waiting behind the gate now. */
  readonly waiting: number;
  /** From the first request for which `when` is true on (default: the next one), requests wait until release(). */
  holdWhen(when?: (path: string) => boolean): void;
  release(): void;
  close(): Promise<void>;
}

/** `patches`: record id → fields written over that record wherever an answer holds it. */
export async function startGateProxy(upstream: string, patches: Record<string, Record<string, unknown>>): Promise<GateProxy> {
  const log: string[] = [];
  let trigger: ((path: string) => boolean) | null = null;
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  let waiting = 0;
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    log.push(path);
    if (gate === null && trigger?.(path)) {
      trigger = null;
      gate = new Promise((resolve) => (open = resolve));
    }
    const pending = gate;
    const go = () => forward(req, res, upstream, patches).catch(() => res.destroy());
    if (pending === null) return void go();
    waiting++;
    void pending.then(() => {
      waiting--;
      void go();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    get waiting() {
      return waiting;
    },
    holdWhen(when = () => true) {
      trigger = when;
    },
    release() {
      trigger = null;
      gate = null;
      open();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  upstream: string,
  patches: Record<string, Record<string, unknown>>,
): Promise<void> {
  const target = new URL(req.url ?? '/', upstream);
  const answer = await new Promise<IncomingMessage>((resolve, reject) => {
    const out = request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, resolve);
    out.on('error', reject);
    req.pipe(out);
  });
  const chunks: Buffer[] = [];
  for await (const chunk of answer) chunks.push(chunk as Buffer);
  let body = Buffer.concat(chunks);
  if (String(answer.headers['content-type'] ?? '').includes('json') && body.length > 0) {
    const json: unknown = JSON.parse(body.toString('utf8'));
    if (patch(json, patches)) body = Buffer.from(JSON.stringify(json));
  }
  const headers = { ...answer.headers, 'content-length': String(body.length) };
  delete headers['transfer-encoding'];
  res.writeHead(answer.statusCode ?? 502, headers);
  res.end(body);
}

/** Overwrites the fields of every object whose `id` is patched; true when something changed. */
function patch(value: unknown, patches: Record<string, Record<string, unknown>>): boolean {
  if (Array.isArray(value)) return value.map((v) => patch(v, patches)).some(Boolean);
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  let changed = false;
  const fields = typeof record.id === 'string' ? patches[record.id] : undefined;
  if (fields) {
    Object.assign(record, fields);
    changed = true;
  }
  for (const v of Object.values(record)) changed = patch(v, patches) || changed;
  return changed;
}
