// Workflow ids fixed by the contract in docs/development.md.

export function webhookDeliveryWorkflowId(deliveryId: string): string {
  return `webhook-delivery-${deliveryId}`;
}

export function eventFanOutWorkflowId(eventId: string): string {
  return `event-fanout-${eventId}`;
}
