/** Runs one measured job (bench/worker.ts) in its own process, so its time and peak RSS are its own. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const worker = fileURLToPath(new URL('./worker.js', import.meta.url));

export type JobResult = Record<string, number>;

export function runJob(mode: string, url: string, arg = ''): Promise<JobResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [worker, mode, url, arg], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as JobResult);
    });
  });
}
