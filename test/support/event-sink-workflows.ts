// Test-only stand-in for the webhooks queue in time-skipping tests: fan-out children of call
// workflows complete at once, so no pending task holds the test server's clock back.
export async function eventFanOutWorkflow(_input: { eventId: string }): Promise<void> {}
