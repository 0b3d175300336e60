// Page paths (`/calls/<id>`, `/sessions/<id>`, …) with the History API; the server answers index.html for each.
import { useEffect, useState } from 'preact/hooks';

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('subako:navigate'));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    window.addEventListener('popstate', update);
    window.addEventListener('subako:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('subako:navigate', update);
    };
  }, []);
  return path;
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
