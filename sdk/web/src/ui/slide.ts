import type { ViewImage } from '../contract.ts';
import { h, type Kind, type KindContext, pct, picture, round1, svg } from './kit.ts';

/** The slide view of core/src/challenges/slide.ts (the fields the widget uses). */
interface SlideView {
  prompt: { key: string; params: Record<string, string | number> };
  background: ViewImage;
  piece: ViewImage;
  pieceY: number;
  track: { min: number; max: number };
  keyboard: { step: number; largeStep: number };
  a11y: { labelKey: string; instructionsKey: string };
}

type Point = { t: number; x: number; y: number };

/** Most samples sent; the server accepts 1500, and a drag at 60 Hz for 20 s stays below this. */
const MAX_SAMPLES = 1200;

/**
 * Slide: drag the piece (or the slider handle below it) to the gap. Pointer and touch drags record
 * their trajectory (ms since the press, piece x, vertical offset, in background px); the slider is
 * also a keyboard slider: arrows move by the view's step, Shift+arrows and PageUp/PageDown by its
 * large step, Home/End to the ends, Enter or Space submits.
 */
export function slide(ctx: KindContext, view: SlideView): Kind {
  const W = view.background.width;
  const max = view.track.max;
  const { step, largeStep } = view.keyboard;

  // Left to right in every language, right-to-left ones included: the picture is not mirrored, so the
  // piece starts on its left and the slider moves the way the piece does (docs/decisions.md).
  const el = h('div', 'slide', { dir: 'ltr' });
  const stage = h('div', 'stage');
  stage.style.aspectRatio = `${W} / ${view.background.height}`;
  const piece = picture(view.piece, 'piece');
  piece.style.top = pct(view.pieceY, view.background.height);
  piece.style.width = pct(view.piece.width, W);
  stage.append(picture(view.background), piece);

  const track = h('div', 'track');
  const fill = h('div', 'fill');
  const handle = h('div', 'handle', {
    role: 'slider',
    tabindex: 0,
    'aria-label': ctx.tr(view.a11y.labelKey),
    'aria-describedby': 'gh-help',
    'aria-valuemin': view.track.min,
    'aria-valuemax': max,
    'aria-orientation': 'horizontal',
  });
  handle.style.width = pct(view.piece.width, W);
  const arrow = svg('0 0 24 24', [
    [
      'path',
      {
        d: 'M5 12h12m-5-6 6 6-6 6',
        fill: 'none',
        stroke: 'currentColor',
        'stroke-width': '2.5',
        'stroke-linecap': 'round',
        'stroke-linejoin': 'round',
      },
    ],
  ]);
  arrow.setAttribute('width', '22');
  arrow.setAttribute('height', '22');
  handle.append(arrow);
  track.append(fill, handle);
  const help = h('p', 'sr', { id: 'gh-help' });
  help.textContent = ctx.tr(view.a11y.instructionsKey);
  el.append(stage, track, help);

  let x = 0;
  let busy = false;
  let points: Point[] = [];
  let drag: { x0: number; y0: number; t0: number; scale: number; input: 'pointer' | 'touch' } | undefined;
  let keyT0 = -1;

  const place = (nx: number, animate = false) => {
    x = Math.min(max, Math.max(0, nx));
    el.classList.toggle('anim', animate && !ctx.reduced);
    piece.style.left = handle.style.left = pct(x, W);
    fill.style.width = pct(x + view.piece.width / 2, W);
    handle.setAttribute('aria-valuenow', String(Math.round(x)));
  };
  place(0);

  const send = (input: 'pointer' | 'touch' | 'keyboard') => {
    busy = true;
    const trajectory = points;
    points = [];
    keyT0 = -1;
    ctx.submit({ x: round1(x), input, trajectory });
  };

  const onDown = (e: PointerEvent) => {
    if (busy || drag || e.button > 0) return;
    e.preventDefault();
    (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
    handle.focus({ preventScroll: true });
    const scale = stage.getBoundingClientRect().width / W || 1;
    drag = {
      x0: e.clientX - x * scale,
      y0: e.clientY,
      t0: e.timeStamp,
      scale,
      input: e.pointerType === 'touch' ? 'touch' : 'pointer',
    };
    keyT0 = -1;
    points = [{ t: 0, x: round1(x), y: 0 }];
  };
  const sample = (e: PointerEvent) => {
    if (!drag) return;
    place((e.clientX - drag.x0) / drag.scale);
    const point = {
      t: round1(e.timeStamp - drag.t0),
      x: round1(x),
      y: round1((e.clientY - drag.y0) / drag.scale),
    };
    if (points.length < MAX_SAMPLES) points.push(point);
    else points[points.length - 1] = point;
  };
  const onUp = (e: PointerEvent) => {
    if (!drag) return;
    sample(e);
    const { input } = drag;
    drag = undefined;
    // A press without a drag is not an answer.
    if (points.length > 2 && x > 0) send(input);
    else place(0);
  };
  for (const target of [handle, piece]) {
    target.addEventListener('pointerdown', onDown);
    target.addEventListener('pointermove', sample);
    target.addEventListener('pointerup', onUp);
    target.addEventListener('pointercancel', onUp);
  }

  handle.addEventListener('keydown', (e) => {
    if (busy || drag) return;
    const big = e.shiftKey ? largeStep : step;
    const moves: Record<string, number> = {
      ArrowRight: x + big,
      ArrowUp: x + big,
      ArrowLeft: x - big,
      ArrowDown: x - big,
      PageUp: x + largeStep,
      PageDown: x - largeStep,
      Home: 0,
      End: max,
    };
    if (e.key in moves) {
      e.preventDefault();
      if (keyT0 < 0) {
        keyT0 = e.timeStamp;
        points = [];
      }
      place(moves[e.key] as number);
      points.push({ t: round1(e.timeStamp - keyT0), x: round1(x), y: 0 });
    } else if ((e.key === 'Enter' || e.key === ' ') && keyT0 >= 0) {
      e.preventDefault();
      // The confirming key is the run's last point: the server checks the pause before it.
      points.push({ t: round1(e.timeStamp - keyT0), x: round1(x), y: 0 });
      send('keyboard');
    }
  });

  return {
    el,
    actions: [],
    focusTarget: handle,
    reset() {
      busy = false;
      points = [];
      keyT0 = -1;
      place(0, true);
    },
  };
}
