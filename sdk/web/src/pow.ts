import type { WorkerRequest, WorkerResponse } from '@gatehouse/core/pow';
import { chunkUrl, WORKER_FILE } from './chunks.ts';
import { GatehouseError } from './transport.ts';

/**
 * Creates the proof-of-work worker. Browsers refuse `new Worker()` for a script on another origin (the
 * widget usually comes from the API's origin, not the page's), so a cross-origin script is started through
 * a same-origin blob: worker that importScripts() it.
 */
function createWorker(): Worker {
  const url = chunkUrl(WORKER_FILE);
  if (new URL(url, location.href).origin === location.origin) return new Worker(url);
  const blob = new Blob([`importScripts(${JSON.stringify(url)})`], { type: 'text/javascript' });
  const blobUrl = URL.createObjectURL(blob);
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
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = createWorker();
    } catch (error) {
      reject(new GatehouseError('pow_failed', `Cannot start the proof-of-work worker: ${error}`));
      return;
    }
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
        new GatehouseError('pow_failed', `Proof-of-work worker failed: ${event.message || 'cannot load it'}`),
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
  });
}
