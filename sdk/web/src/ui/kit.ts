import type { ViewImage } from '../contract.ts';
import type { Translate } from './strings.ts';

/** What a challenge kind gets from the shell. */
export interface KindContext {
  tr: Translate;
  /** Sends an answer; the shell shows progress and the outcome. */
  submit(answer: unknown): void;
  /** prefers-reduced-motion: reduce. */
  reduced: boolean;
}

/** A rendered challenge kind. */
export interface Kind {
  el: HTMLElement;
  /** Buttons for the footer (Undo, Verify), after the status message. */
  actions: HTMLElement[];
  /** Where focus goes when the challenge appears. */
  focusTarget: HTMLElement;
  /**
   * Unused: a wrong answer gets a new challenge (one answer per picture). Optional only until the slide
   * module, which still defines it, drops it.
   */
  reset?(): void;
}

/**
 * A click or select answer: the list itself, or made with the keyboard `{input: "keyboard", picks}`, to
 * which the shell adds the keyboard proof-of-work (docs/accessibility.md).
 */
export const picks = <T>(list: T[], keyed: boolean): unknown =>
  keyed ? { input: 'keyboard', picks: list } : list;

/** Creates an element with a class and attributes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  attrs: Record<string, string | number> = {},
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

/** An inline SVG built node by node (no innerHTML, so pages enforcing Trusted Types work). */
export function svg(
  viewBox: string,
  children: Array<[tag: string, attrs: Record<string, string>]>,
): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const root = document.createElementNS(ns, 'svg');
  root.setAttribute('viewBox', viewBox);
  root.setAttribute('aria-hidden', 'true');
  for (const [tag, attrs] of children) {
    const child = document.createElementNS(ns, tag);
    for (const [name, value] of Object.entries(attrs)) child.setAttribute(name, value);
    root.append(child);
  }
  return root;
}

/** A button with text. */
export function button(text: string, className = 'btn'): HTMLButtonElement {
  const b = h('button', className, { type: 'button' });
  b.textContent = text;
  return b;
}

/** A data: URL for an image from a view (its `src`, or base64 / a serialised Node Buffer in `data`). */
export function imageSrc(img: ViewImage): string {
  if (img.src) return img.src;
  const d = img.data;
  if (typeof d === 'string') return d.startsWith('data:') ? d : `data:${img.mime};base64,${d}`;
  let bytes = '';
  for (const b of d?.data ?? []) bytes += String.fromCharCode(b);
  return `data:${img.mime};base64,${btoa(bytes)}`;
}

/** An image element showing a view image, decorative (the prompt and labels carry the meaning). */
export function picture(img: ViewImage, className = ''): HTMLImageElement {
  const node = h('img', className, { alt: '', draggable: 'false' });
  node.src = imageSrc(img);
  return node;
}

/** A percentage of `whole`, for CSS. */
export const pct = (part: number, whole: number): string => `${(part / whole) * 100}%`;

/** Rounds to one decimal place (answers stay small and exact enough). */
export const round1 = (n: number): number => Math.round(n * 10) / 10;
