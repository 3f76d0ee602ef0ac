/**
 * Web Worker entry for the widget (esbuild bundles it with hash-wasm; no node: imports anywhere below).
 * In:  { type: 'solve', puzzle } to start, { type: 'abort' } to stop.
 * Out: { type: 'progress', ...SolveProgress } after each hash, then { type: 'solution', solution, ms }
 *      or { type: 'error', message } (an abort reports 'aborted').
 */
import type { PowSolution, Puzzle } from './puzzle.ts';
import { type SolveProgress, solvePuzzle } from './solve.ts';

export type WorkerRequest = { type: 'solve'; puzzle: Puzzle } | { type: 'abort' };
export type WorkerResponse =
  | ({ type: 'progress' } & SolveProgress)
  | { type: 'solution'; solution: PowSolution; ms: number }
  | { type: 'error'; message: string };

type WorkerScope = {
  postMessage(message: WorkerResponse): void;
  addEventListener(type: 'message', listener: (event: { data: WorkerRequest }) => void): void;
};

const scope = globalThis as unknown as WorkerScope;
let controller: AbortController | undefined;

/** Solves one puzzle, posting progress at most every 100 ms and exactly one final message. */
async function solve(puzzle: Puzzle): Promise<void> {
  controller?.abort();
  const own = new AbortController();
  controller = own;
  const started = performance.now();
  let lastProgress = 0;
  try {
    const solution = await solvePuzzle(puzzle, {
      signal: own.signal,
      onProgress(progress) {
        const now = performance.now();
        if (now - lastProgress < 100 && progress.found < progress.count) return;
        lastProgress = now;
        scope.postMessage({ type: 'progress', ...progress });
      },
    });
    scope.postMessage({ type: 'solution', solution, ms: performance.now() - started });
  } catch (error) {
    const message = own.signal.aborted ? 'aborted' : error instanceof Error ? error.message : String(error);
    scope.postMessage({ type: 'error', message });
  }
}

scope.addEventListener('message', (event) => {
  const request = event.data;
  if (request?.type === 'solve') void solve(request.puzzle);
  else if (request?.type === 'abort') controller?.abort();
});
