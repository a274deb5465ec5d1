import { RecordingWriter } from '../../lib/recordings/recording-writer.js';

// A media gateway that dies mid-call: records `seconds` of caller audio (value 1000) and agent
// audio (value -1000) for the call `callId` into `dir`, prints `written`, and waits to be killed
// without closing the recording. Run by test/recording-writer.test.ts.

const [dir, callId, seconds] = process.argv.slice(2);
const writer = await RecordingWriter.open(dir, callId);
for (let ms = 0; ms < Number(seconds) * 1000; ms += 20) {
  writer.agent(new Int16Array(160).fill(-1000), ms);
  writer.caller(new Int16Array(160).fill(1000), ms);
}
process.stdout.write('written\n');
setInterval(() => {}, 60_000);
