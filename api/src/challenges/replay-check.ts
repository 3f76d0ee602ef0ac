import { nearDuplicate, slidePrint, type Verdict } from '@gatehouse/core/challenges';
import type { Deps } from '../deps.ts';
import { checkImage } from './kinds.ts';
import type { SealedChallenge } from './sealed-challenge.ts';

/**
 * An image answer's verdict, where a slide drag that nearly repeats one its app saw recently is refused as
 * `replayed` (docs/challenges.md, "Replays"). Every drag that passed the trajectory checks is remembered,
 * whether it found the gap or not, so a probe with a recording teaches nothing and spends it. A store that
 * does not answer loses the memory rather than the answer, as the answer history does.
 */
export async function checkImageAnswer(
  deps: Pick<Deps, 'risk' | 'logger'>,
  challenge: Pick<SealedChallenge, 'id' | 'app'> & { img: NonNullable<SealedChallenge['img']> },
  submission: unknown,
): Promise<Verdict> {
  const { kind, answer } = challenge.img;
  const verdict = checkImage(kind, answer, submission);
  if (kind !== 'slide' || !(verdict.ok || verdict.reason === 'position')) return verdict;
  const print = slidePrint(submission);
  if (!print) return verdict;
  let seen: Int16Array[] = [];
  try {
    seen = await deps.risk.answers.replays.remember(challenge.app, print);
  } catch (error) {
    deps.logger.warn({ err: error, challenge: challenge.id }, 'slide drag not remembered');
  }
  return seen.some((old) => nearDuplicate(print.vector, old)) ? { ok: false, reason: 'replayed' } : verdict;
}
