import { parentPort } from 'node:worker_threads';
import { type ChallengeKind, generateChallenge, viewToJson } from '@gatehouse/core/challenges';

/**
 * Worker-thread entry of the image pool (image-pool.ts): draws one challenge per message with fresh
 * randomness and answers with the view as JSON (data URLs) and the answer to seal.
 */
parentPort?.on('message', async ({ id, kind }: { id: number; kind: ChallengeKind }) => {
  try {
    const challenge = await generateChallenge(kind);
    parentPort?.postMessage({
      id,
      image: { kind, view: viewToJson(challenge.view), answer: challenge.answer },
    });
  } catch (error) {
    parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
