import { useEffect, useState } from 'preact/hooks';
import {
  api,
  type Delivery,
  type DeliveryAttempt,
  type List,
  query,
  type Webhook,
  type WebhookWithSecret,
} from '../api.js';
import {
  Badge,
  Empty,
  ErrorNote,
  formatTime,
  ListTable,
  Loaded,
  PageTitle,
  SecretOnce,
  useAction,
  usePages,
  useResource,
} from '../components.js';
import { Link, navigate } from '../router.js';
import { useSession } from '../session.js';

export function WebhookPage({ id }: { id: string }) {
  const { canManage } = useSession();
  const hook = useResource(() => api.get<Webhook>(`/v1/webhooks/${id}`), [id]);
  const pages = usePages();
  const deliveries = useResource(
    () =>
      api.get<List<Delivery>>(`/v1/webhooks/${id}/deliveries${query({ limit: 20, cursor: pages.cursor })}`),
    [id, pages.cursor],
  );
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const pending = deliveries.data?.data.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(deliveries.reload, 2000);
    return () => clearInterval(timer);
  }, [pending]);

  const act = (what: () => Promise<unknown>, done: string) =>
    action.run(async () => {
      await what();
      setNotice(done);
      hook.reload();
      deliveries.reload();
    });

  return (
    <Loaded resource={hook}>
      {(h) => (
        <>
          <p class="crumbs">
            <Link href="/webhooks">Webhooks</Link> /
          </p>
          <PageTitle>Endpoint</PageTitle>
          <section class="card" aria-labelledby="hook-facts">
            <h2 id="hook-facts" class="break">
              {h.url}
            </h2>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <Badge value={h.status} />
              </dd>
              <dt>Events</dt>
              <dd>{h.events.join(', ')}</dd>
              <dt>Description</dt>
              <dd>{h.description ?? '–'}</dd>
              <dt>Created</dt>
              <dd>{formatTime(h.created_at)}</dd>
            </dl>
            {secret && <SecretOnce label="New signing secret" secret={secret} />}
            {notice && (
              <p class="notice" role="status">
                {notice}
              </p>
            )}
            <ErrorNote error={action.error} />
            {canManage && (
              <div class="actions">
                {h.status === 'active' ? (
                  <button
                    type="button"
                    disabled={action.busy}
                    onClick={() =>
                      act(() => api.patch(`/v1/webhooks/${id}`, { status: 'paused' }), 'Paused.')
                    }
                  >
                    Pause
                  </button>
                ) : (
                  <button
                    type="button"
                    disabled={action.busy}
                    onClick={() =>
                      act(() => api.patch(`/v1/webhooks/${id}`, { status: 'active' }), 'Resumed.')
                    }
                  >
                    Resume
                  </button>
                )}
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    act(() => api.post(`/v1/webhooks/${id}/test`), 'Test event sent; its delivery is below.')
                  }
                >
                  Send test event
                </button>
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    window.confirm('Rotate the signing secret? The old one stops working at once.') &&
                    act(async () => {
                      const rotated = await api.post<WebhookWithSecret>(`/v1/webhooks/${id}/rotate-secret`);
                      setSecret(rotated.secret ?? null);
                    }, 'Secret rotated.')
                  }
                >
                  Rotate secret
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={action.busy}
                  onClick={() =>
                    window.confirm('Delete this endpoint?') &&
                    action.run(async () => {
                      await api.del(`/v1/webhooks/${id}`);
                      navigate('/webhooks');
                    })
                  }
                >
                  Delete
                </button>
              </div>
            )}
          </section>
          <section class="card" aria-labelledby="delivery-log">
            <div class="row-between">
              <h2 id="delivery-log">Delivery log</h2>
              <button type="button" onClick={deliveries.reload}>
                Refresh
              </button>
            </div>
            <ListTable
              resource={deliveries}
              empty="Nothing delivered yet."
              columns={[
                'Created',
                'Event',
                'Status',
                'Attempts',
                'Last response',
                'Trigger',
                canManage && 'Action',
              ]}
              row={(d) => (
                <DeliveryRow
                  key={d.id}
                  webhookId={id}
                  delivery={d}
                  columns={canManage ? 7 : 6}
                  resend={
                    canManage
                      ? () => act(() => api.post(`/v1/webhooks/${id}/deliveries/${d.id}/resend`), 'Resent.')
                      : undefined
                  }
                  busy={action.busy}
                />
              )}
              pager={{ pages, label: 'Deliveries' }}
            />
          </section>
        </>
      )}
    </Loaded>
  );
}

/** One delivery, and on request every attempt it took (status code, duration, what went wrong). */
function DeliveryRow(props: {
  webhookId: string;
  delivery: Delivery;
  columns: number;
  resend?: () => void;
  busy: boolean;
}) {
  const d = props.delivery;
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr data-delivery={d.id}>
        <td>{formatTime(d.created_at)}</td>
        <td>{d.event_type}</td>
        <td>
          <Badge value={d.status} />
        </td>
        <td>
          <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
            {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
          </button>
        </td>
        <td class="break">
          {d.error ?? (d.response_status ? `HTTP ${d.response_status}` : '–')}
          {d.delivered_at ? ` · delivered ${formatTime(d.delivered_at)}` : ''}
        </td>
        <td>{d.trigger}</td>
        {props.resend && (
          <td>
            <button type="button" disabled={props.busy} onClick={props.resend}>
              Resend
            </button>
          </td>
        )}
      </tr>
      {open && (
        <tr class="attempts-row">
          <td colSpan={props.columns}>
            <Attempts webhookId={props.webhookId} deliveryId={d.id} attempts={d.attempts} />
          </td>
        </tr>
      )}
    </>
  );
}

function Attempts({
  webhookId,
  deliveryId,
  attempts,
}: {
  webhookId: string;
  deliveryId: string;
  attempts: number;
}) {
  const list = useResource(
    () =>
      api.get<List<DeliveryAttempt>>(
        `/dashboard/api/webhooks/${webhookId}/deliveries/${deliveryId}/attempts`,
      ),
    [deliveryId, attempts],
  );
  return (
    <Loaded resource={list}>
      {(page) =>
        page.data.length === 0 ? (
          <Empty>Not attempted yet.</Empty>
        ) : (
          <ol class="attempts" aria-label="Attempts">
            {page.data.map((a) => (
              <li key={a.attempt}>
                Attempt {a.attempt} ({a.trigger}) at {formatTime(a.attempted_at)}: {a.duration_ms} ms,{' '}
                <span class="break">
                  {a.error ??
                    (a.response_status
                      ? `HTTP ${a.response_status}${a.response_excerpt ? `: ${a.response_excerpt}` : ''}`
                      : 'no answer')}
                </span>
              </li>
            ))}
          </ol>
        )
      }
    </Loaded>
  );
}
