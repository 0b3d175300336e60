// Page paths (`/calls/<id>`, `/sessions/<id>`, …) with the History API; the server answers index.html for each.
// A page follows its whole location, the query too: `/sessions?agent=…` is another list than `/sessions`.
import { useEffect, useState } from 'preact/hooks';

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('subako:navigate'));
}

/** Where the page is: its path and its query (with the `?`, or empty). */
export interface Place {
  path: string;
  search: string;
}

const here = (): Place => ({ path: location.pathname, search: location.search });

export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    // A new object only when something changed, so a navigation to the same place renders nothing again.
    const update = () => setPlace((current) => {
      const next = here();
      return next.path === current.path && next.search === current.search ? current : next;
    });
    window.addEventListener('popstate', update);
    window.addEventListener('subako:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('subako:navigate', update);
    };
  }, []);
  return place;
}

/** An in-app link: a real href (open in a new tab works), handled here on a plain click. */
export function linkProps(path: string): { href: string; onClick: (e: MouseEvent) => void } {
  return {
    href: path,
    onClick: (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      navigate(path);
    },
  };
}

/** A user's page (its id is the application's: any character of it may need escaping, and it may hold a dot). */
export function userPagePath(id: string): string {
  return `/users/${encodeURIComponent(id)}`;
}
