// The subako console: sign in with an API key (kept in sessionStorage for this tab only, sent as a bearer
// header), then Calls (live), Packages, Agents, Sessions, Vaults, Users.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, apiKey, ApiError, signIn, signOut } from './api';
import { ErrorLine } from './components';
import { linkProps, usePlace, type Place } from './router';
import { CallsPage } from './pages/calls';
import { OverviewPage } from './pages/overview';
import { PackagePage, PackagesPage } from './pages/packages';
import { AgentPage, AgentsPage } from './pages/agents';
import { SessionPage, SessionsPage } from './pages/sessions';
import { VaultPage, VaultsPage } from './pages/vaults';
import { UserPage, UsersPage } from './pages/users';
import './style.css';

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <main class="signin">
      <h1>subako</h1>
      <form onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          // Checked before it is kept: a wrong key is said so here, not on every page.
          await api('GET', '/v1/agents?limit=1', undefined, key.trim());
          signIn(key.trim());
          onSignedIn();
        } catch (err) {
          setError(err instanceof ApiError && err.status === 401 ? new Error('That API key is not valid on this server.') : err);
        }
      }}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autocomplete="off" placeholder="sk_…" required value={key} onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit">sign in</button>
        <ErrorLine error={error} />
        <p class="muted">The key is kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer</code>. <code>subako serve</code> prints an admin key on its first start.</p>
      </form>
    </main>
  );
}

// The server answers index.html for these sections (src/server/console-files.ts, CONSOLE_SECTIONS).
const PAGES = [['/overview', 'Overview'], ['/calls', 'Calls'], ['/packages', 'Packages'], ['/agents', 'Agents'], ['/sessions', 'Sessions'], ['/vaults', 'Vaults'], ['/users', 'Users']] as const;

function Page({ place }: { place: Place }) {
  const parts = place.path.split('/').filter(Boolean).map(decodeURIComponent);
  const search = new URLSearchParams(place.search);
  switch (parts[0] ?? 'calls') {
    case 'overview': return <OverviewPage />;
    case 'calls': return <CallsPage selected={parts[1] ?? null} />;
    case 'packages': return parts[1] ? <PackagePage name={parts[1]} /> : <PackagesPage />;
    case 'agents': return parts[1] ? <AgentPage id={parts[1]} /> : <AgentsPage />;
    case 'sessions': return parts[1] ? <SessionPage id={parts[1]} /> : <SessionsPage agent={search.get('agent')} />;
    case 'vaults': return parts[1] ? <VaultPage id={parts[1]} /> : <VaultsPage />;
    case 'users': return parts[1] ? <UserPage id={parts[1]} /> : <UsersPage />;
    default: return <p class="error">No such page. <a {...linkProps('/calls')}>Go to Calls</a></p>;
  }
}

function App() {
  const [signedIn, setSignedIn] = useState(apiKey() !== null);
  const place = usePlace();
  useEffect(() => {
    const out = () => setSignedIn(false);
    window.addEventListener('subako:signed-out', out);
    return () => window.removeEventListener('subako:signed-out', out);
  }, []);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const section = `/${place.path.split('/')[1] || 'calls'}`;
  return (
    <div class="shell">
      <nav class="top">
        <span class="brand">subako</span>
        {PAGES.map(([href, label]) => <a key={href} {...linkProps(href)} class={section === href ? 'active' : ''} aria-current={section === href ? 'page' : undefined}>{label}</a>)}
        <span class="spacer" />
        <button type="button" class="small" onClick={signOut}>sign out</button>
      </nav>
      <main class="content"><Page place={place} /></main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
