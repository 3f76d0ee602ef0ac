import { type ChallengeKind, generateChallenge, viewToJson } from '@gatehouse/core/challenges';

/**
 * Renderer process of the image pool (image-pool.ts, `ImageWorkers`), forked by the API with an IPC
 * channel: draws one challenge per message with fresh randomness and answers with the view as JSON (data
 * URLs) and the answer to seal. The canvas library is loaded here, on the first drawing, never in the API.
 * It leaves when the API does, however the API ended (exit, crash, kill -9): the channel closes, and
 * `disconnect` follows.
 */
if (!process.send) {
  console.error('image-worker: a renderer of the API (forked with an IPC channel); it does not run alone');
  process.exit(2);
}
const channel = process.send.bind(process);
/** An answer; a channel closed meanwhile (the API is gone) ends the renderer quietly, as `disconnect` does. */
const send = (message: unknown) =>
  channel(message, undefined, undefined, (error: Error | null) => {
    if (error) process.exit(0);
  });

process.on('disconnect', () => process.exit(0));
process.on('message', async ({ id, kind }: { id: number; kind: ChallengeKind }) => {
  try {
    const challenge = await generateChallenge(kind);
    send({ id, image: { kind, view: viewToJson(challenge.view), answer: challenge.answer } });
  } catch (error) {
    send({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
