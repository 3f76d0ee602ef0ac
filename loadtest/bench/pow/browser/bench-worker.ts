/**
 * The benchmark's Web Worker in Chromium: measures a candidate with the same code Node runs (measure.ts), or
 * solves peers' challenges with their own solvers. One request, one answer.
 */
import initCap, { solve_pow } from '@cap.js/wasm/browser/cap_wasm.js';
import { solveChallenge as solveAltchaV1 } from 'altcha-lib/v1';
import type { Candidate } from '../candidates.ts';
import { measure } from '../measure.ts';

export type BenchRequest =
  | { type: 'measure'; candidate: Candidate; ms: number; warm: boolean }
  | { type: 'cap'; challenges: Array<[salt: string, target: string]> }
  | { type: 'altcha-v1'; challenge: string; salt: string; maxnumber: number };

type Scope = { postMessage(m: unknown): void; onmessage: ((e: { data: BenchRequest }) => void) | null };
const scope = globalThis as unknown as Scope;

async function handle(request: BenchRequest): Promise<unknown> {
  if (request.type === 'measure') return measure(request.candidate, request.ms, request.warm);
  if (request.type === 'cap') {
    // As Cap's widget does: one solve_pow call per challenge; each search counts up from nonce 0.
    await initCap({ module_or_path: new URL('/cap_wasm_bg.wasm', location.href) });
    let attempts = 0;
    for (const [salt, target] of request.challenges) attempts += Number(solve_pow(salt, target)) + 1;
    return { attempts };
  }
  const { promise } = solveAltchaV1(request.challenge, request.salt, 'SHA-256', request.maxnumber);
  const solution = await promise;
  return { attempts: (solution?.number ?? Number.NaN) + 1 };
}

scope.onmessage = (event) => {
  handle(event.data).then(
    (result) => scope.postMessage({ ok: true, result }),
    (error: unknown) => scope.postMessage({ ok: false, error: String(error) }),
  );
};
