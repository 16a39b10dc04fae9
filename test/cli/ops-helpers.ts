// The bench uses it too, and the container's build copies bench/ but not test/.
export { freePort } from '../../bench/free-port.js';

/** Retries `check` until it returns true; the timeout is a safety net, never a speed assertion. */
export async function poll(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every sample of one metric in Prometheus text: its labels and value. */
export function metricSeries(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the sample whose labels include `labels`; NaN when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  const hit = metricSeries(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit ? hit.value : Number.NaN;
}
