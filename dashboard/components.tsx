import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.js';

// Building blocks every page uses: loading and error states, buttons that show their work,
// pagination over the API's cursors, a secret shown once with a copy button.

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Loads `load()` now and whenever `deps` change; `reload()` loads again keeping the old data shown. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [version, setVersion] = useState(0);
  // The caller names what the load depends on (deps), as with useEffect.
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, version]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Runs an action with a busy flag and keeps its error for display. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const failure = error instanceof ApiFailure ? error : null;
  return (
    <div class="error" role="alert">
      <strong>{failure ? failure.message : String((error as Error)?.message ?? error)}</strong>
      {failure && (
        <span class="error-meta">
          {failure.code}
          {failure.param ? ` · ${failure.param}` : ''}
          {failure.requestId ? ` · request_id ${failure.requestId}` : ''}
        </span>
      )}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Loading, error or the content. */
export function Loaded<T>({
  resource,
  children,
}: {
  resource: Resource<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (resource.data === undefined) {
    return resource.error ? <ErrorNote error={resource.error} /> : <Loading />;
  }
  return (
    <>
      {resource.error ? <ErrorNote error={resource.error} /> : null}
      {children(resource.data)}
    </>
  );
}

/** Cursor pagination: the cursors of the pages before this one are kept for "Newer". */
export function usePages() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  return {
    cursor,
    reset: () => setCursors([null]),
    older: (next: string) => setCursors((c) => [...c, next]),
    newer: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    isFirst: cursors.length === 1,
  };
}

export function Pager({
  pages,
  nextCursor,
  label,
}: {
  pages: ReturnType<typeof usePages>;
  nextCursor: string | null;
  label: string;
}) {
  if (pages.isFirst && !nextCursor) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={pages.isFirst} onClick={pages.newer}>
        ← Newer
      </button>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && pages.older(nextCursor)}>
        Older →
      </button>
    </nav>
  );
}

/**
 * A list as every list page shows it: loading and error states, the empty note, a table with a
 * header row and one row per item (`row` returns the item's `<tr>`, with its key), and for a paged
 * list the pager below it.
 */
export function ListTable<T>({
  resource,
  empty,
  columns,
  row,
  pager,
}: {
  resource: Resource<{ data: T[]; next_cursor?: string | null }>;
  empty: ComponentChildren;
  /** Column headers; `false` leaves a column out (one only some people see). */
  columns: (string | false)[];
  row: (item: T) => ComponentChildren;
  pager?: { pages: ReturnType<typeof usePages>; label: string };
}) {
  return (
    <>
      <Loaded resource={resource}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>{empty}</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    {columns.map(
                      (column) =>
                        column !== false && (
                          <th key={column} scope="col">
                            {column}
                          </th>
                        ),
                    )}
                  </tr>
                </thead>
                <tbody>{page.data.map(row)}</tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      {resource.data && pager && (
        <Pager pages={pager.pages} nextCursor={resource.data.next_cursor ?? null} label={pager.label} />
      )}
    </>
  );
}

export function SecretOnce({ label, secret }: { label: string; secret: string }) {
  const [copied, setCopied] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
    } catch {
      field.current?.select();
      document.execCommand('copy');
    }
    setCopied(true);
  };
  return (
    <section class="secret" aria-label={label}>
      <p>
        <strong>{label}</strong>: shown only now. Store it safely; it cannot be shown again.
      </p>
      <div class="secret-row">
        <input
          ref={field}
          readOnly
          value={secret}
          aria-label={label}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </section>
  );
}

export function Badge({ value }: { value: string | null }) {
  if (!value) return <span class="badge">–</span>;
  return <span class={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value.replace(/_/g, ' ')}</span>;
}

export function Field(props: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the label's child (props.children)
    <label class="field">
      <span class="field-label">{props.label}</span>
      {props.children}
      {props.hint && <span class="hint">{props.hint}</span>}
    </label>
  );
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '–';
  const m = Math.floor(seconds / 60);
  return m ? `${m} min ${seconds % 60} s` : `${seconds} s`;
}

export function PageTitle({ children }: { children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${typeof children === 'string' ? children : 'Dashboard'} · Voice agents`;
  }, [children]);
  return <h1 tabIndex={-1}>{children}</h1>;
}
