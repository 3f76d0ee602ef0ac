/**
 * The challenge UI chunk (gatehouse-ui.<hash>.js), loaded by the loader only when an image challenge is
 * shown. It registers `mount` on a global; see contract.ts for the agreement with the loader.
 */
import {
  type ChallengeHost,
  type ChallengeUi,
  type ChallengeView,
  type ImageChallenge,
  type SubmitOutcome,
  UI_GLOBAL,
} from '../contract.ts';
import { dirOf } from '../i18n.ts';
import { adopt, THEME_CSS } from '../styles.ts';
import { click } from './click.ts';
import { button, h, type Kind, type KindContext, svg } from './kit.ts';
import { select } from './select.ts';
import { slide } from './slide.ts';
import { challengeTranslator } from './strings.ts';
import { UI_CSS } from './styles.ts';

const KINDS = { slide, click, select } as const;

/** The focused element, looking through open shadow roots (the loader's box lives in one). */
function deepActive(): HTMLElement | null {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active as HTMLElement | null;
}

/**
 * A stroked icon for a button whose name is its aria-label (a drawing, not a text glyph such as ↻ or ×:
 * its contrast is measurable and the label-in-name rule has no visible text to compare).
 */
const icon = (d: string) => {
  const s = svg('0 0 24 24', [
    [
      'path',
      {
        d,
        fill: 'none',
        stroke: 'currentColor',
        'stroke-width': '2.2',
        'stroke-linecap': 'round',
        'stroke-linejoin': 'round',
      },
    ],
  ]);
  s.setAttribute('width', '20');
  s.setAttribute('height', '20');
  return s;
};

function mount(host: ChallengeHost, first: ImageChallenge): ChallengeView {
  const tr = challengeTranslator(host.lang);
  const popup = host.presentation === 'popup';
  const reduced = matchMedia('(prefers-reduced-motion: reduce)').matches;
  // Where focus goes when the view goes away holding it: a popup gives it back to what had it before;
  // inline, to the box's checkbox, the slot's neighbour in the loader's shadow root (never to <body>).
  const returnFocus = popup
    ? deepActive()
    : (host.slot?.getRootNode() as ParentNode | undefined)?.querySelector<HTMLElement>('[role=checkbox]');

  const outer = h('div', popup ? 'popup' : 'embedded', {
    'data-theme': host.theme,
    lang: host.lang,
    dir: dirOf(host.lang),
  });
  const root = outer.attachShadow({ mode: 'open' });
  adopt(root, THEME_CSS + UI_CSS);
  const frame = popup ? h('dialog', '', { 'aria-labelledby': 'gh-prompt' }) : h('div', 'embedded');
  const panel = h('div', 'panel', popup ? {} : { role: 'group', 'aria-labelledby': 'gh-prompt' });
  const head = h('div', 'head');
  const prompt = h('p', 'prompt', { id: 'gh-prompt' });
  head.append(prompt);
  if (popup) {
    const x = button('', 'x');
    x.append(icon('M6 6l12 12M18 6 6 18'));
    x.setAttribute('aria-label', host.t('close'));
    x.onclick = () => host.close();
    head.append(x);
  }
  const body = h('div', 'body');
  const refresh = button('', 'btn ghost icon');
  refresh.append(icon('M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7'));
  refresh.setAttribute('aria-label', tr('refresh'));
  refresh.title = tr('refresh');
  refresh.onclick = () => !refresh.disabled && host.refresh();
  const msg = h('p', 'msg', { role: 'status', 'aria-live': 'polite' });
  const foot = h('div', 'foot');
  const done = h('div', 'done', { 'aria-hidden': 'true' });
  done.append(
    svg('0 0 24 24', [
      ['circle', { cx: '12', cy: '12', r: '11', fill: 'currentColor' }],
      [
        'path',
        {
          d: 'm7 12.5 3.2 3.2L17 9',
          fill: 'none',
          'stroke-width': '2.4',
          'stroke-linecap': 'round',
          'stroke-linejoin': 'round',
        },
      ],
    ]),
  );
  done.append(host.t('success'));
  const bar = h('div', 'bar', { 'aria-hidden': 'true' });
  panel.append(head, body, foot, bar, done);
  frame.append(panel);
  root.append(frame);

  const say = (text: string, error = false) => {
    msg.textContent = text;
    msg.classList.toggle('err', error);
  };
  const setBusy = (on: boolean) => {
    panel.setAttribute('aria-busy', String(on));
    refresh.disabled = on;
  };

  let kind: Kind;
  let image = first;
  /** The person's answer to the shown challenge was refused: the next one says so. */
  let missed = false;
  /** The keyboard proof-of-work of the shown challenge, started at the first key press inside it. */
  let keyboardProof: Promise<unknown> | undefined;
  const proveKeyboard = () => {
    if (image.keyboard_pow !== undefined && !keyboardProof) {
      keyboardProof = host.solve(image.keyboard_pow, progress);
      // Closing or replacing the challenge aborts it: nobody waits for it then.
      keyboardProof.catch(() => {});
    }
    return keyboardProof;
  };
  const progress = (fraction: number) => panel.style.setProperty('--p', String(fraction));
  // Key presses on the challenge itself, not on the link to the alternative.
  body.addEventListener('keydown', (e) => e.key !== 'Escape' && e.key !== 'Tab' && proveKeyboard());
  const send = (answer: unknown) => {
    setBusy(true);
    say(host.t('checking'));
    host.submit(answer).then(
      (outcome: SubmitOutcome) => {
        // A wrong answer spends the picture (one answer each): the loader brings a new one, and the
        // person is told that the answer was wrong when it arrives.
        if (outcome.type === 'ok') return;
        missed = true;
        setBusy(false);
        say(host.t('loading'));
      },
      () => {
        setBusy(false);
        say(host.t('failed'), true);
      },
    );
  };
  const ctx: KindContext = {
    tr,
    reduced,
    submit(answer) {
      const keyed = (answer as { input?: string }).input === 'keyboard' && proveKeyboard();
      if (!keyed) return send(answer);
      // A keyboard answer carries the proof begun at the first key press (docs/accessibility.md).
      setBusy(true);
      say(host.t('checking'));
      keyed.then(
        (pow) => send({ ...(answer as object), pow }),
        () => {
          setBusy(false);
          say(host.t('failed'), true);
        },
      );
    },
  };
  /** The alternative of the shown challenge, once asked for: its ticket and proof, kept while the person goes back. */
  let job: Promise<{ ticket: string; pow: unknown }> | undefined;
  /** The alternative is what is shown (not the puzzle): its progress goes to `meter`, its end is submitted. */
  let onAlt = false;
  let meter: HTMLElement;
  let status: HTMLElement;
  let said = 0;
  /** What is known of the alternative's work when the person comes back to it. */
  let seconds = 0;
  let worked = 0;
  /** Counts what was shown (a puzzle or the alternative): only the latest showing of the alternative submits. */
  let turns = 0;
  /**
   * The accessible alternative (docs/accessibility.md): a longer proof-of-work in place of the picture. Focus
   * moves to its status, and the live region says each quarter of the progress. "Back to the puzzle" shows
   * the same challenge again; the work goes on meanwhile, and coming back resumes it (one ticket per challenge).
   */
  const alternative = async () => {
    const shown = image;
    const mine = ++turns;
    onAlt = true;
    // Not busy-faded: the status is what the person reads now (the meter shows the progress).
    prompt.textContent = tr('altPrompt');
    status = h('p', 'alt-status', { tabindex: '-1' });
    status.textContent = seconds ? tr('altWorking', { seconds }) : tr('altStarting');
    meter = h('div', 'meter', {
      role: 'progressbar',
      'aria-valuemin': 0,
      'aria-valuemax': 100,
      'aria-valuenow': Math.floor(worked * 100),
      'aria-labelledby': 'gh-prompt',
    });
    meter.style.setProperty('--p', String(worked));
    const back = button(tr('altBack'), 'link');
    back.onclick = () => {
      show(shown);
      // Said, and focus on the challenge itself: the person is back where they were.
      say(prompt.textContent ?? '');
      kind.focusTarget.focus();
    };
    body.replaceChildren(status, meter);
    foot.replaceChildren(msg);
    altRow.replaceChildren(back);
    // Back on work already under way: say where it stands, since the quarters passed on the puzzle were not
    // said (a person who came back at 80 % would otherwise hear nothing until it is done).
    const reached = Math.floor(worked * 4);
    say(reached > 0 && reached < 4 ? tr('altProgress', { percent: reached * 25 }) : '');
    said = Math.max(said, reached);
    status.focus();
    try {
      job ??= host.post('alternative').then(async (data) => {
        seconds = Math.ceil(data.seconds);
        if (onAlt) status.textContent = tr('altWorking', { seconds });
        const pow = await host.solve(data.pow, (fraction) => {
          worked = fraction;
          if (!onAlt || image !== shown) return;
          progress(fraction);
          meter.setAttribute('aria-valuenow', String(Math.floor(fraction * 100)));
          meter.style.setProperty('--p', String(fraction));
          const quarter = Math.floor(fraction * 4);
          if (quarter > said && quarter < 4) {
            said = quarter;
            say(tr('altProgress', { percent: quarter * 25 }));
          }
        });
        return { ticket: data.ticket as string, pow };
      });
      const solved = await job;
      if (mine === turns) send({ alternative: solved.ticket, pow: solved.pow });
    } catch {
      // Refused or failed: asked again next time (the server says whether it still may be had).
      if (image === shown) job = undefined;
      if (mine !== turns) return;
      show(shown);
      say(tr('altUnavailable'), true);
      kind.focusTarget.focus();
    }
  };
  const altRow = h('div', 'alt');
  panel.insertBefore(altRow, bar);

  /** Renders a challenge; keeps focus inside when it was there. */
  const show = (next: ImageChallenge, message?: string) => {
    const hadFocus = root.activeElement !== null;
    const wrong = missed && next !== image;
    if (next !== image) {
      missed = false;
      keyboardProof = job = undefined;
      said = seconds = worked = 0;
    }
    onAlt = false;
    turns++;
    image = next;
    prompt.textContent = tr(next.view.prompt.key, next.view.prompt.params);
    kind = KINDS[next.kind](ctx, next.view);
    body.replaceChildren(kind.el);
    foot.replaceChildren(refresh, msg, ...kind.actions);
    const other = button(tr('alternative'), 'link');
    other.onclick = alternative;
    altRow.replaceChildren(...(next.alternative ? [other] : []));
    setBusy(false);
    // After a wrong answer: say it was wrong, in the live region, and that this is a new try. After a
    // spent or expired challenge: say so plainly (the server's text would speak of the old one).
    say(wrong ? tr('wrong') : message ? tr('fresh') : '', wrong);
    if (hadFocus || popup) kind.focusTarget.focus();
  };

  if (popup) {
    document.body.append(outer);
    (frame as HTMLDialogElement).showModal();
    // Escape closes: handled here rather than by the dialog, whose cancel Chrome may skip.
    (frame as HTMLDialogElement).addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        host.close();
      }
    });
    frame.addEventListener('cancel', (e) => {
      e.preventDefault();
      host.close();
    });
  } else host.slot?.append(outer);
  show(first);

  let gone = false;
  return {
    replace: show,
    progress(fraction) {
      panel.style.setProperty('--p', String(fraction));
    },
    succeed() {
      panel.classList.add('ok');
      say(host.t('success'));
      return new Promise((resolve) => setTimeout(resolve, reduced ? 250 : 700));
    },
    destroy() {
      if (gone) return;
      gone = true;
      const held = root.activeElement !== null;
      if (popup) (frame as HTMLDialogElement).close();
      outer.remove();
      if ((popup || held) && returnFocus?.isConnected) returnFocus.focus();
    },
  };
}

const ui: ChallengeUi = { mount };
(globalThis as Record<string, unknown>)[UI_GLOBAL] = ui;
