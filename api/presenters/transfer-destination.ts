import type { TransferDestination } from '../../db/entities/index.js';

/** A transfer destination as the API shows it (telephony spec section 1). */
export function presentTransferDestination(destination: TransferDestination) {
  return {
    number: destination.number,
    description: destination.description,
    mode: destination.mode,
    message: destination.message ?? null,
  };
}
