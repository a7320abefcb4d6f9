import { NavLink, Outlet, useNavigate } from 'react-router';
import { roleNames } from '../lib/format';
import { useSignedIn, useSession } from '../lib/session';

/** Every signed-in page: who and where the person is, where they can go, and the way out. */
export function Frame() {
  const session = useSignedIn();
  const { signOut } = useSession();
  const navigate = useNavigate();
  const { person, organization, can } = session;

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="brand">
          <span className="logo" aria-hidden="true">
            ⌂
          </span>
          <span>
            Gatehouse <span className="org">· {organization.name}</span>
          </span>
        </div>
        <div className="who">
          <span>
            {person.name ?? person.email} <span className="badge">{roleNames[person.role]}</span>
          </span>
          <button
            type="button"
            className="button secondary small"
            onClick={() => {
              // Signed out here whatever the server said (the session may have ended already).
              void signOut()
                .catch(() => undefined)
                .then(() => navigate('/sign-in', { replace: true }));
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <nav className="sidebar" aria-label="Console">
        <ul>
          <li>
            <NavLink to="/" end>
              Overview
            </NavLink>
          </li>
          <li>
            <NavLink to="/reviews">Review queue</NavLink>
          </li>
          <li>
            <NavLink to="/agents">Agent Command Center</NavLink>
          </li>
          {(can('editPolicy') || can('readAudit')) && (
            <li>
              <NavLink to="/policy">Policy</NavLink>
            </li>
          )}
          {can('readAudit') && (
            <li>
              <NavLink to="/audit">Audit</NavLink>
            </li>
          )}
          <li>
            <a href="/api/docs">API playground</a>
          </li>
        </ul>
        <h2 className="nav-heading">Settings</h2>
        <ul>
          {can('managePeople') && (
            <li>
              <NavLink to="/settings/people">People</NavLink>
            </li>
          )}
          {(can('decideReviews') || can('manageWebhooks')) && (
            <li>
              <NavLink to="/settings/notifications">Notifications</NavLink>
            </li>
          )}
          {can('manageKeys') && (
            <li>
              <NavLink to="/settings/advanced/api-keys">Advanced: API keys</NavLink>
            </li>
          )}
          {can('manageWebhooks') && (
            <li>
              <NavLink to="/settings/advanced/webhooks">Advanced: Webhooks</NavLink>
            </li>
          )}
          {/* Everyone's own: last, after the organization's settings (the keyboard's order of those stays). */}
          <li>
            <NavLink to="/settings/passkeys">Passkeys</NavLink>
          </li>
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
