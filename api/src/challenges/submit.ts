import type { SubmitAnswer } from '@gatehouse/core/challenges/wire';
import { GatehouseError } from '@gatehouse/core/errors';
import { MAX_SEALED_LENGTH } from '@gatehouse/core/sealed';
import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { historyKey } from '../risk/answer-history.ts';
import { draftPassToken, type MintPassToken } from '../tokens/pass-tokens.ts';
import { openTicket } from './alternative.ts';
import { burnChallenge, takeAndSolve, takeAttempt, unsolve } from './attempts.ts';
import { maxAttempts, powWellFormed, spotCheckPow } from './kinds.ts';
import { checkImageAnswer } from './replay-check.ts';
import { openChallenge, type SealedChallenge } from './sealed-challenge.ts';

export const submitBody = z.object({
  app_key: z.string().min(1).max(128),
  challenge_id: z.string().min(1).max(64),
  challenge: z.string().min(1).max(MAX_SEALED_LENGTH),
  pow: z.unknown().optional(),
  answer: z.unknown().optional(),
});
export type SubmitBody = z.infer<typeof submitBody>;

/** The answer's wire type (core/src/challenges/wire.ts), which the widget reads too. */
export type SubmitResult = SubmitAnswer;

/**
 * Answer submission: 1. open the sealed challenge (forged, altered or another app's: not found), and the
 * alternative's ticket when the answer carries one (docs/accessibility.md), 2. expiry (the ticket's, when
 * there is one), 3. the checks without a hash: the proofs-of-work's shape and the image answer, 4. take an
 * attempt slot (solved already: not found; too many wrong answers: expired); a submission that passed step 3
 * takes it in the same statement that marks the challenge solved and records its pass token (one round
 * trip), 5. then one random sub-puzzle among its proofs-of-work (one hash, weighted by work); a failure
 * takes the solve back and burns the challenge. The pass token carries the captcha_args recorded at
 * initialization, and how it was solved. An image challenge's outcome (wrong, passed, passed by keyboard) is
 * recorded against its address for the next init.
 */
export async function submitChallenge(deps: Deps, body: SubmitBody): Promise<SubmitResult> {
  const app = await deps.apps.findByKey(body.app_key);
  if (!app) throw new GatehouseError('invalid_app_key');
  if (app.disabledAt) throw new GatehouseError('app_disabled');
  const challenge = openChallenge(deps.keys, app.id, body.challenge);
  if (!challenge || challenge.id !== body.challenge_id) throw new GatehouseError('challenge_not_found');
  const answer = (typeof body.answer === 'object' && body.answer) || {};
  const ticket =
    challenge.img && 'alternative' in answer
      ? openTicket(deps.keys, app.id, challenge.id, answer.alternative)
      : undefined;
  if (ticket === null) throw new GatehouseError('challenge_not_found', 'This alternative is not valid.');
  if ((ticket?.exp ?? challenge.exp) * 1000 <= Date.now()) throw new GatehouseError('challenge_expired');

  // Cheap checks first (no hash): the proof-of-work's shape, then the image answer (a slide drag is also
  // looked up among the app's recent ones). A wrong answer costs an attempt slot and no hash; the one hash
  // is spent only on a submission that is otherwise right.
  // The extra proof-of-work in the answer: the alternative's instead of the picture, or the keyboard's beside it.
  const keyboard =
    !ticket && challenge.kpow !== undefined && 'input' in answer && answer.input === 'keyboard';
  // Click and select answers are lists; made with the keyboard they come as `{input, picks, pow}`.
  const picks = keyboard && challenge.img?.kind !== 'slide' && 'picks' in answer ? answer.picks : undefined;
  const extra = ticket ? ticket.pow : keyboard ? challenge.kpow : undefined;
  const extraSolution = 'pow' in answer ? answer.pow : undefined;
  const pow = challenge.pow;
  const powFormed =
    (pow === undefined || powWellFormed(pow, body.pow)) &&
    (extra === undefined || powWellFormed(extra, extraSolution));
  const imageCheck =
    challenge.img && !ticket
      ? await checkImageAnswer(deps, { ...challenge, img: challenge.img }, picks ?? body.answer)
      : { ok: true };
  // An image-tier challenge answered by pointer carries no proof at all: nothing to spot-check.
  const proofs = [
    ...(pow === undefined ? [] : [[pow, body.pow] as const]),
    ...(extra === undefined ? [] : [[extra, extraSolution] as const]),
  ];

  const limit = maxAttempts(challenge);
  const draft =
    powFormed && imageCheck.ok
      ? draftPassToken(deps.keys, passTokenInput(app, challenge, ticket, keyboard))
      : null;
  const slot = draft
    ? await takeAndSolve(deps.db, challenge, limit, draft)
    : await takeAttempt(deps.db, challenge, limit);
  if (!slot.ok && slot.why === 'solved') {
    throw new GatehouseError('challenge_not_found', 'This challenge was already solved.');
  }
  if (!slot.ok)
    throw new GatehouseError('challenge_expired', 'Too many wrong answers: start a new challenge.');

  const powOk = powFormed && (!draft || proofs.length === 0 || (await spotCheckPow(proofs)));
  if (draft && powOk) {
    if (challenge.img) await recordAnswer(deps, challenge, keyboard ? 'passed_keyboard' : 'passed');
    return { pass_token: draft.token, challenge_id: challenge.id, expires_in: app.passTokenTtl };
  }
  // A failed proof-of-work burns the challenge: with one random sub-puzzle checked, a retry would be a free
  // second draw for a solution that skipped some (docs/pow.md). After takeAndSolve that also takes the solve
  // and the pass token's row back.
  if (draft) await unsolve(deps.db, challenge.id, draft.row.id, limit);
  else if (!powOk && slot.attempt < limit) await burnChallenge(deps.db, challenge.id, limit);
  deps.logger.debug(
    { challenge: challenge.id, pow: powOk, image: imageCheck, attempt: slot.attempt },
    'wrong answer',
  );
  // Every wrong answer to a picture counts against its address (docs/decisions.md: escalation).
  if (challenge.img) await recordAnswer(deps, challenge, 'failed');
  const left = powOk ? limit - slot.attempt : 0;
  throw new GatehouseError(
    'invalid_answer',
    left > 0
      ? `Invalid answer: ${left} attempt${left === 1 ? '' : 's'} left.`
      : 'Invalid answer: no attempts left.',
  );
}

/** The pass token of a solved challenge: the captcha_args recorded at initialization, and how it was solved. */
function passTokenInput(
  app: MintPassToken['app'],
  challenge: SealedChallenge,
  ticket: unknown,
  keyboard: boolean,
): MintPassToken {
  return {
    app,
    challengeId: challenge.id,
    action: challenge.act,
    uid: challenge.uid,
    cdata: challenge.cdata ?? null,
    captchaArgs: {
      platform: challenge.plat,
      user_ip: challenge.ip,
      referer: challenge.ref,
      pkg: challenge.pkg,
      solved_at: Math.floor(Date.now() / 1000),
      risk_score: challenge.score,
      ...(challenge.rsn || ticket || keyboard
        ? {
            // How it was solved, for the integrator: the keyboard path or the accessible alternative.
            risk_reasons: [
              ...(challenge.rsn ?? []),
              ...(keyboard ? ['challenge.keyboard'] : []),
              ...(ticket ? ['challenge.alternative'] : []),
            ],
          }
        : {}),
    },
  };
}

/**
 * Records an image answer's outcome for the next init from the address it was started from; a store that
 * does not answer loses the record rather than the answer (the count only ever raises a score).
 */
async function recordAnswer(
  deps: Deps,
  challenge: { app: string; ip: string; id: string; img?: { kind: string } },
  event: 'failed' | 'passed' | 'passed_keyboard',
): Promise<void> {
  const key = historyKey(challenge.app, challenge.ip);
  const answers = deps.risk.answers;
  try {
    // A wrong answer's kind is what the client's next picture will be (retry-kind.ts); a pass forgets it.
    await Promise.all([
      answers.record(key, event),
      answers.rememberKind?.(key, event === 'failed' ? (challenge.img?.kind ?? null) : null),
    ]);
  } catch (error) {
    deps.logger.warn({ err: error, challenge: challenge.id }, 'answer history not recorded');
  }
}
