import { useEffect, useLayoutEffect, useRef, type RefObject } from 'react';

// The queue worked from the keyboard: single keys move between the cards and act on the one that has the focus
// (its own buttons are pressed, so a passkey, a quorum or an error goes exactly as with the mouse), and the focus
// goes on to the next card once a decision takes one away.

/** The keys, as the legend and the help show them. */
export const queueKeys = [
  { keys: ['j', '↓'], short: 'next', what: 'Next review (↓ when a card has the focus)' },
  { keys: ['k', '↑'], short: 'previous', what: 'Previous review (↑ when a card has the focus)' },
  { keys: ['a'], short: 'approve', what: 'Approve the review (through your passkey where the organization asks for one)' },
  { keys: ['d', 'd'], short: 'deny', what: 'Deny: the first d moves to the Deny button and asks, the second denies; Esc keeps the review' },
  { keys: ['e'], short: 'edit', what: 'Edit, then approve (a held create or update)' },
  { keys: ['c'], short: 'comment', what: 'Write a comment, sent with the decision; Esc goes back to the card' },
  { keys: ['x'], short: 'select', what: 'Select the review for a batch verdict, or unselect it' },
  { keys: ['b'], short: 'batch', what: 'Go to the batch verdict on the selected reviews' },
  { keys: ['o'], short: 'open', what: 'Open the review on its own page (Enter too, when the card has the focus)' },
  { keys: ['?'], short: 'help', what: 'Show or hide this list' },
] as const;

const cardSelector = ':scope > article[data-review-id]';
const action = (card: HTMLElement, name: 'approve' | 'deny' | 'edit' | 'comment') => card.querySelector<HTMLElement>(`[data-queue-action="${name}"]`);
const cardName = (card: HTMLElement) => card.querySelector('h2, h3')?.textContent?.trim() ?? 'this review';

export function cardsIn(list: HTMLElement | null): HTMLElement[] {
  return list ? [...list.querySelectorAll<HTMLElement>(cardSelector)] : [];
}

/** Focuses a card and brings its head into view (the sticky batch bar is allowed for by the card's scroll margin). */
export function focusCard(card: HTMLElement): void {
  card.focus({ preventScroll: true });
  card.scrollIntoView({ block: 'start' });
}

/** Fields take the keys typed in them; shortcuts wait until the person leaves them. */
function typingIn(target: HTMLElement): boolean {
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

export interface QueueKeyHandlers {
  /** Off when the person turned single-key shortcuts off (WCAG 2.1.4). */
  enabled: boolean;
  announce: (text: string) => void;
  toggleHelp: () => void;
  open: (reviewId: string) => void;
  /** Moves the focus to the batch verdict; false when there is none. */
  toBatch: () => boolean;
}

export function useQueueKeys(list: RefObject<HTMLElement | null>, handlers: QueueKeyHandlers): void {
  const latest = useRef(handlers);
  useLayoutEffect(() => {
    latest.current = handlers;
  });
  useEffect(() => {
    function onKeyDown(event: KeyboardEvent) {
      const { enabled, announce, toggleHelp, open, toBatch } = latest.current;
      const container = list.current;
      if (!enabled || !container || event.defaultPrevented || event.isComposing) return;
      if (event.ctrlKey || event.metaKey || event.altKey || (event.shiftKey && event.key !== '?')) return;
      const target = event.target instanceof HTMLElement ? event.target : document.body;
      const within = target.closest<HTMLElement>('article[data-review-id]');
      const card = within?.parentElement === container ? within : null;
      const onCard = card !== null && target === card;
      if (typingIn(target)) {
        if (event.key === 'Escape' && card) {
          event.preventDefault();
          focusCard(card);
        }
        return;
      }
      const cards = cardsIn(container);
      const move = (step: 1 | -1) => {
        const at = card ? cards.indexOf(card) : -1;
        const next = at === -1 ? cards[step === 1 ? 0 : cards.length - 1] : cards[at + step];
        if (next) focusCard(next);
        else announce(cards.length === 0 ? 'No reviews shown.' : step === 1 ? 'This is the last review shown.' : 'This is the first review shown.');
      };
      const handled = () => event.preventDefault();
      if (event.key === '?') return handled(), toggleHelp();
      if (event.key === 'j' || (event.key === 'ArrowDown' && onCard)) return handled(), move(1);
      if (event.key === 'k' || (event.key === 'ArrowUp' && onCard)) return handled(), move(-1);
      if (event.key === 'b' && toBatch()) return handled();
      if (event.key === 'Escape' && card && !onCard) return handled(), focusCard(card);
      if (!['a', 'd', 'e', 'c', 'x', 'o', 'Enter'].includes(event.key) || (event.key === 'Enter' && !onCard)) return;
      handled();
      if (!card) return announce('Move to a review first: press j.');
      const name = cardName(card);
      const press = (button: HTMLElement | null, missing: string) => {
        if (!button) return announce(missing);
        if (button instanceof HTMLButtonElement && button.disabled) return announce(`${button.textContent?.trim() ?? 'That'} is not possible now.`);
        button.click();
      };
      switch (event.key) {
        case 'a':
          return press(action(card, 'approve'), `${name} cannot be approved here.`);
        case 'd': {
          const deny = action(card, 'deny');
          if (deny && target === deny) return press(deny, '');
          if (!deny) return announce(`${name} cannot be denied here.`);
          deny.focus();
          return announce(`Deny ${name}? Press d again to deny it, Escape to keep it.`);
        }
        case 'e':
          return press(action(card, 'edit'), `${name} cannot be edited before approving.`);
        case 'c': {
          const comment = action(card, 'comment');
          if (comment) comment.focus();
          else announce(`${name} takes no comment now.`);
          return;
        }
        case 'x': {
          const box = card.querySelector<HTMLInputElement>('input.select-review');
          if (!box) return announce(`${name} cannot be selected.`);
          box.click();
          const selected = container.querySelectorAll('input.select-review:checked').length;
          return announce(`${box.checked ? 'Selected' : 'Unselected'}: ${name}. ${selected} selected.`);
        }
        default:
          return open(card.dataset.reviewId!);
      }
    }
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [list]);
}

/**
 * Keeps the keyboard in the queue as cards leave it: after the person's decision the next card takes the focus
 * (`decided`, called when the answer comes); a card taken away by the live list (decided elsewhere, or the person's
 * own verdict arriving first) hands the focus to the card now in its place.
 */
export function useFocusFollowsQueue(list: RefObject<HTMLElement | null>, shown: readonly { id: string }[] | undefined) {
  const workingOn = useRef<{ id: string; index: number }>(undefined);
  const nextAfterDecision = useRef<string | 'first'>(undefined);

  useEffect(() => {
    const container = list.current;
    if (!container) return;
    const onFocusIn = (event: FocusEvent) => {
      const card = (event.target as HTMLElement).closest<HTMLElement>('article[data-review-id]');
      if (card?.parentElement !== container) return;
      workingOn.current = { id: card.dataset.reviewId!, index: cardsIn(container).indexOf(card) };
    };
    container.addEventListener('focusin', onFocusIn);
    return () => container.removeEventListener('focusin', onFocusIn);
  }, [list]);

  useEffect(() => {
    const container = list.current;
    if (!shown || !container) return;
    const cards = cardsIn(container);
    const wanted = nextAfterDecision.current;
    if (wanted !== undefined) {
      nextAfterDecision.current = undefined;
      const card = wanted === 'first' ? cards[0] : (cards.find((candidate) => candidate.dataset.reviewId === wanted) ?? cards[Math.min(workingOn.current?.index ?? 0, cards.length - 1)]);
      if (card) focusCard(card);
      return;
    }
    const lost = document.activeElement === null || document.activeElement === document.body;
    const was = workingOn.current;
    if (lost && was && !shown.some((review) => review.id === was.id)) {
      const card = cards[Math.min(was.index, cards.length - 1)];
      if (card) focusCard(card);
    }
  }, [list, shown]);

  return {
    /** The person decided `id` (its answer came): the focus moves on to the card after it, or the one before the last. */
    decided(id: string) {
      const container = list.current;
      const cards = cardsIn(container);
      const card = cards.find((candidate) => candidate.dataset.reviewId === id);
      const active = document.activeElement;
      if (!card || !(active === null || active === document.body || card.contains(active))) return;
      const at = cards.indexOf(card);
      const next = cards[at + 1] ?? cards[at - 1];
      workingOn.current = { id, index: at };
      nextAfterDecision.current = next?.dataset.reviewId;
    },
    /** A new page of the queue: its first card takes the focus once it is shown. */
    pageTurned() {
      nextAfterDecision.current = 'first';
    },
  };
}
