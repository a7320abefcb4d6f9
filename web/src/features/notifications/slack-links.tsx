import { useEffect, useState } from 'react';
import { ConfirmButton } from '../../lib/confirm-button';
import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import { notificationsApi, type SlackLink } from './api';
import { isNamed, slackUserName, workspaceName } from './slack-user';

/** The signed-in person's Slack users: whose presses of Approve and Deny count as theirs, and a way to unlink each. */
export function SlackLinks() {
  const [links, setLinks] = useState<SlackLink[]>();
  const [error, setError] = useState<unknown>();
  const [open, setOpen] = useState<string>();
  const [status, setStatus] = useState<string>();
  const keyOf = (link: SlackLink) => `${link.workspace}/${link.slack_user}`;

  useEffect(() => {
    notificationsApi.slackLinks().then((found) => setLinks(found.links), setError);
  }, []);

  async function remove(link: SlackLink) {
    setError(undefined);
    try {
      await notificationsApi.removeSlackLink(link);
      setLinks((current) => current?.filter((each) => keyOf(each) !== keyOf(link)));
      setStatus(`Unlinked ${slackUserName(link)}: its presses no longer count as yours.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setOpen(undefined);
    }
  }

  return (
    <section className="card" aria-labelledby="slack-links-heading">
      <h2 id="slack-links-heading">Your Slack</h2>
      <p>
        To approve or deny from Slack, press a button there once: Gatehouse answers with a link, only you see it, to confirm here, signed in, that the
        Slack user is you. Never by name or email: only what you confirm counts.
      </p>
      {links === undefined ? (
        error ? <FormError error={error} /> : <p role="status">Loading…</p>
      ) : links.length === 0 ? (
        <p>No Slack user is linked to you.</p>
      ) : (
        <ul className="plain">
          {links.map((link) => (
            <li key={keyOf(link)} className="row">
              <span>
                Slack user {slackUserName(link)} in workspace {workspaceName(link)}
                {isNamed(link) && (
                  <>
                    {' '}
                    (<code>{link.slack_user}</code> in <code>{link.workspace}</code>)
                  </>
                )}
                , linked {when(link.linked_at)}
              </span>
              <ConfirmButton
                label="Unlink"
                accessibleLabel={`Unlink Slack user ${slackUserName(link)}`}
                confirmLabel="Unlink: its presses stop counting as yours"
                open={open === keyOf(link)}
                onOpen={() => setOpen(keyOf(link))}
                onCancel={() => setOpen(undefined)}
                onConfirm={() => void remove(link)}
              />
            </li>
          ))}
        </ul>
      )}
      {links !== undefined && <FormError error={error} />}
      <p role="status" className="hint">
        {status ?? ''}
      </p>
    </section>
  );
}
