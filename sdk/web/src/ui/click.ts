import type { ViewImage } from '../contract.ts';
import { button, h, type Kind, type KindContext, pct, picks, picture, round1 } from './kit.ts';

/** The click view of core/src/challenges/click.ts (the fields the widget uses). */
interface ClickView {
  prompt: { key: string; params: Record<string, string | number> };
  image: ViewImage;
  promptImage: ViewImage;
  keyboard: { step: number; largeStep: number };
  a11y: { labelKey: string; instructionsKey: string };
}

/** The server takes at most this many clicks. */
const MAX_CLICKS = 12;

/**
 * Click: click the symbols of the prompt strip, in its order. Each click is numbered on the picture;
 * Undo removes the last. Keyboard: the picture is focusable, arrows move a crosshair by the view's step
 * (Shift: large step), Enter or Space clicks at it, Backspace or Delete undoes. Clicks carry ms since
 * the picture was shown.
 */
export function click(ctx: KindContext, view: ClickView): Kind {
  const W = view.image.width;
  const H = view.image.height;
  const wanted = Number(view.prompt.params.count) || 0;

  const el = h('div', 'click');
  const order = picture(view.promptImage, 'order');
  order.style.width = `${view.promptImage.width}px`;
  const stage = h('div', 'stage pick', {
    tabindex: 0,
    role: 'application',
    'aria-label': ctx.tr(view.a11y.labelKey),
    'aria-describedby': 'gh-help',
  });
  stage.style.aspectRatio = `${W} / ${H}`;
  const cross = h('span', 'cross', { 'aria-hidden': 'true' });
  stage.append(picture(view.image), cross);
  const help = h('p', 'sr', { id: 'gh-help' });
  help.textContent = ctx.tr(view.a11y.instructionsKey);
  el.append(order, stage, help);

  const undo = button(ctx.tr('undo'), 'btn ghost');
  const verify = button(ctx.tr('verify'));

  const shownAt = performance.now();
  const clicks: Array<{ x: number; y: number; t: number }> = [];
  const marks: HTMLElement[] = [];
  let busy = false;
  /** A click made with Enter or Space: the answer then carries the keyboard proof-of-work (docs/accessibility.md). */
  let keyed = false;
  let cx = W / 2;
  let cy = H / 2;

  const refresh = () => {
    verify.disabled = clicks.length === 0 || (wanted > 0 && clicks.length !== wanted);
    // Not `disabled` where the button may hold focus (Undo after the last click went, Verify while the
    // answer is checked): a disabled button drops its focus to <body>. Pressing them then does nothing.
    undo.setAttribute('aria-disabled', String(clicks.length === 0 || busy));
    verify.setAttribute('aria-disabled', String(busy));
    cross.style.left = pct(cx, W);
    cross.style.top = pct(cy, H);
  };

  // `at` is the event's own timestamp (same clock as performance.now()): the moment of the click, not of
  // the handler, which a busy page can run late and so make two clicks look closer than they were.
  const add = (x: number, y: number, at: number) => {
    if (busy || clicks.length >= MAX_CLICKS) return;
    const t = round1(Math.max(0, at - shownAt));
    clicks.push({ x: round1(x), y: round1(y), t });
    const mark = h('span', 'mark', { 'aria-hidden': 'true' });
    mark.textContent = String(clicks.length);
    mark.style.left = pct(x, W);
    mark.style.top = pct(y, H);
    stage.append(mark);
    marks.push(mark);
    refresh();
  };
  const removeLast = () => {
    if (busy) return;
    clicks.pop();
    marks.pop()?.remove();
    refresh();
  };

  stage.addEventListener('click', (e) => {
    const rect = stage.getBoundingClientRect();
    const scale = rect.width / W || 1;
    add((e.clientX - rect.left) / scale, (e.clientY - rect.top) / scale, e.timeStamp);
  });
  stage.addEventListener('keydown', (e) => {
    const d = e.shiftKey ? view.keyboard.largeStep : view.keyboard.step;
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [-d, 0],
      ArrowRight: [d, 0],
      ArrowUp: [0, -d],
      ArrowDown: [0, d],
    };
    const move = moves[e.key];
    if (move) {
      cx = Math.min(W - 1, Math.max(0, cx + move[0]));
      cy = Math.min(H - 1, Math.max(0, cy + move[1]));
      refresh();
    } else if (e.key === 'Enter' || e.key === ' ') {
      keyed = true;
      add(cx, cy, e.timeStamp);
    } else if (e.key === 'Backspace' || e.key === 'Delete') removeLast();
    else return;
    e.preventDefault();
  });
  undo.onclick = removeLast;
  verify.onclick = () => {
    if (busy) return;
    busy = true;
    refresh();
    ctx.submit(picks(clicks, keyed));
  };
  refresh();

  return { el, actions: [undo, verify], focusTarget: stage };
}
