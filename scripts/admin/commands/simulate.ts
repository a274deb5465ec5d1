import { OperatorError } from '../../../lib/accounts.js';
import { answerIncomingPhoneCall, startWebCall } from '../../../lib/calls/incoming-calls.js';
import { defineCommand } from '../command.js';
import { connectTemporal } from '../temporal-connection.js';

// The call simulator's incoming side (operations contract, section 5): it stands in for the
// carrier delivering an incoming call, and for the dashboard's test panel. Both return as soon
// as the call is taken; the call goes on in its workflow, run by the service's workers.

const E164 = /^\+[1-9]\d{6,14}$/;

function requireE164(flag: string, value: string): void {
  if (!E164.test(value))
    throw new OperatorError(`${flag} "${value}" is not an E.164 number (+ and 7 to 15 digits)`);
}

export const simulateInbound = defineCommand({
  name: 'simulate inbound',
  summary: "A person calls a workspace number; the caller number's last four digits pick the scenario.",
  flags: {
    number: { type: 'string', required: true, value: '+E164', help: 'the workspace number that is dialled' },
    from: {
      type: 'string',
      required: true,
      value: '+E164',
      help: 'the caller; ending 2002, 2003, 2004 or other',
    },
  },
  async run({ number, from }, context) {
    requireE164('--number', number);
    requireE164('--from', from);
    // Temporal first: when it is unreachable nothing is written.
    const temporal = await connectTemporal(context);
    const answer = await answerIncomingPhoneCall(
      { em: await context.em(), temporal, settings: context.settings },
      { to: number, from },
    );
    if (!answer.answered) {
      return {
        json: { call_id: null, answered: false, reason: answer.reason },
        text: `Not answered (${answer.reason}): ${from} called ${number}; no call was recorded`,
      };
    }
    return {
      json: { call_id: answer.callId, answered: true, reason: null },
      text: `Answered: call ${answer.callId} from ${from} to ${number} is in progress`,
    };
  },
});

export const simulateWebCall = defineCommand({
  name: 'simulate web-call',
  summary: 'A browser call to an agent (draft or published), as the dashboard test panel makes it.',
  flags: {
    agent: { type: 'string', required: true, value: 'ID', help: 'agent id' },
    fromLabel: {
      type: 'string',
      value: 'TEXT',
      help: 'who is calling (metadata.from_label); its last four digits pick the scenario',
    },
  },
  async run({ agent, fromLabel }, context) {
    const temporal = await connectTemporal(context);
    const web = await startWebCall(
      { em: await context.em(), temporal, settings: context.settings },
      { agentId: agent, fromLabel },
    );
    if (!web.started) {
      throw new OperatorError(
        `web call refused (${web.refusal.code}): the agent's workspace ${
          web.refusal.code === 'trial_line_busy'
            ? 'is on the trial plan and already has a call on its line'
            : 'is at its call limits'
        }; no call was recorded`,
      );
    }
    const { callId } = web;
    return { json: { call_id: callId }, text: `Web call ${callId} to agent ${agent} is in progress` };
  },
});
