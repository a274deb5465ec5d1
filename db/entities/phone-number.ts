import { defineEntity, p } from '@mikro-orm/core';
import { Agent } from './agent.js';
import { Workspace } from './workspace.js';

export const PHONE_NUMBER_STATUSES = ['active', 'released'] as const;
export type PhoneNumberStatus = (typeof PHONE_NUMBER_STATUSES)[number];
export const PHONE_NUMBER_CAPABILITIES = ['voice', 'sms'] as const;
/**
 * How a voice number is reached, shown in its `capabilities` beside what is stored: `sip` while the
 * deployment's SIP side answers INVITEs to it (CARRIER=sip: every voice number of every workspace).
 */
export const PHONE_NUMBER_REACH = ['sip'] as const;

/** A number the workspace owns. A number is unique across workspaces: a carrier routes it to one owner. */
const PhoneNumberSchema = defineEntity({
  name: 'PhoneNumber',
  tableName: 'phone_numbers',
  indexes: [{ properties: ['workspace', 'createdAt', 'id'] }, { properties: ['agent'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    number: p.string().length(16).unique(),
    label: p.string().length(200).nullable(),
    agent: () => p.manyToOne(Agent).mapToPk().nullable().deleteRule('set null'),
    status: p.string().length(20).$type<PhoneNumberStatus>(),
    capabilities: p.array().$type<string[]>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class PhoneNumber extends PhoneNumberSchema.class {}
PhoneNumberSchema.setClass(PhoneNumber);

export { PhoneNumberSchema };
