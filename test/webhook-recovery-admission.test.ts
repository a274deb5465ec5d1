import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recoveryPeriodRefusal } from '../lib/webhooks/admit-recovery.js';
import { RECOVERY_WINDOW_MS } from '../lib/webhooks/recovery.js';

// The period rule of a recovery (lib/webhooks/admit-recovery.ts), at its edges. The endpoint and
// running-recovery rules are exercised through the API in webhooks-recovery.test.ts.

const now = new Date('2026-11-25T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

describe('recoveryPeriodRefusal', () => {
  test('a period inside the window, open or closed, may be recovered', () => {
    assert.equal(recoveryPeriodRefusal({ since: ago(RECOVERY_WINDOW_MS), until: null, now }), null);
    assert.equal(recoveryPeriodRefusal({ since: ago(60_000), until: ago(60_000), now }), null);
    assert.equal(recoveryPeriodRefusal({ since: now, until: null, now }), null);
  });

  test('since further back than the window is refused', () => {
    assert.deepEqual(recoveryPeriodRefusal({ since: ago(RECOVERY_WINDOW_MS + 1), until: null, now }), {
      code: 'since_too_old',
    });
  });

  test('since in the future is refused', () => {
    assert.deepEqual(recoveryPeriodRefusal({ since: ago(-1), until: null, now }), {
      code: 'since_in_future',
    });
  });

  test('until before since is refused', () => {
    assert.deepEqual(recoveryPeriodRefusal({ since: ago(60_000), until: ago(60_001), now }), {
      code: 'until_before_since',
    });
  });
});
