import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * Asks before an action that breaks something, naming what breaks: a modal <dialog> (focus held inside,
 * Escape cancels), with the action on its own button and Cancel focused first, so Enter does not confirm.
 */
export function ConfirmDialog(props: {
  title: string;
  action: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return html`<dialog ref=${dialog} class="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-body"
    onCancel=${(e: Event) => {
      e.preventDefault();
      props.onCancel();
    }}>
    <h2 id="confirm-title">${props.title}</h2>
    <div id="confirm-body">${props.children}</div>
    <div class="actions">
      <button type="button" class="secondary" autofocus onClick=${props.onCancel}>Cancel</button>
      <button type="button" class=${props.danger ? 'danger' : ''} onClick=${props.onConfirm}>${props.action}</button>
    </div>
  </dialog>`;
}
