import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { keypadLineText } from '../calls/keypad-line.js';
import { agentJoinedSignal, agentSpeechSignal, farEndReleasedSignal } from '../temporal/call-messages.js';
import { startOnce } from '../temporal/start-once.js';
import {
  BROWSER_CALLER_WORKFLOW,
  type BrowserCallerWorkflow,
  type FarEndAudio,
  farEndWorkflowId,
  SIMULATED_CALLEE_WORKFLOW,
  type SimulatedCalleeInput,
  type SimulatedCalleeWorkflow,
  TEST_CALLER_WORKFLOW,
  type TestCallerWorkflow,
} from '../temporal/workflow-contracts.js';
import { browserCallerMetadata, farEndMetadata, testCallerMetadata } from '../temporal/workflow-metadata.js';
import type { AnswerRequest, Carrier, DialRequest, TransferHandOver } from './carrier.js';

// The default carrier: every dial starts a simulated far end, itself a workflow on the
// carrier-simulator task queue (workflows/simulated-callee-workflow.ts), which calls back into
// the call workflow with signals. Requests here are signals to that far end.

/** A test-panel caller silent this long (a closed tab) hangs up; the call's own silence timeout is 10 min. */
const BROWSER_ABANDON_SECONDS = 15 * 60;

/** A far end with audio opens the call's stream, with the call's own token. */
function audioOf(request: DialRequest | AnswerRequest): { audio?: FarEndAudio } {
  const stream = request.mediaStream;
  return stream ? { audio: { streamsUrl: stream.url, token: stream.token, callId: request.callId } } : {};
}

export class SimulatedCarrier implements Carrier {
  constructor(
    private readonly client: Client,
    private readonly options: { taskQueue: string; timeScale: number },
  ) {}

  /** With `mediaStream`, the far end speaks: it answers with a Media Streams connection there. */
  async dial(request: DialRequest): Promise<undefined> {
    await this.startFarEnd(request.callId, {
      callWorkflowId: request.callWorkflowId,
      scenarioNumber: request.to,
      timeScale: this.options.timeScale,
      connected: false,
      ...audioOf(request),
    });
  }

  /**
   * Picks up a call that came in (inbound phone or web): its far end, the simulated caller, starts
   * connected. The caller's number (or a web call's label) picks the scenario by its last four digits.
   * With `mediaStream` the caller speaks: their stream attaches there first.
   */
  async answer(request: AnswerRequest): Promise<undefined> {
    if (request.farEnd === 'browser') {
      await this.startBrowserFarEnd(request);
      return;
    }
    if (request.testCaller) {
      await this.startTestCaller(request, request.testCaller);
      return;
    }
    await this.startFarEnd(request.callId, {
      callWorkflowId: request.callWorkflowId,
      scenarioNumber: request.caller ?? '',
      timeScale: this.options.timeScale,
      connected: true,
      ...audioOf(request),
    });
  }

  async connectAgent(request: { callId: string; opening: { index: number; text: string } | null }) {
    await this.signalFarEnd(request.callId, (handle) =>
      handle.signal(agentJoinedSignal, { opening: request.opening }),
    );
  }

  async say(request: { callId: string; index: number; text: string; hangUp?: boolean }): Promise<undefined> {
    const { index, text, hangUp } = request;
    await this.signalFarEnd(request.callId, (handle) =>
      handle.signal(agentSpeechSignal, hangUp ? { index, text, hangUp } : { index, text }),
    );
  }

  /** The keys reach the far end as the line that presses them (its text `[keypad] …`). */
  async sendDigits(request: { callId: string; index: number; digits: string }): Promise<void> {
    const { index, digits } = request;
    await this.signalFarEnd(request.callId, (handle) =>
      handle.signal(agentSpeechSignal, { index, text: keypadLineText(digits), digits }),
    );
  }

  /** The simulated far end is handed over at once (its callee script knows no refused transfer). */
  async transfer(request: { callId: string; to: string }): Promise<TransferHandOver> {
    await this.signalFarEnd(request.callId, (handle) =>
      handle.signal(farEndReleasedSignal, { reason: 'transfer', to: request.to }),
    );
    return 'handed_over';
  }

  async release(request: { callId: string; reason: 'hang_up' | 'cancel' }) {
    await this.signalFarEnd(request.callId, (handle) =>
      handle.signal(farEndReleasedSignal, { reason: request.reason }),
    );
  }

  private async startFarEnd(callId: string, input: SimulatedCalleeInput): Promise<void> {
    // A retried dial finds the far end reached the first time.
    await startOnce(
      this.client.workflow.start<SimulatedCalleeWorkflow>(SIMULATED_CALLEE_WORKFLOW, {
        workflowId: farEndWorkflowId(callId),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...farEndMetadata(callId, input),
      }),
    );
  }

  /**
   * A test-panel call: the far end is the person in the dashboard, whose lines and hang-up the
   * dashboard signals to this workflow (api/dashboard/routes/test-calls.ts).
   */
  private async startBrowserFarEnd(request: AnswerRequest): Promise<void> {
    const input = { callWorkflowId: request.callWorkflowId, abandonAfterSeconds: BROWSER_ABANDON_SECONDS };
    await startOnce(
      this.client.workflow.start<BrowserCallerWorkflow>(BROWSER_CALLER_WORKFLOW, {
        workflowId: farEndWorkflowId(request.callId),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...browserCallerMetadata(request.callId, input),
      }),
    );
  }

  /** A test run's call: the far end is the caller the language model plays (workflows/test-caller-workflow.ts). */
  private async startTestCaller(request: AnswerRequest, caller: { prompt: string; maxTurns: number }) {
    const input = {
      callWorkflowId: request.callWorkflowId,
      callerPrompt: caller.prompt,
      maxTurns: caller.maxTurns,
      modelTaskQueue: this.options.taskQueue,
    };
    await startOnce(
      this.client.workflow.start<TestCallerWorkflow>(TEST_CALLER_WORKFLOW, {
        workflowId: farEndWorkflowId(request.callId),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...testCallerMetadata(request.callId, input),
      }),
    );
  }

  /** A far end that already hung up is gone: nothing there to hear or release. */
  private async signalFarEnd(
    callId: string,
    send: (handle: ReturnType<Client['workflow']['getHandle']>) => Promise<void>,
  ): Promise<void> {
    try {
      await send(this.client.workflow.getHandle(farEndWorkflowId(callId)));
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
}
