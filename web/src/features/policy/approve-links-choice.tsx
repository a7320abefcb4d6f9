import { useState } from 'react';
import { FormError } from '../../lib/form-error';
import { policyApi, type OrganizationSettings } from './api';

type ApproveLinks = OrganizationSettings['approve_links'];

/** The two choices, from the looser to the stricter (a passkey, where approvals need one, is stricter still). */
const choices: { value: ApproveLinks; label: string; hint: string }[] = [
  {
    value: 'anyone_with_link',
    label: 'Anyone with the link',
    hint: 'The link alone approves: whoever can read the email can approve with it (an assistant that reads the mailbox, say).',
  },
  {
    value: 'signed_in',
    label: 'Signed in as that person',
    hint: 'Approving from a link needs the console session of the person it was sent to: the page offers to sign in as them, and a person signed in approves in one tap.',
  },
];

/**
 * Owners and admins: what an Approve link from a review email needs besides the link. Saved as it is chosen, from
 * the mouse or the keyboard's arrows; Deny links work by the link alone either way.
 */
export function ApproveLinksChoice({ value, passkeysWin, onSaved }: { value: ApproveLinks; passkeysWin: boolean; onSaved: (settings: OrganizationSettings) => void }) {
  const [error, setError] = useState<unknown>();
  // The choice being saved: checked at once (the radios follow the person's hand), and what is saved once it is.
  const [saving, setSaving] = useState<ApproveLinks>();
  const chosen = saving ?? value;

  function choose(next: ApproveLinks) {
    setError(undefined);
    setSaving(next);
    policyApi
      .updateOrganization({ approve_links: next })
      .then(onSaved, setError)
      .finally(() => setSaving(undefined));
  }

  return (
    <fieldset role="radiogroup" aria-labelledby="approve-links-legend" aria-describedby="approve-links-hint" aria-busy={saving !== undefined}>
      <legend id="approve-links-legend">Approve links in emails</legend>
      {choices.map((choice) => (
        <div key={choice.value}>
          <label className="choice">
            <input
              type="radio"
              name="approve-links"
              value={choice.value}
              checked={chosen === choice.value}
              aria-describedby={`approve-links-${choice.value}-hint`}
              onChange={() => choose(choice.value)}
            />
            {choice.label}
          </label>
          <span id={`approve-links-${choice.value}-hint`} className="hint choice-hint">
            {choice.hint}
          </span>
        </div>
      ))}
      <p id="approve-links-hint" className="hint">
        {passkeysWin
          ? 'Approvals need a passkey here, which is stricter: an Approve link asks for the passkey of the person it was sent to, signed in or not.'
          : 'Deny links work by the link alone: denying is always safe.'}
      </p>
      <FormError error={error} />
    </fieldset>
  );
}
