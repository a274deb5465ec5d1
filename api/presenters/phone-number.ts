import type { PhoneNumber } from '../../db/entities/index.js';

/** The spec's PhoneNumber object. */
export function presentPhoneNumber(phoneNumber: PhoneNumber) {
  return {
    object: 'phone_number',
    id: phoneNumber.id,
    number: phoneNumber.number,
    label: phoneNumber.label ?? null,
    agent_id: phoneNumber.agent ?? null,
    status: phoneNumber.status,
    capabilities: phoneNumber.capabilities,
    created_at: phoneNumber.createdAt.toISOString(),
  };
}
