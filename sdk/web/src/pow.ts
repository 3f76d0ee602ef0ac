import type { WorkerRequest, WorkerResponse } from '@gatehouse/core/pow';
import { fetchChunk, WORKER_FILE } from './chunks.ts';
import { GatehouseError } from './transport.ts';

/**
 * Creates the proof-of-work worker from its bytes, fetched from the first host that serves them with the
 * build's SRI hash (beside gatehouse.js, the main API, then the standby hosts), and started through a
 * blob: URL: browsers refuse `new Worker()` for a script on another origin, and a blob needs no second
 * download.
 */
async function createWorker(hosts: string[], signal: AbortSignal): Promise<Worker> {
  const source = await fetchChunk(WORKER_FILE, hosts, signal);
  const blobUrl = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  try {
    return new Worker(blobUrl);
  } finally {
    setTimeout(() => URL.revokeObjectURL(blobUrl), 10_000);
  }
}

/**
 * Solves a puzzle from an init answer in a Web Worker (core/src/pow/worker.ts); `onProgress` gets a
 * fraction from 0 to 1 (an estimate: the work is random). Aborting terminates the worker.
 */
export function solvePow(
  puzzle: unknown,
  signal: AbortSignal,
  onProgress: (fraction: number) => void,
  /** Hosts that serve the widget's files (Route.widgetHosts): the main API first, then the standby hosts. */
  hosts: string[] = [],
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    createWorker(hosts, signal).then(
      (worker) => {
        if (!signal.aborted) return run(worker);
        worker.terminate();
        reject(signal.reason);
      },
      (error) => {
        if (signal.aborted) reject(signal.reason);
        else
          reject(
            new GatehouseError(
              'pow_failed',
              `Cannot start the proof-of-work worker: ${error?.message ?? error}`,
            ),
          );
      },
    );
    const run = (worker: Worker) => {
      const stop = () => {
        worker.terminate();
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        stop();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort);
      worker.onerror = (event) => {
        stop();
        reject(
          new GatehouseError(
            'pow_failed',
            `Proof-of-work worker failed: ${event.message || 'cannot load it'}`,
          ),
        );
      };
      worker.onmessage = (event: MessageEvent<WorkerResponse>) => {
        const msg = event.data;
        if (msg.type === 'progress') {
          onProgress(Math.min(0.99, msg.attempts / Math.max(1, msg.expectedAttempts)));
        } else if (msg.type === 'solution') {
          stop();
          onProgress(1);
          resolve(msg.solution);
        } else {
          stop();
          reject(new GatehouseError('pow_failed', `Proof-of-work failed: ${msg.message}`));
        }
      };
      worker.postMessage({ type: 'solve', puzzle } as WorkerRequest);
    };
  });
}
