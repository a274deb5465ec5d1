import { defineEntity, p } from '@mikro-orm/core';
import { Call } from './call.js';

export type TranscriptRole = 'agent' | 'caller';

/** One spoken line. (call, index) is unique so a retried activity never writes a line twice. */
const TranscriptEntrySchema = defineEntity({
  name: 'TranscriptEntry',
  tableName: 'transcript_entries',
  uniques: [{ properties: ['call', 'index'] }],
  properties: {
    id: p.uuid().primary(),
    call: () => p.manyToOne(Call).mapToPk().deleteRule('cascade'),
    index: p.integer(),
    role: p.string().length(10).$type<TranscriptRole>(),
    text: p.text(),
    /** Offset of the line from the start of the conversation, in simulated seconds. */
    offsetSeconds: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export class TranscriptEntry extends TranscriptEntrySchema.class {}
TranscriptEntrySchema.setClass(TranscriptEntry);

export { TranscriptEntrySchema };
