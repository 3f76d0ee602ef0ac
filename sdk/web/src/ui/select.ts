import type { ViewImage } from '../contract.ts';
import { button, h, type Kind, type KindContext, pct, picks, picture } from './kit.ts';

/** The select view of core/src/challenges/select.ts (the fields the widget uses). */
interface SelectView {
  prompt: { key: string; params: Record<string, string | number> };
  image: ViewImage;
  tiles: Array<{
    index: number;
    x: number;
    y: number;
    width: number;
    height: number;
    label: { key: string; params: Record<string, string | number> };
  }>;
  a11y: { labelKey: string; instructionsKey: string };
}

/**
 * Select: toggle every tile matching the prompt, then Verify. Each tile is a toggle button over its
 * rectangle of the grid image, labelled by its position. Keyboard: one tile is in the Tab order (roving
 * tabindex), arrows and Home/End move between tiles, Space or Enter toggles. A tile toggled with Space or
 * Enter makes the answer a keyboard answer, which carries the keyboard proof-of-work (docs/accessibility.md).
 */
export function select(ctx: KindContext, view: SelectView): Kind {
  const W = view.image.width;
  const H = view.image.height;
  const columns = new Set(view.tiles.map((t) => t.x)).size || 1;

  const el = h('div', 'select');
  const grid = h('div', 'stage grid', {
    role: 'group',
    'aria-label': ctx.tr(view.a11y.labelKey),
    'aria-describedby': 'gh-help',
  });
  grid.style.aspectRatio = `${W} / ${H}`;
  grid.append(picture(view.image));
  const help = h('p', 'sr', { id: 'gh-help' });
  help.textContent = ctx.tr(view.a11y.instructionsKey);
  el.append(grid, help);

  const verify = button(ctx.tr('verify'));
  const chosen = new Set<number>();
  let busy = false;
  let keyed = false;

  const tiles = view.tiles.map((tile, i) => {
    const b = h('button', 'tile', {
      type: 'button',
      'aria-pressed': 'false',
      'aria-label': ctx.tr(tile.label.key, tile.label.params),
      tabindex: i === 0 ? 0 : -1,
    });
    Object.assign(b.style, {
      left: pct(tile.x, W),
      top: pct(tile.y, H),
      width: pct(tile.width, W),
      height: pct(tile.height, H),
    });
    b.onclick = () => {
      if (busy) return;
      if (chosen.has(tile.index)) chosen.delete(tile.index);
      else chosen.add(tile.index);
      b.setAttribute('aria-pressed', String(chosen.has(tile.index)));
      focusTile(i);
      refresh();
    };
    grid.append(b);
    return b;
  });

  const focusTile = (i: number) => {
    tiles.forEach((t, j) => {
      t.tabIndex = j === i ? 0 : -1;
    });
    tiles[i]?.focus();
  };

  grid.addEventListener('keydown', (e) => {
    const at = tiles.indexOf(e.target as HTMLButtonElement);
    if (at < 0) return;
    // The button's own click follows and toggles the tile (Enter now, Space on release).
    if (e.key === 'Enter' || e.key === ' ') keyed = true;
    const last = tiles.length - 1;
    const next: Record<string, number> = {
      ArrowRight: Math.min(last, at + 1),
      ArrowLeft: Math.max(0, at - 1),
      ArrowDown: at + columns <= last ? at + columns : at,
      ArrowUp: at - columns >= 0 ? at - columns : at,
      Home: 0,
      End: last,
    };
    if (!(e.key in next)) return;
    e.preventDefault();
    focusTile(next[e.key] as number);
  });

  const refresh = () => {
    verify.disabled = chosen.size === 0;
    // Not `disabled` while the answer is checked: a disabled button drops its focus to <body>.
    verify.setAttribute('aria-disabled', String(busy));
  };
  verify.onclick = () => {
    if (busy) return;
    busy = true;
    refresh();
    ctx.submit(
      picks(
        [...chosen].sort((a, b) => a - b),
        keyed,
      ),
    );
  };
  refresh();

  return { el, actions: [verify], focusTarget: tiles[0] ?? grid };
}
