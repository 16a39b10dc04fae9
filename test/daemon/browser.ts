import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * Debian's chromium, driven headless over the DevTools protocol on a pipe (--remote-debugging-pipe:
 * commands on fd 3, answers on fd 4, NUL-separated JSON), so the test needs no browser download
 * and no npm package. Root needs --no-sandbox; the other flags keep it off the network.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
  '--remote-debugging-pipe',
];

export const CHROMIUM = process.env.WSMIRROR_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Null when chromium can run here; else why not (the test prints it and skips). */
export function chromiumUnavailable(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)`;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-chromium-'));
  try {
    const r = spawnSync(
      CHROMIUM,
      [...FLAGS.filter((f) => f !== '--remote-debugging-pipe'), `--user-data-dir=${dir}`, '--dump-dom', 'data:text/html,<p>ok</p>'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    if (r.status === 0 && r.stdout.includes('<p>ok</p>')) return null;
    const why = r.error ? r.error.message : r.stderr.trim().split('\n').slice(-2).join(' ') || `exit ${r.status ?? r.signal}`;
    return `${CHROMIUM} does not start headless here: ${why}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

/** One headless browser with one page. */
export class Browser {
  /** Every JavaScript dialog (alert, confirm, prompt) the pages opened. */
  readonly dialogs: string[] = [];
  #next = 0;
  readonly #pending = new Map<number, (m: Message) => void>();
  #waiters: { method: string; resolve: () => void }[] = [];
  #session = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const out = child.stdio[4] as Readable;
    let buffer = '';
    out.on('data', (d: Buffer) => {
      buffer += d.toString('utf8');
      for (let i = buffer.indexOf('\0'); i >= 0; i = buffer.indexOf('\0')) {
        this.#receive(JSON.parse(buffer.slice(0, i)) as Message);
        buffer = buffer.slice(i + 1);
      }
    });
  }

  static async launch(width = 1280, height = 900): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'wsmirror-chromium-'));
    const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, `--window-size=${width},${height}`, 'about:blank'], {
      stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
    });
    const browser = new Browser(child, profile);
    const { targetInfos } = (await browser.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string }[] };
    const page = targetInfos.find((t) => t.type === 'page');
    if (!page) throw new Error('chromium opened no page');
    browser.#session = (
      (await browser.send('Target.attachToTarget', { targetId: page.targetId, flatten: true })) as { sessionId: string }
    ).sessionId;
    await browser.send('Page.enable', {}, true);
    await browser.send('Runtime.enable', {}, true);
    await browser.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false }, true);
    return browser;
  }

  /** Loads `url` and resolves once its load event fired. */
  async open(url: string): Promise<void> {
    const loaded = this.#event('Page.loadEventFired');
    const r = (await this.send('Page.navigate', { url }, true)) as { errorText?: string };
    if (r.errorText) throw new Error(`chromium could not open ${url}: ${r.errorText}`);
    await loaded;
  }

  /** The value of a JavaScript expression in the page (JSON-serialisable values only). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, returnByValue: true }, true)) as {
      result: { value?: T };
      exceptionDetails?: { text: string };
    };
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
    return r.result.value as T;
  }

  /** A PNG of the whole page, not only the window. */
  async screenshot(file: string): Promise<void> {
    const { cssContentSize } = (await this.send('Page.getLayoutMetrics', {}, true)) as {
      cssContentSize: { width: number; height: number };
    };
    const clip = { x: 0, y: 0, width: Math.ceil(cssContentSize.width), height: Math.ceil(cssContentSize.height), scale: 1 };
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png', clip, captureBeyondViewport: true }, true)) as {
      data: string;
    };
    writeFileSync(file, Buffer.from(data, 'base64'));
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.send('Browser.close').catch(() => this.child.kill('SIGKILL'));
    await exited;
    rmSync(this.profile, { recursive: true, force: true });
  }

  send(method: string, params: Record<string, unknown> = {}, onPage = false): Promise<Record<string, unknown>> {
    const id = ++this.#next;
    const message: Message = { id, method, params, ...(onPage ? { sessionId: this.#session } : {}) };
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result ?? {})));
      (this.child.stdio[3] as Writable).write(`${JSON.stringify(message)}\0`);
    });
  }

  #event(method: string): Promise<void> {
    return new Promise((resolve) => this.#waiters.push({ method, resolve }));
  }

  #receive(m: Message): void {
    if (m.id !== undefined) {
      this.#pending.get(m.id)?.(m);
      this.#pending.delete(m.id);
      return;
    }
    if (m.method === 'Page.javascriptDialogOpening') {
      this.dialogs.push(String(m.params?.message));
      void this.send('Page.handleJavaScriptDialog', { accept: true }, true);
    }
    const ready = this.#waiters.filter((w) => w.method === m.method);
    this.#waiters = this.#waiters.filter((w) => w.method !== m.method);
    for (const w of ready) w.resolve();
  }
}
