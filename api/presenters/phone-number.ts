import type { PhoneNumber } from '../../db/entities/index.js';

/** How the deployment's numbers are reached (CARRIER=sip: the SIP side answers every voice number). */
export interface NumberReach {
  sip: boolean;
}

/**
 * The spec's PhoneNumber object. `capabilities` is what the number was created with (`voice`,
 * `sms`) and, for a voice number, how it is reached: `sip` while the SIP side answers it.
 */
export function presentPhoneNumber(phoneNumber: PhoneNumber, reach: NumberReach = { sip: false }) {
  const stored = phoneNumber.capabilities;
  return {
    object: 'phone_number',
    id: phoneNumber.id,
    number: phoneNumber.number,
    label: phoneNumber.label ?? null,
    agent_id: phoneNumber.agent ?? null,
    status: phoneNumber.status,
    capabilities: reach.sip && stored.includes('voice') ? [...stored, 'sip'] : stored,
    created_at: phoneNumber.createdAt.toISOString(),
  };
}
