import { Link } from 'react-router';
import { useSignedIn, type Permission } from '../../lib/session';

const abilities: Record<Permission, string> = {
  decideReviews: 'decide held writes (approve or deny)',
  manageKeys: "manage the organization's API keys and its API access",
  managePeople: 'invite people, change roles, deactivate, reset passwords',
  editPolicy: "edit the organization's policy",
  seeMemories: 'see what agents remember',
  readAudit: 'read the audit trail (every decision, review and change)',
  manageWebhooks: "manage the organization's webhook endpoints and their delivery logs",
};

/** Whether agents may reach the organization at all, and what the signed-in person may do: the quiet part of the page. */
export function AboutYou() {
  const { organization, permissions, can } = useSignedIn();
  return (
    <div className="overview-about">
      <section className="card" aria-labelledby="api-access-heading">
        <h2 id="api-access-heading">API access</h2>
        {organization.api_access ? (
          <p>
            <span className="state on">On</span> Agents, automation and scripts reach the organization's data with their API keys over REST and MCP.
          </p>
        ) : (
          <p>
            <span className="state off">Off</span> Every API key is refused until an owner or admin switches API access on again.
          </p>
        )}
        {can('manageKeys') && <Link to="/settings/advanced/api-keys">Manage API keys</Link>}
      </section>
      <section className="card" aria-labelledby="you-heading">
        <h2 id="you-heading">What you can do</h2>
        {permissions.length ? (
          <ul>
            {permissions.map((permission) => (
              <li key={permission}>{abilities[permission]}</li>
            ))}
          </ul>
        ) : (
          <p>As a member you see the organization's review queue and settings; you decide and change nothing.</p>
        )}
        <p>
          Try the API in the <a href="/api/docs">API playground</a> with an API key.
        </p>
      </section>
    </div>
  );
}
