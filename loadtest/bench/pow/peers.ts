/**
 * Peers' default challenges and Gatehouse's own puzzles, solved in the same Chromium run by each project's own
 * solver in one Web Worker: Cap (@cap.js/wasm), ALTCHA v2 (its widget's PBKDF2 worker), ALTCHA v1 (altcha-lib).
 */
import { randomBytes } from 'node:crypto';
import { createChallenge, randomInt } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { createChallenge as createChallengeV1 } from 'altcha-lib/v1';
import type { Page } from 'playwright-core';
import {
  createPuzzle,
  difficultyForScore,
  expectedAttempts,
  type Puzzle,
} from '../../../core/src/pow/index.ts';
import { runWorker } from './browser/page.ts';

/** What one solve cost: wall time in the page, renderer CPU time, and hashes (attempts) computed. */
export type Solve = { wallMs: number; cpuMs: number; attempts: number };

export type PeerCase = {
  id: string;
  /** Human description of the default difficulty. */
  difficulty: string;
  reps: number;
  /** Which native rate (hashes/s of the same per-attempt work) to divide by: a key into the native table. */
  nativeKey: string;
  expected: number;
  solve(page: Page): Promise<Solve>;
};

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Cap's documented defaults: 50 challenges, 32-hex-char salts, 4-hex-char targets (16^4 hashes each). */
function cap(): PeerCase {
  return {
    id: 'Cap (@cap.js/wasm, SHA-256)',
    difficulty: 'c=50 s=32 d=4',
    reps: 3,
    nativeKey: 'sha256-string salt=32',
    expected: 50 * 16 ** 4,
    async solve(page) {
      const challenges = Array.from({ length: 50 }, () => [hex(16), hex(2)] as const);
      const { data, wallMs, cpuMs } = await runWorker<{ ok: boolean; result: { attempts: number } }>(
        page,
        '/bench-worker.js',
        { type: 'cap', challenges },
      );
      return { wallMs, cpuMs, attempts: data.result.attempts };
    },
  };
}

/** ALTCHA v1: SHA-256 of salt + number, altcha-lib's default maxnumber 1,000,000. */
function altchaV1(): PeerCase {
  return {
    id: 'ALTCHA v1 (SHA-256, WebCrypto)',
    difficulty: 'maxnumber=1e6',
    reps: 3,
    nativeKey: 'sha256-string salt=25',
    expected: 500_000,
    async solve(page) {
      const c = await createChallengeV1({ hmacKey: 'bench' });
      const { data, wallMs, cpuMs } = await runWorker<{ result: { attempts: number } }>(
        page,
        '/bench-worker.js',
        {
          type: 'altcha-v1',
          challenge: c.challenge,
          salt: c.salt,
          maxnumber: c.maxnumber,
        },
      );
      return { wallMs, cpuMs, attempts: data.result.attempts };
    },
  };
}

/** ALTCHA v2 as its README configures it: PBKDF2/SHA-256, cost 5000, counter drawn from 5000..10000. */
function altchaV2(): PeerCase {
  return {
    id: 'ALTCHA v2 (PBKDF2-SHA-256, widget worker)',
    difficulty: 'cost=5000 counter 5k-10k',
    reps: 2,
    nativeKey: 'pbkdf2-sha256 5000',
    expected: 7500,
    async solve(page) {
      const challenge = await createChallenge({
        algorithm: 'PBKDF2/SHA-256',
        cost: 5000,
        counter: randomInt(5000, 10_000),
        deriveKey,
        hmacSignatureSecret: 'bench',
      });
      const { data, wallMs, cpuMs } = await runWorker<{ counter: number }>(
        page,
        '/altcha-pbkdf2-worker.js',
        { type: 'work', challenge, counterStart: 0, counterStep: 1, timeout: 600_000 },
        'classic',
      );
      return { wallMs, cpuMs, attempts: data.counter + 1 };
    },
  };
}

/** Gatehouse at a risk score, solved by core/src/pow/worker.ts bundled as the widget bundles it. */
function gatehouse(score: number, reps: number): PeerCase {
  const params = difficultyForScore(score);
  return {
    id: `Gatehouse score ${score} (${params.algorithm}, our worker)`,
    difficulty: `${params.memoryKiB / 1024} MiB, ${params.count} sub-puzzles × ${Math.round(2 ** 32 / params.target)}`,
    reps,
    nativeKey: `${params.algorithm} m=${params.memoryKiB} t=${params.iterations}`,
    expected: expectedAttempts(params),
    async solve(page) {
      const puzzle: Puzzle = createPuzzle(params);
      const { data, wallMs, cpuMs } = await runWorker<{
        type: string;
        solution: { nonces: number[] };
        message?: string;
      }>(page, '/gatehouse-pow-worker.js', { type: 'solve', puzzle });
      if (data.type !== 'solution') throw new Error(`gatehouse worker: ${data.message}`);
      return { wallMs, cpuMs, attempts: data.solution.nonces.at(-1)! + 1 };
    },
  };
}

export function peerCases(): PeerCase[] {
  return [cap(), altchaV1(), altchaV2(), gatehouse(0, 5), gatehouse(50, 3), gatehouse(100, 2)];
}
